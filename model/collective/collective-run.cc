/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "collective-run.h"

#include "collective-metrics.h"

#include "ns3/boolean.h"
#include "ns3/fabric-distributed.h"
#include "ns3/fabric-error.h"
#include "ns3/log.h"
#include "ns3/run-observer.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveRun");
NS_OBJECT_ENSURE_REGISTERED(CollectiveRun);

TypeId
CollectiveRun::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CollectiveRun")
            .SetParent<Object>()
            .SetGroupName("GpuFabric")
            .AddConstructor<CollectiveRun>()
            .AddAttribute("Rendezvous",
                          "A send starts only once the matching receive is posted (its "
                          "dependencies met), as NCCL's and MPI's large-message protocols do; "
                          "false: a send starts as soon as its own dependencies are met.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&CollectiveRun::m_rendezvous),
                          MakeBooleanChecker())
            .AddAttribute("ControlDelay",
                          "How long a receiver's news takes to reach the sender's side: a "
                          "send starts this long after its receive is posted (Rendezvous) "
                          "and completes this long after its message is delivered (0: at "
                          "once). A distributed run needs more than the delay of a cable "
                          "between the ranks of a send's two GPUs, which is how it tells "
                          "the sender; the same value on one process gives the same times.",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&CollectiveRun::m_controlDelay),
                          MakeTimeChecker(Time(0)))
            .AddTraceSource("Complete",
                            "Every op of every rank has completed.",
                            MakeTraceSourceAccessor(&CollectiveRun::m_completeTrace),
                            "ns3::CollectiveRun::CompleteTracedCallback")
            .AddTraceSource("Failed",
                            "The collective failed: a message of it was given up (the "
                            "report names ranks, message and times).",
                            MakeTraceSourceAccessor(&CollectiveRun::m_failedTrace),
                            "ns3::CollectiveRun::FailedTracedCallback")
            .AddTraceSource("RankComplete",
                            "Every op of one rank has completed (rank, time).",
                            MakeTraceSourceAccessor(&CollectiveRun::m_rankCompleteTrace),
                            "ns3::CollectiveRun::RankCompleteTracedCallback");
    return tid;
}

CollectiveRun::CollectiveRun() = default;

void
CollectiveRun::DoDispose()
{
    m_transport = nullptr;
    m_done = CompletionCallback();
    m_failed = FailureCallback();
    Object::DoDispose();
}

void
CollectiveRun::Setup(CollectiveSchedule schedule, Ptr<Transport> transport)
{
    FabricRequire(transport != nullptr, "transport", "null", "a Transport");
    m_schedule = std::move(schedule);
    const std::vector<std::vector<uint32_t>> match = m_schedule.ValidatedMatching();
    // every Transport tells the sink of a message it gives up
    // (MessageSink::MessageFailed), so no trace connection is needed
    m_transport = transport;
    const uint32_t n = m_schedule.NumRanks();
    const auto& comm = m_schedule.Communicator();
    m_local.assign(n, 1);
    for (uint32_t r = 0; r < n; ++r)
    {
        FabricRequire(comm[r] < transport->GetNRanks(),
                      "communicator rank",
                      comm[r],
                      fmt::format("a rank of the fabric (below {})", transport->GetNRanks()));
        m_local[r] = transport->IsLocalGpu(comm[r]) ? 1 : 0;
    }
    m_notes = m_controlDelay.IsStrictlyPositive() || transport->IsDistributed();
    FabricRequire(!m_notes || n < kMaxNoteRanks,
                  "communicator size",
                  n,
                  fmt::format("below {} with ns3::CollectiveRun::ControlDelay above 0 or in a "
                              "distributed run (a note names the rank in 30 bits)",
                              kMaxNoteRanks));
    m_ops.assign(n, {});
    m_dependents.assign(n, {});
    m_started.assign(n, 0);
    m_ready.assign(n, {});
    m_flushPending.assign(n, 0);
    m_left.assign(n, 0);
    m_rankFinish.assign(n, Time());
    m_opsLeft = 0;
    for (uint32_t r = 0; r < n; ++r)
    {
        const uint32_t ops = m_schedule.NumOps(r);
        m_left[r] = ops;
        // a distributed run's process completes its own ranks' ops (GatherResult)
        m_opsLeft += m_local[r] ? ops : 0;
        std::vector<OpState>& st = m_ops[r];
        st.assign(ops + 1, OpState());
        // dependents in CSR form: the ops that wait for op i of rank r are
        // m_dependents[r][st[i].dependents .. st[i + 1].dependents)
        for (uint32_t i = 0; i < ops; ++i)
        {
            const CollectiveOp& o = m_schedule.Op(r, i);
            st[i].peer = o.peer;
            st[i].partner = match[r][i];
            st[i].send = o.kind == OpKind::Send;
            if (transport->IsDistributed() && (m_local[r] || m_local[o.peer]))
            {
                RequireControlDelay(r, o.peer);
            }
            if (o.depCount > kMaxDeps) // (the message is formatted only when thrown)
            {
                throw FabricConfigError(fmt::format("schedule rank {} op {} dependencies", r, i),
                                        std::to_string(o.depCount),
                                        fmt::format("at most {}", kMaxDeps));
            }
            for (uint32_t d : m_schedule.Deps(r, i))
            {
                ++st[d + 1].dependents;
            }
        }
        for (uint32_t i = 0; i < ops; ++i)
        {
            st[i + 1].dependents += st[i].dependents;
        }
        if (m_schedule.InOrderConnections())
        {
            LinkConnections(r);
        }
        std::vector<uint32_t> fill(ops);
        for (uint32_t i = 0; i < ops; ++i)
        {
            fill[i] = st[i].dependents;
        }
        m_dependents[r].assign(st[ops].dependents, 0);
        for (uint32_t i = 0; i < ops; ++i)
        {
            for (uint32_t d : m_schedule.Deps(r, i))
            {
                ++st[i].waiting;
                m_dependents[r][fill[d]++] = i;
            }
        }
    }
    RunObserver::Announce(this);
}

