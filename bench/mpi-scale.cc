/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// bench/mpi-scale: packet-level permutation traffic (one flow per GPU, as
// bench/fabric-throughput), or a collective over every GPU (--collective), on
// a fat-tree or a rail-only fabric, run on ns-3's MPI distributed simulator
// over the ranks mpirun starts. Each rank builds
// the whole fabric and simulates its part (--partition); rank 0 prints wall
// time, build time, events, frames and null messages between ranks and peak
// memory per rank, and writes
// the JSON. --messages writes every message's completion (src, dst, bytes,
// start, end), gathered from the ranks where the messages completed, so that
// runs on different numbers of ranks can be compared message by message
// (test-distributed does). Figures are printed, never asserted.
//
//   mpirun -np 2 build-mpi/bin/mpi-scale --hosts=1024
//   mpirun -np 2 build-mpi/bin/mpi-scale --topology=rail-only
//          --collective=allreduce --algorithm=hierarchical --bytes=16777216
//   build-mpi/bin/mpi-scale --sequential      (ns-3's default engine, no MPI)
#include "program-support.h"

#include "ns3/collective-helper.h"
#include "ns3/congestion-control.h"
#include "ns3/core-module.h"
#include "ns3/fabric-distributed.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-helper.h"
#include "ns3/fabric-partition.h"
#include "ns3/fabric-switch.h"
#include "ns3/fault-helper.h"
#include "ns3/iteration-program.h"
#include "ns3/program-flags.h"
#include "ns3/topology-builders.h"
#include "ns3/training-iteration.h"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <random>
#include <tuple>

#ifdef GPU_FABRIC_MPI
#include <cstring>
#include <mpi.h>
#endif

using namespace ns3;

#ifdef GPU_FABRIC_MPI
namespace
{
/// ns-3's null-message engine keeps no count of its null messages: this
/// program counts every MPI_Isend through MPI's profiling interface (its
/// MPI_Isend calls PMPI_Isend). ns-3 sends every message of either engine
/// with MPI_Isend and nothing else; a null message is 24 bytes whose first 8,
/// the receive time, are zero (a frame's is its arrival, after the
/// lookahead), as ns-3's receiver tells them apart.
std::vector<uint64_t> g_nullMessagesTo; //!< by destination rank
uint64_t g_otherIsends = 0;             //!< the rest: messages of frames
/// Wall time in the calls where an engine waits for the other ranks: the
/// granted time window's MPI_Allgather at each window's end, the null-message
/// engine's MPI_Waitany for a message. Work that is not balanced over the
/// ranks shows there: the faster rank waits for the slower.
double g_syncSeconds = 0;
uint64_t g_syncCalls = 0; //!< those calls

/// \return what \p call returns, its wall time added to g_syncSeconds
template <typename Call>
int
TimedWait(Call call)
{
    const double t0 = PMPI_Wtime();
    const int r = call();
    g_syncSeconds += PMPI_Wtime() - t0;
    ++g_syncCalls;
    return r;
}
} // namespace

extern "C" int
MPI_Allgather(const void* sendBuf,
              int sendCount,
              MPI_Datatype sendType,
              void* recvBuf,
              int recvCount,
              MPI_Datatype recvType,
              MPI_Comm comm)
{
    return TimedWait([&] {
        return PMPI_Allgather(sendBuf, sendCount, sendType, recvBuf, recvCount, recvType, comm);
    });
}

extern "C" int
MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status)
{
    return TimedWait([&] { return PMPI_Waitany(count, requests, index, status); });
}

extern "C" int
MPI_Isend(const void* buf,
          int count,
          MPI_Datatype type,
          int dest,
          int tag,
          MPI_Comm comm,
          MPI_Request* request)
{
    int typeSize = 0;
    PMPI_Type_size(type, &typeSize);
    uint64_t rxTime = 1;
    if (static_cast<int64_t>(count) * typeSize == 24)
    {
        std::memcpy(&rxTime, buf, sizeof(rxTime));
    }
    if (rxTime == 0 && dest >= 0)
    {
        if (g_nullMessagesTo.size() <= static_cast<size_t>(dest))
        {
            g_nullMessagesTo.resize(dest + 1, 0);
        }
        ++g_nullMessagesTo[dest];
    }
    else
    {
        ++g_otherIsends;
    }
    return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}
#endif

