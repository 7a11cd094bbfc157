/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Faults: link and switch failures mid-collective, HB-domain relay around a
// failed rail switch, failure reports instead of hangs, bit errors with
// retransmission, and the progress watchdog on a flow-control deadlock.
#include "record-now.h"
#include "scheduler-env.h"

#include "ns3/boolean.h"
#include "ns3/collective-helper.h"
#include "ns3/config.h"
#include "ns3/fabric-channel.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-net-device.h"
#include "ns3/fabric-routing.h"
#include "ns3/fault-helper.h"
#include "ns3/progress-watchdog.h"
#include "ns3/simulator.h"
#include "ns3/topology-builders.h"
#include "ns3/uinteger.h"

#include <array>
#include <gtest/gtest.h>

using gpu_fabric_test::RecordNow;
using namespace ns3;

namespace
{

class FaultTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
    }
};

constexpr uint64_t kRate = 100'000'000'000ULL; // 100 Gb/s

/// \p gpus GPUs, each its own HB domain, every link at kRate.
ClusterParams
OneGpuPerDomain(uint32_t gpus)
{
    ClusterParams p;
    p.gpus = gpus;
    p.platform = HbDomainPreset::Custom(1, DataRate(kRate), DataRate(kRate));
    return p;
}

/// \p gpus GPUs in DGX-H100 domains (8 GPUs, 4 NVSwitch planes each).
ClusterParams
DgxH100(uint32_t gpus)
{
    ClusterParams p;
    p.gpus = gpus;
    p.platform = HbDomainPreset::Get("dgx-h100");
    return p;
}

/// 12 GPUs (no HB domain) under two leaves of 6 hosts and 2 uplinks each
/// (3:1 oversubscribed), so that the leaves' uplinks are the bottleneck of
/// cross-leaf traffic.
FabricTopology
OversubscribedFatTree()
{
    ClusterParams p = OneGpuPerDomain(12);
    p.radix = 8;
    p.oversubscription = 3;
    return BuildFatTree(p);
}

/// Cables from a leaf to the tier above.
std::vector<uint32_t>
Uplinks(const FabricTopology& topo, uint32_t leaf)
{
    std::vector<uint32_t> out;
    for (uint32_t c : FaultHelper::CablesOf(topo, leaf))
    {
        const TopoCable& cable = topo.Cables()[c];
        const uint32_t other = cable.a == leaf ? cable.b : cable.a;
        if (topo.Node(other).tier > topo.Node(leaf).tier)
        {
            out.push_back(c);
        }
    }
    return out;
}

struct RunOutcome
{
    CollectiveResult result;
    uint64_t sent{0};
    uint64_t delivered{0};
    uint64_t lost{0};
    uint64_t retransmissions{0};
    uint64_t failedMessages{0};
    std::vector<uint64_t> cableBytes; //!< bytes serialized per cable (both ends)
    uint64_t forwarded{0};            //!< packets GPUs relayed
    uint64_t nvlinkBytes{0};          //!< bytes serialized on NVLink ports
};

RunOutcome
Collect(Ptr<Fabric> fabric, Ptr<CollectiveRun> run)
{
    RunOutcome o;
    o.result = run->GetResult();
    Ptr<PacketTransport> t = fabric->GetTransport();
    o.sent = t->GetTotals().bytesSent;
    o.delivered = t->GetTotals().bytesDelivered;
    o.lost = t->GetLostPackets();
    o.retransmissions = t->GetRetransmissions();
    o.failedMessages = t->GetFailedMessages();
    for (uint32_t c = 0; c < fabric->GetTopology().Cables().size(); ++c)
    {
        auto [a, b] = fabric->GetCableDevices(c);
        o.cableBytes.push_back(a->GetStats().txBytes + b->GetStats().txBytes);
        if (a->IsNvLink())
        {
            o.nvlinkBytes += a->GetStats().txBytes + b->GetStats().txBytes;
        }
    }
    for (uint32_t r = 0; r < fabric->GetNGpus(); ++r)
    {
        o.forwarded += fabric->GetGpu(r)->GetForwardedPackets();
    }
    return o;
}

/// 32 GPUs of DGX A100 domains on radix-8 switches
ClusterParams
Dgx32()
{
    ClusterParams p;
    p.gpus = 32;
    p.radix = 8;
    p.platform = HbDomainPreset::Get("dgx-a100");
    return p;
}

TEST_F(FaultTest, NoFaultRoutingEqualsTheOriginalTables)
{
    const ClusterParams p = Dgx32();
    for (const FabricTopology& topo : {BuildRailOnly(p), BuildRailOptimized(p), BuildFatTree(p)})
    {
        const auto a = ComputeRoutingTables(topo);
        const auto b = ComputeRoutingTables(topo, FaultState());
        for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
        {
            for (uint32_t d = 0; d < topo.GetNGpus(); ++d)
            {
                ASSERT_EQ(a[v].GetNPorts(d), b[v].GetNPorts(d));
                for (uint32_t i = 0; i < a[v].GetNPorts(d); ++i)
                {
                    ASSERT_EQ(a[v].GetPort(d, i), b[v].GetPort(d, i));
                }
            }
        }
    }
}