void
CollectiveRun::LinkConnections(uint32_t r)
{
    if (m_connNext.empty())
    {
        m_connNext.assign(m_schedule.NumRanks(), {});
    }
    const uint32_t ops = m_schedule.NumOps(r);
    std::vector<uint32_t>& next = m_connNext[r];
    next.assign(ops, kNoIndex);
    std::map<uint64_t, uint32_t> last; // (peer, channel) -> its latest send so far
    for (uint32_t i = 0; i < ops; ++i)
    {
        const CollectiveOp& o = m_schedule.Op(r, i);
        if (o.kind != OpKind::Send)
        {
            continue;
        }
        const uint64_t key = (static_cast<uint64_t>(o.peer) << 16) | o.channel;
        auto [it, first] = last.try_emplace(key, i);
        if (!first)
        {
            next[it->second] = i;
            m_ops[r][i].turn = 0;
            it->second = i;
        }
    }
}

void
CollectiveRun::SetCompletionCallback(CompletionCallback cb)
{
    m_done = cb;
}

void
CollectiveRun::StartRank(uint32_t local)
{
    FabricRequire(local < m_schedule.NumRanks(),
                  "collective rank",
                  local,
                  fmt::format("below {}", m_schedule.NumRanks()));
    if (m_started[local] || !m_local[local])
    {
        return; // another rank of a distributed run simulates it
    }
    m_started[local] = 1;
    if (!m_anyStarted)
    {
        m_anyStarted = true;
        m_start = Simulator::Now();
    }
    if (m_left[local] == 0)
    {
        m_rankFinish[local] = Simulator::Now();
        m_rankCompleteTrace(local, Simulator::Now()); // nothing to do
    }
    for (uint32_t i = 0; i < m_schedule.NumOps(local); ++i)
    {
        if (m_ops[local][i].waiting == 0)
        {
            DepsMet(local, i);
        }
    }
    if (m_opsLeft == 0)
    {
        Finish(); // an empty schedule completes at once
    }
}

void
CollectiveRun::Finish()
{
    if (m_finished)
    {
        return;
    }
    m_finished = true;
    m_finish = Simulator::Now();
    NS_LOG_INFO(m_schedule.Algorithm() << " " << CollectiveTypeName(m_schedule.Type())
                                       << " done in " << (m_finish - m_start).As(Time::US));
    m_completeTrace(this);
    if (!m_done.IsNull())
    {
        m_done(this);
    }
}

