/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "program-runner.h"

#include "ns3/collective-algorithms.h"
#include "ns3/fabric-distributed.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-memory.h"
#include "ns3/log.h"
#include "ns3/run-observer.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <optional>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ProgramRunner");
NS_OBJECT_ENSURE_REGISTERED(ProgramRunner);

void
ParallelProgram::Validate() const
{
    FabricRequire(ranks >= 1, "program ranks", ranks, "at least 1");
    FabricRequire(tasks.size() == ranks,
                  "program tasks",
                  tasks.size(),
                  fmt::format("one task list per rank ({})", ranks));
    std::vector<std::vector<uint32_t>> uses(comms.size());
    for (uint32_t c = 0; c < comms.size(); ++c)
    {
        const ProgramComm& comm = comms[c];
        FabricRequire(comm.members.size() >= 2,
                      fmt::format("comm {} ({}) members", c, comm.label),
                      comm.members.size(),
                      "at least 2 ranks");
        FabricRequire(comm.collective != "sendrecv" || comm.members.size() == 2,
                      fmt::format("comm {} ({}) members", c, comm.label),
                      comm.members.size(),
                      "exactly 2 for sendrecv (sender, receiver)");
        for (uint32_t m : comm.members)
        {
            FabricRequire(m < ranks,
                          fmt::format("comm {} ({}) member", c, comm.label),
                          m,
                          fmt::format("a rank below {}", ranks));
        }
    }
    for (uint32_t r = 0; r < ranks; ++r)
    {
        for (uint32_t i = 0; i < tasks[r].size(); ++i)
        {
            const ProgramTask& t = tasks[r][i];
            for (uint32_t d : t.deps)
            {
                FabricRequire(d < i,
                              fmt::format("rank {} task {} dependency", r, i),
                              d,
                              "an earlier task of the same rank");
            }
            if (t.kind == ProgramTask::Kind::Compute)
            {
                FabricRequire(t.seconds >= 0,
                              fmt::format("rank {} task {} compute seconds", r, i),
                              t.seconds,
                              "a time >= 0");
                continue;
            }
            FabricRequire(t.comm < comms.size(),
                          fmt::format("rank {} task {} comm", r, i),
                          t.comm,
                          fmt::format("an index below {}", comms.size()));
            uses[t.comm].push_back(r);
        }
    }
    for (uint32_t c = 0; c < comms.size(); ++c)
    {
        std::vector<uint32_t> members = comms[c].members;
        std::sort(members.begin(), members.end());
        std::sort(uses[c].begin(), uses[c].end());
        FabricRequire(members == uses[c],
                      fmt::format("comm {} ({})", c, comms[c].label),
                      fmt::format("used by {} tasks", uses[c].size()),
                      "exactly one task on each member rank");
    }
}

namespace
{

/// Messages and payload bytes a comm sends, for an up-front estimate: the
/// ring algorithm's counts (the other algorithms move about as much or less).
/// (Doubles: the counts of a hostile program may not fit 64 bits.)
std::pair<double, double>
CommWork(const ProgramComm& c)
{
    const double n = static_cast<double>(c.members.size());
    if (c.collective == "sendrecv" || n < 2)
    {
        return {1, static_cast<double>(c.bytes)};
    }
    // each member sends (n - 1) / n of the buffer, twice for an allreduce
    const double passes = c.collective == "allreduce" ? 2 : 1;
    const double piece = static_cast<double>(c.bytes) / n;
    const double chunks =
        c.chunkBytes > 0 ? std::max(1.0, std::ceil(piece / static_cast<double>(c.chunkBytes))) : 1;
    return {n * passes * (n - 1) * chunks, n * passes * (n - 1) * piece};
}

/// \return x as a count, saturated
uint64_t
Saturated(double x)
{
    return x >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(x);
}

} // namespace

std::pair<double, double>
ParallelProgram::Work() const
{
    double messages = 0;
    double bytes = 0;
    for (const auto& c : comms)
    {
        const auto [m, b] = CommWork(c);
        messages += m;
        bytes += b;
    }
    return {messages, bytes};
}

TypeId
ProgramRunner::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::ProgramRunner")
            .SetParent<Object>()
            .SetGroupName("GpuFabric")
            .AddConstructor<ProgramRunner>()
            .AddTraceSource("CommFailed",
                            "A comm failed: the transport gave up one of its "
                            "messages (once per comm).",
                            MakeTraceSourceAccessor(&ProgramRunner::m_commFailedTrace),
                            "ns3::ProgramRunner::CommFailedTracedCallback")
            .AddTraceSource("TaskStarted",
                            "A task of a rank started: its dependencies are done (rank, task).",
                            MakeTraceSourceAccessor(&ProgramRunner::m_taskStartedTrace),
                            "ns3::ProgramRunner::TaskTracedCallback")
            .AddTraceSource("TaskCompleted",
                            "A task of a rank completed (rank, task).",
                            MakeTraceSourceAccessor(&ProgramRunner::m_taskCompletedTrace),
                            "ns3::ProgramRunner::TaskTracedCallback");
    return tid;
}

