/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Size and work bounds of the synthesis layer, checked before the work: graph
 * constructions refuse more than kMaxGraphArcs arcs, BFB and the topology
 * finder refuse a run estimated beyond GpuFabricMaxRunSeconds, each naming
 * the parameter and giving the estimate.  The estimates count what BFB and
 * the finder then do (exactly on vertex-transitive graphs, within a stated
 * factor otherwise), and usual graphs keep their schedules.  No test times
 * anything.
 */
#include "name-error.h"

#include "ns3/bfb-schedule.h"
#include "ns3/direct-connect-graph.h"
#include "ns3/double.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-work.h"
#include "ns3/global-value.h"
#include "ns3/topology-finder.h"

#include <cmath>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sstream>
#include <utility>

using namespace ns3;

namespace
{

using gpu_fabric_test::NameError;

/// \return what \p run throws ("" if it returns)
template <typename Run>
std::string
ErrorOf(Run run)
{
    try
    {
        run();
    }
    catch (const FabricConfigError& e)
    {
        return e.what();
    }
    return "";
}

/// Sets GpuFabricMaxRunSeconds for one scope and restores it.
class MaxRunSeconds
{
  public:
    explicit MaxRunSeconds(double seconds)
    {
        DoubleValue v;
        GlobalValue::GetValueByName("GpuFabricMaxRunSeconds", v);
        m_saved = v.Get();
        GlobalValue::Bind("GpuFabricMaxRunSeconds", DoubleValue(seconds));
    }

    ~MaxRunSeconds()
    {
        GlobalValue::Bind("GpuFabricMaxRunSeconds", DoubleValue(m_saved));
    }

  private:
    double m_saved{0}; //!< the value before
};

const std::string kCap = "allowed: a graph of at most 16777216 hosts and 4194304 arcs; ";

} // namespace

TEST(GraphSize, EveryConstructionIsBoundedBeforeItIsBuilt)
{
    struct Bad
    {
        std::string name;
        std::string said; //!< the parameter, its value and the size it would have
    };

    // Hypercube(20) and K(4096) took more than 20 s and 2-3 GB to build
    for (const auto& [name, said] : std::vector<Bad>{
             {"Hypercube(20)",
              "invalid Hypercube dimension: got '20', " + kCap +
                  "Hypercube(20) would have 1048576 hosts and 20971520 arcs"},
             {"Hypercube(999999999)", "invalid Hypercube dimension: got '999999999'"},
             {"K(4096)",
              "invalid K(n) hosts: got '4096', " + kCap +
                  "K(4096) would have 4096 hosts and 16773120 arcs"},
             {"K(1500,1500)",
              "invalid K(d,d) degree: got '1500', " + kCap +
                  "K(1500,1500) would have 3000 hosts and 4500000 arcs"},
             {"Ring(20000000)", "invalid Ring(n) hosts: got '20000000', " + kCap},
             {"BiRing(3000000)",
              "invalid BiRing(n) hosts: got '3000000', " + kCap +
                  "BiRing(3000000) would have 3000000 hosts and 6000000 arcs"},
             {"Torus(2048,2048)",
              "invalid Torus side lengths: got '2048,2048', " + kCap +
                  "Torus(2048,2048) would have 4194304 hosts and 16777216 arcs"},
             {"Hamming(2,2049)", "invalid Hamming(dims,q): got '2,2049', " + kCap},
             {"Hamming(999999999,2)", "invalid Hamming(dims,q): got '999999999,2', " + kCap},
             // the undirected circulant has 2|S| arcs a host, the directed |S|
             {"C(3000000,{1,2})",
              "invalid C(N,S): got 'N = 3000000, 2 offsets', " + kCap +
                  "C(3000000,{...}) would have 3000000 hosts and 12000000 arcs"},
             {"DC(3000000,{1,2})",
              "invalid DC(N,S): got 'N = 3000000, 2 offsets', " + kCap +
                  "DC(3000000,{...}) would have 3000000 hosts and 6000000 arcs"},
             {"Kautz(2,22)",
              "invalid Kautz(d,D): got '2,22', " + kCap +
                  "Kautz(2,22) would have 6291456 hosts and 12582912 arcs"},
             {"Kautz(3,999999999)", "invalid Kautz(d,D): got '3,999999999', " + kCap},
             {"GenKautz(4,2000000)",
              "invalid GenKautz(d,N): got '4,2000000', " + kCap +
                  "GenKautz(4,2000000) would have 2000000 hosts and 8000000 arcs"},
             // L(G): hosts = arcs of G, arcs = sum of indeg * outdeg
             // (the inner graphs are small: a refusal costs nothing to speak of)
             {"L(K(170))",
              "invalid line graph L(G): got 'L(K(170))', " + kCap +
                  "L(K(170)) would have 28730 hosts and 4855370 arcs"},
             {"Deg(Ring(8),800)",
              "invalid Deg(G,n) copies: got '800', " + kCap +
                  "Deg(Ring(8),800) would have 6400 hosts and 5120000 arcs"},
             {"Prod(K(200),K(200))",
              "invalid product: got 'Prod(K(200),K(200))', " + kCap +
                  "Prod(K(200),K(200)) would have 40000 hosts and 15920000 arcs"},
             {"Pow(K(64),4)",
              "invalid Pow(G,n) exponent: got '4', " + kCap +
                  "Pow(K(64),4) would have 16777216 hosts and 4227858432 arcs"}})
    {
        const std::string what = NameError(name);
        EXPECT_NE(what.find(said), std::string::npos) << name << ": " << what;
    }
    // an edge list too: its largest host id sets the hosts
    std::istringstream far("0 1\n1 20000000\n20000000 0\n");
    EXPECT_NE(ErrorOf([&] { ParseEdgeList(far, "e.txt"); })
                  .find("invalid edge list e.txt hosts: got '20000001', " + kCap +
                        "Edges(e.txt) would have 20000001 hosts and 3 arcs"),
              std::string::npos);
}

