/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
/**
 * bench/flow-scale: one LLM training iteration at scale on the flow-level
 * backend (and the packet backend where it fits).
 *
 * --workload=iteration (default): one training iteration of --model (default
 * gpt-1t) on N GPUs in HB domains of K (default gh200-256: K = 256) with the
 * rail-only paper's parallelization: tensor and data parallelism only (PP 1),
 * TP = the feasible size (a divisor of K and of the heads for which DP
 * divides the global batch) with the shortest Eq. 1 time (--tp forces one),
 * DP = N / TP with the paper's two-level hierarchical AllReduce (inside the
 * domain on NVLink, across domains on each rail). The iteration is
 * BuildIterationProgram's (compute, TP AllReduces at --granularity, DP
 * AllReduce after the backward pass) run by a ProgramRunner; the program is
 * built once and run on rail-only and on rail-optimized (radix --radix).
 * Eq. 1 (with its TP term in bytes) is printed beside the simulated time,
 * and the JSON has both breakdowns (rank 0's TP and DP time).
 *
 * --workload=phases: collectives only: a ring allreduce of --tp-bytes in
 * every TP group (--tp-size consecutive ranks), then a ring allreduce of
 * --dp-bytes on every rail (--overlap: both at once).
 *
 * Prints wall time (topology and transport setup, simulation), CPU time
 * (user + system; on a shared machine the better measure), peak resident
 * memory (getrusage ru_maxrss of the process that ran that configuration),
 * the number of flows (messages), the peak of concurrent flows, and the
 * simulated times. --table runs 1k, 4k, 16k and 32k GPUs, each
 * configuration in a child process so that every row has its own peak
 * memory; the packet backend up to --packet-max-gpus: the same workload when
 * its simulated bytes are at most --packet-max-bytes, otherwise (a GPT-1T
 * iteration moves petabytes) a calibration run of the phases workload with
 * --calibration-bytes messages, whose simulated bytes per wall second give
 * the estimated packet-level wall time of the iteration (printed, not run).
 * --json=PATH writes {"scheduler": ns-3's SchedulerType, "runs": [...]}.
 */
#include "program-support.h"

#include "ns3/core-module.h"
#include "ns3/gpu-fabric-module.h"
#include "ns3/program-flags.h"
#include "ns3/topology-helper.h"
#include "ns3/transport-helper.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ns3;

