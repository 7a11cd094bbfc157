/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// All-to-all on direct-connect graphs (DcShortestPathAllToAll): every piece
// spread evenly over all shortest paths and relayed host by host. On
// arc-transitive graphs every arc carries the same bytes, K^2 (M / n) W / d
// (W the sum of a host's distances to all others); checked exactly on
// hypercubes and the 3 x 3 torus, with one and two GPUs per host, together
// with the bytes sent (each piece times its hops), the checker, the paths
// themselves and a flow-level run bounded below by the busiest arc. The
// training programs' direct-connect fabric: DirectConnectSchedules picks BFB
// or this all-to-all where they apply, a program runs them, TopologyHelper
// puts HB domains on the graph's nodes, and the programs' rows and refusals.
#include "program-run.h"

#include "ns3/bfb-collective.h"
#include "ns3/collective-algorithms.h"
#include "ns3/collective-helper.h"
#include "ns3/dc-baselines.h"
#include "ns3/dc-schedules.h"
#include "ns3/double.h"
#include "ns3/fabric-cost.h"
#include "ns3/fabric-error.h"
#include "ns3/iteration-program.h"
#include "ns3/schedule-checker.h"
#include "ns3/simulator.h"
#include "ns3/topology-builders.h"
#include "ns3/topology-finder.h"
#include "ns3/topology-helper.h"
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

/// Names the case in ctest's listing (gtest prints a struct's bytes otherwise).
void
PrintTo(const Case& c, std::ostream* os)
{
    *os << c.graph << " K=" << c.k;
}

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

TEST(DcSchedules, BfbAndTheAllToAllWhereTheyApply)
{
    // Hypercube(3) with HB domains of 2 as nodes: 16 GPUs, GPU r on host r / 2
    DirectConnectSchedules dc(BuildFromName("Hypercube(3)"), 2);
    const std::vector<uint32_t> even{0, 2, 4, 6, 8, 10, 12, 14};
    const std::vector<uint32_t> odd{1, 3, 5, 7, 9, 11, 13, 15};
    std::vector<uint32_t> all(16);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(dc.AlgorithmFor("allreduce", even), "bfb");
    EXPECT_EQ(dc.AlgorithmFor("allgather", odd), "bfb");
    EXPECT_EQ(dc.AlgorithmFor("reducescatter", odd), "bfb");
    EXPECT_EQ(dc.AlgorithmFor("alltoall", all), "dc-shortest-path");
    // a TP group inside a host, hosts out of order, a subset, a sendrecv: none
    EXPECT_EQ(dc.AlgorithmFor("allreduce", {0, 1}), "");
    EXPECT_EQ(dc.AlgorithmFor("allreduce", {2, 0, 4, 6, 8, 10, 12, 14}), "");
    EXPECT_EQ(dc.AlgorithmFor("allreduce", all), "");
    EXPECT_EQ(dc.AlgorithmFor("alltoall", even), "");
    EXPECT_EQ(dc.AlgorithmFor("sendrecv", {0, 2}), "");
    // a subset of the hosts in order: BFB on the graph they induce when it is
    // connected (hosts 0-3, a 4-cycle; hosts 0 and 1, one link each way), none
    // when it is not (hosts 0 and 3 differ in two bits; 0, 1, 6 leave 6 alone)
    EXPECT_EQ(dc.AlgorithmFor("allreduce", {0, 2, 4, 6}), "bfb");
    EXPECT_EQ(dc.AlgorithmFor("allgather", {1, 3}), "bfb");
    EXPECT_EQ(dc.AlgorithmFor("allreduce", {0, 6}), "");
    EXPECT_EQ(dc.AlgorithmFor("allreduce", {0, 2, 12}), "");

    for (const std::string collective : {"allreduce", "allgather", "reducescatter"})
    {
        SCOPED_TRACE(collective);
        ProgramComm c{collective, "ring", odd, 8 * 4096, 0, 0, "dp"};
        const auto s = dc.Make(c);
        ASSERT_TRUE(s.has_value());
        EXPECT_EQ(s->Communicator(), odd);
        EXPECT_EQ(s->Type(), ParseCollectiveType(collective));
        EXPECT_EQ(s->Algorithm().rfind("bfb:", 0), 0u) << s->Algorithm();
        const auto r = ScheduleChecker::Check(*s);
        EXPECT_TRUE(r.Ok()) << r.message;
    }
    EXPECT_FALSE(dc.Make({"allreduce", "ring", {0, 1}, 4096, 0, 0, "tp"}).has_value());
    // hosts 4-7 of Hypercube(3) induce a Hypercube(2) (bits 0 and 1), node i
    // host 4 + i: BFB's steps and T_B are Hypercube(2)'s
    const std::vector<uint32_t> upper{9, 11, 13, 15};
    const BfbSchedule* sub = dc.GetBfb("allreduce", upper);
    ASSERT_NE(sub, nullptr);
    const BfbSchedule square = BfbAllReduce(BuildFromName("Hypercube(2)"));
    EXPECT_EQ(sub->nodes, 4u);
    EXPECT_EQ(sub->degree, 2u);
    EXPECT_EQ(sub->Steps(), square.Steps());
    EXPECT_EQ(sub->Tb(), square.Tb());
    EXPECT_EQ(dc.GetBfb("allreduce", {0, 6}), nullptr);
    const auto subSchedule = dc.Make({"allreduce", "ring", upper, 4 * 4096, 0, 0, "dp"});
    ASSERT_TRUE(subSchedule.has_value());
    EXPECT_EQ(subSchedule->Communicator(), upper);
    EXPECT_EQ(subSchedule->Algorithm(), "bfb:Hypercube(3) on hosts 4,5,6,7");
    const auto checked = ScheduleChecker::Check(*subSchedule);
    EXPECT_TRUE(checked.Ok()) << checked.message;
    const auto a2a = dc.Make({"alltoall", "direct", all, 16 * 1024, 0, 0, "ep"});
    ASSERT_TRUE(a2a.has_value());
    EXPECT_EQ(a2a->Algorithm(), "dc-shortest-path");
}

