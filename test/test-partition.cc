/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * FabricPartitioner: which rank simulates each vertex of a distributed run,
 * the cables it cuts and the lookahead they leave; refusals by name; and
 * FabricHelper giving the nodes their ranks as ns-3 system ids.
 */
#include "ns3/core-module.h"
#include "ns3/fabric-distributed.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-helper.h"
#include "ns3/fabric-partition.h"
#include "ns3/parallelism.h"
#include "ns3/topology-builders.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <set>

using namespace ns3;

namespace
{

ClusterParams
RailOnly16()
{
    ClusterParams p;
    p.gpus = 16; // two DGX H100 domains of 8, eight rails
    p.linkDelayNs = 700;
    return p;
}

ClusterParams
FatTree16()
{
    ClusterParams p;
    p.gpus = 16;
    p.platform = HbDomainPreset::Custom(1, DataRate("100Gbps"), DataRate("100Gbps"));
    p.radix = 4; // three tiers: 4 pods of 4 hosts, 4 spines
    p.linkDelayNs = 900;
    return p;
}

/// Expect a FabricConfigError whose text holds every one of \p parts.
template <typename F>
void
ExpectRefused(F&& f, std::initializer_list<std::string> parts)
{
    try
    {
        f();
        ADD_FAILURE() << "not refused";
    }
    catch (const FabricConfigError& e)
    {
        const std::string what = e.what();
        for (const std::string& part : parts)
        {
            EXPECT_NE(what.find(part), std::string::npos) << what;
        }
    }
}

} // namespace

TEST(Partition, ByDomainKeepsNvLinkInsideARank)
{
    const FabricTopology topo = BuildRailOnly(RailOnly16());
    const FabricPartition part = FabricPartitioner::Make(topo, 2, "domain");
    ASSERT_EQ(part.rankOf.size(), topo.GetNVertices());
    for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
    {
        const TopoNode& n = topo.Node(v);
        if (n.domain >= 0)
        {
            EXPECT_EQ(part.rankOf[v], static_cast<uint32_t>(n.domain)) << v;
        }
    }
    EXPECT_EQ(part.gpusOnRank, (std::vector<uint32_t>{8, 8}));
    // each rail switch serves one GPU of each domain: it lands on one rank
    // and exactly one of its two NIC cables is cut, never an NVLink cable
    uint32_t cut = 0;
    for (const TopoCable& c : topo.Cables())
    {
        if (part.rankOf[c.a] != part.rankOf[c.b])
        {
            ++cut;
            EXPECT_EQ(c.kind, TopoLinkKind::Nic);
        }
    }
    EXPECT_EQ(cut, 8u);
    EXPECT_EQ(part.cutCables, 8u);
    EXPECT_EQ(part.lookahead, NanoSeconds(700));
    // the eight rail switches split evenly (ties go to the emptier rank)
    std::vector<uint32_t> rails(2, 0);
    for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
    {
        if (topo.Node(v).kind == TopoNodeKind::Switch)
        {
            ++rails[part.rankOf[v]];
        }
    }
    EXPECT_EQ(rails, (std::vector<uint32_t>{4, 4}));
}

TEST(Partition, DomainBlocksInterleaveOverTheRanks)
{
    // eight DGX H100 domains, 2 ranks, 2 blocks each: domains 0-1 and 4-5 on
    // rank 0, 2-3 and 6-7 on rank 1, so each half of the domains (a
    // pipeline stage of a PP 2 job) spreads over both ranks
    ClusterParams p = RailOnly16();
    p.gpus = 64;
    const FabricTopology topo = BuildRailOnly(p);
    const FabricPartition part = FabricPartitioner::Make(topo, 2, "domain:2");
    for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
    {
        const TopoNode& n = topo.Node(v);
        if (n.domain >= 0)
        {
            EXPECT_EQ(part.rankOf[v], static_cast<uint32_t>(n.domain) / 2 % 2) << v;
        }
    }
    EXPECT_EQ(part.gpusOnRank, (std::vector<uint32_t>{32, 32}));
    // one block per rank is the contiguous partition; 8 domains on 3 ranks in
    // 2 blocks each: blocks 0-1, 2, 3, 4-5, 6, 7 on ranks 0, 1, 2, 0, 1, 2
    EXPECT_EQ(FabricPartitioner::Make(topo, 2, "domain:1").rankOf,
              FabricPartitioner::Make(topo, 2, "domain").rankOf);
    const FabricPartition three = FabricPartitioner::Make(topo, 3, "domain:2");
    std::vector<uint32_t> byDomain(8, 99);
    for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
    {
        if (topo.Node(v).domain >= 0)
        {
            byDomain[topo.Node(v).domain] = three.rankOf[v];
        }
    }
    EXPECT_EQ(byDomain, (std::vector<uint32_t>{0, 0, 1, 2, 0, 0, 1, 2}));
    // refused by name: blocks that are not a whole number from 1, or more
    // blocks than domains
    for (const char* bad : {"domain:0", "domain:", "domain:x", "domain:2x", "domain:999999"})
    {
        ExpectRefused([&] { FabricPartitioner::Make(topo, 2, bad); },
                      {"partition", bad, "domain:B"});
    }
    ExpectRefused([&] { FabricPartitioner::Make(topo, 2, "domain:5"); },
                  {"ranks", "'2'", "8 HB domain(s) in 5 block(s) per rank", "domain:5"});
}

