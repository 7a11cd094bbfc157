/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// What the programs compute and report: sizes, rows, results and failures
// in their JSON.
#include "program-run.h"

#include "ns3/bfb-schedule.h"
#include "ns3/topology-finder.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace
{

using namespace gpu_fabric_test;

TEST(Programs, DirectConnectSynthAllReduceIsReduceScatterPlusAllGather)
{
    // 240 hosts of degree 3 choose GenKautz(3,240), which is not its own
    // reverse: its allreduce is BFB's reduce-scatter (an allgather on the
    // reverse graph) plus its allgather, not twice the allgather. The double
    // binary tree's busiest port carries M at d = 3 (T_B = 3, not d/2 = 1.5,
    // under the 2(N-1)/N bound).
    const auto j = RunJson("direct-connect-synth --nodes=240 --degree=3", "dc-synth-240");
    ASSERT_TRUE(j.is_object());
    ASSERT_EQ(j["chosen"]["name"], "GenKautz(3,240)");
    const ns3::DirectConnectGraph g = ns3::BuildFromName("GenKautz(3,240)");
    const double ag = ns3::ToDouble(ns3::BfbAllGather(g).Tb());
    const double rs = ns3::ToDouble(ns3::BfbAllGather(g.Reverse()).Tb());
    ASSERT_NE(rs, ag) << "the test needs a graph whose reverse schedules differently";
    ASSERT_EQ(j["baselines"].size(), 3u);
    EXPECT_EQ(j["baselines"][0]["name"], "BFB GenKautz(3,240)");
    EXPECT_DOUBLE_EQ(j["baselines"][0]["tb"].get<double>(), rs + ag);
    EXPECT_TRUE(j["baselines"][0]["exact"].get<bool>());
    EXPECT_EQ(j["baselines"][2]["name"], "DoubleBinaryTree");
    EXPECT_DOUBLE_EQ(j["baselines"][2]["tb"].get<double>(), 3.0);
    // speedups are the ratios of the printed alpha-beta times
    const double bfb = j["baselines"][0]["time_s"].get<double>();
    EXPECT_DOUBLE_EQ(j["allreduce_speedup"]["shifted_ring"].get<double>(),
                     j["baselines"][1]["time_s"].get<double>() / bfb);
    EXPECT_DOUBLE_EQ(j["allreduce_speedup"]["double_binary_tree"].get<double>(),
                     j["baselines"][2]["time_s"].get<double>() / bfb);
}

TEST(Programs, DirectConnectSynthFindsTheDegreeFourCirculant)
{
    // issue 25: --nodes=12 --degree=4 printed (2 steps, T_B 5/3) and (3, 11/12)
    // because circulants were searched at degree 2 only; C(12,{2,3}) (degree
    // 4) takes 2 steps at 11/12, both lower bounds, so it is the whole frontier
    const auto j = RunJson("direct-connect-synth --nodes=12 --degree=4", "dc-synth-12");
    ASSERT_TRUE(j.is_object());
    ASSERT_EQ(j["frontier"].size(), 1u) << j["frontier"].dump();
    EXPECT_EQ(j["frontier"][0]["steps"].get<uint32_t>(), 2u);
    EXPECT_EQ(j["frontier"][0]["tb_exact"], "11/12");
    EXPECT_TRUE(j["frontier"][0]["tb_optimal"].get<bool>());
    EXPECT_EQ(j["chosen"]["name"], j["frontier"][0]["name"]);
}

TEST(Programs, CollectiveBenchSizesAreWholeCountsAndDirectConnectTakesTheGraphsGpus)
{
    // 24 ranks: allgather sizes are whole 4-byte elements per rank, so the
    // default --min-bytes (1024) rounds up to 1056 = 11 x 96 and the count
    // column times 96 is the simulated size
    nlohmann::json j = RunJson("collective-bench --collective=allgather --gpus=24 --max-bytes=4224",
                               "bench-sizes");
    ASSERT_TRUE(j.is_object());
    ASSERT_EQ(j["results"].size(), 3u) << j.dump();
    for (size_t i = 0; i < 3; ++i)
    {
        EXPECT_EQ(j["results"][i]["bytes"].get<uint64_t>(), 1056u << i);
        EXPECT_EQ(j["results"][i]["count"].get<uint64_t>(), 11u << i);
    }
    // --gpus equal to the graph's node count is accepted
    j = RunJson("collective-bench --topology=direct-connect --graph='Hypercube(3)' --gpus=8 "
                "--max-bytes=1024",
                "bench-sizes");
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j["gpus"].get<uint32_t>(), 8u);
}

