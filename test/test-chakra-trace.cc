/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Chakra execution traces: traces written by an independent writer (Python's
// protobuf, test/chakra-writer.py) replay to the closed-form time; the
// module's own GPT iteration written and read back replays to the native
// run's time; malformed traces are refused naming the file, node and field.
#include "replay-closed-form.h"

#include "ns3/chakra-trace.h"
#include "ns3/collective-metrics.h"
#include "ns3/core-module.h"
#include "ns3/fabric-helper.h"
#include "ns3/fabric.h"
#include "ns3/gpu-fabric-module.h"
#include "ns3/iteration-program.h"
#include "ns3/topology-builders.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

using namespace ns3;
using namespace gpu_fabric_test;

namespace
{

/// A fresh folder for one test's traces, named by the test's line too: ctest
/// runs the cases side by side, and two of them write the same job (short:
/// error messages shorten long values).
std::string
TraceDir(const std::string& tag)
{
    const std::string dir =
        fmt::format("{}chakra-L{}-{}",
                    ::testing::TempDir(),
                    ::testing::UnitTest::GetInstance()->current_test_info()->line(),
                    tag);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

/// Runs chakra-writer.py JOB PREFIX ARGS; \return PREFIX.
std::string
PythonTraces(const std::string& job, const std::string& args = "")
{
    const std::string prefix = TraceDir(job) + "/trace";
    const std::string cmd = fmt::format("PYTHONPATH={} {} {}/test/chakra-writer.py {} {} {}",
                                        CHAKRA_PYTHON_DIR,
                                        CHAKRA_PYTHON,
                                        GPU_FABRIC_SOURCE_DIR,
                                        job,
                                        prefix,
                                        args);
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return prefix;
}

/// The message of ReadChakraTraces(prefix) (which must throw).
std::string
ReadError(const std::string& prefix, const ChakraReplayOptions& options = {})
{
    try
    {
        ReadChakraTraces(prefix, options);
    }
    catch (const FabricConfigError& e)
    {
        return e.what();
    }
    ADD_FAILURE() << "no error for " << prefix;
    return "";
}

TEST(ChakraTrace, DataParallelTraceReplaysToComputePlusRingAllReduce)
{
    const uint64_t bytes = 4 << 20;
    const uint32_t us = 150;
    const std::string prefix = PythonTraces("dp", fmt::format("16 {} {}", us, bytes));
    const ChakraReplay replay = ReadChakraTraces(prefix);
    ASSERT_EQ(replay.program.ranks, 16U);
    EXPECT_EQ(replay.nodes, 32U);
    ASSERT_EQ(replay.program.comms.size(), 8U); // one all-reduce per rail
    for (const ProgramComm& c : replay.program.comms)
    {
        ASSERT_EQ(c.members.size(), 2U);
        EXPECT_EQ(c.members[1], c.members[0] + 8); // the rail's GPU in each domain
        EXPECT_EQ(c.bytes, bytes);
        EXPECT_EQ(c.algorithm, "ring");
    }
    for (uint32_t r = 0; r < 16; ++r)
    {
        EXPECT_DOUBLE_EQ(replay.computeSeconds[r], us * 1e-6);
        // the compute node (id 3) runs first though the file lists it second
        ASSERT_EQ(replay.program.tasks[r].size(), 2U);
        EXPECT_EQ(replay.program.tasks[r][0].kind, ProgramTask::Kind::Compute);
        EXPECT_EQ(replay.program.tasks[r][1].deps, std::vector<uint32_t>{0});
    }
    const double expected = us * 1e-6 + RingAllReduceTime(2, bytes, RailRingParams());
    const double simulated = RunOnRailOnly(replay.program);
    std::printf("simulated %.9f s, formula %.9f s\n", simulated, expected);
    EXPECT_NEAR(simulated / expected, 1.0, 0.01);
}

TEST(ChakraTrace, TensorParallelTraceReplaysToTwoLayersOfComputeAndNvlinkAllReduce)
{
    const uint64_t bytes = 8 << 20;
    const uint32_t us = 40;
    const std::string prefix = PythonTraces("tp", fmt::format("16 {} {}", us, bytes));
    const ChakraReplay replay = ReadChakraTraces(prefix);
    ASSERT_EQ(replay.program.comms.size(), 4U); // two per domain
    for (const ProgramComm& c : replay.program.comms)
    {
        ASSERT_EQ(c.members.size(), 8U);
        EXPECT_EQ(c.members.back(), c.members.front() + 7);
    }
    const double expected = 2 * (us * 1e-6 + RingAllReduceTime(8, bytes, NvlinkRingParams()));
    const double simulated = RunOnRailOnly(replay.program);
    std::printf("simulated %.9f s, formula %.9f s\n", simulated, expected);
    EXPECT_NEAR(simulated / expected, 1.0, 0.02);
}

TEST(ChakraTrace, SendsAndReceivesPairIntoAPipeline)
{
    const std::string prefix = PythonTraces("sendrecv", "4 10 65536");
    const ChakraReplay replay = ReadChakraTraces(prefix);
    ASSERT_EQ(replay.program.comms.size(), 3U);
    for (uint32_t c = 0; c < 3; ++c)
    {
        EXPECT_EQ(replay.program.comms[c].collective, "sendrecv");
        EXPECT_EQ(replay.program.comms[c].members, (std::vector<uint32_t>{c, c + 1}));
        EXPECT_EQ(replay.program.comms[c].bytes, 65536U);
    }
}

TEST(ChakraTrace, TheModulesGptIterationWrittenAndReadBackRunsToTheNativeTime)
{
    const uint32_t m = 2;
    const LlmModel model = LlmModel::Custom(2, 1024, 16, 512, 8192, 2 * m * 512);
    Parallelism::Shape shape;
    shape.gpus = 16;
    shape.gpusPerDomain = 8;
    shape.tp = 4;
    shape.pp = 2;
    shape.dp = 2;
    shape.microBatches = m;
    shape.globalBatchSequences = 2 * m;
    const TrainingIteration it(model, Parallelism(shape));
    ParallelProgram native = BuildIterationProgram(it).program;
    // Chakra keeps whole microseconds
    for (auto& tasks : native.tasks)
    {
        for (auto& t : tasks)
        {
            t.seconds = std::round(t.seconds * 1e6) * 1e-6;
        }
    }
    const std::string prefix = TraceDir("gpt") + "/gpt";
    WriteChakraTraces(native, prefix);
    const ChakraReplay replay = ReadChakraTraces(prefix);
    ASSERT_EQ(replay.program.ranks, native.ranks);
    ASSERT_EQ(replay.program.comms.size(), native.comms.size());
    uint64_t tasks = 0;
    for (uint32_t r = 0; r < native.ranks; ++r)
    {
        ASSERT_EQ(replay.program.tasks[r].size(), native.tasks[r].size());
        tasks += native.tasks[r].size();
        for (size_t i = 0; i < native.tasks[r].size(); ++i)
        {
            const ProgramTask& a = native.tasks[r][i];
            const ProgramTask& b = replay.program.tasks[r][i];
            ASSERT_EQ(a.kind, b.kind) << "rank " << r << " task " << i;
            EXPECT_EQ(a.deps, b.deps);
            EXPECT_NEAR(a.seconds, b.seconds, 1e-12);
            if (a.kind == ProgramTask::Kind::Comm)
            {
                const ProgramComm& ca = native.comms[a.comm];
                const ProgramComm& cb = replay.program.comms[b.comm];
                EXPECT_EQ(ca.collective, cb.collective);
                EXPECT_EQ(ca.members, cb.members);
                EXPECT_EQ(ca.bytes, cb.bytes);
            }
        }
    }
    EXPECT_EQ(replay.nodes, tasks);
    const double nativeTime = RunOnRailOnly(native);
    const double replayTime = RunOnRailOnly(replay.program);
    std::printf("native %.9f s, replayed %.9f s\n", nativeTime, replayTime);
    EXPECT_GT(nativeTime, 0);
    EXPECT_DOUBLE_EQ(replayTime, nativeTime);
}

TEST(ChakraTrace, MalformedTracesNameTheFileNodeAndField)
{
    {
        const std::string prefix = PythonTraces("unknown-type", "2");
        const std::string e = ReadError(prefix);
        EXPECT_NE(e.find(prefix + ".0.et node 2 type"), std::string::npos) << e;
        EXPECT_NE(e.find("'42'"), std::string::npos) << e;
    }
    {
        const std::string prefix = PythonTraces("dangling-dep", "2");
        const std::string e = ReadError(prefix);
        EXPECT_NE(e.find(prefix + ".0.et node 2 data_deps"), std::string::npos) << e;
        EXPECT_NE(e.find("'99'"), std::string::npos) << e;
    }
    {
        const std::string prefix = PythonTraces("cycle", "2");
        const std::string e = ReadError(prefix);
        EXPECT_NE(e.find(prefix + ".0.et node"), std::string::npos) << e;
        EXPECT_NE(e.find("cycle"), std::string::npos) << e;
    }
    {
        const std::string prefix = PythonTraces("missing-rank", "4");
        const std::string e = ReadError(prefix);
        EXPECT_NE(e.find(prefix + ".2.et"), std::string::npos) << e;
        EXPECT_NE(e.find("none missing"), std::string::npos) << e;
    }
    {
        const std::string prefix = PythonTraces("size-mismatch", "2");
        const std::string e = ReadError(prefix);
        EXPECT_NE(e.find(prefix + ".1.et node 1 comm_size"), std::string::npos) << e;
    }
    {
        const std::string prefix = PythonTraces("unmatched-send", "3");
        const std::string e = ReadError(prefix);
        EXPECT_NE(e.find(prefix + ".0.et node 1"), std::string::npos) << e;
        EXPECT_NE(e.find("COMM_RECV_NODE"), std::string::npos) << e;
    }
    {
        // not a trace at all
        const std::string prefix = TraceDir("garbage") + "/g";
        std::ofstream(prefix + ".0.et") << "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff junk";
        const std::string e = ReadError(prefix);
        EXPECT_NE(e.find(prefix + ".0.et"), std::string::npos) << e;
    }
    {
        // an algorithm no collective has, and a group file that lists a rank twice
        const std::string prefix = PythonTraces("dp", "16");
        ChakraReplayOptions o;
        o.algorithm = "nope";
        EXPECT_NE(ReadError(prefix, o).find("algorithm"), std::string::npos);
        o.algorithm = "auto";
        o.commGroups = prefix + ".groups.json";
        std::ofstream(o.commGroups) << R"({"dp-rail-0": [0, 0]})";
        const std::string e = ReadError(prefix, o);
        EXPECT_NE(e.find("dp-rail-0"), std::string::npos) << e;
    }
}

#ifdef GPU_FABRIC_BIN_DIR
TEST(ChakraTrace, ChakraReplayProgramWritesItsJsonKeysAndExitsTwoOnBadTraces)
{
    const std::string prefix = PythonTraces("tp", "16 40 1048576");
    const std::string json = ::testing::TempDir() + "chakra-replay.json";
    std::remove(json.c_str());
    const std::string bin = std::string(GPU_FABRIC_BIN_DIR) + "/chakra-replay";
    const std::string ok = fmt::format("{} --trace={} --json={} > /dev/null", bin, prefix, json);
    ASSERT_EQ(std::system(ok.c_str()), 0) << ok;
    std::ifstream in(json);
    const nlohmann::json j = nlohmann::json::parse(in);
    EXPECT_EQ(j["ranks"], 16);
    EXPECT_EQ(j["nodes_replayed"], 64);
    EXPECT_DOUBLE_EQ(j["compute_time_s"].get<double>(), 80e-6);
    EXPECT_GT(j["iteration_time_s"].get<double>(), 80e-6);
    EXPECT_GT(j["comm_time_s"].get<double>(), 0);
    EXPECT_LE(j["comm_time_s"].get<double>() + j["compute_time_s"].get<double>(),
              j["iteration_time_s"].get<double>() * (1 + 1e-9));
    const std::string bad = PythonTraces("cycle", "2");
    const std::string cmd = fmt::format("{} --trace={} > /dev/null 2>&1", bin, bad);
    const int rc = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(rc));
    EXPECT_EQ(WEXITSTATUS(rc), 2);
}
#endif

} // namespace
