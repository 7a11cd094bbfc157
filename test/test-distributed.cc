/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Distributed runs (MPI build only: scripts/build.sh --mpi): bench/mpi-scale
 * under mpirun -np 2 and -np 4 must complete every message at the very time
 * (to the nanosecond) and with the very packet and byte counts of the same
 * run on ns-3's sequential engine; bad partitions are refused by name.
 */
#include "program-run.h"

#include "ns3/data-rate.h"
#include "ns3/fabric-partition.h"
#include "ns3/hb-domain-preset.h"
#include "ns3/topology-builders.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

using namespace ns3;
using namespace gpu_fabric_test;

namespace
{

/// `mpirun -np N` (as root too, oversubscribed) before a program of the build.
std::string
Mpirun(uint32_t ranks)
{
    // a run that hangs fails the case instead of stalling the suite
    return "timeout 300 " + std::string(GPU_FABRIC_MPIRUN) +
           " --allow-run-as-root --oversubscribe -np " + std::to_string(ranks) + " " +
           GPU_FABRIC_BIN_DIR + "/";
}

struct ScaleRun
{
    std::string messages; //!< the CSV of every message's completion
    nlohmann::json json;  //!< the figures
};

/// Run mpi-scale with \p args, sequentially (ranks 0) or on \p ranks ranks.
ScaleRun
RunScale(const std::string& args, uint32_t ranks, const std::string& tag)
{
    const std::string dir = FreshDir(tag);
    const std::string prefix =
        ranks == 0 ? "timeout 300 " + std::string(GPU_FABRIC_BIN_DIR) + "/" : Mpirun(ranks);
    const std::string cmd = prefix + "mpi-scale " + args + (ranks == 0 ? " --sequential" : "") +
                            " --messages=" + dir + "messages.csv --json=" + dir + "run.json > " +
                            dir + "out.txt 2>&1";
    const int status = std::system(cmd.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cmd << "\n"
                                                               << Slurp(dir + "out.txt");
    return {Slurp(dir + "messages.csv"),
            nlohmann::json::parse(Slurp(dir + "run.json"), nullptr, false)};
}

/// Lines of a CSV (header included).
size_t
Lines(const std::string& text)
{
    return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

/// The distributed runs of \p args equal the sequential one, message by
/// message; \p messages complete in each (the permutation: one per host; 0:
/// as many as in the sequential run, at least one).
void
ExpectSameAsSequential(const std::string& args,
                       uint32_t messages,
                       std::initializer_list<uint32_t> rankCounts,
                       const std::string& tag,
                       bool nullMessages = false,
                       bool lateDuplicates = false)
{
    const ScaleRun ref = RunScale(args, 0, tag + "-seq");
    if (messages == 0)
    {
        messages = static_cast<uint32_t>(Lines(ref.messages)) - 1;
        ASSERT_GT(messages, 0u);
    }
    ASSERT_EQ(Lines(ref.messages), messages + 1u) << "every message completes once";
    ASSERT_FALSE(ref.json.is_discarded());
    EXPECT_EQ(ref.json["per_rank"][0]["sync_calls"], 0u) << "one process waits for no rank";
    std::string distributed = args;
    if (nullMessages)
    {
        // its engine never stops by itself: FabricDistributed::StopWhenIdle
        // ends it once every rank has run out of events
        distributed += " --null-messages";
    }
    for (const uint32_t n : rankCounts)
    {
        SCOPED_TRACE(n);
        const ScaleRun run = RunScale(distributed, n, tag + "-np" + std::to_string(n));
        ASSERT_FALSE(run.json.is_discarded());
        EXPECT_EQ(run.json["ranks"], n);
        EXPECT_GT(run.json["cut_cables"].get<uint32_t>(), 0u) << "the fabric is really cut";
        // every rank simulated a part: no rank idle, frames crossed both ways
        uint64_t crossed = 0;
        uint64_t sent = 0;
        uint64_t mpiMessages = 0;
        uint64_t mpiUnpacked = 0;
        uint64_t resent = 0;
        uint64_t nullSent = 0;
        for (const auto& r : run.json["per_rank"])
        {
            EXPECT_GT(r["events"].get<uint64_t>(), 0u);
            // ns-3 sent nothing over MPI but null messages and this
            // module's messages of frames (counted apart, by MPI_Isend)
            EXPECT_EQ(r["mpi_isends_of_frames"], r["mpi_messages_sent"]);
            // the waits for other ranks are part of the run's wall time; the
            // granted time window all-gathers at the end of every window
            EXPECT_GE(r["sync_wait_s"].get<double>(), 0.0);
            EXPECT_LE(r["sync_wait_s"].get<double>(), r["wall_s"].get<double>());
            if (!nullMessages)
            {
                EXPECT_GT(r["sync_calls"].get<uint64_t>(), 0u);
            }
            nullSent += r["null_messages_sent"].get<uint64_t>();
            crossed += r["frames_received"].get<uint64_t>();
            sent += r["frames_sent"].get<uint64_t>();
            mpiMessages += r["mpi_messages_sent"].get<uint64_t>();
            mpiUnpacked += r["mpi_messages_received"].get<uint64_t>();
            resent += r["retransmissions"].get<uint64_t>();
        }
        EXPECT_GT(crossed, 0u);
        EXPECT_EQ(sent, crossed) << "every frame sent to another rank arrives there once";
        EXPECT_EQ(mpiMessages, mpiUnpacked) << "and every MPI message of frames";
        if (nullMessages)
        {
            // a rank idle between its frames promises its neighbours time
            EXPECT_GT(nullSent, 0u);
        }
        else
        {
            EXPECT_EQ(nullSent, 0u) << "the granted time window sends none";
        }
        // frames for one rank travel together (FabricSetBatchLookahead);
        // with null messages only those of one instant
        EXPECT_GT(mpiMessages, 0u);
        if (nullMessages)
        {
            EXPECT_LE(mpiMessages, sent);
        }
        else
        {
            EXPECT_LT(mpiMessages, sent) << "frames travelled together";
        }
        // control packets, counted where they are sent or taken: the same totals
        std::map<std::string, uint64_t> sums;
        for (const char* key : {"acks_sent",
                                "cnps_sent",
                                "nacks_sent",
                                "discarded_packets",
                                "relayed_cc_packets",
                                "relay_control_packets"})
        {
            for (const auto& r : run.json["per_rank"])
            {
                sums[key] += r[key].get<uint64_t>();
            }
            if (!lateDuplicates || std::string(key) != "discarded_packets")
            {
                EXPECT_EQ(sums[key], ref.json["per_rank"][0][key].get<uint64_t>()) << key;
            }
        }
        const uint64_t refResent = ref.json["per_rank"][0]["retransmissions"].get<uint64_t>();
        if (lateDuplicates)
        {
            // going back N, a sender on another rank than its receiver hears
            // of the completion a word later and resends meanwhile what one
            // process would not: every such packet is one more discarded
            const uint64_t refDiscarded =
                ref.json["per_rank"][0]["discarded_packets"].get<uint64_t>();
            EXPECT_GE(resent, refResent);
            EXPECT_EQ(resent - refResent, sums["discarded_packets"] - refDiscarded);
        }
        else
        {
            EXPECT_EQ(resent, refResent);
        }
        // the same completions to the nanosecond, the same counts
        EXPECT_EQ(run.messages, ref.messages);
        for (const char* key : {"messages_delivered", "packets_delivered", "bytes_delivered"})
        {
            EXPECT_EQ(run.json[key], ref.json[key]) << key;
        }
        EXPECT_EQ(run.json["messages_delivered"], messages);
        if (ref.json.contains("collective"))
        {
            // gathered from the ranks: the same time, to the nanosecond
            EXPECT_TRUE(run.json["collective"]["complete"].get<bool>());
            EXPECT_NEAR(run.json["collective"]["time_s"].get<double>(),
                        ref.json["collective"]["time_s"].get<double>(),
                        1e-12);
        }
        if (ref.json.contains("program"))
        {
            EXPECT_TRUE(ref.json["program"]["complete"].get<bool>());
            EXPECT_TRUE(run.json["program"]["complete"].get<bool>());
            EXPECT_NEAR(run.json["program"]["iteration_time_s"].get<double>(),
                        ref.json["program"]["iteration_time_s"].get<double>(),
                        1e-12);
        }
    }
}

} // namespace

TEST(Distributed, FatTreePermutationEqualsSequential)
{
    ExpectSameAsSequential("--hosts=64 --radix=8 --flow-bytes=262144", 64, {2, 4}, "ft");
}

TEST(Distributed, ARankBuildsOnlyTheCablesItSimulatesAndTheGpus)
{
    // a rank builds the devices of the cables at its own nodes and of every
    // GPU's cable (the transport reads any GPU's ports), none between two
    // switches of other ranks; one process builds them all
    ClusterParams p;
    p.gpus = 64;
    p.radix = 8;
    p.platform = HbDomainPreset::Custom(1, DataRate("100Gbps"), DataRate("100Gbps"));
    const FabricTopology topo = BuildFatTree(p);
    const std::string args = "--hosts=64 --radix=8 --flow-bytes=65536 --partition=pod";
    const ScaleRun seq = RunScale(args, 0, "built-seq");
    ASSERT_FALSE(seq.json.is_discarded());
    EXPECT_EQ(seq.json["per_rank"][0]["devices_built"].get<uint64_t>(), 2 * topo.Cables().size());
    for (const uint32_t n : {2u, 4u})
    {
        const FabricPartition part = FabricPartitioner::Make(topo, n, "pod");
        const ScaleRun run = RunScale(args, n, "built-np" + std::to_string(n));
        ASSERT_FALSE(run.json.is_discarded());
        ASSERT_EQ(run.json["per_rank"].size(), n);
        EXPECT_EQ(run.messages, seq.messages) << n << " ranks";
        for (uint32_t r = 0; r < n; ++r)
        {
            uint64_t expected = 0;
            for (const TopoCable& c : topo.Cables())
            {
                const auto complete = [&](uint32_t v) {
                    return part.rankOf[v] == r || topo.Node(v).kind == TopoNodeKind::Gpu;
                };
                expected += complete(c.a) || complete(c.b) ? 2 : 0;
            }
            EXPECT_EQ(run.json["per_rank"][r]["devices_built"].get<uint64_t>(), expected)
                << "rank " << r << " of " << n;
            EXPECT_LT(expected, 2 * topo.Cables().size()) << "rank " << r << " of " << n;
        }
    }
}

TEST(Distributed, FatTreeByPodEqualsSequential)
{
    ExpectSameAsSequential("--hosts=64 --radix=8 --flow-bytes=262144 --partition=pod",
                           64,
                           {2, 4},
                           "ft-pod");
}

TEST(Distributed, RailOnlyEqualsSequential)
{
    // cross-rail flows relay through NVLink inside a domain, which a
    // domain partition keeps on one rank
    ExpectSameAsSequential("--topology=rail-only --hosts=32 --flow-bytes=262144", 32, {2, 4}, "ro");
}

TEST(Distributed, CongestionControlEqualsSequential)
{
    // ACKs and CNPs cross ranks as packets; DCQCN's pacing must match too
    ExpectSameAsSequential("--hosts=32 --radix=8 --flow-bytes=262144 --cc=dcqcn", 32, {2}, "cc");
}

TEST(Distributed, RailOnlyCongestionControlEqualsSequential)
{
    // cross-rail traffic is paced by its relay's flow (the GPU on the
    // destination's rail, in the source's domain): the relay tag crosses
    // ranks with the packet, and the destination's ACKs and CNPs go back to
    // the relay's rank; a 12:1 incast marks packets, and DCQCN's CNPs cross too
    for (const std::string cc : {"dcqcn", "hpcc"})
    {
        for (const std::string traffic :
             {"--flow-bytes=262144", "--incast=12 --flow-bytes=1048576"})
        {
            SCOPED_TRACE(cc + " " + traffic);
            const std::string args = "--topology=rail-only --hosts=32 --cc=" + cc + " " + traffic;
            const bool incast = traffic.find("incast") != std::string::npos;
            const std::string tag = "ro-" + cc + (incast ? "-incast" : "-perm");
            const ScaleRun ref = RunScale(args, 0, tag + "-seq");
            ASSERT_FALSE(ref.json.is_discarded());
            const auto& seq = ref.json["per_rank"][0];
            EXPECT_GT(seq["relayed_cc_packets"].get<uint64_t>(), 0u)
                << "relays paced cross-rail traffic";
            EXPECT_GT(seq["relay_control_packets"].get<uint64_t>(), 0u);
            if (incast && cc == "dcqcn")
            {
                EXPECT_GT(seq["cnps_sent"].get<uint64_t>(), 0u) << "the incast marked packets";
            }
            ExpectSameAsSequential(args, incast ? 12 : 32, {2, 4}, tag);
        }
    }
}

TEST(Distributed, NullMessagesEqualSequential)
{
    ExpectSameAsSequential("--hosts=32 --radix=8 --flow-bytes=131072", 32, {2, 4}, "nm", true);
    // a run stopped at a time instead (well after its last event) ends alike
    ExpectSameAsSequential("--hosts=32 --radix=8 --flow-bytes=131072 --stop-ns=1000000",
                           32,
                           {2},
                           "nm-stop",
                           true);
}

TEST(Distributed, LinkFailureEqualsSequential)
{
    // an aggregation-spine cable (the topology's last, cut by the domain
    // partition) goes down mid-run: its packets are lost, the senders (on
    // either rank) resend them RetransmitTimeout later, routes change after
    // the detection delay
    const std::string args =
        "--hosts=64 --radix=8 --flow-bytes=262144 --fail-cable=191 --fail-at-ns=20000";
    const ScaleRun ref = RunScale(args, 0, "fail-seq");
    ASSERT_FALSE(ref.json.is_discarded());
    EXPECT_GT(ref.json["per_rank"][0]["retransmissions"].get<uint64_t>(), 0u)
        << "the failed cable carried traffic";
    ExpectSameAsSequential(args, 64, {2, 4}, "fail");

    // with NACKs: packets after the lost ones show the gap, receivers NACK
    // across ranks, senders go back N (a resent copy's number in its tag),
    // receivers discard what they already have
    const std::string nack = args + " --ns3::PacketTransport::Nack=true";
    const ScaleRun nackRef = RunScale(nack, 0, "fail-nack-seq");
    ASSERT_FALSE(nackRef.json.is_discarded());
    const auto& seq = nackRef.json["per_rank"][0];
    EXPECT_GT(seq["nacks_sent"].get<uint64_t>(), 0u) << "the gaps were NACKed";
    EXPECT_GT(seq["discarded_packets"].get<uint64_t>(), 0u) << "going back N resent duplicates";
    EXPECT_GT(seq["retransmissions"].get<uint64_t>(),
              ref.json["per_rank"][0]["retransmissions"].get<uint64_t>())
        << "going back N resends more than the lost packets";
    ExpectSameAsSequential(nack, 64, {2, 4}, "fail-nack", false, true);
    // and on sprayed paths, which reorder: gaps wait NackReorderDelay
    ExpectSameAsSequential(nack + " --lb=spray", 64, {2, 4}, "fail-nack-spray", false, true);
    // under HPCC: a lost packet leaves its flow's window when its sender
    // hears of the loss (a word later from another rank), equal here
    ExpectSameAsSequential(args + " --cc=hpcc", 64, {2, 4}, "fail-hpcc");
}

TEST(Distributed, ConnectionWindowCreditsEqualSequential)
{
    // NCCL-like credits: at most 16 KiB in flight per sender and destination,
    // a packet's credit back 2 us after it is delivered (or lost); to a
    // sender on another rank it goes as a word, due at the same instant
    const std::string credits =
        " --ns3::PacketTransport::ConnectionWindow=16384 --ns3::PacketTransport::CreditDelay=2us";
    const std::string perm = "--hosts=32 --radix=8 --flow-bytes=131072";
    const ScaleRun free = RunScale(perm, 0, "credits-off-seq");
    const ScaleRun paced = RunScale(perm + credits, 0, "credits-seq");
    ASSERT_FALSE(free.json.is_discarded());
    ASSERT_FALSE(paced.json.is_discarded());
    // the window holds the senders back (4 packets per credit round trip):
    // 61 us against 37 us without it
    EXPECT_GT(paced.json["simulated_time_s"].get<double>(),
              1.2 * free.json["simulated_time_s"].get<double>());
    ExpectSameAsSequential(perm + credits, 32, {2, 4}, "credits");
    ExpectSameAsSequential(perm + credits, 32, {2}, "credits-nm", true);
    ExpectSameAsSequential(perm + " --incast=8" + credits, 8, {2, 4}, "credits-incast");
    // a lost packet's credit returns CreditDelay after the loss, which its
    // sender on another rank hears of a word later
    const std::string fail =
        "--hosts=64 --radix=8 --flow-bytes=262144 --fail-cable=191 --fail-at-ns=20000" + credits;
    const ScaleRun failRef = RunScale(fail, 0, "credits-fail-seq");
    ASSERT_FALSE(failRef.json.is_discarded());
    EXPECT_GT(failRef.json["per_rank"][0]["retransmissions"].get<uint64_t>(), 0u);
    ExpectSameAsSequential(fail, 64, {2, 4}, "credits-fail");
    // where the freed slot lets a packet go on a live path (sprayed, or
    // resent going back N), when the credit returns shows in the times
    ExpectSameAsSequential(fail + " --lb=spray", 64, {2, 4}, "credits-fail-spray");
    ExpectSameAsSequential(fail + " --ns3::PacketTransport::Nack=true",
                           64,
                           {2, 4},
                           "credits-fail-nack",
                           false,
                           true);

    // a credit due no later than a word between ranks arrives is refused by name
    const std::string dir = FreshDir("credits-bad");
    const std::string cmd = Mpirun(2) + "mpi-scale " + perm +
                            " --ns3::PacketTransport::ConnectionWindow=16384 "
                            "--ns3::PacketTransport::CreditDelay=1us > " +
                            dir + "out.txt 2>&1";
    const int status = std::system(cmd.c_str());
    const std::string out = Slurp(dir + "out.txt");
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << out;
    EXPECT_NE(out.find("ns3::PacketTransport::CreditDelay"), std::string::npos) << out;
    EXPECT_NE(out.find("1000 ns"), std::string::npos) << out;
}

TEST(Distributed, ConnectionPerMessageEqualsSequential)
{
    // three flows of each pair side by side, each with its own connection and
    // congestion control: the receiver's side of a flow from another rank is
    // found by its sender's serial (its data packets carry it), and an ACK
    // arriving after the flow completed there (heard of a word later) wakes
    // only its own connection, so the port's round robin is the same
    const std::string perMessage = " --ns3::PacketTransport::ConnectionPerMessage=true";
    for (const std::string cc : {"dcqcn", "hpcc"})
    {
        SCOPED_TRACE(cc);
        const std::string args =
            "--hosts=32 --radix=8 --flow-bytes=131072 --flows-per-pair=3 --cc=" + cc + perMessage;
        const ScaleRun ref = RunScale(args, 0, "cpm-" + cc + "-seq");
        ASSERT_FALSE(ref.json.is_discarded());
        EXPECT_GT(ref.json["per_rank"][0]["acks_sent"].get<uint64_t>(), 0u);
        ExpectSameAsSequential(args, 3 * 32, {2, 4}, "cpm-" + cc);
    }
    // an incast whose marks make CNPs, each to its own message's flow; and
    // adaptive routing, whose ties ACKs of such flows must not move
    const std::string incast = "--hosts=32 --radix=8 --flow-bytes=262144 --incast=12 "
                               "--flows-per-pair=2 --cc=dcqcn" +
                               perMessage;
    const ScaleRun ref = RunScale(incast, 0, "cpm-incast-seq");
    ASSERT_FALSE(ref.json.is_discarded());
    EXPECT_GT(ref.json["per_rank"][0]["cnps_sent"].get<uint64_t>(), 0u) << "packets were marked";
    ExpectSameAsSequential(incast, 2 * 12, {2, 4}, "cpm-incast");
    ExpectSameAsSequential("--hosts=32 --radix=8 --flow-bytes=131072 --flows-per-pair=2 "
                           "--cc=hpcc --lb=adaptive" +
                               perMessage,
                           2 * 32,
                           {2},
                           "cpm-adaptive");
    // four flows of halving sizes to each of two destinations under Swift:
    // with every ACK waking all of the pair's held connections (as before),
    // the ACKs a sender takes between a flow's completion on another rank
    // and the word of it moved 97 of 512 completions
    ExpectSameAsSequential("--hosts=64 --radix=8 --flow-bytes=262144 --flows-per-pair=4 "
                           "--fan-out=2 --cc=swift" +
                               perMessage,
                           4 * 2 * 64,
                           {2, 4},
                           "cpm-swift");
}

TEST(Distributed, EveryLoadBalancerEqualsSequential)
{
    // spraying's round robin and the flowlets' table are each switch's own,
    // on the rank that simulates it
    for (const char* lb : {"spray", "flowlet", "adaptive"})
    {
        SCOPED_TRACE(lb);
        ExpectSameAsSequential(std::string("--hosts=64 --radix=8 --flow-bytes=262144 --lb=") + lb,
                               64,
                               {2, 4},
                               std::string("lb-") + lb);
    }
}

// Collectives: each rank runs its own GPUs' part of the CollectiveRun; a
// receive posted, or a message delivered, reaches the sender's rank as a note
// ControlDelay later (twice the cable delay by default, on one process too).

TEST(Distributed, RingAllReduceOnFatTreeEqualsSequential)
{
    // n ranks, 2 (n - 1) steps of one message each
    ExpectSameAsSequential(
        "--hosts=32 --radix=8 --collective=allreduce --algorithm=ring --bytes=1048576",
        2 * 32 * 31,
        {2, 4},
        "ring-ft");
}

TEST(Distributed, HierarchicalAllReduceOnRailOnlyEqualsSequential)
{
    // K = 8 GPUs per domain, D = 4 domains: 2 (K - 1) NVLink steps and
    // 2 (D - 1) rail steps, one message per GPU each
    ExpectSameAsSequential("--topology=rail-only --hosts=32 --collective=allreduce "
                           "--algorithm=hierarchical --bytes=4194304",
                           32 * (2 * 7 + 2 * 3),
                           {2, 4},
                           "hier-ro");
}

TEST(Distributed, AllReducesOnRailOptimizedAndRailOnlyEqualSequential)
{
    ExpectSameAsSequential("--topology=rail-optimized --hosts=32 --collective=allreduce "
                           "--algorithm=hierarchical --bytes=4194304",
                           32 * (2 * 7 + 2 * 3),
                           {2},
                           "hier-rf");
    // a flat ring crosses rails through NVLink relays
    ExpectSameAsSequential("--topology=rail-only --hosts=32 --collective=allreduce "
                           "--algorithm=ring --bytes=1048576",
                           2 * 32 * 31,
                           {2},
                           "ring-ro");
}

TEST(Distributed, AllToAllEqualsSequential)
{
    // every GPU sends to every other once (its own piece stays)
    ExpectSameAsSequential(
        "--hosts=32 --radix=8 --collective=alltoall --algorithm=direct --bytes=1048576",
        32 * 31,
        {2, 4},
        "a2a-ft");
}

TEST(Distributed, TrainingIterationEqualsSequential)
{
    // a GPT iteration (TP 8 in each domain, 2 pipeline stages, DP 2): each
    // rank runs its own GPUs' compute and comms (ProgramRunner), comms made
    // on whichever rank reaches them first
    ExpectSameAsSequential("--topology=rail-only --hosts=32 --program=gpt", 0, {2, 4}, "gpt-ro");
    ExpectSameAsSequential("--topology=rail-optimized --hosts=32 --program=gpt --pp=4",
                           0,
                           {2},
                           "gpt-rf");
    // on null messages, ended by StopWhenIdle: its notes are frame messages too
    ExpectSameAsSequential("--topology=rail-only --hosts=32 --program=gpt", 0, {2}, "gpt-nm", true);
}

TEST(Distributed, SendPacketDeliversEachFrameOnceAtItsTimeAsItWasSent)
{
    // rank 0 changes each packet after sending it and sends it again
    // (test/distributed-send-packet.cc checks on rank 1 and prints the verdict)
    const std::string dir = FreshDir("send-packet");
    const std::string cmd = Mpirun(2) + "distributed-send-packet > " + dir + "out.txt 2>&1";
    const int status = std::system(cmd.c_str());
    const std::string out = Slurp(dir + "out.txt");
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cmd << "\n" << out;
    EXPECT_NE(out.find("rank 1 received all 80 frames as they were sent"), std::string::npos)
        << out;
}

TEST(Distributed, SpeedupScriptPrintsTheMediansOfItsRounds)
{
    // bench/mpi-speedup.sh: every round's times, then their medians and the
    // speed-up between them (mpi-scale prints times to the millisecond)
    const std::string dir = FreshDir("speedup");
    const std::string script = std::string(GPU_FABRIC_SOURCE_DIR) + "/bench/mpi-speedup.sh";
    const std::string scale = std::string(GPU_FABRIC_BIN_DIR) + "/mpi-scale";
    const auto run = [&dir, &script, &scale](const std::string& args) {
        const std::string cmd = "timeout 300 " + script + " --mpi-scale=" + scale + " " + args +
                                " > " + dir + "out.txt 2>&1";
        const int status = std::system(cmd.c_str());
        return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(dir + "out.txt"));
    };
    const auto [status, out] = run("--rounds=3 -- --hosts=128 --radix=8 --flow-bytes=262144");
    ASSERT_EQ(status, 0) << out;

    std::vector<std::vector<double>> rounds; // seq@0, seq@1, side by side, np=2, speed-up
    std::map<std::string, double> medians;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);)
    {
        std::istringstream words(line);
        uint32_t round = 0;
        if (std::isdigit(static_cast<unsigned char>(line[0])) && words >> round)
        {
            std::vector<double> row(5);
            for (double& v : row)
            {
                words >> v;
            }
            ASSERT_FALSE(words.fail()) << line;
            EXPECT_EQ(round, rounds.size() + 1) << line;
            rounds.push_back(row);
            continue;
        }
        for (const char* label : {"sequential on core 0",
                                  "sequential on core 1",
                                  "sequential, every core",
                                  "2 sequential side by side",
                                  "mpirun -np 2",
                                  "speed-up (sequential / distributed)"})
        {
            // the summary's rows are indented; the first line names them too
            const size_t at = line.find(label);
            if (line.rfind("  ", 0) == 0 && at != std::string::npos)
            {
                medians[label] = std::stod(line.substr(at + std::strlen(label)));
            }
        }
    }
    ASSERT_EQ(rounds.size(), 3u) << out;
    ASSERT_EQ(medians.size(), 6u) << out;
    const auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    };
    std::vector<double> core0;
    std::vector<double> core1;
    std::vector<double> alone;
    std::vector<double> dist;
    for (const auto& r : rounds)
    {
        core0.push_back(r[0]);
        core1.push_back(r[1]);
        alone.insert(alone.end(), {r[0], r[1]});
        dist.push_back(r[3]);
        EXPECT_GT(r[3], 0) << out;
        // the round's speed-up: its mean sequential time over its distributed one
        const double ratio = (r[0] + r[1]) / 2 / r[3];
        EXPECT_NEAR(r[4], ratio, 0.006 + ratio * 0.0006 / r[3]) << out;
    }
    EXPECT_NEAR(medians["sequential on core 0"], median(core0), 1e-9) << out;
    EXPECT_NEAR(medians["sequential on core 1"], median(core1), 1e-9) << out;
    EXPECT_NEAR(medians["sequential, every core"], median(alone), 0.0006) << out;
    EXPECT_NEAR(medians["mpirun -np 2"], median(dist), 1e-9) << out;
    const double speedup = median(alone) / median(dist);
    EXPECT_NEAR(medians["speed-up (sequential / distributed)"],
                speedup,
                0.006 + speedup * 0.0006 / median(dist))
        << out;

    // bad input: exit 2, the flag and its value named
    for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
             {"--rounds=0", "--rounds=0"},
             {"--np=1", "--np=1"},
             {"--rounds=2 --fast", "'--fast'"},
             {"--rounds=1 -- --hosts=many", "--hosts"}})
    {
        const auto [badStatus, badOut] = run(args);
        EXPECT_EQ(badStatus, 2) << args << "\n" << badOut;
        EXPECT_NE(badOut.find(says), std::string::npos) << args << "\n" << badOut;
    }
}

