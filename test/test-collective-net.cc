/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Collectives on the packet-level fabric: simulated times against the
// alpha-beta formulas, NVLink busbw, rail-only against rail-optimized,
// PXN all-to-all overhead, conservation, and concurrent communicators.
#include "scheduler-env.h"

#include "ns3/collective-helper.h"
#include "ns3/collective-metrics.h"
#include "ns3/config.h"
#include "ns3/fabric-error.h"
#include "ns3/nstime.h"
#include "ns3/schedule-checker.h"
#include "ns3/simulator.h"
#include "ns3/topology-builders.h"
#include "ns3/uinteger.h"

#include <gtest/gtest.h>

using namespace ns3;

namespace
{

constexpr double kPayloadShare = 4096.0 / 4122.0; // goodput of a full packet

class CollectiveNetTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
    }
};

/// n GPUs (no HB domain) on one switch, links of `rate`, delay `delayNs`.
FabricTopology
Star(uint32_t n, uint64_t rate, int64_t delayNs)
{
    ClusterParams p;
    p.gpus = n;
    p.radix = 64;
    p.linkDelayNs = delayNs;
    p.platform = HbDomainPreset::Custom(1, DataRate(rate), DataRate(rate));
    return BuildRailOnly(p);
}

/// Run one collective alone and return its result.
CollectiveResult
RunOne(Ptr<Fabric> fabric,
       const std::string& collective,
       const std::string& algorithm,
       uint64_t bytes,
       uint64_t chunkBytes = 0)
{
    CollectiveHelper helper(fabric);
    helper.SetChunkBytes(chunkBytes);
    Ptr<CollectiveRun> run = helper.Install(CollectiveHelper::AllRanks(fabric->GetNGpus()),
                                            collective,
                                            algorithm,
                                            bytes,
                                            Seconds(0));
    Simulator::Run();
    return run->GetResult();
}

struct FlatCase
{
    std::string collective;
    std::string algorithm;
    uint32_t n;
    uint64_t chunkBytes{0}; //!< pipelining (trees are pipelined, as in NCCL)
    /// Message size: large enough that the formula's pipeline-fill estimate
    /// (exact for rings, approximate for trees) is a small part of the time.
    uint64_t bytes{64ULL << 20};
};

/// gtest names a case by this, not by its bytes
void
PrintTo(const FlatCase& c, std::ostream* os)
{
    *os << c.collective << " " << c.algorithm << " n=" << c.n << " chunk=" << c.chunkBytes
        << " bytes=" << c.bytes;
}

class FlatAlgorithms : public CollectiveNetTest, public ::testing::WithParamInterface<FlatCase>
{
};

TEST_P(FlatAlgorithms, LargeMessageTimeMatchesAlphaBetaWithinTwoPercent)
{
    const FlatCase c = GetParam();
    const uint64_t rate = 100'000'000'000ULL;
    const int64_t delayNs = 1000;
    Ptr<Fabric> fabric = FabricHelper().Install(Star(c.n, rate, delayNs));
    const uint64_t bytes = c.bytes;
    const CollectiveResult r = RunOne(fabric, c.collective, c.algorithm, bytes, c.chunkBytes);
    ASSERT_TRUE(r.complete);
    AlphaBetaParams p;
    p.chunkBytes = c.chunkBytes;
    // per step: two cables and one store-and-forward packet at the switch
    p.alpha = 2 * delayNs * 1e-9 + 4122 * 8.0 / rate;
    p.linkRateBps = rate * kPayloadShare;
    const double predicted = PredictedTime(c.collective, c.algorithm, c.n, bytes, p);
    std::printf("%s %s n=%u: simulated %.6f s, alpha-beta %.6f s\n",
                c.collective.c_str(),
                c.algorithm.c_str(),
                c.n,
                r.timeS,
                predicted);
    EXPECT_NEAR(r.timeS / predicted, 1.0, 0.02);
}

