/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// BFB schedules as CollectiveSchedules: every conversion passes the checker,
// bytes are conserved, rounding to whole chunks is exact when it can be, and
// on the packet-level direct-connect fabric the allgather time matches the
// alpha-beta prediction alpha * T_L + T_B * M / B.
#include "ns3/bfb-collective.h"
#include "ns3/collective-helper.h"
#include "ns3/fabric-error.h"
#include "ns3/schedule-checker.h"
#include "ns3/simulator.h"
#include "ns3/topology-builders.h"
#include "ns3/topology-finder.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <numeric>

using namespace ns3;

namespace
{

constexpr double kPayloadShare = 4096.0 / 4122.0; // goodput of a full packet

const std::vector<std::string> kGraphs{"BiRing(4)",
                                       "Ring(5)",
                                       "K(5)",
                                       "K(4,4)",
                                       "Hypercube(3)",
                                       "Torus(3,3)",
                                       "Hamming(2,3)",
                                       "C(8,{1,2})",
                                       "Petersen",
                                       "Kautz(2,3)",
                                       "GenKautz(2,7)",
                                       "GenKautz(3,10)",
                                       "L(K(4,4))",
                                       "Deg(BiRing(4),2)",
                                       "Prod(BiRing(4),K(3))"};

/// bytes every host must receive: allgather / reduce-scatter (N-1)/N of M, allreduce twice
uint64_t
ExpectedBytesMoved(const BfbSchedule& s, uint64_t m)
{
    const auto shards = SplitBytes(m, s.nodes);
    uint64_t one = 0;
    for (uint32_t v = 0; v < s.nodes; ++v)
    {
        one += m - shards[v];
    }
    return s.kind == SynthCollective::ALLREDUCE ? 2 * one : one;
}

BfbSchedule
Make(const DirectConnectGraph& g, SynthCollective kind)
{
    switch (kind)
    {
    case SynthCollective::ALLGATHER:
        return BfbAllGather(g);
    case SynthCollective::REDUCE_SCATTER:
        return BfbReduceScatter(g);
    case SynthCollective::ALLREDUCE:
        return BfbAllReduce(g);
    }
    return BfbAllGather(g);
}

class BfbConvert : public ::testing::TestWithParam<std::string>
{
};

TEST_P(BfbConvert, EveryCollectivePassesTheCheckerAndConservesBytes)
{
    const DirectConnectGraph g = BuildFromName(GetParam());
    for (auto kind :
         {SynthCollective::ALLGATHER, SynthCollective::REDUCE_SCATTER, SynthCollective::ALLREDUCE})
    {
        const BfbSchedule s = Make(g, kind);
        const uint64_t exact = BfbExactChunksPerShard(s);
        std::vector<uint32_t> cpsList{1, 3};
        if (exact <= 64)
        {
            cpsList.push_back(static_cast<uint32_t>(exact));
        }
        for (uint32_t cps : cpsList)
        {
            // an M that does not divide evenly, so remainders are exercised
            for (uint64_t m : {uint64_t{1'000'003}, uint64_t{7}})
            {
                SCOPED_TRACE(fmt::format("{} {} cps {} M {}", GetParam(), ToString(kind), cps, m));
                BfbChunkPlan plan;
                const CollectiveSchedule cs = BfbToCollectiveSchedule(s, m, cps, &plan);
                const ScheduleCheckResult r = ScheduleChecker::Check(cs);
                ASSERT_TRUE(r.Ok()) << r.message;
                EXPECT_EQ(cs.NumRanks(), g.NumNodes());
                EXPECT_EQ(cs.NumChunks(), g.NumNodes() * cps);
                EXPECT_EQ(cs.TotalBytesSent(), cs.TotalBytesReceived());
                EXPECT_EQ(cs.TotalBytesSent(), ExpectedBytesMoved(s, m));
                for (uint32_t u = 0; u < g.NumNodes(); ++u)
                {
                    if (kind == SynthCollective::ALLGATHER)
                    {
                        EXPECT_EQ(cs.BytesReceived(u), m - SplitBytes(m, g.NumNodes())[u]);
                    }
                    if (kind == SynthCollective::REDUCE_SCATTER)
                    {
                        EXPECT_EQ(cs.BytesSent(u), m - SplitBytes(m, g.NumNodes())[u]);
                    }
                }
                // only arcs of the graph carry data
                for (const auto& x : plan.transfers)
                {
                    ASSERT_LT(x.arc, g.NumArcs());
                    EXPECT_EQ(g.GetArc(x.arc).from, x.from);
                    EXPECT_EQ(g.GetArc(x.arc).to, x.to);
                }
                ASSERT_EQ(plan.stepRoundingError.size(), s.Steps());
                for (uint32_t t = 0; t < s.Steps(); ++t)
                {
                    if (cps % exact == 0)
                    {
                        EXPECT_EQ(plan.stepRoundingError[t], Fraction(0)) << "step " << t + 1;
                    }
                    else
                    {
                        // floor or ceil of every piece's share: within one chunk per piece
                        // handled on the arc; the lag rule keeps it to about one chunk
                        EXPECT_LE(ToDouble(plan.stepRoundingError[t]), 2.0 / cps + 1e-12)
                            << "step " << t + 1;
                    }
                }
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Graphs,
                         BfbConvert,
                         ::testing::ValuesIn(kGraphs),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                             std::string n;
                             for (char c : info.param)
                             {
                                 n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                             }
                             return n;
                         });

TEST(BfbConvertExact, WorkedExamplesHaveExactArcLoads)
{
    // 4-node bidirectional ring: loads [1, 1/2]; with 2 chunks per shard the
    // opposite shard is split one chunk per neighbour.
    const BfbSchedule ring = BfbAllGather(MakeBiRing(4));
    EXPECT_EQ(BfbExactChunksPerShard(ring), 2u);
    const uint64_t m = 4 * 2 * 1000;
    BfbChunkPlan plan = PlanBfbChunks(ring, m, 2);
    ASSERT_EQ(plan.stepMaxArcBytes.size(), 2u);
    EXPECT_EQ(plan.stepMaxArcBytes[0], 2000u);
    EXPECT_EQ(plan.stepMaxArcBytes[1], 1000u);
    // one chunk per shard cannot split the opposite shard: one neighbour carries
    // all of it, so the busiest arc of step 2 carries a whole shard, not half
    plan = PlanBfbChunks(ring, m, 1);
    EXPECT_EQ(plan.stepMaxArcBytes[1], 2000u);
    EXPECT_EQ(plan.stepRoundingError[1], Fraction(1, 2));
    // K(4,4): loads [1, 3/4]
    const BfbSchedule k44 = BfbAllGather(MakeCompleteBipartite(4));
    const uint32_t cps = static_cast<uint32_t>(BfbExactChunksPerShard(k44));
    plan = PlanBfbChunks(k44, 8 * cps * 100, cps);
    const auto loads = k44.StepLoads();
    for (size_t t = 0; t < loads.size(); ++t)
    {
        EXPECT_EQ(Fraction(plan.stepMaxArcBytes[t], cps * 100), loads[t]);
    }
}

TEST(BfbConvertExact, ExpansionSchedulesConvert)
{
    const DirectConnectGraph k44 = MakeCompleteBipartite(4);
    const DirectConnectGraph ring = MakeBiRing(4);
    const BfbSchedule sk = BfbAllGather(k44);
    const BfbSchedule sr = BfbAllGather(ring);
    std::vector<ExpansionResult> expansions;
    expansions.push_back(ExpandLineGraph(k44, sk));
    expansions.push_back(ExpandDegree(ring, sr, 2));
    expansions.push_back(ExpandProduct(ring, sr, k44, sk));
    expansions.push_back(ExpandPower(ring, sr, 2));
    for (const auto& e : expansions)
    {
        SCOPED_TRACE(e.graph.Name());
        const uint64_t exact = BfbExactChunksPerShard(e.schedule);
        for (uint32_t cps : {1u, static_cast<uint32_t>(std::min<uint64_t>(exact, 48))})
        {
            const CollectiveSchedule cs = BfbToCollectiveSchedule(e.schedule, 123'457, cps);
            const ScheduleCheckResult r = ScheduleChecker::Check(cs);
            EXPECT_TRUE(r.Ok()) << "cps " << cps << ": " << r.message;
        }
    }
}

TEST(BfbConvertExact, BadParametersAreRejected)
{
    const BfbSchedule s = BfbAllGather(MakeBiRing(4));
    try
    {
        PlanBfbChunks(s, 1000, 0);
        FAIL() << "chunksPerShard 0 accepted";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_EQ(e.Parameter(), "chunksPerShard");
    }
    BfbOptions o;
    o.keepSchedule = false;
    EXPECT_THROW(BfbToCollectiveSchedule(BfbAllGather(MakeBiRing(4), o), 1000, 2),
                 FabricConfigError);
}

/// A graph whose BFB loads are balanced, simulated on the packet-level fabric.
struct SimCase
{
    std::string graph;
};

/// gtest names a case by this, not by its bytes
void
PrintTo(const SimCase& c, std::ostream* os)
{
    *os << c.graph;
}

class BfbSimulate : public ::testing::TestWithParam<SimCase>
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
    }
};

TEST_P(BfbSimulate, AllGatherTimeMatchesAlphaBeta)
{
    const DirectConnectGraph g = BuildFromName(GetParam().graph);
    const BfbSchedule s = BfbAllGather(g);
    const uint64_t nodeBandwidth = 100'000'000'000ULL; // B, bit/s
    const int64_t delayNs = 100;
    const uint64_t m = 64ULL << 20; // 64 MiB
    const uint32_t cps = static_cast<uint32_t>(BfbExactChunksPerShard(s));
    ASSERT_LE(cps, 64u);

    ClusterParams p;
    p.platform = HbDomainPreset::Custom(1, DataRate(nodeBandwidth), DataRate(nodeBandwidth));
    p.linkDelayNs = delayNs;
    const FabricTopology topo = BuildDirectConnect(g, nodeBandwidth, p);
    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    CollectiveSchedule cs = BfbToCollectiveSchedule(s, m, cps);
    ASSERT_TRUE(ScheduleChecker::Check(cs).Ok());
    Ptr<CollectiveRun> run = CollectiveHelper(fabric).Install(cs, Seconds(0));
    Simulator::Run();
    const CollectiveResult r = run->GetResult();
    ASSERT_TRUE(r.complete);

    const double linkRate = static_cast<double>(nodeBandwidth) / s.degree;
    const double alpha = delayNs * 1e-9 + 4122.0 * 8 / linkRate;
    const double predicted =
        alpha * s.Steps() + ToDouble(s.Tb()) * m * 8 / (nodeBandwidth * kPayloadShare);
    fmt::print("BFB allgather {}: N = {}, d = {}, T_L = {}, T_B = {}, chunks/shard = {}, "
               "M = {} B: simulated {:.6e} s, predicted {:.6e} s ({:+.3f}%)\n",
               g.Name(),
               s.nodes,
               s.degree,
               s.Steps(),
               ToString(s.Tb()),
               cps,
               m,
               r.timeS,
               predicted,
               100 * (r.timeS / predicted - 1));
    EXPECT_NEAR(r.timeS, predicted, 0.03 * predicted);
}

TEST_P(BfbSimulate, AllReduceTimeMatchesAlphaBeta)
{
    // reductions into one chunk are chained; chunks per shard that are a
    // multiple of every in-degree keep all in-arcs busy (BfbToCollectiveSchedule)
    const DirectConnectGraph g = BuildFromName(GetParam().graph);
    const BfbSchedule s = BfbAllReduce(g);
    const uint64_t nodeBandwidth = 100'000'000'000ULL;
    const int64_t delayNs = 100;
    const uint64_t m = 64ULL << 20;
    uint64_t cps = BfbExactChunksPerShard(s);
    for (uint64_t k = 2; k <= s.degree; ++k)
    {
        cps = std::lcm(cps, k);
    }
    ASSERT_LE(cps, 64u);

    ClusterParams p;
    p.platform = HbDomainPreset::Custom(1, DataRate(nodeBandwidth), DataRate(nodeBandwidth));
    p.linkDelayNs = delayNs;
    Ptr<Fabric> fabric = FabricHelper().Install(BuildDirectConnect(g, nodeBandwidth, p));
    CollectiveSchedule cs = BfbToCollectiveSchedule(s, m, static_cast<uint32_t>(cps));
    ASSERT_TRUE(ScheduleChecker::Check(cs).Ok());
    Ptr<CollectiveRun> run = CollectiveHelper(fabric).Install(cs, Seconds(0));
    Simulator::Run();
    const CollectiveResult r = run->GetResult();
    ASSERT_TRUE(r.complete);
    const double alpha =
        delayNs * 1e-9 + 4122.0 * 8 / (static_cast<double>(nodeBandwidth) / s.degree);
    const double predicted =
        alpha * s.Steps() + ToDouble(s.Tb()) * m * 8 / (nodeBandwidth * kPayloadShare);
    fmt::print("BFB allreduce {}: T_L = {}, T_B = {}, chunks/shard = {}: simulated {:.6e} s, "
               "predicted {:.6e} s ({:+.3f}%)\n",
               g.Name(),
               s.Steps(),
               ToString(s.Tb()),
               cps,
               r.timeS,
               predicted,
               100 * (r.timeS / predicted - 1));
    EXPECT_NEAR(r.timeS, predicted, 0.03 * predicted);
}

INSTANTIATE_TEST_SUITE_P(Balanced,
                         BfbSimulate,
                         ::testing::Values(SimCase{"BiRing(4)"},
                                           SimCase{"Hypercube(3)"},
                                           SimCase{"K(4,4)"},
                                           SimCase{"Torus(3,3)"}),
                         [](const ::testing::TestParamInfo<SimCase>& info) {
                             std::string n;
                             for (char c : info.param.graph)
                             {
                                 n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                             }
                             return n;
                         });

} // namespace