TEST_F(FaultTest, KeptTablesEqualTheFullOnesAndTheOthersAreEmpty)
{
    // a distributed run's process builds only its own nodes' tables: every
    // kept table equals the full computation's (also with HB-domain relays
    // around a failed rail switch, which read other vertices' routes to the
    // same destination), every other table routes nowhere
    const ClusterParams p = Dgx32();
    for (const FabricTopology& topo : {BuildRailOnly(p), BuildFatTree(p)})
    {
        FaultState failed;
        for (uint32_t v = 0; v < topo.GetNVertices() && failed.vertices.empty(); ++v)
        {
            if (topo.Node(v).kind == TopoNodeKind::Switch)
            {
                failed.vertices.insert(v);
            }
        }
        for (const FaultState& faults : {FaultState(), failed})
        {
            const auto all = ComputeRoutingTables(topo, faults);
            std::vector<char> keep(topo.GetNVertices(), 0);
            for (uint32_t v = 0; v < keep.size(); v += 3)
            {
                keep[v] = 1;
            }
            const auto some = ComputeRoutingTables(topo, faults, keep);
            ASSERT_EQ(some.size(), all.size());
            uint64_t routes = 0;
            for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
            {
                if (!keep[v])
                {
                    EXPECT_EQ(some[v].GetNRanks(), 0u) << v;
                    continue;
                }
                for (uint32_t d = 0; d < topo.GetNGpus(); ++d)
                {
                    ASSERT_EQ(some[v].GetNPorts(d), all[v].GetNPorts(d)) << v << " " << d;
                    routes += all[v].GetNPorts(d);
                    for (uint32_t i = 0; i < all[v].GetNPorts(d); ++i)
                    {
                        ASSERT_EQ(some[v].GetPort(d, i), all[v].GetPort(d, i));
                    }
                }
            }
            EXPECT_GT(routes, 0u);
        }
        EXPECT_THROW(ComputeRoutingTables(topo, FaultState(), std::vector<char>(3, 1)),
                     FabricConfigError);
    }
}

TEST_F(FaultTest, FailedRailSwitchIsRoutedAroundThroughTheHbDomain)
{
    const ClusterParams p = Dgx32();
    for (const FabricTopology& topo : {BuildRailOnly(p), BuildRailOptimized(p)})
    {
        const auto rails = FaultHelper::FindSwitches(topo, "rail");
        ASSERT_GE(rails.size(), 2u) << topo.GetName();
        FaultState f;
        f.vertices.insert(rails[1]);
        const auto tables = ComputeRoutingTables(topo, f);
        const RoutingReport r = CheckRouting(topo, tables);
        EXPECT_EQ(r.unreachable, 0u) << topo.GetName() << ": " << r.firstFailure;
        f.hbDomainRelay = false;
        const RoutingReport cut = CheckRouting(topo, ComputeRoutingTables(topo, f));
        EXPECT_GT(cut.unreachable, 0u) << topo.GetName();
    }
}

/// All-to-all on the oversubscribed fat-tree; optionally one uplink of leaf 0
/// fails at `failAt`.
RunOutcome
CollectiveWithUplinkFailure(const std::string& collective,
                            const std::string& algorithm,
                            uint32_t channels,
                            Time failAt,
                            bool fail,
                            uint32_t* failedCable,
                            Time repairAt = Time(0))
{
    const FabricTopology topo = OversubscribedFatTree();
    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    const auto leaves = FaultHelper::FindSwitches(topo, "leaf");
    const auto up = Uplinks(topo, leaves.at(0));
    EXPECT_EQ(up.size(), 2u);
    *failedCable = up.at(0);
    if (fail)
    {
        FaultHelper faults(fabric);
        faults.SetDetectionDelay(MicroSeconds(10));
        faults.LinkDown(up.at(0), failAt);
        if (repairAt > failAt)
        {
            faults.LinkUp(up.at(0), repairAt);
        }
    }
    CollectiveHelper helper(fabric);
    helper.SetChunkBytes(256 * 1024);
    helper.SetChannels(channels);
    Ptr<CollectiveRun> run = helper.Install(CollectiveHelper::AllRanks(12),
                                            collective,
                                            algorithm,
                                            96ULL << 20,
                                            Seconds(0));
    Simulator::Run();
    RunOutcome o = Collect(fabric, run);
    fabric->Dispose();
    Simulator::Destroy();
    return o;
}

RunOutcome
AllToAllWithUplinkFailure(Time failAt, bool fail, uint32_t* failedCable)
{
    return CollectiveWithUplinkFailure("alltoall", "direct", 1, failAt, fail, failedCable);
}