TEST(Distributed, BadPartitionsAreRefusedByName)
{
    const std::string dir = FreshDir("bad");
    {
        std::ofstream f(dir + "unknown.json");
        f << R"({"gpu-0": 0, "gpu-99": 1})";
    }
    {
        std::ofstream f(dir + "range.json");
        f << R"({"gpu-0": 5})";
    }

    struct Case
    {
        uint32_t ranks;
        std::string args;
        std::string says;
    };

    const Case cases[] = {
        {2, "--hosts=16 --radix=4 --partition=file:" + dir + "unknown.json", "gpu-99"},
        {2, "--hosts=16 --radix=4 --partition=file:" + dir + "range.json", "rank of gpu-0"},
        {2, "--hosts=16 --radix=4 --partition=nowhere", "domain:B (B = 1..65536"},
        // 2 GPUs and their one switch: 3 vertices for 4 ranks
        {4, "--hosts=2 --radix=4", "at most the topology's 3 vertices"},
        // the null-message engine never stops by itself; StopWhenIdle, which
        // ends it, counts the events the module's scheduler holds
        {2,
         "--hosts=16 --radix=4 --null-messages --SchedulerType=ns3::MapScheduler",
         "SchedulerType"},
        // a collective's ranks tell each other by notes, more than a cable's
        // delay apart (a note due at the window's edge could come too late)
        {2,
         "--hosts=16 --radix=4 --collective=allreduce --control-delay-ns=1000",
         "ns3::CollectiveRun::ControlDelay"},
    };
    for (const Case& c : cases)
    {
        SCOPED_TRACE(c.args);
        const std::string log = dir + "log.txt";
        const std::string cmd = Mpirun(c.ranks) + "mpi-scale " + c.args + " > " + log + " 2>&1";
        const int status = std::system(cmd.c_str());
        const std::string out = Slurp(log);
        // mpirun passes the ranks' exit status 2 on
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << out;
        EXPECT_NE(out.find(c.says), std::string::npos) << out;
    }
}

