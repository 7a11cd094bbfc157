/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// The baselines of the direct-connect paper (ring, ShiftedRing, double binary
// tree, recursive halving-doubling) as schedules on direct-connect graphs:
// every one passes the checker, the rings found are Hamiltonian and
// arc-disjoint, the double binary tree is placed with every tree edge on a
// link of its own where it can be (else falls back and says so), the formula
// reduces to the closed forms of collective-baselines where those apply, a ring on a ring graph
// runs in its formula's time on the packet-level fabric, BFB is not slower than ShiftedRing at a
// large size on the testbed shape, BFB's flow-level time is its alpha-beta formula up to the
// pipeline's fill, and direct-connect-synth
// --compare writes one row per (graph, size, algorithm) with the level it
// was simulated at ("formula" where it was not).
#include "program-run.h"

#include "ns3/bfb-collective.h"
#include "ns3/collective-baselines.h"
#include "ns3/collective-helper.h"
#include "ns3/dc-baselines.h"
#include "ns3/fabric-error.h"
#include "ns3/schedule-checker.h"
#include "ns3/simulator.h"
#include "ns3/topology-builders.h"
#include "ns3/topology-finder.h"
#include "ns3/transport-helper.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <map>
#include <numeric>
#include <set>

using namespace ns3;
using namespace gpu_fabric_test;

namespace
{

constexpr double kPayloadShare = 4096.0 / 4122.0; // goodput of a full packet
constexpr uint64_t kNodeBps = 100'000'000'000ULL; // B
constexpr int64_t kDelayNs = 100;

/// One hop of an empty packet: link delay plus a 26-byte header at B/d
/// (direct-connect-synth --compare's alpha).
double
Hop(uint32_t degree)
{
    return kDelayNs * 1e-9 + 26.0 * 8 / (static_cast<double>(kNodeBps) / degree);
}

/// \return the simulated time of \p cs on \p g's fabric at \p backend level
double
RunOn(const DirectConnectGraph& g, const CollectiveSchedule& cs, const std::string& backend)
{
    ClusterParams p;
    p.platform = HbDomainPreset::Custom(1, DataRate(kNodeBps), DataRate(kNodeBps));
    p.linkDelayNs = kDelayNs;
    const CollectiveResult r = TransportHelper(backend, "backend")
                                   .RunScheduleAlone(BuildDirectConnect(g, kNodeBps, p), cs);
    EXPECT_TRUE(r.complete);
    return r.timeS;
}

/// \return whether \p order is a permutation of 0..n-1
bool
IsPermutation(std::vector<uint32_t> order, uint32_t n)
{
    std::sort(order.begin(), order.end());
    std::vector<uint32_t> all(n);
    std::iota(all.begin(), all.end(), 0);
    return order == all;
}

} // namespace

class DcBaselineChecked : public ::testing::TestWithParam<std::string>
{
};