TEST(DcSchedules, AProgramRunsTheBfbScheduleOnDomainsAsNodes)
{
    // Hypercube(2) with HB domains of 2 as nodes: a DP group of GPU 0 of
    // every domain allreduces with BFB, exactly the schedule run alone
    ClusterParams cp;
    cp.gpus = 8;
    cp.platform = HbDomainPreset::Custom(2, DataRate("800Gbps"), DataRate("100Gbps"));
    TopologyHelper topologies(cp);
    topologies.SetGraph("Hypercube(2)", 0);
    topologies.SetDomainsAsNodes(true);
    topologies.SetGpusRequired(true);
    EXPECT_EQ(topologies.GetGpusPerNode(), 2u);
    const FabricTopology topo = topologies.Create("direct-connect");
    EXPECT_EQ(topo.GetNGpus(), 8u);
    const ProgramComm dp{"allreduce", "ring", {0, 2, 4, 6}, 4 * 64 * 1024, 0, 0, "dp"};
    ParallelProgram p;
    p.ranks = 8;
    p.tasks.resize(8);
    p.comms.push_back(dp);
    for (uint32_t r = 0; r < 8; r += 2)
    {
        p.tasks[r].push_back({ProgramTask::Kind::Comm, 0, 0, {}});
    }
    DirectConnectSchedules dc(topologies.GetGraph(), 2);
    const TransportHelper flow("flow", "backend");
    InstalledTransport t = flow.Install(topo);
    Ptr<ProgramRunner> runner = RunProgram(p, t.transport, dc.Source());
    ASSERT_TRUE(runner->IsComplete());
    const double programS = runner->GetFinishTime().GetSeconds();
    EXPECT_EQ(runner->GetRuns()[0]->GetSchedule().Algorithm().rfind("bfb:", 0), 0u);
    t.Dispose();
    Simulator::Destroy();
    const CollectiveResult alone = flow.RunScheduleAlone(topo, *dc.Make(dp));
    ASSERT_TRUE(alone.complete);
    EXPECT_DOUBLE_EQ(programS, alone.timeS);
    // and not the ring the comm names, which takes another time
    const CollectiveResult ring = flow.RunScheduleAlone(
        topo,
        MakeSchedule({"allreduce", "ring", 4, dp.bytes, 0, 1, 0, 0, dp.members}));
    EXPECT_NE(programS, ring.timeS);

    // a graph whose nodes hold another GPU count is refused naming the GPUs
    cp.gpus = 16;
    topologies.SetCluster(cp);
    try
    {
        topologies.Create("direct-connect");
        FAIL() << "16 GPUs on 4 domains of 2 accepted";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_EQ(e.Parameter(), "gpus");
        EXPECT_NE(
            std::string(e.what()).find("K x the node count of graph=Hypercube(2) (2 x 4 = 8)"),
            std::string::npos)
            << e.what();
    }
}