namespace
{

/// A program's run: exit status, what it printed (stdout, stderr), its --json.
struct ProgramRunResult
{
    int status;
    std::string out;
    std::string err;
    nlohmann::json json;
};

/// Run `program args --json=...` on one process (ranks 0) or under mpirun.
ProgramRunResult
RunProgram(const std::string& programAndArgs, uint32_t ranks, const std::string& tag)
{
    const std::string dir = FreshDir(tag);
    const std::string prefix =
        ranks == 0 ? "timeout 300 " + std::string(GPU_FABRIC_BIN_DIR) + "/" : Mpirun(ranks);
    const std::string cmd = prefix + programAndArgs + " --json=" + dir + "run.json > " + dir +
                            "out.txt 2> " + dir + "err.txt";
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1,
            Slurp(dir + "out.txt"),
            Slurp(dir + "err.txt"),
            nlohmann::json::parse(Slurp(dir + "run.json"), nullptr, false)};
}

/// \return how many times \p what occurs in \p text
size_t
Count(const std::string& text, const std::string& what)
{
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    {
        ++n;
    }
    return n;
}

/**
 * The values a distributed run's note on \p err says it sets (rank 0 says
 * it, once), as " --ns3::...=..." words; empty (a failed expectation) when
 * the note or one of the three values is missing.
 */
