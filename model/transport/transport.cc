/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "transport.h"

#include "run-progress.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-memory.h"
#include "ns3/fabric-work.h"
#include "ns3/fatal-error.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <fmt/format.h>
#include <iostream>
#include <map>
#include <unordered_map>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(Transport);

TypeId
Transport::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::Transport")
            .SetParent<Object>()
            .SetGroupName("GpuFabric")
            .AddAttribute("StripeMinPayload",
                          "A message striped over NVLink planes to a GPU of its domain, of "
                          "less than a full packet per plane, is cut into a packet per plane "
                          "of at least this payload (fewer packets if it is short), as NVLink "
                          "sprays a transfer over its links. Both backends cut messages by "
                          "this rule (PacketPayload()), each with its own value of it: "
                          "--ns3::Transport::StripeMinPayload sets both.",
                          UintegerValue(256),
                          MakeUintegerAccessor(&Transport::m_minStripe),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("ShowProgress",
                          "When the work declared to the transport (ExpectWork: collectives "
                          "and programs installed on it) is estimated above the global value "
                          "GpuFabricWarnRunSeconds, warn on stderr with the estimate and print "
                          "a progress line there every 10 s of wall time (RunProgress).",
                          BooleanValue(true),
                          MakeBooleanAccessor(&Transport::m_showProgress),
                          MakeBooleanChecker())
            .AddAttribute("FlowLabels",
                          "How a message's flow label (its ECMP entropy) is chosen: "
                          "message-id hashes its message id (ids are recycled among all "
                          "senders); source-sequence hashes how many messages its sender "
                          "sent before it, which a distributed run (several MPI ranks, "
                          "each allocating its own ids) reproduces exactly: compare a "
                          "distributed run with a one-process run of source-sequence.",
                          EnumValue(FLOW_LABEL_MESSAGE_ID),
                          MakeEnumAccessor(&Transport::m_flowLabels),
                          MakeEnumChecker(FLOW_LABEL_MESSAGE_ID,
                                          "message-id",
                                          FLOW_LABEL_SOURCE_SEQUENCE,
                                          "source-sequence"))
            .AddTraceSource("MessageFailed",
                            "A message was given up: no route, a dead end, or too many "
                            "losses (it is never delivered).",
                            MakeTraceSourceAccessor(&Transport::m_failedTrace),
                            "ns3::Transport::MessageFailedTracedCallback");
    return tid;
}

Transport::Transport()
    : m_flowLabelSalt(FlowLabelSalt(RngSeedManager::GetSeed(), RngSeedManager::GetRun()))
{
}

uint32_t
Transport::FlowLabelSalt(uint32_t seed, uint64_t run)
{
    // the mix of (0, 0) is 0: the default seed and run keep the salt, and so
    // the paths, of earlier versions
    const uint64_t r = run - 1;
    return 0x6dU ^ FabricEcmpHash(seed - 1,
                                  static_cast<uint32_t>(r),
                                  static_cast<uint16_t>(r >> 32),
                                  static_cast<uint32_t>(r >> 48));
}

void
Transport::Delivery::Notify()
{
    // the owner stays alive through the notice even if it was the last reference
    const Ptr<Object> owner = std::move(keepAlive);
    keepAlive = nullptr;
    if (sink != nullptr)
    {
        MessageSink* s = sink;
        sink = nullptr;
        s->MessageDelivered(cookie);
    }
    else if (!done.IsNull())
    {
        DoneCallback d = done;
        done = DoneCallback();
        d();
    }
}

bool
Transport::IsDistributed() const
{
    return false;
}

bool
Transport::IsLocalGpu(uint32_t /* rank */) const
{
    return true;
}

uint32_t
Transport::GetGpuProcess(uint32_t rank) const
{
    RequireRanks(rank, rank);
    return 0;
}

Time
Transport::GetNoteDelay(uint32_t /* from */, uint32_t /* to */) const
{
    return Time(0);
}

void
Transport::SendNote(uint32_t from, uint32_t to, const MessageSink& sink, uint64_t cookie, Time at)
{
    RequireRanks(from, to);
    FabricRequire(at >= Simulator::Now(), "note time", at.As(Time::S), "now or later");
    Simulator::Schedule(at - Simulator::Now(), &Transport::TakeNote, sink.GetSinkSerial(), cookie);
}

