/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// bench/flow-vs-packet: the flow level's agreement with the packet level over
// a grid of collectives inside HB domains and across rails (presets
// dgx-h100 and dgx-a100 with 8 and 16 GPUs, gb200-nvl72 with 72; ring, tree,
// hierarchical, direct; chunks 0, 1000, 4096, 12340 and 65536 bytes; sizes
// doubling from 4 KiB). Each size runs alone on both backends
// (RunCollectiveAlone, as collective-bench does). Prints the distribution of
// the gap |flow - packet| / packet, the rows above --show-above, and how long
// each backend took; --json writes every row. Figures are printed, never
// asserted.
#include "program-support.h"

#include "ns3/core-module.h"
#include "ns3/gpu-fabric-module.h"
#include "ns3/program-flags.h"
#include "ns3/topology-helper.h"
#include "ns3/transport-helper.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

using namespace ns3;

namespace
{

/// One collective of the grid.
struct GridCase
{
    std::string preset;
    uint32_t gpus;
    std::string collective;
    std::string algorithm;
    uint64_t chunk;
};

/// One size of a case on both backends.
struct Row
{
    GridCase c;
    uint64_t bytes;
    double packetS;
    double flowS;

    double Gap() const
    {
        return (flowS - packetS) / packetS;
    }
};

/// \return the q-quantile (0..1) of sorted values, nearest rank
double
Quantile(const std::vector<double>& sorted, double q)
{
    const auto i = static_cast<size_t>(std::ceil(q * sorted.size()));
    return sorted[std::min(sorted.size() - 1, i == 0 ? 0 : i - 1)];
}

} // namespace

