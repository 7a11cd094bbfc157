/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Topology tests: the published count table, cost reductions, reachability
// in every builder, rail-only forwarding through NVLink, bisection
// bandwidth, a cross-rail message's time, and bad parameters.
#include "record-now.h"

#include "ns3/direct-connect-graph.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/fabric-cost.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-helper.h"
#include "ns3/fabric-routing.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/topology-builders.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <gtest/gtest.h>
#include <numeric>
#include <random>
#include <tuple>

using gpu_fabric_test::RecordNow;
using namespace ns3;

namespace
{

struct PublishedRow
{
    uint32_t gpus;
    uint32_t radix;
    uint64_t ftSwitches;
    uint64_t roSwitches;
    uint64_t ftTransceivers;
    uint64_t roTransceivers;
};

// Rail-only papers (HotNets 2023 / arXiv 2307.12169), HB domain K = 256.
const std::array<PublishedRow, 7> kPublished = {{
    {32768, 32, 7168, 3072, 262144, 131072},
    {32768, 64, 2560, 1536, 196608, 131072},
    {32768, 128, 1280, 256, 196608, 65536},
    {32768, 256, 384, 128, 131072, 65536},
    {65536, 64, 5120, 3072, 393216, 262144},
    {65536, 128, 2560, 1536, 393216, 262144},
    {65536, 256, 1280, 256, 393216, 131072},
}};

ClusterParams
PaperParams(uint32_t gpus, uint32_t radix)
{
    ClusterParams p;
    p.gpus = gpus;
    p.radix = radix;
    p.platform = HbDomainPreset::Custom(256, DataRate("3600Gbps"), DataRate("400Gbps"));
    return p;
}

TEST(TopologyCost, PublishedCountTableIsReproducedRowByRow)
{
    for (const auto& row : kPublished)
    {
        const ClusterParams p = PaperParams(row.gpus, row.radix);
        const FabricCounts ft = CountEquipment(BuildRailOptimized(p), row.radix);
        const FabricCounts ro = CountEquipment(BuildRailOnly(p), row.radix);
        SCOPED_TRACE(testing::Message() << row.gpus << " GPUs, radix " << row.radix);
        EXPECT_EQ(ft.switches, row.ftSwitches);
        EXPECT_EQ(ro.switches, row.roSwitches);
        EXPECT_EQ(ft.transceivers, row.ftTransceivers);
        EXPECT_EQ(ro.transceivers, row.roTransceivers);
        EXPECT_EQ(ft.nics, row.gpus);
        EXPECT_EQ(ro.nics, row.gpus);
    }
}

TEST(TopologyCost, CostReductionsMatchThePublishedCountsAndRange)
{
    for (const std::string prices : {"hotnets2023", "railonly2024"})
    {
        auto model = CreateObject<FabricCostModel>();
        model->SetPricePreset(prices);
        const double tr = prices == "hotnets2023" ? 374 : 199;
        const double port = prices == "hotnets2023" ? 748 : 694;
        double lo = 100;
        double hi = 0;
        for (const auto& row : kPublished)
        {
            const ClusterParams p = PaperParams(row.gpus, row.radix);
            const FabricCounts ft = CountEquipment(BuildRailOptimized(p), row.radix);
            const FabricCounts ro = CountEquipment(BuildRailOnly(p), row.radix);
            const double ours = 100 * (1 - model->Cost(ro) / model->Cost(ft));
            // closed form from the published counts: ports = switches x radix
            const double ftPaper = row.ftSwitches * row.radix * port + row.ftTransceivers * tr;
            const double roPaper = row.roSwitches * row.radix * port + row.roTransceivers * tr;
            EXPECT_NEAR(ours, 100 * (1 - roPaper / ftPaper), 0.1);
            // 400G links: the papers' prices, cost exactly counts x prices
            EXPECT_DOUBLE_EQ(model->Cost(ft), ftPaper);
            EXPECT_DOUBLE_EQ(model->Cost(ro), roPaper);
            lo = std::min(lo, ours);
            hi = std::max(hi, ours);
        }
        // Published ranges: 37%-75% (HotNets prices), 38%-77% (later prices).
        if (prices == "hotnets2023")
        {
            EXPECT_NEAR(lo, 37.5, 0.1);
            EXPECT_NEAR(hi, 75.0, 0.1);
        }
        else
        {
            EXPECT_NEAR(lo, 38.3, 0.1);
            EXPECT_NEAR(hi, 76.6, 0.1);
        }
    }
}

TEST(TopologyCost, TrimmedClosRemovesTheTiersAboveTheRailsInClosedForm)
{
    // Rail-major hosts, h = radix / 2 per leaf: a tier-j switch (j < t) sees
    // a block of h^j consecutive GPUs, so every rail of R = N / K GPUs lies in
    // one block from the lowest j with R | h^j (t_rail); each tier holds N
    // links, so (t - t_rail) N go; tiers t_rail+1..t-1 lose N / h switches
    // each and the top tier its N / radix.
    for (const auto& row : kPublished)
    {
        SCOPED_TRACE(testing::Message() << row.gpus << " GPUs, radix " << row.radix);
        const uint64_t n = row.gpus;
        const uint64_t h = row.radix / 2;
        const uint64_t rail = n / 256;
        uint32_t t = 2;
        for (uint64_t below = h; row.radix * below < n; below *= h)
        {
            ++t;
        }
        uint32_t tRail = t;
        uint64_t block = h;
        for (uint32_t j = 1; j < t; ++j, block *= h)
        {
            if (block % rail == 0)
            {
                tRail = j;
                break;
            }
        }
        const FabricTopology topo = BuildRailOptimized(PaperParams(row.gpus, row.radix));
        const FabricCounts ft = CountEquipment(topo, row.radix);
        const FabricCounts tc = CountTrimmedEquipment(topo, row.radix);
        EXPECT_EQ(ft.links, t * n);
        EXPECT_EQ(ft.links - tc.links, (t - tRail) * n);
        EXPECT_EQ(tc.transceivers, 2 * tRail * n);
        EXPECT_EQ(tc.nics, n);
        EXPECT_EQ(ft.switches - tc.switches, (t - tRail - 1) * (n / h) + n / row.radix);
        EXPECT_EQ(tc.switchesByTier.size(), tRail);
        const auto removable = RailTrimmableCables(topo);
        EXPECT_EQ(static_cast<uint64_t>(std::count(removable.begin(), removable.end(), true)),
                  ft.links - tc.links);
        // the paper's "a third of the links": every 3-tier row of the table
        if (t == 3)
        {
            EXPECT_EQ(3 * (ft.links - tc.links), ft.links);
        }
        // rail-only has no link only cross-rail traffic uses
        const FabricTopology ro = BuildRailOnly(PaperParams(row.gpus, row.radix));
        EXPECT_EQ(CountTrimmedEquipment(ro, row.radix).links, CountEquipment(ro, row.radix).links);
    }
    // a classic fat-tree mixes rails on every leaf: nothing to trim
    ClusterParams p = PaperParams(4096, 64);
    p.platform = HbDomainPreset::Get("dgx-h100");
    const FabricTopology fat = BuildFatTree(p);
    EXPECT_EQ(CountTrimmedEquipment(fat, 64).links, CountEquipment(fat, 64).links);
    // DGX-H100 (K = 8) rail-optimized, 4096 GPUs, radix 64: rails of 512
    // fill one 2-tier block of 1024 hosts (h^2 = 1024): a third goes again
    const FabricTopology h100 = BuildRailOptimized(p);
    EXPECT_EQ(3 * (CountEquipment(h100, 64).links - CountTrimmedEquipment(h100, 64).links),
              CountEquipment(h100, 64).links);
}

TEST(TopologyCost, PowerSavingsEqualHotnetsCostSavingsAtTwoToOne)
{
    // With a switch port drawing twice a transceiver (the defaults), power
    // falls exactly as cost does at HotNets prices ($748 = 2 x $374).
    auto model = CreateObject<FabricCostModel>();
    const ClusterParams p = PaperParams(32768, 64);
    const FabricCounts ft = CountEquipment(BuildRailOptimized(p), 64);
    const FabricCounts ro = CountEquipment(BuildRailOnly(p), 64);
    EXPECT_NEAR(1 - model->Power(ro) / model->Power(ft),
                1 - model->Cost(ro) / model->Cost(ft),
                1e-12);
    EXPECT_THROW(model->SetPricePreset("cheap"), FabricConfigError);
}

TEST(TopologyCost, DirectConnectEquipmentIsTransceiversFibresAndPatchingInClosedForm)
{
    // distinct prices so that each term shows in the sum
    auto model = CreateObject<FabricCostModel>();
    model->SetAttribute("TransceiverPrice", DoubleValue(7));
    model->SetAttribute("FibrePrice", DoubleValue(3));
    model->SetAttribute("PatchPanelPortPrice", DoubleValue(5));
    model->SetAttribute("OcsPortPrice", DoubleValue(11));
    model->SetAttribute("TransceiverPower", DoubleValue(2));
    const auto equipment = [](const DirectConnectGraph& g, uint32_t k) {
        ClusterParams p;
        p.platform = HbDomainPreset::Custom(k, DataRate("100Gbps"), DataRate("100Gbps"));
        return CountEquipment(BuildDirectConnect(g, uint64_t{k} * 300'000'000'000ULL, p), 1);
    };

    struct Case
    {
        std::string name;
        DirectConnectGraph graph;
        uint32_t k;
        uint64_t arcs;   // N x d
        uint64_t fibres; // node pairs (undirected), arcs (one-way)
    };

    // Hypercube(3): 12 undirected links = 24 arcs; as HB domains of 4 GPUs the
    // arcs leave and enter different GPUs of a domain but still pair up; the
    // directed ring DC(5,{1}) has no reverse arcs, so a fibre per arc
    const std::vector<Case> cases{{"Hypercube(3)", MakeHypercube(3), 1, 24, 12},
                                  {"Hypercube(3), K = 4", MakeHypercube(3), 4, 24, 12},
                                  {"DC(5,{1})", MakeDirectedCirculant(5, {1}), 1, 5, 5},
                                  {"C(6,{1,2})", MakeCirculant(6, {1, 2}), 1, 24, 12}};
    for (const Case& c : cases)
    {
        SCOPED_TRACE(c.name);
        const FabricCounts n = equipment(c.graph, c.k);
        EXPECT_EQ(n.switches, 0u);
        EXPECT_EQ(n.switchPorts, 0u);
        EXPECT_EQ(n.directLinks, c.arcs);
        EXPECT_EQ(n.transceivers, c.arcs); // d per node: one TX and one RX each
        EXPECT_EQ(n.directFibres, c.fibres);
        EXPECT_EQ(n.cables, c.fibres);
        model->SetAttribute("DirectConnectPatching", StringValue("patch-panel"));
        EXPECT_EQ(model->PatchingName(), "patch-panel");
        EXPECT_EQ(model->PatchPanelPorts(n), 2 * c.fibres);
        EXPECT_EQ(model->OcsPorts(n), 0u);
        EXPECT_DOUBLE_EQ(model->Cost(n), 7.0 * c.arcs + 3.0 * c.fibres + 5.0 * 2 * c.fibres);
        model->SetAttribute("DirectConnectPatching", StringValue("ocs"));
        EXPECT_EQ(model->PatchingName(), "ocs");
        EXPECT_EQ(model->PatchPanelPorts(n), 0u);
        EXPECT_EQ(model->OcsPorts(n), 2 * c.fibres);
        EXPECT_DOUBLE_EQ(model->DirectConnectCost(n), 3.0 * c.fibres + 11.0 * 2 * c.fibres);
        EXPECT_DOUBLE_EQ(model->Cost(n), 7.0 * c.arcs + 3.0 * c.fibres + 11.0 * 2 * c.fibres);
        // passive fibres and patching: the power is the transceivers'
        EXPECT_DOUBLE_EQ(model->Power(n), 2.0 * c.arcs);
    }
    // switched fabrics have no direct-connect equipment
    const FabricCounts ro = CountEquipment(BuildRailOnly(PaperParams(32768, 64)), 64);
    EXPECT_EQ(ro.directFibres, 0u);
    EXPECT_EQ(model->DirectConnectCost(ro), 0.0);
}

TEST(TopologyCost, DirectConnectTransceiversArePricedByTheArcRate)
{
    // the cheaper of ceil(r / 400G) 400G and ceil(r / 800G) 800G transceivers
    // per arc end, each term's price distinct
    auto model = CreateObject<FabricCostModel>();
    model->SetAttribute("TransceiverPrice", DoubleValue(7));
    model->SetAttribute("Transceiver800gPrice", DoubleValue(10));
    model->SetAttribute("TransceiverPower", DoubleValue(2));
    model->SetAttribute("Transceiver800gPower", DoubleValue(3));
    model->SetAttribute("FibrePrice", DoubleValue(0));
    model->SetAttribute("PatchPanelPortPrice", DoubleValue(0));

    struct Case
    {
        uint64_t arcGbps;
        double price; // one arc end
        double power;
    };

    // 401G and 800G: one 800G (10) beats two 400G (14); 1000G and 1200G:
    // two 800G (20) beat three 400G (21); 2400G: three 800G (30), not six 400G
    for (const Case& c : std::vector<Case>{{100, 7, 2},
                                           {400, 7, 2},
                                           {401, 10, 3},
                                           {800, 10, 3},
                                           {1000, 20, 6},
                                           {1200, 20, 6},
                                           {2400, 30, 9}})
    {
        SCOPED_TRACE(c.arcGbps);
        EXPECT_DOUBLE_EQ(model->TransceiverPriceAt(c.arcGbps * 1'000'000'000), c.price);
        EXPECT_DOUBLE_EQ(model->TransceiverPowerAt(c.arcGbps * 1'000'000'000), c.power);
        // Hypercube(3) at 3 x the arc rate per node: 24 arc ends
        ClusterParams p;
        p.platform = HbDomainPreset::Custom(1, DataRate("100Gbps"), DataRate("100Gbps"));
        const FabricCounts n =
            CountEquipment(BuildDirectConnect(MakeHypercube(3), 3 * c.arcGbps * 1'000'000'000, p),
                           1);
        EXPECT_EQ(n.transceivers, 24u);
        ASSERT_EQ(n.directTransceiversByRate.size(), 1u);
        EXPECT_EQ(n.directTransceiversByRate.begin()->first, c.arcGbps * 1'000'000'000);
        EXPECT_DOUBLE_EQ(model->Cost(n), 24 * c.price);
        EXPECT_DOUBLE_EQ(model->Power(n), 24 * c.power);
    }
    // 800G dearer than two 400G: two 400G per 800G arc end
    model->SetAttribute("Transceiver800gPrice", DoubleValue(15));
    EXPECT_DOUBLE_EQ(model->TransceiverPriceAt(800'000'000'000), 14);
    EXPECT_DOUBLE_EQ(model->TransceiverPowerAt(800'000'000'000), 4);
    // a switched fabric of 800G NICs: its transceivers by the same rule (two
    // 400G per end here), its ports at SwitchPort800gPrice
    ClusterParams fast = PaperParams(64, 16);
    fast.platform = HbDomainPreset::Get("gb200-nvl72");
    fast.gpus = 144;
    const FabricCounts ro = CountEquipment(BuildRailOnly(fast), 16);
    EXPECT_TRUE(ro.directTransceiversByRate.empty());
    EXPECT_DOUBLE_EQ(model->Cost(ro), ro.switchPorts * 1336.0 + ro.transceivers * 14.0);
}

TEST(TopologyCost, SwitchedFabricsArePricedByTheirLinkRateInClosedForm)
{
    // 64 GPUs in domains of 8, radix 16: rails of 8 GPUs, two to a switch
    // (rail-only: N / k = 4 switches, 2 N = 128 transceivers); the Clos of
    // 64 hosts needs t = 2 tiers (16 < 64 <= 16 x 8): (2t - 1) N / k = 12
    // switches and 2 t N = 256 transceivers; a cable has two transceivers.
    struct Fabric
    {
        std::string name;
        FabricTopology (*build)(const ClusterParams&);
        uint64_t switches;
        uint64_t transceivers;
    };

    const std::vector<Fabric> fabrics{{"rail-only", &BuildRailOnly, 4, 128},
                                      {"rail-optimized", &BuildRailOptimized, 12, 256},
                                      {"fat-tree", &BuildFatTree, 12, 256}};
    auto model = CreateObject<FabricCostModel>();
    // distinct prices, so that each term shows in the sum
    model->SetAttribute("TransceiverPrice", DoubleValue(7));
    model->SetAttribute("Transceiver800gPrice", DoubleValue(10));
    model->SetAttribute("SwitchPortPrice", DoubleValue(100));
    model->SetAttribute("SwitchPort800gPrice", DoubleValue(130));
    model->SetAttribute("CablePrice", DoubleValue(1));
    model->SetAttribute("Cable800gPrice", DoubleValue(3));
    model->SetAttribute("TransceiverPower", DoubleValue(2));
    model->SetAttribute("Transceiver800gPower", DoubleValue(3));
    model->SetAttribute("SwitchPortPower", DoubleValue(20));
    model->SetAttribute("SwitchPort800gPower", DoubleValue(31));

    struct Rate
    {
        std::string nic;
        double port;        // $ per switch port
        double transceiver; // $ per link end
        double cable;       // $ per link
        double portPower;
        double transceiverPower;
    };

    // up to 400G the 400G prices; 800G: one 800G transceiver (10 < 2 x 7) and
    // an 800G port; 1600G: two 800G lanes (20 < 4 x 7), two 800G ports' worth
    const std::vector<Rate> rates{{"200Gbps", 100, 7, 1, 20, 2},
                                  {"400Gbps", 100, 7, 1, 20, 2},
                                  {"800Gbps", 130, 10, 3, 31, 3},
                                  {"1600Gbps", 260, 20, 6, 62, 6}};
    for (const Rate& r : rates)
    {
        ClusterParams p;
        p.gpus = 64;
        p.radix = 16;
        p.platform = HbDomainPreset::Custom(8, DataRate("3600Gbps"), DataRate(r.nic));
        for (const Fabric& f : fabrics)
        {
            SCOPED_TRACE(r.nic + " " + f.name);
            const FabricCounts c = CountEquipment(f.build(p), 16);
            ASSERT_EQ(c.switches, f.switches);
            ASSERT_EQ(c.transceivers, f.transceivers);
            EXPECT_EQ(c.switchPorts, f.switches * 16);
            const double links = f.transceivers / 2.0;
            EXPECT_DOUBLE_EQ(model->Cost(c),
                             f.switches * 16 * r.port + f.transceivers * r.transceiver +
                                 links * r.cable);
            EXPECT_DOUBLE_EQ(model->Power(c),
                             f.switches * 16 * r.portPower + f.transceivers * r.transceiverPower);
        }
    }
    // the presets: the papers' 400G prices, 800G at x 668 / 374 (dollars)
    for (const auto& [preset, transceiver, port] :
         std::vector<std::tuple<std::string, double, double>>{{"hotnets2023", 374, 748},
                                                              {"railonly2024", 199, 694}})
    {
        SCOPED_TRACE(preset);
        model->SetPricePreset(preset);
        EXPECT_DOUBLE_EQ(model->TransceiverPriceAt(400'000'000'000), transceiver);
        EXPECT_DOUBLE_EQ(model->SwitchPortPriceAt(400'000'000'000), port);
        EXPECT_DOUBLE_EQ(model->TransceiverPriceAt(800'000'000'000),
                         std::round(transceiver * 668 / 374));
        EXPECT_DOUBLE_EQ(model->SwitchPortPriceAt(800'000'000'000), std::round(port * 668 / 374));
    }
    // the defaults are hotnets2023's
    auto defaults = CreateObject<FabricCostModel>();
    EXPECT_DOUBLE_EQ(defaults->SwitchPortPriceAt(800'000'000'000), 1336);
    EXPECT_DOUBLE_EQ(defaults->TransceiverPriceAt(800'000'000'000), 668);
    EXPECT_DOUBLE_EQ(defaults->CablePriceAt(800'000'000'000), 0);
}

TEST(TopologyCost, BadDirectConnectPricesAndPatchingAreRefusedByName)
{
    auto model = CreateObject<FabricCostModel>();
    for (const std::string name : {"FibrePrice",
                                   "PatchPanelPortPrice",
                                   "OcsPortPrice",
                                   "Transceiver800gPrice",
                                   "Transceiver800gPower",
                                   "SwitchPort800gPrice",
                                   "SwitchPort800gPower",
                                   "CablePrice",
                                   "Cable800gPrice"})
    {
        SCOPED_TRACE(name);
        EXPECT_FALSE(model->SetAttributeFailSafe(name, DoubleValue(-1)));
        EXPECT_TRUE(model->SetAttributeFailSafe(name, DoubleValue(0)));
        EXPECT_DEATH(model->SetAttribute(name, DoubleValue(-1)), name);
    }
    EXPECT_FALSE(model->SetAttributeFailSafe("DirectConnectPatching", StringValue("robot")));
    EXPECT_DEATH(model->SetAttribute("DirectConnectPatching", StringValue("robot")),
                 "DirectConnectPatching");
    EXPECT_EQ(model->PatchingName(), "patch-panel");
}

std::vector<std::pair<std::string, FabricTopology>>
SmallTopologies()
{
    ClusterParams p;
    p.gpus = 64;
    p.platform = HbDomainPreset::Get("dgx-a100");
    p.radix = 8;
    ClusterParams tiny = p;
    tiny.radix = 4; // rails of 8 need a two-tier Clos each
    ClusterParams over = p;
    over.gpus = 48;
    over.radix = 8;
    over.oversubscription = 3;
    return {{"fat-tree", BuildFatTree(p)},
            {"rail-optimized", BuildRailOptimized(p)},
            {"rail-only", BuildRailOnly(p)},
            {"rail-only two-tier rails", BuildRailOnly(tiny)},
            {"rail-optimized 3:1", BuildRailOptimized(over)}};
}

TEST(TopologyRouting, EveryGpuPairIsReachableInEveryBuilder)
{
    for (const auto& [name, topo] : SmallTopologies())
    {
        const auto tables = ComputeRoutingTables(topo);
        const RoutingReport r = CheckRouting(topo, tables);
        SCOPED_TRACE(name);
        EXPECT_EQ(r.pairs, static_cast<uint64_t>(topo.GetNGpus()) * (topo.GetNGpus() - 1));
        EXPECT_EQ(r.unreachable, 0u) << r.firstFailure;
        EXPECT_GE(r.maxHops, 2u);
    }
}

TEST(TopologyRouting, TablesInRunsAnswerAsAGroupPerDestinationWould)
{
    // random routes with long runs, gaps (no route) and replaced last
    // entries, read back against a plain array; a table with too many runs
    // turns dense and answers alike
    std::mt19937 rng(7);
    const std::vector<std::vector<uint16_t>> groups{{}, {0}, {1, 2}, {3}, {4, 5, 6}};
    for (uint32_t n : {1u, 16u, 300u, 4096u})
    {
        for (uint32_t runLength : {1u, 8u, 200u})
        {
            FabricRoutingTable t(n);
            std::vector<uint32_t> expected(n, 0);
            uint32_t g = 1;
            for (uint32_t dst = 0; dst < n; ++dst)
            {
                if (rng() % runLength == 0)
                {
                    g = rng() % groups.size();
                }
                if (rng() % 5 == 0)
                {
                    continue; // a gap: no route
                }
                t.Append(dst, groups[g]);
                expected[dst] = g;
                if (rng() % 7 == 0)
                {
                    const uint32_t other = rng() % groups.size();
                    t.Replace(dst, groups[other]);
                    expected[dst] = other;
                }
            }
            SCOPED_TRACE(fmt::format("{} ranks, runs of {}", n, runLength));
            for (uint32_t dst = 0; dst < n + 2; ++dst)
            {
                const auto& want = dst < n ? groups[expected[dst]] : groups[0];
                ASSERT_EQ(t.GetNPorts(dst), want.size()) << dst;
                for (uint32_t i = 0; i < want.size(); ++i)
                {
                    ASSERT_EQ(t.GetPort(dst, i), want[i]) << dst;
                }
            }
            // 1 in 5 skipped and 1 in 7 replaced: runs of 1 are many
            if (runLength == 1 && n >= 300)
            {
                EXPECT_TRUE(t.IsDense());
            }
        }
    }
}

TEST(TopologyRouting, FatTreeTablesAreRunsAndRailSwitchTablesDense)
{
    // a fat-tree numbers its ranks along the tree: every table is a few
    // runs (a GPU: 3, a leaf: its hosts one by one and the rest up); a rail
    // switch reaches every 8th rank, so with 64 hosts its table has over
    // 128 runs and is dense
    ClusterParams p;
    p.gpus = 1024;
    p.radix = 16;
    const FabricTopology tree = BuildFatTree(p);
    const auto tables = ComputeRoutingTables(tree);
    for (uint32_t v = 0; v < tree.GetNVertices(); ++v)
    {
        EXPECT_FALSE(tables[v].IsDense()) << "vertex " << v;
        EXPECT_EQ(tables[v].GetNRanks(), 1024u);
    }
    p.platform = HbDomainPreset::Get("dgx-a100");
    p.radix = 128;
    const FabricTopology rails = BuildRailOptimized(p);
    const auto railTables = ComputeRoutingTables(rails);
    uint32_t dense = 0;
    uint32_t railSwitches = 0;
    for (uint32_t v = 0; v < rails.GetNVertices(); ++v)
    {
        const TopoNode& n = rails.Node(v);
        dense += railTables[v].IsDense() ? 1 : 0;
        if (n.kind == TopoNodeKind::Switch && n.role == "rail")
        {
            ++railSwitches;
            EXPECT_TRUE(railTables[v].IsDense()) << "rail switch " << v;
        }
        if (n.kind == TopoNodeKind::Gpu)
        {
            EXPECT_FALSE(railTables[v].IsDense()) << "GPU " << n.rank;
        }
    }
    EXPECT_GT(railSwitches, 0u);
    EXPECT_LT(dense, rails.GetNVertices() / 4);
}

TEST(TopologyRouting, RailOnlyCrossRailPathsUseNvlinkAndOnlyTheDestinationRail)
{
    ClusterParams p;
    p.gpus = 64;
    p.platform = HbDomainPreset::Get("dgx-a100");
    p.radix = 4;
    const FabricTopology topo = BuildRailOnly(p);
    const auto tables = ComputeRoutingTables(topo);
    const auto& g = topo.GetGraph();
    uint64_t crossRail = 0;
    for (uint32_t s = 0; s < p.gpus; ++s)
    {
        for (uint32_t d = 0; d < p.gpus; ++d)
        {
            const TopoNode& sn = topo.Node(topo.GpuVertex(s));
            const TopoNode& dn = topo.Node(topo.GpuVertex(d));
            if (s == d || sn.local == dn.local || sn.domain == dn.domain)
            {
                continue;
            }
            ++crossRail;
            const auto path = TracePath(topo, tables, s, d, static_cast<uint16_t>(s * 31 + d));
            ASSERT_FALSE(path.empty());
            // first hop NVLink inside the sender's domain, relay on dst's rail
            ASSERT_GE(path.size(), 5u);
            EXPECT_EQ(topo.Node(path[1]).kind, TopoNodeKind::NvSwitch);
            const TopoNode& relay = topo.Node(path[2]);
            EXPECT_EQ(relay.kind, TopoNodeKind::Gpu);
            EXPECT_EQ(relay.domain, sn.domain);
            EXPECT_EQ(relay.local, dn.local);
            // every network switch on the path serves only the destination's rail
            for (size_t i = 3; i + 1 < path.size(); ++i)
            {
                ASSERT_EQ(topo.Node(path[i]).kind, TopoNodeKind::Switch);
                for (auto [it, end] = boost::out_edges(path[i], g); it != end; ++it)
                {
                    const TopoNode& peer = topo.Node(boost::target(*it, g));
                    if (peer.kind == TopoNodeKind::Gpu)
                    {
                        EXPECT_EQ(peer.local, dn.local);
                    }
                }
            }
        }
    }
    EXPECT_EQ(crossRail, 64u * 49u); // other domain and other rail: 7 x 7 per sender
}

std::pair<std::vector<uint32_t>, std::vector<uint32_t>>
Halves(uint32_t n)
{
    std::vector<uint32_t> a(n / 2);
    std::vector<uint32_t> b(n / 2);
    std::iota(a.begin(), a.end(), 0);
    std::iota(b.begin(), b.end(), n / 2);
    return {a, b};
}

TEST(TopologyRouting, FatTreeBisectionIsFullOrDividedByOversubscription)
{
    ClusterParams p;
    p.gpus = 64;
    p.platform = HbDomainPreset::Get("dgx-a100");
    p.radix = 8;
    const double nic = p.platform.nicRate.GetBitRate();
    for (const auto& topo : {BuildFatTree(p), BuildRailOptimized(p)})
    {
        auto [a, b] = Halves(p.gpus);
        // one direction carries N/2 x rate: bisection N x rate both ways
        EXPECT_NEAR(2 * MaxFlowBps(topo, a, b), p.gpus * nic, 1.0) << topo.GetName();
    }
    ClusterParams over = p;
    over.gpus = 48;
    over.oversubscription = 3;
    const FabricTopology topo = BuildRailOptimized(over);
    // The cut that separates leaves: rails 0-3 against rails 4-7 (a split by
    // rank would keep each rail's traffic inside its own leaf).
    std::vector<uint32_t> lowRails;
    std::vector<uint32_t> highRails;
    for (uint32_t r = 0; r < over.gpus; ++r)
    {
        (r % 8 < 4 ? lowRails : highRails).push_back(r);
    }
    EXPECT_NEAR(2 * MaxFlowBps(topo, lowRails, highRails), over.gpus * nic / 3, 1.0);
    EXPECT_NEAR(2 * MaxFlowBps(BuildRailOptimized(p), lowRails, highRails), over.gpus * nic, 1.0);
}

TEST(TopologyFabric, CrossRailMessageTakesTheTwoHopStoreAndForwardTime)
{
    ClusterParams p;
    p.gpus = 16;
    p.platform = HbDomainPreset::Get("dgx-h100");
    p.radix = 64;
    p.linkDelayNs = 500;
    Ptr<Fabric> fabric = FabricHelper().Install(BuildRailOnly(p));
    Time done;
    const uint64_t bytes = 4'000'000;
    fabric->GetTransport()->Send(1, 13, bytes, MakeBoundCallback(&RecordNow, &done));
    Simulator::Run();
    // NVLink (striped over 4 planes of 900 Gb/s) into the NVSwitch and out to
    // the relay GPU 5, then NIC -> rail switch -> GPU 13 at 400 Gb/s. The NIC
    // paces the message; each hop adds its delay and one packet's
    // serialization at its rate.
    const double nic = 400e9;
    const double plane = 900e9;
    const double packet = 4122 * 8.0;
    const uint64_t packets = (bytes + 4095) / 4096;
    const double wire = (bytes + packets * 26.0) * 8;
    const double expected =
        2 * (packet / plane + 100e-9) + (wire - packet) / nic + 2 * (packet / nic + 500e-9);
    EXPECT_NEAR(done.GetSeconds(), expected, packet / nic);
    EXPECT_GT(fabric->GetGpu(5)->GetForwardedPackets(), 0u);
    EXPECT_EQ(fabric->GetTotalDrops(), 0u);
    Simulator::Destroy();
}

TEST(TopologyBuilders, BadParametersAreRejectedByName)
{
    ClusterParams p;
    p.gpus = 64;
    p.platform = HbDomainPreset::Get("dgx-a100");
    p.radix = 7;
    const auto expectNamed = [](const std::function<void()>& f, const std::string& name) {
        try
        {
            f();
            ADD_FAILURE() << "accepted bad " << name;
        }
        catch (const FabricConfigError& e)
        {
            EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
        }
    };
    expectNamed([&] { BuildFatTree(p); }, "radix");
    p.radix = 8;
    p.gpus = 60;
    expectNamed([&] { BuildRailOnly(p); }, "gpus");
    p.gpus = 0;
    expectNamed([&] { BuildRailOptimized(p); }, "gpus");
    // refused before building, not by exhausting memory
    p.gpus = FabricTopology::kMaxGpus + 8;
    expectNamed([&] { BuildRailOptimized(p); },
                "invalid gpus: got '4194312', allowed: at most 4194304");
    FabricTopology big;
    expectNamed([&] { AddHbDomains(big, p.gpus, p.platform); }, "at most 4194304");
    EXPECT_EQ(big.GetNGpus(), 0u);
    p.gpus = 64;
    p.oversubscription = 0.5;
    expectNamed([&] { BuildRailOptimized(p); }, "oversubscription");
    p.oversubscription = 2.5; // radix 8 does not split 2.5:1
    expectNamed([&] { BuildRailOptimized(p); }, "oversubscription");
    p.oversubscription = 1;
    p.radix = 2; // 8 domains per rail do not fit radix-2 switches
    expectNamed([&] { BuildRailOnly(p); }, "radix");
    // a single switch has no uplinks to oversubscribe; rail-only has no spine
    p.radix = 64;
    p.oversubscription = 3;
    expectNamed([&] { BuildFatTree(p); }, "no uplinks to oversubscribe");
    p.radix = 8;
    expectNamed([&] { BuildRailOnly(p); }, "1 for rail-only");
    // the ratios a radix allows are listed (radix 6: 1, 2 or 5 host ports per uplink)
    p.radix = 6;
    p.gpus = 64;
    expectNamed([&] { BuildFatTree(p); }, "radix 6 into whole host ports and uplinks: 1, 2, 5");
    // a Clos size error names the GPU count the user gave, and the rail
    // size it came from: 72 DGX GPUs are rails of 9, which radix-4 Clos
    // networks cannot hold evenly
    p.oversubscription = 1;
    p.radix = 4;
    p.gpus = 72;
    expectNamed([&] { BuildRailOnly(p); }, "invalid gpus: got '72'");
    expectNamed([&] { BuildRailOnly(p); }, "rails (gpus / K) of 9 hosts");
    FabricTopology t;
    t.AddGpu(-1, 0);
    expectNamed([&] { t.AddCable(0, 0, 1, 0, TopoLinkKind::Nic); }, "link endpoints");
    t.AddGpu(-1, 0);
    expectNamed([&] { t.AddCable(0, 1, 0, 0, TopoLinkKind::Nic); }, "link rate");
}

} // namespace

namespace
{

TEST(TopologyDirectConnect, HypercubeRoutesFollowGraphDistancesAndTimesAreClosedForm)
{
    const DirectConnectGraph cube = MakeHypercube(3); // 8 hosts, d = 3
    ClusterParams p;
    p.platform = HbDomainPreset::Custom(1, DataRate("100Gbps"), DataRate("100Gbps"));
    p.linkDelayNs = 200;
    const FabricTopology topo = BuildDirectConnect(cube, 300'000'000'000ULL, p);
    EXPECT_EQ(topo.GetNGpus(), 8u);
    EXPECT_EQ(topo.Cables().size(), cube.NumArcs());
    const auto tables = ComputeRoutingTables(topo);
    for (uint32_t s = 0; s < 8; ++s)
    {
        const auto dist = cube.BfsDistances(s);
        for (uint32_t d = 0; d < 8; ++d)
        {
            if (s != d)
            {
                EXPECT_EQ(TracePath(topo, tables, s, d, 0).size() - 1, dist[d]);
            }
        }
    }
    const FabricCounts counts = CountEquipment(topo, 1);
    EXPECT_EQ(counts.switches, 0u);
    EXPECT_EQ(counts.directLinks, 24u);

    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    Time done;
    const uint64_t bytes = 1'000'000;
    fabric->GetTransport()->Send(0, 7, bytes, MakeBoundCallback(&RecordNow, &done));
    Simulator::Run();
    // 3 hops of 100 Gb/s: wire bytes once, two more packet times, 3 delays
    const uint64_t packets = (bytes + 4095) / 4096;
    const double expected = ((bytes + packets * 26.0) + 2 * 4122.0) * 8 / 100e9 + 3 * 200e-9;
    EXPECT_NEAR(done.GetSeconds(), expected, 1e-9);
    Simulator::Destroy();
}

TEST(TopologyDirectConnect, HbDomainNodesReachEveryGpuAndBadGraphsAreRejected)
{
    ClusterParams p;
    p.platform = HbDomainPreset::Get("dgx-h100");
    const FabricTopology topo = BuildDirectConnect(MakeBiRing(4), 3'200'000'000'000ULL, p);
    EXPECT_EQ(topo.GetNGpus(), 32u);
    const RoutingReport r = CheckRouting(topo, ComputeRoutingTables(topo));
    EXPECT_EQ(r.unreachable, 0u) << r.firstFailure;

    DirectConnectGraph oneWay(2, "one-way");
    oneWay.AddArc(0, 1);
    oneWay.AddArc(1, 1);
    EXPECT_THROW(BuildDirectConnect(oneWay, 1'000'000'000, p), FabricConfigError);
    EXPECT_THROW(BuildDirectConnect(MakeRing(4), 0, p), FabricConfigError);
}

} // namespace

namespace
{

TEST(TopologyDirectConnect, SourceRoutesOverrideShortestPaths)
{
    // Hypercube(3): 0 -> 7 along 0 -> 1 -> 3 -> 7, then along a 5-hop detour.
    ClusterParams p;
    p.platform = HbDomainPreset::Custom(1, DataRate("100Gbps"), DataRate("100Gbps"));
    p.linkDelayNs = 200;
    const FabricTopology topo = BuildDirectConnect(MakeHypercube(3), 300'000'000'000ULL, p);
    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    const auto v = [&](uint32_t rank) { return topo.GpuVertex(rank); };
    Time done;
    const uint64_t bytes = 1'000'000;
    fabric->SendAlongPath({v(0), v(1), v(3), v(7)}, bytes, MakeBoundCallback(&RecordNow, &done));
    Simulator::Run();
    const uint64_t packets = (bytes + 4095) / 4096;
    const double expected = ((bytes + packets * 26.0) + 2 * 4122.0) * 8 / 100e9 + 3 * 200e-9;
    EXPECT_NEAR(done.GetSeconds(), expected, 1e-9);
    EXPECT_EQ(fabric->GetGpu(1)->GetForwardedPackets(), packets);
    EXPECT_EQ(fabric->GetGpu(3)->GetForwardedPackets(), packets);
    for (uint32_t r : {2, 4, 5, 6})
    {
        EXPECT_EQ(fabric->GetGpu(r)->GetForwardedPackets(), 0u) << r;
    }
    // a detour 0 -> 2 -> 6 -> 4 -> 5 -> 7 takes 5 hops
    fabric->SendAlongPath({v(0), v(2), v(6), v(4), v(5), v(7)}, bytes, Transport::DoneCallback());
    Simulator::Run();
    EXPECT_EQ(fabric->GetGpu(4)->GetForwardedPackets(), packets);
    EXPECT_EQ(fabric->GetTransport()->GetTotals().bytesDelivered, 2 * bytes);
    EXPECT_EQ(fabric->GetTotalDrops(), 0u);
    // the same path gets the same id; a path over a missing link is rejected
    EXPECT_EQ(fabric->RegisterRoute({v(0), v(1), v(3), v(7)}), 0u);
    EXPECT_THROW(fabric->RegisterRoute({v(0), v(3)}), FabricConfigError);
    Simulator::Destroy();
}

} // namespace
