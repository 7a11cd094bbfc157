/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-net-device.h"

#include "fabric-channel.h"
#include "fabric-distributed.h"
#include "fabric-header.h"
#include "fabric-internal.h"
#include "fabric-node.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/error-model.h"
#include "ns3/ethernet-header.h"
#include "ns3/fabric-error.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/pointer.h"
#include "ns3/random-variable-stream.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <cstddef>
#include <type_traits>

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
                          MakeBooleanAccessor(&FabricNetDevice::SetPfcEnabled,
                                              &FabricNetDevice::GetPfcEnabled),
                          MakeBooleanChecker())
            .AddAttribute(
                "PfcXoff",
                "Bytes received on this port and still buffered in the node at "
                "which a pause frame is sent.",
                UintegerValue(128 * 1024),
                MakeUintegerAccessor(&FabricNetDevice::SetPfcXoff, &FabricNetDevice::GetPfcXoff),
                MakeUintegerChecker<uint32_t>(1))
            .AddAttribute(
                "PfcXon",
                "Buffered bytes at or below which a resume frame is sent.",
                UintegerValue(96 * 1024),
                MakeUintegerAccessor(&FabricNetDevice::SetPfcXon, &FabricNetDevice::GetPfcXon),
                MakeUintegerChecker<uint32_t>())
            .AddAttribute("EcnThreshold",
                          "Mark packets CE when the transmit queue holds more than this many "
                          "bytes at enqueue (0 disables marking).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&FabricNetDevice::SetEcnThreshold,
                                               &FabricNetDevice::GetEcnThreshold),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute(
                "EcnKmin",
                "RED-style marking (as DCQCN deployments set it): a data frame "
                "entering a transmit queue of at most this many bytes is never "
                "marked CE.",
                UintegerValue(0),
                MakeUintegerAccessor(&FabricNetDevice::SetEcnKmin, &FabricNetDevice::GetEcnKmin),
                MakeUintegerChecker<uint32_t>())
            .AddAttribute(
                "EcnKmax",
                "RED-style marking: above this many queued bytes every data frame is "
                "marked CE; between EcnKmin and EcnKmax with probability rising "
                "linearly to EcnPmax (0 disables RED marking).",
                UintegerValue(0),
                MakeUintegerAccessor(&FabricNetDevice::SetEcnKmax, &FabricNetDevice::GetEcnKmax),
                MakeUintegerChecker<uint32_t>())
            .AddAttribute(
                "EcnPmax",
                "RED-style marking: the marking probability at EcnKmax, in [0, 1].",
                DoubleValue(0),
                MakeDoubleAccessor(&FabricNetDevice::SetEcnPmax, &FabricNetDevice::GetEcnPmax),
                MakeDoubleChecker<double>())
            .AddAttribute("IntEnabled",
                          "Append a hop of in-band telemetry (FabricIntHeader) to each data "
                          "frame that carries one as it leaves (switch ports; FabricSwitch sets "
                          "it).",
                          BooleanValue(false),
                          MakeBooleanAccessor(&FabricNetDevice::SetIntEnabled,
                                              &FabricNetDevice::GetIntEnabled),
                          MakeBooleanChecker())
            .AddAttribute("ReceiveErrorModel",
                          "The error model that decides which arriving frames are corrupt "
                          "(discarded, PhyRxDrop and Lost traces, reported as lost); none by "
                          "default. FabricChannel's BitErrorRate sets one on both ends.",
                          PointerValue(),
                          MakePointerAccessor(&FabricNetDevice::SetReceiveErrorModel,
                                              &FabricNetDevice::GetReceiveErrorModel),
                          MakePointerChecker<ErrorModel>())
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
                            "the wire) or the ReceiveErrorModel found it corrupt.",
                            MakeTraceSourceAccessor(&FabricNetDevice::m_lossTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("PhyRxDrop",
                            "The ReceiveErrorModel found an arriving frame corrupt; it is "
                            "discarded.",
                            MakeTraceSourceAccessor(&FabricNetDevice::m_phyRxDropTrace),
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
                            MakeTraceSourceAccessor(&FabricNetDevice::m_queueBytesTrace),
                            "ns3::TracedValueCallback::Uint32");
    return tid;
}

