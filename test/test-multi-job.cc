/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Several jobs on one fabric: placements are disjoint and follow their
// policy; jobs on disjoint resources take exactly their solo times, at any
// start; two jobs whose transfers share one link (a switch uplink, or a NIC
// that relays the other job's traffic) take the max-min share of it at both
// levels.
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
/// DGX-H100 rail-only fabric (or \p build's fabric of \p gpus).
std::vector<double>
RunJobs(const std::vector<ClusterJob>& jobs,
        const std::vector<std::vector<uint32_t>>& placement,
        const std::string& backend,
        FabricTopology (*build)(const ClusterParams&) = BuildRailOnly,
        double oversubscription = 1.0,
        uint32_t radix = 64,
        uint32_t gpus = 32)
{
    ClusterParams cp;
    cp.gpus = gpus;
    cp.platform = HbDomainPreset::Get("dgx-h100");
    cp.oversubscription = oversubscription;
    cp.radix = radix;
    InstalledTransport installed = TransportHelper(backend, "backend").Install(build(cp));
    Ptr<ProgramRunner> runner = RunProgram(CombineJobs(jobs, placement, gpus), installed.transport);
    EXPECT_TRUE(runner->IsComplete());
    const std::vector<double> times = JobTimes(*runner, jobs, placement);
    installed.Dispose();
    Simulator::Destroy();
    return times;
}

/// Runs two jobs of \p bytes each (placements \p at) with \p run(jobs,
/// placement), each alone and one of 2 x bytes alone at each placement, and
/// expects both to end when the 2 x bytes would (the max-min share of one
/// link: the path's latency once, 2 x bytes of serialization), within
/// \p tolerance.
template <typename Run>
void
ExpectBothEndAsTwiceTheBytes(const Run& run,
                             uint64_t bytes,
                             const std::vector<std::vector<uint32_t>>& at,
                             const std::string& what,
                             double tolerance)
{
    const std::vector<ClusterJob> jobs = {{"a", SendJob(bytes), 0}, {"b", SendJob(bytes), 0}};
    const std::vector<double> together = run(jobs, at);
    for (size_t j = 0; j < 2; ++j)
    {
        const double solo = run(std::vector<ClusterJob>{jobs[j]}, {at[j]})[0];
        const double twice =
            run(std::vector<ClusterJob>{{"2M", SendJob(2 * bytes), 0}}, {at[j]})[0];
        std::printf("%s job %s: alone %.9f s, together %.9f s, 2M alone %.9f s\n",
                    what.c_str(),
                    jobs[j].name.c_str(),
                    solo,
                    together[j],
                    twice);
        EXPECT_GT(together[j], 1.9 * solo) << what << " job " << jobs[j].name;
        EXPECT_NEAR(together[j] / twice, 1.0, tolerance) << what << " job " << jobs[j].name;
    }
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
    // Job a sends M bytes from GPU 0 (rail 0) to GPU 9 (rail 1): rail-only
    // forwards it over NVLink to GPU 1, whose NIC carries it on rail 1. Job b
    // sends M bytes from GPU 1 to GPU 17 on rail 1: GPU 1's NIC carries both.
    // Max-min gives each half of it, so both end when one transfer of 2M
    // alone would. At the packet level GPU 1 serves the relayed packets in
    // its round robin with its own (a NIC's queue pairs), so there too.
    const uint64_t bytes = 64 << 20;
    const std::vector<ClusterJob> jobs = {{"a", SendJob(bytes), 0}, {"b", SendJob(bytes), 0}};
    const std::vector<std::vector<uint32_t>> placement = {{0, 9}, {1, 17}};
    for (const char* backend : {"flow", "packet"})
    {
        ExpectBothEndAsTwiceTheBytes(
            [&](const std::vector<ClusterJob>& js, const std::vector<std::vector<uint32_t>>& at) {
                return RunJobs(js, at, backend);
            },
            bytes,
            placement,
            backend,
            std::string(backend) == "flow" ? 0.002 : 0.05);
    }
    // With RelayTurns off the relayed packets join GPU 1's FIFO as they
    // arrive over NVLink (9x the NIC's rate), ahead of its own: job a keeps
    // its solo time and job b ends when the 2M would.
    Config::SetDefault("ns3::PacketTransport::RelayTurns", BooleanValue(false));
    const std::vector<double> fifo = RunJobs(jobs, placement, "packet");
    const double soloA = RunJobs({jobs[0]}, {placement[0]}, "packet")[0];
    const double twiceB = RunJobs({{"2M", SendJob(2 * bytes), 0}}, {placement[1]}, "packet")[0];
    Config::SetDefault("ns3::PacketTransport::RelayTurns", BooleanValue(true));
    std::printf("packet, RelayTurns off: a %.9f s (alone %.9f s), b %.9f s (2M alone %.9f s)\n",
                fifo[0],
                soloA,
                fifo[1],
                twiceB);
    EXPECT_NEAR(fifo[0] / soloA, 1.0, 0.01);
    EXPECT_NEAR(fifo[1] / twiceB, 1.0, 0.05);
}

TEST(MultiJob, TwoJobsSharingASwitchUplinkTakeTheMaxMinShareAtBothLevels)
{
    // A classic fat-tree of 24 GPUs of radix 4 at 3:1 has one uplink per
    // leaf of 3 GPUs. Job a sends M bytes from GPU 0 to GPU 8 (leaf 2), job b
    // M bytes from GPU 1 to GPU 16 (leaf 5): both leave leaf 0 by its one
    // uplink, from two input ports. Max-min gives each half of it, so both
    // end when one transfer of 2M alone would (the path's latency once, 2M
    // of serialization). The leaf's egress queue serves the two inputs in
    // arrival order and PFC pauses both alike: the packet level shares too.
    for (const char* backend : {"flow", "packet"})
    {
        ExpectBothEndAsTwiceTheBytes(
            [&](const std::vector<ClusterJob>& js, const std::vector<std::vector<uint32_t>>& at) {
                return RunJobs(js, at, backend, BuildFatTree, 3, 4, 24);
            },
            16 << 20,
            {{0, 8}, {1, 16}},
            backend,
            std::string(backend) == "flow" ? 1e-6 : 0.05);
    }
}

} // namespace