TEST(Programs, CollectiveBenchRunsBfbOnADirectConnectGraph)
{
    // BFB's allreduce on Hypercube(3): T_L = 6 steps, T_B = 2 x 7/8 = 7/4;
    // 400 Gb/s per node over 3 arcs, 500 ns links. The simulated time is
    // within 3 % of alpha T_L + T_B M / (B x 4096/4122), alpha = the delay
    // plus a 4122-byte packet at B/d (as test-bfb-collective checks BFB);
    // the printed formula is that closed form and the ratio their quotient
    for (const std::string backend : {"packet", "flow"})
    {
        const auto j =
            RunJson("collective-bench --topology=direct-connect --graph='Hypercube(3)' "
                    "--algorithm=bfb --min-bytes=16777216 --max-bytes=16777216 --backend=" +
                        backend,
                    "bench-bfb-" + backend);
        ASSERT_TRUE(j.is_object()) << backend;
        EXPECT_EQ(j["algorithm"], "bfb");
        ASSERT_EQ(j["results"].size(), 1u) << j.dump();
        const auto& row = j["results"][0];
        const double m = 16777216;
        const double b = 400e9;
        const double formula =
            6 * (500e-9 + 4122.0 * 8 / (b / 3)) + 7.0 / 4 * m * 8 / (b * 4096 / 4122);
        EXPECT_NEAR(row["formula_s"].get<double>(), formula, 1e-9 * formula) << backend;
        const double t = row["time_s"].get<double>();
        EXPECT_NEAR(t, formula, 0.03 * formula) << backend;
        EXPECT_NEAR(row["ratio"].get<double>(), t / row["formula_s"].get<double>(), 1e-6)
            << backend;
    }
    // the other algorithms print no formula column
    const auto ring = RunJson("collective-bench --topology=direct-connect --graph='Hypercube(3)' "
                              "--max-bytes=1024",
                              "bench-bfb-ring");
    ASSERT_TRUE(ring.is_object());
    EXPECT_FALSE(ring["results"][0].contains("formula_s"));
}

TEST(Programs, CollectiveBenchRowsDoNotDependOnTheSizesBeforeThem)
{
    // An all-to-all on an ECMP fat-tree: its paths follow the messages' flow
    // labels, which came from transport state left by the sizes before (the
    // 4 MiB row of a sweep from 1 MiB took 103.07 us, alone 84.69 us). Each
    // size runs on a fresh fabric now: a sweep's row equals the size alone,
    // on both backends.
    for (const std::string backend : {"packet", "flow"})
    {
        double time[2] = {0, 0};
        for (int alone = 0; alone < 2; ++alone)
        {
            const auto j =
                RunJson("collective-bench --topology=fat-tree --gpus=32 --radix=8 "
                        "--collective=alltoall --algorithm=direct "
                        "--max-bytes=4194304 --backend=" +
                            backend + (alone ? " --min-bytes=4194304" : " --min-bytes=1048576"),
                        "bench-history-" + backend + std::to_string(alone));
            ASSERT_TRUE(j.is_object());
            ASSERT_EQ(j["results"].size(), alone ? 1u : 3u) << j.dump();
            ASSERT_EQ(j["results"].back()["bytes"].get<uint64_t>(), 4194304u);
            time[alone] = j["results"].back()["time_s"].get<double>();
        }
        EXPECT_GT(time[0], 0) << backend;
        EXPECT_EQ(time[0], time[1]) << backend; // bit for bit, not approximately
    }
}