INSTANTIATE_TEST_SUITE_P(Star,
                         FlatAlgorithms,
                         ::testing::Values(FlatCase{"allreduce", "ring", 8},
                                           FlatCase{"allreduce", "ring", 7},
                                           FlatCase{"allgather", "ring", 8},
                                           FlatCase{"reducescatter", "ring", 6},
                                           FlatCase{"allreduce", "halving-doubling", 8},
                                           FlatCase{"allreduce", "halving-doubling", 6},
                                           FlatCase{"allreduce", "halving-doubling", 8, 1 << 20},
                                           FlatCase{"allreduce", "halving-doubling", 12},
                                           FlatCase{"alltoall", "direct", 8},
                                           // trees unchunked: the fill is the whole
                                           // time, the root's single child included
                                           FlatCase{"broadcast", "tree", 8},
                                           FlatCase{"broadcast", "tree", 6},
                                           FlatCase{"broadcast", "tree", 3},
                                           FlatCase{"broadcast", "tree", 2},
                                           FlatCase{"reduce", "tree", 8},
                                           FlatCase{"broadcast", "tree", 8, 1 << 20}),
                         [](const auto& info) {
                             std::string name = info.param.collective + "_" + info.param.algorithm +
                                                "_" + std::to_string(info.param.n);
                             if (info.param.chunkBytes > 0)
                             {
                                 name += "_chunk" + std::to_string(info.param.chunkBytes);
                             }
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });

// The pipelined double binary tree makes every rank an incast point (its
// parent and children of both trees send to it at once). With NCCL-like
// per-connection credits (128 KiB in flight per pair, credits back after
// 2 us) and a PFC threshold above what those credits can pile up at a port,
// it matches its formula within 2 %. With the transport's default (no
// credits: line-rate injection, PFC at 128 KiB) incast queues pause senders,
// which stall toward every destination: 0-6 % slower, printed and bounded.
TEST_F(CollectiveNetTest, DoubleBinaryTreeMatchesItsFormulaWithCredits)
{
    const uint64_t rate = 100'000'000'000ULL;
    for (const auto& [n, chunk] :
         std::vector<std::pair<uint32_t, uint64_t>>{{8, 512 * 1024}, {13, 1024 * 1024}})
    {
        const uint64_t bytes = 256ULL << 20;
        AlphaBetaParams p;
        p.alpha = 2 * 1000e-9 + 4122 * 8.0 / rate;
        p.linkRateBps = rate * kPayloadShare;
        p.chunkBytes = chunk;
        const double predicted = PredictedTime("allreduce", "tree", n, bytes, p);
        // every rank sends 2 S through its port
        const double bound = 2.0 * bytes * 8 / p.linkRateBps;
        for (bool credits : {true, false})
        {
            FabricHelper fh;
            if (credits)
            {
                fh.SetSwitchAttribute("PfcXoff", UintegerValue(1 << 20));
                fh.SetSwitchAttribute("PfcXon", UintegerValue(768 << 10));
            }
            Ptr<Fabric> fabric = fh.Install(Star(n, rate, 1000));
            if (credits)
            {
                fabric->GetTransport()->SetAttribute("ConnectionWindow", UintegerValue(128 << 10));
                fabric->GetTransport()->SetAttribute("CreditDelay", TimeValue(MicroSeconds(2)));
            }
            const CollectiveResult r = RunOne(fabric, "allreduce", "tree", bytes, chunk);
            ASSERT_TRUE(r.complete);
            std::printf("allreduce tree n=%u %s: simulated %.6f s, alpha-beta %.6f s (%+.2f %%), "
                        "bound %.6f s\n",
                        n,
                        credits ? "with credits" : "line rate  ",
                        r.timeS,
                        predicted,
                        100 * (r.timeS / predicted - 1),
                        bound);
            EXPECT_GT(r.timeS, bound);
            EXPECT_NEAR(r.timeS / predicted, 1.0, credits ? 0.02 : 0.07);
            EXPECT_EQ(fabric->GetTotalDrops(), 0U);
            fabric->Dispose();
            Simulator::Destroy();
        }
    }
}