TEST(GraphSize, GraphsUpToTheCapBuild)
{
    // the bound itself: at the caps passes, one above does not
    EXPECT_NO_THROW(RequireGraphSize("p", "v", double(kMaxGraphHosts), double(kMaxGraphArcs), "G"));
    EXPECT_THROW(RequireGraphSize("p", "v", 2, double(kMaxGraphArcs) + 1, "G"), FabricConfigError);
    EXPECT_THROW(RequireGraphSize("p", "v", double(kMaxGraphHosts) + 1, 2, "G"), FabricConfigError);
    EXPECT_EQ(ErrorOf([] { RequireGraphSize("K(n) hosts", "9", 9, 5e6, "K(9)"); }),
              "invalid K(n) hosts: got '9', " + kCap + "K(9) would have 9 hosts and 5000000 arcs");
    // a construction under the cap builds with the size it was checked for
    // (Hypercube(17), 2228224 arcs, builds too, in seconds: bench/bfb-scale
    // --bfb=0 measures it); Hypercube(18) has 4718592 arcs
    const DirectConnectGraph h = BuildFromName("Hypercube(12)");
    EXPECT_EQ(h.NumNodes(), 4096u);
    EXPECT_EQ(h.NumArcs(), 12u * 4096u);
    EXPECT_NE(NameError("Hypercube(18)").find("would have 262144 hosts and 4718592 arcs"),
              std::string::npos);
    // the memory a graph holds grows with its hosts and its arcs
    EXPECT_GT(DirectConnectGraphBytes(10, 100), DirectConnectGraphBytes(10, 10));
    EXPECT_GT(DirectConnectGraphBytes(100, 10), DirectConnectGraphBytes(10, 10));
}

TEST(GraphSize, CopiesAreDeepAndMovesLeaveTheSourceEmpty)
{
    // the Boost mirror is held by pointer so that a move does not copy it
    DirectConnectGraph a = BuildFromName("Torus(3,4)");
    DirectConnectGraph copy = a;
    EXPECT_EQ(boost::num_edges(copy.Graph()), 48u);
    copy.AddArc(0, 5);
    EXPECT_EQ(boost::num_edges(copy.Graph()), 49u);
    EXPECT_EQ(boost::num_edges(a.Graph()), 48u); // the original is untouched
    EXPECT_EQ(a.NumArcs(), 48u);
    DirectConnectGraph moved = std::move(a);
    EXPECT_EQ(moved.NumArcs(), 48u);
    EXPECT_EQ(moved.Name(), "Torus(3,4)");
    EXPECT_TRUE(moved.IsStronglyConnected());
    EXPECT_EQ(a.NumNodes(), 0u); // NOLINT(bugprone-use-after-move): empty, not broken
    EXPECT_EQ(a.NumArcs(), 0u);
    EXPECT_EQ(boost::num_edges(a.Graph()), 0u);
    EXPECT_FALSE(a.IsStronglyConnected());
    a = copy; // assignable again
    EXPECT_EQ(a.NumArcs(), 49u);
    EXPECT_EQ(boost::num_edges(a.Graph()), 49u);
}