ProgramRunner::ProgramRunner() = default;

ProgramRunner::~ProgramRunner()
{
    // a runner nobody holds (StartProgram's result dropped) is freed while
    // its runs go on
    DisconnectRuns();
    ReleaseSerials();
}

void
ProgramRunner::ReleaseSerials()
{
    if (m_reserved)
    {
        MessageSink::ReleaseSerials(m_firstSerial);
        m_reserved = false;
    }
}

void
ProgramRunner::DisconnectRuns()
{
    for (uint32_t c = 0; c < m_runs.size(); ++c)
    {
        if (m_runs[c])
        {
            m_runs[c]->TraceDisconnectWithoutContext(
                "RankComplete",
                MakeCallback(&ProgramRunner::CommRankDone, this, c));
            m_runs[c]->TraceDisconnectWithoutContext(
                "Failed",
                MakeCallback(&ProgramRunner::CommFailed, this, c));
        }
    }
}

void
ProgramRunner::DoDispose()
{
    DisconnectRuns();
    ReleaseSerials();
    m_transport = nullptr;
    m_runs.clear();
    m_done = CompletionCallback();
    m_failedCallback = FailureCallback();
    Object::DoDispose();
}

void
ProgramRunner::Setup(ParallelProgram program, Ptr<Transport> transport)
{
    FabricRequire(transport != nullptr, "transport", "null", "a Transport");
    program.Validate();
    FabricRequire(program.ranks <= transport->GetNRanks(),
                  "program ranks",
                  program.ranks,
                  fmt::format("at most the transport's {} ranks", transport->GetNRanks()));
    {
        // refused up front if it cannot finish in reasonable time
        const auto [messages, bytes] = program.Work();
        transport->ExpectWork(Saturated(messages),
                              Saturated(bytes),
                              "program",
                              fmt::format("{} ranks, {} communication steps moving {}",
                                          program.ranks,
                                          program.comms.size(),
                                          FabricBytesText(bytes)));
    }
    DisconnectRuns(); // a second Setup: the first program's runs no longer report here
    m_program = std::move(program);
    m_transport = transport;
    const uint32_t n = m_program.ranks;
    m_waiting.assign(n, {});
    m_dependents.assign(n, {});
    m_left.assign(n, 0);
    m_rankFinish.assign(n, Time());
    m_commSeconds.assign(n, 0.0);
    m_runs.assign(m_program.comms.size(), nullptr);
    m_gathered.clear();
    m_commTask.assign(m_program.comms.size(), {});
    m_commStart.assign(m_program.comms.size(), {});
    m_tasksLeft = 0;
    m_failedComms.clear();
    m_failure.clear();
    m_local.assign(n, 1);
    ReleaseSerials();
    if (transport->IsDistributed())
    {
        for (uint32_t r = 0; r < n; ++r)
        {
            m_local[r] = transport->IsLocalGpu(r) ? 1 : 0;
        }
        // a comm's run is made when a rank reaches it, which differs
        // between ranks: its sink serial is reserved here, where every rank
        // is at the same point, and a message or a note for it makes it
        m_firstSerial = MessageSink::ReserveSerials(m_program.comms.size(),
                                                    MakeCallback(&ProgramRunner::SinkOf, this));
        m_reserved = true;
    }
    for (uint32_t c = 0; c < m_program.comms.size(); ++c)
    {
        m_commTask[c].assign(m_program.comms[c].members.size(), 0);
        m_commStart[c].assign(m_program.comms[c].members.size(), 0.0);
    }
    for (uint32_t r = 0; r < n; ++r)
    {
        const auto& tasks = m_program.tasks[r];
        m_left[r] = tasks.size();
        m_tasksLeft += m_local[r] ? tasks.size() : 0; // (another rank runs the others)
        m_waiting[r].assign(tasks.size(), 0);
        m_dependents[r].assign(tasks.size(), {});
        for (uint32_t i = 0; i < tasks.size(); ++i)
        {
            m_waiting[r][i] = tasks[i].deps.size();
            for (uint32_t d : tasks[i].deps)
            {
                m_dependents[r][d].push_back(i);
            }
            if (tasks[i].kind == ProgramTask::Kind::Comm)
            {
                const auto& members = m_program.comms[tasks[i].comm].members;
                const auto local = static_cast<uint32_t>(
                    std::find(members.begin(), members.end(), r) - members.begin());
                m_commTask[tasks[i].comm][local] = i;
            }
        }
    }
    RunObserver::Announce(this);
}

