/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Same inputs and seed give the same outputs: each program is run twice and
// its JSON compared, byte by byte or (where wall times are reported) by what
// it simulated.
#include "program-run.h"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace
{

using namespace gpu_fabric_test;

/// Run `program args --json=<file>` twice; return the two JSON texts.
std::pair<std::string, std::string>
RunTwice(const std::string& program, const std::string& args, const std::string& tag)
{
    const std::string run = program + " " + args;
    return {RunJsonText(run, tag + "-determinism-0"), RunJsonText(run, tag + "-determinism-1")};
}

struct Case
{
    std::string program;
    std::string args;
};

/// gtest names a case by this, not by its bytes
void
PrintTo(const Case& c, std::ostream* os)
{
    *os << c.program << " " << c.args;
}

class Determinism : public ::testing::TestWithParam<Case>
{
};

TEST_P(Determinism, TwoRunsWriteIdenticalJson)
{
    // ctest runs cases in parallel: every case writes its own files
    const std::string tag = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    const auto [first, second] =
        RunTwice(GetParam().program, GetParam().args, tag.substr(tag.find('/') + 1));
    EXPECT_GT(first.size(), 20u); // something was written
    EXPECT_EQ(first, second);
}

INSTANTIATE_TEST_SUITE_P(
    Examples,
    Determinism,
    ::testing::Values(Case{"hb-domain-messages", "--bytes=300000"},
                      Case{"collective-bench",
                           "--gpus=16 --collective=alltoall --algorithm=pxn "
                           "--min-bytes=4096 --max-bytes=65536"},
                      Case{"collective-bench",
                           "--topology=rail-optimized --gpus=32 --preset=dgx-a100 --radix=8 "
                           "--algorithm=tree --chunk-bytes=8192 --min-bytes=65536 "
                           "--max-bytes=131072"},
                      Case{"fabric-cost", "--gpus=4096 --radix=32,64"},
                      Case{"direct-connect-synth", "--nodes=16 --degree=4"},
                      Case{"flow-vs-packet", "--quick --max-bytes=8192"},
                      Case{"fabric-ip-incast",
                           "--queue-disc=none --queue-packets=20 --bytes=500000"},
                      Case{"fabric-ip-incast", "--queue-disc=ns3::RedQueueDisc --bytes=500000"}),
    [](const auto& info) {
        std::string name = std::to_string(info.index) + "_" + info.param.program;
        std::replace(name.begin(), name.end(), '-', '_');
        return name;
    });

TEST(Benches, FlowScaleSimulatesTheSameIterationTwice)
{
    // wall times and memory differ from run to run; what is simulated must not
    const auto [first, second] = RunTwice("flow-scale", "--gpus=1024", "flow-scale");
    const auto a = nlohmann::json::parse(first)["runs"];
    const auto b = nlohmann::json::parse(second)["runs"];
    ASSERT_EQ(a.size(), 2u); // rail-only and rail-optimized
    ASSERT_EQ(b.size(), 2u);
    for (size_t i = 0; i < 2; ++i)
    {
        for (const char* key :
             {"topology", "iteration_s", "flows", "bytes_delivered", "tp", "dp", "eq1_iteration_s"})
        {
            EXPECT_EQ(a[i][key], b[i][key]) << key;
        }
        EXPECT_EQ(a[i]["flows"], a[i]["messages_delivered"]);
    }
    // rail-only and the rail-optimized fat-tree take the same time (the paper's result)
    EXPECT_EQ(a[0]["iteration_s"], a[1]["iteration_s"]);
    // the module's scheduler, as in every program, unless --SchedulerType says
    // otherwise (the program used to force the heap, over the flag); the
    // simulation is the same
    EXPECT_EQ(nlohmann::json::parse(first)["scheduler"], "ns3::FabricLookaheadScheduler");
    const auto heap =
        RunJson("flow-scale --gpus=1024 --SchedulerType=ns3::HeapScheduler", "flow-scale-heap");
    ASSERT_TRUE(heap.is_object());
    EXPECT_EQ(heap["scheduler"], "ns3::HeapScheduler");
    ASSERT_EQ(heap["runs"].size(), 2u);
    for (size_t i = 0; i < 2; ++i)
    {
        for (const char* key : {"iteration_s", "flows", "bytes_delivered"})
        {
            EXPECT_EQ(heap["runs"][i][key], a[i][key]) << key;
        }
    }
}

TEST(Benches, FabricThroughputSimulatesTheSamePermutationTwice)
{
    // the packet-level yardstick at 128 hosts: identical simulated figures
    // twice, every flow delivered in full, nothing dropped (lossless)
    const uint64_t hosts = 128;
    const uint64_t flowBytes = 500'000;
    const auto [first, second] =
        RunTwice("fabric-throughput",
                 fmt::format("--hosts={} --flow-bytes={}", hosts, flowBytes),
                 "fabric-throughput");
    const auto a = nlohmann::json::parse(first);
    const auto b = nlohmann::json::parse(second);
    for (const char* key : {"events",
                            "packets",
                            "simulated_time_s",
                            "bytes_delivered",
                            "drops",
                            "mean_pending_events"})
    {
        EXPECT_EQ(a[key], b[key]) << key;
    }
    EXPECT_EQ(a["bytes_delivered"].get<uint64_t>(), hosts * flowBytes);
    EXPECT_EQ(a["packets"].get<uint64_t>(), hosts * ((flowBytes + 4095) / 4096));
    EXPECT_EQ(a["drops"].get<uint64_t>(), 0u);
    EXPECT_GT(a["mean_pending_events"].get<double>(), 0.0);
    // every event is a packet arrival, an end of serialization, a pause
    // frame or ns-3's initialization of a node or device: nothing else runs
    const auto& kinds = a["events_by_kind"];
    EXPECT_EQ(kinds["other"].get<uint64_t>(), 0u);
    EXPECT_EQ(kinds["arrivals"].get<uint64_t>() + kinds["serialization_ends"].get<uint64_t>() +
                  kinds["flow_control_frames"].get<uint64_t>() +
                  kinds["initialization"].get<uint64_t>(),
              a["events"].get<uint64_t>());
    // a packet arrives once per hop: 2 (same leaf), 4 (same pod) or 6 hops
    const uint64_t arrivals = kinds["arrivals"].get<uint64_t>();
    const uint64_t packets = a["packets"].get<uint64_t>();
    EXPECT_GE(arrivals, 2 * packets);
    EXPECT_LE(arrivals, 6 * packets);
}

} // namespace