TEST_F(FaultTest, LinkFailureMidAllReduceCompletesOnTheRemainingUplink)
{
    // A 4-channel ring allreduce: each leaf sends its cross-leaf ring edge as
    // 4 connections, spread by ECMP over its 2 uplinks. The ring's one
    // cross-leaf edge needs about one uplink's rate, so the capacity left
    // after the failure predicts almost no slowdown: the test checks that the
    // run completes, traffic leaves the failed uplink, bytes are conserved
    // and the time follows the same lost-capacity model as the all-to-all.
    uint32_t cable = 0;
    const RunOutcome base =
        CollectiveWithUplinkFailure("allreduce", "ring", 4, Seconds(0), false, &cable);
    ASSERT_TRUE(base.result.complete);
    const double t0 = base.result.timeS;
    const Time failAt = Seconds(t0 / 4);
    const RunOutcome hit =
        CollectiveWithUplinkFailure("allreduce", "ring", 4, failAt, true, &cable);
    ASSERT_TRUE(hit.result.complete) << hit.result.failure;
    EXPECT_EQ(hit.sent, hit.delivered);
    EXPECT_EQ(hit.delivered, hit.result.bytesSent);
    EXPECT_EQ(hit.retransmissions, hit.lost);
    const FabricTopology topo = OversubscribedFatTree();
    const auto up = Uplinks(topo, FaultHelper::FindSwitches(topo, "leaf").at(0));
    EXPECT_LT(hit.cableBytes[up[0]], base.cableBytes[up[0]] * 0.5);
    const double tf = failAt.GetSeconds();
    const double crossBytesPerDirection = (base.cableBytes[up[0]] + base.cableBytes[up[1]]) / 2.0;
    const double predicted = (tf + (1 - tf / t0) * crossBytesPerDirection * 8 / kRate) / t0;
    std::printf("ring allreduce (4 channels) 12 GPUs, one uplink fails at %.1f us: %.1f us -> "
                "%.1f us, slowdown %.3f (lost capacity predicts %.3f)\n",
                tf * 1e6,
                t0 * 1e6,
                hit.result.timeS * 1e6,
                hit.result.timeS / t0,
                predicted);
    EXPECT_NEAR(hit.result.timeS / t0, predicted, 0.05 * predicted);
}

TEST_F(FaultTest, RepairedLinkCarriesTrafficAgainAndShortensTheRun)
{
    uint32_t cable = 0;
    const RunOutcome base =
        CollectiveWithUplinkFailure("alltoall", "direct", 1, Seconds(0), false, &cable);
    const double t0 = base.result.timeS;
    const RunOutcome down =
        CollectiveWithUplinkFailure("alltoall", "direct", 1, Seconds(t0 / 4), true, &cable);
    const RunOutcome repaired = CollectiveWithUplinkFailure("alltoall",
                                                            "direct",
                                                            1,
                                                            Seconds(t0 / 4),
                                                            true,
                                                            &cable,
                                                            Seconds(t0 / 2));
    ASSERT_TRUE(down.result.complete && repaired.result.complete);
    EXPECT_EQ(repaired.sent, repaired.delivered);
    // after the repair (and the detection delay) the uplink is used again
    EXPECT_GT(repaired.cableBytes[cable], down.cableBytes[cable] * 1.2);
    EXPECT_LT(repaired.result.timeS, down.result.timeS);
    EXPECT_GT(repaired.result.timeS, t0);
    std::printf("uplink down at T/4: %.1f us; repaired at T/2: %.1f us (no fault %.1f us)\n",
                down.result.timeS * 1e6,
                repaired.result.timeS * 1e6,
                t0 * 1e6);
}

TEST_F(FaultTest, LinkFailureMidAllToAllCompletesOnTheRemainingPathsAsCapacityPredicts)
{
    uint32_t cable = 0;
    const RunOutcome base = AllToAllWithUplinkFailure(Seconds(0), false, &cable);
    ASSERT_TRUE(base.result.complete);
    const double t0 = base.result.timeS;
    const Time failAt = Seconds(t0 / 4);
    const RunOutcome hit = AllToAllWithUplinkFailure(failAt, true, &cable);
    ASSERT_TRUE(hit.result.complete) << hit.result.failure;
    EXPECT_FALSE(hit.result.failed);
    // bytes are conserved: everything sent is delivered once, losses resent
    EXPECT_EQ(hit.sent, hit.delivered);
    EXPECT_EQ(hit.delivered, hit.result.bytesSent);
    EXPECT_EQ(hit.retransmissions, hit.lost);
    // traffic moved: the failed cable stopped carrying, its sibling took over
    const FabricTopology topo = OversubscribedFatTree();
    const auto up = Uplinks(topo, FaultHelper::FindSwitches(topo, "leaf").at(0));
    EXPECT_LT(hit.cableBytes[up[0]], base.cableBytes[up[0]] * 0.5);
    EXPECT_GT(hit.cableBytes[up[1]], base.cableBytes[up[1]] * 1.3);
    // Cross-leaf traffic is the bottleneck. After the failure the leaf has
    // one uplink of 100 Gb/s per direction, fully used (no ECMP imbalance is
    // left), for the share of the cross-leaf bytes not yet carried at t_f
    // (at the baseline's pace): T' = t_f + (1 - t_f / T) B / R.
    const double tf = failAt.GetSeconds();
    const double crossBytesPerDirection = (base.cableBytes[up[0]] + base.cableBytes[up[1]]) / 2.0;
    const double predicted = (tf + (1 - tf / t0) * crossBytesPerDirection * 8 / kRate) / t0;
    const double slowdown = hit.result.timeS / t0;
    std::printf("all-to-all 12 GPUs, 2 uplinks per leaf, one fails at %.1f us: %.1f us -> %.1f "
                "us, slowdown %.3f (lost capacity predicts %.3f), %llu packets lost and "
                "resent\n",
                tf * 1e6,
                t0 * 1e6,
                hit.result.timeS * 1e6,
                slowdown,
                predicted,
                static_cast<unsigned long long>(hit.lost));
    EXPECT_NEAR(slowdown, predicted, 0.05 * predicted);
}

