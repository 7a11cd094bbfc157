/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Collectives on rail-only against rail-optimized fat-trees, conservation of
// bytes, and several communicators at once.
#include "ns3/collective-helper.h"
#include "ns3/collective-metrics.h"
#include "ns3/fabric-error.h"
#include "ns3/simulator.h"
#include "ns3/topology-builders.h"

#include <gtest/gtest.h>

using namespace ns3;

namespace
{

class CollectiveRailTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
    }
};

ClusterParams
FourDomains(const std::string& preset)
{
    ClusterParams p;
    p.gpus = 32;
    p.platform = HbDomainPreset::Get(preset);
    p.radix = 64;
    return p;
}

/// Run one collective on all GPUs of a fresh fabric; the simulator is reset.
CollectiveResult
RunOnce(const FabricTopology& topo,
        const std::string& collective,
        const std::string& algorithm,
        uint64_t bytes,
        uint64_t chunkBytes = 0)
{
    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    CollectiveHelper helper(fabric);
    helper.SetChunkBytes(chunkBytes);
    Ptr<CollectiveRun> run = helper.Install(CollectiveHelper::AllRanks(topo.GetNGpus()),
                                            collective,
                                            algorithm,
                                            bytes,
                                            Seconds(0));
    Simulator::Run();
    const CollectiveResult r = run->GetResult();
    EXPECT_EQ(fabric->GetTotalDrops(), 0u);
    fabric->Dispose();
    Simulator::Destroy();
    return r;
}

TEST_F(CollectiveRailTest, HierarchicalAllReduceTakesTheSameTimeOnRailOnlyAndRailOptimized)
{
    const ClusterParams p = FourDomains("dgx-h100");
    const uint64_t bytes = 256ULL << 20;
    const CollectiveResult ro = RunOnce(BuildRailOnly(p), "allreduce", "hierarchical", bytes);
    const CollectiveResult ft = RunOnce(BuildRailOptimized(p), "allreduce", "hierarchical", bytes);
    ASSERT_TRUE(ro.complete && ft.complete);
    std::printf("hierarchical allreduce 4 x 8 H100, 256 MiB: rail-only %.6f s, "
                "rail-optimized %.6f s\n",
                ro.timeS,
                ft.timeS);
    EXPECT_NEAR(ro.timeS / ft.timeS, 1.0, 0.01);
    // and both take the formula's time: the domain reduce-scatter and
    // allgather over NVLink plus the rail ring allreduce of S / K, in sequence
    AlphaBetaParams ab;
    ab.alpha = 2e-6;
    ab.nvlinkRateBps = p.platform.nvlinkRate.GetBitRate() * 4096.0 / 4122;
    ab.nicRateBps = p.platform.nicRate.GetBitRate() * 4096.0 / 4122;
    ab.domainSize = p.platform.gpusPerDomain;
    const double predicted = PredictedTime("allreduce", "hierarchical", 32, bytes, ab);
    std::printf("hierarchical allreduce alpha-beta %.6f s\n", predicted);
    EXPECT_NEAR(ro.timeS / predicted, 1.0, 0.02);
}

TEST_F(CollectiveRailTest, PxnAllToAllOverheadOnRailOnlyIsAboutNicOverNvlink)
{
    for (const std::string preset : {"dgx-a100", "dgx-h100"})
    {
        const ClusterParams p = FourDomains(preset);
        const uint64_t bytes = 64ULL << 20;
        const CollectiveResult ft = RunOnce(BuildRailOptimized(p), "alltoall", "direct", bytes);
        const CollectiveResult ro = RunOnce(BuildRailOnly(p), "alltoall", "pxn", bytes);
        const CollectiveResult roPiped =
            RunOnce(BuildRailOnly(p), "alltoall", "pxn", bytes, bytes / 32 / 16);
        ASSERT_TRUE(ft.complete && ro.complete && roPiped.complete);
        const double ratio = p.platform.nicRate.GetBitRate() /
                             static_cast<double>(p.platform.nvlinkRate.GetBitRate());
        const double overhead = ro.timeS / ft.timeS - 1;
        const double piped = roPiped.timeS / ft.timeS - 1;
        std::printf("%s all-to-all: fat-tree direct %.6f s, rail-only pxn %.6f s (+%.2f%%), "
                    "pipelined %.6f s (+%.2f%%); NIC/NVLink %.2f%%\n",
                    preset.c_str(),
                    ft.timeS,
                    ro.timeS,
                    100 * overhead,
                    roPiped.timeS,
                    100 * piped,
                    100 * ratio);
        EXPECT_NEAR(overhead, ratio, 0.03);
        EXPECT_LE(piped, overhead + 1e-9);
    }
}

