/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// examples/serving-study: LLM inference serving on rail-only and fat-tree
// networks. Requests arrive as a Poisson process; each is prefilled (tensor
// parallel inside an HB domain, experts spread over --ep TP groups for an
// MoE model), its KV cache sent to a decode group when --disaggregated, and
// decoded with continuous batching up to --batch requests per step. Prints
// the time-to-first-token and time-per-output-token percentiles per topology
// (ServingSimulation in ns3/serving-workload.h has the model). At packet level
// under mpirun (MPI build) each run is cut over the ranks (--partition), every
// rank running the same engine over its own GPUs, and rank 0 prints.
#include "program-support.h"
#include "results-table.h"

#include "ns3/core-module.h"
#include "ns3/gpu-fabric-module.h"
#include "ns3/program-flags.h"
#include "ns3/serving-workload.h"
#include "ns3/topology-helper.h"
#include "ns3/transport-helper.h"

#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <nlohmann/json.hpp>

using namespace ns3;

int
main(int argc, char* argv[])
{
    bool quick = false;
    std::string model = "mixtral-8x7b";
    std::string preset = "dgx-h100";
    uint32_t gpus = 32;
    std::string topologies = "rail-only,fat-tree";
    double rate = 40;
    uint32_t requests = 32;
    uint32_t promptTokens = 1024;
    uint32_t outputTokens = 32;
    uint32_t tp = 4;
    uint32_t ep = 4;
    uint32_t batch = 16;
    bool disaggregated = false;
    std::string granularity = "layer";
    double memoryBandwidth = 3.35e12;
    double efficiency = 1.0;
    std::string backend = "flow";
    uint64_t seed = 1;
    uint32_t instances = 1;
    std::string dispatch = "round-robin";
    std::string promptDist = "fixed";
    std::string outputDist = "fixed";
    double promptSigma = 1.0;
    double outputSigma = 1.0;
    std::string json;

    // --quick changes the defaults only: flags given with it still apply
    if (FlagIsTrue(argc, argv, "quick"))
    {
        requests = 8;
        outputTokens = 8;
        promptTokens = 256;
    }
    ProgramFlags cmd("serving-study", __FILE__);
    const RunOutputs outputs(cmd); // --timeline, --link-util, --progress
    cmd.Usage("LLM inference serving (Poisson arrivals, prefill, KV-cache transfer, continuous "
              "batching of decode steps): TTFT and TPOT percentiles on rail-only vs fat-tree.");
    cmd.AddValue("quick",
                 "small defaults (8 requests of 256 prompt and 8 output tokens); flags given "
                 "with it win",
                 quick);
    cmd.AddValue("model",
                 fmt::format("model preset: {}", fmt::join(LlmModel::Names(), "|")),
                 model);
    cmd.AddValue("preset",
                 fmt::format("platform preset: {}", fmt::join(HbDomainPreset::Names(), "|")),
                 preset);
    cmd.AddInteger("gpus", "GPUs of the cluster (a multiple of K)", gpus, 1, 1u << 16);
    cmd.AddValue("topology", "comma-separated: rail-only, rail-optimized, fat-tree", topologies);
    std::string topologiesAlias;
    cmd.AddValue("topologies",
                 "the same list as --topology (the name multi-job and rail-only-vs-fat-tree use)",
                 topologiesAlias);
    cmd.AddValue("rate", "request arrival rate, requests per second (Poisson)", rate);
    cmd.AddInteger("requests", "number of requests", requests, 1, 1u << 20);
    cmd.AddInteger("prompt-tokens",
                   "prompt tokens per request (the mean with --prompt-dist)",
                   promptTokens,
                   1,
                   1u << 20);
    cmd.AddInteger("output-tokens",
                   "output tokens per request (the mean with --output-dist)",
                   outputTokens,
                   2,
                   1u << 16);
    cmd.AddValue("prompt-dist",
                 "prompt lengths: fixed | uniform (integers on [ceil(M/2), 2M - ceil(M/2)], mean "
                 "M = --prompt-tokens) | exponential (1 + round(Exp(M - 1)), at most 16 M) | "
                 "lognormal (1 + round(X), X lognormal of mean M - 1 and --prompt-sigma, at "
                 "most 64 M); seeded by --seed",
                 promptDist);
    cmd.AddValue("output-dist",
                 "output lengths: fixed | uniform (on [max(2, ceil(M/2)), 2M - that]) | "
                 "exponential (2 + round(Exp(M - 2)), at most 16 M) | lognormal (2 + "
                 "round(X), X of mean M - 2 and --output-sigma, at most 64 M); M = "
                 "--output-tokens",
                 outputDist);
    const std::function<bool(double)> sigmaRange = [](double x) {
        return std::isfinite(x) && x > 0 && x <= 2;
    };
    cmd.AddValue("prompt-sigma",
                 "with --prompt-dist=lognormal: sigma of the log of the prompt lengths (median "
                 "exp(-sigma^2/2) of the mean)",
                 promptSigma,
                 "a number in (0, 2]",
                 sigmaRange);
    cmd.AddValue("output-sigma",
                 "with --output-dist=lognormal: sigma of the log of the output lengths",
                 outputSigma,
                 "a number in (0, 2]",
                 sigmaRange);
    cmd.AddInteger("instances",
                   "serving instances (replicas), each on its own whole HB domains (two groups "
                   "when --disaggregated)",
                   instances,
                   1,
                   1u << 16);
    cmd.AddValue("dispatch",
                 "request to instance: round-robin | least-loaded (fewest unfinished requests)",
                 dispatch);
    cmd.AddInteger("tp", "TP size (divides K and the model's heads)", tp, 1, 1u << 16);
    cmd.AddInteger("ep",
                   "TP groups per instance the experts spread over (MoE; 1 for a dense model)",
                   ep,
                   1,
                   1u << 16);
    cmd.AddInteger("batch", "most requests per decode step (continuous batching)", batch, 1, 4096);
    cmd.AddValue("disaggregated",
                 "prefill and decode on separate GPU groups, KV cache sent between them",
                 disaggregated);
    cmd.AddValue("granularity",
                 "layer (comms per block) | pass (one AllReduce and AllToAll per pass)",
                 granularity);
    cmd.AddValue("memory-bandwidth",
                 "HBM bytes/s per GPU for the weight and KV-cache read time (H100 SXM: "
                 "3.35e12; 0: FLOPs only, decode steps do not grow with the context)",
                 memoryBandwidth);
    cmd.AddValue("compute-efficiency", "fraction of peak FLOP/s reached, (0, 1]", efficiency);
    cmd.AddValue("backend", "flow | packet", backend);
    cmd.AddInteger("seed",
                   "RNG stream of the arrivals (and of the lengths)",
                   seed,
                   0,
                   static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
    cmd.AddValue("json", "write the results as JSON to this path", json);
    std::string partition = "domain";
    cmd.AddPartition(partition);
    cmd.UseFabricScheduler();
    cmd.Parse(argc, argv);
    const bool distributed =
        cmd.Distribute(argc, argv, backend == "packet", "the flow level is not distributed");

    try
    {
        if (cmd.WasGiven("topologies"))
        {
            FabricRequire(!cmd.WasGiven("topology"),
                          "--topologies",
                          topologiesAlias,
                          "not with --topology (one list: they are the same flag)");
            topologies = topologiesAlias;
        }
        cmd.OnlyWith("prompt-sigma", promptDist == "lognormal", "with --prompt-dist=lognormal");
        cmd.OnlyWith("output-sigma", outputDist == "lognormal", "with --output-dist=lognormal");
        FabricRequire(backend == "packet" || backend == "flow",
                      "--backend",
                      backend,
                      "packet or flow");
        cmd.OnlyWith("partition", distributed, ProgramFlags::kDistributedOnly);
        TransportHelper transports(backend, "--backend");
        transports.SetPartition(partition);
        const auto topoNames = SplitList("--topology", topologies);
        for (const auto& t : topoNames)
        {
            FabricRequire(t == "rail-only" || t == "rail-optimized" || t == "fat-tree",
                          "--topology",
                          t,
                          "rail-only, rail-optimized, fat-tree");
        }
        ServingConfig c;
        try
        {
            c.model = LlmModel::Get(model);
        }
        catch (const FabricConfigError&)
        {
            throw FabricConfigError("--model",
                                    model,
                                    fmt::format("one of {}", fmt::join(LlmModel::Names(), ", ")));
        }
        HbDomainPreset hw;
        try
        {
            hw = TopologyHelper::GetPlatform(preset);
        }
        catch (const FabricConfigError&)
        {
            throw FabricConfigError(
                "--preset",
                preset,
                fmt::format("one of {}", fmt::join(HbDomainPreset::Names(), ", ")));
        }
        FabricRequire(gpus % hw.gpusPerDomain == 0,
                      "--gpus",
                      gpus,
                      fmt::format("a multiple of K = {} ({})", hw.gpusPerDomain, preset));
        c.gpus = gpus;
        c.gpusPerDomain = hw.gpusPerDomain;
        c.tp = tp;
        c.ep = ep;
        c.disaggregated = disaggregated;
        c.gpuFlops = hw.gpuFlops;
        c.computeEfficiency = efficiency;
        c.memoryBandwidth = memoryBandwidth;
        c.rate = rate;
        c.requests = requests;
        c.promptTokens = promptTokens;
        c.outputTokens = outputTokens;
        c.maxBatch = batch;
        c.seed = seed;
        c.granularity = granularity;
        c.instances = instances;
        c.dispatch = dispatch;
        c.promptDistribution = promptDist;
        c.outputDistribution = outputDist;
        c.promptSigma = promptSigma;
        c.outputSigma = outputSigma;
        // ServingConfig names its fields as this program's flags, without "--"
        auto asFlag = [](const FabricConfigError& e) {
            const std::string what = e.what();
            const size_t got = what.find(": got '") + 7;
            const size_t allowed = what.find("', allowed: ", got);
            return FabricConfigError("--" + e.Parameter(),
                                     what.substr(got, allowed - got),
                                     what.substr(allowed + 12));
        };
        try
        {
            c.Validate();
        }
        catch (const FabricConfigError& e)
        {
            throw asFlag(e);
        }

        using Column = ResultsColumn;
        const unsigned both = Column::kTable | Column::kJson;
        ResultsTable table({Column{"topology", "topology", "", "{:<15}"}.In(both),
                            Column{"requests", "requests", "", "{:>8}"}.In(both),
                            Column{"ttft_p50_s", "TTFT p50 ms", "s", "{:>12.3f}", 1e3}.In(both),
                            Column{"ttft_p90_s", "p90 ms", "s", "{:>9.3f}", 1e3}.In(both),
                            Column{"ttft_p99_s", "p99 ms", "s", "{:>9.3f}", 1e3}.In(both),
                            Column{"tpot_p50_s", "TPOT p50 ms", "s", "{:>12.3f}", 1e3}.In(both),
                            Column{"tpot_p90_s", "p90 ms", "s", "{:>9.3f}", 1e3}.In(both),
                            Column{"tpot_p99_s", "p99 ms", "s", "{:>9.3f}", 1e3}.In(both),
                            Column{"decode_steps", "steps", "", "{:>7}"}.In(both),
                            Column{"prompt_tokens_mean", "prompt", "", "{:>7.1f}"}.In(both),
                            Column{"output_tokens_mean", "output", "", "{:>7.1f}"}.In(both),
                            Column{"makespan_s", "end s", "s", "{:>9.3f}"}.In(both)});
        fmt::print(
            "serving-study: {} on {} GPUs ({}), {} instance(s) ({}) of TP {} x EP {}, {}, {} "
            "requests at {} /s, {} prompt ({}) + {} output ({}) tokens, batch <= {}, {} "
            "backend\n",
            c.model.name,
            gpus,
            preset,
            instances,
            dispatch,
            tp,
            ep,
            disaggregated ? "disaggregated prefill/decode" : "co-located",
            requests,
            rate,
            promptTokens,
            promptDist,
            outputTokens,
            outputDist,
            batch,
            backend);
        fmt::print("{}", table.Heading());
        for (const auto& topoName : topoNames)
        {
            ClusterParams cp;
            cp.gpus = gpus;
            cp.platform = hw;
            const FabricTopology topo = TopologyHelper(cp).Create(topoName);
            InstalledTransport installed = transports.Install(topo);
            Ptr<ServingSimulation> sim;
            try
            {
                // refused up front (work, simulated time) naming --requests
                sim = RunServing(c, installed.transport);
            }
            catch (const FabricConfigError& e)
            {
                throw e.Parameter() == "requests" ? asFlag(e) : e;
            }
            FabricRequire(sim->IsComplete(),
                          "--topology",
                          topoName,
                          "runs that complete (" + sim->GetFailureReport() + ")");
            std::vector<double> ttft;
            std::vector<double> tpot;
            double end = 0;
            double promptSum = 0;
            double outputSum = 0;
            for (const auto& r : sim->GetResults())
            {
                ttft.push_back(r.Ttft());
                tpot.push_back(r.Tpot());
                end = std::max(end, r.lastToken);
                promptSum += r.promptTokens;
                outputSum += r.outputTokens;
            }
            table.AddRow({topoName,
                          requests,
                          ServingPercentile(ttft, 50),
                          ServingPercentile(ttft, 90),
                          ServingPercentile(ttft, 99),
                          ServingPercentile(tpot, 50),
                          ServingPercentile(tpot, 90),
                          ServingPercentile(tpot, 99),
                          sim->GetDecodeSteps(),
                          promptSum / requests,
                          outputSum / requests,
                          end});
            fmt::print("{}", table.Line(table.Rows() - 1));
            sim->Dispose();
            installed.Dispose();
            FabricDistributed::DestroySimulation();
        }
        if (!json.empty())
        {
            WriteTextFile("--json",
                          json,
                          nlohmann::json({{"model", c.model.name},
                                          {"preset", preset},
                                          {"gpus", gpus},
                                          {"tp", tp},
                                          {"ep", ep},
                                          {"disaggregated", disaggregated},
                                          {"rate", rate},
                                          {"prompt_tokens", promptTokens},
                                          {"output_tokens", outputTokens},
                                          {"prompt_dist", promptDist},
                                          {"output_dist", outputDist},
                                          {"prompt_sigma", promptSigma},
                                          {"output_sigma", outputSigma},
                                          {"instances", instances},
                                          {"dispatch", dispatch},
                                          {"batch", batch},
                                          {"seed", seed},
                                          {"backend", backend},
                                          {"results", table.Json()}})
                                  .dump(2) +
                              "\n");
        }
    }
    catch (const FabricConfigError& e)
    {
        fmt::print(stderr, "serving-study: {}\n", e.what());
        return 2;
    }
    return 0;
}
