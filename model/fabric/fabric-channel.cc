/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-channel.h"

#include "fabric-distributed.h"
#include "fabric-internal.h"
#include "fabric-net-device.h"

#include "ns3/double.h"
#include "ns3/error-model.h"
#include "ns3/fabric-error.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/simulator.h"

#include <array>
#include <cstring>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FabricChannel");
NS_OBJECT_ENSURE_REGISTERED(FabricChannel);

NS_OBJECT_ENSURE_REGISTERED(FabricMessageTag);

TypeId
FabricMessageTag::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FabricMessageTag")
                            .SetParent<Tag>()
                            .SetGroupName("GpuFabric")
                            .AddConstructor<FabricMessageTag>();
    return tid;
}

TypeId
FabricMessageTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
FabricMessageTag::GetSerializedSize() const
{
    return FabricMessageInfo::kSerializedSize;
}

void
FabricMessageInfo::Write(uint8_t*& at) const
{
    for (uint64_t word : {bytes, static_cast<uint64_t>(start), sink, cookie, serial})
    {
        std::memcpy(at, &word, sizeof(word));
        at += sizeof(word);
    }
    *at++ = (hasSink ? 1 : 0) | (mayReorder ? 2 : 0);
}

FabricMessageInfo
FabricMessageInfo::Read(const uint8_t*& at)
{
    auto word = [&at] {
        uint64_t w;
        std::memcpy(&w, at, sizeof(w));
        at += sizeof(w);
        return w;
    };
    FabricMessageInfo info;
    info.bytes = word();
    info.start = static_cast<int64_t>(word());
    info.sink = word();
    info.cookie = word();
    info.serial = word();
    const uint8_t bits = *at++;
    info.hasSink = (bits & 1) != 0;
    info.mayReorder = (bits & 2) != 0;
    return info;
}

// Every data packet of a message between ranks carries this tag, written
// and read several times on its way: its fields are copied in one piece
// (TagBuffer::CopyFrom and Read; its Write, WriteU64 and ReadU64 go byte
// by byte).
void
FabricMessageTag::Serialize(TagBuffer i) const
{
    std::array<uint8_t, FabricMessageInfo::kSerializedSize> bytes;
    uint8_t* at = bytes.data();
    info.Write(at);
    NS_ASSERT(at == bytes.data() + bytes.size());
    i.CopyFrom(TagBuffer(bytes.data(), bytes.data() + bytes.size()));
}

void
FabricMessageTag::Deserialize(TagBuffer i)
{
    std::array<uint8_t, FabricMessageInfo::kSerializedSize> bytes;
    i.Read(bytes.data(), bytes.size());
    const uint8_t* at = bytes.data();
    info = FabricMessageInfo::Read(at);
}

void
FabricMessageTag::Print(std::ostream& os) const
{
    os << "bytes=" << info.bytes << " start=" << info.start << " sink=" << info.sink
       << " cookie=" << info.cookie;
}

TypeId
FabricChannel::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FabricChannel")
            .SetParent<Channel>()
            .SetGroupName("GpuFabric")
            .AddConstructor<FabricChannel>()
            .AddAttribute("Delay",
                          "Propagation delay of the cable (one direction).",
                          TimeValue(NanoSeconds(500)),
                          MakeTimeAccessor(&FabricChannel::SetDelay, &FabricChannel::GetDelay),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("BitErrorRate",
                          "Probability that a bit is corrupted, in [0, 1); a "
                          "corrupted packet is discarded by its receiver (0: "
                          "none). A shorthand: both ends get one "
                          "RateErrorModel (unit bit, this rate) as their "
                          "ReceiveErrorModel.",
                          DoubleValue(0),
                          MakeDoubleAccessor(static_cast<void (FabricChannel::*)(double)>(
                                                 &FabricChannel::SetBitErrorRate),
                                             &FabricChannel::GetBitErrorRate),
                          // 1 would lose every packet, resent for ever
                          MakeDoubleChecker<double>(0, std::nextafter(1.0, 0.0)));
    return tid;
}

FabricChannel::FabricChannel()
{
    m_dir[0].arrive = Create<FabricPrefetchingEvent<FabricChannel,
                                                    &FabricChannel::Arrive<0>,
                                                    &FabricDataPlane::PrefetchArrive<0>>>(this);
    m_dir[1].arrive = Create<FabricPrefetchingEvent<FabricChannel,
                                                    &FabricChannel::Arrive<1>,
                                                    &FabricDataPlane::PrefetchArrive<1>>>(this);
}

FabricChannel::~FabricChannel() = default;

void
FabricChannel::DoDispose()
{
    m_dir[0].arrive->Detach();
    m_dir[1].arrive->Detach();
    m_dir[0].wire.clear();
    m_dir[1].wire.clear();
    m_errorModel = nullptr;
    Channel::DoDispose();
}

void
FabricChannel::Attach(Ptr<FabricNetDevice> device)
{
    NS_ABORT_MSG_IF(m_nDevices >= 2, "FabricChannel: a point-to-point cable takes two devices");
    // the device tells this channel of its link changes (the cached epochs):
    // it must know the channel even if attached here directly
    if (!device->m_port.channel)
    {
        device->m_port.channel = this;
    }
    device->m_port.channelEnd = static_cast<uint8_t>(m_nDevices);
    m_device[m_nDevices++] = device;
    RefreshEnds();
    if (m_ber > 0)
    {
        device->SetReceiveErrorModel(m_errorModel);
    }
}

