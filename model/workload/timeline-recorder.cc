/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "timeline-recorder.h"

#include "program-runner.h"

#include "ns3/boolean.h"
#include "ns3/collective-run.h"
#include "ns3/fabric-distributed.h"
#include "ns3/fabric.h"
#include "ns3/flow-transport.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <tuple>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TimelineRecorder");
NS_OBJECT_ENSURE_REGISTERED(TimelineRecorder);

TypeId
TimelineRecorder::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::TimelineRecorder")
            .SetParent<RunObserver>()
            .SetGroupName("GpuFabric")
            .AddConstructor<TimelineRecorder>()
            .AddAttribute("RecordMessages",
                          "Record every message as a span (false: tasks and collectives only, "
                          "for runs of millions of messages).",
                          BooleanValue(true),
                          MakeBooleanAccessor(&TimelineRecorder::m_messages),
                          MakeBooleanChecker())
            .AddAttribute("MaxSpans",
                          "Spans kept at most (about 100 bytes each; a trace viewer loads a few "
                          "million); later ones are counted as dropped.",
                          UintegerValue(1000000),
                          MakeUintegerAccessor(&TimelineRecorder::m_maxSpans),
                          MakeUintegerChecker<uint32_t>(1));
    return tid;
}

TimelineRecorder::TimelineRecorder() = default;

void
TimelineRecorder::Observe(Ptr<Object> object)
{
    if (auto fabric = DynamicCast<Fabric>(object))
    {
        AttachTransport(fabric->GetTransport(), "packet");
    }
    else if (auto flow = DynamicCast<FlowTransport>(object))
    {
        AttachTransport(flow, "flow");
    }
    else if (auto run = DynamicCast<CollectiveRun>(object))
    {
        AttachCollective(run);
    }
    else if (auto runner = DynamicCast<ProgramRunner>(object))
    {
        AttachProgram(runner);
    }
}

uint32_t
TimelineRecorder::CurrentRun()
{
    if (m_backends.empty())
    {
        m_backends.emplace_back("unknown");
        m_hasProgram.push_back(false);
    }
    return static_cast<uint32_t>(m_backends.size() - 1);
}

void
TimelineRecorder::AttachTransport(Ptr<Transport> transport, const std::string& backend)
{
    m_backends.push_back(backend);
    m_hasProgram.push_back(false);
    const uint32_t run = CurrentRun();
    if (m_messages)
    {
        // both backends' MessageComplete: src, dst, bytes, send time
        transport->TraceConnectWithoutContext(
            "MessageComplete",
            Callback<void, uint32_t, uint32_t, uint64_t, Time>(
                [this, run](uint32_t src, uint32_t dst, uint64_t bytes, Time sent) {
                    MessageDone(run, src, dst, bytes, sent);
                }));
    }
}

void
TimelineRecorder::AttachCollective(Ptr<CollectiveRun> collective)
{
    const uint32_t run = CurrentRun();
    if (m_hasProgram[run])
    {
        return; // a program's comm: its tasks show it, with its label
    }
    // numbered in the order every rank makes them, so that a distributed
    // run's parts of one collective can be matched (GatherToRoot)
    const uint32_t number = m_collectives++;
    collective->TraceConnectWithoutContext(
        "Complete",
        Callback<void, Ptr<const CollectiveRun>>(
            [this, run, number](Ptr<const CollectiveRun> c) { CollectiveDone(run, number, c); }));
}

void
TimelineRecorder::AttachProgram(Ptr<ProgramRunner> runner)
{
    const uint32_t run = CurrentRun();
    m_hasProgram[run] = true;
    const ProgramRunner* r = PeekPointer(runner);
    m_started[r].clear(); // a runner freed and another made at its address
    runner->TraceConnectWithoutContext(
        "TaskStarted",
        Callback<void, uint32_t, uint32_t>(
            [this, r](uint32_t rank, uint32_t task) { TaskStarted(r, rank, task); }));
    runner->TraceConnectWithoutContext(
        "TaskCompleted",
        Callback<void, uint32_t, uint32_t>(
            [this, r, run](uint32_t rank, uint32_t task) { TaskCompleted(r, run, rank, task); }));
}

void
TimelineRecorder::MessageDone(uint32_t run, uint32_t src, uint32_t dst, uint64_t bytes, Time sent)
{
    Span s;
    s.run = run;
    s.rank = src;
    s.kind = Kind::Message;
    s.start = sent;
    s.end = Simulator::Now();
    s.peer = dst;
    s.bytes = bytes;
    Keep(std::move(s));
}

void
TimelineRecorder::TaskStarted(const ProgramRunner* runner, uint32_t rank, uint32_t task)
{
    m_started[runner][(static_cast<uint64_t>(rank) << 32) | task] = Simulator::Now();
}

