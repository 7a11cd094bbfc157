/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Work bounded up front and progress shown while a long run goes on: the
 * backends' estimates, the refusal by FabricRequireWork and its global
 * limit, and RunProgress, which must neither change results nor keep a run
 * alive.
 */
#include "ns3/boolean.h"
#include "ns3/collective-helper.h"
#include "ns3/double.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-helper.h"
#include "ns3/fabric-work.h"
#include "ns3/flow-helper.h"
#include "ns3/global-value.h"
#include "ns3/run-progress.h"
#include "ns3/simulator.h"
#include "ns3/topology-builders.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

FabricTopology
SmallRailOnly()
{
    ClusterParams p;
    p.gpus = 16;
    p.radix = 64;
    p.platform = HbDomainPreset::Get("dgx-h100");
    return BuildRailOnly(p);
}

/// Restores a global value when the test ends, whatever it asserted.
class GlobalGuard
{
  public:
    explicit GlobalGuard(std::string name)
        : m_name(std::move(name))
    {
        GlobalValue::GetValueByName(m_name, m_old);
    }

    ~GlobalGuard()
    {
        GlobalValue::Bind(m_name, m_old);
    }

  private:
    std::string m_name;
    DoubleValue m_old;
};

/// What a run left behind: its result, when Simulator::Run() returned, and
/// how many events ran.
struct WatchedRun
{
    CollectiveResult result;
    Time end;
    uint64_t events{0};
};

/// Runs a ring allreduce of \p bytes on \p transport (16 GPUs), with a
/// RunProgress reporting every millisecond of wall time if \p reports is
/// not null.
WatchedRun
RunAllReduce(Ptr<Transport> transport, uint64_t bytes, std::vector<RunProgress::Report>* reports)
{
    Ptr<RunProgress> progress;
    if (reports)
    {
        progress = CreateObject<RunProgress>();
        progress->SetAttribute("Interval", TimeValue(MilliSeconds(1)));
        progress->TraceConnectWithoutContext(
            "Progress",
            MakeCallback(+[](std::vector<RunProgress::Report>* out, const RunProgress::Report& r) {
                out->push_back(r);
            }).Bind(reports));
        // a ring allreduce sends 2 (N-1)/N of the buffer from each of N ranks
        progress->Install(transport, 2 * 15 * bytes);
    }
    CollectiveHelper helper(transport);
    Ptr<CollectiveRun> run =
        helper.Install(CollectiveHelper::AllRanks(16), "allreduce", "ring", bytes, Seconds(0));
    const uint64_t before = Simulator::GetEventCount();
    Simulator::Run();
    WatchedRun w{run->GetResult(), Simulator::Now(), Simulator::GetEventCount() - before};
    if (progress)
    {
        progress->Dispose();
    }
    return w;
}

} // namespace

TEST(WorkEstimate, PacketLevelCountsEventsPerPacketAtTheReferenceRate)
{
    Ptr<Fabric> fabric = FabricHelper().Install(SmallRailOnly());
    Ptr<PacketTransport> t = fabric->GetTransport();
    const double payload = t->GetPayloadPerPacket();
    ASSERT_GT(payload, 0);
    const double expected = PacketTransport::kEventsPerPacket * (1e9 / payload + 100) /
                            FabricWorkRates::kPacketEventsPerSecond;
    EXPECT_DOUBLE_EQ(t->EstimateRunSeconds(100, 1000000000), expected);
    // twice the bytes, nearly twice the time; bytes cost more than messages
    EXPECT_GT(t->EstimateRunSeconds(100, 2000000000), 1.9 * expected);
    Simulator::Destroy();
}

TEST(WorkEstimate, FlowLevelCountsMessagesAndNotBytes)
{
    Ptr<FlowTransport> t = FlowHelper().Install(SmallRailOnly());
    EXPECT_DOUBLE_EQ(t->EstimateRunSeconds(1000, 1),
                     1000 / FabricWorkRates::kFlowMessagesPerSecond);
    EXPECT_DOUBLE_EQ(t->EstimateRunSeconds(1000, 10000000000000ULL),
                     t->EstimateRunSeconds(1000, 1));
    Simulator::Destroy();
}

TEST(WorkEstimate, ARunOverTheLimitIsRefusedByItsParameterWithTheEstimate)
{
    GlobalGuard guard("GpuFabricMaxRunSeconds");
    EXPECT_DOUBLE_EQ(FabricMaxRunSeconds(), 43200);
    EXPECT_NO_THROW(FabricRequireWork(43200, "--max-bytes", 1, "the sweep"));
    try
    {
        FabricRequireWork(2 * 86400, "--max-bytes", "17592186044416", "the sweep's 3e+11 events");
        ADD_FAILURE() << "not refused";
    }
    catch (const FabricConfigError& e)
    {
        const std::string what = e.what();
        EXPECT_EQ(e.Parameter(), "--max-bytes");
        EXPECT_NE(what.find("17592186044416"), std::string::npos) << what;
        EXPECT_NE(what.find("the sweep's 3e+11 events would take about 2 days"), std::string::npos)
            << what;
        EXPECT_NE(what.find("GpuFabricMaxRunSeconds=43200"), std::string::npos) << what;
    }
    // an estimate that is not a number is refused, not let through
    EXPECT_THROW(FabricRequireWork(std::nan(""), "--x", 1, "w"), FabricConfigError);
    GlobalValue::Bind("GpuFabricMaxRunSeconds", DoubleValue(0)); // 0 lifts the limit
    EXPECT_NO_THROW(FabricRequireWork(1e30, "--max-bytes", 1, "the sweep"));
    GlobalValue::Bind("GpuFabricMaxRunSeconds", DoubleValue(10));
    EXPECT_THROW(FabricRequireWork(11, "--max-bytes", 1, "the sweep"), FabricConfigError);
}

