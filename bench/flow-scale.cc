/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
/**
 * bench/flow-scale: a training-iteration-like collective workload at scale on
 * the flow-level backend (and the packet backend where it fits).
 *
 * Workload (until the workload layer drives it): on N GPUs in HB domains of K
 * (default gh200-256: K = 256), first a TP phase: a ring allreduce of
 * --tp-bytes in every TP group (--tp-size consecutive ranks inside each
 * domain; --tp-size=K is one allreduce per domain), then a DP phase: a ring
 * allreduce of --dp-bytes on every rail (the N / K GPUs of one local index).
 * Each phase starts when the previous one has finished (--overlap: both at
 * once). Runs on rail-only and on rail-optimized (radix --radix).
 *
 * Prints wall time (topology and transport setup, simulation), CPU time
 * (user + system; on a shared machine the better measure), peak resident
 * memory (getrusage ru_maxrss of the process that ran that configuration),
 * the number of flows (messages), the peak of concurrent flows, and the
 * simulated times. --table runs 1k, 4k, 16k and 32k GPUs, each
 * configuration in a child process so that every row has its own peak
 * memory; the packet backend only up to --packet-max-gpus.
 * --json=PATH writes {"runs": [...]}.
 */
#include "ns3/core-module.h"
#include "ns3/gpu-fabric-module.h"
#include "ns3/program-support.h"

#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
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
};