FabricNetDevice::FabricNetDevice()
    : m_rate("100Gbps"),
      m_address(Mac48Address::Allocate())
{
    NS_LOG_FUNCTION(this);
    m_port.txDone =
        Create<FabricPrefetchingEvent<FabricNetDevice,
                                      &FabricNetDevice::TransmitComplete,
                                      &FabricDataPlane::PrefetchTransmitComplete>>(this);
    m_port.bitRate = m_rate.GetBitRate();
    m_macTxTrace.BindMask(&m_port.traces, kTraceMacTx);
    m_macRxTrace.BindMask(&m_port.traces, kTraceMacRx);
    m_phyTxBeginTrace.BindMask(&m_port.traces, kTracePhyTxBegin);
    m_phyTxEndTrace.BindMask(&m_port.traces, kTracePhyTxEnd);
    m_snifferTrace.BindMask(&m_port.traces, kTraceSniffer);
    m_promiscSnifferTrace.BindMask(&m_port.traces, kTracePromiscSniffer);
    m_queueBytesTrace.BindMask(&m_port.traces, kTraceQueueBytes);
}

FabricNetDevice::~FabricNetDevice() = default;

void
FabricNetDevice::DoDispose()
{
    m_node = nullptr;
    m_port.fabricNode = nullptr;
    m_port.channel = nullptr;
    m_port.queue = nullptr;
    m_port.txPacket = nullptr;
    m_port.queuedFrames.clear();
    m_control.clear();
    m_port.controlQueued = 0;
    m_ecnRandom = nullptr;
    m_port.txDone->Detach();
    m_port.txSource = nullptr;
    m_port.txCookie = nullptr;
    m_port.txPrefetch = nullptr;
    m_loss = LossCallback();
    m_remoteTransport = Callback<void, Ptr<Packet>>();
    m_receiveErrorModel = nullptr;
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
    if (m_queueInterface && m_port.queue && m_interfaceQueue != PeekPointer(m_port.queue))
    {
        m_queueInterface->GetTxQueue(0)->ConnectQueueTraces(m_port.queue);
        m_interfaceQueue = PeekPointer(m_port.queue);
    }
}

bool
FabricNetDevice::Attach(Ptr<FabricChannel> channel)
{
    m_port.channel = channel;
    channel->Attach(this);
    EnsureQueue(); // its traces can be connected before the first packet
    return true;
}

void
FabricNetDevice::SetQueue(Ptr<Queue<Packet>> queue)
{
    m_port.queue = queue;
    if (m_port.channel)
    {
        EnsureQueue(); // an attached device never goes without a queue
    }
    ConnectQueueInterface();
}

Ptr<Queue<Packet>>
FabricNetDevice::GetQueue() const
{
    return m_port.queue;
}