TEST(Programs, CollectiveBenchChecksTheSweepsLargestSizeNotMaxBytes)
{
    // 4 TiB doubling up to 24 TiB tops out at 16 TiB, the largest size a
    // collective may have: accepted (flow level, so it takes milliseconds);
    // the check used to compare --max-bytes itself and refused it
    const std::string json = ::testing::TempDir() + "bench-largest.json";
    std::remove(json.c_str());
    const std::string cmd = std::string(GPU_FABRIC_BIN_DIR) +
                            "/collective-bench --backend=flow --min-bytes=4398046511104 "
                            "--max-bytes=26388279066624 --json=" +
                            json + " > /dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    const auto j = nlohmann::json::parse(Slurp(json));
    ASSERT_EQ(j["results"].size(), 3u) << j.dump();
    EXPECT_EQ(j["results"][2]["bytes"].get<uint64_t>(), uint64_t{1} << 44);
}

TEST(Programs, CollectiveBenchReportsASizeThatDidNotComplete)
{
    // no PFC, 20 kB switch buffers and congestion drops not resent: the
    // all-to-all loses packets for good. The sweep stops there with status 1
    // and says so (it printed a row of zeros and exited 0).
    const std::string json = ::testing::TempDir() + "bench-failed.json";
    const std::string err = ::testing::TempDir() + "bench-failed.err";
    std::remove(json.c_str());
    const std::string cmd =
        std::string(GPU_FABRIC_BIN_DIR) +
        "/collective-bench --topology=fat-tree --gpus=32 --radix=8 --collective=alltoall "
        "--algorithm=direct --min-bytes=131072 --max-bytes=262144 "
        "--ns3::FabricSwitch::PfcEnabled=false --ns3::FabricSwitch::GrowBufferForPfc=false "
        "--ns3::FabricSwitch::PortBuffer=20000B "
        "--ns3::PacketTransport::RecoverCongestionDrops=false --json=" +
        json + " > /dev/null 2> " + err;
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << cmd;
    EXPECT_EQ(WEXITSTATUS(status), 1) << cmd;
    EXPECT_NE(Slurp(err).find("the 131072-byte alltoall did not complete"), std::string::npos)
        << Slurp(err);
    const auto j = nlohmann::json::parse(Slurp(json));
    EXPECT_TRUE(j["results"].empty()) << j.dump();
    EXPECT_NE(j.value("error", std::string()).find("did not complete"), std::string::npos);
}

TEST(Programs, RailOnlyVsFatTreeRunsJobsWithStagesSmallerThanADomain)
{
    // PP 4 on 16 DGX GPUs: stages of 4 GPUs, two per HB domain. The
    // simulation runs; Eq. 1 (whole domains) is reported as not applying
    // (null) instead of failing the run with an error about K.
    const auto j =
        RunJson("rail-only-vs-fat-tree --quick --gpus=16 --tp=1 --pp=4 --png=none", "small-stages");
    ASSERT_TRUE(j.is_object());
    ASSERT_FALSE(j["results"].empty());
    EXPECT_TRUE(j["results"][0]["analytical_time_s"].is_null());
    EXPECT_GT(j["results"][0]["iteration_time_s"].get<double>(), 0);
}

TEST(Programs, FailureStudyNamesTheCommAFailedGpuHolds)
{
    // GPU 9 fails with no remedy: the iteration does not complete, and the
    // row names the comm it broke (rank 9's TP group) and how many ranks wait
    const auto j =
        RunJson("failure-study --layers=1 --hidden=256 --seq=64 --micro-batches=1", "fs-comms");
    ASSERT_TRUE(j.is_object());
    uint32_t failedRows = 0;
    for (const auto& row : j["rows"])
    {
        const auto comms = row["failed_comms"].get<std::vector<std::string>>();
        const std::string scenario = row["scenario"].get<std::string>();
        if (row["complete"].get<bool>())
        {
            EXPECT_TRUE(comms.empty()) << scenario;
            EXPECT_TRUE(row["unfinished_ranks"].empty()) << scenario;
            continue;
        }
        ++failedRows;
        EXPECT_NE(scenario.find("no remedy"), std::string::npos) << scenario;
        ASSERT_FALSE(comms.empty()) << scenario;
        EXPECT_NE(comms[0].find("allreduce ring of 8 ranks"), std::string::npos) << comms[0];
        EXPECT_NE(comms[0].find("GPU 9 down"), std::string::npos) << comms[0];
        // TP 8 x DP 3: every rank ends up waiting on the broken group
        const auto held = row["unfinished_ranks"].get<std::vector<uint32_t>>();
        ASSERT_EQ(held.size(), 24u) << scenario;
        for (uint32_t r = 0; r < 24; ++r)
        {
            EXPECT_EQ(held[r], r) << scenario;
        }
    }
    EXPECT_EQ(failedRows, 2u); // one per design
}