int
main(int argc, char* argv[])
{
    bool quick = false;
    uint64_t maxBytes = 4 << 20;
    double showAbove = 5;
    std::string json;
    ProgramFlags cmd("flow-vs-packet", __FILE__);
    cmd.Usage("Flow level against packet level over a grid of collectives on HB domains; prints "
              "the distribution of their gap.");
    cmd.AddValue("quick",
                 "8 GPUs of dgx-h100 and dgx-a100 only, up to 256 KiB (a --max-bytes given wins)",
                 quick);
    cmd.AddValue("max-bytes", "largest size (sizes double from 4 KiB)", maxBytes);
    cmd.AddValue("show-above", "list the rows whose gap exceeds this many percent", showAbove);
    cmd.AddValue("json", "write every row as JSON to this path", json);
    cmd.UseFabricScheduler();
    cmd.Parse(argc, argv);
    try
    {
        FabricRequire(maxBytes >= 4096 && maxBytes <= (uint64_t{1} << 30),
                      "--max-bytes",
                      maxBytes,
                      "4096 to 2^30");
        FabricRequire(showAbove >= 0, "--show-above", showAbove, "a percentage >= 0");
        // --quick changes the default only: a --max-bytes given still applies
        if (quick && !cmd.WasGiven("max-bytes"))
        {
            maxBytes = 256 << 10;
        }
        std::vector<std::pair<std::string, uint32_t>> platforms = {{"dgx-h100", 8},
                                                                   {"dgx-a100", 8}};
        if (!quick)
        {
            platforms.insert(platforms.end(),
                             {{"dgx-h100", 16}, {"dgx-a100", 16}, {"gb200-nvl72", 72}});
        }
        const std::vector<std::pair<std::string, std::string>> collectives = {
            {"allreduce", "ring"},
            {"allreduce", "tree"},
            {"allreduce", "hierarchical"},
            {"allgather", "ring"},
            {"reducescatter", "ring"},
            {"alltoall", "direct"},
            {"sendrecv", "direct"},
            {"broadcast", "ring"},
            {"broadcast", "tree"}};
        std::vector<Row> rows;
        double packetWall = 0;
        double flowWall = 0;
        for (const auto& [preset, gpus] : platforms)
        {
            ClusterParams p;
            p.platform = TopologyHelper::GetPlatform(preset);
            p.gpus = gpus;
            p.radix = 64;
            const FabricTopology topo = BuildRailOnly(p);
            for (const auto& [collective, algorithm] : collectives)
            {
                if (algorithm == "hierarchical" && gpus <= p.platform.gpusPerDomain)
                {
                    continue; // one domain: nothing to be hierarchical about
                }
                // whole 4-byte elements per rank where the size is per rank
                const uint64_t unit = collective == "allgather" || collective == "reducescatter" ||
                                              collective == "alltoall"
                                          ? 4ULL * gpus
                                          : 4;
                for (const uint64_t chunk : {0, 1000, 4096, 12340, 65536})
                {
                    for (uint64_t size = 4096; size <= maxBytes; size *= 2)
                    {
                        const uint64_t bytes = (size + unit - 1) / unit * unit;
                        const GridCase c{preset, gpus, collective, algorithm, chunk};
                        double t0 = WallSeconds();
                        const CollectiveResult packet =
                            TransportHelper("packet", "--backend")
                                .RunCollectiveAlone(topo, chunk, 1, collective, algorithm, bytes);
                        packetWall += WallSeconds() - t0;
                        t0 = WallSeconds();
                        const CollectiveResult flow =
                            TransportHelper("flow", "--backend")
                                .RunCollectiveAlone(topo, chunk, 1, collective, algorithm, bytes);
                        flowWall += WallSeconds() - t0;
                        FabricRequire(packet.complete && flow.complete,
                                      "collective",
                                      fmt::format("{} {} of {} bytes on {} x {}",
                                                  collective,
                                                  algorithm,
                                                  bytes,
                                                  gpus,
                                                  preset),
                                      "one that completes on both backends");
                        rows.push_back({c, bytes, packet.timeS, flow.timeS});
                    }
                }
            }
        }
        std::vector<double> gaps;
        for (const Row& r : rows)
        {
            gaps.push_back(std::abs(r.Gap()));
        }
        std::sort(gaps.begin(), gaps.end());
        const auto above = [&gaps](double percent) {
            return std::count_if(gaps.begin(), gaps.end(), [percent](double g) {
                return g > percent / 100;
            });
        };
        fmt::print("flow-vs-packet: {} rows ({} platforms, 9 collectives, 5 chunk sizes, 4 KiB to "
                   "{} bytes)\n",
                   rows.size(),
                   platforms.size(),
                   maxBytes);
        fmt::print("  |flow - packet| / packet: median {:.2f} %, 90th percentile {:.2f} %, "
                   "max {:.2f} %\n",
                   100 * Quantile(gaps, 0.5),
                   100 * Quantile(gaps, 0.9),
                   100 * gaps.back());
        fmt::print("  rows above 1 %: {}, above 5 %: {}, above 10 %: {}\n",
                   above(1),
                   above(5),
                   above(10));
        fmt::print("  wall time: packet level {:.1f} s, flow level {:.1f} s\n",
                   packetWall,
                   flowWall);
        fmt::print("rows above {} %:\n", showAbove);
        std::vector<const Row*> shown;
        for (const Row& r : rows)
        {
            if (std::abs(r.Gap()) > showAbove / 100)
            {
                shown.push_back(&r);
            }
        }
        std::stable_sort(shown.begin(), shown.end(), [](const Row* a, const Row* b) {
            return std::abs(a->Gap()) > std::abs(b->Gap());
        });
        for (const Row* r : shown)
        {
            fmt::print("  {:+7.2f} %  {:>11} x {:<3} {:<14} {:<13} chunk {:>6}  {:>8} bytes  "
                       "packet {:.3f} us  flow {:.3f} us\n",
                       100 * r->Gap(),
                       r->c.preset,
                       r->c.gpus,
                       r->c.collective,
                       r->c.algorithm,
                       r->c.chunk,
                       r->bytes,
                       r->packetS * 1e6,
                       r->flowS * 1e6);
        }
        if (!json.empty())
        {
            nlohmann::json out = nlohmann::json::array();
            for (const Row& r : rows)
            {
                out.push_back({{"preset", r.c.preset},
                               {"gpus", r.c.gpus},
                               {"collective", r.c.collective},
                               {"algorithm", r.c.algorithm},
                               {"chunk_bytes", r.c.chunk},
                               {"bytes", r.bytes},
                               {"packet_s", r.packetS},
                               {"flow_s", r.flowS}});
            }
            WriteTextFile("--json", json, out.dump(1) + "\n");
        }
    }
    catch (const FabricConfigError& e)
    {
        fmt::print(stderr, "flow-vs-packet: {}\n", e.what());
        return 2;
    }
    return 0;
}