TEST_F(CollectiveNetTest, RingAllReduceInOneNvlinkDomainReachesTheNvlinkRate)
{
    FabricTopology topo("domain");
    const HbDomainPreset h100 = HbDomainPreset::Get("dgx-h100");
    AddHbDomains(topo, 8, h100);
    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    const CollectiveResult r = RunOne(fabric, "allreduce", "ring", 512ULL << 20);
    ASSERT_TRUE(r.complete);
    const double nvlinkGBps = h100.nvlinkRate.GetBitRate() / 8e9;
    std::printf("ring allreduce, 8 x H100 NVLink: busbw %.2f GB/s (NVLink %.1f GB/s)\n",
                r.busbwGBps,
                nvlinkGBps);
    EXPECT_NEAR(r.busbwGBps / nvlinkGBps, 1.0, 0.02);
    EXPECT_LT(r.busbwGBps, nvlinkGBps);
}

TEST_F(CollectiveNetTest, ControlDelayDelaysTheStartAndTheSendersCompletion)
{
    // a 2-GPU exchange: each receive is posted at 0, its sender hears of it
    // D later and sends; the receive completes on delivery, the send D after
    // it, so the exchange takes exactly 2 D longer than with news at once
    const Time d = MicroSeconds(3);
    std::vector<double> seconds;
    for (const Time delay : {Time(0), d})
    {
        Config::SetDefault("ns3::CollectiveRun::ControlDelay", TimeValue(delay));
        Ptr<Fabric> fabric = FabricHelper().Install(Star(2, 100'000'000'000ULL, 1000));
        const CollectiveResult r = RunOne(fabric, "sendrecv", "direct", 1 << 20);
        ASSERT_TRUE(r.complete);
        seconds.push_back(r.timeS);
        Simulator::Destroy();
    }
    Config::SetDefault("ns3::CollectiveRun::ControlDelay", TimeValue(Time(0)));
    std::printf("sendrecv 1 MiB: %.9f s, with ControlDelay 3 us %.9f s\n", seconds[0], seconds[1]);
    EXPECT_NEAR(seconds[1] - seconds[0], 2 * d.GetSeconds(), 1e-12);
}

TEST_F(CollectiveNetTest, InOrderConnectionsHoldALaterSendBehindAnEarlierOne)
{
    // Rank 0 forwards rank 2's X bytes to rank 1 (its first send to 1) and
    // sends Y bytes of its own to rank 1 (its second, needing nothing). Out
    // of order the second leaves at once, under the first message's trip to
    // rank 0; in order it waits for the first to be issued and follows it
    // back to back: exactly Y more at the payload rate.
    const uint64_t rate = 100'000'000'000ULL;
    const uint64_t x = 1 << 20;
    const uint64_t y = 1 << 20;
    std::vector<double> seconds;
    for (bool inOrder : {false, true})
    {
        CollectiveSchedule s(CollectiveType::SendRecv, 3, x); // x = y: every pair moves x
        s.AddChunk(x, 2, 1);
        s.AddChunk(y, 0, 1);
        s.AddRecv(0, 0, 2, RecvMode::Copy);
        s.AddSend(0, 0, 1, {0});
        s.AddSend(0, 1, 1);
        s.AddRecv(1, 0, 0, RecvMode::Copy);
        s.AddRecv(1, 1, 0, RecvMode::Copy);
        s.AddSend(2, 0, 0);
        s.SetInOrderConnections(inOrder);
        ASSERT_TRUE(ScheduleChecker::Check(s).Ok()) << ScheduleChecker::Check(s).message;
        Ptr<Fabric> fabric = FabricHelper().Install(Star(3, rate, 1000));
        Ptr<CollectiveRun> run = CollectiveHelper(fabric).Install(s, Seconds(0));
        Simulator::Run();
        ASSERT_TRUE(run->GetResult().complete);
        seconds.push_back(run->GetResult().timeS);
        Simulator::Destroy();
    }
    const double yTime = y * 8.0 / (rate * kPayloadShare);
    std::printf("forward 1 MiB + own 1 MiB: out of order %.9f s, in order %.9f s (Y at the "
                "payload rate %.9f s)\n",
                seconds[0],
                seconds[1],
                yTime);
    EXPECT_NEAR((seconds[1] - seconds[0]) / yTime, 1.0, 0.01);
}

} // namespace