TEST(DcSchedules, MoeAllToAllOnOneGpuPerNodeMatchesTheBusiestArc)
{
    // Hypercube(4), one GPU per node at the GPU's NIC rate (400 Gb/s over 4
    // arcs): every arc carries piece W / d = 8 pieces = M / 2
    const uint64_t bytes = 1 << 20;
    const auto j = RunJson(fmt::format("moe-alltoall --presets=dgx-h100 --gpus=16 --bytes={} "
                                       "--backend=flow --graph='Hypercube(4)' --dc-nodes=gpu",
                                       bytes),
                           "dc-moe");
    ASSERT_TRUE(j.is_object());
    const double dcS = j["results"][0]["direct_connect_time_s"].get<double>();
    const double arcS = bytes / 2.0 * 8 / 100e9;
    EXPECT_GE(dcS, arcS);
    EXPECT_LE(dcS, arcS * 1.05);
}

TEST(DcSchedules, MoeAllToAllOnDomainsAsNodesCompletesAtPacketLevel)
{
    // DGX-H100 domains on Hypercube(3): under the default per-port PFC the
    // relays deadlocked (the run aborted); TopologyHelper::ConfigureFabric
    // lets them pause only past 64 MiB, and the all-to-all finishes no
    // faster than its busiest arc: each carries K^2 (M / n) W / d = 64 x
    // (M / 64) x 12 / 3 = 4 M at 3.2 Tb/s / 3
    const uint64_t bytes = 1 << 18;
    const auto j = RunJson(fmt::format("moe-alltoall --presets=dgx-h100 --bytes={} "
                                       "--graph='Hypercube(3)'",
                                       bytes),
                           "dc-moe-packet");
    ASSERT_TRUE(j.is_object());
    const double dcS = j["results"][0]["direct_connect_time_s"].get<double>();
    const double arcS = 4.0 * bytes * 8 / (3.2e12 / 3);
    EXPECT_GE(dcS, arcS);
    EXPECT_LE(dcS, arcS * 2);
}

TEST(DcSchedules, FlowScaleOnDomainsAsNodesRunsAtPacketLevelAsAtFlowLevel)
{
    // flow-scale's TP then DP phases on DGX-H100 domains of Hypercube(3):
    // with ConfigureFabric's relay thresholds the packet level delivers every
    // message and its DP phase is within 10 % of the flow level's (1.8 %
    // measured)
    const std::string flags = "flow-scale --gpus=64 --preset=dgx-h100 --topology=direct-connect "
                              "--graph='Hypercube(3)' --workload=phases --tp-bytes=1048576 "
                              "--dp-bytes=1048576";
    const auto packet = RunJson(flags + " --backend=packet", "dc-fs-packet");
    const auto flow = RunJson(flags + " --backend=flow", "dc-fs-flow");
    ASSERT_TRUE(packet.is_object());
    ASSERT_TRUE(flow.is_object());
    const auto& p = packet["runs"][0];
    const auto& f = flow["runs"][0];
    EXPECT_EQ(p["messages_delivered"], p["flows"]);
    EXPECT_EQ(p["bytes_delivered"], f["bytes_delivered"]);
    const double pDp = p["phase_time_s"][1].get<double>();
    const double fDp = f["phase_time_s"][1].get<double>();
    EXPECT_GT(pDp, 0.0);
    EXPECT_NEAR(pDp / fDp, 1.0, 0.1);
}

TEST(DcSchedules, FlagshipHasADirectConnectRowWithoutSwitches)
{
    // OCS patching at given prices; transceivers at the default preset's $374
    const auto j = RunJson("rail-only-vs-fat-tree --quick --png=none --backend=flow --pp=1 "
                           "--topologies=rail-optimized,direct-connect --graph='Hypercube(3)' "
                           "--ns3::FabricCostModel::DirectConnectPatching=ocs "
                           "--ns3::FabricCostModel::FibrePrice=3 "
                           "--ns3::FabricCostModel::OcsPortPrice=11",
                           "dc-flagship");
    ASSERT_TRUE(j.is_object());
    bool found = false;
    for (const auto& r : j["results"])
    {
        if (r["topology"] == "direct-connect")
        {
            found = true;
            EXPECT_EQ(r["gpus"], 64);
            EXPECT_EQ(r["switches"], 0);
            // 8 domains of degree 3: 24 arcs, one transceiver each (its TX
            // on one arc, its RX on another); 12 node pairs, a fibre each,
            // an OCS port at each end
            EXPECT_EQ(r["transceivers"], 8 * 3);
            EXPECT_EQ(r["fibres"], 12);
            EXPECT_EQ(r["ocs_ports"], 24);
            EXPECT_EQ(r["patch_panel_ports"], 0);
            // an arc of 3.2 Tb/s / 3 = 1,067 Gb/s: three 400G transceivers
            // per end ($1,122) beat two 800G ones ($1,336)
            EXPECT_DOUBLE_EQ(r["cost_usd"].get<double>(), 24 * 3 * 374.0 + 12 * 3.0 + 24 * 11.0);
            EXPECT_GT(r["iteration_time_s"].get<double>(), 0.0);
        }
    }
    EXPECT_TRUE(found);
}

