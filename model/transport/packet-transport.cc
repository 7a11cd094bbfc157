/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "packet-transport.h"

#include "../fabric/fabric-internal.h"

#include "ns3/boolean.h"
#include "ns3/fabric-channel.h"
#include "ns3/fabric-distributed.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-work.h"
#include "ns3/log.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <unordered_set>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PacketTransport");
NS_OBJECT_ENSURE_REGISTERED(PacketTransport);

TypeId
PacketTransport::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PacketTransport")
            .SetParent<Transport>()
            .SetGroupName("GpuFabric")
            .AddConstructor<PacketTransport>()
            .AddAttribute("TxFifoPackets",
                          "Packets a GPU port keeps ready in its queue behind the one on the "
                          "wire, as a NIC's transmit FIFO: the round robin among its "
                          "connections picks that many packets ahead. 0: each packet is picked "
                          "when the wire is free (and skips the queue).",
                          UintegerValue(2),
                          MakeUintegerAccessor(&PacketTransport::m_txFifo),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("RelayTurns",
                          "Serve the packets a GPU relays for others in its ports' round "
                          "robin, a connection per relayed (source, destination), as a NIC "
                          "serves a relayed queue pair beside its own. false: they join the "
                          "port's FIFO on arrival, ahead of what the GPU still holds.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&PacketTransport::m_relayTurns),
                          MakeBooleanChecker())
            .AddAttribute("ConnectionWindow",
                          "Most payload bytes a GPU may have in flight to one destination "
                          "(sent, not yet credited back by the receiver), as NCCL's fixed "
                          "buffer slots per connection; 0: no limit (line rate from the "
                          "start, flow control only).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&PacketTransport::m_window),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("ConnectionPerMessage",
                          "Give every message its own connection (queue pair), as the HPCC "
                          "and DCQCN flow-completion studies do: its own send queue, its own "
                          "congestion control from the algorithm's initial state, and the "
                          "receiver's ACK/CNP state of its own. false (the default): the "
                          "messages of a (source, destination) pair through a port share one "
                          "connection, first in first out, and a message inherits the pair's "
                          "congestion-control state, as NCCL's one queue pair per peer. "
                          "ConnectionWindow credits and relayed traffic stay per pair either "
                          "way. Not in distributed runs.",
                          BooleanValue(false),
                          MakeBooleanAccessor(&PacketTransport::m_connPerMessage),
                          MakeBooleanChecker())
            .AddAttribute("CreditDelay",
                          "Time for a credit (a delivered packet's buffer slot) to reach the "
                          "sender; credits are not packets. In a distributed run a credit for a "
                          "GPU of another rank crosses as a word, so with ConnectionWindow on "
                          "this must exceed a word's delay between ranks.",
                          TimeValue(Seconds(0)),
                          MakeTimeAccessor(&PacketTransport::m_creditDelay),
                          MakeTimeChecker(Seconds(0)))
            .AddAttribute("RetransmitTimeout",
                          "Time from the loss of a packet to its retransmission (the "
                          "sender's retransmission timer).",
                          TimeValue(MicroSeconds(100)),
                          MakeTimeAccessor(&PacketTransport::m_rto),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("MaxRetransmissions",
                          "A message fails when one of its packets has been lost this many "
                          "times.",
                          UintegerValue(64),
                          MakeUintegerAccessor(&PacketTransport::m_maxRetransmissions),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("RecoverCongestionDrops",
                          "Also resend packets dropped by a full queue (congestion), so that "
                          "loss never hangs a run; false: only losses to faults are resent "
                          "(a lossy run without flow control then leaves senders unfinished).",
                          BooleanValue(true),
                          MakeBooleanAccessor(&PacketTransport::m_recoverCongestion),
                          MakeBooleanChecker())
            .AddAttribute("CongestionControl",
                          "Congestion control of every flow leaving a GPU through a NIC, its "
                          "own traffic and what it relays there from NVLink (run by the "
                          "relay): none (line-rate senders, PFC only), dcqcn, dctcp, hpcc, "
                          "swift, or the TypeId name of a FabricCongestionControl subclass "
                          "(its attributes through "
                          "Config::SetDefault). With one, receivers send ACKs and CNPs as "
                          "packets.",
                          StringValue("none"),
                          MakeStringAccessor(&PacketTransport::SetCongestionControl,
                                             &PacketTransport::GetCongestionControl),
                          MakeStringChecker())
            .AddAttribute("AckEvery",
                          "With congestion control: a receiver acknowledges every this many "
                          "packets of a flow, and the last packet of each message.",
                          UintegerValue(1),
                          MakeUintegerAccessor(&PacketTransport::m_ackEvery),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("CnpInterval",
                          "With an algorithm that uses CNPs (DCQCN): a receiver sends at most "
                          "one CNP per flow in this interval, when a marked packet arrives "
                          "(N = 50 us in DCQCN).",
                          TimeValue(MicroSeconds(50)),
                          MakeTimeAccessor(&PacketTransport::m_cnpInterval),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("Nack",
                          "Receivers send a NACK when a message's packets show a gap, and the "
                          "sender goes back N from the packet named (as RoCE NICs do); a "
                          "reported loss is still resent RetransmitTimeout after it unless "
                          "resent since. false: every loss is resent RetransmitTimeout after "
                          "the fabric reports it, and only that packet.",
                          BooleanValue(false),
                          MakeBooleanAccessor(&PacketTransport::m_nack),
                          MakeBooleanChecker())
            .AddAttribute("NackReorderDelay",
                          "With Nack, where a message's path may reorder (a switch balancing "
                          "other than ecmp, or NVLink striping): a gap must persist this long "
                          "before the receiver sends a NACK (a full 128 KiB PfcXoff drains in "
                          "10.5 us at 100 Gb/s).",
                          TimeValue(MicroSeconds(20)),
                          MakeTimeAccessor(&PacketTransport::m_nackReorderDelay),
                          MakeTimeChecker(Time(0)))
            .AddTraceSource("Retransmit",
                            "A lost packet was sent again (src, dst, message id, sequence).",
                            MakeTraceSourceAccessor(&PacketTransport::m_retransmitTrace),
                            "ns3::PacketTransport::RetransmitTracedCallback")
            .AddTraceSource("MessageComplete",
                            "The last byte of a message was delivered.",
                            MakeTraceSourceAccessor(&PacketTransport::m_completeTrace),
                            "ns3::PacketTransport::MessageCompleteTracedCallback");
    return tid;
}

/// What the GPU ports pull from: the transport's pull and its prefetch.
class PacketTransport::TxPull : public FabricPrefetchingTxSource
{
  public:
    /// \param owner the transport
    explicit TxPull(PacketTransport* owner)
        : m_owner(owner)
    {
    }

    void TxReady(FabricNetDevice* port, void* cookie) override
    {
        m_owner->TxReady(port, cookie);
    }

    bool TakeRelay(FabricNetDevice* port,
                   void* cookie,
                   const Ptr<Packet>& p,
                   const FabricHeaderData& h,
                   FabricNetDevice* ingress) override
    {
        if (!m_owner->m_relayTurns)
        {
            return false;
        }
        m_owner->TakeRelay(port, *static_cast<PortTurns*>(cookie), p, h, ingress);
        return true;
    }

    void DropRelays(FabricNetDevice* port, void* cookie) override
    {
        m_owner->DropRelays(port, *static_cast<PortTurns*>(cookie));
    }

    void PrefetchTxReady(const void* cookie, uint32_t stage) const override
    {
        m_owner->PrefetchTxReady(cookie, stage);
    }

  private:
    PacketTransport* m_owner; //!< the transport
};

PacketTransport::PacketTransport()
    : m_txPull(std::make_unique<TxPull>(this))
{
}

PacketTransport::~PacketTransport() = default;

void
PacketTransport::DetachGpus()
{
    for (auto& gpu : m_gpus)
    {
        gpu->SetDeliveryCallback(FabricGpu::DeliveryCallback());
        for (uint32_t i = 0; i < gpu->GetNPorts(); ++i)
        {
            gpu->GetPort(i)->SetTxSource(nullptr, nullptr);
        }
    }
    m_gpus.clear();
    m_fabricNodes.clear();
}

void
PacketTransport::DoDispose()
{
    for (Endpoint& ep : m_endpoints)
    {
        for (auto& [dst, f] : ep.ccFlows)
        {
            f.wake.Cancel();
            f.cc->Dispose();
        }
        ep.ccFlows.clear();
    }
    for (Message& m : m_messages)
    {
        m.tx.wake.Cancel();
        if (m.tx.cc)
        {
            m.tx.cc->Dispose();
        }
    }
    DetachGpus();
    m_messages.clear();
    m_busy = Callback<void>();
    Transport::DoDispose();
}

void
PacketTransport::Install(const std::vector<Ptr<FabricGpu>>& gpus)
{
    // the ports of an earlier Install point into the endpoints replaced here
    DetachGpus();
    m_gpus = gpus;
    m_endpoints.assign(gpus.size(), Endpoint());
    m_deadEndpoint.assign(gpus.size(), 0);
    uint32_t mtu = 65535;
    for (uint32_t r = 0; r < gpus.size(); ++r)
    {
        FabricRequire(gpus[r]->GetRank() == r,
                      "GPU rank",
                      gpus[r]->GetRank(),
                      fmt::format("{}", r));
        gpus[r]->SetDeliveryCallback(MakeCallback(&PacketTransport::Deliver, this));
        // m_endpoints and each busy vector keep their size from here on, so
        // the ports may hold pointers into them
        m_endpoints[r].busy.resize(gpus[r]->GetNPorts());
        for (uint32_t i = 0; i < gpus[r]->GetNPorts(); ++i)
        {
            Ptr<FabricNetDevice> port = gpus[r]->GetPort(i);
            m_endpoints[r].busy[i].ep = &m_endpoints[r];
            port->SetTxSource(m_txPull.get(), &m_endpoints[r].busy[i]);
            mtu = std::min<uint32_t>(mtu, port->GetFrameMtu());
            const auto channel = DynamicCast<FabricChannel>(port->GetChannel());
            const Ptr<FabricNetDevice> peer =
                port->IsNvLink() && channel ? channel->GetPeer(PeekPointer(port)) : nullptr;
            m_endpoints[r].nvSwitch.push_back(peer ? peer->GetFabricNode() : nullptr);
        }
    }
    m_frameMtu = mtu;
    SetPayload();
}

void
PacketTransport::SetPayload()
{
    // a packet that collects INT has room for a full record of hops
    FabricIntHeader full;
    full.nHops = FabricIntHeader::kMaxHops;
    const uint32_t telemetry = m_ccUsesTelemetry ? full.GetSerializedSize() : 0;
    m_payload = m_frameMtu - FabricHeader::kSerializedSize - telemetry;
}

uint32_t
PacketTransport::GetNRanks() const
{
    return m_gpus.size();
}

Transport::Totals
PacketTransport::GetTotals() const
{
    return m_totals;
}

double
PacketTransport::EstimateRunSeconds(uint64_t messages, uint64_t bytes) const
{
    const double payload = std::max<uint32_t>(m_payload, 1);
    const double packets = static_cast<double>(bytes) / payload + static_cast<double>(messages);
    return kEventsPerPacket * packets / FabricWorkRates::kPacketEventsPerSecond;
}

uint32_t
PacketTransport::GetPayloadPerPacket() const
{
    return m_payload;
}

uint64_t
PacketTransport::GetPacketsDelivered() const
{
    return m_packetsDelivered;
}

uint64_t
PacketTransport::GetEcnMarkedPackets() const
{
    return m_ecnMarked;
}

uint64_t
PacketTransport::GetAcksSent() const
{
    return m_acksSent;
}

uint64_t
PacketTransport::GetCnpsSent() const
{
    return m_cnpsSent;
}

uint64_t
PacketTransport::GetControlPacketsDelivered() const
{
    return m_controlDelivered;
}

uint64_t
PacketTransport::GetNacksSent() const
{
    return m_nacksSent;
}

uint64_t
PacketTransport::GetDiscardedPackets() const
{
    return m_discarded;
}

uint64_t
PacketTransport::GetRelayedCcPackets() const
{
    return m_relayedCc;
}

uint64_t
PacketTransport::GetRelayControlPackets() const
{
    return m_relayControl;
}

namespace
{
/// A packet tag of one number (no bytes on the wire), its TypeId named by
/// \p Name::kName.
template <typename Name>
class NumberTag : public Tag
{
  public:
    NumberTag() = default;

    /// \param value what it carries
    explicit NumberTag(uint64_t value)
        : m_value(value)
    {
    }

    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId(Name::kName)
                                .SetParent<Tag>()
                                .SetGroupName("GpuFabric")
                                .template AddConstructor<NumberTag>();
        return tid;
    }

    TypeId GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    uint32_t GetSerializedSize() const override
    {
        return 8;
    }

    void Serialize(TagBuffer i) const override
    {
        i.WriteU64(m_value);
    }

    void Deserialize(TagBuffer i) override
    {
        m_value = i.ReadU64();
    }

    void Print(std::ostream& os) const override
    {
        os << Name::kName << "=" << m_value;
    }

    /// \return what it carries
    uint64_t Get() const
    {
        return m_value;
    }

  private:
    uint64_t m_value{0}; //!< what it carries
};

/// RelayTag's TypeId name.
struct RelayTagName
{
    static constexpr const char* kName = "ns3::PacketTransportRelayTag"; //!< the name
};

/// The rank of the GPU whose congestion control sent a relayed packet onto
/// the network (PacketTransport::RelaySend). No bytes on the wire: a real
/// relayed frame carries the relay NIC's address in place of the source's.
using RelayTag = NumberTag<RelayTagName>;

/// NackTag's TypeId name.
struct NackTagName
{
    static constexpr const char* kName = "ns3::PacketTransportNackTag"; //!< the name
};

/// With Nack: on a NACK its message's serial (a NACK for a message whose id
/// went to another is ignored); on a resent data packet its copy (NackSent),
/// which the retransmission timer of its loss compares with the latest.
using NackTag = NumberTag<NackTagName>;

// registered before the run: a rank that never made one must still read
// one arriving from another rank (ns-3 finds a deserialized tag's TypeId by
// its hash)
NS_OBJECT_ENSURE_REGISTERED(RelayTag);
NS_OBJECT_ENSURE_REGISTERED(NackTag);

/// \return the key of message \p id of GPU \p sender among those from other ranks
uint64_t
RemoteKey(uint32_t sender, uint32_t id)
{
    return (static_cast<uint64_t>(sender) << 32) | id;
}

/// \return what data packet \p p (header \p h) from another rank carries of
/// its message: its FabricMessageTag, which every such packet has
FabricMessageInfo
RemoteInfo(const Ptr<const Packet>& p, const FabricHeaderData& h)
{
    FabricMessageTag tag;
    NS_ABORT_MSG_UNLESS(p->PeekPacketTag(tag),
                        "PacketTransport: a packet of message "
                            << h.messageId << " (" << h.src << " -> " << h.dst
                            << ") from another rank carries no FabricMessageTag");
    return tag.info;
}
} // namespace

Ptr<FabricCongestionControl>
PacketTransport::GetFlowControl(uint32_t src, uint32_t dst) const
{
    if (src >= m_endpoints.size())
    {
        return nullptr;
    }
    const auto& flows = m_endpoints[src].ccFlows;
    const auto it = flows.find(dst);
    return it == flows.end() ? nullptr : it->second.cc;
}

void
PacketTransport::SetCongestionControl(const std::string& name)
{
    m_ccType = ResolveCongestionControl(name, "ns3::PacketTransport::CongestionControl");
    m_ccUsesCnp = false;
    m_ccUsesTelemetry = false;
    if (!m_ccType.empty())
    {
        m_ccFactory.SetTypeId(m_ccType);
        const Ptr<FabricCongestionControl> probe = m_ccFactory.Create<FabricCongestionControl>();
        m_ccUsesCnp = probe->UsesCnp();
        m_ccUsesTelemetry = probe->UsesTelemetry();
    }
    if (m_frameMtu != 0)
    {
        SetPayload();
    }
}

void
PacketTransport::AddTelemetry(const Ptr<Packet>& p, FabricHeader& h)
{
    FabricIntHeader telemetry;
    telemetry.sentNs = static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
    p->AddHeader(telemetry);
    h.flags |= FabricHeader::kFlagInt;
}

std::string
PacketTransport::GetCongestionControl() const
{
    return m_ccType.empty() ? "none" : m_ccType;
}

PacketTransport::CcFlow&
PacketTransport::FlowOf(uint32_t src, uint32_t dst, const FabricNetDevice* port)
{
    auto [it, added] = m_endpoints[src].ccFlows.try_emplace(dst);
    if (added)
    {
        it->second.cc = m_ccFactory.Create<FabricCongestionControl>();
        it->second.cc->Start(port->GetDataRate(), m_payload);
    }
    return it->second;
}

PacketTransport::CcFlow&
PacketTransport::FlowFor(Message& m, const FabricNetDevice* port)
{
    if (!m_connPerMessage)
    {
        return FlowOf(m.src, m.dst, port);
    }
    if (!m.tx.cc)
    {
        m.tx.cc = m_ccFactory.Create<FabricCongestionControl>();
        m.tx.cc->Start(port->GetDataRate(), m_payload);
    }
    return m.tx;
}

uint32_t
PacketTransport::FlowTag(const Message& m)
{
    return FlowTag(m.serial);
}

uint32_t
PacketTransport::FlowTag(uint64_t serial)
{
    return static_cast<uint32_t>(serial % 0xFFFFFFFFU) + 1;
}

PacketTransport::RxFlow*
PacketTransport::RxFlowOf(uint32_t receiver, uint32_t sender, uint32_t messageId, uint32_t tag)
{
    if (tag == 0)
    {
        return &m_endpoints[receiver].rxFlows[sender];
    }
    if (m_distributed && m_localGpu[sender] == 0)
    {
        const auto it = m_remoteRx.find(RemoteKey(sender, messageId));
        return it != m_remoteRx.end() && FlowTag(it->second.serial) == tag ? &it->second.rx
                                                                           : nullptr;
    }
    if (messageId >= m_messages.size())
    {
        return nullptr;
    }
    Message& m = m_messages[messageId];
    if (m.src != sender || m.dst != receiver || FlowTag(m) != tag)
    {
        return nullptr; // its id went to another message since
    }
    return &m.rx;
}

bool
PacketTransport::CcAllows(CcFlow& f, uint32_t payload, uint32_t src, uint32_t dst, uint32_t only)
{
    // one packet always goes when nothing is in flight
    if (f.inFlight > 0 && f.inFlight + payload > f.cc->GetWindow())
    {
        return false; // an ACK unblocks it
    }
    const Time now = Simulator::Now();
    if (f.nextSend > now)
    {
        if (!f.wake.IsRunning())
        {
            f.wake = Simulator::Schedule(f.nextSend - now,
                                         &PacketTransport::Unblock,
                                         this,
                                         src,
                                         dst,
                                         only);
        }
        return false;
    }
    return true;
}

void
PacketTransport::CcSent(CcFlow& f, uint32_t payload)
{
    f.inFlight += payload;
    f.sent += payload;
    const uint32_t frame = payload + FabricHeader::kSerializedSize;
    const uint64_t rate = f.cc->GetRate();
    if (rate < f.cc->GetLineRate())
    {
        // the next packet no sooner than this one's time at the flow's rate
        const auto steps = static_cast<uint64_t>(static_cast<unsigned __int128>(frame) * 8 *
                                                 Seconds(1).GetTimeStep() / rate);
        const Time now = Simulator::Now();
        f.nextSend = std::max(f.nextSend, now) + TimeStep(steps);
    }
    f.cc->OnSent(frame);
}

namespace
{
/// The header of a control packet from a flow's receiver back to its sender.
FabricHeader
ControlHeader(uint32_t receiver,
              uint32_t sender,
              uint32_t messageId,
              uint16_t flowLabel,
              uint8_t flags)
{
    FabricHeader h;
    h.src = receiver;
    h.dst = sender;
    h.messageId = messageId;
    h.flowLabel = flowLabel;
    h.flags = flags;
    return h;
}
} // namespace

void
PacketTransport::ReceiverFeedback(const FabricHeaderData& h,
                                  uint32_t sender,
                                  uint32_t payload,
                                  const FabricIntHeader* telemetry,
                                  uint64_t serial)
{
    // a message's own flow (ConnectionPerMessage; not a relay's), else the pair's
    uint32_t tag = 0;
    if (m_connPerMessage && sender == h.src)
    {
        if (serial == 0)
        {
            tag = FlowTag(m_messages[h.messageId]);
        }
        else
        {
            // from another rank: its state lives here until the sender's
            // next message of that id (a later serial) replaces it
            RemoteRxFlow& r = m_remoteRx[RemoteKey(sender, h.messageId)];
            if (serial < r.serial)
            {
                return; // a straggler of a message whose id went to another
            }
            if (serial > r.serial)
            {
                r = RemoteRxFlow{serial, RxFlow()};
            }
            tag = FlowTag(serial);
        }
    }
    RxFlow* own = RxFlowOf(h.dst, sender, h.messageId, tag);
    if (own == nullptr)
    {
        return; // a straggler of a message given up, whose id went to another
    }
    RxFlow& rx = *own;
    rx.bytes += payload;
    const bool marked = (h.flags & FabricHeader::kFlagCe) != 0;
    if (marked)
    {
        rx.marked += payload;
        const Time now = Simulator::Now();
        if (m_ccUsesCnp && (!rx.cnpSent || now - rx.lastCnp >= m_cnpInterval))
        {
            rx.cnpSent = true;
            rx.lastCnp = now;
            ++m_cnpsSent;
            FabricHeader cnp =
                ControlHeader(h.dst, sender, h.messageId, h.flowLabel, FabricHeader::kFlagCnp);
            cnp.sequence = tag;
            SendControl(cnp, nullptr, nullptr);
        }
    }
    if (++rx.unacked >= m_ackEvery || (h.flags & FabricHeader::kFlagLast) != 0)
    {
        rx.unacked = 0;
        SendAck(h.dst, sender, h.messageId, h.flowLabel, telemetry, tag);
    }
}

void
PacketTransport::SendAck(uint32_t receiver,
                         uint32_t sender,
                         uint32_t messageId,
                         uint16_t flowLabel,
                         const FabricIntHeader* telemetry,
                         uint32_t tag)
{
    if (m_endpoints.empty() || m_deadEndpoint[receiver])
    {
        return;
    }
    const RxFlow* rx = RxFlowOf(receiver, sender, messageId, tag);
    if (rx == nullptr)
    {
        return; // a message's own flow, gone since (the resend of a lost last ACK)
    }
    FabricAckHeader ack;
    ack.ackedBytes = rx->bytes;
    ack.markedBytes = rx->marked;
    const uint8_t flags =
        FabricHeader::kFlagAck | (telemetry != nullptr ? FabricHeader::kFlagInt : 0);
    ++m_acksSent;
    FabricHeader h = ControlHeader(receiver, sender, messageId, flowLabel, flags);
    h.sequence = tag;
    SendControl(h, &ack, telemetry);
}

void
PacketTransport::SendControl(const FabricHeader& h,
                             const FabricAckHeader* ack,
                             const FabricIntHeader* telemetry,
                             uint64_t nackSerial)
{
    // at least a 64-byte frame, Ethernet's smallest
    constexpr uint32_t kControlFrame = 64;
    uint32_t body = ack != nullptr ? FabricAckHeader::kSerializedSize : 0;
    body += telemetry != nullptr ? telemetry->GetSerializedSize() : 0;
    const uint32_t used = FabricHeader::kSerializedSize + body;
    Ptr<Packet> p = Create<Packet>(used < kControlFrame ? kControlFrame - used : 0);
    if (telemetry != nullptr)
    {
        p->AddHeader(*telemetry);
    }
    if (ack != nullptr)
    {
        p->AddHeader(*ack);
    }
    p->AddHeader(h);
    if (nackSerial != 0)
    {
        p->AddPacketTag(NackTag(nackSerial));
    }
    if (FabricNetDevice* port = m_gpus[h.src]->SelectPort(h))
    {
        port->Enqueue(p, h, nullptr); // the control class: ahead of data
        return;
    }
    // no route back (a source-routed fabric without tables): the feedback
    // arrives at once, as without control packets, rather than never
    ControlArrived(p, h);
}

void
PacketTransport::ControlArrived(const Ptr<Packet>& p, const FabricHeaderData& h)
{
    ++m_controlDelivered;
    if ((h.flags & FabricHeader::kFlagNack) != 0)
    {
        NackArrived(p, h);
        return;
    }
    CcFlow* flow = nullptr;
    if (h.sequence != 0)
    {
        // a message's own flow (ConnectionPerMessage): while it is sending
        if (h.messageId >= m_messages.size())
        {
            return;
        }
        Message& m = m_messages[h.messageId];
        if (m.src != h.dst || m.dst != h.src || FlowTag(m) != h.sequence || !m.tx.cc ||
            m.completed || m.failed)
        {
            return; // done, or its id went to another message since
        }
        flow = &m.tx;
    }
    else
    {
        Endpoint& ep = m_endpoints[h.dst];
        const auto it = ep.ccFlows.find(h.src);
        if (it == ep.ccFlows.end())
        {
            return;
        }
        flow = &it->second;
    }
    CcFlow& f = *flow;
    m_relayControl += f.relays ? 1 : 0;
    if ((h.flags & FabricHeader::kFlagCnp) != 0)
    {
        f.cc->OnCnp();
        return;
    }
    FabricAckHeader ack;
    Ptr<Packet> body = p->Copy();
    FabricHeader fh;
    body->RemoveHeader(fh);
    body->RemoveHeader(ack);
    if (ack.ackedBytes <= f.acked)
    {
        return; // overtaken by a later one (another path)
    }
    FabricAckInfo info;
    info.ackedBytes = ack.ackedBytes - f.acked;
    info.markedBytes = ack.markedBytes > f.marked ? ack.markedBytes - f.marked : 0;
    info.ackedTotal = ack.ackedBytes;
    info.sentTotal = f.sent;
    FabricIntHeader telemetry;
    if ((h.flags & FabricHeader::kFlagInt) != 0)
    {
        body->PeekHeader(telemetry);
        info.telemetry = &telemetry;
        info.rtt = Simulator::Now() - NanoSeconds(telemetry.sentNs);
    }
    f.acked = ack.ackedBytes;
    f.marked = std::max(f.marked, ack.markedBytes);
    f.inFlight -= std::min(f.inFlight, info.ackedBytes);
    f.cc->OnAck(info);
    // a message's own flow wakes only its own connections (as a NIC's queue
    // pair): on another rank ACKs after its completion still arrive here
    // until the completion's word does, and must not stir the pair's others
    Unblock(h.dst, h.src, h.sequence != 0 ? h.messageId : kAnyMessage);
}

uint32_t
PacketTransport::NewMessage(uint32_t srcRank, uint32_t dstRank, uint64_t bytes, Delivery delivery)
{
    RequireRanks(srcRank, dstRank);
    // sequence numbers are 32 bits (the FabricHeader's): a message of more
    // packets would wrap them
    if (bytes / m_payload >= (uint64_t{1} << 32))
    {
        FabricRequire(false,
                      "message bytes",
                      bytes,
                      fmt::format("fewer than 2^32 packets of {} bytes ({} bytes)",
                                  m_payload,
                                  (uint64_t{1} << 32) * m_payload));
    }
    const uint32_t id = m_ids.Take(m_messages.size());
    if (id == m_messages.size())
    {
        m_messages.emplace_back();
    }
    Message& m = m_messages[id];
    m = Message();
    m.src = srcRank;
    m.dst = dstRank;
    m.bytes = bytes;
    m.payload = m_payload;
    m.start = Simulator::Now();
    m.serial = ++m_serials;
    m.delivery = std::move(delivery);
    // Flow label per message (like one queue pair per message): spreads
    // concurrent messages of one pair over ECMP paths, keeps each in order.
    m.flowLabel = NewFlowLabel(srcRank, dstRank, id);
    if (m_pending++ == 0 && !m_busy.IsNull())
    {
        m_busy();
    }
    return id;
}

bool
PacketTransport::Local(uint32_t id)
{
    Message& m = m_messages[id];
    ++m_totals.messagesSent;
    m_totals.bytesSent += m.bytes;
    if (m.bytes != 0 && m.src != m.dst)
    {
        return false;
    }
    // Nothing crosses the fabric: complete now, but from the event loop so
    // that callers never see re-entrant callbacks.
    m.delivered = m.bytes;
    Simulator::ScheduleNow(&PacketTransport::Complete, this, id);
    return true;
}

void
PacketTransport::Reject(uint32_t id, const std::string& why)
{
    const Message m = m_messages[id];
    m_messages[id].completed = true; // a free slot, never pending
    m_ids.Release(id);
    --m_pending;
    --m_totals.messagesSent;
    m_totals.bytesSent -= m.bytes;
    throw FabricConfigError("destination rank",
                            std::to_string(m.dst),
                            fmt::format("a rank reachable from rank {} ({})", m.src, why));
}

/// What travels between the ranks of a message's two ends (distributed
/// runs) besides its frames: bookkeeping for the sender's rank.
struct PacketTransport::Word
{
    /// What the word says.
    enum Kind : uint8_t
    {
        kComplete = 2,  //!< the sender's message arrived whole
        kLoss = 3,      //!< a packet of the receiving rank's GPU was lost
        kNote = 4,      //!< a note (SendNote) for a sink: due at startNs
        kRelayLoss = 5, //!< a packet sent under a relay's flow was lost (cookie: the relay)
        kCredit = 6,    //!< a delivered packet's credit: src, dst, payload, due at startNs
    };

    uint8_t kind{kComplete}; //!< Kind
    FabricHeaderData header; //!< src, dst, messageId (loss: the lost packet's header)
    int64_t startNs{0};      //!< loss: when it was lost; note: when due (time steps)
    uint32_t payload{0};     //!< loss: payload bytes of the lost packet
    bool congestion{false};  //!< loss: a queue overflow
    uint64_t sink{0};        //!< note: the sink's serial
    uint64_t cookie{0};      //!< note: its cookie
};

namespace
{
/// A Word as the bytes of a packet (only between ranks, never on a cable).
class WordHeader : public Header
{
  public:
    static constexpr uint32_t kSize = 1 + 4 * 4 + 2 + 2 + 8 + 4 + 1 + 8 + 8;

    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("ns3::PacketTransportWordHeader").SetParent<Header>().SetGroupName("GpuFabric");
        return tid;
    }

    TypeId GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    uint32_t GetSerializedSize() const override
    {
        return kSize;
    }

    void Serialize(Buffer::Iterator i) const override
    {
        i.WriteU8(kind);
        i.WriteHtonU32(header.src);
        i.WriteHtonU32(header.dst);
        i.WriteHtonU32(header.messageId);
        i.WriteHtonU32(header.sequence);
        i.WriteHtonU16(header.flowLabel);
        i.WriteU8(header.flags);
        i.WriteU8(header.hop);
        i.WriteHtonU64(static_cast<uint64_t>(startNs));
        i.WriteHtonU32(payload);
        i.WriteU8(congestion ? 1 : 0);
        i.WriteHtonU64(sink);
        i.WriteHtonU64(cookie);
    }

    uint32_t Deserialize(Buffer::Iterator i) override
    {
        kind = i.ReadU8();
        header.src = i.ReadNtohU32();
        header.dst = i.ReadNtohU32();
        header.messageId = i.ReadNtohU32();
        header.sequence = i.ReadNtohU32();
        header.flowLabel = i.ReadNtohU16();
        header.flags = i.ReadU8();
        header.hop = i.ReadU8();
        startNs = static_cast<int64_t>(i.ReadNtohU64());
        payload = i.ReadNtohU32();
        congestion = i.ReadU8() != 0;
        sink = i.ReadNtohU64();
        cookie = i.ReadNtohU64();
        return kSize;
    }

    void Print(std::ostream& os) const override
    {
        os << "word " << static_cast<uint32_t>(kind) << " " << header.src << "->" << header.dst
           << " message " << header.messageId;
    }

    uint8_t kind{0};         //!< Word::kind
    FabricHeaderData header; //!< Word::header
    int64_t startNs{0};      //!< Word::startNs
    uint32_t payload{0};     //!< Word::payload
    bool congestion{false};  //!< Word::congestion
    uint64_t sink{0};        //!< Word::sink
    uint64_t cookie{0};      //!< Word::cookie
};
} // namespace

uint64_t
PacketTransport::DoSend(uint32_t srcRank, uint32_t dstRank, uint64_t bytes, Delivery delivery)
{
    const bool remote = m_distributed && RequireDistributedSend(srcRank, dstRank, bytes, delivery);
    const uint32_t id = NewMessage(srcRank, dstRank, bytes, std::move(delivery));
    // its packets carry what the receiver's rank must know (FabricMessageTag)
    m_messages[id].remote = remote;
    if (Local(id))
    {
        return id;
    }
    if (m_faultsSeen && (m_deadEndpoint[srcRank] || m_deadEndpoint[dstRank]))
    {
        Simulator::ScheduleNow(
            &PacketTransport::Fail,
            this,
            id,
            fmt::format("GPU {} down", m_deadEndpoint[srcRank] ? srcRank : dstRank));
        return id;
    }
    const std::vector<FabricNetDevice*> ports = Route(id);
    if (ports.empty())
    {
        if (m_faultsSeen)
        {
            // after a failure a missing route is a result, not a configuration error
            Simulator::ScheduleNow(&PacketTransport::Fail, this, id, std::string("no path left"));
            return id;
        }
        Reject(id, "no route");
    }
    Queue(id, ports);
    return id;
}

std::vector<FabricNetDevice*>
PacketTransport::Route(uint32_t id) const
{
    const Message& m = m_messages[id];
    const Ptr<FabricGpu>& gpu = m_gpus[m.src];
    std::vector<FabricNetDevice*> ports;
    if (m.routed)
    {
        if (m_sourceRoutes && m.flowLabel < m_sourceRoutes->ports.size() &&
            !m_sourceRoutes->ports[m.flowLabel].empty() &&
            m_sourceRoutes->ports[m.flowLabel][0] < gpu->GetNPorts())
        {
            ports.push_back(PeekPointer(gpu->GetPort(m_sourceRoutes->ports[m.flowLabel][0])));
        }
        return ports;
    }
    FabricHeader h;
    h.src = m.src;
    h.dst = m.dst;
    h.flowLabel = m.flowLabel;
    const FabricRoutingTable& table = gpu->GetRoutingTable();
    if (gpu->GetSprayPackets())
    {
        // NVLink stripes a transfer over all its links (NVSwitch planes)
        for (uint32_t i = 0; i < table.GetNPorts(m.dst); ++i)
        {
            FabricNetDevice* port = PeekPointer(gpu->GetPort(table.GetPort(m.dst, i)));
            if (!port->IsNvLink())
            {
                ports.clear();
                break;
            }
            ports.push_back(port);
        }
    }
    if (ports.empty())
    {
        if (FabricNetDevice* port = gpu->SelectPort(h))
        {
            ports.push_back(port);
        }
    }
    return ports;
}

uint64_t
PacketTransport::SendRouted(uint32_t srcRank,
                            uint32_t dstRank,
                            uint64_t bytes,
                            uint16_t routeId,
                            DoneCallback done)
{
    FabricRequire(!m_distributed,
                  "routed send",
                  fmt::format("{} -> {}", srcRank, dstRank),
                  "a one-process run (explicit routes are not carried across ranks)");
    const uint32_t id = NewMessage(srcRank, dstRank, bytes, Delivery::To(done));
    Message& m = m_messages[id];
    m.flowLabel = routeId; // the route id travels in the flow label
    m.routed = true;
    if (Local(id))
    {
        return id;
    }
    const Ptr<FabricGpu>& gpu = m_gpus[srcRank];
    if (!m_sourceRoutes || routeId >= m_sourceRoutes->ports.size() ||
        m_sourceRoutes->ports[routeId].empty() ||
        m_sourceRoutes->ports[routeId][0] >= gpu->GetNPorts())
    {
        Reject(id, fmt::format("source route {} is not registered for it", routeId));
    }
    Queue(id, {PeekPointer(gpu->GetPort(m_sourceRoutes->ports[routeId][0]))});
    return id;
}

void
PacketTransport::SetSourceRoutes(std::shared_ptr<const FabricSourceRoutes> routes)
{
    m_sourceRoutes = std::move(routes);
}

void
PacketTransport::Queue(uint32_t id, const std::vector<FabricNetDevice*>& ports)
{
    Message& m = m_messages[id];
    Endpoint& ep = m_endpoints[m.src];
    if (m.queued == 0)
    {
        // Fixed at the first packet (a retransmission finds a packet's bytes
        // by its sequence number). Cut into a share per plane only when the
        // planes lead to the destination itself: a message relayed out of
        // the domain keeps full packets for its NIC hop.
        const FabricNode* sw =
            ports.size() > 1 ? ep.nvSwitch[ports.front()->GetPortIndex()] : nullptr;
        const auto& theirs = m_endpoints[m.dst].nvSwitch;
        const bool inDomain = sw && std::find(theirs.begin(), theirs.end(), sw) != theirs.end();
        m.payload = PacketPayload(m.bytes,
                                  m_payload,
                                  inDomain ? static_cast<uint32_t>(ports.size()) : 1,
                                  GetStripeMinPayload());
        if (m_nack)
        {
            if (m_pathsReorder < 0)
            {
                m_pathsReorder = PathsMayReorder() ? 1 : 0;
            }
            m.mayReorder = ports.size() > 1 || m_pathsReorder == 1;
        }
    }
    bool wasIdle = false; // the single port had nothing to send
    for (FabricNetDevice* port : ports)
    {
        const uint32_t p = port->GetPortIndex();
        const uint32_t cid = ConnectionOf(ep, m.dst, p, id);
        Connection& c = ep.connections[cid];
        c.messages.push_back(id);
        ++m.queueRefs;
        if (c.messages.size() == 1)
        {
            wasIdle = AddTurn(ep, p, cid);
        }
    }
    if (ports.size() == 1)
    {
        if (wasIdle)
        {
            Pump(ports.front());
        }
        return;
    }
    // A striped message's packets go, one at a time, to the plane with room
    // that will have sent what it holds first (ties in turn from the port
    // after the one that took the GPU's last packet dealt here), as NVLink
    // spreads bytes over its links. Filling the first plane's FIFO before the
    // next put up to TxFifoPackets + 1 packets of a short message on one
    // plane; starting each message on the first port stacked concurrent short
    // messages there; a turn counted in packets gave a chunk's short last
    // packet a turn like a full one, so full packets kept landing on the
    // same planes. "After" is by port index, cyclically, so that lists
    // without a failed plane keep the turn.
    NS_ASSERT(!ports.empty());
    const size_t n = ports.size();
    size_t next = 0;
    for (size_t i = 0; i < n; ++i)
    {
        const uint32_t p = ports[i]->GetPortIndex();
        const uint32_t best = ports[next]->GetPortIndex();
        const bool after = p > ep.lastPlane;
        const bool bestAfter = best > ep.lastPlane;
        if (after != bestAfter ? after : p < best)
        {
            next = i; // the smallest index after the last plane, else the smallest
        }
    }
    // A min-heap of (backlog, turn from `next`) over the planes that take a
    // packet now: the least backlog first, equals in turn. A plane's backlog
    // is read once, and again after it took a packet.
    using Entry = std::pair<int64_t, uint32_t>;
    std::array<Entry, 32> onStack;
    std::vector<Entry> onHeap;
    Entry* heap = onStack.data();
    if (n > onStack.size())
    {
        onHeap.resize(n);
        heap = onHeap.data();
    }
    size_t size = 0;
    const auto push = [&heap, &size, &ports, this](size_t q, uint32_t turn) {
        if (CanTake(ports[q]))
        {
            heap[size++] = {ports[q]->GetTxBacklog().GetTimeStep(), turn};
            std::push_heap(heap, heap + size, std::greater<>());
        }
    };
    for (uint32_t turn = 0; turn < n; ++turn)
    {
        push((next + turn) % n, turn);
    }
    while (size > 0)
    {
        std::pop_heap(heap, heap + size, std::greater<>());
        const uint32_t turn = heap[--size].second;
        const size_t q = (next + turn) % n;
        if (Pump(ports[q], 1) > 0)
        {
            ep.lastPlane = ports[q]->GetPortIndex();
            push(q, turn);
        }
        // else nothing to send there now (credit): it pulls when it can
    }
}

uint32_t
PacketTransport::ConnectionOf(Endpoint& ep, uint32_t dst, uint32_t port, uint32_t id)
{
    // ConnectionPerMessage: keyed by the message id (bit 63 set), reused with
    // it (an id is reused only once no connection holds its message)
    const uint64_t key = m_connPerMessage
                             ? (uint64_t{1} << 63) | (static_cast<uint64_t>(id) << 16) | port
                             : (static_cast<uint64_t>(dst) << 16) | port;
    const auto [it, added] = ep.index.try_emplace(key, ep.connections.size());
    if (added)
    {
        ep.connections.emplace_back();
    }
    return it->second;
}

bool
PacketTransport::AddTurn(Endpoint& ep, uint32_t port, uint32_t cid)
{
    auto& turns = ep.busy[port].turns;
    turns.push_back({cid, ep.connections[cid].messages.front()});
    return turns.size() == 1;
}

void
PacketTransport::TxReady(FabricNetDevice* port, void* cookie)
{
    Pump(port, *static_cast<PortTurns*>(cookie), UINT32_MAX);
}

void
PacketTransport::TakeRelay(FabricNetDevice* port,
                           PortTurns& turns,
                           const Ptr<Packet>& p,
                           const FabricHeaderData& h,
                           FabricNetDevice* ingress)
{
    Endpoint& ep = *turns.ep;
    // ranks are below 2^24 (the topology builders' bound), ports below 2^16
    const uint64_t key = (uint64_t{h.src} << 40) | (uint64_t{h.dst} << 16) | port->GetPortIndex();
    const auto [it, added] = ep.relayIndex.emplace(key, static_cast<uint32_t>(ep.relays.size()));
    if (added)
    {
        ep.relays.emplace_back();
    }
    RelayConnection& r = ep.relays[it->second];
    r.frames.push_back({p, h, ingress, p->GetSize()});
    if (r.frames.size() == 1)
    {
        turns.turns.push_back({kRelayTurn | it->second, 0});
        if (turns.turns.size() == 1)
        {
            Pump(port, turns, UINT32_MAX);
        }
    }
}

void
PacketTransport::DropRelays(FabricNetDevice* port, PortTurns& turns)
{
    // the relay turns leave the round robin first: losing their packets
    // may queue retransmissions, which take turns of their own
    std::deque<Turn> all;
    all.swap(turns.turns);
    std::vector<uint32_t> relays;
    for (const Turn& t : all)
    {
        if ((t.connection & kRelayTurn) != 0)
        {
            relays.push_back(t.connection & ~kRelayTurn);
        }
        else
        {
            turns.turns.push_back(t);
        }
    }
    // and those the relay's congestion control holds back (RelaySend)
    const uint32_t index = port->GetPortIndex();
    for (auto& [dst, waiting] : turns.ep->blocked)
    {
        const auto gone = [&relays, index](const std::pair<uint32_t, uint16_t>& w) {
            if ((w.first & kRelayTurn) == 0 || w.second != index)
            {
                return false;
            }
            relays.push_back(w.first & ~kRelayTurn);
            return true;
        };
        waiting.erase(std::remove_if(waiting.begin(), waiting.end(), gone), waiting.end());
    }
    for (uint32_t r : relays)
    {
        auto& frames = turns.ep->relays[r].frames;
        while (!frames.empty())
        {
            const RelayFrame f = std::move(frames.front());
            frames.pop_front();
            port->EnqueueRelayed(f.packet, f.header, f.ingress, f.charged); // lost with the link
        }
    }
}

bool
PacketTransport::RelayControls(const FabricNetDevice* port, const RelayFrame& f) const
{
    // a packet its source controls already (it left the source by a NIC:
    // direct-connect hops) keeps its source's flow
    return !port->IsNvLink() &&
           (f.header.flags & (FabricHeader::kFlagCc | FabricHeader::kControlFlags)) == 0;
}

bool
PacketTransport::RelaySend(FabricNetDevice* port, Endpoint& ep, uint32_t cid, RelayFrame& f)
{
    const auto relay = static_cast<uint32_t>(&ep - m_endpoints.data());
    const uint32_t dst = f.header.dst;
    // no telemetry yet: the source did not control it
    const uint32_t payload = f.packet->GetSize() - FabricHeader::kSerializedSize;
    CcFlow& flow = FlowOf(relay, dst, port);
    if (!CcAllows(flow, payload, relay, dst, kAnyMessage))
    {
        ep.blocked[dst].emplace_back(cid, port->GetPortIndex());
        return false;
    }
    CcSent(flow, payload);
    flow.relays = true;
    FabricHeader h;
    f.packet->RemoveHeader(h);
    h.flags |= FabricHeader::kFlagCc;
    if (m_ccUsesTelemetry)
    {
        AddTelemetry(f.packet, h); // the network leg's send time; the ingress is charged the growth
    }
    f.packet->AddPacketTag(RelayTag(relay));
    f.packet->AddHeader(h);
    f.header = h;
    ++m_relayedCc;
    return true;
}

void
PacketTransport::PrefetchTxReady(const void* cookie, uint32_t stage) const
{
    // each stage reads only what the one before brought in: the round
    // robin, then its head and the endpoint's connections, then the head's
    // connection and message
    const auto& feed = *static_cast<const PortTurns*>(cookie);
    switch (stage)
    {
    case 1:
        FabricPrefetch(&feed, sizeof(PortTurns));
        break;
    case 2:
        if (!feed.turns.empty())
        {
            FabricPrefetch(&feed.turns.front(), sizeof(Turn));
        }
        FabricPrefetch(&feed.ep->connections, sizeof(feed.ep->connections));
        break;
    case 3:
        if (!feed.turns.empty())
        {
            const Turn& turn = feed.turns.front();
            if (turn.connection < feed.ep->connections.size())
            {
                FabricPrefetch(&feed.ep->connections[turn.connection], sizeof(Connection));
            }
            if (turn.message < m_messages.size())
            {
                // the fields a pull reads
                FabricPrefetchObject<MessageHead>(m_messages[turn.message]);
            }
        }
        break;
    default:
        break;
    }
}

bool
PacketTransport::CanTake(const FabricNetDevice* port) const
{
    // Keep at most TxFifoPackets packets queued (a NIC's transmit FIFO);
    // with 0, one packet whenever the wire is free: it skips the queue, and
    // the end of its serialization pulls the next at the same instant.
    const bool room = m_txFifo == 0 ? port->GetQueuePackets() == 0 && !port->IsTxBusy()
                                    : port->GetQueuePackets() < m_txFifo;
    return room && !port->IsTxPaused() && port->IsUp();
}

uint32_t
PacketTransport::Pump(FabricNetDevice* port, uint32_t limit)
{
    const auto* gpu = static_cast<const FabricGpu*>(port->GetFabricNode());
    return Pump(port, m_endpoints[gpu->GetRank()].busy[port->GetPortIndex()], limit);
}

uint32_t
PacketTransport::Pump(FabricNetDevice* port, PortTurns& turns, uint32_t limit)
{
    uint32_t took = 0;
    Endpoint& ep = *turns.ep;
    auto& busy = turns.turns;
    while (took < limit && !busy.empty() && CanTake(port))
    {
        const auto [cid, id] = busy.front();
        busy.pop_front();
        if ((cid & kRelayTurn) != 0)
        {
            // a relayed packet's turn: one packet, then the next connection
            auto& frames = ep.relays[cid & ~kRelayTurn].frames;
            if (!m_ccType.empty() && RelayControls(port, frames.front()) &&
                !RelaySend(port, ep, cid, frames.front()))
            {
                // the relay's flow holds it back: off the round robin until an ACK or the pace
                continue;
            }
            const RelayFrame f = std::move(frames.front());
            frames.pop_front();
            if (!frames.empty())
            {
                busy.push_back({cid, 0});
            }
            port->EnqueueRelayed(f.packet, f.header, f.ingress, f.charged);
            ++took;
            continue;
        }
        Connection& c = ep.connections[cid];
        // id is c.messages.front() (AddTurn and the push below keep it so);
        // checked only in debug and sanitizer builds (the queue's head is cold)
#if !defined(NDEBUG) || defined(GPU_FABRIC_CHECK_INVARIANTS)
        NS_ASSERT_MSG(!c.messages.empty() && c.messages.front() == id,
                      "a turn names another message than its connection's first");
#endif
        Message& m = m_messages[id];
        bool popped = false; // the connection's head moved on
        if (m.queued == m.bytes || m.failed || m.completed)
        {
            // fully packetized through another port of a striped message,
            // given up, or (going back N) delivered meanwhile
            c.messages.pop_front();
            popped = true;
            --m.queueRefs;
            Release(id);
        }
        else
        {
            const auto payload =
                static_cast<uint32_t>(std::min<uint64_t>(m.bytes - m.queued, m.payload));
            CcFlow* flow = nullptr;
            if (!m_ccType.empty() && !port->IsNvLink())
            {
                flow = &FlowFor(m, port);
                if (!CcAllows(*flow, payload, m.src, m.dst, m_connPerMessage ? id : kAnyMessage))
                {
                    // window full or paced: off the round robin until an ACK or the pace
                    ep.blocked[m.dst].emplace_back(cid, port->GetPortIndex());
                    continue;
                }
            }
            if (m_window > 0)
            {
                uint64_t& flying = ep.inFlight[m.dst];
                if (flying > 0 && flying + payload > m_window)
                {
                    // out of credit: off the round robin until credit returns
                    ep.blocked[m.dst].emplace_back(cid, port->GetPortIndex());
                    continue;
                }
                flying += payload;
            }
            m.queued += payload;
            const uint32_t seq = m.nextSeq++;
            const uint32_t copy = m_nack ? NackSent(m, id, seq) : 0;
            FabricHeader h = PacketHeader(id, seq, m.queued == m.bytes);
            if (flow != nullptr)
            {
                h.flags |= FabricHeader::kFlagCc;
                CcSent(*flow, payload);
            }
            if (m.queued == m.bytes)
            {
                c.messages.pop_front();
                popped = true;
                --m.queueRefs;
            }
            Ptr<Packet> p = Create<Packet>(payload);
            if (flow != nullptr && m_ccUsesTelemetry)
            {
                AddTelemetry(p, h);
            }
            if (m.remote)
            {
                TagRemote(p, m);
            }
            if (copy != 0)
            {
                p->AddPacketTag(NackTag(copy)); // its loss's timer tells it from later copies
            }
            p->AddHeader(h);
            port->Enqueue(p, h, nullptr);
            ++took;
        }
        if (!c.messages.empty())
        {
            // round robin among connections
            busy.push_back({cid, popped ? c.messages.front() : id});
        }
    }
    return took;
}

FabricHeader
PacketTransport::PacketHeader(uint32_t id, uint32_t seq, bool last) const
{
    const Message& m = m_messages[id];
    FabricHeader h;
    h.src = m.src;
    h.dst = m.dst;
    h.messageId = id;
    h.sequence = seq;
    h.flowLabel = m.flowLabel;
    h.flags =
        (last ? FabricHeader::kFlagLast : 0) | (m.routed ? FabricHeader::kFlagSourceRoute : 0);
    return h;
}

void
PacketTransport::Credit(uint32_t src, uint32_t dst, uint32_t bytes, Time late)
{
    if (m_window == 0)
    {
        return;
    }
    if (m_creditDelay.IsZero())
    {
        ReturnCredit(src, dst, bytes);
        return;
    }
    // due CreditDelay after the delivery or loss, however late heard of
    const Time delay = m_creditDelay - late;
    if (m_distributed && m_localGpu[src] == 0)
    {
        // the sender is on another rank: the credit goes there as a word
        // (CreditDelay is above a word's delay: SetDistributed)
        Word w;
        w.kind = Word::kCredit;
        w.header.src = src;
        w.header.dst = dst;
        w.payload = bytes;
        w.startNs = (Simulator::Now() + delay).GetTimeStep();
        SendWord(src, w);
        return;
    }
    Simulator::Schedule(delay, &PacketTransport::CreditDue, this, src, dst, bytes);
}

void
PacketTransport::CreditDue(uint32_t src, uint32_t dst, uint32_t bytes)
{
    // taken as a note of the sender's node: with canonical ties after the
    // instant's frames and in (destination, bytes) order, however it came
    m_gpus[src]->TakeNote(kCreditNote | dst,
                          (static_cast<uint64_t>(src) << 32) | bytes,
                          MakeCallback(&PacketTransport::TakeCredit, this));
}

void
PacketTransport::TakeCredit(uint64_t note, uint64_t cookie)
{
    ReturnCredit(static_cast<uint32_t>(cookie >> 32),
                 static_cast<uint32_t>(note & ~kCreditNote),
                 static_cast<uint32_t>(cookie));
}

void
PacketTransport::ReturnCredit(uint32_t src, uint32_t dst, uint32_t bytes)
{
    Endpoint& ep = m_endpoints[src];
    auto it = ep.inFlight.find(dst);
    if (it == ep.inFlight.end())
    {
        return;
    }
    it->second -= std::min<uint64_t>(it->second, bytes);
    Unblock(src, dst);
}

void
PacketTransport::Unblock(uint32_t src, uint32_t dst, uint32_t only)
{
    Endpoint& ep = m_endpoints[src];
    auto b = ep.blocked.find(dst);
    if (b == ep.blocked.end())
    {
        return;
    }
    // back on their ports' round robins
    std::vector<std::pair<uint32_t, uint16_t>> waiting;
    if (only == kAnyMessage)
    {
        waiting.swap(b->second);
        ep.blocked.erase(b);
    }
    else
    {
        // message only's connections (one per port), the others in their order
        auto& all = b->second;
        const auto other = [&ep, only](const std::pair<uint32_t, uint16_t>& w) {
            return (w.first & kRelayTurn) != 0 || ep.connections[w.first].messages.empty() ||
                   ep.connections[w.first].messages.front() != only;
        };
        const auto split = std::stable_partition(all.begin(), all.end(), other);
        waiting.assign(split, all.end());
        all.erase(split, all.end());
        if (all.empty())
        {
            ep.blocked.erase(b);
        }
    }
    for (auto [cid, port] : waiting)
    {
        if ((cid & kRelayTurn) != 0)
        {
            // a relay connection (RelaySend): its frames wait as they were
            auto& turns = ep.busy[port].turns;
            turns.push_back({cid, 0});
            if (turns.size() == 1)
            {
                Pump(PeekPointer(m_gpus[src]->GetPort(port)), ep.busy[port], UINT32_MAX);
            }
            continue;
        }
        if (AddTurn(ep, port, cid))
        {
            Pump(PeekPointer(m_gpus[src]->GetPort(port)));
        }
    }
}

namespace
{
/// The payload bytes of a data packet (its INT records are not payload).
uint32_t
PayloadOf(const Ptr<const Packet>& p, const FabricHeaderData& h)
{
    const uint32_t bytes = p->GetSize() - FabricHeader::kSerializedSize;
    if ((h.flags & FabricHeader::kFlagInt) == 0)
    {
        return bytes;
    }
    return bytes - FabricIntHeader::Of(*p).GetSerializedSize();
}
} // namespace

void
PacketTransport::Deliver(Ptr<Packet> p, const FabricHeaderData& h)
{
    uint32_t payload = p->GetSize() - FabricHeader::kSerializedSize;
    if ((h.flags & (FabricHeader::kControlFlags | FabricHeader::kFlagCc)) != 0)
    {
        if ((h.flags & FabricHeader::kControlFlags) != 0)
        {
            ControlArrived(p, h);
            return;
        }
        // a relayed packet's flow is the relay's (RelaySend)
        uint32_t sender = h.src;
        RelayTag relay;
        if ((m_relayedCc != 0 || m_distributed) && p->PeekPacketTag(relay))
        {
            sender = static_cast<uint32_t>(relay.Get());
        }
        uint64_t serial = 0;
        if (m_connPerMessage && m_distributed && sender == h.src && m_localGpu[h.src] == 0)
        {
            // a message's own flow from another rank: named by its sender's serial
            serial = RemoteInfo(p, h).serial;
        }
        if ((h.flags & FabricHeader::kFlagInt) != 0)
        {
            const FabricIntHeader telemetry = FabricIntHeader::Of(*p);
            payload -= telemetry.GetSerializedSize();
            ReceiverFeedback(h, sender, payload, &telemetry, serial);
        }
        else
        {
            ReceiverFeedback(h, sender, payload, nullptr, serial);
        }
    }
    Credit(h.src, h.dst, payload);
    if (m_distributed && m_localGpu[h.src] == 0)
    {
        DeliverRemote(p, h, payload);
        return;
    }
    Message& m = m_messages[h.messageId];
    if (m.failed)
    {
        return; // a straggler of a message given up
    }
    if (m_nack)
    {
        m.flying -= std::min<uint32_t>(m.flying, 1);
        if (!NackAccept(m.nack, m.mayReorder, m.completed, h, m.serial))
        {
            Release(h.messageId); // a straggler of a delivered message may free its id
            return;
        }
    }
    m.delivered += payload;
    ++m_packetsDelivered;
    PollProgress(64);
    if (h.flags & FabricHeader::kFlagCe)
    {
        ++m_ecnMarked;
    }
    if (m.delivered == m.bytes)
    {
        Complete(h.messageId);
    }
}

void
PacketTransport::Complete(uint32_t id)
{
    Message& m = m_messages[id];
    --m_pending;
    if (m.lost != 0 || m.firstLoss.IsStrictlyPositive())
    {
        const uint64_t key = static_cast<uint64_t>(id) << 32;
        m_attempts.erase(m_attempts.lower_bound(key), m_attempts.lower_bound(key + (1ULL << 32)));
    }
    ++m_totals.messagesDelivered;
    m_totals.bytesDelivered += m.delivered;
    m_completeTrace(m.src, m.dst, m.bytes, m.start);
    Delivery delivery = std::move(m.delivery);
    m.delivery = Delivery();
    m.completed = true;
    Release(id);
    delivery.Notify();
}

void
PacketTransport::PacketLost(Ptr<const Packet> p, bool congestion)
{
    FabricHeader h;
    if (p->GetSize() < FabricHeader::kSerializedSize)
    {
        return;
    }
    p->PeekHeader(h);
    const uint32_t payload = (h.flags & FabricHeader::kControlFlags) != 0 ? 0 : PayloadOf(p, h);
    RelayTag relay;
    if ((m_relayedCc != 0 || m_distributed) &&
        (h.flags & (FabricHeader::kFlagCc | FabricHeader::kControlFlags)) ==
            FabricHeader::kFlagCc &&
        p->PeekPacketTag(relay))
    {
        // sent under the relay's flow: no longer in flight there; its
        // source resends it (not congestion-controlled at the source)
        const auto gpu = static_cast<uint32_t>(relay.Get());
        if (m_distributed && m_localGpu[gpu] == 0)
        {
            // the relay is on another rank: it hears of it a word later
            Word w;
            w.kind = Word::kRelayLoss;
            w.header = h;
            w.payload = payload;
            w.cookie = gpu;
            SendWord(gpu, w);
        }
        else
        {
            RelayLost(gpu, h.dst, payload);
        }
        h.flags &= ~FabricHeader::kFlagCc;
    }
    // Nack: a NACK's message serial, a resent data packet's copy, and a data
    // packet's message serial where it goes to another rank (the sender
    // reuses such a message's id before its stragglers are gone)
    NackTag nack;
    const uint64_t extra = m_nack && p->PeekPacketTag(nack) ? nack.Get() : 0;
    FabricMessageTag message;
    const uint64_t serial =
        m_nack && (h.flags & FabricHeader::kControlFlags) == 0 && p->PeekPacketTag(message)
            ? message.info.serial
            : 0;
    if (m_distributed && h.src < m_localGpu.size() && m_localGpu[h.src] == 0)
    {
        // the sender (of the data, or of the lost ACK) is on another rank:
        // it hears of the loss a lookahead later
        Word w;
        w.kind = Word::kLoss;
        w.header = h;
        w.startNs = Simulator::Now().GetTimeStep();
        w.payload = payload;
        w.congestion = congestion;
        w.cookie = extra;
        w.sink = serial;
        SendWord(h.src, w);
        return;
    }
    SenderLost(h, payload, congestion, Time(0), extra, serial);
}

void
PacketTransport::RelayLost(uint32_t relay, uint32_t dst, uint32_t payload)
{
    auto& flows = m_endpoints[relay].ccFlows;
    if (auto f = flows.find(dst); f != flows.end())
    {
        f->second.inFlight -= std::min<uint64_t>(f->second.inFlight, payload);
        Unblock(relay, dst);
    }
}

void
PacketTransport::SenderLost(const FabricHeaderData& h,
                            uint32_t payload,
                            bool congestion,
                            Time late,
                            uint64_t extra,
                            uint64_t serial)
{
    // the resend leaves RetransmitTimeout after the loss, however late heard of
    const Time rto = m_rto - late;
    if ((h.flags & FabricHeader::kControlFlags) != 0)
    {
        // a lost ACK is made good by the next; the last one of a flow is
        // sent again (a CNP is not: the next mark sends another)
        if ((h.flags & FabricHeader::kFlagNack) != 0)
        {
            // a NACK's loss: another goes if the gap is still there (its
            // message's serial is the NACK's NackTag)
            Simulator::Schedule(rto, &PacketTransport::NackAgain, this, h.dst, h.messageId, extra);
        }
        else if ((h.flags & FabricHeader::kFlagAck) != 0)
        {
            Simulator::Schedule(rto,
                                &PacketTransport::SendAck,
                                this,
                                h.src,
                                h.dst,
                                h.messageId,
                                h.flowLabel,
                                static_cast<const FabricIntHeader*>(nullptr),
                                h.sequence);
        }
        return;
    }
    if (h.messageId >= m_messages.size())
    {
        return;
    }
    Message& m = m_messages[h.messageId];
    if (m.src != h.src || m.dst != h.dst)
    {
        return; // not one of ours
    }
    if (m.flying > 0)
    {
        --m.flying; // Nack: one fewer on the way
        if (m.completed)
        {
            Release(h.messageId);
        }
    }
    // the lost packet's buffer slot is free again (a resend takes it anew)
    Credit(h.src, h.dst, payload, late);
    if ((h.flags & FabricHeader::kFlagCc) != 0 && m_connPerMessage && m.tx.cc)
    {
        m.tx.inFlight -= std::min<uint64_t>(m.tx.inFlight, payload);
    }
    else if ((h.flags & FabricHeader::kFlagCc) != 0)
    {
        auto& flows = m_endpoints[h.src].ccFlows;
        if (auto f = flows.find(h.dst); f != flows.end())
        {
            const uint64_t bytes = payload;
            f->second.inFlight -= std::min(f->second.inFlight, bytes);
        }
    }
    if ((congestion && !m_recoverCongestion) || m.completed || m.failed ||
        (serial != 0 && serial != m.serial))
    {
        return; // (or a straggler of a message whose id went to this one since)
    }
    ++m_lostPackets;
    if (m.lost++ == 0 && m.firstLoss.IsZero())
    {
        m.firstLoss = Simulator::Now() - late;
    }
    const uint64_t key = (static_cast<uint64_t>(h.messageId) << 32) | h.sequence;
    const uint32_t attempts = ++m_attempts[key];
    NS_LOG_INFO("lost packet " << h.sequence << " of message " << h.messageId << " (" << h.src
                               << " -> " << h.dst << "), loss " << attempts);
    if (attempts > m_maxRetransmissions)
    {
        Simulator::ScheduleNow(
            &PacketTransport::Fail,
            this,
            h.messageId,
            fmt::format("packet {} lost {} times (MaxRetransmissions)", h.sequence, attempts));
        return;
    }
    if (m_nack)
    {
        // the retransmission timer: goes back N from this packet unless it
        // was resent since this copy went (a NACK came first)
        const Time at = Simulator::Now() - late;
        m.lossAt[h.sequence] = at;
        Simulator::Schedule(rto,
                            &PacketTransport::LossTimeout,
                            this,
                            h.messageId,
                            m.serial,
                            h.sequence,
                            at,
                            static_cast<uint32_t>(extra));
        return;
    }
    Simulator::Schedule(rto, &PacketTransport::Retransmit, this, h.messageId, h.sequence);
}

std::vector<FabricNetDevice*>
PacketTransport::LivePorts(uint32_t id)
{
    const Message& m = m_messages[id];
    if (m_deadEndpoint[m.src] || m_deadEndpoint[m.dst])
    {
        Fail(id, fmt::format("GPU {} down", m_deadEndpoint[m.src] ? m.src : m.dst));
        return {};
    }
    std::vector<FabricNetDevice*> ports = Route(id);
    if (ports.empty())
    {
        Fail(id, "no path left");
    }
    return ports;
}

void
PacketTransport::Retransmit(uint32_t id, uint32_t seq)
{
    Message& m = m_messages[id];
    if (m.failed || m.completed)
    {
        return;
    }
    const std::vector<FabricNetDevice*> ports = LivePorts(id);
    if (ports.empty())
    {
        return; // failed
    }
    FabricNetDevice* port = ports.front();
    if (ports.size() > 1)
    {
        // a striped message: resend on one of its planes, spread by sequence
        port = ports[seq % ports.size()];
    }
    const uint64_t offset = static_cast<uint64_t>(seq) * m.payload;
    const auto payload = static_cast<uint32_t>(std::min<uint64_t>(m.bytes - offset, m.payload));
    FabricHeader h = PacketHeader(id, seq, offset + payload == m.bytes);
    if (!m_ccType.empty() && !port->IsNvLink())
    {
        // resent outside the window and the pace, as a NIC's retransmission
        h.flags |= FabricHeader::kFlagCc;
        FlowFor(m, port).inFlight += payload;
    }
    Ptr<Packet> p = Create<Packet>(payload);
    if ((h.flags & FabricHeader::kFlagCc) != 0 && m_ccUsesTelemetry)
    {
        AddTelemetry(p, h);
    }
    if (m.remote)
    {
        TagRemote(p, m);
    }
    p->AddHeader(h);
    --m.lost;
    ++m_retransmissions;
    if (m_window > 0)
    {
        m_endpoints[m.src].inFlight[m.dst] += payload; // credited back on delivery or loss
    }
    m_retransmitTrace(m.src, m.dst, id, seq);
    port->Enqueue(p, h, nullptr); // a loss here (down port) reports itself again
}

bool
PacketTransport::NackAccept(NackRx& rx,
                            bool mayReorder,
                            bool done,
                            const FabricHeaderData& h,
                            uint64_t serial)
{
    const uint32_t seq = h.sequence;
    if (done || seq < rx.rxNext)
    {
        ++m_discarded; // a duplicate (going back N resends what arrived)
        return false;
    }
    rx.rxHigh = std::max(rx.rxHigh, seq + 1);
    const uint32_t off = seq - rx.rxNext;
    if (off > 0 && !mayReorder)
    {
        // an in-order path: what follows a gap is discarded, and the
        // expected packet asked for once (a RoCE NIC's sequence error NAK)
        ++m_discarded;
        if (!rx.nackSent)
        {
            rx.nackSent = true;
            SendNack(h.dst, h.src, h.messageId, h.flowLabel, rx.rxNext, serial);
        }
        return false;
    }
    if (off < rx.ahead.size() && rx.ahead[off] != 0)
    {
        ++m_discarded;
        return false;
    }
    if (off >= rx.ahead.size())
    {
        rx.ahead.resize(off + 1, 0);
    }
    rx.ahead[off] = 1;
    while (!rx.ahead.empty() && rx.ahead.front() != 0)
    {
        rx.ahead.pop_front();
        ++rx.rxNext;
        rx.nackSent = false;
    }
    if (!rx.ahead.empty() && !rx.gapTimer)
    {
        // a may-reorder path: a NACK only if the gap persists
        rx.gapTimer = true;
        Simulator::Schedule(m_nackReorderDelay,
                            &PacketTransport::GapPersists,
                            this,
                            h.src,
                            h.messageId,
                            serial,
                            rx.rxNext);
    }
    return true;
}

PacketTransport::NackRx*
PacketTransport::FindNackRx(uint32_t sender,
                            uint32_t id,
                            uint64_t serial,
                            uint32_t& receiver,
                            uint16_t& flowLabel)
{
    if (m_distributed && sender < m_localGpu.size() && m_localGpu[sender] == 0)
    {
        // a message from another rank: gone once complete
        const auto it = m_remote.find(RemoteKey(sender, id));
        if (it == m_remote.end() || it->second.serial != serial)
        {
            return nullptr;
        }
        receiver = it->second.dst;
        flowLabel = it->second.flowLabel;
        return &it->second.nack;
    }
    if (id >= m_messages.size())
    {
        return nullptr;
    }
    Message& m = m_messages[id];
    if (m.serial != serial || m.src != sender || m.completed || m.failed)
    {
        return nullptr;
    }
    receiver = m.dst;
    flowLabel = m.flowLabel;
    return &m.nack;
}

void
PacketTransport::GapPersists(uint32_t sender, uint32_t id, uint64_t serial, uint32_t seq)
{
    uint32_t receiver = 0;
    uint16_t flowLabel = 0;
    NackRx* rx = FindNackRx(sender, id, serial, receiver, flowLabel);
    if (rx == nullptr)
    {
        return;
    }
    rx->gapTimer = false;
    if (rx->ahead.empty())
    {
        return;
    }
    if (rx->rxNext != seq)
    {
        // that gap closed, another is open: it gets its own time
        rx->gapTimer = true;
        Simulator::Schedule(m_nackReorderDelay,
                            &PacketTransport::GapPersists,
                            this,
                            sender,
                            id,
                            serial,
                            rx->rxNext);
        return;
    }
    if (!rx->nackSent)
    {
        rx->nackSent = true;
        SendNack(receiver, sender, id, flowLabel, rx->rxNext, serial);
    }
}

void
PacketTransport::SendNack(uint32_t receiver,
                          uint32_t sender,
                          uint32_t id,
                          uint16_t flowLabel,
                          uint32_t rxNext,
                          uint64_t serial)
{
    if (m_deadEndpoint[receiver])
    {
        return;
    }
    FabricHeader h = ControlHeader(receiver, sender, id, flowLabel, FabricHeader::kFlagNack);
    h.sequence = rxNext;
    ++m_nacksSent;
    NS_LOG_INFO("NACK: message " << id << " (" << sender << " -> " << receiver
                                 << ") expects packet " << rxNext);
    SendControl(h, nullptr, nullptr, serial);
}

void
PacketTransport::NackAgain(uint32_t sender, uint32_t id, uint64_t serial)
{
    uint32_t receiver = 0;
    uint16_t flowLabel = 0;
    NackRx* rx = FindNackRx(sender, id, serial, receiver, flowLabel);
    if (rx != nullptr && rx->rxHigh > rx->rxNext)
    {
        SendNack(receiver, sender, id, flowLabel, rx->rxNext, serial);
    }
}

void
PacketTransport::NackArrived(const Ptr<const Packet>& p, const FabricHeaderData& h)
{
    if (h.messageId >= m_messages.size())
    {
        return;
    }
    const Message& m = m_messages[h.messageId];
    NackTag serial;
    if (m.src != h.dst || m.dst != h.src || !p->PeekPacketTag(serial) || serial.Get() != m.serial)
    {
        return; // not one of ours (or of a message whose id went to this one since)
    }
    GoBack(h.messageId, h.sequence);
}

void
PacketTransport::GoBack(uint32_t id, uint32_t seq)
{
    Message& m = m_messages[id];
    if (m.completed || m.failed || m.nextSeq <= seq)
    {
        return; // nothing to resend, or a resend from there is pending
    }
    NS_LOG_INFO("message " << id << " goes back from packet " << m.nextSeq << " to " << seq);
    m.nextSeq = seq;
    m.queued = static_cast<uint64_t>(seq) * m.payload;
    if (m.queueRefs > 0)
    {
        return; // a connection still holds it: it sends from seq in its turn
    }
    const std::vector<FabricNetDevice*> ports = LivePorts(id);
    if (ports.empty())
    {
        return; // failed
    }
    // first in its connections, as a queue pair resumes from the NACKed packet
    Endpoint& ep = m_endpoints[m.src];
    for (FabricNetDevice* port : ports)
    {
        const uint32_t p = port->GetPortIndex();
        const uint32_t cid = ConnectionOf(ep, m.dst, p, id);
        Connection& c = ep.connections[cid];
        c.messages.push_front(id);
        ++m.queueRefs;
        if (c.messages.size() == 1)
        {
            if (AddTurn(ep, p, cid))
            {
                Pump(port);
            }
            continue;
        }
        // a turn names its connection's first message (if it waits for
        // credit or pace it has none: it takes the first when unblocked)
        for (Turn& t : ep.busy[p].turns)
        {
            if (t.connection == cid)
            {
                t.message = id;
            }
        }
    }
}

uint32_t
PacketTransport::NackSent(Message& m, uint32_t id, uint32_t seq)
{
    if (!m.remote)
    {
        ++m.flying; // its id is not reused while any is on the way
    }
    if (seq < m.sentSeq)
    {
        ++m_retransmissions;
        m_retransmitTrace(m.src, m.dst, id, seq);
        const auto it = m.lossAt.find(seq);
        if (it != m.lossAt.end())
        {
            m.lossAt.erase(it);
            --m.lost;
        }
        return ++m.resent[seq];
    }
    m.sentSeq = seq + 1;
    return 0;
}

void
PacketTransport::LossTimeout(uint32_t id, uint64_t serial, uint32_t seq, Time at, uint32_t copy)
{
    Message& m = m_messages[id];
    if (m.serial != serial || m.completed || m.failed)
    {
        return;
    }
    const auto it = m.lossAt.find(seq);
    if (it == m.lossAt.end() || it->second != at)
    {
        return; // resent since the loss
    }
    // a copy sent after the lost one, before its loss was heard of, is on
    // its way or arrived (if it is lost too, its own timer goes back): the
    // sender's own knowledge, so a receiver on another rank decides alike
    if (const auto r = m.resent.find(seq); r != m.resent.end() && r->second > copy)
    {
        m.lossAt.erase(it);
        --m.lost;
        return;
    }
    GoBack(id, seq);
}

void
PacketTransport::SetFabricNodes(std::vector<const FabricNode*> nodes)
{
    m_fabricNodes = std::move(nodes);
    m_pathsReorder = -1;
}

bool
PacketTransport::PathsMayReorder() const
{
    if (!m_fabricNodes.empty())
    {
        return std::any_of(m_fabricNodes.begin(), m_fabricNodes.end(), [](const FabricNode* n) {
            return n->GetLoadBalancing() != FabricNode::kEcmp;
        });
    }
    std::unordered_set<const FabricNode*> seen;
    std::vector<const FabricNode*> todo;
    for (const Ptr<FabricGpu>& gpu : m_gpus)
    {
        seen.insert(PeekPointer(gpu));
        todo.push_back(PeekPointer(gpu));
    }
    while (!todo.empty())
    {
        const FabricNode* node = todo.back();
        todo.pop_back();
        if (node->GetLoadBalancing() != FabricNode::kEcmp)
        {
            return true;
        }
        for (uint32_t i = 0; i < node->GetNPorts(); ++i)
        {
            const Ptr<FabricNetDevice> port = node->GetPort(i);
            const auto channel = DynamicCast<FabricChannel>(port->GetChannel());
            const Ptr<FabricNetDevice> peer =
                channel ? channel->GetPeer(PeekPointer(port)) : nullptr;
            if (peer && peer->GetFabricNode() && seen.insert(peer->GetFabricNode()).second)
            {
                todo.push_back(peer->GetFabricNode());
            }
        }
    }
    return false;
}

void
PacketTransport::Fail(uint32_t id, const std::string& why)
{
    Message& m = m_messages[id];
    if (m.failed || m.completed)
    {
        return;
    }
    m.failed = true; // its id is never reused: stragglers may still arrive
    Delivery delivery = std::move(m.delivery);
    m.delivery = Delivery();
    --m_pending;
    MessageReport r = Report(id);
    r.reason = why;
    r.failedAt = Simulator::Now();
    NS_LOG_WARN("message failed: " << r.ToString());
    ReportFailure(std::move(r), delivery);
}

PacketTransport::MessageReport
PacketTransport::Report(uint32_t id) const
{
    const Message& m = m_messages[id];
    MessageReport r;
    r.messageId = id;
    r.src = m.src;
    r.dst = m.dst;
    r.bytes = m.bytes;
    r.delivered = m.delivered;
    r.sent = m.start;
    r.since = m.firstLoss;
    return r;
}

void
PacketTransport::RoutesChanged()
{
    m_faultsSeen = true;
    // fail what has a dead end
    for (uint32_t id = 0; id < m_messages.size(); ++id)
    {
        const Message& m = m_messages[id];
        if (m.completed || m.failed)
        {
            continue;
        }
        if (m_deadEndpoint[m.src] || m_deadEndpoint[m.dst])
        {
            Fail(id, fmt::format("GPU {} down", m_deadEndpoint[m.src] ? m.src : m.dst));
        }
    }
    // move queued messages off ports that went down
    for (uint32_t r = 0; r < m_gpus.size(); ++r)
    {
        Endpoint& ep = m_endpoints[r];
        std::vector<uint32_t> moved;
        // a connection on a dead port gives up its messages, to be routed anew
        auto takeMessages = [&](uint32_t cid) {
            Connection& c = ep.connections[cid];
            for (uint32_t id : c.messages)
            {
                --m_messages[id].queueRefs;
                moved.push_back(id);
            }
            c.messages.clear();
        };
        for (uint32_t p = 0; p < ep.busy.size(); ++p)
        {
            auto& turns = ep.busy[p].turns;
            if (m_gpus[r]->GetPort(p)->IsUp() || turns.empty())
            {
                continue;
            }
            for (const Turn& turn : turns)
            {
                takeMessages(turn.connection);
            }
            turns.clear();
        }
        // connections waiting for credit are off the round robins, but their
        // ports may be down too: they move as well (else credit returning
        // later would put them back on a dead port, and they would hang);
        // destinations in order, for the same order in every run
        std::vector<uint32_t> dsts;
        for (const auto& [dst, waiting] : ep.blocked)
        {
            dsts.push_back(dst);
        }
        std::sort(dsts.begin(), dsts.end());
        for (uint32_t dst : dsts)
        {
            auto& waiting = ep.blocked[dst];
            std::vector<std::pair<uint32_t, uint16_t>> keep;
            for (const auto& [cid, port] : waiting)
            {
                if (m_gpus[r]->GetPort(port)->IsUp())
                {
                    keep.emplace_back(cid, port);
                    continue;
                }
                takeMessages(cid);
            }
            if (keep.empty())
            {
                ep.blocked.erase(dst);
            }
            else
            {
                waiting.swap(keep);
            }
        }
        for (uint32_t id : moved)
        {
            Message& m = m_messages[id];
            if (m.failed || m.queueRefs > 0 || m.queued == m.bytes)
            {
                Release(id);
                continue; // other planes carry the rest, or nothing is left
            }
            const std::vector<FabricNetDevice*> ports = Route(id);
            if (ports.empty())
            {
                Fail(id, "no path left");
                continue;
            }
            NS_LOG_INFO("message " << id << " moves to " << ports.size() << " new port(s)");
            Queue(id, ports);
        }
    }
}

void
PacketTransport::SetEndpointDown(uint32_t rank, bool down)
{
    FabricRequire(rank < m_gpus.size(),
                  "GPU rank",
                  rank,
                  fmt::format("a rank below {}", m_gpus.size()));
    m_deadEndpoint[rank] = down;
    m_faultsSeen = true;
}

bool
PacketTransport::IsEndpointDown(uint32_t rank) const
{
    return rank < m_deadEndpoint.size() && m_deadEndpoint[rank];
}

uint64_t
PacketTransport::GetRetransmissions() const
{
    return m_retransmissions;
}

uint64_t
PacketTransport::GetLostPackets() const
{
    return m_lostPackets;
}

uint64_t
PacketTransport::GetPendingMessages() const
{
    return m_pending;
}

std::vector<PacketTransport::MessageReport>
PacketTransport::GetPendingReports(uint32_t max) const
{
    std::vector<MessageReport> out;
    for (uint32_t id = 0; id < m_messages.size() && out.size() < max; ++id)
    {
        const Message& m = m_messages[id];
        if (!m.completed && !m.failed)
        {
            out.push_back(Report(id));
        }
    }
    return out;
}

void
PacketTransport::SetBusyCallback(Callback<void> cb)
{
    m_busy = cb;
}

bool
PacketTransport::RequireDistributedSend(uint32_t srcRank,
                                        uint32_t dstRank,
                                        uint64_t bytes,
                                        const Delivery& delivery) const
{
    RequireRanks(srcRank, dstRank);
    FabricRequire(m_localGpu[srcRank] != 0,
                  "source rank",
                  srcRank,
                  fmt::format("a GPU this process simulates (MPI rank {}): in a distributed run "
                              "only a GPU's own rank sends from it",
                              FabricDistributed::GetSystemId()));
    if (m_localGpu[dstRank] != 0)
    {
        return false;
    }
    FabricRequire(bytes > 0,
                  "message bytes",
                  bytes,
                  fmt::format("at least 1 for a message to GPU {}, simulated by another rank (a "
                              "0-byte message completes at once, where its receiver is not)",
                              dstRank));
    FabricRequire(delivery.done.IsNull(),
                  "delivery",
                  fmt::format("a callback, for a message {} -> {}", srcRank, dstRank),
                  "a MessageSink (Send with a sink and cookie) or nothing, for a message to a "
                  "GPU another rank simulates: a callback cannot be called there");
    return true;
}

void
PacketTransport::SetDistributed(Time lookahead, const std::vector<Time>& wordDelay)
{
    FabricRequire(lookahead.IsStrictlyPositive(),
                  "lookahead",
                  fmt::format("{} ns", lookahead.GetNanoSeconds()),
                  "a positive time (the least delay of a cable between ranks)");
    FabricRequire(m_rto >= lookahead,
                  "ns3::PacketTransport::RetransmitTimeout",
                  fmt::format("{} ns", m_rto.GetNanoSeconds()),
                  fmt::format("at least the run's lookahead ({} ns): a loss on another rank is "
                              "heard of a lookahead later",
                              lookahead.GetNanoSeconds()));
    m_distributed = true;
    m_wordDelay = wordDelay;
    for (const Time& d : wordDelay)
    {
        // a credit for a GPU of another rank goes there as a word, and must
        // be due after it arrives
        FabricRequire(m_window == 0 || m_creditDelay > d,
                      "ns3::PacketTransport::CreditDelay",
                      fmt::format("{} ns", m_creditDelay.GetNanoSeconds()),
                      fmt::format("more than the delay of a word between ranks ({} ns) when "
                                  "ConnectionWindow is on in a distributed run: a credit for a GPU "
                                  "of another rank travels as a word",
                                  d.GetNanoSeconds()));
        FabricRequire(m_rto >= d,
                      "ns3::PacketTransport::RetransmitTimeout",
                      fmt::format("{} ns", m_rto.GetNanoSeconds()),
                      fmt::format("at least the delay of a word between ranks ({} ns): a loss "
                                  "on another rank is heard of that much later",
                                  d.GetNanoSeconds()));
    }
    m_localGpu.assign(m_gpus.size(), 0);
    for (uint32_t r = 0; r < m_gpus.size(); ++r)
    {
        m_localGpu[r] = FabricDistributed::IsLocal(*m_gpus[r]) ? 1 : 0;
        if (m_localGpu[r] == 0)
        {
            continue;
        }
        for (uint32_t i = 0; i < m_gpus[r]->GetNPorts(); ++i)
        {
            m_gpus[r]->GetPort(i)->SetRemoteTransportCallback(
                MakeCallback(&PacketTransport::ReceiveWord, this));
        }
    }
}

bool
PacketTransport::IsLocalGpu(uint32_t rank) const
{
    return !m_distributed || (rank < m_localGpu.size() && m_localGpu[rank] != 0);
}

uint32_t
PacketTransport::GetGpuProcess(uint32_t rank) const
{
    RequireRanks(rank, rank);
    return m_distributed ? m_gpus[rank]->GetSystemId() : 0;
}

bool
PacketTransport::IsDistributed() const
{
    return m_distributed;
}

Time
PacketTransport::GetNoteDelay(uint32_t from, uint32_t to) const
{
    RequireRanks(from, to);
    if (!m_distributed || m_localGpu[to] != 0)
    {
        return Time(0);
    }
    return m_wordDelay[m_gpus[to]->GetSystemId()];
}

void
PacketTransport::SendNote(uint32_t from,
                          uint32_t to,
                          const MessageSink& sink,
                          uint64_t cookie,
                          Time at)
{
    const Time delay = GetNoteDelay(from, to);
    // a word sent a lookahead ahead may be received after that instant's
    // other events (ns-3's granted window includes its end): due strictly
    // later, it is scheduled before the instant and taken in canonical order
    FabricRequire(delay.IsZero() ? at >= Simulator::Now() : at > Simulator::Now() + delay,
                  "note time",
                  at.As(Time::S),
                  fmt::format("later than the delay of a word from GPU {} to GPU {} ({} ns) "
                              "from now",
                              from,
                              to,
                              delay.GetNanoSeconds()));
    FabricRequire(IsLocalGpu(from), "note sender", from, "a GPU this process simulates");
    if (delay.IsZero())
    {
        Simulator::Schedule(at - Simulator::Now(),
                            &PacketTransport::NoteDue,
                            this,
                            to,
                            sink.GetSinkSerial(),
                            cookie);
        return;
    }
    Word w;
    w.kind = Word::kNote;
    w.header.src = from;
    w.header.dst = to;
    w.startNs = at.GetTimeStep();
    w.sink = sink.GetSinkSerial();
    w.cookie = cookie;
    SendWord(to, w);
}

void
PacketTransport::NoteDue(uint32_t gpu, uint64_t sink, uint64_t cookie)
{
    m_gpus[gpu]->TakeNote(sink, cookie, MakeCallback(&Transport::TakeNote));
}

void
PacketTransport::SendWord(uint32_t gpu, const Word& w)
{
    WordHeader wh;
    wh.kind = w.kind;
    wh.header = w.header;
    wh.startNs = w.startNs;
    wh.payload = w.payload;
    wh.congestion = w.congestion;
    wh.sink = w.sink;
    wh.cookie = w.cookie;
    Ptr<Packet> p = Create<Packet>();
    p->AddHeader(wh);
    const Ptr<FabricGpu>& to = m_gpus[gpu];
    const Time delay = m_wordDelay[to->GetSystemId()];
    NS_ABORT_MSG_IF(delay.IsZero(),
                    "PacketTransport: no cable joins this rank to rank "
                        << to->GetSystemId() << " (GPU " << gpu
                        << "), which null messages need to send it a word");
    FabricNetDevice::SendRemoteTransport(p,
                                         Simulator::Now() + delay,
                                         to->GetId(),
                                         to->GetPort(0)->GetIfIndex());
}

void
PacketTransport::ReceiveWord(Ptr<Packet> p)
{
    WordHeader wh;
    p->RemoveHeader(wh);
    const FabricHeaderData& h = wh.header;
    switch (wh.kind)
    {
    case Word::kComplete:
        CompletedElsewhere(h.messageId);
        return;
    case Word::kLoss:
        SenderLost(h,
                   wh.payload,
                   wh.congestion,
                   Simulator::Now() - TimeStep(wh.startNs),
                   wh.cookie,
                   wh.sink);
        return;
    case Word::kRelayLoss:
        RelayLost(static_cast<uint32_t>(wh.cookie), h.dst, wh.payload);
        return;
    case Word::kCredit:
        // due strictly after the word's arrival (SetDistributed): scheduled
        // before its instant, as the one-process run schedules it
        Simulator::Schedule(TimeStep(wh.startNs) - Simulator::Now(),
                            &PacketTransport::CreditDue,
                            this,
                            h.src,
                            h.dst,
                            wh.payload);
        return;
    case Word::kNote: {
        const Time due = TimeStep(wh.startNs);
        if (due == Simulator::Now())
        {
            // taken from this event, as an event of the instant scheduled earlier would be
            NoteDue(h.dst, wh.sink, wh.cookie);
        }
        else
        {
            Simulator::Schedule(due - Simulator::Now(),
                                &PacketTransport::NoteDue,
                                this,
                                h.dst,
                                wh.sink,
                                wh.cookie);
        }
        return;
    }
    default:
        NS_FATAL_ERROR("PacketTransport: unknown word " << static_cast<uint32_t>(wh.kind)
                                                        << " from another rank");
    }
}

void
PacketTransport::TagRemote(const Ptr<Packet>& p, const Message& m) const
{
    FabricMessageTag tag;
    tag.info.bytes = m.bytes;
    tag.info.start = m.start.GetTimeStep();
    tag.info.hasSink = m.delivery.sink != nullptr;
    tag.info.sink = tag.info.hasSink ? m.delivery.sink->GetSinkSerial() : 0;
    tag.info.cookie = m.delivery.cookie;
    tag.info.serial = m.serial;
    tag.info.mayReorder = m.mayReorder;
    p->AddPacketTag(tag);
}

void
PacketTransport::DeliverRemote(const Ptr<Packet>& p, const FabricHeaderData& h, uint32_t payload)
{
    const uint64_t key = RemoteKey(h.src, h.messageId);
    auto it = m_remote.find(key);
    if (it == m_remote.end() || m_nack)
    {
        const FabricMessageInfo info = RemoteInfo(p, h);
        if (m_nack)
        {
            // with NACKs the sender reuses the id of a message completed
            // here while duplicates of it are on the way: they are discarded
            // as on one process
            const auto done = m_remoteDone.find(key);
            if ((done != m_remoteDone.end() && info.serial <= done->second) ||
                (it != m_remote.end() && info.serial < it->second.serial))
            {
                ++m_discarded;
                return;
            }
        }
        if (it == m_remote.end())
        {
            it = m_remote.try_emplace(key).first;
            RemoteMessage& r = it->second;
            r.bytes = info.bytes;
            r.start = TimeStep(info.start);
            r.sink = info.sink;
            r.cookie = info.cookie;
            r.hasSink = info.hasSink;
            r.serial = info.serial;
            r.mayReorder = info.mayReorder;
            r.flowLabel = h.flowLabel;
            r.dst = h.dst;
        }
    }
    RemoteMessage& r = it->second;
    if (m_nack && !NackAccept(r.nack, r.mayReorder, false, h, r.serial))
    {
        return;
    }
    r.delivered += payload;
    ++m_packetsDelivered;
    PollProgress(64);
    if (h.flags & FabricHeader::kFlagCe)
    {
        ++m_ecnMarked;
    }
    MaybeCompleteRemote(key, r, h.src, h.dst);
}

void
PacketTransport::MaybeCompleteRemote(uint64_t key, RemoteMessage& r, uint32_t src, uint32_t dst)
{
    if (r.delivered < r.bytes)
    {
        return;
    }
    const RemoteMessage done = std::move(r);
    m_remote.erase(key);
    if (m_nack)
    {
        m_remoteDone[key] = done.serial;
    }
    ++m_totals.messagesDelivered;
    m_totals.bytesDelivered += done.delivered;
    m_completeTrace(src, dst, done.bytes, done.start);
    Word w;
    w.kind = Word::kComplete;
    w.header.src = src;
    w.header.dst = dst;
    w.header.messageId = static_cast<uint32_t>(key);
    SendWord(src, w);
    if (done.hasSink)
    {
        MessageSink* sink = MessageSink::FindSink(done.sink);
        NS_ABORT_MSG_IF(sink == nullptr,
                        "PacketTransport: message " << src << " -> " << dst << " names sink #"
                                                    << done.sink
                                                    << ", which this rank does not have (every "
                                                       "rank must make the same sinks, in the "
                                                       "same order, before the run)");
        sink->MessageDelivered(done.cookie);
    }
}

void
PacketTransport::CompletedElsewhere(uint32_t id)
{
    Message& m = m_messages[id];
    if (m.failed || m.completed)
    {
        return;
    }
    --m_pending;
    if (m.lost != 0 || m.firstLoss.IsStrictlyPositive())
    {
        const uint64_t key = static_cast<uint64_t>(id) << 32;
        m_attempts.erase(m_attempts.lower_bound(key), m_attempts.lower_bound(key + (1ULL << 32)));
    }
    m.delivery = Delivery(); // told on the receiver's rank
    m.completed = true;
    Release(id);
}

void
PacketTransport::Release(uint32_t id)
{
    Message& m = m_messages[id];
    if (m.completed && m.queueRefs == 0 && m.flying == 0)
    {
        m.tx.wake.Cancel(); // a message's own flow (ConnectionPerMessage) is done
        m_ids.Release(id);
    }
}

} // namespace ns3