void
FabricNetDevice::SetDataRate(DataRate rate)
{
    FabricRequire(rate.GetBitRate() > 0,
                  "FabricNetDevice::DataRate",
                  rate,
                  "a positive rate, e.g. 400Gbps");
    m_rate = rate;
    m_port.bitRate = rate.GetBitRate();
    m_port.txTimeBytes = UINT32_MAX; // the cached serialization time is stale
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
FabricNetDevice::SetTxSource(FabricTxSource* source, void* cookie)
{
    m_port.txSource = source;
    m_port.txCookie = source != nullptr ? cookie : nullptr;
    // asked once here, not per pull
    m_port.txPrefetch = dynamic_cast<const FabricPrefetchingTxSource*>(source);
}

void
FabricNetDevice::NotifyTxReady()
{
    if (m_port.txSource != nullptr)
    {
        m_port.txSource->TxReady(this, m_port.txCookie);
    }
}

void
FabricNetDevice::SetReceiveErrorModel(Ptr<ErrorModel> em)
{
    m_receiveErrorModel = em;
    // an arrival looks at the model only while this bit is set
    m_port.rxChecks = em ? (m_port.rxChecks | kRxCheckErrors) : (m_port.rxChecks & ~kRxCheckErrors);
}

Ptr<ErrorModel>
FabricNetDevice::GetReceiveErrorModel() const
{
    return m_receiveErrorModel;
}

void
FabricNetDevice::SetPfcEnabled(bool enabled)
{
    m_port.pfcEnabled = enabled;
}

bool
FabricNetDevice::GetPfcEnabled() const
{
    return m_port.pfcEnabled;
}

void
FabricNetDevice::SetPfcXoff(uint32_t bytes)
{
    m_port.pfcXoff = bytes;
}

uint32_t
FabricNetDevice::GetPfcXoff() const
{
    return m_port.pfcXoff;
}

void
FabricNetDevice::SetPfcXon(uint32_t bytes)
{
    m_port.pfcXon = bytes;
}

uint32_t
FabricNetDevice::GetPfcXon() const
{
    return m_port.pfcXon;
}

void
FabricNetDevice::SetEcnThreshold(uint32_t bytes)
{
    m_port.ecnThreshold = bytes;
}

uint32_t
FabricNetDevice::GetEcnThreshold() const
{
    return m_port.ecnThreshold;
}

void
FabricNetDevice::SetIntEnabled(bool enabled)
{
    m_port.intEnabled = enabled;
}

bool
FabricNetDevice::GetIntEnabled() const
{
    return m_port.intEnabled;
}

void
FabricNetDevice::SetEcnKmin(uint32_t bytes)
{
    m_port.ecnKmin = bytes;
}

uint32_t
FabricNetDevice::GetEcnKmin() const
{
    return m_port.ecnKmin;
}

void
FabricNetDevice::SetEcnKmax(uint32_t bytes)
{
    m_port.ecnKmax = bytes;
}

uint32_t
FabricNetDevice::GetEcnKmax() const
{
    return m_port.ecnKmax;
}

void
FabricNetDevice::SetEcnPmax(double p)
{
    // a probability: NaN fails both comparisons and is refused too
    FabricRequire(p >= 0 && p <= 1, "FabricNetDevice::EcnPmax", p, "a probability in [0, 1]");
    m_port.ecnPmax = p;
}

double
FabricNetDevice::GetEcnPmax() const
{
    return m_port.ecnPmax;
}

bool
FabricNetDevice::EcnMarks(uint32_t queued)
{
    if (m_port.ecnThreshold != 0 && queued > m_port.ecnThreshold)
    {
        return true;
    }
    if (m_port.ecnKmax == 0 || queued <= m_port.ecnKmin)
    {
        return false;
    }
    FabricRequire(m_port.ecnKmin <= m_port.ecnKmax,
                  "FabricNetDevice::EcnKmin",
                  m_port.ecnKmin,
                  fmt::format("at most EcnKmax ({})", m_port.ecnKmax));
    if (queued > m_port.ecnKmax)
    {
        return true;
    }
    if (!m_ecnRandom)
    {
        m_ecnRandom = CreateObject<UniformRandomVariable>();
        if (m_ecnStream >= 0)
        {
            m_ecnRandom->SetStream(m_ecnStream);
        }
    }
    const double p = m_port.ecnPmax * (queued - m_port.ecnKmin) /
                     static_cast<double>(m_port.ecnKmax - m_port.ecnKmin);
    return m_ecnRandom->GetValue() < p;
}

int64_t
FabricNetDevice::AssignStreams(int64_t stream)
{
    m_ecnStream = stream;
    if (m_ecnRandom)
    {
        m_ecnRandom->SetStream(stream);
    }
    return 1;
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
    if (up == m_port.up)
    {
        return false;
    }
    NS_LOG_FUNCTION(this << up);
    m_port.up = up;
    m_port.rxChecks |= kRxCheckEpoch;
    ++m_port.linkEpoch; // frames in flight (data and pause/resume) are lost
    if (m_port.channel)
    {
        m_port.channel->RefreshEnds(); // it stamps packets with the receiver's epoch
    }
    m_linkTrace(up);
    if (m_port.txPaused)
    {
        m_port.stats.pausedTime += Simulator::Now() - m_pausedSince;
    }
    m_port.txPaused = false;
    m_port.peerPaused = false; // pause frames do not survive a link reset
    if (!up)
    {
        // everything queued is lost; the packet being serialized is lost on
        // the wire (the receiver discards it, see LostOnWire)
        while (!m_port.queuedFrames.empty())
        {
            QueuedFrame frame;
            Ptr<Packet> p = PopQueued(frame);
            if (frame.ingress != nullptr)
            {
                frame.ingress->ReleaseIngress(p->GetSize());
            }
            ++m_port.stats.lost;
            Lose(p);
        }
        while (!m_control.empty())
        {
            const Ptr<Packet> p = m_control.front().first;
            m_control.pop_front();
            ++m_port.stats.lost;
            Lose(p);
        }
        m_port.controlQueued = 0;
        if (m_port.txSource != nullptr)
        {
            m_port.txSource->DropRelays(this, m_port.txCookie);
        }
    }
    return true;
}

void
FabricNetDevice::NotifyLinkChanged()
{
    m_linkChangeCallbacks(); // the device is in its new state
    if (!m_port.up)
    {
        return;
    }
    KickTransmitter();
    NotifyTxReady();
}

uint32_t
FabricNetDevice::GetNodeId() const
{
    return m_port.nodeId;
}

uint32_t
FabricNetDevice::GetLinkEpoch() const
{
    return m_port.linkEpoch;
}

bool
FabricNetDevice::LostOnWire(uint32_t epoch) const
{
    // down now, or down and up again since it was sent (however briefly)
    return !m_port.up || epoch != m_port.linkEpoch;
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
    m_port.portIndex = index;
}

uint32_t
FabricNetDevice::GetPortIndex() const
{
    return m_port.portIndex;
}

const FabricNetDevice::Stats&
FabricNetDevice::GetStats() const
{
    return m_port.stats;
}

uint32_t
FabricNetDevice::GetQueuePackets() const
{
    return m_port.queuedFrames.size();
}

uint32_t
FabricNetDevice::GetQueueBytes() const
{
    return m_port.queueBytes;
}

bool
FabricNetDevice::IsTxPaused() const
{
    return m_port.txPaused;
}

bool
FabricNetDevice::IsTxBusy() const
{
    return Simulator::Now() < m_port.txEnd;
}

Time
FabricNetDevice::GetTxBacklog() const
{
    const Time now = Simulator::Now();
    const Time wire = m_port.txEnd > now ? m_port.txEnd - now : Time(0);
    if (m_port.queueBytes == 0)
    {
        return wire;
    }
    return wire + TimeStep(static_cast<uint64_t>(
                      std::llround(static_cast<double>(m_port.queueBytes) * m_stepsPerByte)));
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
FabricNetDevice::EnqueueRelayed(const Ptr<Packet>& p,
                                const FabricHeaderData& h,
                                FabricNetDevice* ingress,
                                uint32_t chargedBytes)
{
    if (chargedBytes != 0 && ingress != nullptr && p->GetSize() > chargedBytes)
    {
        ingress->ChargeIngress(p->GetSize() - chargedBytes); // released whole when it leaves
    }
    return DoEnqueue(p, QueuedFrame{FabricFrameMeta{h, true}, ingress}, true);
}

bool
FabricNetDevice::DoEnqueue(const Ptr<Packet>& p, const QueuedFrame& queued, bool charged)
{
    // a programming error, but a clear one rather than a null dereference;
    // an attached device always has its queue (Attach, SetQueue)
    FabricRequire(m_port.channel != nullptr,
                  "FabricNetDevice channel",
                  "none",
                  "a FabricChannel: Attach() the device before sending");
    if (!m_port.up)
    {
        if (charged)
        {
            queued.ingress->ReleaseIngress(p->GetSize());
        }
        ++m_port.stats.lost;
        Lose(p);
        return false;
    }
    // ACKs and CNPs: the control class, ahead of data and never paused
    if (queued.meta.hasHeader && (queued.meta.header.flags & FabricHeader::kControlFlags) != 0)
    {
        return EnqueueControl(p, queued.meta);
    }
    // a GPU relaying another's packet: its source may serve it in turn with
    // its own connections, as a NIC its queue pairs (TakeRelay)
    if (!charged && queued.ingress != nullptr && m_port.txSource != nullptr &&
        queued.meta.hasHeader &&
        m_port.txSource->TakeRelay(this, m_port.txCookie, p, queued.meta.header, queued.ingress))
    {
        queued.ingress->ChargeIngress(p->GetSize());
        return true;
    }
    FireIfConnected(m_port.traces, kTraceMacTx, m_macTxTrace, p);
    const uint32_t size = p->GetSize();
    if (size > m_port.mtu)
    {
        // Send() refuses such packets and IP fragments to GetMtu(); a larger
        // frame forwarded here means a port's Mtu below the transport's
        // packet size (which follows the GPU ports): a configuration error,
        // not a loss to retransmit 64 times
        throw FabricConfigError(
            "FabricNetDevice::Mtu",
            fmt::format("{} on port {} of node {}", m_port.mtu, m_port.portIndex, m_port.nodeId),
            fmt::format("at least the {}-byte frames forwarded through it (set Mtu on every "
                        "port, e.g. FabricHelper::SetDeviceAttribute)",
                        size));
    }
    if (!m_port.txPaused && !m_port.txEventPending && m_port.queuedFrames.empty())
    {
        const Time now = Simulator::Now();
        if (now >= m_port.txEnd)
        {
            // The transmitter is idle and nothing waits: the packet goes straight
            // to the wire without entering the queue (it would leave it at once).
            // Its input port is charged and released at once, as if it had.
            if (queued.ingress != nullptr && !charged)
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
    const bool markCe = (m_port.ecnThreshold != 0 || m_port.ecnKmax != 0) &&
                        (frame.meta.hasHeader || FabricHeader::IsFabricFrame(*p)) &&
                        EcnMarks(m_port.queueBytes);
    if (!m_port.queue->Enqueue(p))
    {
        if (charged)
        {
            queued.ingress->ReleaseIngress(size);
        }
        ++m_port.stats.drops;
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
    FabricRingPush(m_port.queuedFrames, std::move(frame));
    FabricNetDevice* ingress = queued.ingress;
    if (ingress != nullptr && !charged)
    {
        ingress->ChargeIngress(size);
    }
    SetQueueBytes(m_port.queueBytes + size);
    if (m_port.queueBytes > m_port.stats.maxQueueBytes)
    {
        m_port.stats.maxQueueBytes = m_port.queueBytes;
    }
    KickTransmitter();
    return true;
}

bool
FabricNetDevice::EnqueueControl(const Ptr<Packet>& p, const FabricFrameMeta& meta)
{
    const Time now = Simulator::Now();
    if (!m_port.txEventPending && now >= m_port.txEnd)
    {
        SendFrame(p, QueuedFrame{meta, nullptr}, now);
        return true;
    }
    m_control.emplace_back(p, meta);
    ++m_port.controlQueued;
    KickTransmitter();
    return true;
}

void
FabricNetDevice::EnsureQueue()
{
    if (!m_port.queue)
    {
        // A port given no queue (a GPU's) still has one: an unbounded enough FIFO.
        m_port.queue = CreateObject<DropTailQueue<Packet>>();
        m_port.queue->SetMaxSize(QueueSize("64MB"));
        ConnectQueueInterface();
    }
}

void
FabricNetDevice::KickTransmitter()
{
    // the frame ring mirrors the queue, and reading it is cheaper than
    // Queue<Packet>'s logged accessors
    if (m_port.txEventPending ||
        ((m_port.txPaused || m_port.queuedFrames.empty()) && m_port.controlQueued == 0))
    {
        return;
    }
    const Time now = Simulator::Now();
    if (now >= m_port.txEnd)
    {
        StartTransmission(now);
    }
    else
    {
        m_port.txEventPending = true;
        m_port.txDone->Schedule(m_port.nodeId, m_port.txEnd - now);
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
    ++m_port.stats.ecnMarks;
}

void
FabricNetDevice::SetQueueBytes(uint32_t bytes)
{
    const uint32_t old = m_port.queueBytes;
    m_port.queueBytes = bytes;
    // as a TracedValue: fired when the value changes
    if ((m_port.traces & kTraceQueueBytes) != 0 && old != bytes)
    {
        m_queueBytesTrace(old, bytes);
    }
}

Ptr<Packet>
FabricNetDevice::PopQueued(QueuedFrame& frame)
{
    Ptr<Packet> p = m_port.queue->Dequeue();
    SetQueueBytes(m_port.queueBytes - p->GetSize());
    frame = m_port.queuedFrames.front();
    m_port.queuedFrames.pop_front();
    return p;
}

void
FabricNetDevice::StartTransmission(Time now)
{
    if (m_port.controlQueued != 0)
    {
        // strict priority: control frames first
        auto [p, meta] = std::move(m_control.front());
        m_control.pop_front();
        --m_port.controlQueued;
        SendFrame(p, QueuedFrame{meta, nullptr}, now);
        return;
    }
    QueuedFrame frame;
    const Ptr<Packet> p = PopQueued(frame);
    SendFrame(p, frame, now);
}

void
FabricNetDevice::SendFrame(const Ptr<Packet>& p, const QueuedFrame& frame, Time now)
{
    uint32_t size = p->GetSize();
    if (frame.ingress != nullptr)
    {
        frame.ingress->ReleaseIngress(size); // what it was charged
    }
    // INT goes on data frames only (an ACK carries its data packet's records)
    if (m_port.intEnabled && frame.meta.hasHeader &&
        (frame.meta.header.flags & (FabricHeader::kFlagInt | FabricHeader::kControlFlags)) ==
            FabricHeader::kFlagInt)
    {
        AppendIntHop(p, now);
        size = p->GetSize();
    }
    if ((m_port.traces & kTracePhyTxEnd) != 0)
    {
        m_port.txPacket = p; // kept only for the PhyTxEnd trace
    }
    FireIfConnected(m_port.traces, kTracePhyTxBegin, m_phyTxBeginTrace, p);
    FireIfConnected(m_port.traces, kTraceSniffer, m_snifferTrace, p);
    FireIfConnected(m_port.traces, kTracePromiscSniffer, m_promiscSnifferTrace, p);
    ++m_port.stats.txPackets;
    m_port.stats.txBytes += size;
    if (frame.meta.hasHeader && (frame.meta.header.flags & FabricHeader::kControlFlags) != 0)
    {
        ++m_port.stats.controlPackets;
    }
    const Time txTime = SerializationTime(size);
    m_port.channel->Transmit(p, frame.meta, this, now, txTime);
    m_port.txEnd = now + txTime;
    // The end of serialization is an event only when something depends on
    // it; otherwise the next Enqueue compares the clock with m_port.txEnd. This
    // removes about half of the events on uncongested hops.
    if (!m_port.queuedFrames.empty() || m_port.txSource != nullptr ||
        (m_port.traces & kTracePhyTxEnd) != 0 || m_port.controlQueued != 0)
    {
        m_port.txEventPending = true;
        m_port.txDone->Schedule(m_port.nodeId, txTime);
    }
}

void
FabricNetDevice::AppendIntHop(const Ptr<Packet>& p, Time now)
{
    // HPCC's INT: this egress's queue as the packet leaves, its rate, and
    // its transmitted bytes and clock (both modulo 2^32)
    FabricHeader h;
    p->RemoveHeader(h);
    FabricIntHeader telemetry;
    p->RemoveHeader(telemetry);
    if (telemetry.nHops < FabricIntHeader::kMaxHops)
    {
        FabricIntHeader::Hop& hop = telemetry.hops[telemetry.nHops++];
        hop.queueBytes = m_port.queueBytes;
        hop.rateMbps = static_cast<uint32_t>(m_port.bitRate / 1'000'000);
        hop.txBytes = static_cast<uint32_t>(m_port.stats.txBytes);
        hop.timeNs = static_cast<uint32_t>(now.GetNanoSeconds());
        hop.port = (m_port.nodeId << 16) + m_port.portIndex;
    }
    p->AddHeader(telemetry);
    p->AddHeader(h);
}

Time
FabricNetDevice::SerializationTime(uint32_t bytes)
{
    // Integer time steps with the remainder carried to the next packet, so
    // that back-to-back packets run at exactly DataRate whatever the time
    // resolution (rounding each packet would bias NVLink rates by ~1%).
    // the rate is cached: DataRate::GetBitRate() is an out-of-line call
    const uint64_t rate = m_port.bitRate;
    if (bytes != m_port.txTimeBytes)
    {
        // bytes x 8 x steps per second = base x rate + baseRem; frames are
        // mostly one size, so the 128-bit division runs once per size change
        const auto stepsPerSecond = static_cast<unsigned __int128>(Seconds(1).GetTimeStep());
        const unsigned __int128 num = static_cast<unsigned __int128>(bytes) * 8 * stepsPerSecond;
        m_port.txTimeBytes = bytes;
        m_port.txTimeBase = static_cast<uint64_t>(num / rate);
        m_port.txTimeBaseRem = static_cast<uint64_t>(num % rate);
    }
    // both remainders are below the rate, so their sum carries at most one step
    uint64_t steps = m_port.txTimeBase;
    uint64_t rem = m_port.txTimeBaseRem + m_port.txCarry;
    if (rem >= rate)
    {
        rem -= rate;
        ++steps;
    }
    m_port.txCarry = rem;
    return TimeStep(steps);
}

void
FabricNetDevice::TransmitComplete()
{
    ++m_port.stats.serializationEnds;
    m_port.txEventPending = false;
    if (m_port.txPacket)
    {
        m_phyTxEndTrace(m_port.txPacket);
    }
    m_port.txPacket = nullptr;
    if (m_port.controlQueued != 0 || (!m_port.txPaused && !m_port.queuedFrames.empty()))
    {
        StartTransmission(Simulator::Now());
    }
    if (m_port.queuedFrames.size() <= 1 && !m_port.txPaused)
    {
        NotifyTxReady();
    }
}

// The prefetch hooks read the port's fields in the ranges Port's offsets
// give: what the input side reads, all of it, and the counters of every hop.
static_assert(std::is_standard_layout_v<FabricNetDevice::Stats>,
              "the hop counters' range is taken with offsetof");

namespace
{
/// Bytes of Stats that every hop updates (the counters before drops).
constexpr std::size_t kHopStatsBytes = offsetof(FabricNetDevice::Stats, drops);

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
FabricDataPlane::PrefetchTransmitComplete(const FabricNetDevice& port, uint32_t stage)
{
    using QueuedFrame = FabricNetDevice::QueuedFrame;
    static_assert(std::is_standard_layout_v<FabricNetDevice::Port>,
                  "the port's prefetch ranges are taken with offsetof");
    const FabricNetDevice::Port& d = port.m_port;
    switch (stage)
    {
    case 1:
        PrefetchEnqueue(port, 1);
        break;
    case 2:
    case 3:
        // the frame to send: its ring slot, its input port, the queue's head
        if (!d.queuedFrames.empty())
        {
            const QueuedFrame& front = d.queuedFrames.front();
            if (stage == 2)
            {
                FabricPrefetchObject(front);
            }
            else if (front.ingress != nullptr)
            {
                // what releasing its charge reads: the input side's fields
                FabricPrefetch(&front.ingress->m_port,
                               offsetof(FabricNetDevice::Port, queuedFrames));
            }
        }
        PrefetchQueue(port, stage - 1);
        if (d.channel)
        {
            PrefetchTransmit(*d.channel, d.channelEnd, stage - 1);
        }
        break;
    default:
        PrefetchQueue(port, stage - 1);
    }
    if (stage > 1 && d.txPrefetch != nullptr)
    {
        // the pull that follows (the source's pointer came in at stage 1)
        d.txPrefetch->PrefetchTxReady(d.txCookie, stage - 1);
    }
}

void
FabricDataPlane::PrefetchQueue(const FabricNetDevice& port, uint32_t stage)
{
    const Ptr<Queue<Packet>>& queue = port.m_port.queue;
    if (!queue)
    {
        return;
    }
    if (stage == 1)
    {
        FabricPrefetchObject(*queue);
        return;
    }
    const auto& packets = QueueContainerPeek::Of(*queue);
    if (packets.empty())
    {
        return;
    }
    if (stage == 2)
    {
        // the list node: its address is the head's, read from the list
        FabricPrefetchObject(packets.front());
    }
    else if (stage == 3)
    {
        FabricPrefetchObject(*packets.front());
    }
}

void
FabricDataPlane::PrefetchEnqueue(const FabricNetDevice& port, uint32_t stage)
{
    const FabricNetDevice::Port& d = port.m_port;
    if (stage == 1)
    {
        // both sides' fields and the counters of every hop
        FabricPrefetch(&d, offsetof(FabricNetDevice::Port, stats) + kHopStatsBytes);
        return;
    }
    if (d.channel)
    {
        PrefetchTransmit(*d.channel, d.channelEnd, stage - 1);
    }
    if (stage == 2 && (d.txEventPending || d.txPaused || !d.queuedFrames.empty()))
    {
        // a busy port queues the frame
        PrefetchQueue(port, 1);
        if (!d.queuedFrames.empty())
        {
            FabricPrefetch(&d.queuedFrames.back(), 2 * sizeof(FabricNetDevice::QueuedFrame));
        }
    }
}

void
FabricDataPlane::PrefetchReceive(const FabricNetDevice& port,
                                 uint32_t stage,
                                 const FabricFrameMeta& meta)
{
    const FabricNetDevice::Port& d = port.m_port;
    if (stage == 1)
    {
        FabricPrefetch(&d, offsetof(FabricNetDevice::Port, queuedFrames));
        FabricPrefetch(&d.stats, kHopStatsBytes);
    }
    else if (d.fabricNode != nullptr && meta.hasHeader)
    {
        PrefetchForward(*d.fabricNode, stage - 1, meta.header);
    }
}

bool
FabricNetDevice::DropOnArrival(const Ptr<Packet>& p, uint32_t epoch)
{
    if ((m_port.rxChecks & kRxCheckEpoch) != 0 && LostOnWire(epoch))
    {
        ++m_port.stats.lost;
        Lose(p);
        return true;
    }
    if (m_receiveErrorModel && m_receiveErrorModel->IsCorrupt(p))
    {
        // as PointToPointNetDevice; the packet has used the wire, and a
        // transport resends it as any lost packet
        NS_LOG_LOGIC("frame of " << p->GetSize() << " bytes corrupt: dropped");
        ++m_port.stats.corrupted;
        m_phyRxDropTrace(p);
        Lose(p);
        return true;
    }
    return false;
}

void
FabricNetDevice::Receive(const Ptr<Packet>& p, const FabricFrameMeta& meta, uint32_t epoch)
{
    if (m_port.deferTies)
    {
        m_port.fabricNode->Defer(this, p, meta, epoch);
        return;
    }
    ReceiveNow(p, meta, epoch);
}

void
FabricNetDevice::ReceiveNow(const Ptr<Packet>& p, const FabricFrameMeta& meta, uint32_t epoch)
{
    ++m_port.stats.arrivals;
    // one test of the port's first line unless a link flap or an error model
    // asks for more
    if (m_port.rxChecks != 0 && DropOnArrival(p, epoch))
    {
        return;
    }
    ++m_port.stats.rxPackets;
    m_port.stats.rxBytes += p->GetSize();
    FireIfConnected(m_port.traces, kTraceSniffer, m_snifferTrace, p);
    FireIfConnected(m_port.traces, kTracePromiscSniffer, m_promiscSnifferTrace, p);
    FireIfConnected(m_port.traces, kTraceMacRx, m_macRxTrace, p);
    if (m_port.fabricNode != nullptr)
    {
        m_port.fabricNode->ReceiveFromPort(this, p, meta.hasHeader ? &meta.header : nullptr);
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
        ++m_port.stats.corrupted;
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
    m_port.ingressBytes += bytes;
    if (m_port.pfcEnabled && !m_port.peerPaused && m_port.ingressBytes >= m_port.pfcXoff)
    {
        m_port.peerPaused = true;
        ++m_port.stats.pausesSent;
        m_port.channel->SendFlowControl(this, true);
    }
}

void
FabricNetDevice::ReleaseIngress(uint32_t bytes)
{
    m_port.ingressBytes -= bytes;
    if (m_port.peerPaused && m_port.ingressBytes <= m_port.pfcXon)
    {
        m_port.peerPaused = false;
        m_port.channel->SendFlowControl(this, false);
    }
}

void
FabricNetDevice::ReceiveFlowControl(bool pause, uint32_t epoch)
{
    if (m_port.deferTies)
    {
        m_port.fabricNode->DeferFlowControl(this, pause, epoch);
        return;
    }
    ReceiveFlowControlNow(pause, epoch);
}

void
FabricNetDevice::ReceiveFlowControlNow(bool pause, uint32_t epoch)
{
    ++m_port.stats.flowControlFrames;
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
        ++m_port.stats.pausesRecv;
        if (!m_port.txPaused)
        {
            m_pausedSince = Simulator::Now();
        }
        m_port.txPaused = true;
        return;
    }
    if (m_port.txPaused)
    {
        m_port.stats.pausedTime += Simulator::Now() - m_pausedSince;
    }
    m_port.txPaused = false;
    KickTransmitter();
    if (m_port.queuedFrames.size() <= 1)
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
    return m_port.channel;
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
    m_port.mtu = mtu;
}

uint16_t
FabricNetDevice::GetFrameMtu() const
{
    return m_port.mtu;
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
    return m_port.mtu - kEthernetHeaderBytes;
}

bool
FabricNetDevice::IsLinkUp() const
{
    return m_port.channel != nullptr && m_port.up;
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
        ++m_port.stats.drops;
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
    Ptr<FabricNetDevice> peer = m_port.channel ? m_port.channel->GetPeer(this) : nullptr;
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
    m_port.nodeId = node->GetId();
    m_port.fabricNode = dynamic_cast<FabricNode*>(PeekPointer(node));
    if (m_port.channel)
    {
        m_port.channel->RefreshEnds(); // it schedules arrivals in our node's context
    }
    if (FabricDistributed::GetSize() > 1 && FabricDistributed::IsLocal(*node))
    {
        FabricAttachRemote(this, MakeCallback(&FabricNetDevice::ReceiveRemote, this));
    }
}

void
FabricNetDevice::ReceiveRemote(const FabricRemoteEnvelope& envelope, Ptr<Packet> p)
{
    const uint8_t kind = envelope.kind;
    switch (kind)
    {
    case FabricRemoteEnvelope::kFrame:
        Receive(p, envelope.meta, envelope.epoch);
        return;
    case FabricRemoteEnvelope::kPause:
    case FabricRemoteEnvelope::kResume:
        ReceiveFlowControl(kind == FabricRemoteEnvelope::kPause, envelope.epoch);
        return;
    case FabricRemoteEnvelope::kTransport:
        if (!m_remoteTransport.IsNull())
        {
            m_remoteTransport(p);
        }
        return;
    default:
        NS_FATAL_ERROR("FabricNetDevice: unknown envelope kind "
                       << static_cast<uint32_t>(envelope.kind) << " from another rank");
    }
}

void
FabricNetDevice::SetRemoteTransportCallback(Callback<void, Ptr<Packet>> cb)
{
    m_remoteTransport = cb;
}

void
FabricNetDevice::SendRemoteTransport(Ptr<Packet> p, Time arrival, uint32_t node, uint32_t ifIndex)
{
    FabricRemoteEnvelope envelope;
    envelope.kind = FabricRemoteEnvelope::kTransport;
    FabricSendRemote(envelope, PeekPointer(p), arrival, node, ifIndex);
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