void
TimelineRecorder::TaskCompleted(const ProgramRunner* runner,
                                uint32_t run,
                                uint32_t rank,
                                uint32_t task)
{
    auto& open = m_started[runner];
    const auto it = open.find((static_cast<uint64_t>(rank) << 32) | task);
    if (it == open.end())
    {
        return; // started before this recorder was attached
    }
    Span s;
    s.run = run;
    s.rank = rank;
    s.start = it->second;
    s.end = Simulator::Now();
    open.erase(it);
    const ProgramTask& t = runner->GetProgram().tasks[rank][task];
    if (t.kind == ProgramTask::Kind::Compute)
    {
        s.kind = Kind::Compute;
        s.name = "compute";
    }
    else
    {
        const ProgramComm& c = runner->GetProgram().comms[t.comm];
        s.kind = Kind::Comm;
        s.name = c.label.empty() ? fmt::format("{} {} (comm {})", c.collective, c.algorithm, t.comm)
                                 : c.label;
        s.peer = t.comm;
        s.bytes = c.bytes;
    }
    Keep(std::move(s));
}

void
TimelineRecorder::CollectiveDone(uint32_t run, uint32_t number, Ptr<const CollectiveRun> collective)
{
    const CollectiveSchedule& sched = collective->GetSchedule();
    const std::string name = fmt::format("{} {} {} B",
                                         CollectiveTypeName(sched.Type()),
                                         sched.Algorithm(),
                                         sched.TotalBytes());
    for (uint32_t local = 0; local < sched.NumRanks(); ++local)
    {
        if (!collective->IsLocalRank(local))
        {
            continue; // another process's GPU: its process records it
        }
        Span s;
        s.run = run;
        s.rank = sched.Communicator()[local];
        s.kind = Kind::Collective;
        s.peer = number;
        s.start = collective->GetStartTime();
        s.end = collective->GetRankFinishTime(local);
        s.name = name;
        s.bytes = sched.TotalBytes();
        Keep(std::move(s));
    }
}

void
TimelineRecorder::Keep(Span&& s)
{
    if (m_spans.size() < m_maxSpans)
    {
        m_spans.push_back(std::move(s));
    }
    else
    {
        ++m_dropped;
    }
}

uint64_t
TimelineRecorder::GetDropped() const
{
    return m_dropped;
}

const std::vector<TimelineRecorder::Span>&
TimelineRecorder::GetSpans() const
{
    return m_spans;
}

uint32_t
TimelineRecorder::GetNRuns() const
{
    return static_cast<uint32_t>(m_backends.size());
}

void
TimelineRecorder::GatherToRoot()
{
    if (FabricDistributed::GetSize() <= 1)
    {
        return;
    }
    nlohmann::json mine = {{"dropped", m_dropped}, {"spans", nlohmann::json::array()}};
    for (const Span& s : m_spans)
    {
        mine["spans"].push_back({s.run,
                                 s.rank,
                                 static_cast<int>(s.kind),
                                 s.start.GetTimeStep(),
                                 s.end.GetTimeStep(),
                                 s.name,
                                 s.peer,
                                 s.bytes});
    }
    const std::vector<std::string> parts = FabricDistributed::GatherToRoot(mine.dump());
    m_spans.clear();
    m_dropped = 0;
    if (parts.empty())
    {
        return; // not rank 0
    }
    std::map<std::pair<uint32_t, uint32_t>, Time> collectiveStart;
    for (const std::string& text : parts)
    {
        const nlohmann::json part = nlohmann::json::parse(text);
        m_dropped += part["dropped"].get<uint64_t>();
        for (const nlohmann::json& e : part["spans"])
        {
            Span s;
            s.run = e[0].get<uint32_t>();
            s.rank = e[1].get<uint32_t>();
            s.kind = static_cast<Kind>(e[2].get<int>());
            s.start = TimeStep(e[3].get<int64_t>());
            s.end = TimeStep(e[4].get<int64_t>());
            s.name = e[5].get<std::string>();
            s.peer = e[6].get<uint32_t>();
            s.bytes = e[7].get<uint64_t>();
            if (s.kind == Kind::Collective)
            {
                // each process knows its own ranks' first start only
                auto [it, fresh] = collectiveStart.try_emplace({s.run, s.peer}, s.start);
                it->second = fresh ? s.start : std::min(it->second, s.start);
            }
            m_spans.push_back(std::move(s));
        }
    }
    for (Span& s : m_spans)
    {
        if (s.kind == Kind::Collective)
        {
            s.start = collectiveStart.at({s.run, s.peer});
        }
    }
    SortSpans();
    if (m_spans.size() > m_maxSpans)
    {
        m_dropped += m_spans.size() - m_maxSpans;
        m_spans.resize(m_maxSpans);
    }
}