namespace
{

/// A message's completion, where it completed.
struct Completion
{
    uint32_t src;
    uint32_t dst;
    uint64_t bytes;
    int64_t startNs;
    int64_t endNs;
};

std::vector<Completion> g_completions;

void
Completed(uint32_t src, uint32_t dst, uint64_t bytes, Time start)
{
    g_completions.push_back(
        {src, dst, bytes, start.GetNanoSeconds(), Simulator::Now().GetNanoSeconds()});
}

std::string
CompletionsCsv(std::vector<Completion> all)
{
    std::sort(all.begin(), all.end(), [](const Completion& a, const Completion& b) {
        return std::tie(a.src, a.dst, a.startNs, a.endNs, a.bytes) <
               std::tie(b.src, b.dst, b.startNs, b.endNs, b.bytes);
    });
    std::string out = "src,dst,bytes,start_ns,end_ns\n";
    for (const Completion& c : all)
    {
        out += fmt::format("{},{},{},{},{}\n", c.src, c.dst, c.bytes, c.startNs, c.endNs);
    }
    return out;
}

} // namespace

int
main(int argc, char* argv[])
{
    // MPI first: it may take arguments of its own. --sequential runs on
    // ns-3's default engine instead (the reference of a distributed run).
    bool sequential = false;
    bool nullMessages = false;
    for (int i = 1; i < argc; ++i)
    {
        const std::string arg = argv[i];
        sequential = sequential || arg == "--sequential" || arg == "--sequential=1" ||
                     arg == "--sequential=true";
        nullMessages = nullMessages || arg == "--null-messages" || arg == "--null-messages=1" ||
                       arg == "--null-messages=true";
    }
    if (!sequential)
    {
        FabricDistributed::Enable(&argc, &argv, nullMessages);
    }
    const uint32_t me = FabricDistributed::GetSystemId();
    const uint32_t ranks = FabricDistributed::GetSize();

    std::string topology = "fat-tree";
    uint32_t hosts = 1024;
    uint32_t radix = 16;
    uint64_t flowBytes = 1 << 20;
    std::string rate = "100Gbps";
    int64_t delayNs = 1000;
    uint32_t seed = 1;
    std::string partition; // default: domain, or pipeline:PP with --program
    std::string cc = "none";
    std::string lb = "ecmp";
    std::string json;
    std::string messages;
    int64_t stopNs = 0;
    int64_t failCable = -1;
    uint32_t incast = 0;
    uint32_t flowsPerPair = 1;
    uint32_t fanOut = 1;
    int64_t failAtNs = 0;
    std::string collective = "none";
    std::string algorithm = "ring";
    uint64_t collectiveBytes = 16 << 20;
    int64_t controlDelayNs = -1;
    uint32_t channels = 1;
    std::string program = "none";
    uint32_t tp = 8;
    uint32_t pp = 2;
    uint32_t microBatches = 2;

    ProgramFlags cmd("mpi-scale", __FILE__);
    cmd.Usage("Permutation traffic at packet level on ns-3's MPI distributed simulator (run "
              "under mpirun -np N); prints speed and memory figures per rank.");
    cmd.AddValue("topology",
                 "fat-tree (one GPU per host), rail-optimized or rail-only (both with DGX "
                 "H100 domains)",
                 topology);
    cmd.AddValue("hosts", "number of GPUs", hosts);
    cmd.AddValue("radix", "switch radix k", radix);
    cmd.AddValue("flow-bytes", "bytes per flow", flowBytes);
    cmd.AddValue("rate", "network link rate", rate);
    cmd.AddValue("delay-ns", "propagation delay per network cable, ns (the lookahead)", delayNs);
    cmd.AddValue("seed", "seed of the permutation", seed);
    cmd.AddValue("incast",
                 "instead of the permutation: this many GPUs (the permutation's next ones) "
                 "each send a flow to one (its first); 0: the permutation",
                 incast);
    cmd.AddValue("flows-per-pair",
                 "flows each sender sends each destination at once, the f-th (from 0) of "
                 "--flow-bytes / 2^f (with ns3::PacketTransport::ConnectionPerMessage, side by "
                 "side)",
                 flowsPerPair);
    cmd.AddValue("fan-out",
                 "destinations per sender of the permutation: the GPUs 1 to N after it in the "
                 "permutation",
                 fanOut);
    cmd.AddValue("partition",
                 "domain, domain:B, pipeline:P, pod or file:PATH (FabricPartitioner; default: "
                 "domain, with --program pipeline:PP, each pipeline stage over every rank)",
                 partition);
    cmd.AddValue("cc", "congestion control: none, dcqcn, dctcp, hpcc, swift", cc);
    cmd.AddValue("lb", "switch load balancing: ecmp, spray, flowlet or adaptive", lb);
    cmd.AddValue("sequential", "run on ns-3's default engine, without MPI", sequential);
    cmd.AddValue("null-messages",
                 "synchronize with null messages instead of the granted "
                 "time window",
                 nullMessages);
    cmd.AddValue("stop-ns",
                 "stop the run at this simulated time, ns (0: when every event is done; with "
                 "--null-messages, whose engine never stops by itself, when every rank has "
                 "run out of events: FabricDistributed::StopWhenIdle)",
                 stopNs);
    cmd.AddValue("fail-cable",
                 "take this cable (topology index) down at --fail-at-ns (-1: none); its "
                 "packets are lost and resent, routes change after the detection delay",
                 failCable);
    cmd.AddValue("fail-at-ns", "when --fail-cable goes down, ns", failAtNs);
    cmd.AddValue("collective",
                 "none (the permutation), or a collective over every GPU: allreduce, "
                 "allgather, reducescatter or alltoall",
                 collective);
    cmd.AddValue("algorithm",
                 "the collective's algorithm (collective-bench's names: ring, hierarchical, "
                 "direct, pxn, ...)",
                 algorithm);
    cmd.AddValue("bytes", "the collective's size (nccl-tests' size), bytes", collectiveBytes);
    cmd.AddValue("channels", "the collective's channels", channels);
    cmd.AddValue("control-delay-ns",
                 "ns3::CollectiveRun::ControlDelay, ns (-1: twice --delay-ns; a distributed run "
                 "needs more than the delay of a cable between ranks); the sequential run "
                 "takes the same value, so the times agree",
                 controlDelayNs);
    cmd.AddValue("program",
                 "none, or gpt: one training iteration of a small GPT (2 layers per "
                 "stage, hidden 1024, sequence 512) over every GPU, TP x PP x DP",
                 program);
    cmd.AddValue("tp", "--program's tensor parallelism (inside an HB domain)", tp);
    cmd.AddValue("pp", "--program's pipeline stages", pp);
    cmd.AddValue("micro-batches", "--program's micro-batches per replica", microBatches);
    cmd.AddValue("json", "write the figures as JSON to this path (rank 0)", json);
    cmd.AddValue("messages",
                 "write every message's completion as CSV to this path (rank 0)",
                 messages);
    cmd.UseFabricScheduler();
    cmd.Parse(argc, argv);

    int status = 0;
    try
    {
        FabricRequire(topology == "fat-tree" || topology == "rail-optimized" ||
                          topology == "rail-only",
                      "--topology",
                      topology,
                      "fat-tree, rail-optimized or rail-only");
        FabricRequire(flowBytes > 0, "--flow-bytes", flowBytes, "a positive byte count");
        FabricRequire(hosts >= 2, "--hosts", hosts, "at least 2");
        FabricRequire(stopNs >= 0, "--stop-ns", stopNs, "a non-negative time");
        FabricRequire(delayNs > 0,
                      "--delay-ns",
                      delayNs,
                      "a positive delay (a cable between ranks gives the lookahead)");
        const DataRate lineRate = ParseRate("--rate", rate);
        ClusterParams p;
        p.gpus = hosts;
        p.radix = radix;
        p.linkDelayNs = delayNs;
        if (topology == "fat-tree")
        {
            p.platform = HbDomainPreset::Custom(1, lineRate, lineRate);
        }
        else
        {
            p.fabricRateBps = lineRate.GetBitRate();
        }
        const FabricTopology topo = topology == "fat-tree"         ? BuildFatTree(p)
                                    : topology == "rail-optimized" ? BuildRailOptimized(p)
                                                                   : BuildRailOnly(p);
        if (partition.empty())
        {
            // a pipeline's stages are busy in turn: spread each over every rank
            partition = program != "none" ? fmt::format("pipeline:{}", pp) : "domain";
        }
        const FabricPartition part = FabricPartitioner::Make(topo, ranks, partition);
        FabricRequire(failCable < static_cast<int64_t>(topo.Cables().size()),
                      "--fail-cable",
                      failCable,
                      fmt::format("-1 or a cable index below {}", topo.Cables().size()));
        cmd.OnlyWith("fail-at-ns", failCable >= 0, "with --fail-cable");
        const bool runCollective = collective != "none";
        FabricRequire(program == "none" || program == "gpt", "--program", program, "none or gpt");
        const bool runProgram = program != "none";
        FabricRequire(!runCollective || !runProgram,
                      "--program",
                      program,
                      "none with --collective (one workload per run)");
        FabricRequire(!runProgram || topology != "fat-tree",
                      "--topology",
                      topology,
                      "rail-only or rail-optimized with --program (HB domains for TP)");
        for (const char* flag : {"algorithm", "bytes", "channels"})
        {
            cmd.OnlyWith(flag, runCollective, "with --collective");
        }
        for (const char* flag : {"tp", "pp", "micro-batches"})
        {
            cmd.OnlyWith(flag, runProgram, "with --program");
        }
        cmd.OnlyWith("control-delay-ns",
                     runCollective || runProgram,
                     "with --collective or --program");
        cmd.OnlyWith("flow-bytes", !runCollective && !runProgram, "with the permutation");
        cmd.OnlyWith("seed", !runCollective && !runProgram, "with the permutation");
        cmd.OnlyWith("incast", !runCollective && !runProgram, "with the permutation");
        cmd.OnlyWith("flows-per-pair",
                     !runCollective && !runProgram,
                     "with the permutation or --incast");
        cmd.OnlyWith("fan-out",
                     !runCollective && !runProgram && incast == 0,
                     "with the permutation (not --incast)");
        FabricRequire(flowsPerPair >= 1 && flowsPerPair <= 64,
                      "--flows-per-pair",
                      flowsPerPair,
                      "1 to 64");
        FabricRequire(fanOut >= 1 && fanOut < hosts,
                      "--fan-out",
                      fanOut,
                      fmt::format("1 to --hosts - 1 ({})", hosts - 1));
        FabricRequire(incast < hosts,
                      "--incast",
                      incast,
                      fmt::format("0 (the permutation) or fewer senders than --hosts ({})", hosts));
        FabricRequire(controlDelayNs >= -1,
                      "--control-delay-ns",
                      controlDelayNs,
                      "-1 (twice --delay-ns) or a non-negative time");
        Config::SetDefault(
            "ns3::CollectiveRun::ControlDelay",
            TimeValue(NanoSeconds(controlDelayNs < 0 ? 2 * delayNs : controlDelayNs)));

        // labels from each sender's own count: the same paths on any number of ranks
        Config::SetDefault("ns3::Transport::FlowLabels", StringValue("source-sequence"));
        const std::string ccType = ResolveCongestionControl(cc, "--cc");
        FabricSwitch::CheckLoadBalancingName(lb, "--lb");
        Config::SetDefault("ns3::PacketTransport::CongestionControl", StringValue(cc));
        FabricHelper helper;
        helper.SetSwitchAttribute("LoadBalancing", StringValue(lb));
        if (!ccType.empty())
        {
            // marking as the algorithm's paper sets it
            const EcnMarking marking = PublishedEcnMarking(ccType);
            helper.SetSwitchAttribute("EcnKmin", UintegerValue(marking.kmin));
            helper.SetSwitchAttribute("EcnKmax", UintegerValue(marking.kmax));
            helper.SetSwitchAttribute("EcnPmax", DoubleValue(marking.pmax));
        }
        helper.SetPartition(part);
        const double tBuild = WallSeconds();
        Ptr<Fabric> fabric = helper.Install(topo);
        const double buildWall = WallSeconds() - tBuild;

        std::mt19937_64 rng(seed);
        std::vector<uint32_t> order(hosts);
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), rng);
        Ptr<PacketTransport> transport = fabric->GetTransport();
        uint64_t devicesBuilt = 0; // a rank builds its nodes' cables and the GPUs'
        for (uint32_t c = 0; c < topo.Cables().size(); ++c)
        {
            const auto [a, b] = fabric->GetCableDevices(c);
            devicesBuilt += (a ? 1 : 0) + (b ? 1 : 0);
        }
        transport->TraceConnectWithoutContext("MessageComplete", MakeCallback(&Completed));
        // every rank applies the fault to its replica of the fabric; only
        // the cable's own ranks see its packets lost
        std::optional<FaultHelper> faults;
        if (failCable >= 0)
        {
            faults.emplace(fabric);
            faults->LinkDown(static_cast<uint32_t>(failCable), NanoSeconds(failAtNs));
        }
        // the collective's applications start on their GPUs' own ranks
        Ptr<CollectiveRun> run;
        if (runCollective)
        {
            CollectiveHelper collectives(fabric);
            collectives.SetChannels(channels);
            run = collectives.Install(CollectiveHelper::AllRanks(hosts),
                                      collective,
                                      algorithm,
                                      collectiveBytes,
                                      Seconds(0));
        }
        Ptr<ProgramRunner> runner;
        if (runProgram)
        {
            FabricRequire(pp > 0 && tp > 0 && hosts % (tp * pp) == 0,
                          "--tp, --pp",
                          fmt::format("{} x {}", tp, pp),
                          fmt::format("sizes whose product divides --hosts ({})", hosts));
            const uint32_t dp = hosts / (tp * pp);
            Parallelism::Shape shape;
            shape.gpus = hosts;
            shape.gpusPerDomain = 8;
            shape.tp = tp;
            shape.pp = pp;
            shape.dp = dp;
            shape.microBatches = microBatches;
            shape.globalBatchSequences = static_cast<uint64_t>(dp) * microBatches;
            const LlmModel model =
                LlmModel::Custom(2 * pp, 1024, 16, 512, 8192, shape.globalBatchSequences * 512);
            const TrainingIteration it(model, Parallelism(shape));
            runner = StartProgram(BuildIterationProgram(it).program, transport);
        }
        // from the event loop, as an application starts (the null-message
        // engine connects the ranks when it starts running)
        Simulator::Schedule(Seconds(0), [&]() {
            if (runCollective || runProgram)
            {
                return;
            }
            for (uint32_t i = incast == 0 ? 0 : 1; i < (incast == 0 ? hosts : incast + 1); ++i)
            {
                if (!transport->IsLocalGpu(order[i]))
                {
                    continue;
                }
                for (uint32_t d = 1; d <= fanOut; ++d)
                {
                    const uint32_t dst = incast == 0 ? order[(i + d) % hosts] : order[0];
                    for (uint32_t f = 0; f < flowsPerPair; ++f)
                    {
                        // halving sizes, so that a pair's flows end apart
                        transport->Send(order[i],
                                        dst,
                                        std::max<uint64_t>(flowBytes >> f, 1),
                                        Transport::DoneCallback());
                    }
                }
            }
        });
        if (stopNs > 0)
        {
            Simulator::Stop(NanoSeconds(stopNs));
        }
        else
        {
            FabricDistributed::StopWhenIdle(); // a no-op but on null messages
        }
        // the clocks start together: building takes each rank its own time,
        // and a rank that enters Run first waits there for the others
        FabricDistributed::SumAll(0);