TEST(DcSchedules, FlagshipsDefaultRunHasADirectConnectRow)
{
    // no --topologies, no --graph: the quick job's 8 HB domains on a
    // Hypercube(3), beside rail-only and the fat-trees, at the default prices
    const auto j = RunJson("rail-only-vs-fat-tree --quick --png=none --backend=flow", "dc-default");
    ASSERT_TRUE(j.is_object());
    std::map<std::string, nlohmann::json> simulated;
    for (const auto& r : j["results"])
    {
        if (r["simulated"].get<bool>())
        {
            simulated[r["topology"].get<std::string>()] = r;
        }
    }
    ASSERT_EQ(simulated.size(), 4u) << j.dump();
    for (const std::string t : {"rail-only", "rail-optimized", "fat-tree"})
    {
        ASSERT_EQ(simulated.count(t), 1u) << t;
        EXPECT_EQ(simulated[t]["gpus"], 64);
    }
    ASSERT_EQ(simulated.count("direct-connect"), 1u);
    const auto& r = simulated["direct-connect"];
    EXPECT_EQ(r["gpus"], 64);
    EXPECT_EQ(r["graph"], "Hypercube(3)");
    EXPECT_EQ(r["model"], simulated["rail-only"]["model"]);
    // 8 nodes of degree 3: 24 transceivers, 12 fibres, a patch-panel port at
    // each fibre end, no switches; priced by the cost model's attributes
    auto cost = CreateObject<FabricCostModel>();
    cost->SetPricePreset("hotnets2023");
    const auto price = [&cost](const std::string& name) {
        DoubleValue v;
        cost->GetAttribute(name, v);
        return v.Get();
    };
    EXPECT_EQ(r["switches"], 0);
    EXPECT_EQ(r["transceivers"], 24);
    EXPECT_EQ(r["fibres"], 12);
    EXPECT_EQ(r["patch_panel_ports"], 24);
    EXPECT_EQ(r["ocs_ports"], 0);
    // arcs of 1,067 Gb/s: the cheaper of three 400G and two 800G per end
    const double end = std::min(3 * price("TransceiverPrice"), 2 * price("Transceiver800gPrice"));
    EXPECT_DOUBLE_EQ(r["cost_usd"].get<double>(),
                     24 * end + 12 * price("FibrePrice") + 24 * price("PatchPanelPortPrice"));
    // PP 2: a stage's DP group of 4 domains is a Hypercube(2) subcube, and its
    // allreduce BFB; the 8 groups (one per TP rank) share each arc, so each
    // has 2 arcs at 1/8 of B/d = 3.2 Tb/s / 3
    EXPECT_EQ(r["dp_algorithm"], "bfb");
    EXPECT_EQ(r["dp_groups_sharing_arcs"], 8);
    const BfbSchedule square = BfbAllReduce(BuildFromName("Hypercube(2)"));
    ASSERT_EQ(square.Steps(), 4u);
    ASSERT_EQ(square.Tb(), Fraction(3, 2));
    const double share = static_cast<double>(3'200'000'000'000ULL / 3) / 8;
    const double m = r["dp_allreduce_bytes"].get<double>();
    const double formula =
        4 * (500e-9 + 4122.0 * 8 / share) + 1.5 * m * 8 / (2 * share * 4096.0 / 4122);
    EXPECT_NEAR(r["dp_formula_s"].get<double>(), formula, 1e-9 * formula);
    // the simulated allreduce: at the formula (3 % for its alpha, counted
    // per step, not per pipelined chunk); 1.25 x before arcs weighed more
    // than NVLink hops in the routing (messages between neighbours went
    // around the graph)
    const double dpS = r["dp_allreduce_s"].get<double>();
    EXPECT_GE(dpS, 0.97 * formula);
    EXPECT_LE(dpS, 1.1 * formula);
    // it is part of the iteration, which otherwise runs what rail-only runs
    EXPECT_GT(r["iteration_time_s"].get<double>(), dpS);
    EXPECT_EQ(simulated["rail-only"]["dp_algorithm"], "hierarchical");
    EXPECT_TRUE(simulated["rail-only"]["dp_formula_s"].is_null());
}

