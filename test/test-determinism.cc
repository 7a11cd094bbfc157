/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Same inputs and seed give the same outputs, bit for bit: each example is
// run twice and its JSON files compared byte by byte.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace
{

std::string
Slurp(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Run `program args --json=<TempDir()/tag.json>` once (it must exit 0);
/// return the file's text (empty if it wrote none).
std::string
RunJsonText(const std::string& programAndArgs, const std::string& tag)
{
    const std::string json = ::testing::TempDir() + tag + ".json";
    std::remove(json.c_str());
    const std::string cmd =
        std::string(GPU_FABRIC_BIN_DIR) + "/" + programAndArgs + " --json=" + json + " > /dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return Slurp(json);
}

/// RunJsonText() parsed (a discarded value if the program wrote no JSON).
nlohmann::json
RunJson(const std::string& programAndArgs, const std::string& tag)
{
    return nlohmann::json::parse(RunJsonText(programAndArgs, tag), nullptr, false);
}

/// Run `program args` (stdout and stderr to <TempDir()/tag.txt>: ctest runs
/// tests in parallel, each names its own file); return its exit status (-1
/// if it did not exit) and what it printed.
std::pair<int, std::string>
RunCapture(const std::string& programAndArgs, const std::string& tag)
{
    const std::string log = ::testing::TempDir() + tag + ".txt";
    const std::string cmd =
        std::string(GPU_FABRIC_BIN_DIR) + "/" + programAndArgs + " > " + log + " 2>&1";
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(log)};
}

/// Run \p program with exactly \p args, each one argv element with no shell
/// between (as a job runner passes generated names), in directory \p dir
/// (if not empty), with PATH set to \p path (if not empty), killed after
/// \p limitSeconds (if not 0: a case that hangs fails instead of stalling the
/// suite), its address space limited to \p memoryBytes (if not 0, as ulimit -v
/// does); stdout and stderr to <TempDir()/tag.txt>. \return its exit status
/// (-1 if it did not exit) and what it printed.
std::pair<int, std::string>
RunArgv(const std::string& program,
        std::vector<std::string> args,
        const std::string& tag,
        const std::string& dir = "",
        const std::string& path = "",
        unsigned limitSeconds = 0,
        uint64_t memoryBytes = 0)
{
    const std::string log = ::testing::TempDir() + tag + ".txt";
    std::string exe = std::string(GPU_FABRIC_BIN_DIR) + "/" + program;
    std::vector<char*> argv{exe.data()};
    for (auto& a : args)
    {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0)
    {
        const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0 ||
            (!dir.empty() && chdir(dir.c_str()) != 0) ||
            (!path.empty() && setenv("PATH", path.c_str(), 1) != 0))
        {
            _exit(127);
        }
        const rlimit memory{memoryBytes, memoryBytes};
        if (memoryBytes != 0 && setrlimit(RLIMIT_AS, &memory) != 0)
        {
            _exit(127);
        }
        alarm(limitSeconds); // SIGALRM ends it; the alarm survives execv
        execv(exe.c_str(), argv.data());
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
    {
        return {-1, "fork or wait failed"};
    }
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(log)};
}