/// \return CPU time (user + system) of this process so far, seconds
double
CpuSeconds()
{
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

uint64_t
PeakRssBytes()
{
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<uint64_t>(ru.ru_maxrss) * 1024; // Linux: kilobytes
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

nlohmann::json
RunOne(const ScaleConfig& c)
{
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    const double cpu0 = CpuSeconds();
    ClusterParams p;
    p.gpus = c.gpus;
    p.platform = HbDomainPreset::Get(c.preset);
    p.radix = c.radix;
    FabricRequire(c.topology == "rail-only" || c.topology == "rail-optimized",
                  "--topology",
                  c.topology,
                  "rail-only, rail-optimized or both");
    FabricRequire(c.backend == "flow" || c.backend == "packet",
                  "--backend",
                  c.backend,
                  "flow or packet");
    const uint32_t k = p.platform.gpusPerDomain;
    const uint32_t tp = c.tpSize == 0 ? k : c.tpSize;
    FabricRequire(tp >= 2 && k % tp == 0,
                  "--tp-size",
                  c.tpSize,
                  fmt::format("0 (the domain size) or a divisor >= 2 of the domain size {}", k));
    FabricRequire(c.gpus % k == 0 && c.gpus / k >= 2,
                  "--gpus",
                  c.gpus,
                  fmt::format("a multiple of the domain size {} with at least 2 domains", k));
    Ptr<Transport> transport;
    Ptr<Fabric> fabric;
    Ptr<FlowTransport> flow;
    {
        const FabricTopology topo =
            c.topology == "rail-only" ? BuildRailOnly(p) : BuildRailOptimized(p);
        if (c.backend == "flow")
        {
            flow = FlowHelper().Install(topo);
            transport = flow;
        }
        else
        {
            fabric = FabricHelper().Install(topo);
            transport = fabric->GetTransport();
        }
    }
    const auto t1 = Clock::now();
    CollectiveHelper helper(transport);
    Workload w;
    w.helper = &helper;
    w.overlap = c.overlap;
    const uint32_t domains = c.gpus / k;
    std::vector<std::vector<uint32_t>> tpGroups;
    for (uint32_t first = 0; first < c.gpus; first += tp)
    {
        std::vector<uint32_t> g(tp);
        for (uint32_t i = 0; i < tp; ++i)
        {
            g[i] = first + i;
        }
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
    const auto t2 = Clock::now();
    const double simulated = Simulator::Now().GetSeconds();
    const Transport::Totals tot = transport->GetTotals();
    nlohmann::json j = {
        {"topology", c.topology},
        {"backend", c.backend},
        {"gpus", c.gpus},
        {"preset", c.preset},
        {"radix", c.radix},
        {"tp_size", tp},
        {"dp_size", domains},
        {"tp_bytes", c.tpBytes},
        {"dp_bytes", c.dpBytes},
        {"overlap", c.overlap},
        {"setup_wall_s", std::chrono::duration<double>(t1 - t0).count()},
        {"run_wall_s", std::chrono::duration<double>(t2 - t1).count()},
        {"wall_s", std::chrono::duration<double>(t2 - t0).count()},
        {"cpu_s", CpuSeconds() - cpu0},
        {"peak_rss_bytes", PeakRssBytes()},
        {"flows", tot.messagesSent},
        {"messages_delivered", tot.messagesDelivered},
        {"simulated_time_s", simulated},
        {"phase_time_s", w.phaseTimeS},
    };
    if (flow)
    {
        const FlowTransport::Stats s = flow->GetStats();
        j["peak_active_flows"] = s.peakActiveFlows;
        j["recomputations"] = s.recomputations;
        j["flows_recomputed"] = s.flowsRecomputed;
        j["distance_fields"] = s.distanceFields;
    }
    if (fabric)
    {
        fabric->Dispose();
    }
    transport->Dispose();
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
    fmt::print("{:>15} {:>7} {:>6} {:>10} {:>10} {:>9} {:>9} {:>10} {:>10} {:>12} {:>12}\n",
               "topology",
               "backend",
               "gpus",
               "setup(s)",
               "run(s)",
               "wall(s)",
               "cpu(s)",
               "rss(MiB)",
               "flows",
               "peak-flows",
               "sim(ms)");
}

void
PrintRow(const nlohmann::json& j)
{
    if (j.contains("error"))
    {
        fmt::print("error: {}\n", j["error"].get<std::string>());
        return;
    }
    fmt::print("{:>15} {:>7} {:>6} {:>10.2f} {:>10.2f} {:>9.2f} {:>9.2f} {:>10.0f} {:>10} {:>12} "
               "{:>12.3f}\n",
               j["topology"].get<std::string>(),
               j["backend"].get<std::string>(),
               j["gpus"].get<uint32_t>(),
               j["setup_wall_s"].get<double>(),
               j["run_wall_s"].get<double>(),
               j["wall_s"].get<double>(),
               j["cpu_s"].get<double>(),
               j["peak_rss_bytes"].get<double>() / (1 << 20),
               j["flows"].get<uint64_t>(),
               j.contains("peak_active_flows")
                   ? std::to_string(j["peak_active_flows"].get<uint64_t>())
                   : std::string("-"),
               j["simulated_time_s"].get<double>() * 1e3);
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
    std::string json;

    CommandLine cmd(__FILE__);
    cmd.Usage("TP allreduce in every HB domain, then DP allreduce on every rail, at scale, on "
              "the flow-level backend; prints wall time, peak memory, flows, simulated time.");
    cmd.AddValue("gpus", "number of GPUs (1k, 4k, 16k, 32k: 1024, 4096, 16384, 32768)", c.gpus);
    cmd.AddValue("preset", "platform preset", c.preset);
    cmd.AddValue("radix", "switch radix", c.radix);
    cmd.AddValue("topology", "rail-only | rail-optimized | both", topology);
    cmd.AddValue("backend", "flow | packet", c.backend);
    cmd.AddValue("tp-bytes", "TP allreduce size (bytes)", c.tpBytes);
    cmd.AddValue("dp-bytes", "DP allreduce size (bytes)", c.dpBytes);
    cmd.AddValue("tp-size", "TP group size inside a domain (0: the whole domain)", c.tpSize);
    cmd.AddValue("overlap", "run the TP and DP phases at once", c.overlap);
    cmd.AddValue("table", "scaling table: 1k, 4k, 16k, 32k GPUs", table);
    cmd.AddValue("packet-max-gpus", "--table: packet backend up to this many GPUs", packetMaxGpus);
    cmd.AddValue("json", "write the results as JSON to this path", json);
    // unknown flags exit 2 with the allowed list (CommandLine would exit 1)
    RejectUnknownFlags("flow-scale",
                       argc,
                       argv,
                       {"gpus",
                        "preset",
                        "radix",
                        "topology",
                        "backend",
                        "tp-bytes",
                        "dp-bytes",
                        "tp-size",
                        "overlap",
                        "table",
                        "packet-max-gpus",
                        "json"});
    cmd.Parse(argc, argv);

    GlobalValue::Bind("SchedulerType", StringValue("ns3::HeapScheduler"));
    try
    {
        FabricRequire(topology == "both" || topology == "rail-only" || topology == "rail-optimized",
                      "--topology",
                      topology,
                      "rail-only, rail-optimized or both");
        const std::vector<std::string> topologies =
            topology == "both" ? std::vector<std::string>{"rail-only", "rail-optimized"}
                               : std::vector<std::string>{topology};
        nlohmann::json runs = nlohmann::json::array();
        fmt::print("# flow-scale: {} (K = {}), radix {}, TP allreduce {} B (group {}), then DP "
                   "allreduce {} B on every rail{}\n",
                   c.preset,
                   HbDomainPreset::Get(c.preset).gpusPerDomain,
                   c.radix,
                   c.tpBytes,
                   c.tpSize == 0 ? std::string("= domain") : std::to_string(c.tpSize),
                   c.dpBytes,
                   c.overlap ? " (overlapped)" : "");
        PrintHeader();
        if (table)
        {
            for (uint32_t gpus : {1024u, 4096u, 16384u, 32768u})
            {
                for (const auto& t : topologies)
                {
                    for (const std::string backend : {"packet", "flow"})
                    {
                        if (backend == "packet" && gpus > packetMaxGpus)
                        {
                            continue;
                        }
                        ScaleConfig r = c;
                        r.gpus = gpus;
                        r.topology = t;
                        r.backend = backend;
                        const nlohmann::json j = RunInChild(r);
                        PrintRow(j);
                        runs.push_back(j);
                    }
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
            std::ofstream f(json);
            FabricRequire(f.good(), "--json", json, "a writable file path");
            f << nlohmann::json({{"runs", runs}}).dump(2) << "\n";
        }
    }
    catch (const FabricConfigError& e)
    {
        fmt::print(stderr, "flow-scale: {}\n", e.what());
        return 2;
    }
    return 0;
}