void
FabricChannel::RefreshEnds()
{
    for (uint32_t i = 0; i < m_nDevices; ++i)
    {
        m_send.nodeId[i] = m_device[i]->GetNodeId();
        m_send.epoch[i] = m_device[i]->GetLinkEpoch();
        m_dir[1 - i].peer = PeekPointer(m_device[i]); // direction 1 - i ends at device i
        Ptr<Node> node = m_device[i]->GetNode();
        m_dir[1 - i].remote =
            node && FabricDistributed::GetSize() > 1 && !FabricDistributed::IsLocal(*node);
    }
}

void
FabricChannel::TransmitRemote(const Ptr<Packet>& p,
                              const FabricFrameMeta& meta,
                              uint32_t d,
                              uint8_t kind,
                              Time arrival) const
{
    FabricRemoteEnvelope envelope;
    envelope.kind = kind;
    envelope.epoch = m_send.epoch[1 - d];
    envelope.meta = meta;
    FabricSendRemote(envelope,
                     PeekPointer(p),
                     arrival,
                     m_send.nodeId[1 - d],
                     m_device[1 - d]->GetIfIndex());
}

void
FabricChannel::Transmit(const Ptr<Packet>& p,
                        const FabricFrameMeta& meta,
                        const FabricNetDevice* sender,
                        Time now,
                        Time txTime)
{
    const uint32_t d = sender->m_port.channelEnd; // the sender's line is warm, the channel's cold
    Direction& dir = m_dir[d];
    // in order on the wire: never before the packet ahead (see class doc)
    const Time arrival = std::max(now + txTime + m_send.delay, dir.lastArrival);
    dir.lastArrival = arrival;
    if (dir.remote)
    {
        TransmitRemote(p, meta, d, FabricRemoteEnvelope::kFrame, arrival);
        return;
    }
    FabricRingPush(dir.wire, InFlight{p, meta, m_send.epoch[1 - d]});
    dir.arrive->Schedule(m_send.nodeId[1 - d], arrival - now);
}

template <uint32_t d>
void
FabricChannel::Arrive()
{
    Direction& dir = m_dir[d];
    const InFlight f = std::move(dir.wire.front());
    dir.wire.pop_front();
    dir.peer->Receive(f.packet, f.meta, f.epoch);
}

template <uint32_t d>
void
FabricDataPlane::PrefetchArrive(const FabricChannel& cable, uint32_t stage)
{
    // each stage follows the pointers the stage before brought in
    const FabricChannel::Direction& dir = cable.m_dir[d];
    if (stage == 1)
    {
        FabricPrefetchObject(dir);
        return;
    }
    if (dir.wire.empty() || dir.peer == nullptr)
    {
        return;
    }
    const FabricChannel::InFlight& f = dir.wire.front();
    if (stage == 2)
    {
        FabricPrefetchObject(f);
    }
    else if (stage == 3)
    {
        FabricPrefetchObject(*f.packet);
    }
    PrefetchReceive(*dir.peer, stage - 1, f.meta);
}

void
FabricDataPlane::PrefetchTransmit(const FabricChannel& cable, uint32_t end, uint32_t stage)
{
    const FabricChannel::Direction& dir = cable.m_dir[end & 1];
    if (stage == 1)
    {
        FabricPrefetchObject(cable.m_send);
        FabricPrefetchObject(dir);
    }
    else if (stage == 2)
    {
        // the slot after the newest packet on the wire, and the event's count
        if (!dir.wire.empty())
        {
            FabricPrefetch(&dir.wire.back(), 2 * sizeof(FabricChannel::InFlight));
        }
        FabricPrefetchObject(*dir.arrive);
    }
}

void
FabricChannel::SetDelay(Time delay)
{
    m_send.delay = delay;
}

void
FabricChannel::SetBitErrorRate(double ber)
{
    FabricRequire(ber >= 0 && ber < 1, "bit-error rate", ber, "a probability in [0, 1)");
    m_ber = ber;
    if (ber > 0)
    {
        if (!m_errorModel)
        {
            m_errorModel = CreateObject<RateErrorModel>();
            m_errorModel->SetUnit(RateErrorModel::ERROR_UNIT_BIT);
        }
        m_errorModel->SetRate(ber);
    }
    InstallErrorModel();
}

void
FabricChannel::SetBitErrorRate(double ber, int64_t stream)
{
    SetBitErrorRate(ber);
    if (m_errorModel)
    {
        m_errorModel->AssignStreams(stream);
    }
}

void
FabricChannel::InstallErrorModel()
{
    for (uint32_t i = 0; i < m_nDevices; ++i)
    {
        if (m_ber > 0)
        {
            m_device[i]->SetReceiveErrorModel(m_errorModel);
        }
        else if (m_errorModel && m_device[i]->GetReceiveErrorModel() == m_errorModel)
        {
            m_device[i]->SetReceiveErrorModel(nullptr); // only the one set here
        }
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
    const uint32_t d = sender->m_port.channelEnd;
    if (m_dir[d].remote)
    {
        TransmitRemote(nullptr,
                       FabricFrameMeta{},
                       d,
                       pause ? FabricRemoteEnvelope::kPause : FabricRemoteEnvelope::kResume,
                       Simulator::Now() + m_send.delay);
        return;
    }
    Simulator::ScheduleWithContext(peer->GetNode()->GetId(),
                                   m_send.delay,
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