/// \return an empty directory <TempDir()/tag>/ of its own
std::string
FreshDir(const std::string& tag)
{
    const std::string dir = ::testing::TempDir() + tag + "/";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

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

TEST(Programs, AMalformedRateIsNamedNotAborted)
{
    // ns-3's DataRate(std::string) aborts on a malformed string; the
    // programs name the flag and exit with status 2
    for (const std::string program : {"fabric-throughput", "fabric-ip-incast"})
    {
        for (const std::string rate : {"abc", "0Gbps", "100"})
        {
            const std::string small = program == "fabric-throughput" ? " --hosts=16" : "";
            const auto [status, text] =
                RunCapture(program + small + " --rate=" + rate, program + "-bad-rate");
            ASSERT_NE(status, -1) << program << " --rate=" << rate;
            EXPECT_EQ(status, 2) << program << " --rate=" << rate;
            EXPECT_NE(text.find("--rate"), std::string::npos) << text;
            EXPECT_NE(text.find("got '" + rate + "'"), std::string::npos) << text;
            EXPECT_NE(text.find("positive rate"), std::string::npos) << text;
        }
    }
}

TEST(Programs, BadAttributeAndGlobalValuesExitWithStatusTwo)
{
    // ns-3's CommandLine would print its help and exit with 1; the programs
    // treat a bad --ns3:: attribute or global value as any bad input
    struct Bad
    {
        std::string flag;
        std::vector<std::string> said;
    };

    const std::vector<Bad> cases = {
        {"--ns3::FabricNetDevice::DataRate=abc",
         {"--ns3::FabricNetDevice::DataRate", "got 'abc'", "DataRate", "Line rate"}},
        {"--ns3::FabricSwitch::PfcXoff=-5", {"PfcXoff", "got '-5'", "uint32_t"}},
        {"--ns3::FabricNetDevice::NoSuchAttribute=1", {"NoSuchAttribute", "registered type"}},
        {"--ns3::NoSuchType::Rate=1", {"NoSuchType", "registered type"}},
        {"--SchedulerType=ns3::NoSuchScheduler", {"SchedulerType", "got 'ns3::NoSuchScheduler'"}},
        // ns-3's own integer and Time parsers abort on these
        {"--ns3::FabricSwitch::PfcXoff=abc", {"PfcXoff", "got 'abc'", "uint32_t"}},
        {"--ns3::FabricGpu::Rank=1.5", {"Rank", "got '1.5'"}},
        {"--ns3::FabricChannel::Delay=abc", {"Delay", "got 'abc'", "Time"}},
        {"--RngRun=x", {"RngRun", "got 'x'"}},
        // the program's --preset (default dgx-h100) wins: another Preset
        // attribute could not take effect
        {"--ns3::HbDomain::Preset=dgx-a100", {"ns3::HbDomain::Preset", "got 'dgx-a100'"}},
        {"--ns3::HbDomain::Preset=nope", {"ns3::HbDomain::Preset", "got 'nope'"}},
    };
    for (const auto& bad : cases)
    {
        const auto [status, text] = RunCapture("hb-domain-messages " + bad.flag, "bad-attribute");
        ASSERT_NE(status, -1) << bad.flag;
        EXPECT_EQ(status, 2) << bad.flag;
        for (const auto& s : bad.said)
        {
            EXPECT_NE(text.find(s), std::string::npos) << bad.flag << ": " << text;
        }
    }
    // a good one still runs
    const std::string cmd = std::string(GPU_FABRIC_BIN_DIR) +
                            "/hb-domain-messages --bytes=100000 "
                            "--ns3::FabricSwitch::PfcXoff=262144 --SchedulerType=ns3::HeapScheduler"
                            " > /dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    // a Preset attribute that agrees with --preset runs
    const std::string agree = std::string(GPU_FABRIC_BIN_DIR) +
                              "/hb-domain-messages --bytes=100000 --preset=dgx-a100 "
                              "--ns3::HbDomain::Preset=dgx-a100 > /dev/null 2>&1";
    EXPECT_EQ(std::system(agree.c_str()), 0);
}

TEST(Programs, GraphNamesAndEdgeListsAreBoundedBeforeTheyRun)
{
    // a name nested 10,000 deep overflowed the parser's stack, Pow allocated
    // 8 GB of factors before its size check, /dev/zero was read for ever
    std::string deep;
    for (int i = 0; i < 10'000; ++i)
    {
        deep += "L(";
    }
    deep += "K(2)" + std::string(10'000, ')');

    struct Bad
    {
        std::string command;
        std::string said;
    };

    const std::vector<Bad> cases = {
        {"direct-connect-synth '--graph=" + deep + "'",
         "invalid construction name nesting depth (at character 129): got 'L(L(L("},
        {"direct-connect-synth '--graph=" + deep + "'",
         "allowed: at most 64 constructions nested in one another; this name nests 10001 deep"},
        {"direct-connect-synth '--graph=Pow(K(2),999999999)'",
         "invalid Pow(G,n) hosts: got '2^999999999', allowed: at most 16777216 hosts"},
        {"direct-connect-synth --edges=/dev/zero",
         "invalid edge list file: got '/dev/zero', allowed: a readable regular file (not a "
         "directory, device or pipe)"},
    };
    for (const auto& bad : cases)
    {
        const auto [status, text] = RunCapture(bad.command, "bad-graph");
        EXPECT_EQ(status, 2) << bad.command.substr(0, 100) << ": " << text.substr(0, 400);
        EXPECT_NE(text.find(bad.said), std::string::npos)
            << bad.command.substr(0, 100) << ": " << text.substr(0, 400);
    }
}

TEST(Programs, BadDeviceAndPlatformAttributesExitWithStatusTwo)
{
    // each crashed (a device's check threw, then tearing down the half-built
    // fabric dereferenced a null pointer; ns-3 aborted on a TxQueue or an
    // --ascii path it could not make) or ran for ever (every packet lost at
    // BitErrorRate=1; a million NVSwitch planes)
    struct Bad
    {
        std::string program;
        std::string flag;
        std::string said;
    };

    const std::string mtu = "allowed: 27 to 65535 bytes (a frame is more than its 26-byte "
                            "FabricHeader)";
    const std::vector<Bad> cases = {
        {"hb-domain-messages",
         "--ns3::FabricNetDevice::Mtu=0",
         "invalid FabricNetDevice::Mtu: got '0', " + mtu},
        {"hb-domain-messages",
         "--ns3::FabricNetDevice::Mtu=1",
         "invalid FabricNetDevice::Mtu: got '1', " + mtu},
        {"hb-domain-messages",
         "--ns3::FabricNetDevice::Mtu=26",
         "invalid FabricNetDevice::Mtu: got '26', " + mtu},
        {"collective-bench",
         "--ns3::FabricNetDevice::Mtu=26",
         "invalid FabricNetDevice::Mtu: got '26', " + mtu},
        {"hb-domain-messages",
         "--ns3::FabricNetDevice::DataRate=0bps",
         "invalid FabricNetDevice::DataRate: got '0bps', allowed: a positive rate"},
        {"hb-domain-messages",
         "--ns3::FabricNetDevice::TxQueue=0",
         "invalid --ns3::FabricNetDevice::TxQueue: got '0', allowed: the TypeId name of "
         "ns3::Queue<Packet>: ns3::DropTailQueue<Packet>"},
        {"fabric-ip-incast",
         "--ascii=/nonexistent/folder/x.tr",
         "invalid --ascii: got '/nonexistent/folder/x.tr', allowed: a writable file path"},
        {"hb-domain-messages",
         "--ns3::FabricChannel::BitErrorRate=1",
         "invalid --ns3::FabricChannel::BitErrorRate: got '1', allowed: double"},
        {"hb-domain-messages",
         "--ns3::HbDomain::NvSwitchPlanes=1000000",
         "invalid --ns3::HbDomain::NvSwitchPlanes: got '1000000', allowed: uint32_t 0:64"},
    };
    for (const auto& bad : cases)
    {
        const auto [status, text] =
            RunArgv(bad.program, {bad.flag}, "bad-device-attribute", "", "", 60);
        EXPECT_EQ(status, 2) << bad.program << " " << bad.flag << ": " << text;
        EXPECT_NE(text.find(bad.said), std::string::npos)
            << bad.program << " " << bad.flag << ": " << text;
    }
    // what is allowed still runs: a queue ns-3 can make, a BER below 1, 18 planes
    for (const std::string flag : {"--ns3::FabricNetDevice::TxQueue=ns3::DropTailQueue<Packet>",
                                   "--ns3::FabricChannel::BitErrorRate=0",
                                   "--ns3::HbDomain::NvSwitchPlanes=18"})
    {
        const auto [status, text] =
            RunArgv("hb-domain-messages", {"--bytes=100000", flag}, "good-device-attribute");
        EXPECT_EQ(status, 0) << flag << ": " << text;
    }
}

TEST(Programs, RunsThatCannotFitInMemoryAreRefusedUpFront)
{
    // each asked for more memory than any machine here has (BFB's distance
    // table alone was 8.6 GB in one request): refused by the parameter that
    // makes it large, with the estimate, before it is allocated
    struct Bad
    {
        std::string program;
        std::vector<std::string> args;
        uint64_t memoryBytes; //!< ulimit -v for the run (0: none)
        std::vector<std::string> said;
    };

    const std::string fits = "allowed: a run whose memory estimate fits in the ";
    std::vector<Bad> cases = {
        {"direct-connect-synth",
         {"--graph=Ring(65535)"},
         0,
         {"invalid graph Ring(65535) hosts: got '65535', " + fits,
          "BFB's distance table (8.6 GB) and schedule (at least 274.9 GB) would need about "
          "283.5 GB"}},
        {"collective-bench",
         {"--chunk-bytes=1", "--min-bytes=1073741824", "--max-bytes=1073741824"},
         0,
         {"invalid chunkBytes: got '1', " + fits,
          "the schedule (1073741824 chunks, 64424509440 operations) would need about 2.6 TB"}},
        {"fabric-routes",
         {"--gpus=262144"},
         0,
         {"invalid gpus: got '262144', " + fits,
          "routing tables (413696 nodes x 262144 destinations) would need about 216.9 GB"}},
        {"collective-bench",
         {"--gpus=262144", "--backend=flow"},
         0,
         {"invalid ranks: got '262144', " + fits, "the schedule (262144 chunks,"}},
    };
#ifndef GPU_FABRIC_SANITIZE // a sanitizer's shadow memory does not run under ulimit -v
    // the budget follows ulimit -v (8.5 GB of distances on any machine)
    cases.push_back({"direct-connect-synth",
                     {"--graph=Torus(255,255)"},
                     uint64_t{4} << 30,
                     {"invalid graph Torus(255,255) hosts: got '65025', " + fits + "4.3 GB",
                      "BFB's distance table (8.5 GB)"}});
    // and where no estimate refused the run, running out says so
    cases.push_back({"fabric-cost",
                     {"--gpus=4194304"},
                     uint64_t{1} << 30,
                     {"fabric-cost: out of memory: a request for memory failed with ",
                      "the run needs more than this machine or its limit (ulimit -v) allows"}});
#endif
    for (const auto& bad : cases)
    {
        const auto [status, text] =
            RunArgv(bad.program, bad.args, "bad-memory", "", "", 60, bad.memoryBytes);
        EXPECT_EQ(status, 2) << bad.program << " " << bad.args[0] << ": " << text;
        for (const auto& s : bad.said)
        {
            EXPECT_NE(text.find(s), std::string::npos)
                << bad.program << " " << bad.args[0] << ": " << text;
        }
    }
}

TEST(Programs, BadFlagValuesAreNamed)
{
    // CommandLine alone reads "-5" for an unsigned flag as 2^64 - 5 (a
    // hb-domain-messages run of 18 EB that never ends) and "12abc" as 12
    struct Bad
    {
        std::string command;
        std::string said;
    };

    const std::vector<Bad> cases = {
        {"hb-domain-messages --bytes=-5", "a whole number from 0 to 18446744073709551615"},
        {"hb-domain-messages --bytes=12abc", "got '12abc'"},
        {"fabric-throughput --hosts=1.5", "a whole number from 0 to 4294967295"},
        {"fabric-throughput --hosts=99999999999", "got '99999999999'"},
        {"fabric-throughput --loop=sideways", "invalid --loop: got 'sideways', allowed: both"},
        {"fabric-throughput --loop=bare --bare-events=10", "invalid --bare-pending: got '0'"},
        {"fabric-throughput --loop=bare --bare-pending=10", "invalid --bare-events: got '0'"},
        {"fabric-throughput --hosts=16 --loop=fabric --bare-pending=7",
         "invalid --bare-pending: got '7', allowed: only with --loop=bare"},
        {"fabric-throughput --loop=bare --bare-pending=3 --bare-events=1000 --hosts=1",
         "invalid --hosts: got '1', allowed: only with --loop=both or fabric"},
        {"bfb-scale --keep=2", "true, false, 1 or 0"},
        {"bfb-scale --nope", "invalid flag: got '--nope'"},
        {"flow-vs-packet --max-bytes=100", "invalid --max-bytes: got '100', allowed: 4096 to 2^30"},
        {"flow-vs-packet --show-above=-1", "invalid --show-above: got '-1'"},
        {"collective-bench --channels=two", "--channels"},
        {"hb-domain-messages --pcap=/nonexistent/folder/x", "invalid PCAP file"},
        {"hb-domain-messages --bytes", "got no value"},
        {"fabric-ip-incast --segment-bytes=0", "--segment-bytes"},
        {"fabric-ip-incast '--rate=10 Gbps'", "invalid --rate"},
        {"fabric-ip-incast --queue-disc=ns3::PrioQueueDisc",
         "none or one of ns3::FqCoDelQueueDisc"},
        {"hb-domain-messages '--ns3::FabricNetDevice::DataRate=100 Gbps'", "got '100 Gbps'"},
        {"bfb-scale --keep=0x1", "true, false, 1 or 0"},
        {"fabric-routes --oversubscription=0x.8", "a finite number"},
        {"fabric-cost --prices=", "invalid --prices: got '', allowed: a value"},
        {"collective-bench --preset=", "invalid --preset: got ''"},
        {"rail-only-vs-fat-tree --quick --png=none --tp=3", "invalid --tp: got '3'"},
        {"traffic-sparsity --png=none --gpus=1024 --pp=8 --heatmap-gpus=100",
         "invalid --tp * --heatmap-pp: got '32', allowed: a divisor of --heatmap-gpus = 100"},
        // refused by name before a topology exhausts memory
        {"fabric-cost --gpus=1000000000",
         "invalid gpus: got '1000000000', allowed: at most 4194304"},
        // a direct-connect graph sets the GPU count: a --gpus that differs is
        // refused, not ignored
        {"collective-bench --topology=direct-connect --graph='Hypercube(3)' --gpus=16",
         "invalid --gpus: got '16', allowed: the node count of --graph=Hypercube(3) (8)"},
        {"fabric-routes --topology=direct-connect --graph='Hypercube(3)' --gpus=16",
         "invalid --gpus: got '16', allowed: the node count of --graph=Hypercube(3) (8)"},
        // sizes are whole 4-byte elements (per rank where the count is)
        // the sweep's largest size is checked before any size runs (flow
        // level: were it not, 1 KiB to 16 TiB would run and "bytes" fail)
        {"collective-bench --min-bytes=35184372088832 --max-bytes=35184372088832",
         "invalid --min-bytes: got '35184372088832', allowed: at most 17592186044416 (16 TiB)"},
        {"collective-bench --backend=flow --max-bytes=35184372088832",
         "invalid --max-bytes: got '35184372088832', allowed: a sweep whose largest size "
         "(35184372088832) is at most 17592186044416 (16 TiB)"},
        {"collective-bench --min-bytes=1",
         "invalid --min-bytes: got '1', allowed: a multiple of 4 (whole 4-byte elements for "
         "allreduce)"},
        {"collective-bench --collective=allgather --min-bytes=32",
         "invalid --min-bytes: got '32', allowed: a multiple of 4 x 16 ranks = 64"},
        // a flag that would be ignored is refused
        {"collective-bench --graph='Hypercube(3)'",
         "invalid --graph: got 'Hypercube(3)', allowed: only with --topology=direct-connect"},
        {"fabric-routes --flow-label=7", "invalid --flow-label: got '7', allowed: only with --src"},
        {"direct-connect-synth --chunks=4",
         "invalid --chunks: got '4', allowed: only with --simulate"},
        {"direct-connect-synth --graph='K(4,4)' --nodes=64",
         "invalid --nodes: got '64', allowed: only for the finder"},
        {"direct-connect-synth --graph='K(4,4)' --size=64",
         "invalid --size: got '64', allowed: only for the finder, or with --simulate"},
        {"bfb-scale --graphs='Hypercube(3);'", "invalid --graphs: got 'Hypercube(3);'"},
        {"fabric-routes --topology=direct-connect --oversubscription=2",
         "invalid oversubscription: got '2', allowed: 1 for direct-connect"},
    };
    for (const auto& bad : cases)
    {
        const auto [status, text] = RunCapture(bad.command, "bad-number");
        ASSERT_NE(status, -1) << bad.command;
        EXPECT_EQ(status, 2) << bad.command;
        EXPECT_NE(text.find(bad.said), std::string::npos) << bad.command << ": " << text;
    }
}

TEST(Programs, HbDomainAttributeFlagsReachEveryProgramsPlatform)
{
    // --ns3::HbDomain::* changes the platform a program runs on, and its
    // output names it "<preset>+attributes" (hb-domain-sweep, moe-alltoall
    // and flow-scale's header used the bare preset and ignored the flags)
    struct Case
    {
        std::string command;
        std::string said;
    };

    const std::vector<Case> cases = {
        {"hb-domain-sweep --models=gpt3-175b --ns3::HbDomain::NicRate=100Gbps", "B_S = 100 Gb/s"},
        {"moe-alltoall --presets=dgx-h100 --gpus=16 --bytes=1048576 --backend=flow "
         "--ns3::HbDomain::NicRate=100Gbps",
         "dgx-h100+attributes"},
        {"flow-scale --workload=phases --gpus=512 --preset=dgx-h100 --topology=rail-only "
         "--ns3::HbDomain::GpusPerDomain=4",
         "dgx-h100+attributes (K = 4)"},
        {"collective-bench --gpus=16 --max-bytes=1024 --ns3::HbDomain::NicRate=100Gbps",
         "16 GPUs, dgx-h100+attributes"},
    };
    for (const auto& c : cases)
    {
        const std::string out = ::testing::TempDir() + "hb-attributes.txt";
        const std::string cmd = std::string(GPU_FABRIC_BIN_DIR) + "/" + c.command + " > " + out;
        ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
        const std::string text = Slurp(out);
        EXPECT_NE(text.find(c.said), std::string::npos) << c.command << ":\n" << text;
    }
}

TEST(Programs, NamesAreCheckedBeforeAnyOutput)
{
    // each printed a header (rail-only-vs-fat-tree: ran its simulations)
    // before refusing the name; now nothing reaches standard output
    const std::vector<std::string> cases = {
        "rail-only-vs-fat-tree --quick --png=none --paper-models=gpt-5",
        "rail-only-vs-fat-tree --quick --png=none --topologies=rail-only,torus",
        "hb-domain-sweep --models=gpt-5",
        "flow-scale --model=gpt-5",
        "flow-scale --granularity=block",
        "bfb-scale --graphs='Hypercube(3);Ring'",
        "moe-alltoall --backend=pkt",
    };
    for (const auto& c : cases)
    {
        const std::string out = ::testing::TempDir() + "names-first.txt";
        const std::string cmd =
            std::string(GPU_FABRIC_BIN_DIR) + "/" + c + " > " + out + " 2> /dev/null";
        const int status = std::system(cmd.c_str());
        ASSERT_TRUE(WIFEXITED(status)) << c;
        EXPECT_EQ(WEXITSTATUS(status), 2) << c;
        EXPECT_EQ(Slurp(out), "") << c;
    }
}

TEST(Programs, AFullDiskIsNamedNotSilent)
{
    // /dev/full opens but refuses every write: the programs used to open
    // their --json / --csv files by hand, check only the open, and exit 0
    // with the file cut short (WriteTextFile now closes and checks it)
    if (access("/dev/full", W_OK) != 0)
    {
        GTEST_SKIP() << "no writable /dev/full";
    }

    struct Case
    {
        std::string command;            //!< program and its cheapest arguments
        std::vector<std::string> flags; //!< its output flags
    };

    const std::vector<Case> cases = {
        {"collective-bench --gpus=16 --max-bytes=1024", {"--json", "--csv"}},
        {"direct-connect-synth --nodes=16 --degree=4", {"--json"}},
        {"fabric-cost --gpus=1024 --radix=64", {"--json", "--csv"}},
        {"fabric-routes", {"--json"}},
        {"fabric-ip-incast --senders=2 --bytes=100000", {"--json"}},
        {"failure-study --layers=1 --hidden=256 --seq=64 --micro-batches=1", {"--json"}},
        {"hb-domain-messages --bytes=100000", {"--json"}},
        {"hb-domain-sweep --models=gpt3-175b --png=none", {"--json", "--csv"}},
        {"moe-alltoall --presets=dgx-h100 --gpus=16 --bytes=1048576 --backend=flow", {"--json"}},
        {"rail-only-vs-fat-tree --quick --backend=flow --png=none", {"--json", "--csv"}},
        {"traffic-sparsity --png=none", {"--json", "--csv"}},
        {"bfb-scale --graphs='Hypercube(3)'", {"--json"}},
        {"flow-scale --workload=phases --gpus=512 --preset=dgx-h100 --topology=rail-only",
         {"--json"}},
        // WriteTextFile's earlier users: a JSON smaller than the stream's
        // buffer reached the disk only when the file closed, unchecked
        {"fabric-throughput --loop=bare --bare-pending=3 --bare-events=1000", {"--json"}},
        {"flow-vs-packet --quick --max-bytes=8192", {"--json"}},
    };
    for (const auto& c : cases)
    {
        for (const auto& flag : c.flags)
        {
            const std::string cmd = c.command + " " + flag + "=/dev/full";
            const auto [status, text] = RunCapture(cmd, "full-disk");
            ASSERT_NE(status, -1) << cmd;
            EXPECT_EQ(status, 2) << cmd;
            EXPECT_NE(text.find("invalid " + flag +
                                ": got '/dev/full', allowed: a path with room to write"),
                      std::string::npos)
                << cmd << ":\n"
                << text;
        }
    }
}

TEST(Programs, DirectConnectSynthAllReduceIsReduceScatterPlusAllGather)
{
    // 1200 hosts of degree 3 choose L(GenKautz(3,400)), which is not its own
    // reverse: its allreduce is BFB's reduce-scatter (an allgather on the
    // reverse graph, T_B 1181/800) plus its allgather (1196/800), not twice
    // the allgather (2.99). The double binary tree's busiest port carries M
    // at d = 3 (T_B = 3, not d/2 = 1.5, under the 2(N-1)/N bound).
    const auto j = RunJson("direct-connect-synth --nodes=1200 --degree=3", "dc-synth-1200");
    ASSERT_TRUE(j.is_object());
    ASSERT_EQ(j["chosen"]["name"], "L(GenKautz(3,400))");
    ASSERT_EQ(j["baselines"].size(), 3u);
    EXPECT_EQ(j["baselines"][0]["name"], "BFB L(GenKautz(3,400))");
    EXPECT_DOUBLE_EQ(j["baselines"][0]["tb"].get<double>(), 2377.0 / 800);
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

TEST(Programs, ZeroMicroBatchesAreNamedByTheFlag)
{
    // failure-study made the model's batch from --micro-batches first and
    // blamed it ("model global batch (tokens)"); flow-scale printed its
    // header, then Parallelism's field name
    for (const std::string program : {"failure-study", "flow-scale"})
    {
        const auto [status, text] =
            RunArgv(program, {"--micro-batches=0"}, "zero-micro-batches", "", "", 60);
        EXPECT_EQ(status, 2) << program << ": " << text;
        EXPECT_NE(
            text.find(program + ": invalid --micro-batches: got '0', allowed: an integer >= 1"),
            std::string::npos)
            << text;
        EXPECT_EQ(text.find("global batch"), std::string::npos) << text;
        EXPECT_EQ(text.find("# flow-scale"), std::string::npos) << text; // before any output
    }
    // the model's own sizes keep their names
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"--seq=0", "invalid model sequence length: got '0'"},
        {"--layers=0", "invalid model layers: got '0'"},
        {"--hidden=0", "invalid model hidden size (d_model): got '0'"},
    };
    for (const auto& [flag, said] : cases)
    {
        const auto [status, text] =
            RunArgv("failure-study", {"--micro-batches=1", flag}, "zero-model-size", "", "", 60);
        EXPECT_EQ(status, 2) << flag << ": " << text;
        EXPECT_NE(text.find(said), std::string::npos) << flag << ": " << text;
    }
}

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
        return nlohmann::json::parse(RunJsonText("fabric-throughput --hosts=32 " + args, name));
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

/// \return whether gnuplot runs here (the render assertions need it)
bool
HaveGnuplot()
{
    return std::system("gnuplot --version > /dev/null 2>&1") == 0;
}

/// The programs that write a gnuplot script next to --png, with cheap arguments.
const std::vector<std::pair<std::string, std::vector<std::string>>> kPlotPrograms = {
    {"hb-domain-sweep", {"--models=gpt3-175b"}},
    {"rail-only-vs-fat-tree", {"--quick", "--backend=flow"}},
    {"traffic-sparsity", {"--heatmap-gpus=64"}},
};

TEST(Programs, NoPlotPathReachesAShell)
{
    // --png went to std::system("gnuplot '<png>.gp'"), and unescaped into the
    // script, where gnuplot runs a leading | or < as a shell command
    for (const auto& [program, args] : kPlotPrograms)
    {
        for (const std::string png :
             {"x';touch${IFS}PWNED;'", "|touch PWNED", "<touch PWNED;echo "})
        {
            const std::string dir = FreshDir("no-shell");
            auto argv = args;
            argv.push_back("--png=" + png);
            const auto [status, text] = RunArgv(program, argv, "no-shell", dir);
            EXPECT_EQ(status, 0) << program << " --png=" << png << ":\n" << text;
            EXPECT_FALSE(std::filesystem::exists(dir + "PWNED")) << program << " --png=" << png;
            if (HaveGnuplot())
            {
                // the plot is rendered, to exactly that name
                EXPECT_TRUE(std::filesystem::exists(dir + png)) << program << " --png=" << png;
            }
        }
    }
}

TEST(Programs, APlotPathWithQuotesAndBlanksRendersThere)
{
    // the path was cut at its first blank (CommandLine) and written into the
    // script unescaped (a quote ended gnuplot's string)
    for (const auto& [program, args] : kPlotPrograms)
    {
        const std::string dir = FreshDir("plot-path");
        for (const std::string png : {dir + "it's a plot.png", std::string("a $b\\c \"d\".png")})
        {
            auto argv = args;
            argv.push_back("--png=" + png);
            const auto [status, text] = RunArgv(program, argv, "plot-path", dir);
            EXPECT_EQ(status, 0) << program << " --png=" << png << ":\n" << text;
            const std::string at = png[0] == '/' ? png : dir + png;
            EXPECT_TRUE(std::filesystem::exists(at + ".dat")) << program << " --png=" << png;
            EXPECT_TRUE(std::filesystem::exists(at + ".gp")) << program << " --png=" << png;
            if (!HaveGnuplot())
            {
                GTEST_SKIP() << "no gnuplot: the render is not checked";
            }
            EXPECT_NE(text.find("plot: " + png), std::string::npos) << text;
            EXPECT_EQ(Slurp(at).substr(0, 4), "\x89PNG") << program << " --png=" << png;
        }
    }
}

TEST(Programs, APlotPathAScriptCannotNameIsRefusedBeforeAnyWork)
{
    for (const auto& [program, args] : kPlotPrograms)
    {
        const std::string dir = FreshDir("plot-newline");
        auto argv = args;
        argv.push_back("--png=a\nb.png");
        const auto [status, text] = RunArgv(program, argv, "plot-newline", dir);
        EXPECT_EQ(status, 2) << program << ":\n" << text;
        EXPECT_NE(text.find("invalid --png: got 'a\\nb.png', allowed: a file path without a "
                            "newline or NUL character"),
                  std::string::npos)
            << program << ":\n"
            << text;
        EXPECT_TRUE(std::filesystem::is_empty(dir)) << program; // nothing written
    }
}

TEST(Programs, WithoutGnuplotTheDataAndScriptStay)
{
    // "gnuplot not found" is told without a shell too
    const std::string dir = FreshDir("no-gnuplot");
    const auto [status, text] = RunArgv("hb-domain-sweep",
                                        {"--models=gpt3-175b", "--png=x';touch${IFS}PWNED;'"},
                                        "no-gnuplot",
                                        dir,
                                        dir + "empty-path");
    EXPECT_EQ(status, 0) << text;
    EXPECT_NE(text.find("note: gnuplot not found; data in x';touch${IFS}PWNED;'.dat and script "
                        "in x';touch${IFS}PWNED;'.gp (no PNG)"),
              std::string::npos)
        << text;
    EXPECT_FALSE(std::filesystem::exists(dir + "PWNED"));
}

TEST(Programs, EveryFlagIsReadWhole)
{
    // ns-3's CommandLine read a string flag with >>, up to its first blank
    const std::string dir = FreshDir("whole-flags");
    {
        const auto [status, text] =
            RunArgv("direct-connect-synth", {"--nodes=16 junk"}, "whole-nodes", dir);
        EXPECT_EQ(status, 2) << text; // ran with 16
        EXPECT_NE(text.find("invalid --nodes: got '16 junk'"), std::string::npos) << text;
    }
    {
        const auto [status, text] = RunArgv("hb-domain-messages",
                                            {"--bytes=100000", "--json=" + dir + "my results.json"},
                                            "whole-json",
                                            dir);
        EXPECT_EQ(status, 0) << text;
        EXPECT_GT(Slurp(dir + "my results.json").size(), 20u); // not a file "my"
        EXPECT_FALSE(std::filesystem::exists(dir + "my"));
    }
    {
        const auto [status, text] = RunArgv("fabric-cost",
                                            {"--gpus=1024", "--radix=64", "--csv=my table.csv"},
                                            "whole-csv",
                                            dir);
        EXPECT_EQ(status, 0) << text;
        EXPECT_GT(Slurp(dir + "my table.csv").size(), 20u);
    }
    {
        // the graph grammar sees the whole name (was refused as "K(")
        const auto [status, text] =
            RunArgv("direct-connect-synth", {"--graph=K( 5 )"}, "whole-graph", dir);
        EXPECT_EQ(text.find("got 'K('"), std::string::npos) << text;
        EXPECT_TRUE(status == 0 || text.find("got 'K( 5 )'") != std::string::npos) << text;
    }
}

TEST(Programs, AFlagIsRangeCheckedInTheTypeItIsUsedIn)
{
    struct Bad
    {
        std::string program;
        std::vector<std::string> args;
        std::string said;
    };

    const std::vector<Bad> cases = {
        // was checked as a 64-bit count, then wrapped to 16 GPUs
        {"moe-alltoall",
         {"--gpus=4294967312", "--backend=flow"},
         "invalid --gpus: got '4294967312', allowed: an integer from 2 to 4294967295"},
        // 1e30 Gb/s does not fit 64-bit bit/s: the message showed 0
        {"collective-bench",
         {"--topology=direct-connect", "--graph=Hypercube(3)", "--node-bandwidth-gbps=1e30"},
         "invalid --node-bandwidth-gbps: got '1e30', allowed: a positive rate"},
        {"collective-bench",
         {"--topology=direct-connect", "--graph=Hypercube(3)", "--node-bandwidth-gbps=1e-12"},
         "invalid --node-bandwidth-gbps: got '1e-12'"},
    };
    for (const auto& bad : cases)
    {
        const auto [status, text] = RunArgv(bad.program, bad.args, "range-in-type");
        EXPECT_EQ(status, 2) << bad.program << ":\n" << text;
        EXPECT_NE(text.find(bad.said), std::string::npos) << bad.program << ":\n" << text;
    }
}

TEST(Programs, HostileNs3FlagsExitWithStatusTwo)
{
    // each aborted, crashed or exited with 1 (CommandLine's status)
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"---gpus=-5", "invalid flag: got '---gpus=-5', allowed: --backend"},
        {"--SchedulerType", "invalid --SchedulerType: got no value, allowed: --SchedulerType=<"},
        {"--PrintAttributesX", "invalid flag: got '--PrintAttributesX'"},
        {"--PrintAttributes", "invalid --PrintAttributes: got no value"},
        {"--PrintAttributes=ns3::Nope",
         "invalid --PrintAttributes: got 'ns3::Nope', allowed: a registered TypeId name"},
        {"--SchedulerType=ns3::FabricSwitch",
         "invalid --SchedulerType: got 'ns3::FabricSwitch', allowed: the TypeId name of an ns-3 "
         "scheduler: "},
        {"--SchedulerType=ns3::Object", "invalid --SchedulerType: got 'ns3::Object'"},
        {"--RngSeed=0", "invalid --RngSeed: got '0', allowed: a whole number from 1"},
    };
    for (const auto& [flag, said] : cases)
    {
        const auto [status, text] =
            RunArgv("moe-alltoall", {"--gpus=16", "--backend=flow", flag}, "hostile-ns3");
        EXPECT_EQ(status, 2) << flag << ":\n" << text;
        EXPECT_NE(text.find(said), std::string::npos) << flag << ":\n" << text;
    }
    // the good ones still work
    const auto [status, text] =
        RunArgv("moe-alltoall", {"--PrintAttributes=ns3::FabricSwitch"}, "hostile-ns3-good");
    EXPECT_EQ(status, 0) << text;
    EXPECT_NE(text.find("PfcXoff"), std::string::npos) << text;
}

} // namespace
