/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// examples/fabric-routes: the routing check utility. Builds a topology,
// checks that every GPU pair is reachable, prints the hop-count histogram
// and the path of any pair (the same ECMP hash as the packets).
#include "program-support.h"

#include "ns3/core-module.h"
#include "ns3/gpu-fabric-module.h"
#include "ns3/program-flags.h"
#include "ns3/topology-helper.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

using namespace ns3;

int
main(int argc, char* argv[])
{
    std::string topology = "rail-only";
    uint32_t gpus = 32;
    std::string preset = "dgx-h100";
    uint32_t radix = 64;
    double oversubscription = 1;
    std::string graph = "Hypercube(4)";
    int64_t src = -1;
    int64_t dst = -1;
    uint32_t flowLabel = 0;
    std::string json;
    ProgramFlags cmd("fabric-routes", __FILE__);
    cmd.Usage("Routing check: reachability of all GPU pairs, hop counts, and paths.");
    cmd.AddValue("topology", "rail-only | rail-optimized | fat-tree | direct-connect", topology);
    cmd.AddValue("gpus", "number of GPUs (direct-connect: the graph's node count)", gpus);
    cmd.AddValue("preset", "platform preset (not with direct-connect)", preset);
    cmd.AddValue("radix", "switch radix (not with direct-connect)", radix);
    cmd.AddValue("oversubscription", "leaf oversubscription of the fat-trees", oversubscription);
    cmd.AddValue("graph", "direct-connect graph (construction name)", graph);
    cmd.AddValue("src", "print the path from this rank (with --dst)", src);
    cmd.AddValue("dst", "print the path to this rank (with --src)", dst);
    cmd.AddValue("flow-label", "flow label of the traced flow (ECMP entropy)", flowLabel);
    cmd.AddValue("json", "write the report as JSON to this path", json);
    cmd.UseFabricScheduler();
    cmd.Parse(argc, argv);
    try
    {
        cmd.OnlyWith("graph", topology == "direct-connect", "with --topology=direct-connect");
        cmd.OnlyWith("flow-label", src >= 0 || dst >= 0, "with --src and --dst");
        // a direct-connect topology is its graph: one GPU per node, no switches
        for (const char* f : {"preset", "radix"})
        {
            cmd.OnlyWith(f, topology != "direct-connect", "without --topology=direct-connect");
        }
        ClusterParams p;
        p.platform = TopologyHelper::GetPlatform(preset);
        p.gpus = gpus;
        p.radix = radix;
        p.oversubscription = oversubscription;
        TopologyHelper topologies(p);
        topologies.SetGraph(graph, p.platform.nicRate.GetBitRate());
        topologies.SetGpusRequired(cmd.WasGiven("gpus"));
        topologies.SetParameterNames("--topology", "--gpus", "--graph");
        const FabricTopology topo = topologies.Create(topology);
        FabricRequire(flowLabel <= 65535, "--flow-label", flowLabel, "0 to 65535");
        // checked against the built topology (a direct-connect graph sets its
        // own GPU count), before any output
        const int64_t ranks = topo.GetNGpus();
        if (src >= 0 || dst >= 0)
        {
            FabricRequire(src >= 0 && src < ranks,
                          "--src",
                          src,
                          fmt::format("a rank from 0 to {} (with --dst)", ranks - 1));
            FabricRequire(dst >= 0 && dst < ranks,
                          "--dst",
                          dst,
                          fmt::format("a rank from 0 to {} (with --src)", ranks - 1));
        }
        const auto tables = ComputeRoutingTables(topo);
        const RoutingReport r = CheckRouting(topo, tables);
        fmt::print("{}: {} GPUs, {} vertices, {} cables\n",
                   topo.GetName(),
                   topo.GetNGpus(),
                   topo.GetNVertices(),
                   topo.Cables().size());
        fmt::print("pairs {} unreachable {} mean hops {:.3f} max hops {}\n",
                   r.pairs,
                   r.unreachable,
                   r.meanHops,
                   r.maxHops);
        if (r.unreachable > 0)
        {
            fmt::print("first failure: {}\n", r.firstFailure);
        }
        fmt::print("{:>6} {:>12}\n", "hops", "pairs");
        for (size_t h = 0; h < r.hopHistogram.size(); ++h)
        {
            if (r.hopHistogram[h] > 0)
            {
                fmt::print("{:>6} {:>12}\n", h, r.hopHistogram[h]);
            }
        }
        nlohmann::json out = {{"topology", topo.GetName()},
                              {"gpus", topo.GetNGpus()},
                              {"pairs", r.pairs},
                              {"unreachable", r.unreachable},
                              {"mean_hops", r.meanHops},
                              {"max_hops", r.maxHops},
                              {"hop_histogram", r.hopHistogram}};
        if (src >= 0 || dst >= 0)
        {
            const auto path = TracePath(topo, tables, src, dst, flowLabel);
            fmt::print("path {} -> {} (flow label {}): {}\n",
                       src,
                       dst,
                       flowLabel,
                       path.empty() ? "no route" : PathToString(topo, path));
            out["path"] = PathToString(topo, path);
        }
        if (!json.empty())
        {
            WriteTextFile("--json", json, out.dump(2) + "\n");
        }
    }
    catch (const FabricConfigError& e)
    {
        fmt::print(stderr, "fabric-routes: {}\n", e.what());
        return 2;
    }
    return 0;
}