void
CollectiveRun::DepsMet(uint32_t rank, uint32_t op)
{
    OpState& st = m_ops[rank][op];
    st.depsMet = true;
    if (st.send)
    {
        if (!m_rendezvous || (m_notes ? st.cts : m_ops[st.peer][st.partner].depsMet))
        {
            Ready(rank, op);
        }
        return;
    }
    if (st.arrived)
    {
        CompleteOp(rank, op);
        return;
    }
    if (!m_rendezvous)
    {
        return;
    }
    if (m_notes)
    {
        Note(kNoteCts, st.peer, st.partner);
        return;
    }
    const OpState& sender = m_ops[st.peer][st.partner];
    if (sender.depsMet && !sender.issued)
    {
        Ready(st.peer, st.partner); // the sender was waiting for this receive to be posted
    }
}

void
CollectiveRun::Ready(uint32_t rank, uint32_t op)
{
    // Sends that become ready at one instant leave in the rank's op order
    // (the algorithm's order: an all-to-all's rotated peers), not in the
    // order the receivers happened to post: ranks start one after the other
    // within the instant, and issuing at once made every rank send to rank
    // 0 first, then to rank 1, ... (an incast on each in turn)
    OpState& st = m_ops[rank][op];
    if (!st.turn)
    {
        st.held = 1; // an earlier send of its connection is not issued yet
        return;
    }
    m_ready[rank].push_back(op);
    if (!m_flushPending[rank])
    {
        m_flushPending[rank] = 1;
        // the event holds the run, so it lives until its sends are issued
        Simulator::ScheduleNow(&CollectiveRun::Flush, Ptr<CollectiveRun>(this), rank);
    }
}

void
CollectiveRun::Flush(uint32_t rank)
{
    m_flushPending[rank] = 0;
    std::vector<uint32_t> ready;
    ready.swap(m_ready[rank]);
    std::sort(ready.begin(), ready.end());
    for (uint32_t op : ready)
    {
        if (!m_ops[rank][op].issued)
        {
            Issue(rank, op);
        }
    }
}

void
CollectiveRun::Issue(uint32_t rank, uint32_t op)
{
    m_ops[rank][op].issued = true;
    if (!m_connNext.empty())
    {
        const uint32_t next = m_connNext[rank][op];
        if (next != kNoIndex)
        {
            OpState& nx = m_ops[rank][next];
            nx.turn = 1;
            if (nx.held)
            {
                nx.held = 0;
                Ready(rank, next); // leaves right after this one, in this instant
            }
        }
    }
    const CollectiveOp& o = m_schedule.Op(rank, op);
    const auto& comm = m_schedule.Communicator();
    // the transport holds a reference while the message is in flight, so a
    // run nobody else holds (no applications) lives until its messages arrive
    m_ops[rank][op].message = m_transport->Send(comm[rank],
                                                comm[o.peer],
                                                o.bytes,
                                                this,
                                                (static_cast<uint64_t>(rank) << 32) | op,
                                                Ptr<Object>(this));
}

void
CollectiveRun::MessageDelivered(uint64_t cookie)
{
    Delivered(static_cast<uint32_t>(cookie >> 32), static_cast<uint32_t>(cookie));
}

void
CollectiveRun::Delivered(uint32_t rank, uint32_t op)
{
    OpState& send = m_ops[rank][op];
    const uint32_t peer = send.peer;
    const uint32_t recv = send.partner;
    if (m_notes)
    {
        // this is the receiver's side: the sender hears of it by a note
        OpState& st = m_ops[peer][recv];
        st.arrived = true;
        if (st.depsMet)
        {
            CompleteOp(peer, recv);
        }
        Note(kNoteDelivered, rank, op);
        return;
    }
    send.message = kNoMessage;
    CompleteOp(rank, op);
    OpState& st = m_ops[peer][recv];
    st.arrived = true;
    if (st.depsMet)
    {
        CompleteOp(peer, recv);
    }
}

void
CollectiveRun::CompleteOp(uint32_t rank, uint32_t op)
{
    ++m_opsDone;
    --m_opsLeft;
    if (--m_left[rank] == 0)
    {
        m_rankFinish[rank] = Simulator::Now();
        m_rankCompleteTrace(rank, Simulator::Now());
    }
    std::vector<OpState>& ops = m_ops[rank];
    const uint32_t* dependents = m_dependents[rank].data();
    for (uint32_t k = ops[op].dependents; k < ops[op + 1].dependents; ++k)
    {
        const uint32_t next = dependents[k];
        if (--ops[next].waiting == 0 && m_started[rank] != 0)
        {
            DepsMet(rank, next);
        }
    }
    if (m_opsLeft == 0)
    {
        Finish();
    }
}

