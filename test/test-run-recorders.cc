/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * TimelineRecorder and LinkUtilizationRecorder, attached through
 * RunObserver as the programs' --timeline and --link-util attach them: the
 * timeline's spans add up to the run's time (a collective's longest span is
 * its measured time, a program's last span ends at its finish, a chain of
 * tasks fills its rank's time), its messages carry the bytes sent; a link's
 * utilization integrates to the bytes it carried (the device's counter at
 * packet level, the message's wire bytes at flow level), on both backends.
 */
#include "rail-only-16.h"

#include "ns3/collective-helper.h"
#include "ns3/fabric.h"
#include "ns3/flow-transport.h"
#include "ns3/iteration-program.h"
#include "ns3/link-utilization-recorder.h"
#include "ns3/simulator.h"
#include "ns3/timeline-recorder.h"
#include "ns3/topology-builders.h"
#include "ns3/transport-helper.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

using gpu_fabric_test::RailOnly16;

/// Registers an observer for the scope of a test.
struct Observing
{
    explicit Observing(Ptr<RunObserver> o)
        : observer(o)
    {
        RunObserver::Add(o);
    }

    ~Observing()
    {
        RunObserver::Remove(observer);
    }

    Ptr<RunObserver> observer;
};

class TimelineOnBackend : public ::testing::TestWithParam<std::string>
{
};

TEST_P(TimelineOnBackend, ACollectiveSpanIsItsMeasuredTime)
{
    auto timeline = CreateObject<TimelineRecorder>();
    CollectiveResult r;
    {
        Observing o(timeline);
        r = TransportHelper(GetParam())
                .RunCollectiveAlone(RailOnly16(), 0, 1, "allreduce", "ring", 1 << 20);
    }
    ASSERT_TRUE(r.complete);
    EXPECT_EQ(timeline->GetNRuns(), 1U);
    Time longest;
    uint32_t collectiveSpans = 0;
    uint64_t messageBytes = 0;
    std::vector<uint32_t> ranks;
    for (const auto& s : timeline->GetSpans())
    {
        if (s.kind == TimelineRecorder::Kind::Collective)
        {
            ++collectiveSpans;
            EXPECT_EQ(s.start, Seconds(0));
            longest = std::max(longest, s.end - s.start);
            EXPECT_EQ(s.name, "allreduce ring 1048576 B");
            ranks.push_back(s.rank);
        }
        else
        {
            ASSERT_EQ(s.kind, TimelineRecorder::Kind::Message);
            messageBytes += s.bytes;
            EXPECT_LE(s.start, s.end);
        }
    }
    EXPECT_EQ(collectiveSpans, 16U);
    std::sort(ranks.begin(), ranks.end());
    EXPECT_EQ(std::unique(ranks.begin(), ranks.end()) - ranks.begin(), 16);
    EXPECT_DOUBLE_EQ(longest.GetSeconds(), r.timeS);
    EXPECT_EQ(messageBytes, r.bytesSent);
    // every message within the collective
    for (const auto& s : timeline->GetSpans())
    {
        EXPECT_LE(s.end.GetSeconds(), r.timeS + 1e-15);
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, TimelineOnBackend, ::testing::Values("packet", "flow"));

/// Four ranks: compute 3 us, an allreduce of the four, compute 5 us, a
/// sendrecv from rank 0 to 1 (ranks 0 and 1 only), one after the other.
ParallelProgram
ChainProgram()
{
    ParallelProgram p;
    p.ranks = 4;
    ProgramComm ar;
    ar.collective = "allreduce";
    ar.members = {0, 1, 2, 3};
    ar.bytes = 1 << 18;
    ar.label = "tp-allreduce";
    ProgramComm sr;
    sr.collective = "sendrecv";
    sr.members = {0, 1};
    sr.bytes = 1 << 16;
    sr.label = "pp-send";
    p.comms = {ar, sr};
    p.tasks.resize(4);
    for (uint32_t r = 0; r < 4; ++r)
    {
        auto& t = p.tasks[r];
        t.push_back({ProgramTask::Kind::Compute, 3e-6, 0, {}});
        t.push_back({ProgramTask::Kind::Comm, 0, 0, {0}});
        t.push_back({ProgramTask::Kind::Compute, 5e-6, 0, {1}});
        if (r < 2)
        {
            t.push_back({ProgramTask::Kind::Comm, 0, 1, {2}});
        }
    }
    return p;
}

TEST_P(TimelineOnBackend, AProgramsSpansFillItsRanksAndEndAtItsFinish)
{
    auto timeline = CreateObject<TimelineRecorder>();
    Time finish;
    std::vector<Time> rankFinish;
    {
        Observing o(timeline);
        InstalledTransport t = TransportHelper(GetParam()).Install(RailOnly16());
        Ptr<ProgramRunner> runner = RunProgram(ChainProgram(), t.transport);
        ASSERT_TRUE(runner->IsComplete());
        finish = runner->GetFinishTime();
        for (uint32_t r = 0; r < 4; ++r)
        {
            rankFinish.push_back(runner->GetRankFinishTime(r));
        }
        t.Dispose();
        Simulator::Destroy();
    }
    std::vector<Time> busy(4);
    std::map<std::string, uint32_t> names;
    Time last;
    for (const auto& s : timeline->GetSpans())
    {
        if (s.kind == TimelineRecorder::Kind::Message)
        {
            continue;
        }
        // a program's collectives are its comm tasks, not spans of their own
        ASSERT_NE(s.kind, TimelineRecorder::Kind::Collective);
        ASSERT_LT(s.rank, 4U);
        busy[s.rank] += s.end - s.start;
        last = std::max(last, s.end);
        ++names[s.name];
        if (s.kind == TimelineRecorder::Kind::Compute)
        {
            EXPECT_TRUE(s.end - s.start == MicroSeconds(3) || s.end - s.start == MicroSeconds(5));
        }
    }
    EXPECT_EQ(last, finish);
    // each rank's tasks run one after the other from 0: they fill its time
    for (uint32_t r = 0; r < 4; ++r)
    {
        EXPECT_EQ(busy[r], rankFinish[r]) << "rank " << r;
    }
    EXPECT_EQ(names["compute"], 8U);
    EXPECT_EQ(names["tp-allreduce"], 4U);
    EXPECT_EQ(names["pp-send"], 2U);

    // the trace format: microseconds, one complete event per task
    const nlohmann::json j = timeline->ToJson();
    double lastEndUs = 0;
    uint32_t complete = 0;
    uint32_t begins = 0;
    uint32_t ends = 0;
    for (const auto& e : j["traceEvents"])
    {
        const std::string ph = e["ph"];
        if (ph == "X")
        {
            ++complete;
            lastEndUs = std::max(lastEndUs, e["ts"].get<double>() + e["dur"].get<double>());
        }
        begins += ph == "b";
        ends += ph == "e";
    }
    EXPECT_EQ(complete, 14U);
    EXPECT_EQ(begins, ends);
    EXPECT_GT(begins, 0U);
    EXPECT_NEAR(lastEndUs, finish.GetSeconds() * 1e6, 1e-6);
}

TEST(LinkUtilization, PacketLevelIntegratesToTheDevicesBytes)
{
    auto util = CreateObject<LinkUtilizationRecorder>();
    const FabricTopology topo = RailOnly16();
    Observing o(util);
    InstalledTransport t = TransportHelper("packet").Install(topo);
    Ptr<CollectiveRun> run = CollectiveHelper(t.fabric).Install(CollectiveHelper::AllRanks(16),
                                                                "alltoall",
                                                                "direct",
                                                                1 << 20,
                                                                Seconds(0));
    Simulator::Run();
    ASSERT_TRUE(run->IsComplete());
    ASSERT_EQ(util->GetNRuns(), 1U);
    // the recorder lists, per cable, the a end's device then the b end's
    std::vector<uint64_t> deviceBytes;
    for (uint32_t c = 0; c < topo.Cables().size(); ++c)
    {
        const auto [a, b] = t.fabric->GetCableDevices(c);
        deviceBytes.push_back(a->GetStats().txBytes);
        deviceBytes.push_back(b->GetStats().txBytes);
    }
    run = nullptr;
    t.Dispose();
    Simulator::Destroy();
    const auto& links = util->GetLinks();
    ASSERT_EQ(links.size(), deviceBytes.size());
    const Time end = util->GetEnd(0);
    const Time bin = NanoSeconds((end.GetNanoSeconds() + 99) / 100);
    uint32_t busy = 0;
    std::map<std::string, double> byClass;
    for (uint32_t l = 0; l < links.size(); ++l)
    {
        const double bytes = util->GetBytes(l);
        EXPECT_EQ(bytes, static_cast<double>(deviceBytes[l])) << links[l].name;
        const auto bins = util->GetBinBytes(l, bin, 100);
        double sum = 0;
        for (double b : bins)
        {
            sum += b;
            // no bin above the link's rate (but for a frame's serialization
            // time rounded to whole nanoseconds: 82 ns for 81.9)
            EXPECT_LE(b * 8, links[l].capacityBps * bin.GetSeconds() * 1.02);
        }
        EXPECT_NEAR(sum, bytes, 1e-6 * bytes + 1e-9);
        busy += bytes > 0;
        byClass[LinkUtilizationRecorder::ClassName(links[l].kind)] += bytes;
    }
    EXPECT_GT(busy, 0U);
    // an all-to-all on rail-only crosses NVLink and rails, no spine
    EXPECT_GT(byClass["nvlink"], 0);
    EXPECT_GT(byClass["nic-rail"], 0);
    EXPECT_EQ(byClass["leaf-spine"], 0);
    // the JSON's utilization times capacity and bin is the bytes again
    const nlohmann::json j = util->ToJson();
    ASSERT_EQ(j["runs"].size(), 1U);
    const double binS = j["runs"][0]["bin_s"];
    for (const auto& c : j["runs"][0]["classes"])
    {
        double sum = 0;
        for (double u : c["utilization"])
        {
            sum += u * c["capacity_bps"].get<double>() * binS / 8;
        }
        EXPECT_NEAR(sum, byClass[c["class"]], 1e-6 * byClass[c["class"]] + 1e-6) << c["class"];
    }
}

TEST(LinkUtilization, FlowLevelIntegratesToTheMessagesWireBytes)
{
    const FabricTopology topo = RailOnly16();
    for (const std::string backend : {"flow", "packet"})
    {
        auto util = CreateObject<LinkUtilizationRecorder>();
        Observing o(util);
        InstalledTransport t = TransportHelper(backend).Install(topo);
        // rank 0 to rank 8: the same local index in the other domain, along its rail
        const uint64_t bytes = 1'000'000;
        t.transport->Send(0, 8, bytes, Transport::DoneCallback());
        Simulator::Run();
        ASSERT_EQ(t.transport->GetTotals().bytesDelivered, bytes) << backend;
        t.Dispose();
        Simulator::Destroy();
        // 245 packets of 4096 payload bytes (the last shorter), 26 header bytes each
        const double packets = (bytes + 4095) / 4096;
        const double wire = static_cast<double>(bytes) + packets * 26;
        uint32_t onPath = 0;
        for (uint32_t l = 0; l < util->GetLinks().size(); ++l)
        {
            const double b = util->GetBytes(l);
            if (b == 0)
            {
                continue;
            }
            ++onPath;
            // within one packet of the wire bytes
            EXPECT_NEAR(b, wire, 4096 + 26) << backend << " " << util->GetLinks()[l].name;
            EXPECT_EQ(util->GetLinks()[l].kind, TopoLinkKind::Nic) << backend;
        }
        // GPU to rail switch, rail switch to GPU
        EXPECT_EQ(onPath, 2U) << backend;
    }
}

} // namespace

namespace
{

TEST(TimelineRecorder, KeepsAtMostMaxSpansAndCountsTheRest)
{
    std::vector<uint64_t> kept;
    std::vector<uint64_t> dropped;
    for (const uint32_t max : {1000000U, 10U})
    {
        auto timeline = CreateObject<TimelineRecorder>();
        timeline->SetAttribute("MaxSpans", UintegerValue(max));
        Observing o(timeline);
        TransportHelper("flow")
            .RunCollectiveAlone(RailOnly16(), 0, 1, "allgather", "ring", 1 << 20);
        kept.push_back(timeline->GetSpans().size());
        dropped.push_back(timeline->GetDropped());
        EXPECT_EQ(timeline->ToJson()["otherData"]["dropped_spans"], timeline->GetDropped());
    }
    EXPECT_EQ(dropped[0], 0U);
    EXPECT_GT(kept[0], 10U);
    EXPECT_EQ(kept[1], 10U);
    EXPECT_EQ(dropped[1], kept[0] - 10);
}

} // namespace
