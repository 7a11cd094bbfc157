/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// The bench programs and scripts (bench/): fabric-throughput's loops and
// schedulers, event-cost-valgrind.py's flags, caches and counts.
#include "program-run.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace
{

using namespace gpu_fabric_test;

TEST(Benches, EventCostValgrindRejectsBadFlagsByName)
{
    const std::string script = std::string(GPU_FABRIC_SOURCE_DIR) + "/bench/event-cost-valgrind.py";

    struct Bad
    {
        std::string args;
        std::string said;
    };

    for (const Bad& bad : std::vector<Bad>{
             {"--hosts=1", "invalid --hosts: got '1', allowed: at least 2"},
             {"--l2=big", "invalid --l2: got 'big', allowed: 'machine', or size,ways,line"},
             {"--d1=49152,0,64", "invalid --d1: got '49152,0,64'"},
             // valgrind's rules: a power-of-two number of sets
             {"--l2=1048576,7,64", "invalid --l2: got '1048576,7,64'"},
             {"--d1=48000,12,64", "invalid --d1: got '48000,12,64'"},
             {"--bare-events=-3", "invalid --bare-events: got '-3'"},
             {"--bin-dir=/nonexistent", "invalid --bin-dir: got '/nonexistent'"}})
    {
        const std::string out = ::testing::TempDir() + "ecv-bad.txt";
        const std::string cmd =
            "python3 " + script + " " + bad.args + " > " + out + " 2>&1; echo $? >> " + out;
        ASSERT_EQ(std::system(cmd.c_str()), 0);
        const std::string said = Slurp(out);
        EXPECT_NE(said.find(bad.said), std::string::npos) << bad.args << ": " << said;
        EXPECT_NE(said.find("\n2\n"), std::string::npos) << bad.args << ": " << said;
    }
}

TEST(Benches, EventCostValgrindReadsTheMachinesCachesWhenAsked)
{
    // 'machine' reads Linux's description of the caches (level, type, size,
    // ways, line of each indexN); a fake one makes the answer known
    const std::string script = std::string(GPU_FABRIC_SOURCE_DIR) + "/bench/event-cost-valgrind.py";
    const std::string dir = ::testing::TempDir() + "ecv-caches";
    const auto describe =
        [&](int index, const char* level, const char* type, const char* size, const char* ways) {
            const std::string d = dir + "/index" + std::to_string(index);
            ASSERT_EQ(std::system(("mkdir -p " + d).c_str()), 0);
            for (const auto& [name, value] :
                 std::vector<std::pair<std::string, std::string>>{{"level", level},
                                                                  {"type", type},
                                                                  {"size", size},
                                                                  {"ways_of_associativity", ways},
                                                                  {"coherency_line_size", "64"}})
            {
                std::ofstream(d + "/" + name) << value << "\n";
            }
        };
    std::system(("rm -rf " + dir).c_str());
    describe(0, "1", "Instruction", "64K", "4");
    describe(1, "1", "Data", "32K", "8");
    describe(2, "2", "Unified", "2M", "16");
    const auto run = [&](const std::string& args) {
        const std::string out = ::testing::TempDir() + "ecv-caches.txt";
        const std::string cmd = "python3 " + script + " --cpu-cache-dir=" + dir + " " + args +
                                " --print-caches > " + out + " 2>&1; echo $? >> " + out;
        EXPECT_EQ(std::system(cmd.c_str()), 0);
        return Slurp(out);
    };
    // the data cache, not the instruction cache; 2M is 2,097,152 bytes
    EXPECT_EQ(run("--d1=machine --l2=machine"),
              "D1 32768,8,64, L2 2097152,16,64 (size,ways,line)\n0\n");
    // the defaults stay fixed, whatever the machine
    EXPECT_EQ(run(""), "D1 49152,12,64, L2 1048576,8,64 (size,ways,line)\n0\n");
    // no level-2 description: refused by the flag's name, not guessed
    std::system(("rm -rf " + dir + "/index2").c_str());
    const std::string said = run("--l2=machine");
    EXPECT_NE(said.find("invalid --l2: got 'machine', but " + dir + " describes no level-2"),
              std::string::npos)
        << said;
    EXPECT_NE(said.find("\n2\n"), std::string::npos) << said;
}

TEST(Benches, EventCostValgrindCountsEachLoopInsideRunOnly)
{
#ifdef GPU_FABRIC_SANITIZE
    GTEST_SKIP() << "valgrind does not run sanitizer builds";
#endif
    if (std::system("command -v valgrind > /dev/null 2>&1") != 0)
    {
        GTEST_SKIP() << "valgrind is not installed";
    }
    const std::string script = std::string(GPU_FABRIC_SOURCE_DIR) + "/bench/event-cost-valgrind.py";
    const std::string json = ::testing::TempDir() + "ecv.json";
    std::remove(json.c_str());
    const std::string cmd = "python3 " + script + " --bin-dir=" + GPU_FABRIC_BIN_DIR +
                            " --hosts=16 --bare-events=20000 --json=" + json + " > /dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    const auto j = nlohmann::json::parse(Slurp(json));
    // both loops on ns-3's map (the programs' own default is the module's
    // scheduler; the documented counts are the map's)
    EXPECT_EQ(j["scheduler"], "ns3::MapScheduler");
    EXPECT_EQ(j["bare_scheduler"], "ns3::MapScheduler");
    // the fabric loop is the one fabric-throughput --hosts=16 runs
    const auto p = RunJson("fabric-throughput --hosts=16 --loop=fabric", "ecv-plain");
    ASSERT_TRUE(p.is_object());
    EXPECT_EQ(j["fabric_events"], p["events"]);
    EXPECT_EQ(j["bare_pending"].get<uint64_t>(),
              static_cast<uint64_t>(std::llround(p["mean_pending_events"].get<double>())));
    EXPECT_EQ(j["bare_pending"], p["bare_pending"]);
    EXPECT_EQ(j["bare_events"].get<uint64_t>(), 20'000u + j["bare_pending"].get<uint64_t>());
    // counted inside Simulator::Run only: a bare event is a few hundred
    // instructions (the whole program, with ns-3's start-up, would be far
    // more), and a fabric event costs more than a bare one
    const double bare = j["per_event"]["bare"]["Ir"].get<double>();
    const double fabric = j["per_event"]["fabric"]["Ir"].get<double>();
    EXPECT_GT(bare, 200.0);
    EXPECT_LT(bare, 5000.0);
    EXPECT_GT(fabric, bare);
    EXPECT_NEAR(j["ratio"]["Ir"].get<double>(), fabric / bare, 1e-9);
}

TEST(Benches, FabricThroughputRunsEachLoopAlone)
{
    // --loop=fabric simulates what the default run does and measures no bare
    // loop; --loop=bare runs only the bare loop (for a profile of each alone)
    const auto run = [](const std::string& args, const std::string& name) {
        return nlohmann::json::parse(RunJsonText("fabric-throughput " + args, name));
    };
    const auto both = run("--hosts=16", "loop-both");
    const auto fabric = run("--hosts=16 --loop=fabric", "loop-fabric");
    for (const char* key : {"events", "packets", "simulated_time_s", "mean_pending_events"})
    {
        EXPECT_EQ(both[key], fabric[key]) << key;
    }
    EXPECT_TRUE(both.contains("event_cost_ratio"));
    // the bare loop each writes is the one the combined run measured
    EXPECT_EQ(both["bare_pending"], fabric["bare_pending"]);
    EXPECT_EQ(fabric["bare_events"].get<uint64_t>(),
              std::max<uint64_t>(fabric["events"].get<uint64_t>(), 1'000'000));
    EXPECT_EQ(fabric["bare_pending"].get<uint64_t>(),
              static_cast<uint64_t>(std::llround(fabric["mean_pending_events"].get<double>())));
    EXPECT_FALSE(fabric.contains("event_cost_ratio"));
    EXPECT_FALSE(fabric.contains("bare_scheduler_events_per_s"));
    const auto bare = run("--loop=bare --bare-pending=100 --bare-events=20000", "loop-bare");
    EXPECT_EQ(bare["bare_pending"].get<uint64_t>(), 100u);
    EXPECT_EQ(bare["bare_events"].get<uint64_t>(), 20'000u);
    EXPECT_GT(bare["bare_scheduler_events_per_s"].get<double>(), 0.0);
    EXPECT_FALSE(bare.contains("events"));
    // as the combined run: the map's loop, and the run's scheduler's beside
    // (two measurements), or one loop when the run is on the map
    EXPECT_EQ(bare["scheduler"], "ns3::FabricLookaheadScheduler");
    EXPECT_GT(bare["bare_own_scheduler_events_per_s"].get<double>(), 0.0);
    EXPECT_NE(bare["bare_own_scheduler_events_per_s"], bare["bare_scheduler_events_per_s"]);
    const auto onMap = run("--loop=bare --bare-pending=100 --bare-events=20000 "
                           "--SchedulerType=ns3::MapScheduler",
                           "loop-bare-map");
    EXPECT_EQ(onMap["scheduler"], "ns3::MapScheduler");
    EXPECT_EQ(onMap["bare_own_scheduler_events_per_s"], onMap["bare_scheduler_events_per_s"]);
}

TEST(Benches, FabricThroughputOnTheLookaheadSchedulerSimulatesTheSameAndIsJudgedAgainstTheMap)
{
    // the programs run on the module's scheduler unless --SchedulerType (or
    // NS_GLOBAL_VALUE) names another; the simulation is the same on both, and
    // the ratio's bare event is always the map's
    const auto run = [](const std::string& args, const std::string& name) {
        // the default run, as the NS_GLOBAL_VALUE runs below set it
        return nlohmann::json::parse(
            RunJsonText("fabric-throughput --hosts=32 --RngRun=1 " + args, name));
    };
    const auto la = run("", "sched-la");
    const auto map = run("--SchedulerType=ns3::MapScheduler", "sched-map");
    for (const char* key :
         {"events", "packets", "simulated_time_s", "bytes_delivered", "mean_pending_events"})
    {
        EXPECT_EQ(map[key], la[key]) << key;
    }
    EXPECT_EQ(la["scheduler"], "ns3::FabricLookaheadScheduler");
    EXPECT_EQ(map["scheduler"], "ns3::MapScheduler");
    // on the map the bare figures are one measurement
    EXPECT_EQ(map["bare_own_scheduler_events_per_s"], map["bare_scheduler_events_per_s"]);
    EXPECT_EQ(map["event_cost_ratio_own_scheduler"], map["event_cost_ratio"]);
    const double own = la["bare_own_scheduler_events_per_s"].get<double>();
    const double onMap = la["bare_scheduler_events_per_s"].get<double>();
    EXPECT_GT(own, 0.0);
    EXPECT_GT(onMap, 0.0);
    EXPECT_EQ(la["bare_map_scheduler_events_per_s"], la["bare_scheduler_events_per_s"]);
    const double rate = la["events_per_s"].get<double>();
    EXPECT_NEAR(la["event_cost_ratio"].get<double>(), onMap / rate, 1e-9 * onMap / rate);
    EXPECT_NEAR(la["event_cost_ratio_own_scheduler"].get<double>(), own / rate, 1e-9 * own / rate);

    // NS_GLOBAL_VALUE naming the scheduler is the user's choice too (this
    // module's own included: ns-3 reads the variable before the module
    // registers it); a name that is no scheduler is bad input
    setenv("NS_GLOBAL_VALUE", "RngRun=1;SchedulerType=ns3::HeapScheduler", 1);
    const auto env = run("--loop=fabric", "sched-env");
    setenv("NS_GLOBAL_VALUE", "SchedulerType=ns3::FabricLookaheadScheduler", 1);
    const auto envOwn = run("--loop=fabric", "sched-env-own");
    setenv("NS_GLOBAL_VALUE", "SchedulerType=ns3::MapSchedular", 1);
    const auto typo = RunCapture("fabric-throughput --hosts=32 --loop=fabric", "sched-typo");
    setenv("NS_GLOBAL_VALUE", "SchedulerType=ns3::DropTailQueue<Packet>", 1);
    const auto notScheduler =
        RunCapture("fabric-throughput --hosts=32 --loop=fabric", "sched-not-scheduler");
    unsetenv("NS_GLOBAL_VALUE");
    EXPECT_EQ(env["scheduler"], "ns3::HeapScheduler");
    EXPECT_EQ(env["events"], la["events"]);
    EXPECT_EQ(envOwn["scheduler"], "ns3::FabricLookaheadScheduler");
    for (const auto& bad : {typo, notScheduler})
    {
        EXPECT_EQ(bad.first, 2);
        EXPECT_NE(bad.second.find("invalid NS_GLOBAL_VALUE SchedulerType"), std::string::npos)
            << bad.second;
        EXPECT_NE(bad.second.find("allowed: the TypeId name of an ns-3 scheduler"),
                  std::string::npos)
            << bad.second;
    }
}

} // namespace

TEST(Benches, FabricThroughputRunsCongestionControlAndCountsItsControlPackets)
{
    const auto run = [](const std::string& args, const std::string& name) {
        return nlohmann::json::parse(
            RunJsonText("fabric-throughput --hosts=16 --loop=fabric " + args, name));
    };
    const auto none = run("", "cc-none");
    const auto dctcp = run("--cc=dctcp --lb=spray", "cc-dctcp");
    EXPECT_EQ(none["control_packets"].get<uint64_t>(), 0u);
    EXPECT_EQ(none["cc"], "none");
    EXPECT_EQ(dctcp["cc"], "dctcp");
    EXPECT_EQ(dctcp["lb"], "spray");
    // every flow delivers its bytes, and AckEvery 1 acknowledges each packet
    EXPECT_EQ(dctcp["data_packets"], none["data_packets"]);
    EXPECT_EQ(dctcp["bytes_delivered"], none["bytes_delivered"]);
    EXPECT_EQ(dctcp["control_packets"], dctcp["data_packets"]);
    for (const auto& [args, flag] : std::vector<std::pair<std::string, std::string>>{
             {"--cc=cubic", "--cc"},
             {"--lb=random", "--lb"},
             {"--ecn-pmax=1.5", "--ecn-pmax"},
             {"--cc=dcqcn --ecn-kmin=300000 --ecn-kmax=200000", "--ecn-kmin"}})
    {
        const auto bad = RunCapture("fabric-throughput --hosts=16 --loop=fabric " + args, "cc-bad");
        EXPECT_EQ(bad.first, 2) << args;
        EXPECT_NE(bad.second.find(flag), std::string::npos) << args << ": " << bad.second;
    }
}