TEST_P(DcBaselineChecked, EveryBaselinePassesTheCheckerAndMovesItsBytes)
{
    const DirectConnectGraph g = BuildFromName(GetParam());
    const uint32_t n = g.NumNodes();
    for (uint64_t bytes : {uint64_t{1000}, uint64_t{1} << 20})
    {
        for (const std::string& algo : DcBaselineNames())
        {
            SCOPED_TRACE(fmt::format("{} {} {} bytes", g.Name(), algo, bytes));
            const DcBaseline b = BuildDcBaseline(g, algo, bytes);
            EXPECT_EQ(b.schedule.Type(), CollectiveType::AllReduce);
            EXPECT_EQ(b.schedule.NumRanks(), n);
            const auto r = ScheduleChecker::Check(b.schedule);
            EXPECT_TRUE(r.Ok()) << r.message;
            // the count --compare weighs a simulation by, before building it
            EXPECT_EQ(BuildDcBaseline(g, algo, bytes, false).messages, b.schedule.TotalOps() / 2);
            if (algo == "ring" || algo == "shifted-ring")
            {
                // a ring allreduce moves 2 (N-1)/N of the buffer through every host
                // (up to the split's rounding)
                const double perHost = 2.0 * (n - 1) / n * bytes;
                for (uint32_t h = 0; h < n; ++h)
                {
                    EXPECT_NEAR(b.schedule.BytesSent(h), perHost, 2.0 * n * b.rings.size());
                }
                EXPECT_EQ(b.rings.size(), algo == "ring" ? 1u : g.Degree());
                for (const auto& ring : b.rings)
                {
                    EXPECT_TRUE(IsPermutation(ring, n));
                }
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Graphs,
                         DcBaselineChecked,
                         ::testing::Values("BiRing(5)",
                                           "Torus(3,4)",
                                           "C(12,{2,3})",
                                           "Kautz(2,3)",
                                           "L(K(4,4))",
                                           "GenKautz(3,10)"),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                             std::string s;
                             for (char c : i.param)
                             {
                                 s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                             }
                             return s;
                         });

TEST(DcBaselineRings, RingsAreArcDisjointHamiltonianCycles)
{
    // circulants, tori and rings decompose into d arc-disjoint Hamiltonian cycles
    for (const std::string name :
         {"Ring(7)", "BiRing(6)", "C(12,{2,3})", "Torus(4,4)", "C(16,{1,2})"})
    {
        const DirectConnectGraph g = BuildFromName(name);
        const auto rings = FindArcDisjointRings(g, g.Degree());
        ASSERT_EQ(rings.size(), g.Degree()) << name;
        std::vector<uint32_t> arcUse(g.NumArcs(), 0);
        for (const auto& ring : rings)
        {
            ASSERT_TRUE(IsPermutation(ring, g.NumNodes())) << name;
            for (size_t i = 0; i < ring.size(); ++i)
            {
                const uint32_t u = ring[i];
                const uint32_t v = ring[(i + 1) % ring.size()];
                bool found = false;
                for (uint32_t a : g.OutArcs(u))
                {
                    if (g.GetArc(a).to == v && arcUse[a] == 0)
                    {
                        ++arcUse[a];
                        found = true;
                        break;
                    }
                }
                EXPECT_TRUE(found)
                    << name << ": ring edge " << u << " -> " << v << " is not a free arc";
            }
        }
        const DcBaseline sr = BuildDcBaseline(g, "shifted-ring", 1 << 20);
        EXPECT_EQ(sr.nativeRings, g.Degree()) << name;
    }
}

TEST(DcBaselineRings, GridsGetTheGrayCodeSnakeAndItsReverse)
{
    // a torus with an even side and a hypercube have a Hamiltonian cycle in
    // their reflected Gray order (the search alone found none on Torus(32,32)):
    // at least two arc-disjoint rings
    for (const std::string name : {"Torus(32,32)", "Torus(5,4,3)", "Hypercube(6)"})
    {
        const DirectConnectGraph g = BuildFromName(name);
        const auto rings = FindArcDisjointRings(g, g.Degree());
        ASSERT_GE(rings.size(), 2u) << name;
        std::vector<uint32_t> arcUse(g.NumArcs(), 0);
        for (const auto& ring : rings)
        {
            ASSERT_TRUE(IsPermutation(ring, g.NumNodes())) << name;
            for (size_t i = 0; i < ring.size(); ++i)
            {
                const uint32_t v = ring[(i + 1) % ring.size()];
                uint32_t free = 0;
                for (uint32_t a : g.OutArcs(ring[i]))
                {
                    if (g.GetArc(a).to == v && arcUse[a] == 0 && free == 0)
                    {
                        ++arcUse[a];
                        ++free;
                    }
                }
                ASSERT_EQ(free, 1u) << name << ": " << ring[i] << " -> " << v;
            }
        }
    }
    // Torus(32,32) keeps the snake and its reverse (a search from scratch
    // may find more rings on smaller grids and is kept instead)
    const auto big = FindArcDisjointRings(BuildFromName("Torus(32,32)"), 4);
    ASSERT_GE(big.size(), 2u);
    std::vector<uint32_t> back = big[0];
    std::reverse(back.begin() + 1, back.end());
    EXPECT_EQ(big[1], back);
    EXPECT_EQ(big[0][1], 1u); // along the last coordinate first
    // a torus of odd sides has no such order: the search's rings, as before
    const DirectConnectGraph odd = BuildFromName("Torus(3,3)");
    EXPECT_EQ(FindArcDisjointRings(odd, 4).size(), 4u);
}

TEST(DcBaselineFormula, ReducesToTheClosedFormsWhereTheyApply)
{
    const double alpha = 2e-6;
    const double bps = 1e11;
    const uint64_t m = 12 * 4 * 1000; // pieces of whole bytes
    // ShiftedRing on d arc-disjoint rings: collective-baselines' closed form
    for (const std::string name : {"C(12,{2,3})", "Torus(3,4)"})
    {
        const DirectConnectGraph g = BuildFromName(name);
        const DcBaseline sr = BuildDcBaseline(g, "shifted-ring", m);
        ASSERT_EQ(sr.nativeRings, 4u) << name;
        const BaselineCost c = ShiftedRingAllReduce(12, 4);
        EXPECT_NEAR(DcBaselineFormula(g, sr, alpha, bps),
                    AlphaBetaTime(c.steps, c.tb, alpha, m, bps),
                    1e-12)
            << name;
        // one ring on one port of four: d times ShiftedRing's bandwidth term
        const DcBaseline ring = BuildDcBaseline(g, "ring", m);
        EXPECT_NEAR(DcBaselineFormula(g, ring, alpha, bps),
                    AlphaBetaTime(c.steps, c.tb * Fraction(4), alpha, m, bps),
                    1e-12)
            << name;
    }
    // the double binary tree on a complete graph: every tree edge an arc of
    // its own, M/2 on the busiest: T_B = d/2 (collective-baselines)
    {
        const DirectConnectGraph g = BuildFromName("K(16)");
        const DcBaseline t = BuildDcBaseline(g, "tree", 1 << 20);
        const BaselineCost c = DoubleBinaryTreeAllReduce(16u, 15u);
        EXPECT_NEAR(DcBaselineFormula(g, t, 0, bps),
                    AlphaBetaTime(0, c.tb, 0, 1 << 20, bps),
                    1e-12);
        // latency: twice the tree's height, one hop per edge
        EXPECT_NEAR(DcBaselineFormula(g, t, alpha, bps) - DcBaselineFormula(g, t, 0, bps),
                    alpha * 2 * t.pipelineHops,
                    1e-12);
        // placed on links of their own, no higher than NCCL's trees
        ASSERT_TRUE(t.treeOnLinks);
        EXPECT_EQ(t.pipelineHops, std::max(t.trees[0].height, t.trees[1].height));
        EXPECT_LE(t.pipelineHops, DoubleBinaryTree(16)[0].height);
    }
    // halving-doubling on a hypercube: partners are neighbours, one port per
    // step: 2 log2 N steps of one hop, (N-1)/N M through one arc each way
    {
        const DirectConnectGraph g = BuildFromName("Hypercube(3)");
        const DcBaseline hd = BuildDcBaseline(g, "halving-doubling", 8000);
        EXPECT_NEAR(DcBaselineFormula(g, hd, alpha, bps),
                    6 * alpha + 2.0 * 7 / 8 * 8000 * 8 / (bps / 3),
                    1e-12);
    }
}

TEST(DcBaselineFormula, RoutingSpreadsOverEqualCostPaths)
{
    // BiRing(4): 0 -> 2 has two shortest paths, half on each; 3 -> 1 likewise
    // (through 0 or 2)
    const DirectConnectGraph g = BuildFromName("BiRing(4)");
    DcRouter r(g);
    uint32_t hops = 0;
    EXPECT_DOUBLE_EQ(r.MaxArcBytes({{0, 2, 1000.0}}, hops), 500.0);
    EXPECT_EQ(hops, 2u);
    EXPECT_DOUBLE_EQ(r.MaxArcBytes({{0, 1, 1000.0}, {2, 1, 1000.0}}, hops), 1000.0);
    EXPECT_EQ(hops, 1u);
    EXPECT_DOUBLE_EQ(r.MaxArcBytes({{0, 2, 1000.0}, {0, 1, 1000.0}}, hops), 1500.0);
    EXPECT_DOUBLE_EQ(r.MaxArcBytes({{3, 1, 1000.0}, {0, 1, 1000.0}}, hops), 1500.0);
    EXPECT_EQ(hops, 2u);
}

namespace
{

/// \return whether \p g has an arc from \p u to \p v
bool
HasArc(const DirectConnectGraph& g, uint32_t u, uint32_t v)
{
    for (uint32_t a : g.OutArcs(u))
    {
        if (g.GetArc(a).to == v)
        {
            return true;
        }
    }
    return false;
}

} // namespace

// The double binary tree on the testbed graph (12 hosts, degree 4): two
// spanning trees over links only, no link in both, every host inner (with
// children) in at most one tree, at most two children, no higher than NCCL's
// trees; the schedule moves exactly one half of the buffer over each arc a
// tree uses, ceil(M/2) on the busiest, and the formula is
// 2 h alpha + ceil(M/2) / (B/d).
TEST(DcBaselineTree, PlacedOnLinksOfTheirOwnOnTheTestbedGraph)
{
    const DirectConnectGraph g = BuildFromName("C(12,{2,3})");
    const uint32_t n = 12;
    const uint64_t m = (uint64_t{1} << 20) + 1; // odd: the halves differ by one byte
    const DcBaseline b = BuildDcBaseline(g, "tree", m);
    ASSERT_TRUE(b.treeOnLinks) << b.routing;
    EXPECT_NE(b.routing.find("link of its own"), std::string::npos) << b.routing;
    ASSERT_EQ(b.trees.size(), 2u);
    std::set<std::pair<uint32_t, uint32_t>> links; // both trees' edges, lower host first
    std::vector<uint32_t> inner(n, 0);             // trees a host has children in
    std::vector<uint32_t> edges(n, 0);             // tree edges at a host
    uint32_t height = 0;
    for (const BinaryTree& t : b.trees)
    {
        EXPECT_TRUE(IsPermutation(t.topDown, n));
        EXPECT_EQ(t.topDown[0], t.root);
        std::vector<uint32_t> depth(n, 0);
        for (uint32_t v : t.topDown)
        {
            if (v == t.root)
            {
                EXPECT_EQ(t.parent[v], kNoRank);
                continue;
            }
            const uint32_t p = t.parent[v];
            ASSERT_LT(p, n);
            depth[v] = depth[p] + 1;
            height = std::max(height, depth[v]);
            EXPECT_TRUE(HasArc(g, p, v) && HasArc(g, v, p)) << p << " - " << v;
            EXPECT_TRUE(links.insert({std::min(p, v), std::max(p, v)}).second)
                << "link " << p << " - " << v << " used twice";
            ++edges[p];
            ++edges[v];
        }
        for (uint32_t v = 0; v < n; ++v)
        {
            EXPECT_LE(t.children[v].size(), 2u);
            inner[v] += !t.children[v].empty();
        }
    }
    EXPECT_EQ(links.size(), 2u * (n - 1));
    for (uint32_t v = 0; v < n; ++v)
    {
        EXPECT_LE(inner[v], 1u) << "host " << v;
        EXPECT_LE(edges[v], g.Degree()) << "host " << v;
    }
    EXPECT_EQ(b.pipelineHops, height);
    EXPECT_LE(height, DoubleBinaryTree(n)[0].height);
    // the schedule: tree k's half up and down each of its edges, nothing else
    const auto r = ScheduleChecker::Check(b.schedule);
    EXPECT_TRUE(r.Ok()) << r.message;
    const uint64_t big = (m + 1) / 2;
    uint64_t busiest = 0;
    uint32_t pairs = 0;
    for (const PairBytes& pb : b.schedule.TrafficMatrix())
    {
        if (pb.bytes == 0)
        {
            continue;
        }
        ++pairs;
        EXPECT_TRUE(HasArc(g, pb.src, pb.dst)) << pb.src << " -> " << pb.dst;
        EXPECT_TRUE(pb.bytes == big || pb.bytes == m / 2) << pb.bytes;
        busiest = std::max(busiest, pb.bytes);
    }
    EXPECT_EQ(pairs, 4u * (n - 1)); // every tree edge, both ways
    EXPECT_EQ(busiest, big);
    DcRouter router(g);
    uint32_t hops = 0;
    EXPECT_DOUBLE_EQ(router.MaxArcBytes(b.steps[0], hops), static_cast<double>(big));
    EXPECT_EQ(hops, 1u);
    const double alpha = 2e-6;
    const double bps = 1e11;
    EXPECT_NEAR(DcBaselineFormula(g, b, alpha, bps),
                2.0 * height * alpha + big * 8.0 / (bps / 4),
                1e-12);
}

// The placed tree at the flow level on the testbed graph: 64 chunks per
// tree pipelined over 2h hops (up, then down); the formula (2 h alpha + M/2
// at B/d) is a lower bound that leaves out the pipeline's fill, the first
// chunk's 2h - 1 other hops at B/d, and the simulation is later than it by
// at most that fill.
TEST(DcBaselineTree, FlowLevelTimeIsTheFormulaUpToThePipelineFill)
{
    const DirectConnectGraph g = BuildFromName("C(12,{2,3})");
    const uint64_t m = 16ULL << 20;
    DcBaseline b = BuildDcBaseline(g, "tree", m);
    ASSERT_TRUE(b.treeOnLinks) << b.routing;
    const double formula = DcBaselineFormula(g, b, Hop(4), kNodeBps * kPayloadShare);
    const double sim = RunOn(g, std::move(b.schedule), "flow");
    const double chunk = m / 128.0; // M / (2 * 64)
    const double fill =
        (2.0 * b.pipelineHops - 1) * chunk * 8 / (kNodeBps * kPayloadShare / g.Degree());
    fmt::print("tree on {} at {} bytes (height {}): flow level {:.9e} s, formula {:.9e} s, "
               "fill {:.9e} s\n",
               g.Name(),
               m,
               b.pipelineHops,
               sim,
               formula,
               fill);
    EXPECT_GE(sim, formula * (1 - 1e-9));
    EXPECT_LE(sim, (formula + fill) * (1 + 1e-9));
}

// Where no placement can exist (degree 2: an inner host needs three links)
// or the budget is 0, NCCL's trees run with ranks = hosts over shortest
// paths, and the routing says so.
TEST(DcBaselineTree, FallsBackToShortestPathsAndSaysSo)
{
    {
        const DirectConnectGraph g = BuildFromName("BiRing(6)");
        const DcTreePlacement p = PlaceDoubleBinaryTree(g);
        EXPECT_TRUE(p.trees.empty());
        EXPECT_TRUE(p.complete);
        EXPECT_FALSE(p.exhausted);
        const DcBaseline b = BuildDcBaseline(g, "tree", 1 << 20);
        EXPECT_FALSE(b.treeOnLinks);
        EXPECT_NE(b.routing.find("over shortest paths (no placement"), std::string::npos)
            << b.routing;
        EXPECT_NE(b.routing.find("none exists"), std::string::npos) << b.routing;
        EXPECT_TRUE(ScheduleChecker::Check(b.schedule).Ok());
    }
    {
        const DirectConnectGraph g = BuildFromName("C(12,{2,3})");
        const DcTreePlacement p = PlaceDoubleBinaryTree(g, 0);
        EXPECT_TRUE(p.trees.empty());
        EXPECT_TRUE(p.exhausted);
        const DcBaseline b = BuildDcBaseline(g, "tree", 1 << 20, true, 0);
        EXPECT_FALSE(b.treeOnLinks);
        EXPECT_NE(b.routing.find("none found in 0 search steps"), std::string::npos) << b.routing;
        ASSERT_EQ(b.trees.size(), 2u);
        EXPECT_EQ(b.trees[0].parent, DoubleBinaryTree(12)[0].parent);
        EXPECT_EQ(b.trees[1].parent, DoubleBinaryTree(12)[1].parent);
        EXPECT_TRUE(ScheduleChecker::Check(b.schedule).Ok());
        // NCCL's trees share arcs there: more than half the buffer on the busiest
        DcRouter router(g);
        uint32_t hops = 0;
        EXPECT_GT(router.MaxArcBytes(b.steps[0], hops), (1 << 20) / 2.0);
    }
}

TEST(DcBaselineBadInput, UnknownAlgorithmIsRefused)
{
    try
    {
        BuildDcBaseline(BuildFromName("BiRing(4)"), "butterfly", 1024);
        FAIL() << "accepted";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_EQ(e.Parameter(), "algorithm");
    }
    EXPECT_THROW(MultiRingAllReduce({{0, 1, 1}}, 1024), FabricConfigError);
}

/// Ring graphs, where a ring's formula is exact: simulated within 3% of it.
class DcBaselineSimulate : public ::testing::TestWithParam<std::pair<std::string, std::string>>
{
};

TEST_P(DcBaselineSimulate, RingGraphTimeMatchesTheFormula)
{
    const auto& [name, algo] = GetParam();
    const DirectConnectGraph g = BuildFromName(name);
    const uint64_t m = 16ULL << 20;
    DcBaseline b = BuildDcBaseline(g, algo, m);
    ASSERT_EQ(b.nativeRings, b.rings.size());
    const double formula = DcBaselineFormula(g, b, Hop(g.Degree()), kNodeBps * kPayloadShare);
    const double sim = RunOn(g, std::move(b.schedule), "packet");
    fmt::print("{} on {}: simulated {:.6e} s, formula {:.6e} s ({:+.3f}%)\n",
               algo,
               name,
               sim,
               formula,
               100 * (sim / formula - 1));
    EXPECT_NEAR(sim, formula, 0.03 * formula);
}

INSTANTIATE_TEST_SUITE_P(Rings,
                         DcBaselineSimulate,
                         ::testing::Values(std::make_pair("Ring(6)", "ring"),
                                           std::make_pair("BiRing(6)", "ring"),
                                           std::make_pair("BiRing(6)", "shifted-ring")),
                         [](const auto& i) {
                             return fmt::format("{}_{}",
                                                i.param.first == "Ring(6)" ? "Ring6" : "BiRing6",
                                                i.param.second == "ring" ? "ring" : "shifted");
                         });

TEST(DcBaselineSimulate, BfbIsNotSlowerThanShiftedRingAtLargeSizesOnTheTestbedShape)
{
    // the finder's 12-host degree-4 graph, 16 MiB: BFB's allreduce has the
    // same bandwidth term as ShiftedRing (2 (N-1)/N) in 4 steps, not 22
    const DirectConnectGraph g = BuildFromName(FindTopology(12, 4, FinderWorkload()).best.name);
    const uint64_t m = 16ULL << 20;
    const BfbSchedule ar = BfbAllReduce(g);
    uint64_t cps = BfbExactChunksPerShard(ar);
    for (uint64_t k = 2; k <= ar.degree; ++k)
    {
        cps = std::lcm(cps, k);
    }
    const double bfb = RunOn(g, BfbToCollectiveSchedule(ar, m, cps), "flow");
    DcBaseline sr = BuildDcBaseline(g, "shifted-ring", m);
    ASSERT_EQ(sr.nativeRings, 4u);
    const double ring = RunOn(g, std::move(sr.schedule), "flow");
    fmt::print("{} at {} bytes: BFB {:.6e} s, ShiftedRing {:.6e} s\n", g.Name(), m, bfb, ring);
    EXPECT_LE(bfb, ring);
    // both near the allreduce bandwidth bound 2 (N-1)/N M/B
    const double bound = 2.0 * 11 / 12 * m * 8 / kNodeBps;
    EXPECT_GT(bfb, bound);
    EXPECT_LT(ring, 1.2 * bound);
}

/// BFB's allreduce at the flow level on the testbed shape, at a size where
/// the bandwidth term dominates and BFB's chunks split every shard exactly
/// (12 chunks per shard; on other graphs the 64-chunk cap can leave a
/// rounding imbalance): T_B M / (B payload share) is bandwidth-optimal here,
/// so it plus one hop (alpha, an empty packet's) is a lower bound; the steps
/// pipeline (no barriers), so the simulation may hide part of the other
/// hops, and it is later than the alpha-beta time T_L alpha + T_B M / (B
/// payload share) by at most the pipeline's fill (a full packet's
/// serialization at B/d per step).
TEST(DcBfbFlowFormula, FlowLevelTimeIsTheAlphaBetaFormulaUpToOnePacketPerStep)
{
    const DirectConnectGraph g = BuildFromName("C(12,{2,3})");
    const BfbSchedule ar = BfbAllReduce(g);
    const uint64_t m = 1ULL << 30;
    const uint32_t cps = BfbAutoChunksPerShard(ar, 64);
    const double sim = RunOn(g, BfbToCollectiveSchedule(ar, m, cps), "flow");
    const double formula =
        AlphaBetaTime(ar.Steps(), ar.Tb(), Hop(ar.degree), m, kNodeBps * kPayloadShare);
    const double fill = ar.Steps() * 4096.0 * 8 / (static_cast<double>(kNodeBps) / ar.degree);
    fmt::print("BFB allreduce on {} at {} bytes ({} chunks per shard): flow level {:.9e} s, "
               "formula {:.9e} s\n",
               g.Name(),
               m,
               cps,
               sim,
               formula);
    EXPECT_EQ(ar.Steps(), 4u);
    EXPECT_EQ(ar.Tb(), Fraction(11, 6)); // 2 (N-1)/N: bandwidth-optimal
    const double bandwidth = AlphaBetaTime(0, ar.Tb(), 0, m, kNodeBps * kPayloadShare);
    EXPECT_GE(sim, bandwidth + Hop(ar.degree));
    EXPECT_LE(sim, formula + fill);
}

/// BFB with one chunk per shard on C(64,{5,7}) at 16 MiB, whose plan of whole
/// chunks is within 2 % of T_B M/B: a host's in-arcs bring their reductions
/// into one chunk at once (they commute), and its arcs send in step order,
/// so the simulation meets the plan. Sending in the order the data comes
/// instead (a later step's chunk first when its data came early) holds
/// earlier steps up behind later ones.
TEST(DcBfbFlowFormula, OneChunkPerShardMeetsItsPlanWhenArcsSendInStepOrder)
{
    const DirectConnectGraph g = BuildFromName("C(64,{5,7})");
    const BfbSchedule ar = BfbAllReduce(g);
    const uint64_t m = 16ULL << 20;
    BfbChunkPlan plan;
    CollectiveSchedule cs = BfbToCollectiveSchedule(ar, m, 1, &plan);
    ASSERT_TRUE(cs.InOrderConnections());
    ASSERT_TRUE(ScheduleChecker::Check(cs).Ok()) << ScheduleChecker::Check(cs).message;
    double planS = ar.Steps() * Hop(ar.degree);
    for (uint64_t bytes : plan.stepMaxArcBytes)
    {
        planS += bytes * 8.0 / (kNodeBps * kPayloadShare / ar.degree);
    }
    const double inOrder = RunOn(g, cs, "flow");
    cs.SetInOrderConnections(false);
    const double asReady = RunOn(g, cs, "flow");
    fmt::print("BFB allreduce on {} at {} bytes, 1 chunk per shard: plan {:.6e} s, arcs in step "
               "order {:.6e} s, as data comes {:.6e} s\n",
               g.Name(),
               m,
               planS,
               inOrder,
               asReady);
    EXPECT_NEAR(inOrder / planS, 1.0, 0.01);
    EXPECT_GT(asReady, 1.02 * inOrder);
}

#ifdef GPU_FABRIC_BIN_DIR

TEST(DcBaselineCompare, JsonHasOneRowPerGraphSizeAndAlgorithm)
{
    const auto j = RunJson("direct-connect-synth --compare --graph='BiRing(6)' "
                           "--sizes=1024,65536 --backend=flow",
                           "dc-compare");
    ASSERT_TRUE(j.contains("compare")) << j.dump();
    const auto& rows = j["compare"];
    ASSERT_EQ(rows.size(), 2u * 5u);
    std::set<std::tuple<std::string, uint64_t, std::string>> keys;
    for (const auto& r : rows)
    {
        keys.insert({r["graph"].get<std::string>(),
                     r["size_bytes"].get<uint64_t>(),
                     r["algorithm"].get<std::string>()});
        EXPECT_GT(r["simulated_s"].get<double>(), 0);
        EXPECT_GT(r["formula_s"].get<double>(), 0);
        EXPECT_DOUBLE_EQ(r["ratio"].get<double>(),
                         r["simulated_s"].get<double>() / r["formula_s"].get<double>());
        EXPECT_EQ(r["level"], "flow"); // simulated, at the level --backend names
    }
    EXPECT_EQ(keys.size(), rows.size());
    for (const std::string algo : {"bfb", "ring", "shifted-ring", "tree", "halving-doubling"})
    {
        EXPECT_EQ(keys.count({"BiRing(6)", uint64_t{65536}, algo}), 1u) << algo;
    }
}

TEST(DcBaselineCompare, BfbPlanFormulaIsWhatOneOrTwelveChunksPerShardTake)
{
    // On C(64,{5,7}) at 16 MiB the LP's loads round to whole chunks almost
    // exactly with 1 or 12 chunks per shard (the plan's own formula, each
    // step as long as its busiest arc, is within 2 % of T_B M/B), and the
    // simulation meets the plan with either.
    std::map<uint32_t, nlohmann::json> rows;
    for (uint32_t chunks : {1u, 12u})
    {
        const auto j = RunJson("direct-connect-synth --compare --graph='C(64,{5,7})' "
                               "--algorithms=bfb --sizes=16777216 --backend=flow --chunks=" +
                                   std::to_string(chunks),
                               "dc-compare-chunks-" + std::to_string(chunks));
        ASSERT_EQ(j["compare"].size(), 1u) << j.dump();
        rows[chunks] = j["compare"][0];
    }
    for (const auto& [chunks, r] : rows)
    {
        const double formula = r["formula_s"].get<double>();
        const double plan = r["plan_formula_s"].get<double>();
        EXPECT_GE(plan, formula * (1 - 1e-9)) << chunks << " chunks: rounding only adds";
        EXPECT_LT(plan, 1.02 * formula) << chunks << " chunks";
    }
    EXPECT_NEAR(rows[12]["ratio"].get<double>(), 1.0, 0.02);
    for (const auto& [chunks, r] : rows)
    {
        EXPECT_NEAR(r["simulated_s"].get<double>() / r["plan_formula_s"].get<double>(), 1.0, 0.01)
            << chunks << " chunks";
    }
}

TEST(DcBaselineCompare, RowsNotSimulatedSayFormula)
{
    // every schedule has more than one message hop: none is simulated
    const auto j = RunJson("direct-connect-synth --compare --graph='BiRing(6)' --sizes=1024 "
                           "--max-message-hops=1 --backend=flow",
                           "dc-compare-formula");
    ASSERT_EQ(j["compare"].size(), 5u) << j.dump();
    for (const auto& r : j["compare"])
    {
        EXPECT_EQ(r["level"], "formula") << r.dump();
        EXPECT_TRUE(r["simulated_s"].is_null()) << r.dump();
        EXPECT_GT(r["formula_s"].get<double>(), 0);
    }
}

TEST(DcBaselineCompare, QuickDefaultIsTheTestbedShape)
{
    const auto j = RunJson("direct-connect-synth --compare --quick --sizes=4096 "
                           "--algorithms=bfb,shifted-ring --backend=flow",
                           "dc-compare-quick");
    ASSERT_EQ(j["compare"].size(), 2u) << j.dump();
    const std::string testbed = FindTopology(12, 4, FinderWorkload()).best.name;
    for (const auto& r : j["compare"])
    {
        EXPECT_EQ(r["graph"], testbed);
        EXPECT_EQ(r["size_bytes"], 4096);
    }
}

TEST(DcBaselineCompare, BadFlagsExitTwoNamingTheFlag)
{
    const std::vector<std::pair<std::string, std::string>> cases{
        {"direct-connect-synth --compare --algorithms=bfb,butterfly",
         "invalid --algorithms: got 'butterfly'"},
        {"direct-connect-synth --compare --sizes=0", "invalid --sizes: got '0'"},
        {"direct-connect-synth --compare --size=1024", "invalid --size: got '1024'"},
        {"direct-connect-synth --sizes=1024",
         "invalid --sizes: got '1024', allowed: only with "
         "--compare"},
        {"direct-connect-synth --compare --simulate", "invalid --simulate"},
    };
    for (const auto& [cmd, message] : cases)
    {
        const auto [status, text] = RunCapture(cmd, "dc-compare-bad");
        EXPECT_EQ(status, 2) << cmd << "\n" << text;
        EXPECT_NE(text.find(message), std::string::npos) << cmd << "\n" << text;
    }
}

#endif