uint64_t
CollectiveRun::NoteCookie(NoteKind kind, uint32_t rank, uint32_t op)
{
    return (static_cast<uint64_t>(kind) << 62) | (static_cast<uint64_t>(rank) << 32) | op;
}

void
CollectiveRun::Note(NoteKind kind, uint32_t rank, uint32_t op)
{
    const auto& comm = m_schedule.Communicator();
    m_transport->SendNote(comm[m_ops[rank][op].peer],
                          comm[rank],
                          *this,
                          NoteCookie(kind, rank, op),
                          Simulator::Now() + m_controlDelay);
}

void
CollectiveRun::NoteReceived(uint64_t cookie)
{
    const auto rank = static_cast<uint32_t>(cookie >> 32) & (kMaxNoteRanks - 1);
    const auto op = static_cast<uint32_t>(cookie);
    NS_ABORT_MSG_UNLESS(rank < m_ops.size() && op < m_schedule.NumOps(rank) &&
                            m_ops[rank][op].send && m_local[rank],
                        "CollectiveRun: a note about op " << op << " of rank " << rank
                                                          << ", which is no send of this process");
    if ((cookie >> 62) == kNoteCts)
    {
        ClearToSend(rank, op);
        return;
    }
    m_ops[rank][op].message = kNoMessage;
    CompleteOp(rank, op);
}

void
CollectiveRun::ClearToSend(uint32_t rank, uint32_t op)
{
    OpState& st = m_ops[rank][op];
    st.cts = true;
    if (st.depsMet && !st.issued)
    {
        Ready(rank, op);
    }
}

void
CollectiveRun::RequireControlDelay(uint32_t rank, uint32_t peer) const
{
    const auto& comm = m_schedule.Communicator();
    // each process checks the notes it sends: from its own ranks
    for (const auto& [from, to] : {std::pair(rank, peer), std::pair(peer, rank)})
    {
        if (!m_local[from])
        {
            continue;
        }
        const Time need = m_transport->GetNoteDelay(comm[from], comm[to]);
        if (need.IsStrictlyPositive() && m_controlDelay <= need) // (formatted only when refused)
        {
            throw FabricConfigError(
                "ns3::CollectiveRun::ControlDelay",
                fmt::format("{} ns", m_controlDelay.GetNanoSeconds()),
                fmt::format("more than {} ns in this distributed run: the least delay of a cable "
                            "between the ranks of GPUs {} and {}, which exchange messages",
                            need.GetNanoSeconds(),
                            comm[from],
                            comm[to]));
        }
    }
}

bool
CollectiveRun::IsComplete() const
{
    if (!m_anyStarted || m_opsLeft != 0)
    {
        return false;
    }
    for (uint32_t r = 0; r < m_started.size(); ++r)
    {
        if (m_local[r] && !m_started[r])
        {
            return false;
        }
    }
    return true;
}

const CollectiveSchedule&
CollectiveRun::GetSchedule() const
{
    return m_schedule;
}

Time
CollectiveRun::GetStartTime() const
{
    return m_start;
}

Time
CollectiveRun::GetFinishTime() const
{
    return m_finish;
}

Time
CollectiveRun::GetRankFinishTime(uint32_t local) const
{
    return m_rankFinish.at(local);
}

bool
CollectiveRun::IsLocalRank(uint32_t local) const
{
    return m_local.at(local) != 0;
}

uint64_t
CollectiveRun::GetCompletedOps() const
{
    return m_opsDone;
}

void
CollectiveRun::SetFailureCallback(FailureCallback cb)
{
    m_failed = cb;
}

bool
CollectiveRun::IsFailed() const
{
    return m_isFailed;
}

const std::string&
CollectiveRun::GetFailureReport() const
{
    return m_failure;
}

void
CollectiveRun::MessageFailed(uint64_t /* cookie */, const TransportMessageReport& report)
{
    const auto& comm = m_schedule.Communicator();
    for (uint32_t r = 0; r < comm.size(); ++r)
    {
        if (comm[r] != report.src)
        {
            continue;
        }
        for (uint32_t op = 0; op < m_schedule.NumOps(r); ++op)
        {
            if (m_ops[r][op].message != report.messageId)
            {
                continue;
            }
            m_ops[r][op].message = kNoMessage;
            const std::string line =
                fmt::format("{} {}: op {} of rank {} (send to rank {}) failed: {}",
                            CollectiveTypeName(m_schedule.Type()),
                            m_schedule.Algorithm(),
                            op,
                            report.src,
                            report.dst,
                            report.ToString());
            NS_LOG_WARN(line);
            m_failure += (m_failure.empty() ? "" : "\n") + line;
            if (!m_isFailed)
            {
                m_isFailed = true;
                m_failedTrace(this, m_failure);
                if (!m_failed.IsNull())
                {
                    m_failed(this, m_failure);
                }
            }
            return;
        }
    }
}

