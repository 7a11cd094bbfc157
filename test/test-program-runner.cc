/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// ProgramRunner: compute phases and communication with dependencies.
#include "ns3/collective-helper.h"
#include "ns3/fabric-error.h"
#include "ns3/fault-helper.h"
#include "ns3/program-runner.h"
#include "ns3/simulator.h"
#include "ns3/topology-builders.h"

#include <gtest/gtest.h>

using namespace ns3;

namespace
{

class ProgramRunnerTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
    }
};

Ptr<Fabric>
Domain8()
{
    FabricTopology topo("domain");
    AddHbDomains(topo, 8, HbDomainPreset::Get("dgx-h100"));
    return FabricHelper().Install(topo);
}

TEST_F(ProgramRunnerTest, ComputeThenCommThenComputeAddsUp)
{
    Ptr<Fabric> fabric = Domain8();
    // Reference: the allreduce alone.
    Ptr<CollectiveRun> alone = CollectiveHelper(fabric).Install(CollectiveHelper::AllRanks(8),
                                                                "allreduce",
                                                                "ring",
                                                                64 << 20,
                                                                Seconds(0));
    Simulator::Run();
    const double comm = alone->GetResult().timeS;
    fabric->Dispose();
    Simulator::Destroy();

    fabric = Domain8();
    ParallelProgram prog;
    prog.ranks = 8;
    prog.comms.push_back({"allreduce", "ring", {0, 1, 2, 3, 4, 5, 6, 7}, 64 << 20, 0, 0, "ar"});
    prog.tasks.resize(8);
    for (uint32_t r = 0; r < 8; ++r)
    {
        // rank r computes 1 ms + r us first: the allreduce waits for the last
        prog.tasks[r].push_back({ProgramTask::Kind::Compute, 1e-3 + r * 1e-6, 0, {}});
        prog.tasks[r].push_back({ProgramTask::Kind::Comm, 0, 0, {0}});
        prog.tasks[r].push_back({ProgramTask::Kind::Compute, 2e-3, 0, {1}});
    }
    auto runner = CreateObject<ProgramRunner>();
    runner->Setup(prog, fabric->GetTransport());
    Simulator::ScheduleNow(&ProgramRunner::Start, runner);
    Simulator::Run();
    ASSERT_TRUE(runner->IsComplete());
    // the ring cannot finish before the slowest rank joins (7 us late)
    EXPECT_NEAR(runner->GetFinishTime().GetSeconds(), 1e-3 + 7e-6 + comm + 2e-3, 2e-6);
    EXPECT_GT(runner->GetFinishTime().GetSeconds(), 1e-3 + 7e-6 + comm + 2e-3 - 1e-9);
}

TEST_F(ProgramRunnerTest, SendRecvChainsLikeAPipeline)
{
    Ptr<Fabric> fabric = Domain8();
    ParallelProgram prog;
    prog.ranks = 8;
    prog.tasks.resize(8);
    // stage s computes 1 ms, then sends 8 MB to stage s+1, which computes after
    for (uint32_t s = 0; s < 4; ++s)
    {
        if (s > 0)
        {
            prog.tasks[s].push_back({ProgramTask::Kind::Comm, 0, s - 1, {}});
        }
        const uint32_t before = prog.tasks[s].size();
        std::vector<uint32_t> deps;
        if (before > 0)
        {
            deps.push_back(before - 1);
        }
        prog.tasks[s].push_back({ProgramTask::Kind::Compute, 1e-3, 0, deps});
        if (s < 3)
        {
            prog.comms.push_back({"sendrecv", "", {s, s + 1}, 8 << 20, 0, 0, "act"});
            prog.tasks[s].push_back({ProgramTask::Kind::Comm,
                                     0,
                                     static_cast<uint32_t>(prog.comms.size() - 1),
                                     {static_cast<uint32_t>(prog.tasks[s].size() - 1)}});
        }
    }
    auto runner = CreateObject<ProgramRunner>();
    runner->Setup(prog, fabric->GetTransport());
    Simulator::ScheduleNow(&ProgramRunner::Start, runner);
    Simulator::Run();
    ASSERT_TRUE(runner->IsComplete());
    // 4 x 1 ms compute + 3 transfers of 8 MB at 3.6 Tb/s (payload share)
    const double transfer = (8 << 20) * 8.0 / (3.6e12 * 4096 / 4122);
    EXPECT_NEAR(runner->GetFinishTime().GetSeconds(), 4e-3 + 3 * transfer, 3 * 1e-6);
    // the last stage waits in its receive from t = 0 (comm time includes waiting)
    EXPECT_NEAR(runner->GetCommSeconds()[3], 3e-3 + 3 * transfer, 3 * 1e-6);
}