TEST(BfbWork, EstimatesGrowWithTheGraph)
{
    // monotone in every term
    BfbWorkShape base;
    base.hosts = 100;
    base.arcs = 400;
    base.maxInDegree = 4;
    base.directProblems = 5;
    base.flowProblems = 5;
    base.flowSize = 200;
    const double steps = BfbWorkSteps(base);
    for (double BfbWorkShape::*field : {&BfbWorkShape::hosts,
                                        &BfbWorkShape::arcs,
                                        &BfbWorkShape::directProblems,
                                        &BfbWorkShape::flowProblems,
                                        &BfbWorkShape::flowSize})
    {
        BfbWorkShape more = base;
        more.*field *= 2;
        EXPECT_GT(BfbWorkSteps(more), steps);
    }
    BfbWorkShape wide = base;
    wide.maxInDegree = 100; // two 64-bit words per in-arc set
    EXPECT_GT(BfbWorkSteps(wide), steps);
    // and over the families
    for (const auto& sizes : std::vector<std::vector<std::string>>{
             {"K(8)", "K(16)", "K(64)", "K(256)"},
             {"Ring(8)", "Ring(64)", "Ring(512)"},
             {"Hypercube(3)", "Hypercube(6)", "Hypercube(10)", "Hypercube(14)"},
             {"Torus(4,4)", "Torus(10,10)", "Torus(50,50)"},
             {"Kautz(2,3)", "Kautz(2,6)", "Kautz(4,4)"}})
    {
        double previous = 0;
        for (const auto& name : sizes)
        {
            const BfbWork w = EstimateBfbWork(BuildFromName(name));
            EXPECT_GT(w.steps, previous) << name;
            EXPECT_DOUBLE_EQ(w.seconds, w.steps / FabricWorkRates::kBfbStepsPerSecond) << name;
            previous = w.steps;
        }
    }
    // a kept schedule costs more than the loads alone
    BfbOptions loads;
    loads.keepSchedule = false;
    for (const std::string name : {"Ring(64)", "Hypercube(6)", "K(32)"})
    {
        const DirectConnectGraph g = BuildFromName(name);
        EXPECT_LT(EstimateBfbWork(g, loads).steps, EstimateBfbWork(g).steps) << name;
    }
    // Hypercube(14) (16384 hosts) runs for minutes: announced (beyond the
    // default GpuFabricWarnRunSeconds), not refused (within 12 hours)
    const double cube = EstimateBfbWork(BuildFromName("Hypercube(14)")).seconds;
    EXPECT_GT(cube, 60);
    EXPECT_LT(cube, 43200);
}

