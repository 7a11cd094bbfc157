/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * bfb-scale: BFB allgather schedules on a 1024-host hypercube and a 2500-host
 * 50x50 torus (the paper reports about one minute for these).  Prints wall time
 * and peak resident memory (getrusage ru_maxrss, whole process so far) after
 * each graph; --json=PATH writes {"runs": [{"graph", "nodes", "degree", "steps",
 * "tb", "tb_exact", "tb_optimal", "wall_time_s", "peak_rss_bytes", "schedule_kept",
 * "schedule_groups", "schedule_pieces", "arcs", "build_time_s", "build_rss_growth_bytes",
 * "estimate_s", "estimate_steps"}]} (with --bfb=0 only "graph", "nodes" and the
 * last five).  --graphs=NAME;NAME overrides the two graphs;
 * --keep=0 keeps only the loads, not the schedule; --bfb=0 only builds the
 * graphs (their time and memory).  Beside each run: the time to build the
 * graph, the growth of peak memory while building it, and BFB's up-front work
 * estimate (EstimateBfbWork) to compare with wall_s.
 */
#include "program-support.h"

#include "ns3/bfb-schedule.h"
#include "ns3/core-module.h"
#include "ns3/fabric-error.h"
#include "ns3/program-flags.h"
#include "ns3/topology-finder.h"

#include <chrono>
#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/resource.h>

using namespace ns3;

namespace
{

} // namespace

int
main(int argc, char* argv[])
{
    std::string json;
    std::string graphs = "Hypercube(10);Torus(50,50)";
    bool keep = true;
    bool bfb = true;
    ProgramFlags cmd("bfb-scale", __FILE__);
    cmd.AddValue("json", "write the results as JSON to this path", json);
    cmd.AddValue("graphs", "';'-separated construction names", graphs);
    cmd.AddValue("keep", "keep the full schedule (1) or only the loads (0)", keep);
    cmd.AddValue("bfb", "run BFB (1) or only build the graphs (0)", bfb);
    cmd.UseFabricScheduler();
    cmd.Parse(argc, argv);
    try
    {
        nlohmann::json runs = nlohmann::json::array();
        // every graph built before any output: a bad name fails at once
        FabricRequire(!graphs.empty() && graphs.back() != ';',
                      "--graphs",
                      graphs,
                      "';'-separated construction names without empty items");

        struct Built
        {
            std::string name;
            DirectConnectGraph g;
            double buildS;
            uint64_t rssGrowth;
        };

        std::vector<Built> built;
        {
            std::istringstream list(graphs);
            std::string name;
            while (std::getline(list, name, ';'))
            {
                const uint64_t before = PeakRssBytes();
                const auto t0 = std::chrono::steady_clock::now();
                DirectConnectGraph g = BuildFromName(name);
                const double s =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                built.push_back({name, std::move(g), s, PeakRssBytes() - before});
            }
        }
        fmt::print("{:<16} {:>6} {:>8} {:>8} {:>8} {:>3} {:>5} {:>12} {:>5} {:>10} {:>10} {:>12}\n",
                   "graph",
                   "N",
                   "arcs",
                   "build_s",
                   "graph_MB",
                   "d",
                   "T_L",
                   "T_B",
                   "opt",
                   "est_s",
                   "wall_s",
                   "peak_rss_MB");
        for (const auto& [name, g, buildS, rssGrowth] : built)
        {
            BfbOptions o;
            o.keepSchedule = keep;
            const BfbWork estimate = EstimateBfbWork(g, o);
            if (!bfb)
            {
                fmt::print("{:<16} {:>6} {:>8} {:>8.3f} {:>8.1f} {:>3} {:>5} {:>12} {:>5} "
                           "{:>10.3g}\n",
                           name,
                           g.NumNodes(),
                           g.NumArcs(),
                           buildS,
                           rssGrowth / 1048576.0,
                           g.MaxDegree(),
                           "-",
                           "-",
                           "-",
                           estimate.seconds);
                runs.push_back({{"graph", name},
                                {"nodes", g.NumNodes()},
                                {"arcs", g.NumArcs()},
                                {"build_time_s", buildS},
                                {"build_rss_growth_bytes", rssGrowth},
                                {"estimate_s", estimate.seconds},
                                {"estimate_steps", estimate.steps}});
                continue;
            }
            auto t0 = std::chrono::steady_clock::now();
            auto s = BfbAllGather(g, o);
            double wall =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            uint64_t rss = PeakRssBytes();
            uint64_t groups = 0;
            uint64_t pieces = 0;
            for (const auto& st : s.steps)
            {
                for (const auto& ns : st.nodes)
                {
                    groups += ns.groups.size();
                    for (const auto& gr : ns.groups)
                    {
                        pieces += gr.pieces.size();
                    }
                }
            }
            fmt::print("{:<16} {:>6} {:>8} {:>8.3f} {:>8.1f} {:>3} {:>5} {:>12} {:>5} {:>10.3g} "
                       "{:>10.3f} {:>12.1f}\n",
                       name,
                       g.NumNodes(),
                       g.NumArcs(),
                       buildS,
                       rssGrowth / 1048576.0,
                       s.degree,
                       s.Steps(),
                       ToString(s.Tb()),
                       s.TbOptimal() ? "yes" : "no",
                       estimate.seconds,
                       wall,
                       rss / 1048576.0);
            runs.push_back({{"graph", name},
                            {"nodes", g.NumNodes()},
                            {"degree", s.degree},
                            {"steps", s.Steps()},
                            {"tb", ToDouble(s.Tb())},
                            {"tb_exact", ToString(s.Tb())},
                            {"tb_optimal", s.TbOptimal()},
                            {"wall_time_s", wall},
                            {"peak_rss_bytes", rss},
                            {"schedule_kept", keep},
                            {"schedule_groups", groups},
                            {"schedule_pieces", pieces},
                            {"arcs", g.NumArcs()},
                            {"build_time_s", buildS},
                            {"build_rss_growth_bytes", rssGrowth},
                            {"estimate_s", estimate.seconds},
                            {"estimate_steps", estimate.steps}});
        }
        fmt::print("paper: BFB schedules for a 1024-node hypercube and a 2500-node torus in "
                   "about one minute (wall_s column above)\n");
        if (!json.empty())
        {
            WriteTextFile("--json", json, nlohmann::json{{"runs", runs}}.dump(2) + "\n");
        }
    }
    catch (const FabricConfigError& e)
    {
        std::cerr << "bfb-scale: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