std::string
NoteValues(const std::string& err, uint32_t ranks)
{
    const size_t at = err.find("note: a run over " + std::to_string(ranks) + " MPI ranks sets ");
    EXPECT_NE(at, std::string::npos) << err;
    EXPECT_EQ(Count(err, "note: "), 1u) << err;
    if (at == std::string::npos)
    {
        return "";
    }
    // its --ns3:: words, up to the ';' that ends the list
    std::istringstream words(err.substr(at, err.find(';', at) - at));
    std::string values;
    for (std::string w; words >> w;)
    {
        if (w.rfind("--ns3::", 0) == 0)
        {
            values += " " + w;
        }
    }
    for (const char* needed : {"ControlDelay=", "FlowLabels=source-sequence", "CanonicalTies=true"})
    {
        EXPECT_NE(values.find(needed), std::string::npos) << err;
        if (values.find(needed) == std::string::npos)
        {
            return "";
        }
    }
    return values;
}

/**
 * \p programAndArgs (and \p distributedArgs, which one process refuses) under
 * mpirun on each of \p rankCounts ranks (packet level:
 * each of its simulations on the distributed engine) prints exactly what the
 * one-process run given the values the distributed run's note names prints,
 * once, and writes the very same --json.
 */
void
ExpectAsOneProcess(const std::string& programAndArgs,
                   std::initializer_list<uint32_t> rankCounts,
                   const std::string& tag,
                   const std::string& distributedArgs = "")
{
    std::string oneProcessArgs;
    ProgramRunResult one;
    for (const uint32_t n : rankCounts)
    {
        SCOPED_TRACE(n);
        const ProgramRunResult run = RunProgram(programAndArgs, n, tag + "-np" + std::to_string(n));
        ASSERT_EQ(run.status, 0) << run.out << run.err;
        ASSERT_FALSE(run.json.is_discarded());
        const std::string values = NoteValues(run.err, n);
        ASSERT_FALSE(values.empty()) << run.err;
        if (oneProcessArgs.empty())
        {
            oneProcessArgs = values;
            one = RunProgram(programAndArgs + values, 0, tag + "-one");
            ASSERT_EQ(one.status, 0) << one.out << one.err;
            ASSERT_FALSE(one.json.is_discarded());
            ASSERT_FALSE(one.out.empty());
        }
        EXPECT_EQ(values, oneProcessArgs) << "the same values on any number of ranks";
        // every simulated time to the nanosecond, printed once
        EXPECT_EQ(run.out, one.out);
        EXPECT_EQ(run.json, one.json);
    }
}

} // namespace