TEST(BfbWork, LongRunsAreRefusedUpFrontNamingTheGraph)
{
    // refused before the work starts: onStart is not called
    const DirectConnectGraph cube = BuildFromName("Hypercube(8)");
    const BfbWork cubeWork = EstimateBfbWork(cube);
    {
        MaxRunSeconds limit(cubeWork.seconds / 4);
        BfbOptions o;
        bool started = false;
        o.onStart = [&started](const BfbWork&) { started = true; };
        const std::string what = ErrorOf([&] { BfbAllGather(cube, o); });
        EXPECT_NE(what.find(fmt::format("invalid graph Hypercube(8) hosts: got '256', allowed: a "
                                        "run estimated to finish within {} (the global value "
                                        "GpuFabricMaxRunSeconds={:g}; 0 lifts the limit); BFB "
                                        "allgather ({:.2g} steps) would take about {}",
                                        FabricDurationText(cubeWork.seconds / 4),
                                        cubeWork.seconds / 4,
                                        cubeWork.steps,
                                        FabricDurationText(cubeWork.seconds))),
                  std::string::npos)
            << what;
        EXPECT_FALSE(started);
    }

    // a small graph under a tiny limit: each collective says which, with its estimate
    const DirectConnectGraph k = BuildFromName("K(16)");
    const BfbWork w = EstimateBfbWork(k);
    {
        MaxRunSeconds limit(w.seconds / 4);
        const std::string ag = ErrorOf([&] { BfbAllGather(k); });
        EXPECT_NE(ag.find("invalid graph K(16) hosts: got '16'"), std::string::npos) << ag;
        EXPECT_NE(ag.find(fmt::format("BFB allgather ({:.2g} steps)", w.steps)), std::string::npos)
            << ag;
        EXPECT_NE(ErrorOf([&] { BfbReduceScatter(k); }).find("BFB reduce-scatter ("),
                  std::string::npos);
        EXPECT_NE(ErrorOf([&] { BfbAllReduce(k); })
                      .find(fmt::format("BFB allreduce (reduce-scatter and allgather) ({:.2g} "
                                        "steps)",
                                        2 * w.steps)),
                  std::string::npos);
    }
    {
        // an allreduce is refused as a whole when only one half fits
        MaxRunSeconds limit(w.seconds * 1.5);
        EXPECT_NO_THROW(BfbAllGather(k));
        EXPECT_THROW(BfbAllReduce(k), FabricConfigError);
    }
    {
        // 0 lifts the limit
        MaxRunSeconds limit(0);
        EXPECT_EQ(ErrorOf([&] { BfbAllReduce(k); }), "");
    }
    // and the default is back
    EXPECT_DOUBLE_EQ(FabricMaxRunSeconds(), 43200);
}

TEST(BfbWork, ProgressAndStartAreReported)
{
    const DirectConnectGraph g = BuildFromName("Torus(4,5)");
    BfbOptions o;
    std::vector<uint64_t> done;
    uint64_t total = 0;
    BfbWork started;
    o.onStart = [&](const BfbWork& w) {
        EXPECT_TRUE(done.empty()); // before any work
        started = w;
    };
    o.progress = [&](uint64_t d, uint64_t t) {
        done.push_back(d);
        total = t;
    };
    const BfbSchedule s = BfbAllGather(g, o);
    EXPECT_DOUBLE_EQ(started.steps, EstimateBfbWork(g).steps);
    EXPECT_EQ(total, 40u); // distance rows, then hosts
    ASSERT_EQ(done.size(), 40u);
    for (size_t i = 0; i < done.size(); ++i)
    {
        EXPECT_EQ(done[i], i + 1);
    }
    // the callbacks change nothing
    EXPECT_EQ(s.Tb(), BfbAllGather(g).Tb());
}

TEST(BfbWork, HostViewIsExactOnCompleteRingAndHypercube)
{
    // the shapes worked out by hand: what EstimateBfbWork finds must be them
    const auto steps = [](BfbWorkShape shape, bool kept) {
        shape.keepSchedule = kept;
        return BfbWorkSteps(shape);
    };
    BfbOptions loads;
    loads.keepSchedule = false;
    // K(n): one step, every source on its own arc (K(100): more than 64 in-arcs)
    for (const uint32_t n : {16u, 100u})
    {
        BfbWorkShape k;
        k.hosts = n;
        k.arcs = double(n) * (n - 1);
        k.maxInDegree = n - 1;
        k.directProblems = 1;
        const DirectConnectGraph g = MakeCompleteDigraph(n);
        EXPECT_DOUBLE_EQ(EstimateBfbWork(g).steps, steps(k, true)) << n;
        EXPECT_DOUBLE_EQ(EstimateBfbWork(g, loads).steps, steps(k, false)) << n;
    }
    // Ring(n): n - 1 steps of one source on the one arc
    BfbWorkShape ring;
    ring.hosts = 40;
    ring.arcs = 40;
    ring.maxInDegree = 1;
    ring.directProblems = 39;
    EXPECT_DOUBLE_EQ(EstimateBfbWork(MakeRing(40)).steps, steps(ring, true));
    // Hypercube(k): at step t, C(k,t) sources, each its own group on its t
    // differing bits' arcs; steps 1 (one arc each) and k (one group on all k
    // arcs) are direct, the others a max-flow over C(k,t) groups, t C(k,t)
    // pairs and the k arcs
    for (const uint32_t k : {3u, 6u, 9u})
    {
        BfbWorkShape cube;
        cube.hosts = std::ldexp(1.0, static_cast<int>(k));
        cube.arcs = k * cube.hosts;
        cube.maxInDegree = k;
        cube.directProblems = 2;
        double choose = 1; // C(k,t)
        for (uint32_t t = 1; t < k; ++t)
        {
            choose = choose * (k - t + 1) / t;
            if (t > 1)
            {
                cube.flowProblems += 1;
                cube.flowSize += choose * (1 + t) + k;
            }
        }
        const DirectConnectGraph g = MakeHypercube(k);
        EXPECT_DOUBLE_EQ(EstimateBfbWork(g).steps, steps(cube, true)) << k;
        EXPECT_DOUBLE_EQ(EstimateBfbWork(g, loads).steps, steps(cube, false)) << k;
        EXPECT_DOUBLE_EQ(EstimateBfbWork(g).problems, k * cube.hosts) << k;
        EXPECT_DOUBLE_EQ(EstimateBfbWork(g).groups, (cube.hosts - 1) * cube.hosts) << k;
    }
}