namespace
{

struct ScaleConfig
{
    uint32_t gpus{32768};
    std::string preset{"gh200-256"};
    uint32_t radix{64};
    std::string topology{"rail-only"};
    std::string backend{"flow"};
    uint64_t tpBytes{64ULL << 20};
    uint64_t dpBytes{64ULL << 20};
    uint32_t tpSize{0}; //!< 0: the domain size
    bool overlap{false};
    std::string workload{"iteration"};
    std::string model{"gpt-1t"};
    uint32_t tp{0}; //!< iteration: 0 = Eq. 1's optimum, rounded to a feasible size
    uint32_t microBatches{1};
    std::string granularity{"micro-batch"};
    DirectConnectFlags dc; //!< --topology=direct-connect: the graph
};

/// Eq. 1's variables for the job, its TP term in bytes (the paper counts
/// elements) as the simulation moves them.
AnalyticalParams
Eq1Params(const LlmModel& model, const HbDomainPreset& hw, uint32_t gpus)
{
    AnalyticalParams ap = AnalyticalParams::From(model, hw, gpus);
    ap.activationBytes = model.bytesPerActivation;
    return ap;
}

/// The iteration's TP size: \p forced, or Eq. 1's best feasible size
/// (BestFeasibleTp: a divisor of K and of the heads, with DP = N / TP
/// dividing the global batch, ties to the smaller).
uint32_t
IterationTp(const LlmModel& model, const HbDomainPreset& hw, uint32_t gpus, uint32_t forced)
{
    if (forced != 0)
    {
        return forced;
    }
    const uint32_t best = BestFeasibleTp(AnalyticalModel(Eq1Params(model, hw, gpus)), model);
    const uint64_t sequences = model.globalBatchTokens / model.seqLength;
    FabricRequire(best != 0,
                  "--gpus",
                  gpus,
                  fmt::format("a size with a TP size dividing K = {} and {}'s {} heads for which "
                              "N / TP divides its batch of {} sequences",
                              hw.gpusPerDomain,
                              model.name,
                              model.heads,
                              sequences));
    return best;
}

/// \return CPU time (user + system) of this process so far, seconds
double
CpuSeconds()
{
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/// Runs the phases one after the other.
struct Workload
{
    CollectiveHelper* helper{nullptr};
    std::vector<std::vector<std::vector<uint32_t>>> phases; //!< phase -> communicators
    std::vector<uint64_t> bytes;                            //!< per phase
    std::vector<double> phaseTimeS;
    std::vector<Ptr<CollectiveRun>> running;
    uint32_t left{0};
    Time phaseStart;
    size_t next{0};
    bool overlap{false};

    void Start()
    {
        if (next == phases.size())
        {
            return;
        }
        phaseStart = Simulator::Now();
        const size_t last = overlap ? phases.size() : next + 1;
        for (; next < last; ++next)
        {
            for (const auto& comm : phases[next])
            {
                Ptr<CollectiveRun> run =
                    helper->Install(comm, "allreduce", "ring", bytes[next], Simulator::Now());
                run->SetCompletionCallback(MakeCallback(&Workload::Done, this));
                running.push_back(run);
                ++left;
            }
        }
    }

    void Done(Ptr<CollectiveRun>)
    {
        if (--left == 0)
        {
            // free the finished runs and start the next phase from a fresh event
            Simulator::ScheduleNow(&Workload::PhaseEnd, this);
        }
    }

    void PhaseEnd()
    {
        phaseTimeS.push_back((Simulator::Now() - phaseStart).GetSeconds());
        running.clear();
        Start();
    }
};

/**
 * Check the names a configuration gives besides its preset (workload, model,
 * granularity, backend) and its micro-batches: main calls it before any
 * output, so that a typo fails at once rather than after a header (or in
 * every child of --table).
 */
void
CheckNames(const ScaleConfig& c)
{
    FabricRequire(c.workload == "iteration" || c.workload == "phases",
                  "--workload",
                  c.workload,
                  "iteration or phases");
    if (c.workload == "iteration")
    {
        LlmModel::Get(c.model);
        FabricRequire(c.granularity == "layer" || c.granularity == "micro-batch",
                      "--granularity",
                      c.granularity,
                      "layer or micro-batch");
        // by its flag, before the header (Parallelism would name its field after it)
        FabricRequire(c.microBatches >= 1, "--micro-batches", c.microBatches, "an integer >= 1");
    }
    FabricRequire(c.backend == "flow" || c.backend == "packet",
                  "--backend",
                  c.backend,
                  "flow or packet");
}

nlohmann::json
RunOne(const ScaleConfig& c)
{
    using Clock = std::chrono::steady_clock;
    ClusterParams p;
    p.gpus = c.gpus;
    p.platform = TopologyHelper::GetPlatform(c.preset);
    CheckNames(c);
    p.radix = c.radix;
    FabricRequire(c.topology == "rail-only" || c.topology == "rail-optimized" ||
                      c.topology == "direct-connect",
                  "--topology",
                  c.topology,
                  "rail-only, rail-optimized, both or direct-connect");
    const uint32_t k = p.platform.gpusPerDomain;
    FabricRequire(c.gpus % k == 0 && c.gpus / k >= 2,
                  "--gpus",
                  c.gpus,
                  fmt::format("a multiple of the domain size {} with at least 2 domains", k));
    nlohmann::json j;
    std::optional<IterationProgram> program;
    if (c.workload == "iteration")
    {
        // the program does not depend on the topology: built before the clock starts
        const LlmModel model = LlmModel::Get(c.model);
        const uint32_t tp = IterationTp(model, p.platform, c.gpus, c.tp);
        FabricRequire(c.gpus % tp == 0, "--tp", tp, fmt::format("a divisor of --gpus={}", c.gpus));
        const uint32_t dp = c.gpus / tp;
        Parallelism::Shape shape;
        shape.gpus = c.gpus;
        shape.gpusPerDomain = k;
        shape.tp = tp;
        shape.dp = dp;
        shape.microBatches = c.microBatches;
        shape.globalBatchSequences = model.globalBatchTokens / model.seqLength;
        const Parallelism par(shape);
        WorkloadOptions wo;
        wo.gpuFlops = p.platform.gpuFlops;
        const TrainingIteration it(model, par, wo);
        IterationProgramOptions po;
        po.tpGranularity = c.granularity;
        program = BuildIterationProgram(it, po);
        const AnalyticalModel eq1(Eq1Params(model, p.platform, c.gpus));
        j["model"] = c.model;
        j["tp"] = tp;
        j["dp"] = dp;
        j["dp_inner"] = par.DpInner();
        j["dp_outer"] = par.DpOuter();
        j["micro_batches"] = c.microBatches;
        j["granularity"] = c.granularity;
        j["comms"] = program->program.comms.size();
        j["eq1_iteration_s"] = eq1.IterationTime(tp);
        const IterationTimeBreakdown b = eq1.Breakdown(tp);
        j["eq1_compute_s"] = b.compute;
        j["eq1_tp_s"] = b.tp;
        j["eq1_dp_s"] = b.dpRail + b.dpDomain;
        j["compute_s"] =
            it.ForwardSeconds(0) * c.microBatches + it.BackwardSeconds(0) * c.microBatches;
    }
    const auto t0 = Clock::now();
    const double cpu0 = CpuSeconds();
    const TopologyHelper topologies = c.dc.Topologies(p, "--topology");
    TransportHelper transports(c.backend, "--backend");
    // a direct-connect fabric of HB domains: relays that do not deadlock
    topologies.ConfigureFabric(c.topology, transports.GetFabricHelper());
    InstalledTransport installed = transports.Install(topologies.Create(c.topology));
    Ptr<Transport> transport = installed.transport;
    const auto t1 = Clock::now();
    Workload w;
    CollectiveHelper helper(transport);
    if (program)
    {
        Ptr<ProgramRunner> runner =
            RunProgram(program->program, transport, ScheduleSourceFor(topologies, c.topology));
        FabricRequire(runner->IsComplete(),
                      "iteration",
                      "incomplete",
                      "a program that completes (a deadlock or lost message)");
        j["iteration_s"] = runner->GetFinishTime().GetSeconds();
        // rank 0's communication time per dimension (its comms run one at a time)
        double tpS = 0;
        double dpS = 0;
        const auto& runs = runner->GetRuns();
        for (size_t k = 0; k < runs.size(); ++k)
        {
            const auto& members = program->program.comms[k].members;
            const auto rank0 = std::find(members.begin(), members.end(), 0U);
            if (runs[k] && rank0 != members.end())
            {
                const auto local = static_cast<uint32_t>(rank0 - members.begin());
                const double d =
                    (runs[k]->GetRankFinishTime(local) - runs[k]->GetStartTime()).GetSeconds();
                (program->info[k].dim == ParallelDim::TP ? tpS : dpS) += d;
            }
        }
        j["rank0_tp_s"] = tpS;
        j["rank0_dp_s"] = dpS;
    }
    else
    {
        const uint32_t tp = c.tpSize == 0 ? k : c.tpSize;
        FabricRequire(
            tp >= 2 && k % tp == 0,
            "--tp-size",
            c.tpSize,
            fmt::format("0 (the domain size) or a divisor >= 2 of the domain size {}", k));
        w.helper = &helper;
        w.overlap = c.overlap;
        const uint32_t domains = c.gpus / k;
        std::vector<std::vector<uint32_t>> tpGroups;
        for (uint32_t first = 0; first < c.gpus; first += tp)
        {
            std::vector<uint32_t> g(tp);
            std::iota(g.begin(), g.end(), first);
            tpGroups.push_back(std::move(g));
        }
        std::vector<std::vector<uint32_t>> rails;
        for (uint32_t r = 0; r < k; ++r)
        {
            std::vector<uint32_t> g(domains);
            for (uint32_t d = 0; d < domains; ++d)
            {
                g[d] = d * k + r;
            }
            rails.push_back(std::move(g));
        }
        w.phases = {std::move(tpGroups), std::move(rails)};
        w.bytes = {c.tpBytes, c.dpBytes};
        Simulator::ScheduleNow(&Workload::Start, &w);
        Simulator::Run();
        j["tp_size"] = tp;
        j["dp_size"] = domains;
        j["tp_bytes"] = c.tpBytes;
        j["dp_bytes"] = c.dpBytes;
        j["overlap"] = c.overlap;
        j["phase_time_s"] = w.phaseTimeS;
    }
    const auto t2 = Clock::now();
    const double simulated = Simulator::Now().GetSeconds();
    const Transport::Totals tot = transport->GetTotals();
    j["workload"] = c.workload;
    j["topology"] = c.topology;
    j["backend"] = c.backend;
    j["gpus"] = c.gpus;
    j["preset"] = p.platform.name; // "<preset>+attributes" when --ns3::HbDomain::* changed it
    j["radix"] = c.radix;
    j["setup_wall_s"] = std::chrono::duration<double>(t1 - t0).count();
    j["run_wall_s"] = std::chrono::duration<double>(t2 - t1).count();
    j["wall_s"] = std::chrono::duration<double>(t2 - t0).count();
    j["cpu_s"] = CpuSeconds() - cpu0;
    j["peak_rss_bytes"] = PeakRssBytes();
    j["flows"] = tot.messagesSent;
    j["messages_delivered"] = tot.messagesDelivered;
    j["bytes_delivered"] = tot.bytesDelivered;
    j["simulated_time_s"] = simulated;
    if (installed.flow)
    {
        const FlowTransport::Stats s = installed.flow->GetStats();
        j["peak_active_flows"] = s.peakActiveFlows;
        j["recomputations"] = s.recomputations;
        j["queued_messages"] = s.queuedMessages;
        j["flows_recomputed"] = s.flowsRecomputed;
        j["distance_fields"] = s.distanceFields;
    }
    installed.Dispose();
    Simulator::Destroy();
    return j;
}

/// RunOne in a child process (own peak memory); the result comes back on a pipe.
nlohmann::json
RunInChild(const ScaleConfig& c)
{
    int fd[2];
    FabricRequire(pipe(fd) == 0, "pipe", "failed", "a pipe");
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0)
    {
        close(fd[0]);
        std::string out;
        try
        {
            out = RunOne(c).dump();
        }
        catch (const std::exception& e)
        {
            out = nlohmann::json({{"error", e.what()}}).dump();
        }
        size_t done = 0;
        while (done < out.size())
        {
            const ssize_t n = write(fd[1], out.data() + done, out.size() - done);
            if (n <= 0)
            {
                break;
            }
            done += n;
        }
        close(fd[1]);
        _exit(0);
    }
    close(fd[1]);
    std::string in;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd[0], buf, sizeof(buf))) > 0)
    {
        in.append(buf, n);
    }
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (in.empty())
    {
        return {{"error", fmt::format("child exited with status {}", status)}};
    }
    return nlohmann::json::parse(in);
}