/// Hierarchical allreduce on a rail-only cluster of 4 domains x 4 GPUs; the
/// switch of rail 1 fails at `failAt` (never if zero).
RunOutcome
RailOnlyAllReduce(Time failAt, bool forwarding, Ptr<CollectiveRun>* keep = nullptr)
{
    ClusterParams p;
    p.gpus = 16;
    p.radix = 64;
    p.platform = HbDomainPreset::Custom(4, DataRate("1200Gbps"), DataRate("200Gbps"));
    const FabricTopology topo = BuildRailOnly(p);
    FabricHelper fh;
    fh.SetGpuAttribute("Forwarding", BooleanValue(forwarding));
    Ptr<Fabric> fabric = fh.Install(topo);
    if (failAt.IsStrictlyPositive())
    {
        FaultHelper faults(fabric);
        faults.SetDetectionDelay(MicroSeconds(20));
        faults.SwitchDown(FaultHelper::FindSwitches(topo, "rail").at(1), failAt);
    }
    CollectiveHelper helper(fabric);
    helper.SetChunkBytes(1 << 20);
    Ptr<CollectiveRun> run = helper.Install(CollectiveHelper::AllRanks(16),
                                            "allreduce",
                                            "hierarchical",
                                            64ULL << 20,
                                            Seconds(0));
    Simulator::Run();
    RunOutcome o = Collect(fabric, run);
    if (keep)
    {
        *keep = run;
    }
    fabric->Dispose();
    Simulator::Destroy();
    return o;
}

TEST_F(FaultTest, RailSwitchFailureOnRailOnlyCompletesThroughTheHbDomain)
{
    const RunOutcome base = RailOnlyAllReduce(Seconds(0), true);
    ASSERT_TRUE(base.result.complete);
    EXPECT_EQ(base.forwarded, 0u); // hierarchical allreduce stays on its rails
    const RunOutcome hit = RailOnlyAllReduce(Seconds(base.result.timeS / 3), true);
    ASSERT_TRUE(hit.result.complete) << hit.result.failure;
    EXPECT_EQ(hit.sent, hit.delivered);
    EXPECT_GT(hit.forwarded, 0u); // rail 1's traffic relayed by GPUs of healthy rails
    EXPECT_GT(hit.nvlinkBytes, base.nvlinkBytes); // the extra NVLink load
    EXPECT_GT(hit.result.timeS, base.result.timeS);
    std::printf("rail-only hierarchical allreduce, rail switch 1 fails at T/3: %.1f us -> %.1f "
                "us; NVLink bytes %llu -> %llu; %llu packets relayed\n",
                base.result.timeS * 1e6,
                hit.result.timeS * 1e6,
                static_cast<unsigned long long>(base.nvlinkBytes),
                static_cast<unsigned long long>(hit.nvlinkBytes),
                static_cast<unsigned long long>(hit.forwarded));
}

TEST_F(FaultTest, ConnectionsWaitingForCreditMoveOffAFailedSwitchToo)
{
    // With a small credit window and credits returning slower than the
    // failure is detected, many connections wait for credit, off their
    // ports' round robins, when rail 1's switch fails; they must move to the
    // new routes like queued ones (they hung on the dead port before).
    Config::SetDefault("ns3::PacketTransport::ConnectionWindow", UintegerValue(64 * 1024));
    Config::SetDefault("ns3::PacketTransport::CreditDelay", TimeValue(MicroSeconds(50)));
    const RunOutcome base = RailOnlyAllReduce(Seconds(0), true);
    ASSERT_TRUE(base.result.complete);
    for (double at : {0.3, 0.5}) // 0.5: connections wait for credit at the failure
    {
        const RunOutcome hit = RailOnlyAllReduce(Seconds(base.result.timeS * at), true);
        EXPECT_TRUE(hit.result.complete) << "failure at " << at << " T: " << hit.result.failure;
        EXPECT_EQ(hit.sent, hit.delivered) << at;
        EXPECT_GT(hit.forwarded, 0u) << at;
    }
    Config::Reset();
}

TEST_F(FaultTest, RailSwitchFailureWithoutForwardingFailsWithAReportNotAHang)
{
    const RunOutcome base = RailOnlyAllReduce(Seconds(0), false);
    ASSERT_TRUE(base.result.complete);
    Ptr<CollectiveRun> run;
    const RunOutcome hit = RailOnlyAllReduce(Seconds(base.result.timeS / 3), false, &run);
    EXPECT_FALSE(hit.result.complete);
    ASSERT_TRUE(hit.result.failed);
    EXPECT_GT(hit.failedMessages, 0u);
    // the report says which ranks, which message and since when
    EXPECT_NE(hit.result.failure.find("rank"), std::string::npos);
    EXPECT_NE(hit.result.failure.find("message"), std::string::npos);
    EXPECT_NE(hit.result.failure.find("no path left"), std::string::npos);
    std::printf("%s\n", hit.result.failure.substr(0, hit.result.failure.find('\n')).c_str());
}

