/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-net-device.h"

#include "fabric-channel.h"
#include "fabric-header.h"
#include "fabric-node.h"

#include "ns3/boolean.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/ethernet-header.h"
#include "ns3/fabric-error.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FabricNetDevice");
NS_OBJECT_ENSURE_REGISTERED(FabricNetDevice);

namespace
{

/// Fire a packet trace only if something listens (its bit in the device's
/// mask, one byte beside the hop's other fields): calling an empty one still
/// builds a Ptr<const Packet> (a reference count up and down) per hop.
inline void
FireIfConnected(uint8_t traces,
                uint8_t bit,
                const TracedCallback<Ptr<const Packet>>& trace,
                const Ptr<Packet>& p)
{
    if ((traces & bit) != 0)
    {
        trace(p);
    }
}

} // namespace

TypeId
FabricNetDevice::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FabricNetDevice")
            .SetParent<NetDevice>()
            .SetGroupName("GpuFabric")
            .AddConstructor<FabricNetDevice>()
            .AddAttribute(
                "DataRate",
                "Line rate of the transmitter.",
                DataRateValue(DataRate("100Gbps")),
                MakeDataRateAccessor(&FabricNetDevice::SetDataRate, &FabricNetDevice::GetDataRate),
                MakeDataRateChecker())
            .AddAttribute(
                "Mtu",
                "Largest frame in bytes, the 26-byte FabricHeader included "
                "(default: 4096 payload bytes, as RoCE's 4096 MTU).",
                UintegerValue(4096 + FabricHeader::kSerializedSize),
                MakeUintegerAccessor(&FabricNetDevice::SetFrameMtu, &FabricNetDevice::GetFrameMtu),
                MakeUintegerChecker<uint16_t>())
            .AddAttribute(
                "TxQueue",
                "The transmit queue (FIFO).",
                PointerValue(),
                MakePointerAccessor(&FabricNetDevice::SetQueue, &FabricNetDevice::GetQueue),
                MakePointerChecker<Queue<Packet>>())
            .AddAttribute("PfcEnabled",
                          "Send pause/resume frames to the peer (lossless link).",
                          BooleanValue(true),
                          MakeBooleanAccessor(&FabricNetDevice::m_pfcEnabled),
                          MakeBooleanChecker())
            .AddAttribute("PfcXoff",
                          "Bytes received on this port and still buffered in the node at "
                          "which a pause frame is sent.",
                          UintegerValue(128 * 1024),
                          MakeUintegerAccessor(&FabricNetDevice::m_pfcXoff),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("PfcXon",
                          "Buffered bytes at or below which a resume frame is sent.",
                          UintegerValue(96 * 1024),
                          MakeUintegerAccessor(&FabricNetDevice::m_pfcXon),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("EcnThreshold",
                          "Mark packets CE when the transmit queue holds more than this many "
                          "bytes at enqueue (0 disables marking).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&FabricNetDevice::m_ecnThreshold),
                          MakeUintegerChecker<uint32_t>())
            .AddTraceSource("MacTx",
                            "A packet was handed to the device for transmission.",
                            MakeTraceSourceAccessor(&FabricNetDevice::m_macTxTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("MacRx",
                            "A packet was received and handed to the node.",
                            MakeTraceSourceAccessor(&FabricNetDevice::m_macRxTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("Drop",
                            "A packet was dropped: the transmit queue was full, or Send() was "
                            "given a packet larger than the MTU.",
                            MakeTraceSourceAccessor(&FabricNetDevice::m_dropTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("Lost",
                            "A packet was lost: its link went down (queued, offered or on "
                            "the wire) or it arrived corrupted (bit errors).",
                            MakeTraceSourceAccessor(&FabricNetDevice::m_lossTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("LinkState",
                            "The link went up (true) or down (false).",
                            MakeTraceSourceAccessor(&FabricNetDevice::m_linkTrace),
                            "ns3::TracedCallback::Bool")
            .AddTraceSource("PhyTxBegin",
                            "Serialization of a packet began.",
                            MakeTraceSourceAccessor(&FabricNetDevice::m_phyTxBeginTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("PhyTxEnd",
                            "Serialization of a packet ended.",
                            MakeTraceSourceAccessor(&FabricNetDevice::m_phyTxEndTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("Sniffer",
                            "Packets sent or received by this device (non-promiscuous).",
                            MakeTraceSourceAccessor(&FabricNetDevice::m_snifferTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("PromiscSniffer",
                            "Packets sent or received by this device (for pcap).",
                            MakeTraceSourceAccessor(&FabricNetDevice::m_promiscSnifferTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("PfcPause",
                            "This transmitter was paused (true) or resumed (false) by its peer.",
                            MakeTraceSourceAccessor(&FabricNetDevice::m_pfcTrace),
                            "ns3::TracedCallback::Bool")
            .AddTraceSource("QueueBytes",
                            "Bytes in the transmit queue (queue depth).",
                            MakeTraceSourceAccessor(&FabricNetDevice::m_queueBytes),
                            "ns3::TracedValueCallback::Uint32");
    return tid;
}

FabricNetDevice::FabricNetDevice()
    : m_txDone(Create<FabricPrefetchingEvent<FabricNetDevice,
                                             &FabricNetDevice::TransmitComplete,
                                             &FabricNetDevice::PrefetchTransmitComplete>>(this)),
      m_bitRate(DataRate("100Gbps").GetBitRate()),
      m_rate("100Gbps"),
      m_address(Mac48Address::Allocate())
{
    NS_LOG_FUNCTION(this);
    m_macTxTrace.BindMask(&m_traces, kTraceMacTx);
    m_macRxTrace.BindMask(&m_traces, kTraceMacRx);
    m_phyTxBeginTrace.BindMask(&m_traces, kTracePhyTxBegin);
    m_phyTxEndTrace.BindMask(&m_traces, kTracePhyTxEnd);
    m_snifferTrace.BindMask(&m_traces, kTraceSniffer);
    m_promiscSnifferTrace.BindMask(&m_traces, kTracePromiscSniffer);
}

FabricNetDevice::~FabricNetDevice() = default;

void
FabricNetDevice::DoDispose()
{
    m_node = nullptr;
    m_fabricNode = nullptr;
    m_channel = nullptr;
    m_queue = nullptr;
    m_txPacket = nullptr;
    m_queuedFrames.clear();
    m_txDone->Detach();
    m_txReady = TxReadyCallback();
    m_txSource = nullptr;
    m_txCookie = nullptr;
    m_loss = LossCallback();
    m_rxCallback = NetDevice::ReceiveCallback();
    m_promiscCallback = NetDevice::PromiscReceiveCallback();
    m_linkChangeCallbacks = TracedCallback<>();
    m_queueInterface = nullptr;
    m_interfaceQueue = nullptr;
    NetDevice::DoDispose();
}

void
FabricNetDevice::NotifyNewAggregate()
{
    if (!m_queueInterface)
    {
        m_queueInterface = GetObject<NetDeviceQueueInterface>();
        ConnectQueueInterface();
    }
    NetDevice::NotifyNewAggregate();
}

void
FabricNetDevice::ConnectQueueInterface()
{
    // As PointToPointHelper does: the interface's tx queue stops traffic
    // control when the device queue cannot take another MTU and wakes it when
    // it can. Only packets that wait pass through the Queue<Packet> (one that
    // finds the port idle goes straight to the wire), which is all the
    // interface needs to see.
    if (m_queueInterface && m_queue && m_interfaceQueue != PeekPointer(m_queue))
    {
        m_queueInterface->GetTxQueue(0)->ConnectQueueTraces(m_queue);
        m_interfaceQueue = PeekPointer(m_queue);
    }
}

bool
FabricNetDevice::Attach(Ptr<FabricChannel> channel)
{
    m_channel = channel;
    channel->Attach(this);
    EnsureQueue(); // its traces can be connected before the first packet
    return true;
}

void
FabricNetDevice::SetQueue(Ptr<Queue<Packet>> queue)
{
    m_queue = queue;
    if (m_channel)
    {
        EnsureQueue(); // an attached device never goes without a queue
    }
    ConnectQueueInterface();
}

Ptr<Queue<Packet>>
FabricNetDevice::GetQueue() const
{
    return m_queue;
}

void
FabricNetDevice::SetDataRate(DataRate rate)
{
    FabricRequire(rate.GetBitRate() > 0,
                  "FabricNetDevice::DataRate",
                  rate,
                  "a positive rate, e.g. 400Gbps");
    m_rate = rate;
    m_bitRate = rate.GetBitRate();
    m_txTimeBytes = UINT32_MAX; // the cached serialization time is stale
    // GetTxBacklog's time steps per byte (a DataRate's transmission time is
    // a 128-bit division each call)
    m_stepsPerByte = 8.0 * static_cast<double>(Seconds(1).GetTimeStep()) /
                     static_cast<double>(rate.GetBitRate());
}

DataRate
FabricNetDevice::GetDataRate() const
{
    return m_rate;
}

void
FabricNetDevice::SetTxReadyCallback(TxReadyCallback cb)
{
    m_txReady = cb;
    m_txSource = nullptr;
    m_txCookie = nullptr;
}

void
FabricNetDevice::SetTxSource(FabricTxSource* source, void* cookie)
{
    m_txReady = TxReadyCallback();
    m_txSource = source;
    m_txCookie = source != nullptr ? cookie : nullptr;
}

bool
FabricNetDevice::HasTxPull() const
{
    return m_txSource != nullptr || !m_txReady.IsNull();
}

void
FabricNetDevice::NotifyTxReady()
{
    if (m_txSource != nullptr)
    {
        m_txSource->TxReady(this, m_txCookie);
    }
    else if (!m_txReady.IsNull())
    {
        m_txReady(this);
    }
}

void
FabricNetDevice::SetLossCallback(LossCallback cb)
{
    m_loss = cb;
}

void
FabricNetDevice::Lose(Ptr<Packet> p)
{
    m_lossTrace(p);
    if (!m_loss.IsNull())
    {
        m_loss(p, false);
    }
}

void
FabricNetDevice::SetLinkUp(bool up)
{
    if (ChangeLinkState(up))
    {
        NotifyLinkChanged();
    }
}

bool
FabricNetDevice::ChangeLinkState(bool up)
{
    if (up == m_up)
    {
        return false;
    }
    NS_LOG_FUNCTION(this << up);
    m_up = up;
    m_faulted = true;
    ++m_linkEpoch; // frames in flight (data and pause/resume) are lost
    if (m_channel)
    {
        m_channel->RefreshEnds(); // it stamps packets with the receiver's epoch
    }
    m_linkTrace(up);
    if (m_txPaused)
    {
        m_stats.pausedTime += Simulator::Now() - m_pausedSince;
    }
    m_txPaused = false;
    m_peerPaused = false; // pause frames do not survive a link reset
    if (!up)
    {
        // everything queued is lost; the packet being serialized is lost on
        // the wire (the receiver discards it, see LostOnWire)
        while (!m_queuedFrames.empty())
        {
            QueuedFrame frame;
            Ptr<Packet> p = PopQueued(frame);
            if (frame.ingress != nullptr)
            {
                frame.ingress->ReleaseIngress(p->GetSize());
            }
            ++m_stats.lost;
            Lose(p);
        }
    }
    return true;
}

void
FabricNetDevice::NotifyLinkChanged()
{
    m_linkChangeCallbacks(); // the device is in its new state
    if (!m_up)
    {
        return;
    }
    KickTransmitter();
    NotifyTxReady();
}

bool
FabricNetDevice::LostOnWire(uint32_t epoch) const
{
    // down now, or down and up again since it was sent (however briefly)
    return !m_up || epoch != m_linkEpoch;
}

void
FabricNetDevice::SetNvLink(bool nvlink)
{
    m_nvlink = nvlink;
}

bool
FabricNetDevice::IsNvLink() const
{
    return m_nvlink;
}

void
FabricNetDevice::SetPortIndex(uint32_t index)
{
    m_portIndex = index;
}

uint32_t
FabricNetDevice::GetPortIndex() const
{
    return m_portIndex;
}

const FabricNetDevice::Stats&
FabricNetDevice::GetStats() const
{
    return m_stats;
}

uint32_t
FabricNetDevice::GetQueuePackets() const
{
    return m_queuedFrames.size();
}

uint32_t
FabricNetDevice::GetQueueBytes() const
{
    return m_queueBytes;
}

bool
FabricNetDevice::IsTxPaused() const
{
    return m_txPaused;
}

bool
FabricNetDevice::IsTxBusy() const
{
    return Simulator::Now() < m_txEnd;
}

Time
FabricNetDevice::GetTxBacklog() const
{
    const Time now = Simulator::Now();
    const Time wire = m_txEnd > now ? m_txEnd - now : Time(0);
    if (m_queueBytes == 0)
    {
        return wire;
    }
    return wire + TimeStep(static_cast<uint64_t>(
                      std::llround(static_cast<double>(m_queueBytes) * m_stepsPerByte)));
}

bool
FabricNetDevice::Enqueue(const Ptr<Packet>& p, FabricNetDevice* ingress)
{
    // a generic sender: the receiving node parses the header, if it needs one
    return DoEnqueue(p, QueuedFrame{FabricFrameMeta(), ingress});
}

bool
FabricNetDevice::Enqueue(const Ptr<Packet>& p, const FabricHeaderData& h, FabricNetDevice* ingress)
{
    return DoEnqueue(p, QueuedFrame{FabricFrameMeta{h, true}, ingress});
}

bool
FabricNetDevice::DoEnqueue(const Ptr<Packet>& p, const QueuedFrame& queued)
{
    // a programming error, but a clear one rather than a null dereference;
    // an attached device always has its queue (Attach, SetQueue)
    FabricRequire(m_channel != nullptr,
                  "FabricNetDevice channel",
                  "none",
                  "a FabricChannel: Attach() the device before sending");
    if (!m_up)
    {
        ++m_stats.lost;
        Lose(p);
        return false;
    }
    FireIfConnected(m_traces, kTraceMacTx, m_macTxTrace, p);
    const uint32_t size = p->GetSize();
    if (size > m_mtu)
    {
        // Send() refuses such packets and IP fragments to GetMtu(); a larger
        // frame forwarded here means a port's Mtu below the transport's
        // packet size (which follows the GPU ports): a configuration error,
        // not a loss to retransmit 64 times
        throw FabricConfigError(
            "FabricNetDevice::Mtu",
            fmt::format("{} on port {} of node {}", m_mtu, m_portIndex, m_nodeId),
            fmt::format("at least the {}-byte frames forwarded through it (set Mtu on every "
                        "port, e.g. FabricHelper::SetDeviceAttribute)",
                        size));
    }
    if (!m_txPaused && !m_txEventPending && m_queuedFrames.empty())
    {
        const Time now = Simulator::Now();
        if (now >= m_txEnd)
        {
            // The transmitter is idle and nothing waits: the packet goes straight
            // to the wire without entering the queue (it would leave it at once).
            // Its input port is charged and released at once, as if it had.
            if (queued.ingress != nullptr)
            {
                queued.ingress->ChargeIngress(size);
            }
            SendFrame(p, queued, now);
            return true;
        }
    }
    QueuedFrame frame = queued;
    // only a FabricHeader has a CE flag (an IP frame from Send() has none);
    // marked once the queue has taken it, so a dropped packet is no mark
    const bool markCe = m_ecnThreshold != 0 && m_queueBytes > m_ecnThreshold &&
                        (frame.meta.hasHeader || FabricHeader::IsFabricFrame(*p));
    if (!m_queue->Enqueue(p))
    {
        ++m_stats.drops;
        m_dropTrace(p);
        if (!m_loss.IsNull())
        {
            m_loss(p, true);
        }
        return false;
    }
    if (markCe)
    {
        MarkCe(p, frame);
    }
    FabricRingPush(m_queuedFrames, std::move(frame));
    FabricNetDevice* ingress = queued.ingress;
    if (ingress != nullptr)
    {
        ingress->ChargeIngress(size);
    }
    m_queueBytes += size;
    if (m_queueBytes > m_stats.maxQueueBytes)
    {
        m_stats.maxQueueBytes = m_queueBytes;
    }
    KickTransmitter();
    return true;
}

void
FabricNetDevice::EnsureQueue()
{
    if (!m_queue)
    {
        // A port given no queue (a GPU's) still has one: an unbounded enough FIFO.
        m_queue = CreateObject<DropTailQueue<Packet>>();
        m_queue->SetMaxSize(QueueSize("64MB"));
        ConnectQueueInterface();
    }
}

void
FabricNetDevice::KickTransmitter()
{
    // the frame ring mirrors the queue, and reading it is cheaper than
    // Queue<Packet>'s logged accessors
    if (m_txPaused || m_txEventPending || m_queuedFrames.empty())
    {
        return;
    }
    const Time now = Simulator::Now();
    if (now >= m_txEnd)
    {
        StartTransmission(now);
    }
    else
    {
        m_txEventPending = true;
        m_txDone->Schedule(m_nodeId, m_txEnd - now);
    }
}

void
FabricNetDevice::MarkCe(const Ptr<Packet>& p, QueuedFrame& frame)
{
    FabricHeader h;
    p->RemoveHeader(h);
    h.flags |= FabricHeader::kFlagCe;
    p->AddHeader(h);
    frame.meta.header = h; // the copy beside the packet says the same
    frame.meta.hasHeader = true;
    ++m_stats.ecnMarks;
}

Ptr<Packet>
FabricNetDevice::PopQueued(QueuedFrame& frame)
{
    Ptr<Packet> p = m_queue->Dequeue();
    m_queueBytes -= p->GetSize();
    frame = m_queuedFrames.front();
    m_queuedFrames.pop_front();
    return p;
}

void
FabricNetDevice::StartTransmission(Time now)
{
    QueuedFrame frame;
    const Ptr<Packet> p = PopQueued(frame);
    SendFrame(p, frame, now);
}

void
FabricNetDevice::SendFrame(const Ptr<Packet>& p, const QueuedFrame& frame, Time now)
{
    const uint32_t size = p->GetSize();
    if (frame.ingress != nullptr)
    {
        frame.ingress->ReleaseIngress(size);
    }
    if ((m_traces & kTracePhyTxEnd) != 0)
    {
        m_txPacket = p; // kept only for the PhyTxEnd trace
    }
    FireIfConnected(m_traces, kTracePhyTxBegin, m_phyTxBeginTrace, p);
    FireIfConnected(m_traces, kTraceSniffer, m_snifferTrace, p);
    FireIfConnected(m_traces, kTracePromiscSniffer, m_promiscSnifferTrace, p);
    ++m_stats.txPackets;
    m_stats.txBytes += size;
    const Time txTime = SerializationTime(size);
    m_channel->Transmit(p, frame.meta, this, now, txTime);
    m_txEnd = now + txTime;
    // The end of serialization is an event only when something depends on
    // it; otherwise the next Enqueue compares the clock with m_txEnd. This
    // removes about half of the events on uncongested hops.
    if (!m_queuedFrames.empty() || HasTxPull() || (m_traces & kTracePhyTxEnd) != 0)
    {
        m_txEventPending = true;
        m_txDone->Schedule(m_nodeId, txTime);
    }
}

Time
FabricNetDevice::SerializationTime(uint32_t bytes)
{
    // Integer time steps with the remainder carried to the next packet, so
    // that back-to-back packets run at exactly DataRate whatever the time
    // resolution (rounding each packet would bias NVLink rates by ~1%).
    // the rate is cached: DataRate::GetBitRate() is an out-of-line call
    const uint64_t rate = m_bitRate;
    if (bytes != m_txTimeBytes)
    {
        // bytes x 8 x steps per second = base x rate + baseRem; frames are
        // mostly one size, so the 128-bit division runs once per size change
        const auto stepsPerSecond = static_cast<unsigned __int128>(Seconds(1).GetTimeStep());
        const unsigned __int128 num = static_cast<unsigned __int128>(bytes) * 8 * stepsPerSecond;
        m_txTimeBytes = bytes;
        m_txTimeBase = static_cast<uint64_t>(num / rate);
        m_txTimeBaseRem = static_cast<uint64_t>(num % rate);
    }
    // both remainders are below the rate, so their sum carries at most one step
    uint64_t steps = m_txTimeBase;
    uint64_t rem = m_txTimeBaseRem + m_txCarry;
    if (rem >= rate)
    {
        rem -= rate;
        ++steps;
    }
    m_txCarry = rem;
    return TimeStep(steps);
}

void
FabricNetDevice::TransmitComplete()
{
    ++m_stats.serializationEnds;
    m_txEventPending = false;
    if (m_txPacket)
    {
        m_phyTxEndTrace(m_txPacket);
    }
    m_txPacket = nullptr;
    if (!m_txPaused && !m_queuedFrames.empty())
    {
        StartTransmission(Simulator::Now());
    }
    if (m_queuedFrames.size() <= 1 && !m_txPaused)
    {
        NotifyTxReady();
    }
}

void
FabricNetDevice::PrefetchTransmitComplete(uint32_t stage) const
{
    switch (stage)
    {
    case 1:
        PrefetchEnqueue(1);
        break;
    case 2:
    case 3:
        // the frame to send: its ring slot, its input port, the queue's head
        if (!m_queuedFrames.empty())
        {
            const QueuedFrame& front = m_queuedFrames.front();
            if (stage == 2)
            {
                FabricPrefetch(&front, sizeof(QueuedFrame));
            }
            else if (front.ingress != nullptr)
            {
                FabricPrefetch(reinterpret_cast<const char*>(front.ingress) + 32, 32);
            }
        }
        PrefetchQueue(stage - 1);
        if (m_channel)
        {
            m_channel->PrefetchTransmit(m_channelEnd, stage - 1);
        }
        break;
    default:
        PrefetchQueue(stage - 1);
    }
    if (stage > 1 && m_txSource != nullptr)
    {
        // the pull that follows (the source's pointer came in at stage 1)
        m_txSource->PrefetchTxReady(m_txCookie, stage - 1);
    }
}

namespace
{
/// Reads a Queue<Packet>'s container, which ns-3 keeps protected, to
/// prefetch its head (the pointer to member is named through a derived class).
struct QueueContainerPeek : Queue<Packet>
{
    static const auto& Of(const Queue<Packet>& q)
    {
        return (q.*(&QueueContainerPeek::GetContainer))();
    }
};
} // namespace

void
FabricNetDevice::PrefetchQueue(uint32_t stage) const
{
    if (!m_queue)
    {
        return;
    }
    if (stage == 1)
    {
        FabricPrefetch(PeekPointer(m_queue), sizeof(Queue<Packet>));
        return;
    }
    const auto& packets = QueueContainerPeek::Of(*m_queue);
    if (packets.empty())
    {
        return;
    }
    if (stage == 2)
    {
        // the list node: its address is the head's, read from the list
        FabricPrefetch(&packets.front(), sizeof(Ptr<Packet>));
    }
    else if (stage == 3)
    {
        FabricPrefetch(PeekPointer(packets.front()), sizeof(Packet));
    }
}

void
FabricNetDevice::PrefetchEnqueue(uint32_t stage) const
{
    if (stage == 1)
    {
        // the output port's fields and the counters (see the layout note)
        const auto* first = reinterpret_cast<const char*>(this) + 32;
        FabricPrefetch(first, reinterpret_cast<const char*>(&m_stats) + 64 - first);
        return;
    }
    if (m_channel)
    {
        m_channel->PrefetchTransmit(m_channelEnd, stage - 1);
    }
    if (stage == 2 && (m_txEventPending || m_txPaused || !m_queuedFrames.empty()))
    {
        // a busy port queues the frame
        PrefetchQueue(1);
        if (!m_queuedFrames.empty())
        {
            FabricPrefetch(&m_queuedFrames.back(), 2 * sizeof(QueuedFrame));
        }
    }
}

void
FabricNetDevice::PrefetchReceive(uint32_t stage, const FabricFrameMeta& meta) const
{
    if (stage == 1)
    {
        FabricPrefetch(reinterpret_cast<const char*>(this) + 32, 32);
        FabricPrefetch(&m_stats, 64);
    }
    else if (m_fabricNode != nullptr && meta.hasHeader)
    {
        m_fabricNode->PrefetchForward(stage - 1, meta.header);
    }
}

void
FabricNetDevice::ReceiveCorrupted(Ptr<Packet> p, uint32_t epoch)
{
    ++m_stats.arrivals;
    if (m_faulted && LostOnWire(epoch))
    {
        ++m_stats.lost;
    }
    else
    {
        ++m_stats.corrupted;
    }
    Lose(p);
}

void
FabricNetDevice::Receive(const Ptr<Packet>& p, const FabricFrameMeta& meta, uint32_t epoch)
{
    ++m_stats.arrivals;
    if (m_faulted && LostOnWire(epoch))
    {
        ++m_stats.lost;
        Lose(p);
        return;
    }
    ++m_stats.rxPackets;
    m_stats.rxBytes += p->GetSize();
    FireIfConnected(m_traces, kTraceSniffer, m_snifferTrace, p);
    FireIfConnected(m_traces, kTracePromiscSniffer, m_promiscSnifferTrace, p);
    FireIfConnected(m_traces, kTraceMacRx, m_macRxTrace, p);
    if (m_fabricNode != nullptr)
    {
        m_fabricNode->ReceiveFromPort(this, p, meta.hasHeader ? &meta.header : nullptr);
        return;
    }
    ReceiveOnPlainNode(p);
}

void
FabricNetDevice::ReceiveOnPlainNode(const Ptr<Packet>& p)
{
    // the standard callbacks, with the protocol number and addresses of the
    // frame's Ethernet II header (a fabric frame's too: EtherType 0x88B5)
    if (p->GetSize() < kEthernetHeaderBytes)
    {
        NS_LOG_WARN("frame of " << p->GetSize() << " bytes has no Ethernet II header");
        ++m_stats.corrupted;
        Lose(p);
        return;
    }
    EthernetHeader eth(false);
    p->RemoveHeader(eth);
    // point to point: every frame on the link is for this end (a fabric
    // frame's MACs carry ranks, not this device's address)
    const Mac48Address to = eth.GetDestination();
    NetDevice::PacketType type = NetDevice::PACKET_HOST;
    if (to.IsBroadcast())
    {
        type = NetDevice::PACKET_BROADCAST;
    }
    else if (to.IsGroup())
    {
        type = NetDevice::PACKET_MULTICAST;
    }
    if (!m_promiscCallback.IsNull())
    {
        m_promiscCallback(this, p, eth.GetLengthType(), eth.GetSource(), to, type);
    }
    if (!m_rxCallback.IsNull())
    {
        m_rxCallback(this, p, eth.GetLengthType(), eth.GetSource());
    }
}

void
FabricNetDevice::ChargeIngress(uint32_t bytes)
{
    m_ingressBytes += bytes;
    if (m_pfcEnabled && !m_peerPaused && m_ingressBytes >= m_pfcXoff)
    {
        m_peerPaused = true;
        ++m_stats.pausesSent;
        m_channel->SendFlowControl(this, true);
    }
}

void
FabricNetDevice::ReleaseIngress(uint32_t bytes)
{
    m_ingressBytes -= bytes;
    if (m_peerPaused && m_ingressBytes <= m_pfcXon)
    {
        m_peerPaused = false;
        m_channel->SendFlowControl(this, false);
    }
}

void
FabricNetDevice::ReceiveFlowControl(bool pause, uint32_t epoch)
{
    ++m_stats.flowControlFrames;
    if (LostOnWire(epoch))
    {
        // lost with the link: a pause from before a reset would otherwise
        // stop this transmitter for good (its sender forgot it and will
        // never resume)
        return;
    }
    m_pfcTrace(pause);
    if (pause)
    {
        ++m_stats.pausesRecv;
        if (!m_txPaused)
        {
            m_pausedSince = Simulator::Now();
        }
        m_txPaused = true;
        return;
    }
    if (m_txPaused)
    {
        m_stats.pausedTime += Simulator::Now() - m_pausedSince;
    }
    m_txPaused = false;
    KickTransmitter();
    if (m_queuedFrames.size() <= 1)
    {
        NotifyTxReady();
    }
}

void
FabricNetDevice::SetIfIndex(const uint32_t index)
{
    m_ifIndex = index;
}

uint32_t
FabricNetDevice::GetIfIndex() const
{
    return m_ifIndex;
}

Ptr<Channel>
FabricNetDevice::GetChannel() const
{
    return m_channel;
}

void
FabricNetDevice::SetAddress(Address address)
{
    m_address = Mac48Address::ConvertFrom(address);
}

Address
FabricNetDevice::GetAddress() const
{
    return m_address;
}

void
FabricNetDevice::SetFrameMtu(uint16_t mtu)
{
    FabricRequire(mtu > FabricHeader::kSerializedSize,
                  "FabricNetDevice::Mtu",
                  mtu,
                  fmt::format("{} to {} bytes (a frame is more than its {}-byte FabricHeader)",
                              FabricHeader::kSerializedSize + 1,
                              UINT16_MAX,
                              FabricHeader::kSerializedSize));
    m_mtu = mtu;
}

uint16_t
FabricNetDevice::GetFrameMtu() const
{
    return m_mtu;
}

bool
FabricNetDevice::SetMtu(const uint16_t mtu)
{
    // the ns-3 MTU excludes the link header (see the class doc)
    constexpr uint32_t kSmallest = FabricHeader::kSerializedSize + 1 - kEthernetHeaderBytes;
    constexpr uint32_t kLargest = UINT16_MAX - kEthernetHeaderBytes;
    FabricRequire(mtu >= kSmallest && mtu <= kLargest,
                  "FabricNetDevice MTU (NetDevice::SetMtu)",
                  mtu,
                  fmt::format("{} to {}: frames add a {}-byte Ethernet II header and must be "
                              "longer than the {}-byte FabricHeader",
                              kSmallest,
                              kLargest,
                              kEthernetHeaderBytes,
                              FabricHeader::kSerializedSize));
    SetFrameMtu(static_cast<uint16_t>(mtu + kEthernetHeaderBytes));
    return true;
}

uint16_t
FabricNetDevice::GetMtu() const
{
    return m_mtu - kEthernetHeaderBytes;
}

bool
FabricNetDevice::IsLinkUp() const
{
    return m_channel != nullptr && m_up;
}

void
FabricNetDevice::AddLinkChangeCallback(Callback<void> callback)
{
    m_linkChangeCallbacks.ConnectWithoutContext(callback);
}

bool
FabricNetDevice::IsBroadcast() const
{
    return true; // a frame to the broadcast address reaches the peer
}

Address
FabricNetDevice::GetBroadcast() const
{
    return Mac48Address::GetBroadcast();
}

bool
FabricNetDevice::IsMulticast() const
{
    return false;
}

Address
FabricNetDevice::GetMulticast(Ipv4Address /* multicastGroup */) const
{
    return Mac48Address::GetMulticast(Ipv4Address("224.0.0.0"));
}

Address
FabricNetDevice::GetMulticast(Ipv6Address addr) const
{
    return Mac48Address::GetMulticast(addr);
}

bool
FabricNetDevice::IsPointToPoint() const
{
    return true;
}

bool
FabricNetDevice::IsBridge() const
{
    return false;
}

bool
FabricNetDevice::Send(Ptr<Packet> packet, const Address& dest, uint16_t protocol)
{
    // A generic ns-3 sender (an Internet stack, say): frame the packet as
    // Ethernet II, so that the receiver learns the protocol and the sender
    // from the bytes, the wire carries the framing and PCAP shows it.
    if (packet->GetSize() > GetMtu())
    {
        NS_LOG_WARN("packet of " << packet->GetSize() << " bytes exceeds the MTU " << GetMtu());
        ++m_stats.drops;
        m_dropTrace(packet);
        return false;
    }
    EthernetHeader eth(false);
    eth.SetSource(m_address);
    eth.SetDestination(DestinationMac(dest));
    eth.SetLengthType(protocol);
    packet->AddHeader(eth);
    return DoEnqueue(packet, QueuedFrame{FabricFrameMeta(), nullptr});
}

Mac48Address
FabricNetDevice::DestinationMac(const Address& dest) const
{
    if (Mac48Address::IsMatchingType(dest))
    {
        return Mac48Address::ConvertFrom(dest);
    }
    // point to point: a destination that is no MAC address means the peer
    Ptr<FabricNetDevice> peer = m_channel ? m_channel->GetPeer(this) : nullptr;
    return peer ? peer->m_address : Mac48Address::GetBroadcast();
}

bool
FabricNetDevice::SendFrom(Ptr<Packet> packet,
                          const Address& /* source */,
                          const Address& dest,
                          uint16_t protocol)
{
    return Send(packet, dest, protocol);
}

Ptr<Node>
FabricNetDevice::GetNode() const
{
    return m_node;
}

void
FabricNetDevice::SetNode(Ptr<Node> node)
{
    m_node = node;
    m_nodeId = node->GetId();
    m_fabricNode = dynamic_cast<FabricNode*>(PeekPointer(node));
    if (m_channel)
    {
        m_channel->RefreshEnds(); // it schedules arrivals in our node's context
    }
}

bool
FabricNetDevice::NeedsArp() const
{
    return false;
}

void
FabricNetDevice::SetReceiveCallback(NetDevice::ReceiveCallback cb)
{
    m_rxCallback = cb;
}

void
FabricNetDevice::SetPromiscReceiveCallback(PromiscReceiveCallback cb)
{
    m_promiscCallback = cb;
}

bool
FabricNetDevice::SupportsSendFrom() const
{
    return false;
}

} // namespace ns3