TEST(BfbWork, CountsMatchTheScheduleBfbKeeps)
{
    // what the estimate counts against what BFB does: the (step, host)
    // problems and the groups of sources in the kept schedule.  Host 0
    // stands for every host: exact on vertex-transitive graphs, within a
    // factor of 1.25 on the others
    const auto counted = [](const BfbSchedule& s) {
        std::pair<double, double> problemsAndGroups{0, 0};
        for (const auto& step : s.steps)
        {
            problemsAndGroups.first += static_cast<double>(step.nodes.size());
            for (const auto& node : step.nodes)
            {
                problemsAndGroups.second += static_cast<double>(node.groups.size());
            }
        }
        return problemsAndGroups;
    };
    for (const std::string name : {"K(16)",
                                   "K(3,3)",
                                   "Hypercube(6)",
                                   "Torus(4,5)",
                                   "Hamming(2,4)",
                                   "C(30,{4,5})",
                                   "Petersen"})
    {
        const DirectConnectGraph g = BuildFromName(name);
        const BfbWork w = EstimateBfbWork(g);
        const auto [problems, groups] = counted(BfbAllGather(g));
        EXPECT_DOUBLE_EQ(w.problems, problems) << name;
        EXPECT_DOUBLE_EQ(w.groups, groups) << name;
    }
    for (const std::string name :
         {"Kautz(2,3)", "GenKautz(3,20)", "L(Petersen)", "Deg(BiRing(5),2)", "GenKautz(4,50)"})
    {
        const DirectConnectGraph g = BuildFromName(name);
        const BfbWork w = EstimateBfbWork(g);
        const auto [problems, groups] = counted(BfbAllGather(g));
        // (GenKautz(3,20): 160 groups counted from host 0, 188 kept)
        EXPECT_LE(w.problems, 1.25 * problems) << name;
        EXPECT_GE(w.problems, problems / 1.25) << name;
        EXPECT_LE(w.groups, 1.25 * groups) << name;
        EXPECT_GE(w.groups, groups / 1.25) << name;
    }
}

TEST(BfbWork, UsualGraphsRunWithTheirResultsUnchanged)
{
    // under the default limits nothing usual is refused, and the schedules are
    // those BFB gave before the bounds (steps, T_B and step loads)
    struct Known
    {
        std::string name;
        uint32_t steps;
        std::string tb;
        std::vector<std::string> loads;
    };

    for (const auto& k : std::vector<Known>{
             {"K(16)", 1, "15/16", {"1"}},
             {"Hypercube(6)", 6, "63/64", {"1", "5/2", "10/3", "5/2", "1", "1/6"}},
             {"Torus(4,5)", 4, "19/20", {"1", "7/4", "3/2", "1/2"}},
             {"DC(30,{4,5})", 9, "29/30", {"1", "3/2", "2", "5/2", "5/2", "2", "3/2", "1", "1/2"}},
             {"Kautz(2,3)", 3, "7/6", {"1", "2", "4"}},
             {"GenKautz(3,20)", 3, "27/20", {"1", "3", "5"}},
             {"L(Petersen)", 3, "1", {"1", "3", "6"}}})
    {
        const DirectConnectGraph g = BuildFromName(k.name);
        BfbSchedule s;
        ASSERT_NO_THROW(s = BfbAllGather(g)) << k.name;
        EXPECT_EQ(s.Steps(), k.steps) << k.name;
        EXPECT_EQ(ToString(s.Tb()), k.tb) << k.name;
        std::vector<std::string> loads;
        for (const auto& f : s.StepLoads())
        {
            loads.push_back(ToString(f));
        }
        EXPECT_EQ(loads, k.loads) << k.name;
        EXPECT_NO_THROW(BfbAllReduce(g)) << k.name;
    }
    // DC(128,{7,8}): 22 steps, T_B 127/128 (bandwidth-optimal)
    const BfbSchedule c = BfbAllGather(BuildFromName("DC(128,{7,8})"));
    EXPECT_EQ(c.Steps(), 22u);
    EXPECT_EQ(ToString(c.Tb()), "127/128");
}