void
Transport::TakeNote(uint64_t serial, uint64_t cookie)
{
    // a sink disposed of (a run torn down) before its note arrived takes nothing
    if (MessageSink* s = MessageSink::FindSink(serial))
    {
        s->NoteReceived(cookie);
    }
}

void
Transport::RequireRanks(uint32_t srcRank, uint32_t dstRank) const
{
    const uint32_t n = GetNRanks();
    // every message passes here: format a message only for a bad rank
    if (srcRank >= n || dstRank >= n)
    {
        FabricRequire(srcRank < n, "source rank", srcRank, fmt::format("a rank below {}", n));
        FabricRequire(dstRank < n, "destination rank", dstRank, fmt::format("a rank below {}", n));
    }
}

uint64_t
Transport::GetFailedMessages() const
{
    return m_failures.size();
}

const std::vector<Transport::MessageReport>&
Transport::GetFailureReports() const
{
    return m_failures;
}

void
Transport::ReportFailure(MessageReport report, Delivery& delivery)
{
    m_failures.push_back(std::move(report));
    m_failedTrace(m_failures.back());
    delivery.NotifyFailure(m_failures.back());
}

void
Transport::Delivery::NotifyFailure(const TransportMessageReport& report)
{
    // the owner stays alive through the notice even if it was the last reference
    const Ptr<Object> owner = std::move(keepAlive);
    keepAlive = nullptr;
    done = DoneCallback();
    if (sink != nullptr)
    {
        MessageSink* s = sink;
        sink = nullptr;
        s->MessageFailed(cookie, report);
    }
}

namespace
{
/// The live sinks by serial, and the next serial.
struct SinkRegistry
{
    std::unordered_map<uint64_t, MessageSink*> live;
    uint64_t next{0};
    /// first serial -> (count, maker) (ReserveSerials)
    std::map<uint64_t, std::pair<uint64_t, MessageSink::SinkMaker>> reserved;
    bool havePending{false}; //!< the next sink takes `pending` (ReservedSerial)
    uint64_t pending{0};
};

SinkRegistry&
Sinks()
{
    static SinkRegistry registry;
    return registry;
}

uint64_t
NextSerial()
{
    SinkRegistry& r = Sinks();
    if (r.havePending)
    {
        r.havePending = false;
        return r.pending;
    }
    return r.next++;
}
} // namespace

MessageSink::MessageSink()
    : m_sinkSerial(NextSerial())
{
    NS_ABORT_MSG_UNLESS(Sinks().live.emplace(m_sinkSerial, this).second,
                        "MessageSink: serial " << m_sinkSerial << " is taken");
}

MessageSink::MessageSink(const MessageSink& /* other */)
    : MessageSink()
{
}

MessageSink::~MessageSink()
{
    Sinks().live.erase(m_sinkSerial);
}

MessageSink*
MessageSink::FindSink(uint64_t serial)
{
    SinkRegistry& r = Sinks();
    const auto it = r.live.find(serial);
    if (it != r.live.end())
    {
        return it->second;
    }
    auto res = r.reserved.upper_bound(serial);
    if (res == r.reserved.begin())
    {
        return nullptr;
    }
    --res;
    if (serial - res->first >= res->second.first)
    {
        return nullptr;
    }
    const SinkMaker make = res->second.second; // (the maker may reserve more)
    return make(serial);
}

uint64_t
MessageSink::ReserveSerials(uint64_t count, SinkMaker make)
{
    SinkRegistry& r = Sinks();
    const uint64_t first = r.next;
    r.next += count;
    r.reserved.emplace(first, std::make_pair(count, make));
    return first;
}

void
MessageSink::ReleaseSerials(uint64_t first)
{
    Sinks().reserved.erase(first);
}

MessageSink::ReservedSerial::ReservedSerial(uint64_t serial)
{
    SinkRegistry& r = Sinks();
    r.havePending = true;
    r.pending = serial;
}

MessageSink::ReservedSerial::~ReservedSerial()
{
    Sinks().havePending = false;
}

