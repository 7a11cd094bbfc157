/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// FabricLookaheadScheduler: the map scheduler's order under any mix of
// insertions, removals and cancellations; each data plane event asked for
// its prefetch stages in order before it runs; a packet-level run identical
// to one on ns-3's map scheduler.
#include "record-now.h"

// the recurring events and their look-ahead hooks are the module's internals
#include "../model/fabric/fabric-internal.h"

#include "ns3/config.h"
#include "ns3/fabric-helper.h"
#include "ns3/fabric-lookahead-scheduler.h"
#include "ns3/global-value.h"
#include "ns3/map-scheduler.h"
#include "ns3/packet-transport.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/topology-builders.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <functional>
#include <gtest/gtest.h>
#include <random>
#include <utility>
#include <vector>

using namespace ns3;

namespace
{

/// An event that does nothing (the order tests never run one).
class NoopEvent : public EventImpl
{
  protected:
    void Notify() override
    {
    }
};

/// Events removed from a scheduler, as (time, uid).
using Order = std::vector<std::pair<uint64_t, uint32_t>>;

/// Draws an insertion's delay from the time of the last removal (negative:
/// in its past, which ns-3's simulators never schedule but a scheduler takes).
using DelayDraw = std::function<int64_t(std::mt19937&)>;

/// Delays anywhere: at or near the head (equal times), at the back, anywhere.
int64_t
AnyDelay(std::mt19937& rng)
{
    switch (rng() % 4)
    {
    case 0:
        return rng() % 3;
    case 1:
        return 1000 + rng() % 50;
    default:
        return rng() % 1000;
    }
}

/// \param n distinct delays \param past one insertion in this many goes
/// into the past (0: none) \return a draw among them (a fabric's streams:
/// propagation and serialization times), 0 included
DelayDraw
StreamDelays(uint32_t n, uint32_t past = 0)
{
    return [n, past](std::mt19937& rng) -> int64_t {
        if (past > 0 && rng() % past == 0)
        {
            return -static_cast<int64_t>(rng() % 500);
        }
        return static_cast<int64_t>(rng() % n) * 37;
    };
}

/**
 * A random mix of insertions (delays from \p delays), removals of the next
 * event and cancellations (of the head, of the window, of anything) applied
 * to \p s; \p between, if given, is called every 997 steps (to change the
 * scheduler).
 */
Order
Exercise(Ptr<Scheduler> s,
         uint32_t seed,
         const std::function<void(std::mt19937&)>& between = {},
         const DelayDraw& delays = AnyDelay)
{
    std::mt19937 rng(seed);
    std::mt19937 side(seed + 1000);
    std::vector<Ptr<EventImpl>> impls;
    std::vector<Scheduler::Event> pending;
    Order removed;
    uint64_t now = 0;
    uint32_t uid = 0;
    for (uint32_t step = 0; step < 20000; ++step)
    {
        const uint32_t op = rng() % 10;
        if (op < 5 || pending.empty())
        {
            const int64_t delay = delays(rng);
            const uint64_t ts =
                delay >= 0 ? now + delay : now - std::min<uint64_t>(now, uint64_t(-delay));
            impls.push_back(Create<NoopEvent>());
            Scheduler::Event ev{PeekPointer(impls.back()), {ts, uid++, 0}};
            s->Insert(ev);
            pending.push_back(ev);
        }
        else if (op < 8)
        {
            EXPECT_EQ(s->PeekNext().key.m_uid, s->PeekNext().key.m_uid);
            const Scheduler::Event peek = s->PeekNext();
            const Scheduler::Event ev = s->RemoveNext();
            EXPECT_EQ(peek.key.m_uid, ev.key.m_uid);
            now = ev.key.m_ts;
            removed.emplace_back(ev.key.m_ts, ev.key.m_uid);
            pending.erase(
                std::remove_if(pending.begin(),
                               pending.end(),
                               [&](const auto& e) { return e.key.m_uid == ev.key.m_uid; }),
                pending.end());
        }
        else
        {
            // cancel: mostly among the first events (the window), else any
            std::sort(pending.begin(), pending.end());
            const std::size_t n = pending.size();
            const std::size_t i = rng() % 2 ? rng() % std::min<std::size_t>(n, 8) : rng() % n;
            s->Remove(pending[i]);
            removed.emplace_back(pending[i].key.m_ts, ~pending[i].key.m_uid); // a cancel
            pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
        }
        EXPECT_EQ(s->IsEmpty(), pending.empty());
        if (const auto fabric = DynamicCast<FabricLookaheadScheduler>(s))
        {
            // what FabricDistributed::StopWhenIdle reads: window, lanes and map
            EXPECT_EQ(fabric->GetPending(), pending.size()) << "step " << step;
        }
        if (between && step % 997 == 0)
        {
            between(side); // its own draws: the operations stay the map's
        }
    }
    while (!s->IsEmpty())
    {
        const Scheduler::Event ev = s->RemoveNext();
        removed.emplace_back(ev.key.m_ts, ev.key.m_uid);
    }
    return removed;
}

TEST(FabricLookaheadSchedulerTest, RemovesInTheMapSchedulersOrder)
{
    for (uint32_t seed : {1u, 2u, 3u})
    {
        const Order expected = Exercise(CreateObject<MapScheduler>(), seed);
        ASSERT_GT(expected.size(), 20000u / 2);
        for (uint32_t depth : {1u, 2u, 3u, 5u, 6u, 16u})
        {
            auto s = CreateObject<FabricLookaheadScheduler>();
            s->SetAttribute("Depth", UintegerValue(depth));
            EXPECT_EQ(Exercise(s, seed), expected) << "seed " << seed << ", depth " << depth;
        }
        // the depth raised and lowered between removals, with events queued
        auto s = CreateObject<FabricLookaheadScheduler>();
        const Order changing = Exercise(s, seed, [&s](std::mt19937& rng) {
            s->SetAttribute("Depth", UintegerValue(1 + rng() % 16));
        });
        EXPECT_EQ(changing, expected) << "seed " << seed << ", depth changed during the run";
    }
}

TEST(FabricLookaheadSchedulerTest, TheSchedulerInUseIsTheOneMadeLast)
{
    auto first = CreateObject<FabricLookaheadScheduler>();
    EXPECT_EQ(FabricSchedulerInUse(), PeekPointer(first));
    {
        auto second = CreateObject<FabricLookaheadScheduler>();
        EXPECT_EQ(FabricSchedulerInUse(), PeekPointer(second));
    }
    // the one made last is gone: none is known to be in use
    EXPECT_EQ(FabricSchedulerInUse(), nullptr);
}

TEST(FabricLookaheadSchedulerTest, DelayLanesKeepTheMapSchedulersOrder)
{
    // a few delays: every queued event in a lane; more delays than lanes:
    // lanes freed and given to new delays, the rest in the map
    for (uint32_t delays : {5u, 100u})
    {
        for (uint32_t seed : {4u, 5u})
        {
            const Order expected =
                Exercise(CreateObject<MapScheduler>(), seed, {}, StreamDelays(delays));
            for (uint32_t depth : {1u, 5u})
            {
                auto s = CreateObject<FabricLookaheadScheduler>();
                s->SetAttribute("Depth", UintegerValue(depth));
                EXPECT_EQ(Exercise(s, seed, {}, StreamDelays(delays)), expected)
                    << delays << " delays, seed " << seed << ", depth " << depth;
                const auto counts = s->GetCounts();
                EXPECT_GT(counts.window, 0u);
                EXPECT_GT(counts.lanes, counts.window);
                if (delays <= FabricLookaheadScheduler::kMaxLanes)
                {
                    EXPECT_EQ(counts.overflow, 0u);
                    EXPECT_EQ(s->GetLaneCount(), delays);
                }
                else
                {
                    EXPECT_GT(counts.overflow, 0u);
                    EXPECT_EQ(s->GetLaneCount(), FabricLookaheadScheduler::kMaxLanes);
                }
            }
        }
    }
}

/// \param variant which steps insert at the current time (see the test)
/// \return events that went to the map, after checking the order step by step
uint64_t
WrapAndGrow(uint32_t variant)
{
    auto la = CreateObject<FabricLookaheadScheduler>();
    la->SetAttribute("Depth", UintegerValue(1));
    Ptr<Scheduler> map = CreateObject<MapScheduler>();
    std::vector<Ptr<EventImpl>> impls;
    uint32_t uid = 0;
    uint64_t now = 0;
    const auto insert = [&](uint64_t ts) {
        impls.push_back(Create<NoopEvent>());
        const Scheduler::Event ev{PeekPointer(impls.back()), {ts, uid++, 0}};
        la->Insert(ev);
        map->Insert(ev);
    };
    const auto remove = [&]() {
        const Scheduler::Event a = la->RemoveNext();
        const Scheduler::Event b = map->RemoveNext();
        EXPECT_EQ(a.key.m_uid, b.key.m_uid) << "variant " << variant;
        now = b.key.m_ts;
    };
    insert(1);
    for (uint32_t step = 0; step < 300; ++step)
    {
        const uint32_t n = 1 + (variant == 2 ? (step % 5) % 3 : step % 3);
        for (uint32_t i = 0; i < n; ++i)
        {
            insert(now + 1000);
        }
        if ((step + variant) % 2 == 0)
        {
            insert(now); // before the window's event, which goes back to a lane's front
            remove();    // the one just inserted
        }
        remove();
    }
    while (!map->IsEmpty())
    {
        EXPECT_FALSE(la->IsEmpty());
        remove();
    }
    EXPECT_TRUE(la->IsEmpty());
    return la->GetCounts().overflow;
}

TEST(FabricLookaheadSchedulerTest, ALaneThatWrapsAndGrowsKeepsItsOrder)
{
    // One delay's lane, fed one to three events per step and drained by one,
    // so that it grows by one a step on average: its ring fills with the
    // front moved on (a growth with a wrapped head) at every size. Every other
    // step also inserts an event at the current time, before the window's
    // event (depth 1), which goes back to a lane's front; in some variants
    // with the ring full (a growth at the front). Both schedulers get the
    // same operations; the removals agree, and no event went to the map.
    for (uint32_t variant : {0u, 1u, 2u})
    {
        EXPECT_EQ(WrapAndGrow(variant), 0u) << "variant " << variant;
    }
}

/// Events that record their index when they run, each rescheduling itself a
/// few times with a delay among five.
struct OrderRecorder
{
    std::vector<uint32_t> ran; //!< indices, in the order they ran
    std::mt19937 rng{9};       //!< delays