TEST(Partition, PipelinePolicySpreadsEveryStageOverEveryRank)
{
    // 64 GPUs in eight domains, a job of TP 8, PP 2, DP 4 as Parallelism
    // places it: stage 0 on domains 0-3, stage 1 on 4-7
    ClusterParams p = RailOnly16();
    p.gpus = 64;
    const FabricTopology topo = BuildRailOnly(p);
    Parallelism::Shape shape;
    shape.gpus = 64;
    shape.gpusPerDomain = 8;
    shape.tp = 8;
    shape.pp = 2;
    shape.dp = 4;
    shape.globalBatchSequences = 4;
    const Parallelism job(shape);
    // GPUs of each stage on each rank
    const auto stageGpus = [&](const std::string& spec) {
        const FabricPartition part = FabricPartitioner::Make(topo, 2, spec);
        std::vector<std::vector<uint32_t>> out(2, std::vector<uint32_t>(2, 0));
        for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
        {
            const TopoNode& n = topo.Node(v);
            if (n.kind == TopoNodeKind::Gpu)
            {
                ++out[job.Coord(n.rank).pp][part.rankOf[v]];
            }
        }
        return out;
    };
    const std::string spec = "pipeline:" + std::to_string(job.Pp());
    EXPECT_EQ(stageGpus(spec), (std::vector<std::vector<uint32_t>>{{16, 16}, {16, 16}}));
    // one block per rank would give each stage a rank of its own
    EXPECT_EQ(stageGpus("domain"), (std::vector<std::vector<uint32_t>>{{32, 0}, {0, 32}}));
    // "pipeline:P" is "domain:B" with B = min(P, domains per rank)
    const auto same = [](const FabricTopology& t, uint32_t ranks, uint32_t p, const char* as) {
        EXPECT_EQ(FabricPartitioner::Make(t, ranks, "pipeline:" + std::to_string(p)).rankOf,
                  FabricPartitioner::Make(t, ranks, as).rankOf)
            << ranks << " ranks, pipeline:" << p << " as " << as;
    };
    same(topo, 2, 2, "domain:2");
    // no pipeline, or one domain per rank: the contiguous policy
    same(topo, 2, 1, "domain");
    same(topo, 8, 4, "domain");
    // blocks are capped at the domains each rank holds (8 / 2 = 4; 8 / 3 = 2)
    same(topo, 2, 16, "domain:4");
    same(topo, 3, 4, "domain:2");
    // a fat-tree without domains counts its GPUs: 16 GPUs, 2 ranks
    const FabricTopology tree = BuildFatTree(FatTree16());
    same(tree, 2, 4, "domain:4");
    same(tree, 2, 100, "domain:8");
    // every P is a policy Make takes, on any number of ranks
    for (uint32_t stages : {1u, 2u, 3u, 4u, 16u, 65536u})
    {
        for (uint32_t ranks : {1u, 2u, 3u, 4u})
        {
            EXPECT_NO_THROW(
                FabricPartitioner::Make(topo, ranks, "pipeline:" + std::to_string(stages)))
                << ranks << " ranks, " << stages << " stages";
        }
    }
    for (const char* bad : {"pipeline:0", "pipeline:", "pipeline:x", "pipeline:65537"})
    {
        ExpectRefused([&] { FabricPartitioner::Make(topo, 2, bad); },
                      {"partition", bad, "pipeline:P"});
    }
}