TEST(Distributed, CollectiveBenchSweepsEqualOneProcess)
{
    // a sweep of 4 sizes: each a fresh simulation on the distributed engine
    ExpectAsOneProcess("collective-bench --topology=rail-only --gpus=32 --collective=allreduce "
                       "--algorithm=hierarchical --min-bytes=65536 --max-bytes=524288",
                       {2, 4},
                       "cb-rail");
    ExpectAsOneProcess("collective-bench --topology=fat-tree --gpus=32 --radix=8 "
                       "--collective=alltoall --algorithm=direct --min-bytes=32768 "
                       "--max-bytes=65536",
                       {2},
                       "cb-fat-tree",
                       " --partition=pod");
}

TEST(Distributed, TrainingProgramsEqualOneProcess)
{
    // the flagship: an iteration on rail-only, the fat-trees and a
    // direct-connect graph of HB domains, each fabric cut by domain
    ExpectAsOneProcess("rail-only-vs-fat-tree --quick --png=none", {2}, "flagship");
    // the MoE all-to-all on rail-only and a fat-tree
    ExpectAsOneProcess("moe-alltoall", {2}, "moe");
}

TEST(Distributed, DirectConnectSynthEqualsOneProcess)
{
    // BFB's allgather and allreduce on a torus of 16 hosts, cut into blocks
    // of hosts (every cut cable a lookahead of its 100 ns)
    ExpectAsOneProcess("direct-connect-synth --graph='Torus(4,4)' --simulate --size=262144",
                       {2, 4},
                       "dc-simulate");
    // BFB and the four baselines on the testbed shape, 1 KiB and 1 MiB
    ExpectAsOneProcess("direct-connect-synth --compare --quick", {2}, "dc-compare");
}

