/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-link-helper.h"

#include "ns3/config.h"
#include "ns3/fabric-channel.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-net-device.h"
#include "ns3/fabric-node.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FabricLinkHelper");

FabricLinkHelper::FabricLinkHelper()
{
    m_deviceFactory.SetTypeId("ns3::FabricNetDevice");
    m_channelFactory.SetTypeId("ns3::FabricChannel");
}

void
FabricLinkHelper::SetDeviceAttribute(const std::string& name, const AttributeValue& value)
{
    m_deviceFactory.Set(name, value);
}

void
FabricLinkHelper::SetChannelAttribute(const std::string& name, const AttributeValue& value)
{
    m_channelFactory.Set(name, value);
}

NetDeviceContainer
FabricLinkHelper::Install(Ptr<Node> a, Ptr<Node> b) const
{
    FabricRequire(a && b, "FabricLinkHelper::Install node", "null", "two existing nodes");
    Ptr<FabricChannel> channel = m_channelFactory.Create<FabricChannel>();
    NetDeviceContainer devices;
    for (const Ptr<Node>& node : {a, b})
    {
        Ptr<FabricNetDevice> device = m_deviceFactory.Create<FabricNetDevice>();
        // before Attach: the channel caches the node
        if (auto fabricNode = DynamicCast<FabricNode>(node))
        {
            fabricNode->AddPort(device); // a switch configures its port's queue
        }
        else
        {
            node->AddDevice(device);
        }
        if (m_queueFactory.GetTypeId() != TypeId())
        {
            device->SetQueue(m_queueFactory.Create<Queue<Packet>>());
        }
        device->Attach(channel);
        devices.Add(device);
    }
    return devices;
}

NetDeviceContainer
FabricLinkHelper::Install(const NodeContainer& nodes) const
{
    FabricRequire(nodes.GetN() == 2,
                  "FabricLinkHelper::Install nodes",
                  nodes.GetN(),
                  "exactly 2 (one link joins two nodes)");
    return Install(nodes.Get(0), nodes.Get(1));
}

void
FabricLinkHelper::EnablePcapInternal(std::string prefix,
                                     Ptr<NetDevice> nd,
                                     bool /* promiscuous */,
                                     bool explicitFilename)
{
    EnableFabricDevicePcap(prefix, nd, explicitFilename);
}

void
FabricLinkHelper::EnableAsciiInternal(Ptr<OutputStreamWrapper> stream,
                                      std::string prefix,
                                      Ptr<NetDevice> nd,
                                      bool explicitFilename)
{
    EnableFabricDeviceAscii(stream, prefix, nd, explicitFilename);
}

void
EnableFabricDevicePcap(const std::string& prefix, Ptr<NetDevice> nd, bool explicitFilename)
{
    Ptr<FabricNetDevice> device = nd->GetObject<FabricNetDevice>();
    if (!device)
    {
        NS_LOG_INFO("EnableFabricDevicePcap: device " << nd << " is not a FabricNetDevice");
        return;
    }
    PcapHelper pcapHelper;
    const std::string filename =
        explicitFilename ? prefix : pcapHelper.GetFilenameFromDevice(prefix, device);
    Ptr<PcapFileWrapper> file =
        pcapHelper.CreateFile(filename, std::ios::out, PcapHelper::DLT_EN10MB);
    pcapHelper.HookDefaultSink<FabricNetDevice>(device, "PromiscSniffer", file);
}

void
EnableFabricDeviceAscii(Ptr<OutputStreamWrapper> stream,
                        const std::string& prefix,
                        Ptr<NetDevice> nd,
                        bool explicitFilename)
{
    Ptr<FabricNetDevice> device = nd->GetObject<FabricNetDevice>();
    if (!device)
    {
        NS_LOG_INFO("EnableFabricDeviceAscii: device " << nd << " is not a FabricNetDevice");
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
