/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Several jobs on one fabric: placements are disjoint and follow their
// policy; jobs on disjoint resources take exactly their solo times, at any
// start; two jobs whose transfers share one link take the max-min share of
// it at the flow level, and the link's time at the packet level.
#include "ns3/core-module.h"
#include "ns3/gpu-fabric-module.h"
#include "ns3/multi-job.h"
#include "ns3/transport-helper.h"

#include <gtest/gtest.h>
#include <set>

using namespace ns3;

namespace
{

/// A job of \p n ranks: compute, then an all-reduce of \p bytes over all.
ParallelProgram
AllReduceJob(uint32_t n, uint64_t bytes, double computeSeconds)
{
    ParallelProgram p;
    p.ranks = n;
    p.tasks.resize(n);
    ProgramComm c;
    c.collective = "allreduce";
    c.algorithm = "ring";
    c.bytes = bytes;
    c.label = "allreduce";
    for (uint32_t r = 0; r < n; ++r)
    {
        c.members.push_back(r);
        ProgramTask compute;
        compute.seconds = computeSeconds;
        ProgramTask comm;
        comm.kind = ProgramTask::Kind::Comm;
        comm.deps = {0};
        p.tasks[r] = {compute, comm};
    }
    p.comms.push_back(c);
    return p;
}

/// A job of two ranks: rank 0 sends \p bytes to rank 1.
ParallelProgram
SendJob(uint64_t bytes)
{
    ParallelProgram p;
    p.ranks = 2;
    p.tasks.resize(2);
    p.comms.push_back({"sendrecv", "direct", {0, 1}, bytes, 0, 0, "send"});
    for (uint32_t r = 0; r < 2; ++r)
    {
        ProgramTask t;
        t.kind = ProgramTask::Kind::Comm;
        p.tasks[r] = {t};
    }
    return p;
}

/// Each job's time when \p jobs run together at \p placement on a 32-GPU
/// DGX-H100 rail-only fabric.
std::vector<double>
RunJobs(const std::vector<ClusterJob>& jobs,
        const std::vector<std::vector<uint32_t>>& placement,
        const std::string& backend)
{
    ClusterParams cp;
    cp.gpus = 32;
    cp.platform = HbDomainPreset::Get("dgx-h100");
    InstalledTransport installed = TransportHelper(backend, "backend").Install(BuildRailOnly(cp));
    Ptr<ProgramRunner> runner = RunProgram(CombineJobs(jobs, placement, 32), installed.transport);
    EXPECT_TRUE(runner->IsComplete());
    const std::vector<double> times = JobTimes(*runner, jobs, placement);
    installed.Dispose();
    Simulator::Destroy();
    return times;
}

TEST(MultiJob, PlacementsAreDisjointAndFollowTheirPolicy)
{
    // packed: whole domains in order
    auto p = PlaceJobs({8, 12}, 32, 8, "packed");
    EXPECT_EQ(p[0], (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(p[1].front(), 8U);
    EXPECT_EQ(p[1].back(), 19U);
    // fragmented: half of every domain busy, so 8 GPUs span two domains
    p = PlaceJobs({8}, 32, 8, "fragmented", 0.5);
    EXPECT_EQ(p[0], (std::vector<uint32_t>{4, 5, 6, 7, 12, 13, 14, 15}));
    // rail-aligned: rank r on rail r mod K
    p = PlaceJobs({4, 16}, 32, 8, "rail-aligned");
    EXPECT_EQ(p[0], (std::vector<uint32_t>{0, 1, 2, 3}));
    for (uint32_t r = 0; r < 16; ++r)
    {
        EXPECT_EQ(p[1][r] % 8, r % 8);
    }
    EXPECT_EQ(p[1][0], 8U); // rail 0 of domain 0 is job 0's
    EXPECT_EQ(p[1][4], 4U); // rail 4 of domain 0 is free
    // random: disjoint, the same for a seed, another for another seed
    const auto a = PlaceJobs({10, 10}, 32, 8, "random", 0, 7);
    EXPECT_EQ(a, PlaceJobs({10, 10}, 32, 8, "random", 0, 7));
    EXPECT_NE(a, PlaceJobs({10, 10}, 32, 8, "random", 0, 8));
    for (const auto& policy : JobPlacementNames())
    {
        const auto q = PlaceJobs({5, 9, 3}, 32, 8, policy, 0.25, 3);
        std::set<uint32_t> seen;
        size_t n = 0;
        for (const auto& job : q)
        {
            seen.insert(job.begin(), job.end());
            n += job.size();
        }
        EXPECT_EQ(seen.size(), n) << policy;
        EXPECT_LT(*seen.rbegin(), 32U) << policy;
    }
    // what does not fit is refused, by name
    EXPECT_THROW(PlaceJobs({20, 20}, 32, 8, "packed"), FabricConfigError);
    EXPECT_THROW(PlaceJobs({20}, 32, 8, "fragmented", 0.5), FabricConfigError);
    EXPECT_THROW(PlaceJobs({8}, 32, 8, "nope"), FabricConfigError);
    try
    {
        CombineJobs({{"a", SendJob(1), 0}, {"b", SendJob(1), 0}}, {{0, 1}, {1, 2}}, 32);
        ADD_FAILURE() << "overlapping jobs accepted";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_NE(std::string(e.what()).find("job 1 (b)"), std::string::npos) << e.what();
    }
}

TEST(MultiJob, JobsOnDisjointResourcesTakeExactlyTheirSoloTimes)
{
    // two tensor-parallel jobs, each in its own domain, the second starting
    // later; and a data-parallel job across domains on rails the others
    // do not use
    const std::vector<ClusterJob> jobs = {{"tp0", AllReduceJob(8, 8 << 20, 20e-6), 0},
                                          {"tp1", AllReduceJob(8, 8 << 20, 20e-6), 150e-6},
                                          {"dp", AllReduceJob(2, 4 << 20, 10e-6), 30e-6}};
    const std::vector<std::vector<uint32_t>> placement = {{0, 1, 2, 3, 4, 5, 6, 7},
                                                          {8, 9, 10, 11, 12, 13, 14, 15},
                                                          {16, 24}};
    for (const char* backend : {"flow", "packet"})
    {
        const std::vector<double> together = RunJobs(jobs, placement, backend);
        for (size_t j = 0; j < jobs.size(); ++j)
        {
            ClusterJob alone = jobs[j];
            alone.startSeconds = 0;
            const double solo = RunJobs({alone}, {placement[j]}, backend)[0];
            EXPECT_GT(solo, 0);
            EXPECT_DOUBLE_EQ(together[j], solo) << backend << " job " << jobs[j].name;
        }
    }
}

TEST(MultiJob, TwoJobsSharingOneLinkTakeTheMaxMinShare)
{
    // Job a sends from GPU 0 (rail 0) to GPU 9 (rail 1): rail-only forwards
    // it over NVLink to GPU 1, whose NIC carries it on rail 1. Job b sends
    // from GPU 1 to GPU 17 on rail 1: GPU 1's NIC carries both. Max-min: each
    // gets half of it, so each takes twice its transfer time.
    const uint64_t bytes = 64 << 20;
    const std::vector<ClusterJob> jobs = {{"a", SendJob(bytes), 0}, {"b", SendJob(bytes), 0}};
    const std::vector<std::vector<uint32_t>> placement = {{0, 9}, {1, 17}};
    for (const char* backend : {"flow", "packet"})
    {
        const std::vector<double> together = RunJobs(jobs, placement, backend);
        std::vector<double> solo;
        for (size_t j = 0; j < 2; ++j)
        {
            solo.push_back(RunJobs({jobs[j]}, {placement[j]}, backend)[0]);
            std::printf("%s job %s: alone %.9f s, together %.9f s\n",
                        backend,
                        jobs[j].name.c_str(),
                        solo[j],
                        together[j]);
            EXPECT_GE(together[j], solo[j] * (1 - 1e-9)) << backend << " job " << j;
        }
        if (std::string(backend) == "flow")
        {
            // max-min: both at half the link, both end at twice their time
            for (size_t j = 0; j < 2; ++j)
            {
                EXPECT_NEAR(together[j] / (2 * solo[j]), 1.0, 0.002) << "job " << j;
            }
        }
        else
        {
            // the NIC's FIFO serves the two in the order their packets come
            // (no fair share without congestion control): the link's work is
            // the same, so the later job ends at twice its time
            const double last = std::max(together[0], together[1]);
            EXPECT_NEAR(last / (2 * std::max(solo[0], solo[1])), 1.0, 0.05);
        }
    }
}

} // namespace
