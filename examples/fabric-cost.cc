/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// examples/fabric-cost: switches, transceivers, cost and power of a
// rail-optimized fat-tree and of rail-only for given GPU counts and switch
// radixes, counted on the built topologies. The default run reproduces the
// published count table of the rail-only papers (HB domain K = 256) and
// their cost reductions; the published figures are printed beside ours.
// A second table gives the "trimmed Clos": the rail-optimized fat-tree
// without the cables that only cross-rail traffic uses (RailTrimmableCables).
#include "program-support.h"

#include "ns3/core-module.h"
#include "ns3/gpu-fabric-module.h"
#include "ns3/program-flags.h"

#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace ns3;

namespace
{

/// Published (#SW fat-tree, #SW rail-only, #TR fat-tree, #TR rail-only), K = 256.
const std::map<std::pair<uint32_t, uint32_t>, std::array<uint64_t, 4>> kPublished = {
    {{32768, 32}, {7168, 3072, 262144, 131072}},
    {{32768, 64}, {2560, 1536, 196608, 131072}},
    {{32768, 128}, {1280, 256, 196608, 65536}},
    {{32768, 256}, {384, 128, 131072, 65536}},
    {{65536, 64}, {5120, 3072, 393216, 262144}},
    {{65536, 128}, {2560, 1536, 393216, 262144}},
    {{65536, 256}, {1280, 256, 393216, 131072}},
};

nlohmann::json
ToJson(const FabricCounts& c, double cost, double power)
{
    nlohmann::json tiers = nlohmann::json::object();
    for (const auto& [tier, n] : c.switchesByTier)
    {
        tiers[std::to_string(tier)] = n;
    }
    return {{"switches", c.switches},
            {"switches_by_tier", tiers},
            {"switch_ports", c.switchPorts},
            {"transceivers", c.transceivers},
            {"links", c.links},
            {"cables", c.cables},
            {"nics", c.nics},
            {"cost_usd", cost},
            {"power_w", power}};
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string gpus = "32768,65536";
    std::string radix = "32,64,128,256";
    uint32_t hbSize = 256;
    std::string nicRate = "400Gbps";
    std::string prices = "hotnets2023";
    std::string json;
    std::string csv;
    ProgramFlags cmd("fabric-cost", __FILE__);
    cmd.Usage("Network cost and power of a rail-optimized fat-tree and of rail-only, counted on "
              "the built topologies.");
    cmd.AddValue("gpus", "comma-separated GPU counts", gpus);
    cmd.AddValue("radix", "comma-separated switch radixes", radix);
    cmd.AddValue("hb-size", "GPUs per HB domain (K)", hbSize);
    cmd.AddValue("nic-rate",
                 "NIC rate per GPU, the rate of every network link (above 400 Gb/s: the 800G "
                 "port, transceiver and cable prices)",
                 nicRate);
    cmd.AddValue("prices", "price set: hotnets2023 | railonly2024", prices);
    cmd.AddValue("json", "write results as JSON to this path", json);
    cmd.AddValue("csv", "write the table as CSV to this path", csv);
    cmd.UseFabricScheduler();
    cmd.Parse(argc, argv);

    try
    {
        const auto gpuList = ParseIntegerList("--gpus", gpus);
        const auto radixList = ParseIntegerList("--radix", radix);
        FabricRequire(hbSize >= 1, "--hb-size", hbSize, "an integer >= 1");
        const DataRate nic = ParseRate("--nic-rate", nicRate);
        auto model = CreateObject<FabricCostModel>();
        model->SetPricePreset(prices);

        nlohmann::json rows = nlohmann::json::array();
        std::string table;
        table += fmt::format("{:>7} {:>5} | {:>7} {:>7} {:>9} {:>9} | {:>7} {:>7} {:>9} {:>9} | "
                             "{:>8} {:>8}  {}\n",
                             "gpus",
                             "radix",
                             "FT #SW",
                             "RO #SW",
                             "FT #TR",
                             "RO #TR",
                             "FT $M",
                             "RO $M",
                             "FT kW",
                             "RO kW",
                             "cost -%",
                             "power -%",
                             "published");
        std::string trimmed = fmt::format("{:>7} {:>5} | {:>9} {:>9} {:>9} {:>7} {:>9} | {:>8}\n",
                                          "gpus",
                                          "radix",
                                          "FT links",
                                          "removed",
                                          "share",
                                          "TC #SW",
                                          "TC #TR",
                                          "cost -%");
        std::string csvText =
            "gpus,radix,fat_tree_switches,rail_only_switches,fat_tree_transceivers,"
            "rail_only_transceivers,fat_tree_cost_usd,rail_only_cost_usd,"
            "cost_reduction_pct,power_reduction_pct\n";
        for (uint32_t n : gpuList)
        {
            for (uint32_t k : radixList)
            {
                ClusterParams p;
                p.gpus = n;
                p.radix = k;
                p.platform = HbDomainPreset::Custom(hbSize, DataRate("3600Gbps"), nic);
                const FabricTopology railOptimized = BuildRailOptimized(p);
                const FabricCounts ft = CountEquipment(railOptimized, k);
                const FabricCounts ro = CountEquipment(BuildRailOnly(p), k);
                const FabricCounts tc = CountTrimmedEquipment(railOptimized, k);
                const double tcCost = model->Cost(tc);
                const double ftCost = model->Cost(ft);
                const double roCost = model->Cost(ro);
                const double ftPower = model->Power(ft);
                const double roPower = model->Power(ro);
                const double costCut = 100.0 * (1.0 - roCost / ftCost);
                const double powerCut = 100.0 * (1.0 - roPower / ftPower);
                std::string published = "-";
                nlohmann::json row = {
                    {"gpus", n},
                    {"radix", k},
                    {"fat_tree", ToJson(ft, ftCost, ftPower)},
                    {"rail_only", ToJson(ro, roCost, roPower)},
                    {"cost_reduction_pct", costCut},
                    {"power_reduction_pct", powerCut},
                    {"trimmed_clos", ToJson(tc, tcCost, model->Power(tc))},
                    {"trimmed_links_removed", ft.links - tc.links},
                    {"trimmed_cost_reduction_pct", 100.0 * (1.0 - tcCost / ftCost)}};
                if (auto it = kPublished.find({n, k}); it != kPublished.end() && hbSize == 256)
                {
                    const auto& pub = it->second;
                    const bool same = pub[0] == ft.switches && pub[1] == ro.switches &&
                                      pub[2] == ft.transceivers && pub[3] == ro.transceivers;
                    published = fmt::format("{} {} {} {} ({})",
                                            pub[0],
                                            pub[1],
                                            pub[2],
                                            pub[3],
                                            same ? "match" : "DIFFER");
                    row["published"] = {{"fat_tree_switches", pub[0]},
                                        {"rail_only_switches", pub[1]},
                                        {"fat_tree_transceivers", pub[2]},
                                        {"rail_only_transceivers", pub[3]},
                                        {"match", same}};
                }
                table += fmt::format(
                    "{:>7} {:>5} | {:>7} {:>7} {:>9} {:>9} | {:>7.1f} {:>7.1f} {:>9.1f} {:>9.1f} "
                    "| {:>8.1f} {:>8.1f}  {}\n",
                    n,
                    k,
                    ft.switches,
                    ro.switches,
                    ft.transceivers,
                    ro.transceivers,
                    ftCost / 1e6,
                    roCost / 1e6,
                    ftPower / 1e3,
                    roPower / 1e3,
                    costCut,
                    powerCut,
                    published);
                csvText += fmt::format("{},{},{},{},{},{},{:.0f},{:.0f},{:.3f},{:.3f}\n",
                                       n,
                                       k,
                                       ft.switches,
                                       ro.switches,
                                       ft.transceivers,
                                       ro.transceivers,
                                       ftCost,
                                       roCost,
                                       costCut,
                                       powerCut);
                trimmed += fmt::format("{:>7} {:>5} | {:>9} {:>9} {:>9} {:>7} {:>9} | {:>8.1f}\n",
                                       n,
                                       k,
                                       ft.links,
                                       ft.links - tc.links,
                                       fmt::format("{:.4f}",
                                                   static_cast<double>(ft.links - tc.links) /
                                                       static_cast<double>(ft.links)),
                                       tc.switches,
                                       tc.transceivers,
                                       100.0 * (1.0 - tcCost / ftCost));
                rows.push_back(row);
            }
        }
        fmt::print("Network cost and power, rail-optimized fat-tree (FT) vs rail-only (RO), "
                   "K = {}, NIC {} Gb/s, prices {}\n{}",
                   hbSize,
                   nic.GetBitRate() / 1e9,
                   prices,
                   table);
        fmt::print("published: cost falls 37%-75% (hotnets2023 prices), 38%-77% (railonly2024)\n");
        fmt::print("\nTrimmed Clos (TC): the fat-tree without the links only cross-rail traffic "
                   "uses\n{}published: a third of the links removable (HotNets 2023)\n",
                   trimmed);
        if (!json.empty())
        {
            const nlohmann::json j = {{"hb_size", hbSize},
                                      {"nic_rate_bps", nic.GetBitRate()},
                                      {"prices", prices},
                                      {"rows", rows}};
            WriteTextFile("--json", json, j.dump(2) + "\n");
        }
        if (!csv.empty())
        {
            WriteTextFile("--csv", csv, csvText);
        }
    }
    catch (const FabricConfigError& e)
    {
        fmt::print(stderr, "fabric-cost: {}\n", e.what());
        return 2;
    }
    return 0;
}