TEST_F(FaultTest, BitErrorsOnABusyLinkAreRetransmittedAndEveryMessageCompletes)
{
    const auto run = [](uint64_t* retx, uint64_t* corrupted, double* timeS) {
        ClusterParams p = OneGpuPerDomain(4);
        p.radix = 64;
        Ptr<Fabric> fabric = FabricHelper().Install(BuildRailOnly(p));
        const uint32_t cable =
            FaultHelper::CablesOf(fabric->GetTopology(), fabric->GetTopology().GpuVertex(0)).at(0);
        FaultHelper(fabric).SetBitErrorRate(cable, 1e-6);
        uint32_t done = 0;
        const uint32_t messages = 16;
        for (uint32_t i = 0; i < messages; ++i)
        {
            fabric->GetTransport()->Send(0,
                                         1 + i % 3,
                                         1 << 20,
                                         MakeBoundCallback(
                                             +[](uint32_t* n) { ++*n; },
                                             &done));
        }
        Simulator::Run();
        EXPECT_EQ(done, messages);
        auto t = fabric->GetTransport();
        EXPECT_EQ(t->GetTotals().bytesDelivered, t->GetTotals().bytesSent);
        EXPECT_EQ(t->GetFailedMessages(), 0u);
        auto [a, b] = fabric->GetCableDevices(cable);
        *corrupted = a->GetStats().corrupted + b->GetStats().corrupted;
        *retx = t->GetRetransmissions();
        *timeS = Simulator::Now().GetSeconds();
        fabric->Dispose();
        Simulator::Destroy();
    };
    uint64_t retx = 0;
    uint64_t corrupted = 0;
    double timeS = 0;
    run(&retx, &corrupted, &timeS);
    // 4096 full packets of 4122 bytes: P(loss) = 1 - (1 - 1e-6)^(8 x 4122)
    const double pLoss = -std::expm1(8.0 * 4122 * std::log1p(-1e-6));
    const double expected = 4096 * pLoss;
    std::printf("BER 1e-6, 16 MiB over one NIC: %llu corrupted, %llu retransmitted (expected "
                "%.0f)\n",
                static_cast<unsigned long long>(corrupted),
                static_cast<unsigned long long>(retx),
                expected);
    EXPECT_EQ(retx, corrupted);
    EXPECT_NEAR(static_cast<double>(retx), expected, 5 * std::sqrt(expected) + 1);
    // deterministic
    uint64_t retx2 = 0;
    uint64_t corrupted2 = 0;
    double timeS2 = 0;
    run(&retx2, &corrupted2, &timeS2);
    EXPECT_EQ(retx, retx2);
    EXPECT_EQ(timeS, timeS2);
}

TEST_F(FaultTest, GpuFailureFailsTheCollectiveWithTheRankNamed)
{
    ClusterParams p;
    p.gpus = 16;
    p.radix = 64;
    p.platform = HbDomainPreset::Custom(4, DataRate("1200Gbps"), DataRate("200Gbps"));
    Ptr<Fabric> fabric = FabricHelper().Install(BuildRailOnly(p));
    FaultHelper(fabric).GpuDown(5, MicroSeconds(100));
    CollectiveHelper helper(fabric);
    Ptr<CollectiveRun> run = helper.Install(CollectiveHelper::AllRanks(16),
                                            "allreduce",
                                            "ring",
                                            64ULL << 20,
                                            Seconds(0));
    Simulator::Run();
    EXPECT_FALSE(run->IsComplete());
    ASSERT_TRUE(run->IsFailed());
    EXPECT_NE(run->GetFailureReport().find("GPU 5 down"), std::string::npos)
        << run->GetFailureReport();
    fabric->Dispose();
}

TEST_F(FaultTest, BadFaultParametersAreRejectedWithTheParameterNamed)
{
    const ClusterParams p = OneGpuPerDomain(8);
    Ptr<Fabric> fabric = FabricHelper().Install(BuildRailOnly(p));
    FaultHelper faults(fabric);
    const auto expectError = [](const std::function<void()>& f, const std::string& name) {
        try
        {
            f();
            ADD_FAILURE() << "no error for " << name;
        }
        catch (const FabricConfigError& e)
        {
            EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
        }
    };
    expectError([&]() { faults.LinkDown(999, Seconds(0)); }, "cable");
    expectError([&]() { faults.DegradeLink(0, 0.0, Seconds(0)); }, "fraction");
    expectError([&]() { faults.DegradeLink(0, 1.5, Seconds(0)); }, "fraction");
    expectError([&]() { faults.SetBitErrorRate(0, 1.0); }, "bit-error rate");
    expectError([&]() { faults.GpuDown(8, Seconds(0)); }, "GPU rank");
    expectError([&]() { faults.SwitchDown(fabric->GetTopology().GpuVertex(0), Seconds(0)); },
                "switch vertex");
    expectError([&]() { FaultHelper::FindCable(fabric->GetTopology(), 0, 1); }, "cable ends");
    fabric->Dispose();
}