TEST(DcSchedules, ProgramsRefuseAGraphOfTheWrongSize)
{
    const std::vector<std::pair<std::string, std::string>> cases{
        {"rail-only-vs-fat-tree --quick --png=none --topologies=rail-only,direct-connect "
         "--graph='Hypercube(4)'",
         "invalid --graph: got 'Hypercube(4)', allowed: a graph of 8 nodes (64 GPUs in HB "
         "domains of K = 8 (--dc-nodes=domain)); this one has 16"},
        {"rail-only-vs-fat-tree --quick --png=none --gpus=8 --pp=1 --topologies=direct-connect",
         "invalid --topologies: got 'direct-connect', allowed: direct-connect on at least 2 "
         "graph nodes"},
        {"rail-only-vs-fat-tree --quick --png=none --topologies=rail-only --graph='Hypercube(3)'",
         "invalid --graph: got 'Hypercube(3)', allowed: a graph only with direct-connect in "
         "--topologies"},
        {"moe-alltoall --presets=dgx-h100 --graph='Hypercube(3)' --dc-nodes=gpu",
         "invalid --graph: got 'Hypercube(3)', allowed: a graph of 64 nodes (64 GPUs, one per "
         "node (--dc-nodes=gpu)); this one has 8"},
        {"moe-alltoall --graph='Hypercube(3)' --dc-nodes=rack",
         "invalid --dc-nodes: got 'rack', allowed: domain or gpu"},
        {"moe-alltoall --dc-nodes=gpu",
         "invalid --dc-nodes: got 'gpu', allowed: only with --graph"},
        {"rail-only-vs-fat-tree --quick --png=none --ns3::FabricCostModel::OcsPortPrice=-5",
         "invalid --ns3::FabricCostModel::OcsPortPrice: got '-5', allowed: "},
        {"rail-only-vs-fat-tree --quick --png=none "
         "--ns3::FabricCostModel::DirectConnectPatching=robot",
         "invalid --ns3::FabricCostModel::DirectConnectPatching: got 'robot', allowed: "},
    };
    for (const auto& [args, message] : cases)
    {
        const auto [status, out] = RunCapture(args, "dc-refused");
        EXPECT_EQ(status, 2) << args;
        EXPECT_NE(out.find(message), std::string::npos) << args << "\n" << out;
    }
}

} // namespace

TEST(DcSchedules, DpGroupsSharingArcsRunAtBfbsFormula)
{
    // four DP groups (GPU g of every DGX-H100 domain) on Hypercube(3) at
    // once: each gets a quarter of every arc and runs at BFB's formula for
    // that share. Before arcs weighed more than NVLink hops in the routing,
    // a message between neighbouring domains could take three arcs whose
    // ends sat on the GPUs holding the next arc (as many hops as the direct
    // arc and NVLink on both sides) and the groups took 1.37 x the formula
    ClusterParams cp;
    cp.platform = HbDomainPreset::Get("dgx-h100");
    const uint32_t k = cp.platform.gpusPerDomain;
    TopologyHelper topologies(cp);
    topologies.SetGraph("Hypercube(3)", 0);
    topologies.SetDomainsAsNodes(true);
    const FabricTopology topo = topologies.Create("direct-connect");
    DirectConnectSchedules dc(topologies.GetGraph(), k);
    const uint32_t groups = 4;
    const uint64_t bytes = 16 << 20;
    ParallelProgram p;
    p.ranks = topo.GetNGpus();
    p.tasks.resize(p.ranks);
    for (uint32_t g = 0; g < groups; ++g)
    {
        ProgramComm c{"allreduce", "ring", {}, bytes, 0, 0, fmt::format("dp group {}", g)};
        for (uint32_t d = 0; d < 8; ++d)
        {
            c.members.push_back(d * k + g);
            p.tasks[d * k + g].push_back({ProgramTask::Kind::Comm, 0, g, {}});
        }
        p.comms.push_back(c);
    }
    InstalledTransport t = TransportHelper("flow", "backend").Install(topo);
    Ptr<ProgramRunner> runner = RunProgram(p, t.transport, dc.Source());
    ASSERT_TRUE(runner->IsComplete());
    const double arcBps = 3.2e12 / 3;
    const BfbSchedule& s = *dc.GetBfb("allreduce", p.comms[0].members);
    EXPECT_EQ(s.Steps(), 6u);
    const double formula = BfbPredictedTime(s, bytes, arcBps * 3 / groups, cp.linkDelayNs * 1e-9);
    for (const auto& run : runner->GetRuns())
    {
        EXPECT_EQ(run->GetSchedule().Algorithm().rfind("bfb:", 0), 0u);
        EXPECT_GT(run->GetResult().timeS, 0.97 * formula);
        EXPECT_LT(run->GetResult().timeS, 1.03 * formula);
    }
    t.Dispose();
    Simulator::Destroy();
}
