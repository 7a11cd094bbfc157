/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "collective-run.h"

#include "collective-metrics.h"

#include "ns3/boolean.h"
#include "ns3/fabric-error.h"
#include "ns3/log.h"
#include "ns3/run-observer.h"
#include "ns3/simulator.h"

#include <algorithm>

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
    for (uint32_t g : m_schedule.Communicator())
    {
        FabricRequire(g < transport->GetNRanks(),
                      "communicator rank",
                      g,
                      fmt::format("a rank of the fabric (below {})", transport->GetNRanks()));
    }
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
        m_opsLeft += ops;
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
    if (m_started[local])
    {
        return;
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
        if (!m_rendezvous || m_ops[st.peer][st.partner].depsMet)
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

bool
CollectiveRun::IsComplete() const
{
    return m_anyStarted && m_opsLeft == 0 &&
           std::all_of(m_started.begin(), m_started.end(), [](uint8_t s) { return s != 0; });
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
        r.timeS = (m_finish - m_start).GetSeconds();
        if (r.timeS > 0)
        {
            r.algbwGBps = ToGBps(AlgorithmBandwidth(r.bytes, r.timeS));
            r.busbwGBps = ToGBps(BusBandwidth(m_schedule.Type(), r.ranks, r.bytes, r.timeS));
        }
    }
    return r;
}

} // namespace ns3