/// Four switches in a ring, one GPU on each; every GPU sends two hops
/// clockwise along an explicit route, so that the ring links form a cyclic
/// buffer dependency; tiny PFC thresholds close the cycle.
TEST_F(FaultTest, CyclicBufferDependencyDeadlockIsStoppedAndReportedByTheWatchdog)
{
    FabricTopology topo("pfc-ring");
    std::vector<uint32_t> gpus;
    std::vector<uint32_t> sw;
    for (uint32_t i = 0; i < 4; ++i)
    {
        gpus.push_back(topo.AddGpu(-1, 0));
    }
    for (uint32_t i = 0; i < 4; ++i)
    {
        sw.push_back(topo.AddSwitch(TopoNodeKind::Switch, "ring", 1));
    }
    for (uint32_t i = 0; i < 4; ++i)
    {
        topo.AddCable(gpus[i], sw[i], kRate, 500, TopoLinkKind::Nic);
    }
    for (uint32_t i = 0; i < 4; ++i)
    {
        topo.AddCable(sw[i], sw[(i + 1) % 4], kRate, 500, TopoLinkKind::SwitchToSwitch);
    }
    FabricHelper fh;
    fh.SetSwitchAttribute("PfcXoff", UintegerValue(5000));
    fh.SetSwitchAttribute("PfcXon", UintegerValue(1000));
    Ptr<Fabric> fabric = fh.Install(topo);
    auto watchdog = CreateObject<ProgressWatchdog>();
    watchdog->SetAttribute("Interval", TimeValue(MicroSeconds(200)));
    watchdog->Install(fabric->GetTransport(), fabric->GetNodes());
    for (uint32_t i = 0; i < 4; ++i)
    {
        fabric->SendAlongPath({gpus[i], sw[i], sw[(i + 1) % 4], sw[(i + 2) % 4], gpus[(i + 2) % 4]},
                              8 << 20,
                              Transport::DoneCallback());
    }
    Simulator::Run();
    ASSERT_TRUE(watchdog->HasFired());
    EXPECT_EQ(fabric->GetTransport()->GetPendingMessages(), 4u);
    EXPECT_FALSE(watchdog->GetBlockedQueues().empty());
    EXPECT_EQ(watchdog->GetPendingMessages().size(), 4u);
    EXPECT_NE(watchdog->GetReport().find("paused by its peer"), std::string::npos);
    std::printf("%s", watchdog->GetReport().c_str());
    // it stopped the run one to two intervals after the last byte moved
    EXPECT_LT(Simulator::Now(), MilliSeconds(10));
    fabric->Dispose();
}

TEST_F(FaultTest, WatchdogStaysQuietOnAHealthyRunAndLetsItEnd)
{
    const ClusterParams p = OneGpuPerDomain(8);
    Ptr<Fabric> fabric = FabricHelper().Install(BuildRailOnly(p));
    auto watchdog = CreateObject<ProgressWatchdog>();
    watchdog->SetAttribute("Interval", TimeValue(MicroSeconds(50)));
    watchdog->Install(fabric->GetTransport(), fabric->GetNodes());
    CollectiveHelper helper(fabric);
    Ptr<CollectiveRun> run =
        helper.Install(CollectiveHelper::AllRanks(8), "allreduce", "ring", 16 << 20, Seconds(0));
    Simulator::Run();
    EXPECT_TRUE(run->IsComplete());
    EXPECT_FALSE(watchdog->HasFired());
    EXPECT_LE(Simulator::Now(), run->GetFinishTime() + MicroSeconds(50));
    fabric->Dispose();
}

TEST_F(FaultTest, PacketsAGpuRefusesToRelayAreCountedAsDrops)
{
    // GPUs that do not relay on a topology whose cross-rail routes need them:
    // each refused packet is a no-route drop (GetTotalDrops, NoRouteDrop
    // trace), so that the transport's losses add up to the fabric's drops
    // and losses; nothing counts as relayed
    const ClusterParams p = DgxH100(16);
    FabricHelper helper;
    helper.SetGpuAttribute("Forwarding", BooleanValue(false));
    Ptr<Fabric> fabric = helper.Install(BuildRailOnly(p));
    uint64_t traced = 0;
    for (uint32_t r = 0; r < 16; ++r)
    {
        fabric->GetGpu(r)->TraceConnectWithoutContext(
            "NoRouteDrop",
            MakeBoundCallback(
                +[](uint64_t* n, Ptr<const Packet>) { ++*n; },
                &traced));
    }
    Ptr<PacketTransport> t = fabric->GetTransport();
    t->SetAttribute("MaxRetransmissions", UintegerValue(3));
    t->Send(0, 9, 1000, Transport::DoneCallback()); // rail 0 -> rail 1: relayed
    Simulator::Run();
    uint64_t refused = 0;
    uint64_t relayed = 0;
    for (uint32_t r = 0; r < 16; ++r)
    {
        refused += fabric->GetGpu(r)->GetRefusedPackets();
        relayed += fabric->GetGpu(r)->GetForwardedPackets();
    }
    EXPECT_EQ(refused, 4u); // the first try and 3 retransmissions
    EXPECT_EQ(relayed, 0u);
    EXPECT_EQ(traced, refused);
    EXPECT_EQ(fabric->GetTotalDrops(), refused);
    EXPECT_EQ(t->GetLostPackets(), fabric->GetTotalDrops() + fabric->GetTotalLost());
    EXPECT_EQ(t->GetFailedMessages(), 1u);
    fabric->Dispose();
}

TEST_F(FaultTest, RelaysLostToADownPortAreNotCountedAsRelayed)
{
    // rank 0 -> 9 goes over NVLink to GPU 1, which relays onto rail 1. With
    // every NIC down and the routes not yet updated, GPU 1 hands the packets
    // to its down NIC, which loses them: lost, not relayed
    const ClusterParams p = DgxH100(16);
    const FabricTopology topo = BuildRailOnly(p);
    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    FaultHelper faults(fabric);
    faults.SetDetectionDelay(Seconds(1)); // routes keep using the dead port
    for (uint32_t r = 0; r < 16; ++r)
    {
        for (uint32_t c : FaultHelper::CablesOf(topo, topo.GpuVertex(r)))
        {
            const auto& cable = topo.Cables().at(c);
            if (cable.kind == TopoLinkKind::Nic)
            {
                faults.LinkDown(c, Seconds(0)); // every NIC down: no relay can leave
            }
        }
    }
    Ptr<PacketTransport> t = fabric->GetTransport();
    t->SetAttribute("MaxRetransmissions", UintegerValue(2));
    t->Send(0, 9, 1000, Transport::DoneCallback());
    Simulator::Run();
    uint64_t relayed = 0;
    for (uint32_t r = 0; r < 16; ++r)
    {
        relayed += fabric->GetGpu(r)->GetForwardedPackets();
    }
    EXPECT_EQ(relayed, 0u);
    EXPECT_EQ(t->GetFailedMessages(), 1u);
    EXPECT_EQ(t->GetLostPackets(), fabric->GetTotalDrops() + fabric->GetTotalLost());
    fabric->Dispose();
}