#ifdef GPU_FABRIC_MPI
        g_syncSeconds = 0;
        g_syncCalls = 0;
#endif
        const double t0 = WallSeconds();
        Simulator::Run();
        const double wall = WallSeconds() - t0;
        double syncSeconds = 0;
        uint64_t syncCalls = 0;
#ifdef GPU_FABRIC_MPI
        syncSeconds = g_syncSeconds;
        syncCalls = g_syncCalls;
#endif
        const uint64_t events = Simulator::GetEventCount();
        const auto totals = transport->GetTotals();
        const uint64_t packets = transport->GetPacketsDelivered();
        const uint64_t rss = PeakRssBytes();
        // what this rank's engine sent over MPI in the run (counted by MPI_Isend above)
        std::vector<uint64_t> nullTo(ranks, 0);
        uint64_t frameIsends = 0;
#ifdef GPU_FABRIC_MPI
        std::copy_n(g_nullMessagesTo.begin(),
                    std::min<size_t>(ranks, g_nullMessagesTo.size()),
                    nullTo.begin());
        frameIsends = g_otherIsends;
#endif
        int64_t lastNs = 0;
        for (const Completion& c : g_completions)
        {
            lastNs = std::max(lastNs, c.endNs);
        }
        const nlohmann::json mine = {
            {"rank", me},
            {"wall_s", wall},
            {"sync_wait_s", syncSeconds},
            {"sync_calls", syncCalls},
            {"build_wall_s", buildWall},
            {"events", events},
            {"frames_sent", FabricDistributed::GetFramesSent()},
            {"frames_received", FabricDistributed::GetFramesReceived()},
            {"mpi_messages_sent", FabricDistributed::GetMessagesSent()},
            {"mpi_messages_received", FabricDistributed::GetMessagesReceived()},
            {"null_messages_sent", std::accumulate(nullTo.begin(), nullTo.end(), uint64_t{0})},
            {"null_messages_sent_to", nullTo},
            {"mpi_isends_of_frames", frameIsends},
            {"peak_rss_bytes", rss},
            {"devices_built", devicesBuilt},
            {"messages_delivered", totals.messagesDelivered},
            {"bytes_delivered", totals.bytesDelivered},
            {"packets_delivered", packets},
            {"retransmissions", transport->GetRetransmissions()},
            {"acks_sent", transport->GetAcksSent()},
            {"cnps_sent", transport->GetCnpsSent()},
            {"nacks_sent", transport->GetNacksSent()},
            {"discarded_packets", transport->GetDiscardedPackets()},
            {"relayed_cc_packets", transport->GetRelayedCcPackets()},
            {"relay_control_packets", transport->GetRelayControlPackets()},
            {"last_completion_ns", lastNs}};
        nlohmann::json records = nlohmann::json::array();
        for (const Completion& c : g_completions)
        {
            records.push_back({c.src, c.dst, c.bytes, c.startNs, c.endNs});
        }
        const std::vector<std::string> perRank = FabricDistributed::GatherToRoot(mine.dump());
        const CollectiveResult result = run ? run->GatherResult() : CollectiveResult();
        if (runner)
        {
            runner->GatherResults();
        }
        const bool programDone = runner && runner->IsComplete();
        const double iterationS = programDone ? runner->GetFinishTime().GetSeconds() : 0.0;
        const std::vector<std::string> perRankMessages =
            FabricDistributed::GatherToRoot(records.dump());
        fabric->Dispose();
        fabric = nullptr;
        Simulator::Destroy();

        if (me == 0)
        {
            nlohmann::json all = nlohmann::json::array();
            std::vector<Completion> completions;
            for (uint32_t r = 0; r < perRank.size(); ++r)
            {
                all.push_back(nlohmann::json::parse(perRank[r]));
                all.back()["null_messages_received"] = 0;
                for (const auto& m : nlohmann::json::parse(perRankMessages[r]))
                {
                    completions.push_back({m[0], m[1], m[2], m[3], m[4]});
                }
            }
            for (const auto& from : all)
            {
                const auto& to = from["null_messages_sent_to"];
                for (uint32_t r = 0; r < all.size() && r < to.size(); ++r)
                {
                    all[r]["null_messages_received"] =
                        all[r]["null_messages_received"].get<uint64_t>() + to[r].get<uint64_t>();
                }
            }
            uint64_t sumEvents = 0;
            uint64_t sumMessages = 0;
            uint64_t sumBytes = 0;
            uint64_t sumPackets = 0;
            double maxWall = 0;
            double maxBuild = 0;
            int64_t simNs = 0;
            for (const auto& r : all)
            {
                sumEvents += r["events"].get<uint64_t>();
                sumMessages += r["messages_delivered"].get<uint64_t>();
                sumBytes += r["bytes_delivered"].get<uint64_t>();
                sumPackets += r["packets_delivered"].get<uint64_t>();
                maxWall = std::max(maxWall, r["wall_s"].get<double>());
                maxBuild = std::max(maxBuild, r["build_wall_s"].get<double>());
                simNs = std::max(simNs, r["last_completion_ns"].get<int64_t>());
            }
            fmt::print(
                "mpi-scale: {} GPUs on {}, {}, {} rank(s){}\n",
                hosts,
                topology,
                runCollective
                    ? fmt::format("{} ({}) of {} bytes", collective, algorithm, collectiveBytes)
                    : (runProgram
                           ? std::string("a GPT training iteration")
                           : fmt::format(
                                 "{} flows of {} bytes{}{}",
                                 (incast == 0 ? hosts * fanOut : incast) * flowsPerPair,
                                 flowBytes,
                                 flowsPerPair == 1
                                     ? ""
                                     : fmt::format(
                                           " halving to {} per pair",
                                           std::max<uint64_t>(flowBytes >> (flowsPerPair - 1), 1)),
                                 incast == 0 ? "" : " into one GPU")),
                ranks,
                sequential ? " (sequential engine)"
                           : (nullMessages ? " (null messages)" : " (granted time window)"));
            fmt::print("  partition {}: {}\n", partition, part.ToString());
            fmt::print("  wall time (Simulator::Run, slowest rank) {:>10.3f} s\n", maxWall);
            fmt::print("  build (nodes, devices, routing; slowest) {:>10.3f} s\n", maxBuild);
            fmt::print("  simulated time                           {:>10.6f} s\n", simNs * 1e-9);
            fmt::print("  events (all ranks)                       {:>10}\n", sumEvents);
            fmt::print("  messages delivered                       {:>10}\n", sumMessages);
            fmt::print("  packets delivered                        {:>10}\n", sumPackets);
            fmt::print("  simulated bytes per wall second          {:>10.3e}\n",
                       sumBytes / maxWall);
            if (runCollective)
            {
                fmt::print("  {} ({}) of {} bytes: {}\n",
                           collective,
                           algorithm,
                           collectiveBytes,
                           result.complete ? fmt::format("{:.9f} s, bus bandwidth {:.2f} GB/s",
                                                         result.timeS,
                                                         result.busbwGBps)
                                           : "did not complete");
            }
            if (runProgram)
            {
                fmt::print("  GPT iteration (TP {} x PP {} x DP {}): {}\n",
                           tp,
                           pp,
                           hosts / (tp * pp),
                           programDone ? fmt::format("{:.9f} s", iterationS) : "did not complete");
            }
            fmt::print("  rank  events      frames out  frames in   MPI msgs out  null msgs out  "
                       "wall s   waits s   "
                       "peak RSS MiB\n");
            for (const auto& r : all)
            {
                fmt::print("  {:>4}  {:>10}  {:>10}  {:>10}  {:>12}  {:>13}  {:>7.3f}  {:>7.3f}  "
                           "{:>10.1f}\n",
                           r["rank"].get<uint32_t>(),
                           r["events"].get<uint64_t>(),
                           r["frames_sent"].get<uint64_t>(),
                           r["frames_received"].get<uint64_t>(),
                           r["mpi_messages_sent"].get<uint64_t>(),
                           r["null_messages_sent"].get<uint64_t>(),
                           r["wall_s"].get<double>(),
                           r["sync_wait_s"].get<double>(),
                           r["peak_rss_bytes"].get<uint64_t>() / 1048576.0);
            }
            if (!json.empty())
            {
                nlohmann::json j = {
                    {"hosts", hosts},
                    {"incast", incast},
                    {"flows_per_pair", flowsPerPair},
                    {"fan_out", fanOut},
                    {"topology", topology},
                    {"ranks", ranks},
                    {"engine",
                     sequential ? "sequential" : (nullMessages ? "null-message" : "granted-time")},
                    {"partition", partition},
                    {"lookahead_ns", part.cutCables == 0 ? 0 : part.lookahead.GetNanoSeconds()},
                    {"cut_cables", part.cutCables},
                    {"wall_s", maxWall},
                    {"build_wall_s", maxBuild},
                    {"simulated_time_s", simNs * 1e-9},
                    {"events", sumEvents},
                    {"messages_delivered", sumMessages},
                    {"packets_delivered", sumPackets},
                    {"bytes_delivered", sumBytes},
                    {"per_rank", all}};
                if (runProgram)
                {
                    j["program"] = {{"program", program},
                                    {"tp", tp},
                                    {"pp", pp},
                                    {"dp", hosts / (tp * pp)},
                                    {"complete", programDone},
                                    {"iteration_time_s", iterationS}};
                }
                if (runCollective)
                {
                    j["collective"] = {{"collective", collective},
                                       {"algorithm", algorithm},
                                       {"bytes", collectiveBytes},
                                       {"complete", result.complete},
                                       {"time_s", result.timeS},
                                       {"busbw_gbps", result.busbwGBps}};
                }
                WriteTextFile("--json", json, j.dump(2) + "\n");
            }
            if (!messages.empty())
            {
                WriteTextFile("--messages", messages, CompletionsCsv(completions));
            }
        }
    }
    catch (const FabricConfigError& e)
    {
        if (me == 0)
        {
            fmt::print(stderr, "mpi-scale: {}\n", e.what());
        }
        status = 2;
    }
    FabricDistributed::Disable();
    return status;
}
