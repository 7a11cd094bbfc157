/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// examples/chakra-replay: replays Chakra execution traces (PREFIX.RANK.et,
// one per rank, as MLCommons Chakra's tools write them) or an AICB workload
// file (SimAI's input, --aicb) on a simulated fabric: every trace node (every
// layer's compute and comm) becomes a task of its rank that waits for its
// dependencies; compute takes its recorded duration, collectives and sends
// run on the chosen topology and backend. Prints the iteration time and
// where it went.
// Under mpirun -np N (a build with MPI) its packet-level runs are cut over
// the ranks (--partition) and print what one process prints, once.
#include "program-support.h"

#include "ns3/aicb-workload.h"
#include "ns3/chakra-trace.h"
#include "ns3/core-module.h"
#include "ns3/gpu-fabric-module.h"
#include "ns3/program-flags.h"
#include "ns3/topology-helper.h"
#include "ns3/transport-helper.h"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

using namespace ns3;

int
main(int argc, char* argv[])
{
    std::string trace;
    std::string aicb;
    uint32_t gpus = 0;
    std::string timeUnit = "ns";
    uint32_t vpp = 1;
    std::string topology = "rail-only";
    std::string preset = "dgx-h100";
    uint32_t radix = 64;
    std::string backend = "flow";
    std::string algorithm = "auto";
    std::string commGroups;
    uint64_t chunkBytes = 0;
    std::string graph = "Hypercube(4)";
    double nodeBandwidthGbps = 400;
    std::string json;

    ProgramFlags cmd("chakra-replay", __FILE__);
    const RunOutputs outputs(cmd); // --timeline, --link-util, --progress
    cmd.Usage("Replay Chakra execution traces (PREFIX.0.et .. PREFIX.(n-1).et), or an AICB "
              "workload file as SimAI reads it, on a simulated GPU fabric of n GPUs: compute "
              "takes its durations, collectives and sends run on the network.");
    cmd.AddValue("trace", "path prefix of the trace files PREFIX.RANK.et", trace);
    cmd.AddValue("aicb",
                 "AICB workload file (SimAI's text format: header, layer count, one line per "
                 "layer), instead of --trace",
                 aicb);
    cmd.AddInteger("gpus",
                   "GPUs of the --aicb job (0: the file's all_gpus; needed when it has none)",
                   gpus,
                   0,
                   1u << 20);
    cmd.AddValue("time-unit",
                 "unit of the --aicb file's compute and update times: ns (SimAI's ticks) | us",
                 timeUnit);
    cmd.AddInteger("vpp",
                   "model chunks per pipeline stage of the --aicb job (interleaved 1F1B when > 1; "
                   "0: the file's vpp, which AICB sets to its layer count)",
                   vpp,
                   0,
                   1u << 20);
    cmd.AddValue("topology", "rail-only | rail-optimized | fat-tree | direct-connect", topology);
    cmd.AddValue("preset", "platform: dgx-a100, dgx-h100, gh200-256, gb200-nvl72, ...", preset);
    cmd.AddInteger("radix", "switch radix", radix, 2, 65536);
    cmd.AddValue("backend", "flow | packet", backend);
    cmd.AddValue("algorithm",
                 "auto (ring; direct for all-to-all) | ring | tree | halving-doubling | "
                 "hierarchical | direct | pxn: the algorithm of every collective that has it",
                 algorithm);
    cmd.AddValue("comm-groups",
                 "JSON file {\"pg_name\": [ranks]} of the process groups (default: "
                 "PREFIX.comm-groups.json if it exists, else the ranks whose traces use each "
                 "pg_name)",
                 commGroups);
    cmd.AddInteger("chunk-bytes",
                   "pipelining chunk of every collective, bytes (0: none)",
                   chunkBytes,
                   0,
                   std::numeric_limits<uint64_t>::max());
    cmd.AddValue("graph", "direct-connect graph construction name, e.g. Hypercube(4)", graph);
    cmd.AddValue("node-bandwidth-gbps",
                 "direct-connect bandwidth per node, Gb/s",
                 nodeBandwidthGbps);
    cmd.AddValue("json", "write the results as JSON to this path", json);
    std::string partition = "domain";
    cmd.AddPartition(partition);
    cmd.UseFabricScheduler();
    cmd.Parse(argc, argv);
    const bool distributed =
        cmd.Distribute(argc, argv, backend == "packet", "the flow level is not distributed");

    try
    {
        cmd.OnlyWith("aicb", trace.empty(), "without --trace (one workload per run)");
        for (const char* f : {"gpus", "time-unit", "vpp"})
        {
            cmd.OnlyWith(f, !aicb.empty(), "with --aicb");
        }
        cmd.OnlyWith("comm-groups", aicb.empty(), "with --trace");
        FabricRequire(!trace.empty() || !aicb.empty(),
                      "--trace",
                      trace,
                      "a path prefix of PREFIX.RANK.et files (or --aicb=FILE)");
        FabricRequire(timeUnit == "ns" || timeUnit == "us",
                      "--time-unit",
                      timeUnit,
                      "ns (SimAI's ticks) or us");
        FabricRequire(backend == "packet" || backend == "flow",
                      "--backend",
                      backend,
                      "packet or flow");
        cmd.OnlyWith("partition", distributed, ProgramFlags::kDistributedOnly);
        TransportHelper transports(backend, "--backend");
        transports.SetPartition(partition);
        RequireTopologyFlags(cmd, topology, nodeBandwidthGbps);
        ClusterParams p;
        p.platform = TopologyHelper::GetPlatform(preset);
        p.radix = radix;

        const uint32_t domainSize = topology == "direct-connect" ? 0 : p.platform.gpusPerDomain;
        const std::string flag = aicb.empty() ? "--trace" : "--aicb";
        const std::string workload = aicb.empty() ? trace : aicb;
        ParallelProgram program;
        std::vector<double> computeSeconds;
        uint64_t replayed = 0; // trace nodes, or AICB layers
        std::string source;
        nlohmann::json pipeline; // AICB only
        if (aicb.empty())
        {
            ChakraReplayOptions options;
            options.algorithm = algorithm;
            options.chunkBytes = chunkBytes;
            options.commGroups = commGroups;
            options.domainSize = domainSize;
            ChakraReplay replay = ReadChakraTraces(trace, options);
            program = std::move(replay.program);
            computeSeconds = std::move(replay.computeSeconds);
            replayed = replay.nodes;
            source = fmt::format("{} nodes from {}.*.et", replayed, trace);
        }
        else
        {
            AicbReplayOptions options;
            options.algorithm = algorithm;
            options.chunkBytes = chunkBytes;
            options.domainSize = domainSize;
            options.gpus = gpus;
            options.timeUnitSeconds = timeUnit == "us" ? 1e-6 : 1e-9;
            options.virtualStages = vpp;
            AicbReplay replay;
            try
            {
                replay = ReadAicbWorkload(aicb, options);
            }
            catch (const FabricConfigError& e)
            {
                // the option is this program's flag
                const std::string what = e.what();
                const size_t allowed = what.find("allowed: ");
                if (e.Parameter() != "vpp" || allowed == std::string::npos)
                {
                    throw;
                }
                throw FabricConfigError("--vpp", cmd.ValueText("vpp"), what.substr(allowed + 9));
            }
            program = std::move(replay.program);
            computeSeconds = std::move(replay.computeSeconds);
            replayed = replay.layers;
            source = fmt::format("{} layers from {} ({}, tp {} dp {} ep {} pp {}{})",
                                 replayed,
                                 aicb,
                                 replay.policy,
                                 replay.tp,
                                 replay.dp,
                                 replay.ep,
                                 replay.pp,
                                 replay.broadcasts > 0
                                     ? fmt::format(", {} BROADCAST not replayed", replay.broadcasts)
                                     : std::string());
            if (replay.pp > 1)
            {
                source += fmt::format(
                    ", {}1F1B over {} micro-batch(es): {} pipeline transfers of "
                    "{} bytes",
                    replay.virtualStages > 1
                        ? fmt::format("interleaved ({} chunks per stage) ", replay.virtualStages)
                        : std::string(),
                    replay.microBatches,
                    replay.pipelineMessages,
                    replay.ppCommBytes);
            }
            if (replay.recomputedLayers > 0)
            {
                source += fmt::format(", {} layer forward(s) recomputed per rank",
                                      replay.recomputedLayers);
            }
            pipeline = {{"micro_batches", replay.microBatches},
                        {"pipeline_messages", replay.pipelineMessages},
                        {"pipeline_bytes", replay.pipelineBytes},
                        {"virtual_stages", replay.virtualStages},
                        {"recomputed_layers", replay.recomputedLayers},
                        {"recompute_time_s",
                         *std::max_element(replay.recomputeSeconds.begin(),
                                           replay.recomputeSeconds.end())}};
        }
        const uint32_t ranks = program.ranks;

        p.gpus = ranks;
        TopologyHelper topologies(p);
        topologies.SetGraph(graph, static_cast<uint64_t>(nodeBandwidthGbps * 1e9));
        topologies.SetGpusRequired(true);
        topologies.SetParameterNames("--topology",
                                     aicb.empty() ? "--trace (its rank count)"
                                                  : "--aicb (its GPU count)",
                                     "--graph");
        const FabricTopology topo = topologies.Create(topology);

        InstalledTransport installed = transports.Install(topo);
        Ptr<ProgramRunner> runner = RunProgram(program, installed.transport);
        if (!runner->IsComplete())
        {
            const auto left = runner->GetUnfinishedRanks();
            throw FabricConfigError(
                flag,
                workload,
                fmt::format("a workload whose dependencies and collectives let every rank finish "
                            "({} rank(s) did not, the first is rank {}{}: a collective or "
                            "send waits for a peer that waits for it)",
                            left.size(),
                            left.empty() ? 0 : left.front(),
                            runner->IsFailed() ? "; " + runner->GetFailureReport() : ""));
        }
        const double iteration = runner->GetFinishTime().GetSeconds();
        const auto& comm = runner->GetCommSeconds();
        const double commMax = comm.empty() ? 0 : *std::max_element(comm.begin(), comm.end());
        const double computeMax = *std::max_element(computeSeconds.begin(), computeSeconds.end());
        installed.Dispose();
        FabricDistributed::DestroySimulation();

        fmt::print("chakra-replay: {} ranks, {} on {} ({} GPUs, {}), {} backend\n",
                   ranks,
                   source,
                   topology,
                   topo.GetNGpus(),
                   topology == "direct-connect" ? graph : p.platform.name,
                   backend);
        fmt::print("  iteration time            {:.9f} s\n", iteration);
        fmt::print("  communication (max rank)  {:.9f} s\n", commMax);
        fmt::print("  compute (max rank)        {:.9f} s\n", computeMax);
        fmt::print("  collectives and sends     {}\n", program.comms.size());
        if (!json.empty())
        {
            nlohmann::json j = {{aicb.empty() ? "trace" : "aicb", workload},
                                {"topology", topology},
                                {"preset", p.platform.name},
                                {"backend", backend},
                                {"algorithm", algorithm},
                                {"ranks", ranks},
                                {aicb.empty() ? "nodes_replayed" : "layers_replayed", replayed},
                                {"comms", program.comms.size()},
                                {"iteration_time_s", iteration},
                                {"comm_time_s", commMax},
                                {"compute_time_s", computeMax}};
            if (pipeline.is_object())
            {
                j.update(pipeline);
            }
            WriteTextFile("--json", json, j.dump(2) + "\n");
        }
    }
    catch (const FabricConfigError& e)
    {
        fmt::print(stderr, "chakra-replay: {}\n", e.what());
        return 2;
    }
    return 0;
}
