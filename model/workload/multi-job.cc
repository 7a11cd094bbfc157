/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "multi-job.h"

#include "ns3/fabric-error.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace ns3
{

std::vector<std::string>
JobPlacementNames()
{
    return {"packed", "fragmented", "random", "rail-aligned"};
}

std::vector<std::vector<uint32_t>>
PlaceJobs(const std::vector<uint32_t>& jobGpus,
          uint32_t totalGpus,
          uint32_t gpusPerDomain,
          const std::string& policy,
          double busyFraction,
          uint64_t seed)
{
    const auto names = JobPlacementNames();
    FabricRequire(std::find(names.begin(), names.end(), policy) != names.end(),
                  "placement",
                  policy,
                  "packed, fragmented, random or rail-aligned");
    FabricRequire(gpusPerDomain >= 1 && totalGpus % gpusPerDomain == 0,
                  "placement GPUs per domain",
                  gpusPerDomain,
                  fmt::format("a divisor of the cluster's {} GPUs", totalGpus));
    FabricRequire(busyFraction >= 0 && busyFraction < 1,
                  "placement busy fraction",
                  busyFraction,
                  "in [0, 1)");
    uint64_t wanted = 0;
    for (uint32_t n : jobGpus)
    {
        FabricRequire(n >= 1, "job GPUs", n, "at least 1");
        wanted += n;
    }
    const uint32_t domains = totalGpus / gpusPerDomain;
    // the GPUs jobs may take, in the order they are handed out
    std::vector<uint32_t> free;
    if (policy == "fragmented")
    {
        const auto busy = static_cast<uint32_t>(std::ceil(busyFraction * gpusPerDomain));
        for (uint32_t d = 0; d < domains; ++d)
        {
            for (uint32_t l = busy; l < gpusPerDomain; ++l)
            {
                free.push_back(d * gpusPerDomain + l);
            }
        }
    }
    else
    {
        free.resize(totalGpus);
        std::iota(free.begin(), free.end(), 0);
        if (policy == "random")
        {
            std::mt19937_64 rng(seed);
            // Fisher-Yates with our own draws: std::shuffle's order is the
            // library's, and results must be the same everywhere
            for (size_t i = free.size(); i > 1; --i)
            {
                std::swap(free[i - 1], free[rng() % i]);
            }
        }
    }
    FabricRequire(wanted <= free.size(),
                  "jobs' GPUs",
                  wanted,
                  fmt::format("at most the {} GPUs the {} placement leaves on {} GPUs",
                              free.size(),
                              policy,
                              totalGpus));
    std::vector<std::vector<uint32_t>> out;
    if (policy == "rail-aligned")
    {
        // next free domain per rail
        std::vector<uint32_t> next(gpusPerDomain, 0);
        for (uint32_t n : jobGpus)
        {
            std::vector<uint32_t> gpus;
            for (uint32_t r = 0; r < n; ++r)
            {
                const uint32_t rail = r % gpusPerDomain;
                FabricRequire(next[rail] < domains,
                              "jobs' GPUs",
                              wanted,
                              fmt::format("jobs that fit rail by rail ({} domains of {})",
                                          domains,
                                          gpusPerDomain));
                gpus.push_back(next[rail]++ * gpusPerDomain + rail);
            }
            out.push_back(std::move(gpus));
        }
        return out;
    }
    size_t at = 0;
    for (uint32_t n : jobGpus)
    {
        out.emplace_back(free.begin() + at, free.begin() + at + n);
        at += n;
    }
    return out;
}

ParallelProgram
CombineJobs(const std::vector<ClusterJob>& jobs,
            const std::vector<std::vector<uint32_t>>& placement,
            uint32_t totalGpus)
{
    FabricRequire(placement.size() == jobs.size(),
                  "placement jobs",
                  placement.size(),
                  fmt::format("one GPU list per job ({})", jobs.size()));
    ParallelProgram out;
    out.ranks = totalGpus;
    out.tasks.resize(totalGpus);
    std::vector<int64_t> owner(totalGpus, -1);
    for (size_t j = 0; j < jobs.size(); ++j)
    {
        const ClusterJob& job = jobs[j];
        job.program.Validate();
        const auto& gpus = placement[j];
        FabricRequire(gpus.size() == job.program.ranks,
                      fmt::format("placement of job {} ({})", j, job.name),
                      gpus.size(),
                      fmt::format("one GPU per rank ({})", job.program.ranks));
        FabricRequire(job.startSeconds >= 0 && std::isfinite(job.startSeconds),
                      fmt::format("start of job {} ({})", j, job.name),
                      job.startSeconds,
                      "a time >= 0");
        for (uint32_t g : gpus)
        {
            FabricRequire(g < totalGpus,
                          fmt::format("placement of job {} ({})", j, job.name),
                          g,
                          fmt::format("a GPU below {}", totalGpus));
            FabricRequire(owner[g] < 0,
                          fmt::format("placement of job {} ({})", j, job.name),
                          g,
                          fmt::format("a GPU no other job has (job {} has it)", owner[g]));
            owner[g] = static_cast<int64_t>(j);
        }
        const auto commBase = static_cast<uint32_t>(out.comms.size());
        for (ProgramComm c : job.program.comms)
        {
            for (uint32_t& m : c.members)
            {
                m = gpus[m];
            }
            c.label = job.name + ": " + c.label;
            out.comms.push_back(std::move(c));
        }
        for (uint32_t r = 0; r < job.program.ranks; ++r)
        {
            auto& tasks = out.tasks[gpus[r]];
            // a GPU holds one job: the job's tasks keep their indices after
            // the start task
            ProgramTask start;
            start.seconds = job.startSeconds;
            tasks.push_back(start);
            for (ProgramTask t : job.program.tasks[r])
            {
                for (uint32_t& d : t.deps)
                {
                    ++d;
                }
                t.deps.insert(t.deps.begin(), 0);
                if (t.kind == ProgramTask::Kind::Comm)
                {
                    t.comm += commBase;
                }
                tasks.push_back(std::move(t));
            }
        }
    }
    out.Validate();
    return out;
}

std::vector<double>
JobTimes(const ProgramRunner& runner,
         const std::vector<ClusterJob>& jobs,
         const std::vector<std::vector<uint32_t>>& placement)
{
    std::vector<double> times;
    for (size_t j = 0; j < jobs.size(); ++j)
    {
        double end = jobs[j].startSeconds;
        for (uint32_t g : placement.at(j))
        {
            end = std::max(end, runner.GetRankFinishTime(g).GetSeconds());
        }
        times.push_back(end - jobs[j].startSeconds);
    }
    return times;
}

} // namespace ns3