TEST(Partition, ByPodCutsOnlySpineCables)
{
    const FabricTopology topo = BuildFatTree(FatTree16());
    const FabricPartition part = FabricPartitioner::Make(topo, 2, "pod");
    uint32_t top = 0;
    for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
    {
        top = std::max(top, topo.Node(v).tier);
    }
    ASSERT_EQ(top, 3u); // GPUs 0, leaves 1, aggregation 2, spines 3
    // GPUs 0-7 (pods 0, 1) on rank 0, 8-15 on rank 1
    for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
    {
        if (topo.Node(v).kind == TopoNodeKind::Gpu)
        {
            EXPECT_EQ(part.rankOf[v], topo.Node(v).rank / 8) << v;
        }
    }
    for (const TopoCable& c : topo.Cables())
    {
        if (part.rankOf[c.a] != part.rankOf[c.b])
        {
            EXPECT_TRUE(topo.Node(c.a).tier == top || topo.Node(c.b).tier == top)
                << "a cut below the spines";
        }
    }
    EXPECT_GT(part.cutCables, 0u);
    EXPECT_EQ(part.lookahead, NanoSeconds(900));
    EXPECT_EQ(part.gpusOnRank, (std::vector<uint32_t>{8, 8}));
}

TEST(Partition, FromFileAndTheRestByCables)
{
    const FabricTopology topo = BuildFatTree(FatTree16());
    const auto dir = std::filesystem::path(::testing::TempDir()) / "partition-file";
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "p.json").string();
    {
        std::ofstream f(path);
        f << R"({"gpu-0": 1, "gpu-1": 1, "gpu-2": 1, "gpu-3": 1, "gpu-4": 0})";
    }
    const FabricPartition part = FabricPartitioner::Make(topo, 2, "file:" + path);
    const std::vector<std::string> names = FabricVertexNames(topo);
    for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
    {
        const TopoNode& n = topo.Node(v);
        if (n.kind == TopoNodeKind::Gpu && n.rank < 4)
        {
            EXPECT_EQ(part.rankOf[v], 1u) << names[v];
        }
    }
    // the file's four GPUs share one leaf: it follows them
    for (const TopoCable& c : topo.Cables())
    {
        if (topo.Node(c.a).kind == TopoNodeKind::Gpu && topo.Node(c.a).rank == 0)
        {
            EXPECT_EQ(part.rankOf[c.b], 1u) << names[c.b];
        }
    }
    EXPECT_GE(part.gpusOnRank[1], 4u);
    EXPECT_GE(part.gpusOnRank[0], 1u);
    EXPECT_EQ(part.gpusOnRank[0] + part.gpusOnRank[1], 16u);
    // a file that leaves a rank nothing is refused
    {
        std::ofstream f(path);
        f << R"({"gpu-0": 1})";
    }
    ExpectRefused([&] { FabricPartitioner::Make(topo, 2, "file:" + path); }, {"rank 0 nothing"});
}