namespace
{
/// The order of spans in a trace: by end, ties in a fixed order.
bool
SpanBefore(const TimelineRecorder::Span& a, const TimelineRecorder::Span& b)
{
    return std::tie(a.end, a.run, a.rank, a.kind, a.start, a.name, a.peer, a.bytes) <
           std::tie(b.end, b.run, b.rank, b.kind, b.start, b.name, b.peer, b.bytes);
}
} // namespace

void
TimelineRecorder::SortSpans()
{
    std::stable_sort(m_spans.begin(), m_spans.end(), SpanBefore);
}

std::vector<const TimelineRecorder::Span*>
TimelineRecorder::SortedSpans() const
{
    std::vector<const Span*> sorted;
    sorted.reserve(m_spans.size());
    for (const Span& s : m_spans)
    {
        sorted.push_back(&s);
    }
    std::stable_sort(sorted.begin(), sorted.end(), [](const Span* a, const Span* b) {
        return SpanBefore(*a, *b);
    });
    return sorted;
}

void
TimelineRecorder::ForEachEvent(const std::function<void(const nlohmann::json&)>& emit) const
{
    // microseconds, the trace format's unit, from integer nanoseconds
    const auto us = [](Time t) { return static_cast<double>(t.GetNanoSeconds()) / 1e3; };
    std::set<uint32_t> runs; // runs with spans (not a backend made only for an estimate)
    for (const Span& s : m_spans)
    {
        runs.insert(s.run);
    }
    for (uint32_t run : runs)
    {
        emit({{"ph", "M"},
              {"name", "process_name"},
              {"pid", run},
              {"args", {{"name", fmt::format("run {} ({})", run, m_backends[run])}}}});
    }
    std::set<std::pair<uint32_t, uint32_t>> threads;
    uint64_t messageId = 0;
    for (const Span* span : SortedSpans())
    {
        const Span& s = *span;
        threads.emplace(s.run, s.rank);
        if (s.kind == Kind::Message)
        {
            // async: messages of one rank overlap without nesting
            const std::string name = fmt::format("{} -> {}", s.rank, s.peer);
            const nlohmann::json args = {{"src", s.rank}, {"dst", s.peer}, {"bytes", s.bytes}};
            emit({{"ph", "b"},
                  {"cat", "message"},
                  {"name", name},
                  {"id", messageId},
                  {"pid", s.run},
                  {"tid", s.rank},
                  {"ts", us(s.start)},
                  {"args", args}});
            emit({{"ph", "e"},
                  {"cat", "message"},
                  {"name", name},
                  {"id", messageId},
                  {"pid", s.run},
                  {"tid", s.rank},
                  {"ts", us(s.end)}});
            ++messageId;
            continue;
        }
        nlohmann::json e = {{"ph", "X"},
                            {"cat",
                             s.kind == Kind::Compute ? "compute"
                             : s.kind == Kind::Comm  ? "comm"
                                                     : "collective"},
                            {"name", s.name},
                            {"pid", s.run},
                            {"tid", s.rank},
                            {"ts", us(s.start)},
                            {"dur", us(s.end) - us(s.start)}};
        if (s.kind != Kind::Compute)
        {
            e["args"] = {{"bytes", s.bytes}};
            if (s.kind == Kind::Comm)
            {
                e["args"]["comm"] = s.peer;
            }
        }
        emit(e);
    }
    for (const auto& [run, rank] : threads)
    {
        emit({{"ph", "M"},
              {"name", "thread_name"},
              {"pid", run},
              {"tid", rank},
              {"args", {{"name", fmt::format("rank {}", rank)}}}});
        emit({{"ph", "M"},
              {"name", "thread_sort_index"},
              {"pid", run},
              {"tid", rank},
              {"args", {{"sort_index", rank}}}});
    }
}

nlohmann::json
TimelineRecorder::ToJson() const
{
    nlohmann::json events = nlohmann::json::array();
    ForEachEvent([&events](const nlohmann::json& e) { events.push_back(e); });
    return {{"traceEvents", events},
            {"displayTimeUnit", "ns"},
            {"otherData", {{"dropped_spans", m_dropped}}}};
}

void
TimelineRecorder::WriteJson(std::ostream& out) const
{
    // an event at a time: a document of a million spans would take gigabytes
    out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"dropped_spans\":" << m_dropped
        << "},\"traceEvents\":[";
    bool first = true;
    ForEachEvent([&](const nlohmann::json& e) {
        out << (first ? "\n" : ",\n") << e.dump();
        first = false;
    });
    out << "\n]}\n";
}

} // namespace ns3
