/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// examples/multi-job: several training jobs on one cluster. Each job is a
// GPT iteration with tensor parallelism over K GPUs and data parallelism
// over the rest; the jobs are placed by a policy (packed by HB domain,
// rail-aligned, random, or fragmented: part of every domain busy), then run
// together and each alone at the same place, on rail-only, the
// rail-optimized fat-tree and the classic fat-tree. Prints each job's
// iteration time, its slowdown against running alone, and where its bytes
// go: inside a domain, along a rail, or across rails and domains (which
// rail-only forwards through NVLink).
// Under mpirun -np N (a build with MPI) its packet-level runs are cut over
// the ranks (--partition) and print what one process prints, once.
#include "ns3/multi-job.h"

#include "program-support.h"
#include "results-table.h"

#include "ns3/core-module.h"
#include "ns3/gpu-fabric-module.h"
#include "ns3/program-flags.h"
#include "ns3/topology-helper.h"
#include "ns3/transport-helper.h"

#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>

using namespace ns3;

namespace
{

/// Bytes of a program by where they go: {intra-domain, same rail, other}.
std::array<double, 3>
TrafficClasses(const ParallelProgram& p, uint32_t k)
{
    std::array<double, 3> out{};
    std::map<std::tuple<std::string, std::string, size_t, uint64_t, uint64_t, uint32_t>,
             std::vector<PairBytes>>
        cache;
    for (const ProgramComm& c : p.comms)
    {
        std::vector<PairBytes> local;
        if (c.collective == "sendrecv")
        {
            local = {{0, 1, c.bytes, 1}};
        }
        else
        {
            const auto key = std::make_tuple(c.collective,
                                             c.algorithm,
                                             c.members.size(),
                                             c.bytes,
                                             c.chunkBytes,
                                             c.domainSize);
            auto it = cache.find(key);
            if (it == cache.end())
            {
                ScheduleRequest q;
                q.collective = c.collective;
                q.algorithm = c.algorithm;
                q.ranks = static_cast<uint32_t>(c.members.size());
                q.bytes = c.bytes;
                q.chunkBytes = c.chunkBytes;
                q.domainSize = c.domainSize;
                it = cache.emplace(key, MakeSchedule(q).TrafficMatrix()).first;
            }
            local = it->second;
        }
        for (const PairBytes& pb : local)
        {
            const uint32_t s = c.members[pb.src];
            const uint32_t d = c.members[pb.dst];
            const int cls = s / k == d / k ? 0 : (s % k == d % k ? 1 : 2);
            out[cls] += static_cast<double>(pb.bytes);
        }
    }
    return out;
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t gpus = 64;
    uint32_t jobs = 2;
    uint32_t jobGpus = 16;
    std::string preset = "dgx-h100";
    std::string topologies = "rail-only,rail-optimized,fat-tree";
    std::string placements = "packed,rail-aligned,random,fragmented";
    double busyFraction = 0.5;
    uint64_t seed = 1;
    double stagger = 0;
    uint32_t layers = 2;
    uint32_t hidden = 2048;
    uint32_t seq = 1024;
    uint32_t microBatches = 2;
    std::string backend = "flow";
    std::string json;

    ProgramFlags cmd("multi-job", __FILE__);
    const RunOutputs outputs(cmd); // --timeline, --link-util, --progress
    cmd.Usage("Several GPT training jobs on one cluster: per-job iteration time and slowdown "
              "against the job alone, and where its traffic goes, per topology and placement.");
    cmd.AddInteger("gpus", "GPUs of the cluster (a multiple of K)", gpus, 2, 1u << 16);
    cmd.AddInteger("jobs", "number of jobs", jobs, 1, 64);
    cmd.AddInteger("job-gpus",
                   "GPUs per job (a multiple of K: TP K, DP the rest)",
                   jobGpus,
                   2,
                   1u << 16);
    cmd.AddValue("preset", "platform: dgx-a100, dgx-h100, ...", preset);
    cmd.AddValue("topologies", "comma-separated: rail-only, rail-optimized, fat-tree", topologies);
    cmd.AddValue("placements",
                 "comma-separated: packed, rail-aligned, random, fragmented",
                 placements);
    cmd.AddValue("busy-fraction",
                 "fragmented: fraction of every HB domain taken by other work",
                 busyFraction);
    cmd.AddInteger("seed",
                   "random placement's seed",
                   seed,
                   0,
                   std::numeric_limits<uint64_t>::max());
    cmd.AddValue("stagger", "job j starts at j x this many seconds", stagger);
    cmd.AddInteger("layers", "transformer blocks per job", layers, 1, 1024);
    cmd.AddInteger("hidden", "model width d_model", hidden, 16, 1u << 16);
    cmd.AddInteger("seq", "sequence length (tokens)", seq, 1, 1u << 20);
    cmd.AddInteger("micro-batches", "micro-batches per replica", microBatches, 1, 1024);
    cmd.AddValue("backend", "flow | packet", backend);
    cmd.AddValue("json", "write the results as JSON to this path", json);
    std::string partition = "domain";
    cmd.AddPartition(partition);
    cmd.UseFabricScheduler();
    cmd.Parse(argc, argv);
    const bool distributed =
        cmd.Distribute(argc, argv, backend == "packet", "the flow level is not distributed");

    try
    {
        FabricRequire(backend == "packet" || backend == "flow",
                      "--backend",
                      backend,
                      "packet or flow");
        cmd.OnlyWith("partition", distributed, ProgramFlags::kDistributedOnly);
        TransportHelper transports(backend, "--backend");
        transports.SetPartition(partition);
        FabricRequire(stagger >= 0 && stagger <= 3600,
                      "--stagger",
                      cmd.ValueText("stagger"),
                      "seconds in [0, 3600]");
        cmd.OnlyWith("busy-fraction",
                     placements.find("fragmented") != std::string::npos,
                     "with the fragmented placement");
        cmd.OnlyWith("seed",
                     placements.find("random") != std::string::npos,
                     "with the random placement");
        const HbDomainPreset hw = TopologyHelper::GetPlatform(preset);
        const uint32_t k = hw.gpusPerDomain;
        FabricRequire(jobGpus % k == 0,
                      "--job-gpus",
                      jobGpus,
                      fmt::format("a multiple of K = {} ({})", k, preset));
        FabricRequire(gpus % k == 0, "--gpus", gpus, fmt::format("a multiple of K = {}", k));
        const auto topoNames = SplitList("--topologies", topologies);
        const auto placeNames = SplitList("--placements", placements);
        for (const auto& t : topoNames)
        {
            FabricRequire(t == "rail-only" || t == "rail-optimized" || t == "fat-tree",
                          "--topologies",
                          t,
                          "rail-only, rail-optimized, fat-tree");
        }
        // every placement checked before anything runs
        const std::vector<uint32_t> sizes(jobs, jobGpus);
        std::map<std::string, std::vector<std::vector<uint32_t>>> places;
        for (const auto& name : placeNames)
        {
            try
            {
                places[name] = PlaceJobs(sizes, gpus, k, name, busyFraction, seed);
            }
            catch (const FabricConfigError& e)
            {
                throw FabricConfigError("--placements",
                                        name,
                                        fmt::format("a placement the jobs fit ({})", e.what()));
            }
        }

        const uint32_t dp = jobGpus / k;
        const ParallelProgram job = TpDpGptProgram(hw, dp, layers, hidden, seq, microBatches);
        std::vector<ClusterJob> specs;
        for (uint32_t j = 0; j < jobs; ++j)
        {
            specs.push_back({fmt::format("job{}", j), job, j * stagger});
        }

        using Column = ResultsColumn;
        const unsigned both = Column::kTable | Column::kJson;
        ResultsTable table(
            {Column{"topology", "topology", "", "{:<15}"}.In(both),
             Column{"placement", "placement", "", "{:<13}"}.In(both),
             Column{"job", "job", "", "{:<5}"}.In(both),
             Column{"iteration_time_s", "together ms", "s", "{:>12.4f}", 1e3}.In(both),
             Column{"alone_time_s", "alone ms", "s", "{:>10.4f}", 1e3}.In(both),
             Column{"slowdown", "slowdown", "", "{:>9.4f}"}.In(both),
             Column{"intra_domain_pct", "domain", "%", "{:>7.1f}"}.In(both),
             Column{"same_rail_pct", "rail", "%", "{:>6.1f}"}.In(both),
             Column{"cross_pct", "cross", "%", "{:>6.1f}"}.In(both)});
        fmt::print("multi-job: {} jobs of {} GPUs (TP {} x DP {}, {} layers, d {}) on {} GPUs "
                   "({}), {} backend\n",
                   jobs,
                   jobGpus,
                   k,
                   dp,
                   layers,
                   hidden,
                   gpus,
                   preset,
                   backend);
        fmt::print("{}", table.Heading());
        for (const auto& topoName : topoNames)
        {
            ClusterParams cp;
            cp.gpus = gpus;
            cp.platform = hw;
            const FabricTopology topo = TopologyHelper(cp).Create(topoName);
            auto run = [&](const std::vector<ClusterJob>& js,
                           const std::vector<std::vector<uint32_t>>& at) {
                InstalledTransport installed = transports.Install(topo);
                Ptr<ProgramRunner> runner =
                    RunProgram(CombineJobs(js, at, gpus), installed.transport);
                FabricRequire(runner->IsComplete(),
                              "jobs",
                              topoName,
                              "runs that complete (" + runner->GetFailureReport() + ")");
                std::vector<double> t = JobTimes(*runner, js, at);
                installed.Dispose();
                FabricDistributed::DestroySimulation();
                return t;
            };
            for (const auto& placeName : placeNames)
            {
                const auto& at = places.at(placeName);
                const std::vector<double> together = run(specs, at);
                for (uint32_t j = 0; j < jobs; ++j)
                {
                    const double alone = run({specs[j]}, {at[j]})[0];
                    const auto cls = TrafficClasses(CombineJobs({specs[j]}, {at[j]}, gpus), k);
                    const double total = std::max(1.0, cls[0] + cls[1] + cls[2]);
                    table.AddRow({topoName,
                                  placeName,
                                  specs[j].name,
                                  together[j],
                                  alone,
                                  together[j] / alone,
                                  100 * cls[0] / total,
                                  100 * cls[1] / total,
                                  100 * cls[2] / total});
                    fmt::print("{}", table.Line(table.Rows() - 1));
                }
            }
        }
        if (!json.empty())
        {
            WriteTextFile("--json",
                          json,
                          nlohmann::json({{"gpus", gpus},
                                          {"jobs", jobs},
                                          {"job_gpus", jobGpus},
                                          {"preset", preset},
                                          {"backend", backend},
                                          {"results", table.Json()}})
                                  .dump(2) +
                              "\n");
        }
    }
    catch (const FabricConfigError& e)
    {
        fmt::print(stderr, "multi-job: {}\n", e.what());
        return 2;
    }
    return 0;
}
