/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-channel.h"

#include "fabric-net-device.h"

#include "ns3/double.h"
#include "ns3/fabric-error.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/simulator.h"

#include <cmath>

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
                                          MakeTimeChecker(Time(0)))
                            .AddAttribute("BitErrorRate",
                                          "Probability that a bit is corrupted, in [0, 1); a "
                                          "corrupted packet is discarded by its receiver (0: "
                                          "none).",
                                          DoubleValue(0),
                                          MakeDoubleAccessor(&FabricChannel::m_ber),
                                          // 1 would lose every packet, resent for ever
                                          MakeDoubleChecker<double>(0, std::nextafter(1.0, 0.0)));
    return tid;
}

FabricChannel::FabricChannel()
{
    m_dir[0].arrive = Create<FabricPrefetchingEvent<FabricChannel,
                                                    &FabricChannel::Arrive<0>,
                                                    &FabricChannel::PrefetchArrive<0>>>(this);
    m_dir[1].arrive = Create<FabricPrefetchingEvent<FabricChannel,
                                                    &FabricChannel::Arrive<1>,
                                                    &FabricChannel::PrefetchArrive<1>>>(this);
}

void
FabricChannel::DoDispose()
{
    m_dir[0].arrive->Detach();
    m_dir[1].arrive->Detach();
    m_dir[0].wire.clear();
    m_dir[1].wire.clear();
    Channel::DoDispose();
}

void
FabricChannel::Attach(Ptr<FabricNetDevice> device)
{
    NS_ABORT_MSG_IF(m_nDevices >= 2, "FabricChannel: a point-to-point cable takes two devices");
    // the device tells this channel of its link changes (the cached epochs):
    // it must know the channel even if attached here directly
    if (!device->m_channel)
    {
        device->m_channel = this;
    }
    device->m_channelEnd = static_cast<uint8_t>(m_nDevices);
    m_device[m_nDevices++] = device;
    RefreshEnds();
}

void
FabricChannel::RefreshNodeIds()
{
    RefreshEnds();
}

void
FabricChannel::RefreshEnds()
{
    for (uint32_t i = 0; i < m_nDevices; ++i)
    {
        m_nodeId[i] = m_device[i]->GetNodeId();
        m_epoch[i] = m_device[i]->GetLinkEpoch();
        m_dir[1 - i].peer = PeekPointer(m_device[i]); // direction 1 - i ends at device i
    }
}

void
FabricChannel::Transmit(const Ptr<Packet>& p,
                        const FabricFrameMeta& meta,
                        const FabricNetDevice* sender,
                        Time now,
                        Time txTime)
{
    const uint32_t d = sender->m_channelEnd; // the sender's line is warm, the channel's cold
    Direction& dir = m_dir[d];
    const bool corrupted = m_ber > 0 && Corrupt(p->GetSize());
    // in order on the wire: never before the packet ahead (see class doc)
    const Time arrival = std::max(now + txTime + m_delay, dir.lastArrival);
    dir.lastArrival = arrival;
    FabricRingPush(dir.wire, InFlight{p, meta, corrupted, m_epoch[1 - d]});
    dir.arrive->Schedule(m_nodeId[1 - d], arrival - now);
}

template <uint32_t d>
void
FabricChannel::Arrive()
{
    Direction& dir = m_dir[d];
    const InFlight f = std::move(dir.wire.front());
    dir.wire.pop_front();
    FabricNetDevice* peer = dir.peer;
    if (f.corrupted)
    {
        peer->ReceiveCorrupted(f.packet, f.epoch);
        return;
    }
    peer->Receive(f.packet, f.meta, f.epoch);
}

template <uint32_t d>
void
FabricChannel::PrefetchArrive(uint32_t stage) const
{
    // each stage follows the pointers the stage before brought in
    const Direction& dir = m_dir[d];
    if (stage == 1)
    {
        FabricPrefetch(&dir, sizeof(Direction));
        return;
    }
    if (dir.wire.empty() || dir.peer == nullptr)
    {
        return;
    }
    const InFlight& f = dir.wire.front();
    if (stage == 2)
    {
        FabricPrefetch(&f, sizeof(InFlight));
    }
    else if (stage == 3)
    {
        FabricPrefetch(PeekPointer(f.packet), sizeof(Packet));
    }
    dir.peer->PrefetchReceive(stage - 1, f.meta);
}

void
FabricChannel::PrefetchTransmit(uint32_t end, uint32_t stage) const
{
    const Direction& dir = m_dir[end & 1];
    if (stage == 1)
    {
        FabricPrefetch(this, 64);
        FabricPrefetch(&dir, sizeof(Direction));
    }
    else if (stage == 2)
    {
        // the slot after the newest packet on the wire, and the event's count
        if (!dir.wire.empty())
        {
            FabricPrefetch(&dir.wire.back(), 2 * sizeof(InFlight));
        }
        FabricPrefetch(PeekPointer(dir.arrive), 16);
    }
}

bool
FabricChannel::Corrupt(uint32_t bytes) const
{
    if (!m_rng)
    {
        m_rng = CreateObject<UniformRandomVariable>();
    }
    const double bits = 8.0 * bytes;
    const double p = -std::expm1(bits * std::log1p(-m_ber));
    return m_rng->GetValue() < p;
}

void
FabricChannel::SetBitErrorRate(double ber, int64_t stream)
{
    FabricRequire(ber >= 0 && ber < 1, "bit-error rate", ber, "a probability in [0, 1)");
    m_ber = ber;
    if (ber > 0)
    {
        m_rng = CreateObject<UniformRandomVariable>();
        m_rng->SetStream(stream);
    }
}

double
FabricChannel::GetBitErrorRate() const
{
    return m_ber;
}

void
FabricChannel::SetLinkUp(bool up)
{
    NS_LOG_FUNCTION(this << up);
    // both ends change first: a frame sent the instant one end comes up must
    // find the other already up (and a link-change callback sees both ends
    // in their new state)
    bool changed[2] = {false, false};
    for (uint32_t i = 0; i < m_nDevices; ++i)
    {
        changed[i] = m_device[i]->ChangeLinkState(up);
    }
    for (uint32_t i = 0; i < m_nDevices; ++i)
    {
        if (changed[i])
        {
            m_device[i]->NotifyLinkChanged();
        }
    }
}

bool
FabricChannel::IsUp() const
{
    return m_nDevices == 0 || m_device[0]->IsUp();
}

void
FabricChannel::SendFlowControl(const FabricNetDevice* sender, bool pause) const
{
    if (!sender->IsUp())
    {
        return; // no frames on a down link
    }
    Ptr<FabricNetDevice> peer = GetPeer(sender);
    Simulator::ScheduleWithContext(peer->GetNode()->GetId(),
                                   m_delay,
                                   &FabricNetDevice::ReceiveFlowControl,
                                   peer,
                                   pause,
                                   peer->GetLinkEpoch());
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