TEST(WorkEstimate, DurationsReadAsAPersonWouldSayThem)
{
    EXPECT_EQ(FabricDurationText(40), "40 s");
    EXPECT_EQ(FabricDurationText(600), "10 minutes");
    EXPECT_EQ(FabricDurationText(3 * 3600), "3.0 hours");
    EXPECT_EQ(FabricDurationText(10 * 86400), "10 days");
    EXPECT_EQ(FabricDurationText(1e12), "over 1000 years");
    EXPECT_EQ(FabricDurationText(std::numeric_limits<double>::infinity()), "over 1000 years");
}

TEST(RunProgressTest, ReportsWithoutChangingResultsOrKeepingTheRunAlive)
{
    // both backends: the watcher schedules nothing, so the run's events, its
    // result and the time Simulator::Run() returns at are the very same
    for (const bool packet : {true, false})
    {
        SCOPED_TRACE(packet ? "packet" : "flow");
        // the flow level moves a buffer in a few events: a larger one, so
        // that its run outlasts a millisecond of wall time too
        const uint64_t bytes = packet ? 64ULL << 20 : 64ULL << 30;
        const auto make = [packet]() -> Ptr<Transport> {
            if (packet)
            {
                return FabricHelper().Install(SmallRailOnly())->GetTransport();
            }
            return FlowHelper().Install(SmallRailOnly());
        };
        const WatchedRun plain = RunAllReduce(make(), bytes, nullptr);
        Simulator::Destroy();
        std::vector<RunProgress::Report> reports;
        const WatchedRun watched = RunAllReduce(make(), bytes, &reports);
        Simulator::Destroy();
        EXPECT_TRUE(watched.result.complete);
        EXPECT_EQ(watched.result.timeS, plain.result.timeS);
        EXPECT_EQ(watched.result.bytesSent, plain.result.bytesSent);
        EXPECT_EQ(watched.result.bytesSent, 2 * 15 * bytes);
        EXPECT_EQ(watched.end, plain.end);
        EXPECT_EQ(watched.events, plain.events);
        if (packet)
        {
            // hundreds of thousands of events take more than a millisecond
            ASSERT_FALSE(reports.empty());
        }
        uint64_t lastBytes = 0;
        for (const auto& r : reports)
        {
            EXPECT_GE(r.bytesDelivered, lastBytes);
            EXPECT_LE(r.bytesDelivered, r.bytesExpected);
            EXPECT_LE(r.now, watched.end);
            EXPECT_GT(r.events, 0u);
            lastBytes = r.bytesDelivered;
            const std::string line = RunProgress::Describe(r);
            EXPECT_EQ(line.rfind("progress: ", 0), 0u) << line;
        }
    }
}

TEST(WorkEstimate, ACollectiveThatCannotFinishIsRefusedWhenInstalledNotWhenItRuns)
{
    GlobalGuard guard("GpuFabricMaxRunSeconds");
    Ptr<Fabric> fabric = FabricHelper().Install(SmallRailOnly());
    Ptr<PacketTransport> t = fabric->GetTransport();
    CollectiveHelper helper(fabric);
    const auto ranks = CollectiveHelper::AllRanks(16);
    // 10^13 bytes at packet level: about 3e14 bytes moved, days of wall time
    try
    {
        helper.Install(ranks, "allreduce", "ring", 10000000000000ULL, Seconds(0));
        ADD_FAILURE() << "not refused";
    }
    catch (const FabricConfigError& e)
    {
        const std::string what = e.what();
        EXPECT_EQ(e.Parameter(), "collective");
        EXPECT_NE(what.find("allreduce (ring) of 10000000000000 bytes on 16 ranks"),
                  std::string::npos)
            << what;
        EXPECT_NE(what.find("days"), std::string::npos) << what;
    }
    EXPECT_EQ(t->GetExpectedSeconds(), 0); // a refused collective adds nothing
    helper.Install(ranks, "allreduce", "ring", 1 << 20, Seconds(0));
    const double small = t->GetExpectedSeconds();
    EXPECT_GT(small, 0);
    EXPECT_LT(small, 1);
    GlobalValue::Bind("GpuFabricMaxRunSeconds", DoubleValue(0)); // lifted: accepted
    Ptr<Transport>(t)->SetAttribute("ShowProgress", BooleanValue(false));
    helper.Install(ranks, "allreduce", "ring", 10000000000000ULL, Seconds(0));
    EXPECT_GT(t->GetExpectedSeconds(), 43200);
    Simulator::Destroy();
}
