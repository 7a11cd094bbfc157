/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// examples/collective-bench: an nccl-tests-like sweep. For each message size
// (doubling from --min-bytes to --max-bytes) one collective runs on the
// chosen topology, alone, on a fresh fabric in a fresh simulation (so a
// row does not depend on the sizes before it), and the familiar table is printed: size, count,
// time, algbw and busbw (GB/s), as nccl-tests defines them: size is the
// largest buffer (allgather's output, reducescatter's input, alltoall's whole
// send buffer), count the 4-byte elements of the operation's count argument
// (size/4 for allreduce, broadcast, reduce and sendrecv; size/4/n for
// allgather's send, reducescatter's receive and alltoall's per-peer count).
// The alpha-beta predictions of the algorithms are in collective-metrics.h.
// --backend=flow runs the same sweep on the flow-level backend (FlowTransport).
// --algorithm=bfb (--topology=direct-connect only) runs BFB's schedule on the
// graph and prints its alpha-beta formula and the simulated / formula ratio
// beside each size.
// Under mpirun -np N (a build with MPI: scripts/build.sh --mpi) the packet
// level runs on ns-3's distributed engine, each fabric cut over the ranks
// (--partition); rank 0 prints and writes the results.
#include "program-support.h"
#include "results-table.h"

#include "ns3/core-module.h"
#include "ns3/gpu-fabric-module.h"
#include "ns3/program-flags.h"
#include "ns3/topology-helper.h"
#include "ns3/transport-helper.h"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <optional>

using namespace ns3;