TEST(Distributed, MultiJobAndChakraReplayEqualOneProcess)
{
    // two jobs of 16 GPUs (TP 8 x DP 2) on 64 GPUs of rail-only, packet
    // level: packed, and fragmented over every domain (so over every rank)
    ExpectAsOneProcess("multi-job --backend=packet --gpus=64 --jobs=2 --job-gpus=16 "
                       "--topologies=rail-only --placements=packed,fragmented --layers=1",
                       {2, 4},
                       "multi-job");
    // an AICB workload: data parallel over 32 GPUs (four DGX-H100 domains),
    // each layer's weight gradients all-reduced while the layers below compute
    const std::string dir = FreshDir("aicb");
    const std::string path = dir + "dp32.txt";
    {
        std::ofstream f(path);
        f << "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 ep: 1 pp: 1 vpp: 2 "
             "ga: 1 all_gpus: 32 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 0\n"
             "2\n"
             "layer0\t-1\t100000\tNONE\t0\t200000\tNONE\t0\t150000\tALLREDUCE\t4194304\t0\n"
             "layer1\t-1\t120000\tNONE\t0\t180000\tNONE\t0\t170000\tALLREDUCE\t8388608\t0\n";
    }
    ExpectAsOneProcess("chakra-replay --aicb=" + path + " --backend=packet --topology=rail-only",
                       {2, 4},
                       "aicb");
}