TEST_F(FaultTest, AFaultDueAfterTheFabricIsDisposedDoesNothing)
{
    // faults scheduled, then the fabric disposed before they are due (a
    // scenario that ends early, or Python's Fabric.Dispose): they used to
    // reach for the gone devices and crash the run
    const ClusterParams p = OneGpuPerDomain(8);
    const FabricTopology topo = BuildRailOnly(p);
    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    FaultHelper faults(fabric);
    const uint32_t cable = FaultHelper::CablesOf(topo, topo.GpuVertex(0)).at(0);
    faults.LinkDown(cable, MicroSeconds(1));
    faults.DegradeLink(cable, 0.5, MicroSeconds(2));
    faults.GpuDown(3, MicroSeconds(3));
    faults.SwitchDown(FaultHelper::FindSwitches(topo, "rail").at(0), MicroSeconds(4));
    Ptr<FaultInjector> injector = faults.GetInjector();
    EXPECT_TRUE(injector->HasFabric());
    fabric->Dispose();
    EXPECT_FALSE(injector->HasFabric());
    Simulator::Run();
    EXPECT_EQ(Simulator::Now(), MicroSeconds(4)); // every fault came due, and did nothing
    EXPECT_TRUE(injector->GetLog().empty());
}

TEST_F(FaultTest, WatchdogNamesADownLinkThatMessagesWaitFor)
{
    // GPU 0's only cable is down and the routes have not caught up (long
    // detection delay): its message retries into the down port, no byte
    // moves, and the report names the port as down (its queue is empty: it
    // was lost with the link)
    const ClusterParams p = OneGpuPerDomain(8);
    const FabricTopology topo = BuildRailOnly(p);
    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    FaultHelper faults(fabric);
    faults.SetDetectionDelay(Seconds(1));
    const auto cables = FaultHelper::CablesOf(topo, topo.GpuVertex(0));
    ASSERT_EQ(cables.size(), 1u);
    faults.LinkDown(cables.at(0), Seconds(0));
    auto watchdog = CreateObject<ProgressWatchdog>();
    watchdog->SetAttribute("Interval", TimeValue(MicroSeconds(50)));
    watchdog->Install(fabric->GetTransport(), fabric->GetNodes());
    Simulator::Schedule(MicroSeconds(1), [fabric] {
        fabric->GetTransport()->Send(0, 5, 1 << 20, Transport::DoneCallback());
    });
    Simulator::Run();
    ASSERT_TRUE(watchdog->HasFired());
    ASSERT_EQ(watchdog->GetBlockedQueues().size(), 2u) << watchdog->GetReport();
    EXPECT_EQ(watchdog->GetBlockedQueues().at(0), "gpu0 port 0: link down");
    EXPECT_NE(watchdog->GetReport().find("1 message(s) were pending; 2 blocked port(s)"),
              std::string::npos)
        << watchdog->GetReport();
    fabric->Dispose();
}

TEST_F(FaultTest, AGpuKeepsItsTurnOverThePlanesWhenOneIsDown)
{
    // DGX-H100 domain, GPU 5's cable to NVSwitch plane 1 down and routed
    // around: GPU 0 reaches 5 over planes 0, 2, 3 and GPU 1 over all four.
    // One-packet messages to 1, 5, 1 at once take planes 0, 2, 3 and each
    // arrives as a lone packet does. The turn was a position in the
    // destination's port list: the third message went to plane 2 again,
    // behind the second, while planes 1 and 3 idled.
    const ClusterParams p = DgxH100(8);
    const FabricTopology topo = BuildRailOnly(p);
    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    FaultHelper faults(fabric);
    faults.SetDetectionDelay(MicroSeconds(1));
    const auto planes = FaultHelper::FindSwitches(topo, "nvswitch");
    faults.LinkDown(FaultHelper::FindCable(topo, topo.GpuVertex(5), planes.at(1)), MicroSeconds(1));
    // whole packets (a 4 KiB message is otherwise cut into one per plane)
    fabric->GetTransport()->SetAttribute("StripeMinPayload", UintegerValue(4096));
    std::array<Time, 3> done;
    const Time start = MicroSeconds(5);
    Simulator::Schedule(start, [&fabric, &done]() {
        const std::array<uint32_t, 3> to{1, 5, 1};
        for (size_t i = 0; i < to.size(); ++i)
        {
            fabric->GetTransport()->Send(0, to[i], 4096, MakeBoundCallback(&RecordNow, &done[i]));
        }
    });
    Simulator::Run();
    const double packetTime = 4122 * 8 / (p.platform.nvlinkRate.GetBitRate() / 4.0);
    const double lone = 2 * packetTime + 2 * p.platform.nvlinkLatency.GetSeconds();
    for (size_t i = 0; i < done.size(); ++i)
    {
        EXPECT_NEAR((done[i] - start).GetSeconds(), lone, 2e-9) << "message " << i;
    }
}

} // namespace