TEST_F(ProgramRunnerTest, AFailedCommIsReportedWithItsLabelAndTheRanksItHolds)
{
    Ptr<Fabric> fabric = Domain8();
    // GPU 5 fails while both comms that involve it are in flight
    FaultHelper(fabric).GpuDown(5, MicroSeconds(20));
    ParallelProgram prog;
    prog.ranks = 8;
    prog.tasks.resize(8);
    prog.comms.push_back({"allreduce", "ring", {0, 1, 2, 3}, 64 << 20, 0, 0, "tp-a"});
    prog.comms.push_back({"allreduce", "ring", {4, 5, 6, 7}, 64 << 20, 0, 0, "tp-b"});
    prog.comms.push_back({"sendrecv", "", {7, 5}, 64 << 20, 0, 0, ""});
    for (uint32_t r = 0; r < 8; ++r)
    {
        prog.tasks[r].push_back({ProgramTask::Kind::Comm, 0, r < 4 ? 0u : 1u, {}});
        if (r == 5 || r == 7)
        {
            prog.tasks[r].push_back({ProgramTask::Kind::Comm, 0, 2, {}});
        }
        prog.tasks[r].push_back({ProgramTask::Kind::Compute, 1e-3, 0, {0}});
    }
    auto runner = CreateObject<ProgramRunner>();
    runner->Setup(prog, fabric->GetTransport());
    uint32_t callbacks = 0;
    std::string told;
    runner->SetFailureCallback(MakeBoundCallback(
        +[](uint32_t* n, std::string* s, Ptr<ProgramRunner>, const std::string& report) {
            ++*n;
            *s = report;
        },
        &callbacks,
        &told));
    std::vector<uint32_t> traced;
    runner->TraceConnectWithoutContext(
        "CommFailed",
        MakeBoundCallback(
            +[](std::vector<uint32_t>* v, uint32_t comm, const std::string&) {
                v->push_back(comm);
            },
            &traced));
    Simulator::ScheduleNow(&ProgramRunner::Start, runner);
    Simulator::Run();

    EXPECT_FALSE(runner->IsComplete());
    ASSERT_TRUE(runner->IsFailed());
    // both comms with rank 5 fail, the other completes; told once, at the first
    std::vector<uint32_t> failed = runner->GetFailedComms();
    EXPECT_EQ(traced, failed);
    std::sort(failed.begin(), failed.end());
    EXPECT_EQ(failed, (std::vector<uint32_t>{1, 2}));
    EXPECT_EQ(callbacks, 1u);
    const std::string& report = runner->GetFailureReport();
    EXPECT_EQ(report.substr(0, report.find('\n')), told);
    EXPECT_NE(report.find("comm 1 (tp-b: allreduce ring of 4 ranks, 67108864 bytes) failed: "),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("comm 2 (sendrecv rank 7 -> 5, 67108864 bytes) failed: "),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("GPU 5 down"), std::string::npos) << report;
    // one line per failed comm
    EXPECT_EQ(std::count(report.begin(), report.end(), '\n'), 1);
    EXPECT_EQ(runner->GetUnfinishedRanks(), (std::vector<uint32_t>{4, 5, 6, 7}));
    EXPECT_TRUE(runner->GetRuns()[0]->IsComplete());
    EXPECT_GT(runner->GetRankFinishTime(0).GetSeconds(), 1e-3);
    fabric->Dispose();
}