int
main(int argc, char* argv[])
{
    std::string topology = "rail-only";
    uint32_t gpus = 16;
    std::string preset = "dgx-h100";
    uint32_t radix = 64;
    std::string collective = "allreduce";
    std::string algorithm = "ring";
    uint64_t minBytes = 1024;
    uint64_t maxBytes = 64 * 1024 * 1024;
    uint64_t chunkBytes = 0;
    uint32_t channels = 1;
    std::string graph = "Hypercube(4)";
    double nodeBandwidthGbps = 400;
    std::string json;
    std::string csv;
    std::string backend = "packet";
    std::string msccl;
    std::string scheduleFile;
    std::string partition = "domain";

    ProgramFlags cmd("collective-bench", __FILE__);
    const RunOutputs outputs(cmd);         // --timeline, --link-util, --progress
    const PacketControlFlags control(cmd); // --cc, --lb
    cmd.Usage("nccl-tests-like sweep of one collective on a simulated GPU fabric.");
    cmd.AddValue("topology", "rail-only | rail-optimized | fat-tree | direct-connect", topology);
    cmd.AddValue("gpus",
                 "number of GPUs (a multiple of the preset's K; direct-connect: the graph's nodes)",
                 gpus);
    cmd.AddValue("preset",
                 "platform: dgx-a100, dgx-h100, gh200-256, gb200-nvl72, ... (not with "
                 "direct-connect)",
                 preset);
    cmd.AddValue("radix", "switch radix (not with direct-connect)", radix);
    cmd.AddValue("collective",
                 "allreduce | allgather | reducescatter | alltoall | broadcast | reduce | sendrecv",
                 collective);
    cmd.AddValue("algorithm",
                 "ring | tree | halving-doubling | hierarchical | direct | pxn | bfb (with "
                 "--topology=direct-connect: BFB on its graph)",
                 algorithm);
    cmd.AddValue("min-bytes",
                 "smallest message size: whole 4-byte elements (per rank for allgather, "
                 "reducescatter, alltoall; the default rounds up to that)",
                 minBytes);
    cmd.AddValue("max-bytes", "largest message size", maxBytes);
    cmd.AddValue("chunk-bytes", "pipelining chunk (0: none)", chunkBytes);
    cmd.AddValue("channels",
                 "channels in parallel (every algorithm: rings, tree pairs, chains or "
                 "independent instances on parts of the buffer)",
                 channels);
    cmd.AddValue("graph", "direct-connect graph construction name, e.g. Hypercube(4)", graph);
    cmd.AddValue("node-bandwidth-gbps",
                 "direct-connect bandwidth per node, Gb/s",
                 nodeBandwidthGbps);
    cmd.AddValue("json", "write results as JSON to this path", json);
    cmd.AddValue("csv", "write the table as CSV to this path", csv);
    cmd.AddValue("backend", "packet | flow (flow-level max-min fair backend)", backend);
    cmd.AddValue("msccl",
                 "write the schedule of the largest size as MSCCL algorithm XML to this path",
                 msccl);
    cmd.AddValue("schedule",
                 "run this MSCCL algorithm XML file (its collective) instead of --algorithm",
                 scheduleFile);
    cmd.AddPartition(partition);
    cmd.UseFabricScheduler();
    cmd.Parse(argc, argv);
    const bool distributed =
        cmd.Distribute(argc, argv, backend == "packet", "the flow level is not distributed");

    try
    {
        cmd.OnlyWith("partition", distributed, ProgramFlags::kDistributedOnly);
        FabricRequire(minBytes >= 1, "--min-bytes", minBytes, "at least 1");
        control.Apply(cmd, backend == "packet");
        FabricRequire(backend == "packet" || backend == "flow",
                      "--backend",
                      backend,
                      "packet or flow");
        RequireTopologyFlags(cmd, topology, nodeBandwidthGbps);
        ClusterParams p;
        p.platform = TopologyHelper::GetPlatform(preset);
        p.gpus = gpus;
        p.radix = radix;
        TopologyHelper topologies(p);
        topologies.SetGraph(graph, static_cast<uint64_t>(nodeBandwidthGbps * 1e9));
        topologies.SetGpusRequired(cmd.WasGiven("gpus"));
        topologies.SetParameterNames("--topology", "--gpus", "--graph");
        const FabricTopology topo = topologies.Create(topology);
        TransportHelper transports(backend, "--backend");
        transports.SetPartition(partition);
        const uint32_t nRanks = topo.GetNGpus();
        if (!scheduleFile.empty())
        {
            for (const char* f : {"collective", "algorithm", "chunk-bytes", "channels"})
            {
                cmd.OnlyWith(f, false, "without --schedule (the file is the algorithm)");
            }
            // read once before the sweep: the file's collective sets the sizes
            const CollectiveSchedule s = MscclXml::Load(scheduleFile, 0);
            FabricRequire(s.NumRanks() == nRanks,
                          "--schedule",
                          fmt::format("ngpus {} in {}", s.NumRanks(), scheduleFile),
                          fmt::format("an algorithm for the topology's {} GPUs", nRanks));
            collective = CollectiveTypeName(s.Type());
            algorithm = s.Algorithm();
        }
        // BFB: the graph's own schedule, synthesized once and cut per size
        const bool bfb = scheduleFile.empty() && algorithm == "bfb";
        std::optional<DirectConnectSchedules> dcSchedules;
        const BfbSchedule* bfbSchedule = nullptr;
        if (bfb)
        {
            FabricRequire(topology == "direct-connect",
                          "--algorithm",
                          algorithm,
                          "ring, tree, halving-doubling, hierarchical, direct or pxn (bfb only "
                          "with --topology=direct-connect)");
            FabricRequire(collective == "allreduce" || collective == "allgather" ||
                              collective == "reducescatter",
                          "--collective",
                          collective,
                          "allreduce, allgather or reducescatter with --algorithm=bfb");
            for (const char* f : {"chunk-bytes", "channels"})
            {
                cmd.OnlyWith(f, false, "without --algorithm=bfb (BFB cuts its own chunks)");
            }
            dcSchedules.emplace(topologies.GetGraph(), topologies.GetGpusPerNode());
            bfbSchedule = dcSchedules->GetBfb(collective, CollectiveHelper::AllRanks(nRanks));
            NS_ABORT_MSG_IF(!bfbSchedule, "BFB does not apply to every GPU of the graph");
        }
        const auto bfbRun = [&](uint64_t bytes) {
            return *dcSchedules->Make(ProgramComm{collective,
                                                  algorithm,
                                                  CollectiveHelper::AllRanks(nRanks),
                                                  bytes,
                                                  0,
                                                  0,
                                                  "collective-bench"});
        };
        // nccl-tests' count argument: 4-byte elements, per rank for the
        // collectives whose count is per rank; sizes are whole counts so
        // that the count column and the simulated bytes agree
        const uint64_t perRank =
            collective == "allgather" || collective == "reducescatter" || collective == "alltoall"
                ? nRanks
                : 1;
        const uint64_t unit = 4 * perRank;
        if (!cmd.WasGiven("min-bytes"))
        {
            minBytes = (minBytes + unit - 1) / unit * unit;
        }
        // validate names and sizes before simulating anything
        FabricRequire(minBytes <= kMaxCollectiveBytes,
                      "--min-bytes",
                      minBytes,
                      fmt::format("at most {} (16 TiB)", kMaxCollectiveBytes));
        const auto request = [&](uint64_t bytes) {
            return ScheduleRequest{
                collective,
                algorithm,
                topo.GetNGpus(),
                bytes,
                chunkBytes,
                channels,
                0,
                (algorithm == "hierarchical" || algorithm == "pxn") ? topo.gpusPerDomain : 0,
                {}};
        };
        if (scheduleFile.empty())
        {
            bfb ? bfbRun(minBytes) : MakeSchedule(request(minBytes));
        }
        FabricRequire(
            minBytes % unit == 0,
            "--min-bytes",
            minBytes,
            perRank == 1 ? fmt::format("a multiple of 4 (whole 4-byte elements for {})", collective)
                         : fmt::format("a multiple of 4 x {} ranks = {} (one or more whole "
                                       "4-byte elements per rank for {})",
                                       perRank,
                                       unit,
                                       collective));
        FabricRequire(maxBytes >= minBytes,
                      "--max-bytes",
                      maxBytes,
                      fmt::format("at least --min-bytes ({})", minBytes));
        std::vector<uint64_t> sizes;
        for (uint64_t b = minBytes; b <= maxBytes; b *= 2)
        {
            sizes.push_back(b);
            if (b > maxBytes / 2)
            {
                break;
            }
        }
        // the largest size is refused before the sweep runs the smaller ones
        FabricRequire(sizes.back() <= kMaxCollectiveBytes,
                      "--max-bytes",
                      maxBytes,
                      fmt::format("a sweep whose largest size ({}) is at most {} (16 TiB)",
                                  sizes.back(),
                                  kMaxCollectiveBytes));
        // (an imported schedule is left to the check each of its runs makes)
        if (scheduleFile.empty())
        {
            // each run checks only its own work: the sweep is refused, or
            // announced, as a whole before its first size runs
            const std::vector<CollectiveWork> work =
                bfb ? transports.EstimateSchedules(topo, sizes, bfbRun)
                    : transports.EstimateCollectives(topo,
                                                     chunkBytes,
                                                     channels,
                                                     collective,
                                                     algorithm,
                                                     sizes);
            double sweepSeconds = 0;
            double sweepMessages = 0;
            double sweepBytes = 0;
            for (const auto& w : work)
            {
                sweepSeconds += w.seconds;
                sweepMessages += static_cast<double>(w.messages);
                sweepBytes += static_cast<double>(w.bytesSent);
            }
            const std::string sweepText =
                fmt::format("the sweep of {} size(s) from {} to {} bytes ({:.0f} messages of {} in "
                            "all, each size on a fresh {} backend)",
                            sizes.size(),
                            sizes.front(),
                            sizes.back(),
                            sweepMessages,
                            FabricBytesText(sweepBytes),
                            backend);
            // the smallest size alone too long: no --max-bytes would do
            FabricRequireWork(
                work.front().seconds,
                "--min-bytes",
                minBytes,
                fmt::format("its smallest size alone ({} messages of {})",
                            work.front().messages,
                            FabricBytesText(static_cast<double>(work.front().bytesSent))));
            FabricRequireWork(sweepSeconds, "--max-bytes", maxBytes, sweepText);
            if (sweepSeconds > FabricWarnRunSeconds())
            {
                fmt::print(stderr,
                           "collective-bench: {} is estimated at about {} of wall time "
                           "(GpuFabricWarnRunSeconds={:g})\n",
                           sweepText,
                           FabricDurationText(sweepSeconds),
                           FabricWarnRunSeconds());
            }
        }
        if (!msccl.empty())
        {
            FabricRequire(collective != "alltoall" && collective != "sendrecv",
                          "--msccl",
                          msccl,
                          fmt::format("a collective MSCCL XML holds (allreduce, allgather, "
                                      "reducescatter, broadcast, reduce), not {}",
                                      collective));
            // MSCCL's chunks are fractions of any size; the largest one's are written
            WriteTextFile("--msccl",
                          msccl,
                          MscclXml::Export(!scheduleFile.empty()
                                               ? MscclXml::Load(scheduleFile, sizes.back())
                                           : bfb ? bfbRun(sizes.back())
                                                 : MakeSchedule(request(sizes.back()))));
        }
        std::vector<CollectiveResult> results;
        std::string failure;              // a size that did not complete ends the sweep
        outputs.ExpectRuns(sizes.size()); // progress lines on a long sweep
        for (const uint64_t b : sizes)
        {
            CollectiveResult r =
                !scheduleFile.empty()
                    ? transports.RunScheduleAlone(topo, MscclXml::Load(scheduleFile, b))
                : bfb
                    ? transports.RunScheduleAlone(topo, bfbRun(b))
                    : transports
                          .RunCollectiveAlone(topo, chunkBytes, channels, collective, algorithm, b);
            if (!r.complete)
            {
                // the report has a line per failed op: the first, and how many more
                std::string reason = r.failed ? r.failure
                                              : "messages were still pending when nothing was "
                                                "left to simulate (packets lost and not resent)";
                reason.erase(reason.find_last_not_of('\n') + 1);
                const auto more = std::count(reason.begin(), reason.end(), '\n');
                reason.erase(std::min(reason.find('\n'), reason.size()));
                if (more > 0)
                {
                    reason += fmt::format(" (and {} more line(s) of report)", more);
                }
                failure = fmt::format("the {}-byte {} did not complete: {}", b, collective, reason);
                fmt::print(stderr, "collective-bench: {}\n", failure);
                break;
            }
            results.push_back(std::move(r));
        }

        // a direct-connect topology has no preset or radix: its graph instead
        fmt::print("# collective-bench: {} {} on {} ({} GPUs, {}){}\n",
                   collective,
                   algorithm,
                   topology,
                   topo.GetNGpus(),
                   topology == "direct-connect"
                       ? "graph " + graph
                       : fmt::format("{}, radix {}", p.platform.name, radix),
                   backend == "flow" ? ", flow-level backend" : "");
        // BFB's prediction on the fabric's arcs (B/d each, the link delay)
        const double nodeBps = static_cast<double>(static_cast<uint64_t>(nodeBandwidthGbps * 1e9));
        const auto formula = [&](uint64_t bytes) {
            return BfbPredictedTime(*bfbSchedule,
                                    static_cast<double>(bytes),
                                    nodeBps,
                                    static_cast<double>(p.linkDelayNs) * 1e-9);
        };
        if (bfb)
        {
            fmt::print("# BFB formula: alpha T_L + T_B M / (B x 4096/4122), T_L = {} steps, T_B = "
                       "{} (M/B), B = {} bit/s over d = {} arcs, alpha = link delay {} ns + one "
                       "4122-byte packet at B/d\n",
                       bfbSchedule->Steps(),
                       ToString(bfbSchedule->Tb()),
                       nodeBps,
                       bfbSchedule->degree,
                       p.linkDelayNs);
        }
        // nccl-tests' count column: the count argument of the NCCL call
        auto count = [perRank](uint64_t bytes) { return bytes / 4 / perRank; };
        std::vector<ResultsColumn> columns{
            {"bytes", "size(B)", "B", "{:>12}"},
            {"count", "count", "", "{:>12}"},
            {"time_s", "time(us)", "s", "{:>12.2f}", 1e6, "{:.9e}"},
            {"algbw_gbps", "algbw(GB/s)", "GB/s", "{:>10.2f}", 1, "{:.6f}"},
            {"busbw_gbps", "busbw(GB/s)", "GB/s", "{:>10.2f}", 1, "{:.6f}"}};
        if (bfb)
        {
            columns.push_back({"formula_s", "formula(us)", "s", "{:>12.2f}", 1e6, "{:.9e}"});
            columns.push_back({"ratio", "ratio", "", "{:>8.4f}", 1, "{:.6f}"});
        }
        ResultsTable table(columns);
        for (const auto& r : results)
        {
            std::vector<ResultsTable::Cell> row{r.bytes,
                                                count(r.bytes),
                                                r.timeS,
                                                r.algbwGBps,
                                                r.busbwGBps};
            if (bfb)
            {
                row.emplace_back(formula(r.bytes));
                row.emplace_back(r.timeS / formula(r.bytes));
            }
            table.AddRow(row);
        }
        fmt::print("{}", table.Table());
        if (!json.empty())
        {
            nlohmann::json j = {{"topology", topology},
                                {"gpus", topo.GetNGpus()},
                                {"preset", p.platform.name},
                                {"collective", collective},
                                {"algorithm", algorithm},
                                {"backend", backend},
                                {"results", table.Json()}};
            if (!failure.empty())
            {
                j["error"] = failure; // results hold the sizes before it
            }
            WriteTextFile("--json", json, j.dump(2) + "\n");
        }
        if (!csv.empty())
        {
            WriteTextFile("--csv", csv, table.Csv());
        }
        if (!failure.empty())
        {
            return 1; // reported when it happened
        }
    }
    catch (const FabricConfigError& e)
    {
        fmt::print(stderr, "collective-bench: {}\n", e.what());
        return 2;
    }
    return 0;
}