namespace
{

/// Two plain nodes joined by one fabric cable; counts IPv4 frames at b.
struct PlainCable
{
    Ptr<FabricChannel> cable = CreateObject<FabricChannel>();
    std::array<Ptr<FabricNetDevice>, 2> dev;
    uint32_t received{0};

    /// \param bAttachedByCable attach b with FabricChannel::Attach alone
    PlainCable(const std::string& rate, Time delay, bool bAttachedByCable = false)
    {
        cable->SetAttribute("Delay", TimeValue(delay));
        std::array<Ptr<Node>, 2> node = {CreateObject<Node>(), CreateObject<Node>()};
        for (int i = 0; i < 2; ++i)
        {
            dev[i] = CreateObject<FabricNetDevice>();
            dev[i]->SetDataRate(DataRate(rate));
            node[i]->AddDevice(dev[i]);
            if (i == 1 && bAttachedByCable)
            {
                cable->Attach(dev[i]);
            }
            else
            {
                dev[i]->Attach(cable);
            }
        }
        node[1]->RegisterProtocolHandler(
            Node::ProtocolHandler([this](Ptr<NetDevice>,
                                         Ptr<const Packet>,
                                         uint16_t,
                                         const Address&,
                                         const Address&,
                                         NetDevice::PacketType) { ++received; }),
            0x0800,
            dev[1]);
    }

    /// a sends one frame of \p bytes to b at \p at
    void SendAt(Time at, uint32_t bytes)
    {
        Simulator::Schedule(at, [this, bytes] {
            dev[0]->Send(Create<Packet>(bytes), dev[1]->GetAddress(), 0x0800);
        });
    }
};

TEST_F(FaultTest, APauseInFlightWhenTheLinkResetsIsLostWithIt)
{
    // b asks a to pause; the link resets (briefly, or down and up at the
    // same instant) before the pause arrives. b forgot it sent one (pause
    // state does not survive a reset), so it will never resume a: the pause
    // must be lost with the link, or a stays paused for good.
    for (const Time upAfter : {NanoSeconds(100), NanoSeconds(0)})
    {
        PlainCable c("8Gbps", MicroSeconds(1));
        Simulator::Schedule(NanoSeconds(0),
                            [&c] { c.cable->SendFlowControl(PeekPointer(c.dev[1]), true); });
        Simulator::Schedule(NanoSeconds(100), [&c] { c.cable->SetLinkUp(false); });
        Simulator::Schedule(NanoSeconds(100) + upAfter, [&c] { c.cable->SetLinkUp(true); });
        c.SendAt(MicroSeconds(2), 1000);
        Simulator::Run();
        EXPECT_EQ(c.dev[0]->GetStats().flowControlFrames, 1u); // it arrived...
        EXPECT_EQ(c.dev[0]->GetStats().pausesRecv, 0u);        // ...lost with the link
        EXPECT_EQ(c.received, 1u) << "a stayed paused (reset " << upAfter << ")";
        Simulator::Destroy();
    }
}

TEST_F(FaultTest, ADeviceAttachedByItsCableAloneKeepsItsLinkEpochCurrent)
{
    // The cable stamps each frame with its receiver's link epoch (a copy the
    // device refreshes through its channel). A receiver attached with
    // FabricChannel::Attach alone must still refresh it, or after a flap of
    // its own link every frame to it counts as lost on the wire.
    PlainCable c("100Gbps", NanoSeconds(500), true);
    EXPECT_EQ(c.dev[1]->GetChannel(), c.cable);
    Simulator::Schedule(NanoSeconds(0), [&c] { c.dev[1]->SetLinkUp(false); });
    Simulator::Schedule(NanoSeconds(10), [&c] { c.dev[1]->SetLinkUp(true); });
    c.SendAt(NanoSeconds(100), 1000);
    Simulator::Run();
    EXPECT_EQ(c.received, 1u);
    EXPECT_EQ(c.dev[1]->GetStats().lost, 0u);
    Simulator::Destroy();
}

TEST_F(FaultTest, AFrameSentTheInstantALinkComesUpArrives)
{
    // 100 Gb/s: a 4122-byte frame serializes in 329.76 ns, which the sender
    // counts as 329 ns (the remainder carried to the next frame). A frame
    // sent the instant the link comes back up is not lost on the wire; one
    // on the wire when it went down is.
    PlainCable c("100Gbps", NanoSeconds(500));
    Simulator::Schedule(NanoSeconds(0), [&c] { c.cable->SetLinkUp(false); });
    Simulator::Schedule(NanoSeconds(1000), [&c] { c.cable->SetLinkUp(true); });
    c.SendAt(NanoSeconds(1000), 4108);
    Simulator::Run();
    EXPECT_EQ(c.received, 1u);
    EXPECT_EQ(c.dev[1]->GetStats().lost, 0u);
    Simulator::Destroy();

    PlainCable d("100Gbps", NanoSeconds(500));
    d.SendAt(NanoSeconds(0), 4108);
    Simulator::Schedule(NanoSeconds(600), [&d] { d.cable->SetLinkUp(false); });
    Simulator::Schedule(NanoSeconds(700), [&d] { d.cable->SetLinkUp(true); });
    Simulator::Run();
    EXPECT_EQ(d.received, 0u);
    EXPECT_EQ(d.dev[1]->GetStats().lost, 1u);
    Simulator::Destroy();
}

} // namespace
