/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The flags every simulating program shares (examples/support's
 * RunOutputs): --timeline writes a trace whose collective spans are the
 * measured times of the program's results, --link-util a series per run and
 * a heatmap, --progress=0 silences the progress lines a long run prints, and
 * progress never reaches --json.
 */
#include "program-run.h"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

using namespace gpu_fabric_test;

namespace
{

TEST(RunOutputs, TimelineSpansAreTheSweepsMeasuredTimes)
{
    const std::string dir = FreshDir("run-outputs-timeline");
    const auto [status, out] =
        RunCapture("collective-bench --gpus=16 --radix=16 "
                   "--min-bytes=262144 --max-bytes=524288 "
                   "--timeline=" +
                       dir + "t.json --link-util=" + dir + "u.json --json=" + dir + "r.json",
                   "run-outputs-timeline");
    ASSERT_EQ(status, 0) << out;
    const auto results = nlohmann::json::parse(Slurp(dir + "r.json"))["results"];
    ASSERT_EQ(results.size(), 2U);
    const auto trace = nlohmann::json::parse(Slurp(dir + "t.json"));
    // per run (a process), its longest collective span, microseconds
    std::map<uint32_t, double> longest;
    std::map<uint32_t, uint32_t> spans;
    for (const auto& e : trace["traceEvents"])
    {
        if (e["ph"] == "X" && e["cat"] == "collective")
        {
            const uint32_t pid = e["pid"];
            longest[pid] = std::max(longest[pid], e["dur"].get<double>());
            ++spans[pid];
        }
    }
    ASSERT_EQ(longest.size(), 2U);
    size_t i = 0;
    for (const auto& [pid, us] : longest)
    {
        EXPECT_EQ(spans[pid], 16U);
        EXPECT_NEAR(us, results[i]["time_s"].get<double>() * 1e6, 1e-3) << "size " << i;
        ++i;
    }
    // a run per size, each with NVLink and rail traffic, and the heatmap
    const auto util = nlohmann::json::parse(Slurp(dir + "u.json"));
    ASSERT_EQ(util["runs"].size(), 2U);
    for (const auto& run : util["runs"])
    {
        EXPECT_GT(run["links"].size(), 0U);
        double peak = 0;
        for (const auto& l : run["links"])
        {
            for (double u : l["utilization"])
            {
                peak = std::max(peak, u);
            }
        }
        EXPECT_GT(peak, 0);
        // (a frame's serialization time is whole nanoseconds: 82 ns for 81.9)
        EXPECT_LE(peak, 1.02);
    }
    EXPECT_TRUE(std::filesystem::exists(dir + "u.png")) << out;
}

TEST(RunOutputs, ProgressLinesOnALongRunAndNoneWithProgressZero)
{
    const std::string dir = FreshDir("run-outputs-progress");
    // every run counts as long, and reports every millisecond of wall time
    const std::string run = "collective-bench --gpus=16 --radix=16 --min-bytes=4194304 "
                            "--max-bytes=4194304 --GpuFabricWarnRunSeconds=0 "
                            "--ns3::RunProgress::Interval=1ms --json=" +
                            dir + "r.json";
    const auto [status, out] = RunCapture(run, "run-outputs-progress");
    ASSERT_EQ(status, 0) << out;
    EXPECT_NE(out.find("gpu-fabric: progress: "), std::string::npos) << out;
    EXPECT_EQ(Slurp(dir + "r.json").find("progress"), std::string::npos);

    const auto [quiet, quietOut] = RunCapture(run + " --progress=0", "run-outputs-quiet");
    ASSERT_EQ(quiet, 0) << quietOut;
    EXPECT_EQ(quietOut.find("progress"), std::string::npos) << quietOut;
}

TEST(RunOutputs, ASweepCountsItsRunsDoneOfTheTotalAndObeysProgressZero)
{
    // four sizes, four runs of 1 MiB and more, each far above the 1 ms
    // interval: a run that starts reports the runs before it, never all four
    // (the same check as with eight runs up to 128 MiB, whose last two runs
    // were three quarters of the test's time)
    const std::string run = "collective-bench --gpus=16 --radix=16 --min-bytes=1048576 "
                            "--max-bytes=8388608 --ns3::RunProgress::Interval=1ms";
    const auto [status, out] = RunCapture(run, "run-outputs-sweep");
    ASSERT_EQ(status, 0) << out;
    EXPECT_NE(out.find("gpu-fabric: progress: sweep, "), std::string::npos) << out;
    EXPECT_NE(out.find(" of 4 runs done, "), std::string::npos) << out;
    EXPECT_NE(out.find(" left"), std::string::npos) << out;
    EXPECT_EQ(out.find("4 of 4 runs"), std::string::npos) << out;
    const auto [quiet, quietOut] = RunCapture(run + " --progress=0", "run-outputs-sweep-quiet");
    ASSERT_EQ(quiet, 0) << quietOut;
    EXPECT_EQ(quietOut.find("progress"), std::string::npos) << quietOut;
}

TEST(RunOutputs, DirectConnectSynthRecordsItsSimulatedRuns)
{
    // --compare simulates BFB, ShiftedRing and the tree at one size: three
    // runs, each a process of the trace with its collective span
    const std::string dir = FreshDir("run-outputs-dc");
    const auto [status, out] = RunCapture(
        "direct-connect-synth --compare '--graph=BiRing(4)' --sizes=65536 "
        "--algorithms=bfb,shifted-ring,tree --ns3::RunProgress::Interval=1ms --timeline=" +
            dir + "t.json --link-util=" + dir + "u.json",
        "run-outputs-dc");
    ASSERT_EQ(status, 0) << out;
    const auto trace = nlohmann::json::parse(Slurp(dir + "t.json"));
    std::map<uint32_t, uint32_t> spans;
    for (const auto& e : trace["traceEvents"])
    {
        if (e["ph"] == "X" && e["cat"] == "collective")
        {
            ++spans[e["pid"].get<uint32_t>()];
        }
    }
    EXPECT_EQ(spans.size(), 3U) << out;
    EXPECT_EQ(nlohmann::json::parse(Slurp(dir + "u.json"))["runs"].size(), 3U);
    // no total declared: the lines count the runs done, with no estimate
    for (size_t at = out.find("progress: sweep, "); at != std::string::npos;
         at = out.find("progress: sweep, ", at + 1))
    {
        const std::string line = out.substr(at, out.find('\n', at) - at);
        EXPECT_NE(line.find(" done, "), std::string::npos) << line;
        EXPECT_EQ(line.find(" left"), std::string::npos) << line;
    }
}

TEST(RunOutputs, AnUnwritablePathIsRefusedBeforeTheRun)
{
    const auto [status, out] = RunCapture("collective-bench --gpus=16 --radix=16 --max-bytes=1024 "
                                          "--timeline=/nonexistent-dir/t.json",
                                          "run-outputs-bad-path");
    EXPECT_EQ(status, 2);
    EXPECT_NE(out.find("invalid --timeline: got '/nonexistent-dir/t.json', allowed: a "
                       "writable file path"),
              std::string::npos)
        << out;
    EXPECT_EQ(out.find("size(B)"), std::string::npos) << "the table was printed: " << out;
}

} // namespace