TEST(Distributed, FailureStudyEqualsOneProcess)
{
    // fourteen iterations, healthy and with a failed rail switch, spine, GPU
    // (its messages fail; the failed comm and the held ranks are gathered on
    // rank 0), remedies and a degraded NVLink: each rank applies the fault to
    // its copy of the fabric and the counters are summed over the ranks
    ExpectAsOneProcess("failure-study --layers=1 --hidden=256 --seq=64 --micro-batches=1",
                       {2, 4},
                       "failure-study");
}

TEST(Distributed, ServingStudyEqualsOneProcess)
{
    // every rank runs the same serving engine over its own GPUs: each tells
    // every rank by a note when its part of a prefill or decode step ended,
    // ServingSimulation::ControlDelay later, so that all decide the next
    // step at the same instant; co-located (TP 4 x EP 4 over two DGX
    // domains, one per rank; on four ranks two of them) and disaggregated
    // (prefill and decode groups on different ranks, KV caches between them)
    ExpectAsOneProcess("serving-study --quick --backend=packet --requests=6 --output-tokens=4 "
                       "--prompt-tokens=128 --gpus=16",
                       {2},
                       "serving");
    ExpectAsOneProcess("serving-study --quick --backend=packet --requests=6 --output-tokens=4 "
                       "--prompt-tokens=128",
                       {4},
                       "serving-32");
    ExpectAsOneProcess("serving-study --quick --backend=packet --requests=4 --output-tokens=3 "
                       "--prompt-tokens=64 --disaggregated --topology=rail-only",
                       {2},
                       "serving-disagg");
}