uint16_t
Transport::NewFlowLabel(uint32_t srcRank, uint32_t dstRank, uint32_t id)
{
    if (m_flowLabels == FLOW_LABEL_MESSAGE_ID)
    {
        return FlowLabelOf(srcRank, dstRank, id);
    }
    if (srcRank >= m_sentBy.size())
    {
        m_sentBy.resize(srcRank + 1, 0);
    }
    return FlowLabelOf(srcRank, dstRank, m_sentBy[srcRank]++);
}

void
MessageSink::MessageFailed(uint64_t /* cookie */, const TransportMessageReport& /* report */)
{
}

void
MessageSink::NoteReceived(uint64_t cookie)
{
    NS_FATAL_ERROR("MessageSink #" << m_sinkSerial << " was sent a note (cookie " << cookie
                                   << ") but takes none");
}

std::string
TransportMessageReport::ToString() const
{
    // no id: ids are recycled, and each MPI rank's own in a distributed run
    std::string s = fmt::format("message rank {} -> rank {}: {} of {} bytes delivered, sent at "
                                "{:.9f} s",
                                src,
                                dst,
                                delivered,
                                bytes,
                                sent.GetSeconds());
    if (since.IsStrictlyPositive())
    {
        s += fmt::format(", losing packets since {:.9f} s", since.GetSeconds());
    }
    if (!reason.empty())
    {
        s += fmt::format(", failed at {:.9f} s: {}", failedAt.GetSeconds(), reason);
    }
    return s;
}

double
Transport::EstimateRunSeconds(uint64_t messages, uint64_t /* bytes */) const
{
    return static_cast<double>(messages) / FabricWorkRates::kFlowMessagesPerSecond;
}

void
Transport::WatchProgress(RunProgress* progress)
{
    m_watcher = progress;
}

void
Transport::PollProgressNow()
{
    m_watcher->Poll();
}

void
Transport::DoDispose()
{
    if (m_progress)
    {
        m_progress->Dispose();
        m_progress = nullptr;
    }
    if (m_watcher)
    {
        m_watcher->Dispose(); // it forgets this transport
        m_watcher = nullptr;
    }
    Object::DoDispose();
}

double
Transport::GetExpectedSeconds() const
{
    return m_expectedSeconds;
}

void
Transport::ExpectWork(uint64_t messages,
                      uint64_t bytes,
                      const std::string& parameter,
                      const std::string& value)
{
    const uint64_t allMessages = m_expectedMessages + messages;
    const uint64_t allBytes = m_expectedBytes + bytes;
    // estimated as one workload, so that a backend's per-run costs count once
    const double seconds = EstimateRunSeconds(allMessages, allBytes);
    FabricRequireWork(seconds,
                      parameter,
                      value,
                      fmt::format("{} messages of {} in all on the {}",
                                  allMessages,
                                  FabricBytesText(static_cast<double>(allBytes)),
                                  GetInstanceTypeId().GetName()));
    m_expectedMessages = allMessages;
    m_expectedBytes = allBytes;
    m_expectedSeconds = seconds;
    if (!m_showProgress || seconds <= FabricWarnRunSeconds())
    {
        return;
    }
    if (auto progress = DynamicCast<RunProgress>(m_progress))
    {
        progress->AddExpectedBytes(bytes);
        return;
    }
    std::cerr << fmt::format("gpu-fabric: this run is estimated at about {} of wall time ({} "
                             "messages of {}; GpuFabricWarnRunSeconds={:g}); progress every 10 s\n",
                             FabricDurationText(seconds),
                             allMessages,
                             FabricBytesText(static_cast<double>(allBytes)),
                             FabricWarnRunSeconds());
    auto progress = CreateObject<RunProgress>();
    progress->TraceConnectWithoutContext("Progress",
                                         MakeCallback(+[](const RunProgress::Report& r) {
                                             std::cerr << "gpu-fabric: " << RunProgress::Describe(r)
                                                       << std::endl;
                                         }));
    progress->Install(this, allBytes - std::min(allBytes, GetTotals().bytesDelivered));
    m_progress = progress;
}

} // namespace ns3
