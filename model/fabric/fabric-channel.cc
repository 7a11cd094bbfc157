/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-channel.h"

#include "fabric-net-device.h"

#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FabricChannel");
NS_OBJECT_ENSURE_REGISTERED(FabricChannel);

TypeId
FabricChannel::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FabricChannel")
                            .SetParent<Channel>()
                            .SetGroupName("GpuFabric")
                            .AddConstructor<FabricChannel>()
                            .AddAttribute("Delay",
                                          "Propagation delay of the cable (one direction).",
                                          TimeValue(NanoSeconds(500)),
                                          MakeTimeAccessor(&FabricChannel::m_delay),
                                          MakeTimeChecker(Time(0)));
    return tid;
}

FabricChannel::FabricChannel() = default;

void
FabricChannel::Attach(Ptr<FabricNetDevice> device)
{
    NS_ABORT_MSG_IF(m_nDevices >= 2, "FabricChannel: a point-to-point cable takes two devices");
    m_device[m_nDevices++] = device;
}

void
FabricChannel::Transmit(Ptr<Packet> p, const FabricNetDevice* sender, Time txTime) const
{
    // raw peer pointer: the channel holds both ends for the whole run, and
    // this is the hottest call of a packet-level run
    FabricNetDevice* peer =
        PeekPointer(m_device[0]) == sender ? PeekPointer(m_device[1]) : PeekPointer(m_device[0]);
    Simulator::ScheduleWithContext(peer->GetNodeId(),
                                   txTime + m_delay,
                                   &FabricNetDevice::Receive,
                                   peer,
                                   p);
}

void
FabricChannel::SendFlowControl(const FabricNetDevice* sender, bool pause) const
{
    Ptr<FabricNetDevice> peer = GetPeer(sender);
    Simulator::ScheduleWithContext(peer->GetNode()->GetId(),
                                   m_delay,
                                   &FabricNetDevice::ReceiveFlowControl,
                                   peer,
                                   pause);
}

Ptr<FabricNetDevice>
FabricChannel::GetPeer(const FabricNetDevice* sender) const
{
    return PeekPointer(m_device[0]) == sender ? m_device[1] : m_device[0];
}

std::size_t
FabricChannel::GetNDevices() const
{
    return m_nDevices;
}

Ptr<NetDevice>
FabricChannel::GetDevice(std::size_t i) const
{
    return i < m_nDevices ? m_device[i] : nullptr;
}

} // namespace ns3