    void Run(uint32_t index, uint32_t left)
    {
        ran.push_back(index);
        if (left > 0)
        {
            Simulator::Schedule(NanoSeconds(100 * (1 + rng() % 5)),
                                &OrderRecorder::Run,
                                this,
                                index,
                                left - 1);
        }
    }
};

/// \param switchAt when to move the queued events to the look-ahead
/// scheduler (negative: never, all on the map) \return the order events ran in
std::vector<uint32_t>
RunOrder(int64_t switchAt)
{
    Simulator::SetScheduler(ObjectFactory("ns3::MapScheduler"));
    OrderRecorder rec;
    std::mt19937 rng(3);
    for (uint32_t i = 0; i < 300; ++i)
    {
        Simulator::Schedule(NanoSeconds(rng() % 5000), &OrderRecorder::Run, &rec, i, 20);
    }
    if (switchAt >= 0)
    {
        Simulator::Stop(NanoSeconds(switchAt));
        Simulator::Run();
        ObjectFactory la("ns3::FabricLookaheadScheduler");
        la.Set("MinPending", UintegerValue(0));
        Simulator::SetScheduler(la); // ns-3 moves the queued events into it
    }
    Simulator::Run();
    Simulator::Destroy();
    return rec.ran;
}

TEST(FabricLookaheadSchedulerTest, TakingOverAQueueDuringARunKeepsTheMapsOrder)
{
    // Simulator::SetScheduler during a run inserts every queued event into
    // the new scheduler, whose last removal is then none (time 0)
    const auto map = RunOrder(-1);
    ASSERT_EQ(map.size(), 300u * 21);
    EXPECT_EQ(RunOrder(0), map);
    EXPECT_EQ(RunOrder(3000), map);
}

TEST(FabricLookaheadSchedulerTest, EventsInThePastOfTheLastRemovalKeepTheOrder)
{
    // an event before the last one removed (the map takes it) moves the
    // time back when it runs; the delays measured from there must not put
    // a lane out of order
    for (uint32_t seed : {6u, 7u, 8u})
    {
        const Order expected =
            Exercise(CreateObject<MapScheduler>(), seed, {}, StreamDelays(5, 10));
        auto s = CreateObject<FabricLookaheadScheduler>();
        EXPECT_EQ(Exercise(s, seed, {}, StreamDelays(5, 10)), expected) << "seed " << seed;
        EXPECT_GT(s->GetCounts().overflow, 0u);
    }
}

TEST(FabricLookaheadSchedulerTest, ADepthOutsideOneToSixteenIsRefused)
{
    auto s = CreateObject<FabricLookaheadScheduler>();
    EXPECT_FALSE(s->SetAttributeFailSafe("Depth", UintegerValue(0)));
    EXPECT_FALSE(s->SetAttributeFailSafe("Depth", UintegerValue(17)));
    EXPECT_TRUE(s->SetAttributeFailSafe("Depth", UintegerValue(16)));
}

/// Owner of a recurring event that records the prefetch stages it is asked for.
struct StageRecorder
{
    std::vector<uint32_t> asked; //!< stages asked before it ran
    std::vector<uint32_t> atRun; //!< what `asked` held when it ran
    int64_t ranAt{-1};           //!< when it ran