void
PrintHeader()
{
    fmt::print(
        "{:>15} {:>7} {:>9} {:>6} {:>10} {:>10} {:>9} {:>9} {:>10} {:>10} {:>12} {:>12} {:>12} "
        "{:>10}\n",
        "topology",
        "backend",
        "workload",
        "gpus",
        "setup(s)",
        "run(s)",
        "wall(s)",
        "cpu(s)",
        "rss(MiB)",
        "flows",
        "peak-flows",
        "sim(ms)",
        "Eq.1(ms)",
        "TPxDP");
}

void
PrintRow(const nlohmann::json& j)
{
    if (j.contains("error"))
    {
        return; // reported on stderr at the end, exit status 2
    }
    fmt::print(
        "{:>15} {:>7} {:>9} {:>6} {:>10.2f} {:>10.2f} {:>9.2f} {:>9.2f} {:>10.0f} {:>10} {:>12} "
        "{:>12.3f} {:>12} {:>10}\n",
        j["topology"].get<std::string>(),
        j["backend"].get<std::string>(),
        j["workload"].get<std::string>(),
        j["gpus"].get<uint32_t>(),
        j["setup_wall_s"].get<double>(),
        j["run_wall_s"].get<double>(),
        j["wall_s"].get<double>(),
        j["cpu_s"].get<double>(),
        j["peak_rss_bytes"].get<double>() / (1 << 20),
        j["flows"].get<uint64_t>(),
        j.contains("peak_active_flows") ? std::to_string(j["peak_active_flows"].get<uint64_t>())
                                        : std::string("-"),
        j["simulated_time_s"].get<double>() * 1e3,
        j.contains("eq1_iteration_s")
            ? fmt::format("{:.3f}", j["eq1_iteration_s"].get<double>() * 1e3)
            : std::string("-"),
        j.contains("tp") ? fmt::format("{}x{}", j["tp"].get<uint32_t>(), j["dp"].get<uint32_t>())
                         : std::string("-"));
    std::fflush(stdout);
}

} // namespace