TEST(Distributed, TimelineAndLinkUtilizationEqualOneProcess)
{
    // each rank records its own GPUs' spans and its own nodes' links; rank 0
    // gathers them and writes files equal to the one-process run's, byte for
    // byte: a collective sweep (collective spans, messages, links), a
    // training program (compute and comm tasks) and a serving run
    struct Case
    {
        std::string program;
        std::string tag;
        bool linkUtil;
        uint32_t gpus;
    };

    const Case cases[] = {
        {"collective-bench --topology=rail-only --gpus=32 --collective=allreduce "
         "--algorithm=hierarchical --min-bytes=65536 --max-bytes=131072",
         "tl-cb",
         true,
         32},
        {"moe-alltoall", "tl-moe", false, 64},
        // a serving run's passes, each made during the simulation
        {"serving-study --quick --backend=packet --requests=2 --output-tokens=2 "
         "--prompt-tokens=64 --topology=rail-only --gpus=16",
         "tl-serving",
         true,
         16},
    };
    for (const Case& c : cases)
    {
        SCOPED_TRACE(c.program);
        const auto outputs = [&c](const std::string& dir) {
            return " --timeline=" + dir + "t.json" +
                   (c.linkUtil ? " --link-util=" + dir + "u.json" : std::string());
        };
        const std::string mpiDir = FreshDir(c.tag + "-files-np2");
        const ProgramRunResult run = RunProgram(c.program + outputs(mpiDir), 2, c.tag + "-np2");
        ASSERT_EQ(run.status, 0) << run.out << run.err;
        const std::string values = NoteValues(run.err, 2);
        ASSERT_FALSE(values.empty());
        const std::string oneDir = FreshDir(c.tag + "-files-one");
        const ProgramRunResult one =
            RunProgram(c.program + values + outputs(oneDir), 0, c.tag + "-one");
        ASSERT_EQ(one.status, 0) << one.out << one.err;
        const std::string timeline = Slurp(mpiDir + "t.json");
        const nlohmann::json trace = nlohmann::json::parse(timeline, nullptr, false);
        ASSERT_FALSE(trace.is_discarded());
        // spans of every GPU of the fabric, from both ranks' halves
        std::set<uint32_t> threads;
        for (const nlohmann::json& e : trace["traceEvents"])
        {
            if (e["ph"] == "X")
            {
                threads.insert(e["tid"].get<uint32_t>());
            }
        }
        EXPECT_EQ(threads.size(), c.gpus);
        EXPECT_EQ(timeline, Slurp(oneDir + "t.json"));
        if (c.linkUtil)
        {
            const std::string util = Slurp(mpiDir + "u.json");
            ASSERT_FALSE(util.empty());
            EXPECT_EQ(util, Slurp(oneDir + "u.json"));
        }
    }
}

TEST(Distributed, CollectiveBenchRunsWhatIsNotDistributedOnRankZero)
{
    // the flow level is not distributed: rank 0 runs it alone, prints it once
    const std::string args = "collective-bench --backend=flow --gpus=32 --max-bytes=1048576";
    const ProgramRunResult one = RunProgram(args, 0, "cb-flow-one");
    const ProgramRunResult run = RunProgram(args, 2, "cb-flow-np2");
    ASSERT_EQ(one.status, 0) << one.err;
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out, one.out);
    EXPECT_NE(run.err.find("runs on rank 0 alone (the flow level is not distributed)"),
              std::string::npos)
        << run.err;
    EXPECT_EQ(run.json, one.json);

    // a partition that is no policy, a bad flag, and a partition on one
    // process: refused by name, once
    struct Case
    {
        uint32_t ranks;
        std::string args;
        std::string says;
    };

    const Case cases[] = {
        {2, "--gpus=32 --partition=nowhere", "domain:B (B = 1..65536"},
        {2, "--gpus=many", "invalid --gpus: got 'many'"},
        {0, "--gpus=32 --partition=pod", "--partition"},
    };
    for (const Case& c : cases)
    {
        SCOPED_TRACE(c.args);
        const ProgramRunResult bad =
            RunProgram("collective-bench --max-bytes=4096 " + c.args, c.ranks, "cb-bad");
        EXPECT_EQ(bad.status, 2) << bad.out << bad.err;
        EXPECT_NE(bad.err.find(c.says), std::string::npos) << bad.err;
        EXPECT_EQ(Count(bad.err, "collective-bench: "), 1u) << "said once: " << bad.err;
    }
}