CollectiveResult
CollectiveRun::GatherResult() const
{
    if (!FabricDistributed::IsEnabled())
    {
        return GetResult();
    }
    const std::vector<std::string> parts = FabricDistributed::GatherToRoot(GetPartText());
    if (parts.empty())
    {
        return GetResult(); // not rank 0: its own part
    }
    return CombineParts(parts);
}

std::string
CollectiveRun::GetPartText() const
{
    const bool hasRanks = std::find(m_local.begin(), m_local.end(), 1) != m_local.end();
    const nlohmann::json part = {{"ranks", hasRanks},
                                 {"started", m_anyStarted},
                                 {"start", m_start.GetTimeStep()},
                                 {"finish", m_finish.GetTimeStep()},
                                 {"complete", IsComplete()},
                                 {"failure", m_failure},
                                 {"type", static_cast<int>(m_schedule.Type())},
                                 {"algorithm", m_schedule.Algorithm()},
                                 {"size", m_schedule.NumRanks()},
                                 {"bytes", m_schedule.TotalBytes()},
                                 {"bytes_sent", m_schedule.TotalBytesSent()}};
    return part.dump();
}

CollectiveResult
CollectiveRun::CombineParts(const std::vector<std::string>& parts)
{
    CollectiveResult r;
    if (parts.empty())
    {
        return r;
    }
    // what the collective is: every rank builds the same run
    const nlohmann::json first = nlohmann::json::parse(parts.front());
    const auto type = static_cast<CollectiveType>(first["type"].get<int>());
    r.collective = std::string(CollectiveTypeName(type));
    r.algorithm = first["algorithm"].get<std::string>();
    r.ranks = first["size"].get<uint32_t>();
    r.bytes = first["bytes"].get<uint64_t>();
    r.bytesSent = first["bytes_sent"].get<uint64_t>();
    bool complete = true;
    bool started = false;
    int64_t start = 0;
    int64_t finish = 0;
    for (const std::string& text : parts)
    {
        const nlohmann::json part = nlohmann::json::parse(text);
        if (!part["ranks"].get<bool>())
        {
            continue; // none of its GPUs is in the communicator
        }
        complete = complete && part["complete"].get<bool>();
        if (part["started"].get<bool>())
        {
            const auto s = part["start"].get<int64_t>();
            start = started ? std::min(start, s) : s;
            started = true;
        }
        finish = std::max(finish, part["finish"].get<int64_t>());
        const auto failure = part["failure"].get<std::string>();
        if (!failure.empty())
        {
            r.failure += (r.failure.empty() ? "" : "\n") + failure;
        }
    }
    r.failed = !r.failure.empty();
    r.complete = complete && started;
    if (r.complete)
    {
        SetTimes(r, type, (TimeStep(finish) - TimeStep(start)).GetSeconds());
    }
    return r;
}

CollectiveResult
CollectiveRun::GetResult() const
{
    CollectiveResult r;
    r.collective = std::string(CollectiveTypeName(m_schedule.Type()));
    r.algorithm = m_schedule.Algorithm();
    r.ranks = m_schedule.NumRanks();
    r.bytes = m_schedule.TotalBytes();
    r.bytesSent = m_schedule.TotalBytesSent();
    r.complete = IsComplete();
    r.failed = m_isFailed;
    r.failure = m_failure;
    if (r.complete)
    {
        SetTimes(r, m_schedule.Type(), (m_finish - m_start).GetSeconds());
    }
    return r;
}

void
CollectiveRun::SetTimes(CollectiveResult& r, CollectiveType type, double seconds)
{
    r.timeS = seconds;
    if (seconds > 0)
    {
        r.algbwGBps = ToGBps(AlgorithmBandwidth(r.bytes, seconds));
        r.busbwGBps = ToGBps(BusBandwidth(type, r.ranks, r.bytes, seconds));
    }
}

} // namespace ns3
