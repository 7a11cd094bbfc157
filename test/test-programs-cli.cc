/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// The programs' command lines: bad flags, attribute and global values, names
// and sizes exit with status 2 and a message naming the flag, before any
// output or large allocation; good values still run.
#include "program-run.h"

#include "ns3/topology-finder.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace
{

using namespace gpu_fabric_test;

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

TEST(Programs, UnderMpirunARunThatIsNotDistributedRunsOnRankZeroAlone)
{
    // what mpirun tells its processes (Open MPI's variables, or PMI's): a
    // program that does not distribute this run (this build has no MPI; the
    // flow level; a program that is not distributed) must not run and print
    // the whole simulation once per process: rank 0 runs it, with a note on
    // stderr, and prints what one process prints; the other ranks exit 0 at
    // once, printing nothing
    const std::string note = "runs on rank 0 alone";

    struct Case
    {
        std::string args;
        std::string why; //!< what the note gives as the reason
    };

    const Case cases[] = {
        {"collective-bench --max-bytes=4096", "no MPI"},
        {"collective-bench --max-bytes=4096 --backend=flow", "flow level is not distributed"},
        {"fabric-cost", "not a distributed program"},
    };
    for (const Case& c : cases)
    {
        SCOPED_TRACE(c.args);
        const auto [alone, aloneText] = RunCapture(c.args, "mpirun-alone");
        ASSERT_EQ(alone, 0) << aloneText;
        for (const auto& [sizeVar, rankVar] :
             {std::pair<const char*, const char*>{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
              {"PMI_SIZE", "PMI_RANK"}})
        {
            SCOPED_TRACE(sizeVar);
            setenv(sizeVar, "2", 1);
            setenv(rankVar, "1", 1);
            const auto [other, otherText] = RunCapture(c.args, "mpirun-rank1");
            setenv(rankVar, "0", 1);
            const auto [root, rootText] = RunCapture(c.args, "mpirun-rank0");
            unsetenv(sizeVar);
            unsetenv(rankVar);
            EXPECT_EQ(other, 0) << otherText;
            EXPECT_EQ(otherText, "") << "rank 1 prints nothing";
            EXPECT_EQ(root, 0) << rootText;
            // the note, once, then exactly the one-process output
            const size_t at = rootText.find("note: ");
            ASSERT_EQ(at, 0u) << rootText;
            const size_t eol = rootText.find('\n');
            const std::string line = rootText.substr(0, eol);
            EXPECT_NE(line.find(note), std::string::npos) << line;
            EXPECT_NE(line.find(c.why), std::string::npos) << line;
            EXPECT_NE(line.find("2 processes"), std::string::npos) << line;
            EXPECT_EQ(rootText.substr(eol + 1), aloneText);
        }
    }
    // one process under mpirun: no note, the same output
    setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
    const auto [status, text] = RunCapture("collective-bench --max-bytes=4096", "mpirun-one");
    unsetenv("OMPI_COMM_WORLD_SIZE");
    EXPECT_EQ(status, 0) << text;
    EXPECT_EQ(text.find("note: "), std::string::npos) << text;
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

TEST(Programs, AFinderRefusedByNodesQuotesTheSearchAskedFor)
{
    // --nodes is blamed when the bases alone are too long, but the estimate
    // quoted is the whole search's at the --depth asked for (2 by default,
    // and 1 here), not the bases' at depth 0
    for (const uint32_t depth : {2u, 1u})
    {
        ns3::FinderOptions o;
        o.maxDepth = depth;
        const std::string asked =
            ns3::FinderWorkText(ns3::EstimateFinderWork(1024, 4, o), 1024, 4, o);
        o.maxDepth = 0;
        const std::string bases =
            ns3::FinderWorkText(ns3::EstimateFinderWork(1024, 4, o), 1024, 4, o);
        std::vector<std::string> args{"--nodes=1024", "--GpuFabricMaxRunSeconds=0.001"};
        if (depth != 2)
        {
            args.push_back("--depth=" + std::to_string(depth));
        }
        const auto [status, text] =
            RunArgv("direct-connect-synth", args, "finder-by-nodes", "", "", 60, 0);
        EXPECT_EQ(status, 2) << text;
        EXPECT_NE(text.find("invalid --nodes: got '1024', allowed: a run estimated to finish "
                            "within "),
                  std::string::npos)
            << text;
        EXPECT_NE(text.find("; " + asked + " would take about "), std::string::npos)
            << asked << "\n"
            << text;
        EXPECT_EQ(text.find(bases), std::string::npos) << text;
    }
}

TEST(Programs, LongSynthesisIsRefusedOrAnnouncedUpFront)
{
    // Hypercube(20) spent 20 s and 2-3 GB building; BFB and the finder ran
    // unannounced for as long as they took
    struct Bad
    {
        std::vector<std::string> args;
        std::vector<std::string> said;
    };

    const std::string within = "allowed: a run estimated to finish within ";
    for (const auto& bad : std::vector<Bad>{
             {{"--graph=Hypercube(20)"},
              {"invalid Hypercube dimension: got '20', allowed: a graph of at most 16777216 "
               "hosts and 4194304 arcs; Hypercube(20) would have 1048576 hosts and 20971520 "
               "arcs"}},
             {{"--graph=Hypercube(8)", "--GpuFabricMaxRunSeconds=0.001"},
              {"invalid graph Hypercube(8) hosts: got '256', " + within, "; BFB allgather ("}},
             // (its bases alone, at depth 0, are estimated at 0.47 s, the
             // search at depth 4 at 1.4 s)
             {{"--depth=4", "--GpuFabricMaxRunSeconds=0.8"},
              {"invalid --depth: got '4', " + within,
               "the finder for N = 128, d = 4 at depth 4 (about "}},
             // the bases alone are too long: no depth would do
             {{"--nodes=1024", "--depth=0", "--GpuFabricMaxRunSeconds=0.001"},
              {"invalid --nodes: got '1024', " + within}}})
    {
        const auto [status, text] =
            RunArgv("direct-connect-synth", bad.args, "long-synthesis", "", "", 60, 0);
        EXPECT_EQ(status, 2) << bad.args[0] << ": " << text;
        for (const auto& s : bad.said)
        {
            EXPECT_NE(text.find(s), std::string::npos) << bad.args[0] << ": " << text;
        }
    }
    // beyond GpuFabricWarnRunSeconds: announced with the estimate, and run
    const auto [status, text] = RunArgv("direct-connect-synth",
                                        {"--graph=K(16)", "--GpuFabricWarnRunSeconds=0.000001"},
                                        "long-synthesis",
                                        "",
                                        "",
                                        60,
                                        0);
    EXPECT_EQ(status, 0) << text;
    EXPECT_NE(text.find("direct-connect-synth: BFB allgather on K(16) is estimated to take "),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("T_B = 15/16"), std::string::npos) << text;
    // bfb-scale --bfb=0 builds the graphs and gives BFB's estimate without running it
    const nlohmann::json j = RunJson("bfb-scale --bfb=0 --graphs='Hypercube(3);K(8)'", "bfb-build");
    ASSERT_TRUE(j.contains("runs")) << j;
    ASSERT_EQ(j["runs"].size(), 2u) << j;
    EXPECT_EQ(j["runs"][0]["arcs"], 24);
    EXPECT_EQ(j["runs"][1]["arcs"], 56);
    for (const auto& run : j["runs"])
    {
        EXPECT_GT(run["estimate_steps"].get<double>(), 0) << run;
        EXPECT_FALSE(run.contains("wall_time_s")) << run;
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
         "--ns3::FabricNetDevice::DataRate=200Gbps",
         "invalid ns3::FabricNetDevice::DataRate: got '200000000000bps', allowed: its default "
         "with FabricHelper, which sets every cable's rate"},
        {"collective-bench",
         "--ns3::FabricChannel::Delay=1us",
         "invalid ns3::FabricChannel::Delay: got '+1000ns', allowed: its default"},
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
          "routing tables (413696 nodes x 262144 destinations) would need about 217.0 GB"}},
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
        {"fabric-cost --nic-rate=fast", "invalid --nic-rate: got 'fast'"},
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
        // BFB is a direct-connect graph's own schedule, of the collectives it builds
        {"collective-bench --algorithm=bfb",
         "invalid --algorithm: got 'bfb', allowed: ring, tree, halving-doubling, hierarchical, "
         "direct or pxn (bfb only with --topology=direct-connect)"},
        {"collective-bench --topology=fat-tree --gpus=32 --radix=8 --algorithm=bfb",
         "invalid --algorithm: got 'bfb', allowed: ring, tree, halving-doubling, hierarchical, "
         "direct or pxn (bfb only with --topology=direct-connect)"},
        {"collective-bench --topology=direct-connect --algorithm=bfb --collective=broadcast",
         "invalid --collective: got 'broadcast', allowed: allreduce, allgather or reducescatter "
         "with --algorithm=bfb"},
        {"collective-bench --topology=direct-connect --algorithm=bfb --chunk-bytes=4096",
         "invalid --chunk-bytes: got '4096', allowed: only without --algorithm=bfb"},
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

TEST(Programs, FlagsThatWouldBeIgnoredAreRefused)
{
    // each ran with exit status 0 and the flag silently ignored
    struct Bad
    {
        std::string command;
        std::string said;
    };

    const std::string dc = " --topology=direct-connect --graph='Hypercube(3)'";
    const std::string noDc = "allowed: only without --topology=direct-connect";
    const std::string iteration = "allowed: only with --workload=iteration";
    const std::string phases = "allowed: only with --workload=phases";
    const std::vector<Bad> cases = {
        // a direct-connect topology is its graph: no platform, no switches
        {"collective-bench" + dc + " --radix=32", "invalid --radix: got '32', " + noDc},
        {"collective-bench" + dc + " --preset=dgx-a100",
         "invalid --preset: got 'dgx-a100', " + noDc},
        {"fabric-routes" + dc + " --radix=32", "invalid --radix: got '32', " + noDc},
        {"fabric-routes" + dc + " --preset=dgx-a100", "invalid --preset: got 'dgx-a100', " + noDc},
        // each flow-scale workload reads only its own group of flags
        {"flow-scale --workload=phases --model=gpt3-175b",
         "invalid --model: got 'gpt3-175b', " + iteration},
        {"flow-scale --workload=phases --tp=4", "invalid --tp: got '4', " + iteration},
        {"flow-scale --workload=phases --micro-batches=2",
         "invalid --micro-batches: got '2', " + iteration},
        {"flow-scale --workload=phases --granularity=micro-batch",
         "invalid --granularity: got 'micro-batch', " + iteration},
        {"flow-scale --tp-bytes=65536", "invalid --tp-bytes: got '65536', " + phases},
        {"flow-scale --workload=iteration --dp-bytes=65536",
         "invalid --dp-bytes: got '65536', " + phases},
        {"flow-scale --tp-size=8", "invalid --tp-size: got '8', " + phases},
        {"flow-scale --overlap=1", "invalid --overlap: got '1', " + phases},
        {"flow-scale --packet-max-gpus=512",
         "invalid --packet-max-gpus: got '512', allowed: only with --table"},
        {"flow-scale --packet-max-bytes=1e9",
         "invalid --packet-max-bytes: got '1e9', allowed: only with --table"},
        {"flow-scale --calibration-bytes=4096",
         "invalid --calibration-bytes: got '4096', allowed: only with --table"},
        {"flow-scale --table --gpus=1024",
         "invalid --gpus: got '1024', allowed: only without --table"},
        {"flow-scale --table --backend=packet",
         "invalid --backend: got 'packet', allowed: only without --table"},
        // the figures' parameters
        {"hb-domain-sweep --png=none --grad-bytes=0",
         "invalid --grad-bytes: got '0', allowed: an integer from 1 to 8"},
        {"hb-domain-sweep --png=none --models=gpt3-175b --batch=1000",
         "invalid --batch: got '1000', allowed: 0 or a multiple of gpt3-175b's sequence length "
         "2048"},
        {"traffic-sparsity --png=none --dp-pattern=tree",
         "invalid --dp-pattern: got 'tree', allowed: ring or alltoall"},
        // the packet level's congestion control and load balancing by name
        {"collective-bench --max-bytes=4096 --cc=cubic",
         "invalid --cc: got 'cubic', allowed: none, dcqcn, dctcp, hpcc, swift"},
        {"moe-alltoall --lb=random",
         "invalid --lb: got 'random', allowed: ecmp, spray, flowlet "
         "or adaptive"},
        {"rail-only-vs-fat-tree --quick --png=none --backend=flow --cc=dcqcn",
         "invalid --cc: got 'dcqcn', allowed: only at packet level"},
        {"traffic-sparsity --png=none --cluster-block=64",
         "invalid --cluster-block: got '64', allowed: only with --cluster-png"},
        {"traffic-sparsity --png=none --cluster-png=c.png --cluster-block=3",
         "invalid --cluster-block: got '3', allowed: a divisor of --gpus (32768)"},
        // the heatmap's flags without a heatmap, EP's without EP
        {"traffic-sparsity --png=none --heatmap-gpus=0 --heatmap-pp=2",
         "invalid --heatmap-pp: got '2', allowed: only with --heatmap-gpus above 0"},
        {"traffic-sparsity --heatmap-gpus=0 --png=heatmap.png",
         "invalid --png: got 'heatmap.png', allowed: only with --heatmap-gpus above 0"},
        {"traffic-sparsity --png=none --ep-algorithm=direct",
         "invalid --ep-algorithm: got 'direct', allowed: only with --ep above 1"},
    };
    for (const auto& bad : cases)
    {
        const auto [status, text] = RunCapture(bad.command, "ignored-flag");
        EXPECT_EQ(status, 2) << bad.command << ": " << text;
        EXPECT_NE(text.find(bad.said), std::string::npos) << bad.command << ": " << text;
    }
    // the same flags where they apply still run
    for (const std::string& good : std::vector<std::string>{
             "collective-bench --backend=flow --gpus=16 --max-bytes=1024 --radix=32 "
             "--preset=dgx-a100",
             "collective-bench --backend=flow" + dc + " --max-bytes=1024",
             "fabric-routes --radix=32 --preset=dgx-a100",
             "fabric-routes" + dc,
             "flow-scale --workload=phases --gpus=512 --preset=dgx-h100 --topology=rail-only "
             "--tp-bytes=65536 --dp-bytes=65536 --tp-size=4 --overlap",
             "traffic-sparsity --png=none --heatmap-gpus=64 --heatmap-pp=2",
             "traffic-sparsity --png=none --model=mixtral-8x7b --gpus=1024 --pp=8 --ep=2 "
             "--ep-algorithm=direct --heatmap-gpus=0",
         })
    {
        const auto [status, text] = RunCapture(good, "applied-flag");
        EXPECT_EQ(status, 0) << good << ": " << text;
    }
    // --quick sets defaults only: a flag given with it wins (documented in
    // --help), the defaults it does not override stay its own
    const nlohmann::json j = RunJson("rail-only-vs-fat-tree --quick --gpus=32 --backend=flow "
                                     "--topologies=rail-only --png=none",
                                     "quick-gpus");
    ASSERT_TRUE(j.contains("results")) << j;
    ASSERT_FALSE(j["results"].empty()) << j; // the simulated row, then the paper's
    EXPECT_EQ(j["results"][0]["gpus"], 32) << j;
    EXPECT_NE(j["results"][0]["model"].get<std::string>().find("l=4,d=1024"), std::string::npos)
        << j;
}

TEST(Programs, FlagshipFatTreePenaltyFollowsTheLoadBalancer)
{
#ifdef GPU_FABRIC_SANITIZE
    // simulated results, not memory: the Release suite runs it (the two
    // flagship runs take about 47 s under the sanitizers)
    GTEST_SKIP() << "results only: run in the Release suite";
#endif
    // the classic fat-tree's iteration against the rail-optimized one: per
    // flow ECMP hashes the DP rings' flows onto shared uplinks (collisions:
    // 1.93x on the --quick job), adaptive routing takes the least-loaded
    // eligible port per packet and all but removes the penalty (1.01x)
    std::map<std::string, double> ratio;
    for (const std::string lb : {"ecmp", "adaptive"})
    {
        const nlohmann::json j = RunJson("rail-only-vs-fat-tree --quick --png=none "
                                         "--topologies=rail-optimized,fat-tree --lb=" +
                                             lb,
                                         "lb-" + lb);
        std::map<std::string, double> t;
        for (const auto& r : j["results"])
        {
            if (r.value("simulated", false))
            {
                t[r["topology"].get<std::string>()] = r["iteration_time_s"].get<double>();
            }
        }
        ASSERT_EQ(t.size(), 2u) << j;
        ratio[lb] = t["fat-tree"] / t["rail-optimized"];
    }
    EXPECT_GT(ratio["ecmp"], 1.5);
    EXPECT_LT(ratio["adaptive"], 1.05);
    EXPECT_GE(ratio["adaptive"], 1.0); // never faster than the rail-optimized fabric
}

TEST(Programs, CollectiveBenchSweepsAreEstimatedAsAWhole)
{
    // each size was checked alone, so a sweep of many sizes each within
    // GpuFabricMaxRunSeconds ran however long they took together. A ring
    // allreduce on 16 ranks sends 2 (n - 1) n = 480 messages whatever its
    // size; the flow level counts 1e5 messages per second: 4.8 ms per size,
    // so a sweep of 10 sizes (1 KiB to 512 KiB) is 48 ms, of 11 sizes 52.8 ms
    const std::vector<std::string> base = {"--backend=flow",
                                           "--gpus=16",
                                           "--GpuFabricMaxRunSeconds=0.05"};
    auto run = [&base](std::vector<std::string> more) {
        more.insert(more.begin(), base.begin(), base.end());
        return RunArgv("collective-bench", more, "sweep-work", "", "", 60);
    };
    {
        const auto [status, text] = run({"--max-bytes=1048576"});
        EXPECT_EQ(status, 2) << text;
        EXPECT_NE(text.find("invalid --max-bytes: got '1048576', allowed: a run estimated to "
                            "finish within"),
                  std::string::npos)
            << text;
        EXPECT_NE(text.find("the sweep of 11 size(s) from 1024 to 1048576 bytes (5280 messages"),
                  std::string::npos)
            << text;
        EXPECT_EQ(text.find("# collective-bench"), std::string::npos) << text; // nothing ran
    }
    {
        // just below: runs, and is announced beyond GpuFabricWarnRunSeconds
        const auto [status, text] = run({"--max-bytes=524288", "--GpuFabricWarnRunSeconds=0.04"});
        EXPECT_EQ(status, 0) << text;
        EXPECT_NE(text.find("collective-bench: the sweep of 10 size(s) from 1024 to 524288 bytes "
                            "(4800 messages"),
                  std::string::npos)
            << text;
        EXPECT_NE(text.find("is estimated at about"), std::string::npos) << text;
    }
    {
        // within GpuFabricWarnRunSeconds: not announced
        const auto [status, text] = run({"--max-bytes=524288"});
        EXPECT_EQ(status, 0) << text;
        EXPECT_EQ(text.find("is estimated at about"), std::string::npos) << text;
    }
    {
        // the smallest size alone is too long: no --max-bytes would do
        const auto [status, text] = run({"--max-bytes=4096", "--GpuFabricMaxRunSeconds=0.001"});
        EXPECT_EQ(status, 2) << text;
        EXPECT_NE(text.find("invalid --min-bytes: got '1024', allowed: a run estimated to finish "
                            "within"),
                  std::string::npos)
            << text;
        EXPECT_NE(text.find("its smallest size alone (480 messages"), std::string::npos) << text;
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