const ParallelProgram&
ProgramRunner::GetProgram() const
{
    return m_program;
}

void
ProgramRunner::SetCompletionCallback(CompletionCallback cb)
{
    m_done = cb;
}

void
ProgramRunner::Start()
{
    // a process of a distributed run with no GPU in the program has its part done now
    const bool nothingHere = m_tasksLeft == 0;
    for (uint32_t r = 0; r < m_program.ranks; ++r)
    {
        if (!m_local[r])
        {
            continue; // another rank of a distributed run runs it
        }
        if (m_left[r] == 0)
        {
            m_rankFinish[r] = Simulator::Now();
        }
        for (uint32_t i = 0; i < m_program.tasks[r].size(); ++i)
        {
            if (m_waiting[r][i] == 0)
            {
                Ready(r, i);
            }
        }
    }
    if (nothingHere)
    {
        Finish();
    }
}

void
ProgramRunner::Finish()
{
    m_finish = Simulator::Now();
    if (!m_done.IsNull())
    {
        m_done(this);
    }
}

void
ProgramRunner::SetScheduleSource(ScheduleSource source)
{
    m_source = std::move(source);
}

void
ProgramRunner::Ready(uint32_t rank, uint32_t task)
{
    m_taskStartedTrace(rank, task);
    const ProgramTask& t = m_program.tasks[rank][task];
    if (t.kind == ProgramTask::Kind::Compute)
    {
        Simulator::Schedule(Seconds(t.seconds), &ProgramRunner::TaskDone, this, rank, task);
        return;
    }
    const auto& members = m_program.comms[t.comm].members;
    const auto local =
        static_cast<uint32_t>(std::find(members.begin(), members.end(), rank) - members.begin());
    m_commStart[t.comm][local] = Simulator::Now().GetSeconds();
    RunOf(t.comm)->StartRank(local);
}

MessageSink*
ProgramRunner::SinkOf(uint64_t serial)
{
    return PeekPointer(RunOf(static_cast<uint32_t>(serial - m_firstSerial)));
}

Ptr<CollectiveRun>
ProgramRunner::RunOf(uint32_t c)
{
    const ProgramComm& comm = m_program.comms[c];
    Ptr<CollectiveRun>& run = m_runs[c];
    if (!run)
    {
        // built when first reached, so that a long program holds only the
        // schedules of comms in progress or done
        CollectiveSchedule s;
        std::optional<CollectiveSchedule> own;
        if (m_source && (own = m_source(comm)))
        {
            s = std::move(*own);
        }
        else if (comm.collective == "sendrecv")
        {
            s = SendRecvPairs(2, {{0, 1}}, comm.bytes, comm.chunkBytes, 1);
            s.SetCommunicator(comm.members);
        }
        else
        {
            ScheduleRequest req;
            req.collective = comm.collective;
            req.algorithm = comm.algorithm;
            req.ranks = comm.members.size();
            req.bytes = comm.bytes;
            req.chunkBytes = comm.chunkBytes;
            req.domainSize = comm.domainSize;
            req.communicator = comm.members;
            s = MakeSchedule(req);
        }
        std::optional<MessageSink::ReservedSerial> serial; // (distributed: the comm's own)
        if (m_reserved)
        {
            serial.emplace(m_firstSerial + c);
        }
        run = CreateObject<CollectiveRun>();
        run->Setup(std::move(s), m_transport);
        run->TraceConnectWithoutContext("RankComplete",
                                        MakeCallback(&ProgramRunner::CommRankDone, this, c));
        run->TraceConnectWithoutContext("Failed",
                                        MakeCallback(&ProgramRunner::CommFailed, this, c));
    }
    return run;
}

void
ProgramRunner::CommRankDone(uint32_t comm, uint32_t local, Time when)
{
    const uint32_t rank = m_program.comms[comm].members[local];
    m_commSeconds[rank] += when.GetSeconds() - m_commStart[comm][local];
    TaskDone(rank, m_commTask[comm][local]);
}

void
ProgramRunner::TaskDone(uint32_t rank, uint32_t task)
{
    m_taskCompletedTrace(rank, task);
    if (--m_left[rank] == 0)
    {
        m_rankFinish[rank] = Simulator::Now();
    }
    --m_tasksLeft;
    for (uint32_t next : m_dependents[rank][task])
    {
        if (--m_waiting[rank][next] == 0)
        {
            Ready(rank, next);
        }
    }
    if (m_tasksLeft == 0)
    {
        Finish();
    }
}

