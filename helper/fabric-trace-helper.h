/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_TRACE_HELPER_H
#define GPU_FABRIC_FABRIC_TRACE_HELPER_H

#include "ns3/trace-helper.h"

#include <string>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief PCAP and ASCII traces of FabricNetDevice ports: the base of the
 * helpers that make them (FabricHelper, FabricLinkHelper), which thereby
 * offer ns-3's standard EnablePcap / EnablePcapAll and EnableAscii /
 * EnableAsciiAll.
 *
 * PCAP files use Ethernet framing (DLT_EN10MB) and nanosecond timestamps:
 * fabric frames show EtherType 0x88B5 (doc/gpu-fabric.lua dissects their
 * FabricHeader in Wireshark), frames sent through NetDevice::Send (IP) their
 * own. ASCII lines:
 * "+" a packet handed to the device (MacTx), "-" its serialization began
 * (PhyTxBegin: every packet, also those that find the port idle and never
 * wait in the queue), "d" dropped (queue full, or larger than the MTU) or
 * lost (link down, bit
 * errors), "r" received (MacRx). Devices of other types are skipped with a
 * log message.
 */
class FabricDeviceTraceHelper : public PcapHelperForDevice, public AsciiTraceHelperForDevice
{
  private:
    void EnablePcapInternal(std::string prefix,
                            Ptr<NetDevice> nd,
                            bool promiscuous,
                            bool explicitFilename) override;
    void EnableAsciiInternal(Ptr<OutputStreamWrapper> stream,
                             std::string prefix,
                             Ptr<NetDevice> nd,
                             bool explicitFilename) override;
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_TRACE_HELPER_H