int
main(int argc, char* argv[])
{
    ScaleConfig c;
    std::string topology = "both";
    bool table = false;
    uint32_t packetMaxGpus = 1024;
    double packetMaxBytes = 1e11;
    uint64_t calibrationBytes = 1 << 20;
    std::string json;

    ProgramFlags cmd("flow-scale", __FILE__);
    cmd.Usage("One training iteration (or TP and DP collective phases) at scale on the "
              "flow-level backend; prints wall time, peak memory, flows, simulated time.");
    cmd.AddValue("workload",
                 "iteration (one training iteration) | phases (collectives only)",
                 c.workload);
    cmd.AddValue("model",
                 fmt::format("iteration: model preset: {}", fmt::join(LlmModel::Names(), "|")),
                 c.model);
    cmd.AddValue("tp",
                 "iteration: TP size (0: the feasible size with the shortest Eq. 1 time)",
                 c.tp);
    cmd.AddValue("micro-batches", "iteration: micro-batches per replica", c.microBatches);
    cmd.AddValue("granularity", "iteration: TP AllReduces per layer | micro-batch", c.granularity);
    cmd.AddValue("gpus",
                 "number of GPUs (1k, 4k, 16k, 32k: 1024, 4096, 16384, 32768; not with --table)",
                 c.gpus);
    cmd.AddValue("preset", "platform preset", c.preset);
    cmd.AddValue("radix", "switch radix", c.radix);
    cmd.AddValue("topology",
                 "rail-only | rail-optimized | both | direct-connect (with --graph)",
                 topology);
    c.dc.Add(cmd);
    cmd.AddValue("backend", "flow | packet (not with --table)", c.backend);
    cmd.AddValue("tp-bytes", "phases: TP allreduce size (bytes)", c.tpBytes);
    cmd.AddValue("dp-bytes", "phases: DP allreduce size (bytes)", c.dpBytes);
    cmd.AddValue("tp-size",
                 "phases: TP group size inside a domain (0: the whole domain)",
                 c.tpSize);
    cmd.AddValue("overlap", "phases: run the TP and DP phases at once", c.overlap);
    cmd.AddValue("table", "scaling table: 1k, 4k, 16k, 32k GPUs", table);
    cmd.AddValue("packet-max-gpus", "--table: packet backend up to this many GPUs", packetMaxGpus);
    cmd.AddValue("packet-max-bytes",
                 "--table: run the workload itself at packet level up to this many simulated "
                 "bytes; above, a calibration run estimates its wall time",
                 packetMaxBytes);
    cmd.AddValue("calibration-bytes",
                 "--table: message size of the packet-level calibration run (phases workload)",
                 calibrationBytes);
    cmd.AddValue("json", "write the results as JSON to this path", json);
    cmd.UseFabricScheduler();
    cmd.Parse(argc, argv);

    // the scheduler as the user chose it (--SchedulerType; by default the
    // module's, as in every program; ns-3's map ran these workloads 16-19 %
    // faster than the heap this program forced until 2026-12-01, which also
    // overrode the flag)
    TypeIdValue scheduler;
    GlobalValue::GetValueByName("SchedulerType", scheduler);
    try
    {
        FabricRequire(topology == "both" || topology == "rail-only" ||
                          topology == "rail-optimized" || topology == "direct-connect",
                      "--topology",
                      topology,
                      "rail-only, rail-optimized, both or direct-connect");
        c.dc.Require(cmd);
        // a graph has one size: not the --table's sweep of GPU counts
        cmd.OnlyWith("graph",
                     topology == "direct-connect" && !table,
                     "with --topology=direct-connect, without --table");
        FabricRequire(topology != "direct-connect" || !c.dc.graph.empty(),
                      "--topology",
                      topology,
                      "direct-connect with a --graph (e.g. --graph=Hypercube(5))");
        // the platform as simulated: the preset with any --ns3::HbDomain::* flag
        const HbDomainPreset platform = TopologyHelper::GetPlatform(c.preset);
        CheckNames(c);
        // each workload reads only its own group of flags; --table sets the
        // GPU counts and backends itself
        for (const char* f : {"model", "tp", "micro-batches", "granularity"})
        {
            cmd.OnlyWith(f, c.workload == "iteration", "with --workload=iteration");
        }
        for (const char* f : {"tp-bytes", "dp-bytes", "tp-size", "overlap"})
        {
            cmd.OnlyWith(f, c.workload == "phases", "with --workload=phases");
        }
        for (const char* f : {"packet-max-gpus", "packet-max-bytes", "calibration-bytes"})
        {
            cmd.OnlyWith(f, table, "with --table");
        }
        for (const char* f : {"gpus", "backend"})
        {
            cmd.OnlyWith(f, !table, "without --table (it runs 1k to 32k GPUs on both backends)");
        }
        const std::vector<std::string> topologies =
            topology == "both" ? std::vector<std::string>{"rail-only", "rail-optimized"}
                               : std::vector<std::string>{topology};
        nlohmann::json runs = nlohmann::json::array();
        if (c.workload == "iteration")
        {
            fmt::print("# flow-scale: one {} training iteration on {} (K = {}), radix {}; PP 1, "
                       "TP {}, DP = N / TP with hierarchical AllReduce; {} micro-batch(es), TP "
                       "AllReduces per {}\n",
                       c.model,
                       platform.name,
                       platform.gpusPerDomain,
                       c.radix,
                       c.tp == 0 ? std::string("= Eq. 1's best feasible") : std::to_string(c.tp),
                       c.microBatches,
                       c.granularity);
        }
        else
        {
            fmt::print("# flow-scale: {} (K = {}), radix {}, TP allreduce {} B (group {}), then DP "
                       "allreduce {} B on every rail{}\n",
                       platform.name,
                       platform.gpusPerDomain,
                       c.radix,
                       c.tpBytes,
                       c.tpSize == 0 ? std::string("= domain") : std::to_string(c.tpSize),
                       c.dpBytes,
                       c.overlap ? " (overlapped)" : "");
        }
        PrintHeader();
        if (table)
        {
            for (uint32_t gpus : {1024u, 4096u, 16384u, 32768u})
            {
                for (const auto& t : topologies)
                {
                    ScaleConfig r = c;
                    r.gpus = gpus;
                    r.topology = t;
                    r.backend = "flow";
                    nlohmann::json j = RunInChild(r);
                    if (gpus <= packetMaxGpus && !j.contains("error"))
                    {
                        // The packet level where it fits: the same run when
                        // its bytes allow it, else a calibration run (the
                        // collective phases with small messages) whose
                        // simulated bytes per wall second estimate the
                        // iteration's packet-level wall time.
                        ScaleConfig pk = r;
                        pk.backend = "packet";
                        const double flowBytes = j["bytes_delivered"].get<double>();
                        const bool direct = flowBytes <= packetMaxBytes;
                        if (!direct)
                        {
                            pk.workload = "phases";
                            pk.tpBytes = calibrationBytes;
                            pk.dpBytes = calibrationBytes;
                            pk.tpSize = 0;
                            pk.overlap = false;
                        }
                        nlohmann::json pj = RunInChild(pk);
                        PrintRow(pj);
                        if (!direct && !pj.contains("error"))
                        {
                            const double rate = pj["bytes_delivered"].get<double>() /
                                                pj["run_wall_s"].get<double>();
                            j["packet_estimate_wall_s"] = flowBytes / rate;
                            fmt::print("{:>15} packet level for this {}: {:.3g} simulated bytes at "
                                       "{:.3g} B per wall second (the calibration above) = about "
                                       "{:.3g} s ({:.3g} days); not run\n",
                                       "",
                                       c.workload,
                                       flowBytes,
                                       rate,
                                       flowBytes / rate,
                                       flowBytes / rate / 86400);
                        }
                        runs.push_back(pj);
                    }
                    PrintRow(j);
                    runs.push_back(j);
                }
            }
        }
        else
        {
            for (const auto& t : topologies)
            {
                ScaleConfig r = c;
                r.topology = t;
                const nlohmann::json j = topologies.size() > 1 ? RunInChild(r) : RunOne(r);
                PrintRow(j);
                runs.push_back(j);
            }
        }
        if (!json.empty())
        {
            WriteTextFile(
                "--json",
                json,
                nlohmann::json({{"scheduler", scheduler.Get().GetName()}, {"runs", runs}}).dump(2) +
                    "\n");
        }
        // a configuration rejected in a child process (bad --tp, --model, ...)
        for (const auto& r : runs)
        {
            if (r.contains("error"))
            {
                fmt::print(stderr, "flow-scale: {}\n", r["error"].get<std::string>());
                return 2;
            }
        }
    }
    catch (const FabricConfigError& e)
    {
        fmt::print(stderr, "flow-scale: {}\n", e.what());
        return 2;
    }
    return 0;
}