    void Run()
    {
        atRun = asked;
        ranAt = Simulator::Now().GetTimeStep();
    }

    static void Prefetch(const StageRecorder& r, uint32_t stage)
    {
        const_cast<StageRecorder&>(r).asked.push_back(stage);
    }
};

/**
 * Run 50 data plane events (at 10, 20, ... ns), each followed 5 ns later by a
 * plain event, on the look-ahead scheduler; \p removed more plain events are
 * scheduled and removed before the run.
 * \param depth the Depth \param minPending the MinPending
 * \param removed events removed before the run
 * \return what each data plane event recorded, and how many plain events ran
 */
std::pair<std::vector<StageRecorder>, uint32_t>
RunStages(uint32_t depth, uint32_t minPending, uint32_t removed)
{
    ObjectFactory factory("ns3::FabricLookaheadScheduler");
    factory.Set("Depth", UintegerValue(depth));
    factory.Set("MinPending", UintegerValue(minPending));
    Simulator::SetScheduler(factory);
    const uint32_t n = 50;
    std::vector<StageRecorder> recs(n);
    using Recurring =
        FabricPrefetchingEvent<StageRecorder, &StageRecorder::Run, &StageRecorder::Prefetch>;
    std::vector<Ptr<Recurring>> events;
    uint32_t plain = 0;
    for (uint32_t i = 0; i < n; ++i)
    {
        events.push_back(Create<Recurring>(&recs[i]));
        events.back()->Schedule(0, NanoSeconds(10 * (i + 1)));
        // plain events between them move the places too, and are not data
        // plane events (nothing to ask)
        Simulator::Schedule(NanoSeconds(10 * (i + 1) + 5), [&plain] { ++plain; });
    }
    for (uint32_t i = 0; i < removed; ++i)
    {
        EventId gone = Simulator::Schedule(NanoSeconds(2000 + i), [] {});
        Simulator::Remove(gone);
    }
    Simulator::Run();
    Simulator::Destroy();
    for (uint32_t i = 0; i < n; ++i)
    {
        EXPECT_EQ(recs[i].ranAt, NanoSeconds(10 * (i + 1)).GetTimeStep());
        EXPECT_EQ(recs[i].asked, recs[i].atRun) << "asked after it ran, occurrence " << i;
    }
    return {recs, plain};
}

TEST(FabricLookaheadSchedulerTest, EachDataPlaneEventIsAskedForItsStagesInOrderBeforeItRuns)
{
    // MinPending 0: a hundred events, asked anyway
    const auto [recs, plain] = RunStages(4, 0, 0);
    EXPECT_EQ(plain, recs.size());
    // each removal moves every event a place on: depth 4 asks an event for
    // stage 1 at place 2, 2 at place 1, 3 at place 0 (the next to run); the
    // first two were already close to the head when the run began
    EXPECT_TRUE(recs[0].atRun.empty());
    EXPECT_EQ(recs[1].atRun, (std::vector<uint32_t>{2, 3}));
    for (uint32_t i = 2; i < recs.size(); ++i)
    {
        EXPECT_EQ(recs[i].atRun, (std::vector<uint32_t>{1, 2, 3})) << "occurrence " << i;
    }
}

TEST(FabricLookaheadSchedulerTest, BelowMinPendingQueuedEventsNothingIsAsked)
{
    // 100 events run (ten more removed before: not counted any more): after
    // the r-th removal (0: the first) 99 - r are queued, so with MinPending 60
    // the removals up to r = 39 ask. The data plane event i is the (2i)-th;
    // with depth 4 it is asked for stage 1 at removal 2i - 3, 2 at 2i - 2, 3
    // at 2i - 1.
    const auto [recs, plain] = RunStages(4, 60, 10);
    EXPECT_EQ(plain, recs.size());
    for (uint32_t i = 2; i <= 20; ++i)
    {
        EXPECT_EQ(recs[i].atRun, (std::vector<uint32_t>{1, 2, 3})) << "occurrence " << i;
    }
    EXPECT_EQ(recs[21].atRun, (std::vector<uint32_t>{1}));
    for (uint32_t i = 22; i < recs.size(); ++i)
    {
        EXPECT_TRUE(recs[i].atRun.empty()) << "occurrence " << i;
    }
}

/// A packet-level run: completion time of every message, and the event count.
std::pair<std::vector<int64_t>, uint64_t>
PacketRun(const std::string& scheduler, uint32_t depth, const std::string& lb = "ecmp")
{
    GlobalValue::Bind("SchedulerType", StringValue(scheduler));
    if (scheduler == "ns3::FabricLookaheadScheduler")
    {
        Config::SetDefault("ns3::FabricLookaheadScheduler::Depth", UintegerValue(depth));
        // a 64-host run queues a few hundred events: prefetch anyway
        Config::SetDefault("ns3::FabricLookaheadScheduler::MinPending", UintegerValue(0));
    }
    ClusterParams p;
    p.gpus = 64;
    p.platform = HbDomainPreset::Custom(1, DataRate("100Gbps"), DataRate("100Gbps"));
    p.radix = 8;
    p.linkDelayNs = 1000;
    FabricHelper helper;
    helper.SetSwitchAttribute("LoadBalancing", StringValue(lb));
    Ptr<Fabric> fabric = helper.Install(BuildFatTree(p));
    Ptr<PacketTransport> t = fabric->GetTransport();
    std::mt19937 rng(11);
    std::vector<Time> done(256);
    for (uint32_t i = 0; i < done.size(); ++i)
    {
        const uint32_t s = rng() % p.gpus;
        const uint32_t d = (s + 1 + rng() % (p.gpus - 1)) % p.gpus;
        const uint64_t bytes = 1000 + rng() % 300'000;
        Simulator::Schedule(NanoSeconds(rng() % 20000), [t, s, d, bytes, i, &done] {
            t->Send(s, d, bytes, MakeBoundCallback(&gpu_fabric_test::RecordNow, &done[i]));
        });
    }
    Simulator::Run();
    std::vector<int64_t> out;
    for (const Time& x : done)
    {
        out.push_back(x.GetTimeStep());
    }
    const uint64_t events = Simulator::GetEventCount();
    fabric->Dispose();
    Simulator::Destroy();
    GlobalValue::Bind("SchedulerType", StringValue("ns3::MapScheduler"));
    // the attribute's own default again, for the tests after this one
    for (const char* name : {"Depth", "MinPending"})
    {
        TypeId::AttributeInformation info;
        FabricLookaheadScheduler::GetTypeId().LookupAttributeByName(name, &info);
        Config::SetDefault(std::string("ns3::FabricLookaheadScheduler::") + name,
                           *info.initialValue);
    }
    return {out, events};
}

TEST(FabricLookaheadSchedulerTest, APacketRunIsTheMapSchedulersRun)
{
    const auto map = PacketRun("ns3::MapScheduler", 0);
    for (int64_t t : map.first)
    {
        ASSERT_GT(t, 0); // every message completed
    }
    for (uint32_t depth : {1u, 3u, 5u, 6u, 12u})
    {
        const auto la = PacketRun("ns3::FabricLookaheadScheduler", depth);
        EXPECT_EQ(la.first, map.first) << "depth " << depth;
        EXPECT_EQ(la.second, map.second) << "depth " << depth;
    }
}

TEST(FabricLookaheadSchedulerTest, APacketRunIsTheMapSchedulersRunUnderEveryBalancer)
{
    // asking a node for the port a packet will take must not take a turn
    // of spraying's round robin (nor touch a flowlet's table): the
    // prefetch once did, and sprayed runs differed from the map's
    for (const std::string lb : {"spray", "flowlet", "adaptive"})
    {
        const auto map = PacketRun("ns3::MapScheduler", 0, lb);
        for (uint32_t depth : {1u, 6u})
        {
            const auto la = PacketRun("ns3::FabricLookaheadScheduler", depth, lb);
            EXPECT_EQ(la.first, map.first) << lb << ", depth " << depth;
            EXPECT_EQ(la.second, map.second) << lb << ", depth " << depth;
        }
    }
}

} // namespace