TEST(FinderWork, EstimatesGrowWithDepthAndSize)
{
    FinderOptions o;
    double previous = -1;
    for (uint32_t depth = 0; depth <= 4; ++depth)
    {
        o.maxDepth = depth;
        const FinderWork w = EstimateFinderWork(128, 4, o);
        EXPECT_GE(w.steps, previous) << depth;
        EXPECT_GT(w.candidates, 0) << depth;
        EXPECT_LE(w.bfbRuns, w.candidates) << depth;
        previous = w.steps;
    }
    o.maxDepth = 2;
    EXPECT_GT(EstimateFinderWork(1024, 4, o).steps, EstimateFinderWork(128, 4, o).steps);
    EXPECT_GT(EstimateFinderWork(256, 8, o).steps, EstimateFinderWork(256, 4, o).steps);
    // products evaluated with BFB cost more than their closed forms
    FinderOptions closed = o;
    closed.maxProductBfbNodes = 0;
    EXPECT_GT(EstimateFinderWork(128, 4, o).steps, EstimateFinderWork(128, 4, closed).steps);
}

TEST(FinderWork, LongSearchesAreRefusedUpFrontAndShowProgress)
{
    FinderOptions o;
    o.maxDepth = 4;
    const FinderWork w = EstimateFinderWork(128, 4, o);
    {
        MaxRunSeconds limit(w.seconds / 2);
        std::vector<uint64_t> done;
        o.progress = [&](uint64_t d, uint64_t) { done.push_back(d); };
        const std::string what = ErrorOf([&] { FindTopology(128, 4, FinderWorkload(), o); });
        EXPECT_NE(what.find("invalid finder depth: got '4', allowed: a run estimated to finish "
                            "within "),
                  std::string::npos)
            << what;
        EXPECT_NE(what.find(FinderWorkText(w, 128, 4, o) + " would take about "), std::string::npos)
            << what;
        EXPECT_NE(what.find("the finder for N = 128, d = 4 at depth 4 (about "), std::string::npos)
            << what;
        EXPECT_TRUE(done.empty()); // refused before any BFB
        EXPECT_THROW(EnumerateCandidates(128, 4, o), FabricConfigError);
    }
    {
        MaxRunSeconds limit(0);
        std::vector<std::pair<uint64_t, uint64_t>> calls;
        o.progress = [&](uint64_t d, uint64_t t) { calls.emplace_back(d, t); };
        const FinderResult r = FindTopology(128, 4, FinderWorkload(), o);
        ASSERT_FALSE(calls.empty());
        for (size_t i = 0; i < calls.size(); ++i)
        {
            EXPECT_EQ(calls[i].first, i + 1);           // one per BFB evaluation
            EXPECT_GE(calls[i].second, calls[i].first); // never past the total
        }
        // the estimate errs long, by less than five times (bench/README.md):
        // 376 BFB runs planned for 101 run, 587 candidates for 262
        EXPECT_LE(calls.size(), std::ceil(w.bfbRuns));
        EXPECT_LE(w.bfbRuns, 5.0 * calls.size());
        EXPECT_LE(r.considered, w.candidates);
        EXPECT_LE(w.candidates, 5.0 * r.considered);
        // the progress callback changes nothing
        o.progress = nullptr;
        EXPECT_EQ(FindTopology(128, 4, FinderWorkload(), o).best.name, r.best.name);
    }
}