TEST(Partition, BadInputIsRefusedByName)
{
    const FabricTopology topo = BuildFatTree(FatTree16());
    const uint32_t nv = topo.GetNVertices();
    ExpectRefused([&] { FabricPartitioner::Make(topo, 0, "domain"); }, {"ranks", "at least 1"});
    ExpectRefused([&] { FabricPartitioner::Make(topo, nv + 1, "domain"); },
                  {"ranks", std::to_string(nv + 1), "vertices"});
    ExpectRefused([&] { FabricPartitioner::Make(topo, 5, "pod"); }, {"ranks", "'5'", "4 pod(s)"});
    ExpectRefused([&] { FabricPartitioner::Make(topo, 2, "round-robin"); },
                  {"partition", "round-robin", "domain, domain:B", "pod or file:PATH"});
    const auto dir = std::filesystem::path(::testing::TempDir()) / "partition-bad";
    std::filesystem::create_directories(dir);
    const std::string unknown = (dir / "unknown.json").string();
    {
        std::ofstream f(unknown);
        f << R"({"gpu-0": 0, "spine-9": 1})";
    }
    ExpectRefused([&] { FabricPartitioner::Make(topo, 2, "file:" + unknown); },
                  {unknown, "vertex", "spine-9"});
    const std::string range = (dir / "range.json").string();
    {
        std::ofstream f(range);
        f << R"({"gpu-3": 2})";
    }
    ExpectRefused([&] { FabricPartitioner::Make(topo, 2, "file:" + range); },
                  {"rank of gpu-3", "'2'", "0..1"});
    const std::string broken = (dir / "broken.json").string();
    {
        std::ofstream f(broken);
        f << R"({"gpu-3": )";
    }
    ExpectRefused([&] { FabricPartitioner::Make(topo, 2, "file:" + broken); },
                  {broken, "well-formed JSON"});
    // on one rank too (where the file places nothing): a missing, broken or
    // unknown-naming file fails as it would on two; a rank beyond one is not checked
    const std::string missing = (dir / "missing.json").string();
    ExpectRefused([&] { FabricPartitioner::Make(topo, 1, "file:" + missing); },
                  {"partition file", missing, "a readable file"});
    ExpectRefused([&] { FabricPartitioner::Make(topo, 1, "file:" + broken); },
                  {broken, "well-formed JSON"});
    ExpectRefused([&] { FabricPartitioner::Make(topo, 1, "file:" + unknown); },
                  {unknown, "vertex", "spine-9"});
    EXPECT_EQ(FabricPartitioner::Make(topo, 1, "file:" + range).cutCables, 0u);
    // a cut cable without delay leaves no lookahead
    ClusterParams p = FatTree16();
    p.linkDelayNs = 0;
    const FabricTopology flat = BuildFatTree(p);
    ExpectRefused([&] { FabricPartitioner::Make(flat, 2, "pod"); },
                  {"cut cable", "delay", "'0 ns'", "positive delay"});
    // a rank left empty: every vertex pinned to rank 0
    std::vector<int64_t> all0(nv, 0);
    ExpectRefused([&] { FabricPartitioner::Complete(topo, 2, all0, "all on 0"); },
                  {"rank 1 nothing"});
}

TEST(Partition, StopWhenIdleRefusesANonPositivePeriodAndIsANoOpInOneProcess)
{
    ExpectRefused([] { FabricDistributed::StopWhenIdle(Time(0)); },
                  {"StopWhenIdle period", "positive time"});
    // not distributed (nor on null messages): nothing is scheduled, the run
    // ends with its own last event
    FabricDistributed::StopWhenIdle(MicroSeconds(10));
    Simulator::Schedule(MilliSeconds(1), [] {});
    Simulator::Run();
    EXPECT_EQ(Simulator::Now(), MilliSeconds(1));
    EXPECT_EQ(Simulator::GetEventCount(), 1u);
    Simulator::Destroy();
}

TEST(Partition, HelperGivesNodesTheirRanks)
{
    const FabricTopology topo = BuildFatTree(FatTree16());
    const FabricPartition part = FabricPartitioner::Make(topo, 4, "pod");
    FabricHelper helper;
    helper.SetPartition(part);
    Ptr<Fabric> fabric = helper.Install(topo);
    const NodeContainer nodes = fabric->GetNodes();
    ASSERT_EQ(nodes.GetN(), topo.GetNVertices());
    std::set<uint32_t> seen;
    for (uint32_t v = 0; v < nodes.GetN(); ++v)
    {
        EXPECT_EQ(nodes.Get(v)->GetSystemId(), part.rankOf[v]) << v;
        seen.insert(nodes.Get(v)->GetSystemId());
    }
    EXPECT_EQ(seen.size(), 4u);
    // nodes made afterwards are rank 0's again
    FabricHelper plain;
    Ptr<Fabric> other = plain.Install(topo);
    for (uint32_t v = 0; v < other->GetNodes().GetN(); ++v)
    {
        EXPECT_EQ(other->GetNodes().Get(v)->GetSystemId(), 0u);
    }
    // one rank per vertex or refused
    FabricPartition wrong = part;
    wrong.rankOf.pop_back();
    FabricHelper bad;
    bad.SetPartition(wrong);
    ExpectRefused([&] { bad.Install(topo); }, {"partition (vertices)"});
    fabric->Dispose();
    other->Dispose();
    Simulator::Destroy();
}