TEST_F(ProgramRunnerTest, ADisposedOrDroppedRunnerHearsNoMoreFromItsRuns)
{
    // the transport holds a run while its messages are in flight, so runs
    // outlive a runner that is disposed or that nobody holds; they must not
    // call it then (under the sanitizers a freed runner would be a
    // use after free)
    // ranks 0-3: tp-a, then tp-a2; ranks 4-7: tp-b, which GPU 5's failure breaks
    ParallelProgram prog;
    prog.ranks = 8;
    prog.tasks.resize(8);
    prog.comms.push_back({"allreduce", "ring", {0, 1, 2, 3}, 64 << 20, 0, 0, "tp-a"});
    prog.comms.push_back({"allreduce", "ring", {4, 5, 6, 7}, 64 << 20, 0, 0, "tp-b"});
    prog.comms.push_back({"allreduce", "ring", {0, 1, 2, 3}, 1 << 20, 0, 0, "tp-a2"});
    for (uint32_t r = 0; r < 8; ++r)
    {
        prog.tasks[r].push_back({ProgramTask::Kind::Comm, 0, r < 4 ? 0u : 1u, {}});
        if (r < 4)
        {
            prog.tasks[r].push_back({ProgramTask::Kind::Comm, 0, 2, {0}});
        }
    }

    // disposed while both comms are in flight, before GPU 5 fails
    Ptr<Fabric> fabric = Domain8();
    FaultHelper(fabric).GpuDown(5, MicroSeconds(20));
    auto runner = CreateObject<ProgramRunner>();
    runner->Setup(prog, fabric->GetTransport());
    Simulator::ScheduleNow(&ProgramRunner::Start, runner);
    Simulator::Schedule(MicroSeconds(10), &ProgramRunner::Dispose, runner);
    Simulator::Run();
    EXPECT_FALSE(runner->IsFailed()); // tp-b failed after the dispose
    EXPECT_FALSE(runner->IsComplete());
    const uint64_t delivered = fabric->GetTransport()->GetTotals().bytesDelivered;
    fabric->Dispose();
    Simulator::Destroy();

    // dropped: the Start event held the last reference
    fabric = Domain8();
    FaultHelper(fabric).GpuDown(5, MicroSeconds(20));
    runner = CreateObject<ProgramRunner>();
    runner->Setup(prog, fabric->GetTransport());
    Simulator::ScheduleNow(&ProgramRunner::Start, runner);
    runner = nullptr;
    Simulator::Run();
    // tp-a ran to its end without its runner (tp-a2 is never started); the
    // same bytes as the disposed runner's run
    EXPECT_EQ(fabric->GetTransport()->GetTotals().bytesDelivered, delivered);
    fabric->Dispose();
}

TEST_F(ProgramRunnerTest, MalformedProgramsAreRejected)
{
    ParallelProgram prog;
    prog.ranks = 2;
    prog.tasks.resize(2);
    prog.comms.push_back({"sendrecv", "", {0, 1}, 100, 0, 0, "p2p"});
    prog.tasks[0].push_back({ProgramTask::Kind::Comm, 0, 0, {}});
    EXPECT_THROW(prog.Validate(), FabricConfigError); // rank 1 has no task for the comm
    prog.tasks[1].push_back({ProgramTask::Kind::Comm, 0, 0, {}});
    prog.Validate();
    prog.tasks[1].push_back({ProgramTask::Kind::Compute, 1, 0, {3}});
    EXPECT_THROW(prog.Validate(), FabricConfigError); // forward dependency
    prog.tasks[1].back().deps = {0};
    prog.tasks[1].back().seconds = -1;
    EXPECT_THROW(prog.Validate(), FabricConfigError);
}

} // namespace