TEST(Programs, HbDomainSweepGradBytesAndBatchScaleTheirTerms)
{
    // TP = K = 256 (--tp-mode=domain): N_Ds = 1, so only the rail DP term
    // carries S_T, and it is Eq. 1's l 2 S_T (N_Df - 1) / (N B_S) with
    // S_T = 12 d^2 x --grad-bytes
    const std::string base = "hb-domain-sweep --models=gpt3-175b --hb-sizes=256 "
                             "--tp-mode=domain --png=none";
    const auto two = RunJson(base, "sweep-grad2")["results"].at(0);
    const auto four = RunJson(base + " --grad-bytes=4", "sweep-grad4")["results"].at(0);
    const double d = 12288;
    const double railDp = 96 * 2 * (12 * d * d * 4) * (128 - 1) / (32768 * 400e9 / 8);
    EXPECT_NEAR(four["dp_rail_time_s"].get<double>(), railDp, 1e-12 * railDp);
    EXPECT_NEAR(two["dp_rail_time_s"].get<double>(), railDp / 2, 1e-12 * railDp);
    EXPECT_EQ(two["compute_time_s"], four["compute_time_s"]);
    EXPECT_EQ(two["tp_time_s"], four["tp_time_s"]);
    // twice GPT-3's 32M tokens: twice the compute and TP terms, the same DP terms
    const auto b2 = RunJson(base + " --batch=67108864", "sweep-batch")["results"].at(0);
    EXPECT_NEAR(b2["compute_time_s"].get<double>(),
                2 * two["compute_time_s"].get<double>(),
                1e-12 * b2["compute_time_s"].get<double>());
    EXPECT_NEAR(b2["tp_time_s"].get<double>(),
                2 * two["tp_time_s"].get<double>(),
                1e-12 * b2["tp_time_s"].get<double>());
    EXPECT_EQ(b2["dp_rail_time_s"], two["dp_rail_time_s"]);
}

TEST(Programs, TrafficSparsityCountsDataParallelPairsAsAllToAll)
{
    // GPT-1T on 1024 DGX-H100 GPUs, TP 8, PP 8: 64 DP groups of 16, one GPU per
    // domain on one rail. As all-to-all every ordered pair of a group carries
    // DP bytes (64 x 16 x 15), with the same DP bytes as the AllReduce's ring
    const std::string base = "traffic-sparsity --gpus=1024 --pp=8 --heatmap-gpus=0 --png=none";
    const auto ring = RunJson(base, "ts-ring")["cluster"];
    const auto a2a = RunJson(base + " --dp-pattern=alltoall", "ts-a2a")["cluster"];
    EXPECT_EQ(a2a["pairs_by_dim"]["dp"]["pairs"].get<uint64_t>(), 64u * 16 * 15);
    EXPECT_LT(ring["pairs_by_dim"]["dp"]["pairs"].get<uint64_t>(), 64u * 16 * 15);
    EXPECT_EQ(a2a["by_dim"]["dp"]["bytes"], ring["by_dim"]["dp"]["bytes"]);
    EXPECT_EQ(a2a["by_dim"]["dp"]["other_inter_domain_bytes"].get<uint64_t>(), 0u);
    // TP ring AllReduces of 8 inside each domain: 128 groups x 8 ordered pairs, either way
    EXPECT_EQ(ring["pairs_by_dim"]["tp"]["pairs"].get<uint64_t>(), 128u * 8);
    EXPECT_EQ(a2a["pairs_by_dim"]["tp"]["pairs"], ring["pairs_by_dim"]["tp"]["pairs"]);
}

} // namespace
