/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// All-to-all on direct-connect graphs (DcShortestPathAllToAll): every piece
// spread evenly over all shortest paths and relayed host by host. On
// arc-transitive graphs every arc carries the same bytes, K^2 (M / n) W / d
// (W the sum of a host's distances to all others); checked exactly on
// hypercubes and the 3 x 3 torus, with one and two GPUs per host, together
// with the bytes sent (each piece times its hops), the checker, the paths
// themselves and a flow-level run bounded below by the busiest arc.
#include "ns3/collective-helper.h"
#include "ns3/dc-baselines.h"
#include "ns3/fabric-error.h"
#include "ns3/schedule-checker.h"
#include "ns3/topology-builders.h"
#include "ns3/topology-finder.h"
#include "ns3/transport-helper.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <map>
#include <set>

using namespace ns3;

namespace
{

/// Bytes each (host, host) hop of \p s carries; hops inside a host left out.
std::map<std::pair<uint32_t, uint32_t>, uint64_t>
HostHopBytes(const CollectiveSchedule& s, uint32_t k)
{
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> load;
    for (uint32_t r = 0; r < s.NumRanks(); ++r)
    {
        for (uint32_t i = 0; i < s.NumOps(r); ++i)
        {
            const CollectiveOp& op = s.Op(r, i);
            if (op.kind == OpKind::Send && r / k != op.peer / k)
            {
                load[{r / k, op.peer / k}] += op.bytes;
            }
        }
    }
    return load;
}

/// \return the sum of the hop distances from host 0 to every host
uint64_t
DistanceSum(const DirectConnectGraph& g)
{
    uint64_t w = 0;
    for (uint32_t d : g.BfsDistances(0))
    {
        w += d;
    }
    return w;
}

struct Case
{
    std::string graph;
    uint32_t k;
};

class DcAllToAllLoad : public ::testing::TestWithParam<Case>
{
};

TEST_P(DcAllToAllLoad, EveryArcCarriesTheClosedForm)
{
    const DirectConnectGraph g = BuildFromName(GetParam().graph);
    const uint32_t k = GetParam().k;
    const uint32_t N = g.NumNodes();
    const uint64_t n = uint64_t{N} * k;
    // pieces divide evenly over up to 4! paths
    const uint64_t piece = 24 * 64;
    const uint64_t bytes = n * piece;
    const CollectiveSchedule s = DcShortestPathAllToAll(g, k, bytes);
    const auto r = ScheduleChecker::Check(s);
    ASSERT_TRUE(r.Ok()) << r.message;
    EXPECT_EQ(s.Type(), CollectiveType::AllToAll);
    EXPECT_EQ(s.NumRanks(), n);
    EXPECT_EQ(s.Algorithm(), "dc-shortest-path");

    // arc-transitive: every arc carries K^2 piece W / d, and nothing else moves between hosts
    const uint64_t w = DistanceSum(g);
    ASSERT_EQ(w * k * k * piece % g.Degree(), 0u);
    const uint64_t perArc = w * k * k * piece / g.Degree();
    const auto load = HostHopBytes(s, k);
    std::set<std::pair<uint32_t, uint32_t>> arcs;
    for (const auto& a : g.Arcs())
    {
        arcs.insert({a.from, a.to});
    }
    EXPECT_EQ(load.size(), arcs.size());
    for (const auto& [hop, b] : load)
    {
        EXPECT_TRUE(arcs.count(hop)) << hop.first << "->" << hop.second << " is not an arc";
        EXPECT_EQ(b, perArc) << hop.first << "->" << hop.second;
    }

    // bytes sent = bytes received; each piece is sent once per hop (one NVLink
    // hop inside a host): n piece (K - 1) + n K piece W in all
    EXPECT_EQ(s.TotalBytesSent(), s.TotalBytesReceived());
    EXPECT_EQ(s.TotalBytesSent(), n * piece * (k - 1) + n * k * piece * w);
    // every rank ends with (n - 1) pieces addressed to it, and sends its own n - 1
    for (uint32_t rank = 0; rank < n; ++rank)
    {
        uint64_t addressed = 0;
        for (const ChunkInfo& c : s.Chunks())
        {
            addressed += c.dst == rank && c.src != rank ? c.bytes : 0;
        }
        EXPECT_EQ(addressed, (n - 1) * piece);
    }
}

INSTANTIATE_TEST_SUITE_P(Graphs,
                         DcAllToAllLoad,
                         ::testing::Values(Case{"Hypercube(3)", 1},
                                           Case{"Hypercube(4)", 1},
                                           Case{"Hypercube(3)", 2},
                                           Case{"Torus(3,3)", 1},
                                           Case{"Torus(3,3)", 4}),
                         [](const ::testing::TestParamInfo<Case>& i) {
                             std::string s;
                             for (char c : i.param.graph)
                             {
                                 s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                             }
                             return s + "_K" + std::to_string(i.param.k);
                         });

TEST(DcAllToAllPaths, AllShortestPathsOfAHypercube)
{
    const DirectConnectGraph g = BuildFromName("Hypercube(4)");
    const auto dist = g.Reverse().BfsDistances(15);
    // 0 -> 15 flips four bits in any order: 4! paths of 4 hops, all distinct
    const auto paths = DcShortestPaths(g, dist, 0, 15, 100);
    EXPECT_EQ(paths.size(), 24u);
    std::set<std::vector<uint32_t>> distinct(paths.begin(), paths.end());
    EXPECT_EQ(distinct.size(), 24u);
    for (const auto& p : paths)
    {
        ASSERT_EQ(p.size(), 5u);
        EXPECT_EQ(p.front(), 0u);
        EXPECT_EQ(p.back(), 15u);
        for (size_t i = 0; i + 1 < p.size(); ++i)
        {
            EXPECT_EQ(__builtin_popcount(p[i] ^ p[i + 1]), 1);
        }
    }
    EXPECT_EQ(DcShortestPaths(g, dist, 0, 15, 5).size(), 5u);
    // capped, the paths kept still spread evenly over the four first hops
    const auto eight = DcShortestPaths(g, dist, 0, 15, 8);
    ASSERT_EQ(eight.size(), 8u);
    EXPECT_EQ(std::set<std::vector<uint32_t>>(eight.begin(), eight.end()).size(), 8u);
    std::map<uint32_t, uint32_t> firstHops;
    for (const auto& p : eight)
    {
        ++firstHops[p[1]];
    }
    EXPECT_EQ(firstHops, (std::map<uint32_t, uint32_t>{{1, 2}, {2, 2}, {4, 2}, {8, 2}}));
    EXPECT_EQ(DcShortestPaths(g, dist, 7, 15, 100).size(), 1u);
    // capped at 2 paths a pair, the schedule still delivers everything
    const CollectiveSchedule s = DcShortestPathAllToAll(g, 1, 16 * 4096, 2);
    const auto r = ScheduleChecker::Check(s);
    EXPECT_TRUE(r.Ok()) << r.message;
}

TEST(DcAllToAllSimulate, FlowLevelTimeIsBoundedByTheBusiestArc)
{
    const DirectConnectGraph g = BuildFromName("Hypercube(3)");
    const uint64_t nodeBps = 100'000'000'000ULL;
    ClusterParams p;
    p.platform = HbDomainPreset::Custom(1, DataRate(nodeBps), DataRate(nodeBps));
    p.linkDelayNs = 100;
    const uint64_t bytes = 8 * 24 * 8192; // 8 pieces of 196 KiB
    const CollectiveSchedule s = DcShortestPathAllToAll(g, 1, bytes);
    const CollectiveResult r =
        TransportHelper("flow", "backend").RunScheduleAlone(BuildDirectConnect(g, nodeBps, p), s);
    ASSERT_TRUE(r.complete);
    // every arc carries piece N/2 = 4 pieces at B/d
    const double arcSeconds = 4.0 * (bytes / 8) * 8 / (nodeBps / 3.0);
    EXPECT_GE(r.timeS, arcSeconds);
    // and every arc is kept busy: relayed hops overlap the first hops of
    // other pairs, so only the latency of the last relays is added (0.7 %
    // measured)
    EXPECT_LE(r.timeS, arcSeconds * 1.05);
}

TEST(DcAllToAllBadInput, RefusedNamingTheParameter)
{
    const DirectConnectGraph g = BuildFromName("Hypercube(2)");
    try
    {
        DcShortestPathAllToAll(g, 0, 1024);
        FAIL() << "gpus per node 0 accepted";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_EQ(e.Parameter(), "gpus-per-node");
    }
    try
    {
        DcShortestPathAllToAll(g, 1, 1024, 0);
        FAIL() << "max paths 0 accepted";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_EQ(e.Parameter(), "max-paths");
    }
    DirectConnectGraph line(3, "line");
    line.AddArc(0, 1);
    line.AddArc(1, 2);
    try
    {
        DcShortestPathAllToAll(line, 1, 1024);
        FAIL() << "a graph that is not strongly connected accepted";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_EQ(e.Parameter(), "graph");
    }
}

} // namespace