TEST_F(CollectiveRailTest, EveryScheduledByteIsDeliveredExactlyOnce)
{
    const ClusterParams p = FourDomains("dgx-a100");
    for (const auto& [collective, algorithm] :
         std::vector<std::pair<std::string, std::string>>{{"allreduce", "ring"},
                                                          {"allreduce", "tree"},
                                                          {"allreduce", "hierarchical"},
                                                          {"allgather", "ring"},
                                                          {"alltoall", "pxn"}})
    {
        Ptr<Fabric> fabric = FabricHelper().Install(BuildRailOnly(p));
        CollectiveHelper helper(fabric);
        helper.SetChunkBytes(100'000);
        Ptr<CollectiveRun> run = helper.Install(CollectiveHelper::AllRanks(p.gpus),
                                                collective,
                                                algorithm,
                                                3'000'001,
                                                MicroSeconds(5));
        Simulator::Run();
        const CollectiveSchedule& s = run->GetSchedule();
        uint64_t sends = 0;
        for (uint32_t r = 0; r < s.NumRanks(); ++r)
        {
            for (const CollectiveOp& o : s.Ops(r))
            {
                sends += o.kind == OpKind::Send ? 1 : 0;
            }
        }
        const Transport::Totals t = fabric->GetTransport()->GetTotals();
        SCOPED_TRACE(collective + " " + algorithm);
        EXPECT_TRUE(run->IsComplete());
        EXPECT_EQ(t.messagesSent, sends);
        EXPECT_EQ(t.messagesDelivered, sends);
        EXPECT_EQ(t.bytesSent, s.TotalBytesSent());
        EXPECT_EQ(t.bytesDelivered, s.TotalBytesSent());
        EXPECT_EQ(s.TotalBytesSent(), s.TotalBytesReceived());
        EXPECT_EQ(run->GetCompletedOps(), s.TotalOps());
        EXPECT_EQ(run->GetStartTime(), MicroSeconds(5));
        fabric->Dispose();
        Simulator::Destroy();
    }
}

TEST_F(CollectiveRailTest, TensorAndDataParallelGroupsRunAtOnceWithTheirOwnCallbacks)
{
    // 4 domains x 8: TP groups are the domains, DP groups are the rails.
    const ClusterParams p = FourDomains("dgx-h100");
    Ptr<Fabric> fabric = FabricHelper().Install(BuildRailOnly(p));
    CollectiveHelper helper(fabric);
    std::vector<Ptr<CollectiveRun>> runs;
    std::vector<uint32_t> completions;
    for (uint32_t d = 0; d < 4; ++d)
    {
        std::vector<uint32_t> tp;
        for (uint32_t i = 0; i < 8; ++i)
        {
            tp.push_back(d * 8 + i);
        }
        runs.push_back(helper.Install(tp, "allreduce", "ring", 32ULL << 20, Seconds(0)));
    }
    for (uint32_t rail = 0; rail < 8; ++rail)
    {
        std::vector<uint32_t> dp;
        for (uint32_t d = 0; d < 4; ++d)
        {
            dp.push_back(d * 8 + rail);
        }
        runs.push_back(helper.Install(dp, "allreduce", "ring", 8ULL << 20, Seconds(0)));
    }
    for (size_t i = 0; i < runs.size(); ++i)
    {
        runs[i]->SetCompletionCallback(MakeBoundCallback(
            +[](std::vector<uint32_t>* done, uint32_t index, Ptr<CollectiveRun>) {
                done->push_back(index);
            },
            &completions,
            static_cast<uint32_t>(i)));
    }
    Simulator::Run();
    ASSERT_EQ(completions.size(), runs.size());
    std::vector<uint32_t> sorted = completions;
    std::sort(sorted.begin(), sorted.end());
    for (uint32_t i = 0; i < sorted.size(); ++i)
    {
        EXPECT_EQ(sorted[i], i); // each callback exactly once
    }
    // TP traffic stays on NVLink and DP on the rails: every TP allreduce is as
    // fast as alone, since the two never share a link.
    std::vector<double> together;
    for (uint32_t d = 0; d < 4; ++d)
    {
        together.push_back(runs[d]->GetResult().timeS);
    }
    fabric->Dispose();
    Simulator::Destroy();
    Ptr<Fabric> alone = FabricHelper().Install(BuildRailOnly(p));
    Ptr<CollectiveRun> tp = CollectiveHelper(alone).Install({0, 1, 2, 3, 4, 5, 6, 7},
                                                            "allreduce",
                                                            "ring",
                                                            32ULL << 20,
                                                            Seconds(0));
    Simulator::Run();
    for (double t : together)
    {
        EXPECT_NEAR(t / tp->GetResult().timeS, 1.0, 1e-9);
    }
}

TEST_F(CollectiveRailTest, BadCollectiveRequestsAreRejectedByName)
{
    const ClusterParams p = FourDomains("dgx-h100");
    Ptr<Fabric> fabric = FabricHelper().Install(BuildRailOnly(p));
    CollectiveHelper helper(fabric);
    const auto all = CollectiveHelper::AllRanks(p.gpus);
    EXPECT_THROW(helper.Install(all, "allreduce", "bogus", 1024, Seconds(0)), FabricConfigError);
    EXPECT_THROW(helper.Install(all, "gather", "ring", 1024, Seconds(0)), FabricConfigError);
    EXPECT_THROW(helper.Install({0, 99}, "allreduce", "ring", 1024, Seconds(0)), FabricConfigError);
    EXPECT_THROW(helper.SetChannels(0), FabricConfigError);
}

} // namespace
