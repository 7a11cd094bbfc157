/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-trace-helper.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-net-device.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FabricDeviceTraceHelper");

void
FabricDeviceTraceHelper::EnablePcapInternal(std::string prefix,
                                            Ptr<NetDevice> nd,
                                            bool /* promiscuous */,
                                            bool explicitFilename)
{
    Ptr<FabricNetDevice> device = nd->GetObject<FabricNetDevice>();
    if (!device)
    {
        NS_LOG_INFO("EnablePcap: device " << nd << " is not a FabricNetDevice");
        return;
    }
    PcapHelper pcapHelper;
    const std::string filename =
        explicitFilename ? prefix : pcapHelper.GetFilenameFromDevice(prefix, device);
    // Nanosecond timestamps: a 4 KB frame takes 41 ns at 800 Gb/s, and
    // PcapHelper's microsecond files would show whole bursts at one instant.
    Ptr<PcapFileWrapper> file = CreateObject<PcapFileWrapper>();
    file->SetAttribute("NanosecMode", BooleanValue(true));
    file->Open(filename, std::ios::out);
    FabricRequire(!file->Fail(), "PCAP file", filename, "a writable path (is its folder there?)");
    file->Init(PcapHelper::DLT_EN10MB);
    pcapHelper.HookDefaultSink<FabricNetDevice>(device, "PromiscSniffer", file);
}

void
FabricDeviceTraceHelper::EnableAsciiInternal(Ptr<OutputStreamWrapper> stream,
                                             std::string prefix,
                                             Ptr<NetDevice> nd,
                                             bool explicitFilename)
{
    Ptr<FabricNetDevice> device = nd->GetObject<FabricNetDevice>();
    if (!device)
    {
        NS_LOG_INFO("EnableAscii: device " << nd << " is not a FabricNetDevice");
        return;
    }
    // "+" handed to the device, "-" on the wire, "d" dropped or lost, "r" received
    if (!stream)
    {
        // a file of this device's own: no context needed
        AsciiTraceHelper asciiHelper;
        const std::string filename =
            explicitFilename ? prefix : asciiHelper.GetFilenameFromDevice(prefix, device);
        Ptr<OutputStreamWrapper> file = asciiHelper.CreateFileStream(filename);
        device->TraceConnectWithoutContext(
            "MacTx",
            MakeBoundCallback(&AsciiTraceHelper::DefaultEnqueueSinkWithoutContext, file));
        device->TraceConnectWithoutContext(
            "PhyTxBegin",
            MakeBoundCallback(&AsciiTraceHelper::DefaultDequeueSinkWithoutContext, file));
        for (const char* drop : {"Drop", "Lost"})
        {
            device->TraceConnectWithoutContext(
                drop,
                MakeBoundCallback(&AsciiTraceHelper::DefaultDropSinkWithoutContext, file));
        }
        device->TraceConnectWithoutContext(
            "MacRx",
            MakeBoundCallback(&AsciiTraceHelper::DefaultReceiveSinkWithoutContext, file));
        return;
    }
    // a stream shared by many devices: each line says which (the config path)
    const std::string path = "/NodeList/" + std::to_string(device->GetNode()->GetId()) +
                             "/DeviceList/" + std::to_string(device->GetIfIndex()) +
                             "/$ns3::FabricNetDevice/";
    Config::Connect(path + "MacTx",
                    MakeBoundCallback(&AsciiTraceHelper::DefaultEnqueueSinkWithContext, stream));
    Config::Connect(path + "PhyTxBegin",
                    MakeBoundCallback(&AsciiTraceHelper::DefaultDequeueSinkWithContext, stream));
    for (const char* drop : {"Drop", "Lost"})
    {
        Config::Connect(path + drop,
                        MakeBoundCallback(&AsciiTraceHelper::DefaultDropSinkWithContext, stream));
    }
    Config::Connect(path + "MacRx",
                    MakeBoundCallback(&AsciiTraceHelper::DefaultReceiveSinkWithContext, stream));
}

} // namespace ns3