void
ProgramRunner::CommFailed(uint32_t comm,
                          Ptr<const CollectiveRun> /* run */,
                          const std::string& report)
{
    // the run fires once, with its first failed operation
    const ProgramComm& c = m_program.comms[comm];
    const std::string what =
        c.collective == "sendrecv"
            ? fmt::format("sendrecv rank {} -> {}", c.members[0], c.members[1])
            : fmt::format("{} {} of {} ranks", c.collective, c.algorithm, c.members.size());
    const std::string line = fmt::format("comm {} ({}{}{}, {} bytes) failed: {}",
                                         comm,
                                         c.label,
                                         c.label.empty() ? "" : ": ",
                                         what,
                                         c.bytes,
                                         report.substr(0, report.find('\n')));
    NS_LOG_WARN(line);
    m_failedComms.push_back(comm);
    m_failure += (m_failure.empty() ? "" : "\n") + line;
    m_commFailedTrace(comm, line);
    if (m_failedComms.size() == 1 && !m_failedCallback.IsNull())
    {
        m_failedCallback(this, m_failure);
    }
}

void
ProgramRunner::SetFailureCallback(FailureCallback cb)
{
    m_failedCallback = cb;
}

bool
ProgramRunner::IsFailed() const
{
    return !m_failedComms.empty();
}

const std::string&
ProgramRunner::GetFailureReport() const
{
    return m_failure;
}

const std::vector<uint32_t>&
ProgramRunner::GetFailedComms() const
{
    return m_failedComms;
}

std::vector<uint32_t>
ProgramRunner::GetUnfinishedRanks() const
{
    std::vector<uint32_t> ranks;
    for (uint32_t r = 0; r < m_left.size(); ++r)
    {
        if (m_left[r] > 0)
        {
            ranks.push_back(r);
        }
    }
    return ranks;
}

bool
ProgramRunner::IsComplete() const
{
    return m_tasksLeft == 0;
}

Time
ProgramRunner::GetFinishTime() const
{
    return m_finish;
}

Time
ProgramRunner::GetRankFinishTime(uint32_t rank) const
{
    return m_rankFinish.at(rank);
}

const std::vector<double>&
ProgramRunner::GetCommSeconds() const
{
    return m_commSeconds;
}

void
ProgramRunner::GatherResults()
{
    if (!m_transport || !m_transport->IsDistributed())
    {
        return;
    }
    // each rank reports the ranks it runs
    nlohmann::json mine = {{"ranks", nlohmann::json::array()},
                           {"failure", m_failure},
                           {"failed", m_failedComms},
                           {"runs", nlohmann::json::array()}};
    // the part of each comm this rank ran (a rank that never reached one
    // has no GPU in it that started)
    for (size_t c = 0; c < m_runs.size(); ++c)
    {
        if (m_runs[c])
        {
            mine["runs"].push_back({c, m_runs[c]->GetPartText()});
        }
    }
    for (uint32_t r = 0; r < m_program.ranks; ++r)
    {
        if (m_local[r])
        {
            mine["ranks"].push_back(
                {r, m_left[r], m_rankFinish[r].GetTimeStep(), m_commSeconds[r]});
        }
    }
    const std::vector<std::string> parts = FabricDistributed::GatherToRoot(mine.dump());
    if (parts.empty())
    {
        return; // not rank 0
    }
    m_tasksLeft = 0;
    m_failure.clear();
    m_failedComms.clear();
    Time finish;
    std::vector<std::vector<std::string>> runParts(m_runs.size());
    for (const std::string& text : parts)
    {
        const nlohmann::json part = nlohmann::json::parse(text);
        for (const auto& run : part["runs"])
        {
            runParts.at(run[0].get<size_t>()).push_back(run[1].get<std::string>());
        }
        for (const auto& row : part["ranks"])
        {
            const auto r = row[0].get<uint32_t>();
            m_left[r] = row[1].get<uint32_t>();
            m_rankFinish[r] = TimeStep(row[2].get<int64_t>());
            m_commSeconds[r] = row[3].get<double>();
            m_tasksLeft += m_left[r];
            finish = std::max(finish, m_rankFinish[r]);
        }
        const auto failure = part["failure"].get<std::string>();
        if (!failure.empty())
        {
            m_failure += (m_failure.empty() ? "" : "\n") + failure;
        }
        for (const auto& c : part["failed"])
        {
            m_failedComms.push_back(c.get<uint32_t>());
        }
    }
    m_finish = m_tasksLeft == 0 ? finish : Time();
    m_gathered.clear();
    for (const auto& p : runParts)
    {
        m_gathered.push_back(CollectiveRun::CombineParts(p));
    }
}

CollectiveResult
ProgramRunner::GetCommResult(uint32_t comm) const
{
    if (!m_gathered.empty())
    {
        return m_gathered.at(comm);
    }
    return m_runs.at(comm) ? m_runs[comm]->GetResult() : CollectiveResult();
}

const std::vector<Ptr<CollectiveRun>>&
ProgramRunner::GetRuns() const
{
    return m_runs;
}

} // namespace ns3
