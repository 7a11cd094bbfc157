/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// AICB workload files (SimAI's input): files written here by hand from the
// format replay to closed-form times (compute plus ring all-reduces on the
// uncontended fabric); the groups are SimAI's; malformed files are refused
// naming the file, line and field; the program exits 2 on them.
#include "replay-closed-form.h"

#include "ns3/aicb-workload.h"
#include "ns3/collective-metrics.h"
#include "ns3/core-module.h"
#include "ns3/fabric-helper.h"
#include "ns3/fabric.h"
#include "ns3/gpu-fabric-module.h"
#include "ns3/iteration-program.h"
#include "ns3/topology-builders.h"

#include <algorithm>
#include <array>
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

/// Writes \p text to a fresh file named after \p tag; \return its path.
std::string
WorkloadFile(const std::string& tag, const std::string& text)
{
    const std::string dir = ::testing::TempDir() + "aicb-" + tag;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string path = dir + "/workload.txt";
    std::ofstream(path) << text;
    return path;
}

/// The message of ReadAicbWorkload(path) (which must throw).
std::string
ReadError(const std::string& path, const AicbReplayOptions& options = {})
{
    try
    {
        ReadAicbWorkload(path, options);
    }
    catch (const FabricConfigError& e)
    {
        return e.what();
    }
    ADD_FAILURE() << "no error for " << path;
    return "";
}

/// A header as AICB writes it.
std::string
AicbHeader(uint32_t tp, uint32_t gpus, uint32_t ep = 1)
{
    return fmt::format("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: {} ep: {} pp: 1 "
                       "vpp: 2 ga: 1 all_gpus: {} checkpoints: 0 checkpoint_initiates: 0 "
                       "pp_comm: 0\n",
                       tp,
                       ep,
                       gpus);
}

// Data parallel, 8 GPUs of one domain: no forward or input-gradient comms;
// each layer's weight gradients are all-reduced over all 8 while the layers
// below compute. Layer 1's all-reduce (8 MB) hides under layer 0's backward
// compute; layer 0's (4 MB) is the exposed tail.
const char* const kDpLayers = "2\n"
                              "layer0\t-1\t100000\tNONE\t0\t200000\tNONE\t0\t150000\tALLREDUCE\t"
                              "4194304\t0\n"
                              "layer1\t-1\t120000\tNONE\t0\t180000\tNONE\t0\t170000\tALLREDUCE\t"
                              "8388608\t0\n";

TEST(AicbWorkload, DataParallelJobReplaysToComputePlusTheLastRingAllReduce)
{
    const std::string path = WorkloadFile("dp", AicbHeader(1, 8) + kDpLayers);
    const AicbReplay replay = ReadAicbWorkload(path);
    ASSERT_EQ(replay.program.ranks, 8U);
    EXPECT_EQ(replay.layers, 2U);
    EXPECT_EQ(replay.tp, 1U);
    EXPECT_EQ(replay.dp, 8U);
    ASSERT_EQ(replay.program.comms.size(), 2U); // one DP group, two layers
    // backward runs layer 1 first
    EXPECT_EQ(replay.program.comms[0].bytes, 8388608U);
    EXPECT_EQ(replay.program.comms[1].bytes, 4194304U);
    for (const ProgramComm& c : replay.program.comms)
    {
        EXPECT_EQ(c.collective, "allreduce");
        EXPECT_EQ(c.algorithm, "ring");
        EXPECT_EQ(c.members, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
    }
    const double compute = (100000 + 120000 + 180000 + 170000 + 200000 + 150000) * 1e-9;
    for (uint32_t r = 0; r < 8; ++r)
    {
        EXPECT_NEAR(replay.computeSeconds[r], compute, 1e-15);
        // fwd0 fwd1 ig1 wg1 ar1 ig0 wg0 ar0
        ASSERT_EQ(replay.program.tasks[r].size(), 8U);
        EXPECT_EQ(replay.program.tasks[r][4].kind, ProgramTask::Kind::Comm);
        EXPECT_EQ(replay.program.tasks[r][5].deps, std::vector<uint32_t>{3}); // not on ar1
    }
    const double expected = compute + RingAllReduceTime(8, 4194304, NvlinkRingParams());
    const double simulated = RunOnRailOnly(replay.program);
    std::printf("simulated %.9f s, formula %.9f s\n", simulated, expected);
    EXPECT_NEAR(simulated / expected, 1.0, 1e-3);
}

// Tensor parallel 8 (one NVLink domain each) x data parallel 2 (across the
// rails): forward and input-gradient all-reduces in the TP group, each
// waited for and followed by the update time; weight-gradient all-reduces
// over the rail, the last one exposed.
TEST(AicbWorkload, TensorParallelJobReplaysToComputeNvlinkAllReducesAndTheLastRailAllReduce)
{
    const uint64_t tpBytes = 8 << 20;
    const std::string layers = fmt::format(
        "2\n"
        "attention -1 40000 ALLREDUCE {0} 50000 ALLREDUCE {0} 60000 ALLREDUCE 2097152 20000\n"
        "mlp       -1 45000 ALLREDUCE {0} 55000 ALLREDUCE {0} 65000 ALLREDUCE 1048576 20000\n",
        tpBytes);
    const std::string path = WorkloadFile("tp", AicbHeader(8, 16) + layers);
    const AicbReplay replay = ReadAicbWorkload(path);
    ASSERT_EQ(replay.program.ranks, 16U);
    EXPECT_EQ(replay.dp, 2U);
    // 4 TP all-reduces x 2 groups, 2 DP all-reduces x 8 groups
    ASSERT_EQ(replay.program.comms.size(), 24U);
    uint32_t tpComms = 0;
    for (const ProgramComm& c : replay.program.comms)
    {
        if (c.members.size() == 8)
        {
            ++tpComms;
            EXPECT_EQ(c.members.back(), c.members.front() + 7);
            EXPECT_EQ(c.bytes, tpBytes);
        }
        else
        {
            ASSERT_EQ(c.members.size(), 2U);
            EXPECT_EQ(c.members[1], c.members[0] + 8); // the same rail
        }
    }
    EXPECT_EQ(tpComms, 8U);
    const double u = 20000e-9;
    const double compute = (40000 + 45000 + 50000 + 55000 + 60000 + 65000) * 1e-9;
    const double expected = compute + 4 * (RingAllReduceTime(8, tpBytes, NvlinkRingParams()) + u) +
                            RingAllReduceTime(2, 2097152, RailRingParams()) + u;
    const double simulated = RunOnRailOnly(replay.program);
    std::printf("simulated %.9f s, formula %.9f s\n", simulated, expected);
    EXPECT_NEAR(simulated / expected, 1.0, 1e-3);
}

TEST(AicbWorkload, GroupsAndSizesAreSimAis)
{
    // tp 2, ep 2 on 16 GPUs: DP 8, EP blocks of 2 TP groups, DP_EP stride 2
    const std::string layers = "1\n"
                               "moe -1 1 ALLTOALL_EP 65536 1 ALLGATHER 4096 1 ALLREDUCE_DP_EP "
                               "131072 100\n";
    const std::string path = WorkloadFile("groups", AicbHeader(2, 16, 2) + layers);
    const AicbReplay replay = ReadAicbWorkload(path);
    EXPECT_EQ(replay.dp, 8U);
    EXPECT_EQ(replay.ep, 2U);
    std::map<std::string, std::vector<std::vector<uint32_t>>> byType;
    for (const ProgramComm& c : replay.program.comms)
    {
        byType[c.collective].push_back(c.members);
        if (c.collective == "allgather")
        {
            EXPECT_EQ(c.bytes, 2 * 4096U); // the file gives each rank's part
        }
        else
        {
            EXPECT_EQ(c.bytes, c.collective == "alltoall" ? 65536U : 131072U);
        }
    }
    ASSERT_EQ(byType["alltoall"].size(), 8U); // 16 / ep
    EXPECT_EQ(byType["alltoall"][0], (std::vector<uint32_t>{0, 2}));
    EXPECT_EQ(byType["alltoall"][1], (std::vector<uint32_t>{1, 3}));
    EXPECT_EQ(byType["alltoall"][2], (std::vector<uint32_t>{4, 6}));
    ASSERT_EQ(byType["allgather"].size(), 8U); // TP groups
    EXPECT_EQ(byType["allgather"][3], (std::vector<uint32_t>{6, 7}));
    ASSERT_EQ(byType["allreduce"].size(), 4U); // DP_EP groups of 4
    EXPECT_EQ(byType["allreduce"][0], (std::vector<uint32_t>{0, 4, 8, 12}));
    EXPECT_EQ(byType["allreduce"][1], (std::vector<uint32_t>{1, 5, 9, 13}));
    EXPECT_EQ(byType["allreduce"][2], (std::vector<uint32_t>{2, 6, 10, 14}));

    // an older file (no all_gpus) takes the GPU count given; BROADCAST and
    // a TP comm of a one-rank group are not replayed
    const std::string old = WorkloadFile(
        "old",
        "HYBRID_TRANSFORMER_FWD_IN_BCKWD\tmodel_parallel_NPU_group: 1 checkpoints: 0 "
        "checkpoint_initiates: 0\n2\n"
        "norm\t-1\t0\tBROADCAST\t16384\t1\tNONE\t0\t1\tNONE\t0\t100\n"
        "layer\t-1\t 7\tALLREDUCE\t4096   5\tNONE\t0\t 1\tREDUCESCATTER\t8192\t100\n\n");
    EXPECT_NE(ReadError(old).find(old + " line 1 all_gpus"), std::string::npos);
    AicbReplayOptions o;
    o.gpus = 4;
    const AicbReplay r = ReadAicbWorkload(old, o);
    EXPECT_EQ(r.broadcasts, 1U);
    ASSERT_EQ(r.program.comms.size(), 1U);
    EXPECT_EQ(r.program.comms[0].collective, "reducescatter");
    EXPECT_EQ(r.program.comms[0].bytes, 8192U);
    EXPECT_EQ(r.program.comms[0].members.size(), 4U);
    o.timeUnitSeconds = 1e-6;
    EXPECT_NEAR(ReadAicbWorkload(old, o).computeSeconds[0], (0 + 1 + 1 + 7 + 5 + 1) * 1e-6, 1e-15);
    o.gpus = 8;
    const std::string withGpus = WorkloadFile("gpus", AicbHeader(1, 4) + kDpLayers);
    EXPECT_NE(ReadError(withGpus, o).find("all_gpus of " + withGpus + " (4)"), std::string::npos);
}

TEST(AicbWorkload, MalformedFilesNameTheFileLineAndField)
{
    struct Case
    {
        std::string tag;
        std::string text;
        std::string where; //!< after the path
        std::string value;
    };

    const std::string dpLayer =
        "l\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t4096\t0\n"; // a valid layer line
    const std::vector<Case> cases{
        {"policy",
         "HYBRID_FOO model_parallel_NPU_group: 1 all_gpus: 4\n1\n" + dpLayer,
         " line 1 policy",
         "'HYBRID_FOO'"},
        {"simai-policy", "HYBRID_DLRM 3\n1\n" + dpLayer, " line 1 policy", "are not): "},
        {"key",
         "HYBRID_TRANSFORMER model_paralel: 1 all_gpus: 4\n1\n" + dpLayer,
         " line 1 key",
         "'model_paralel:'"},
        {"columns",
         AicbHeader(1, 4) + "2\n" + dpLayer + "l -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 4096\n",
         " line 4 fields",
         "'11 field(s)'"},
        {"size",
         AicbHeader(1, 4) + "1\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 4MB 0\n",
         " line 3 wg_comm_size",
         "'4MB'"},
        {"time",
         AicbHeader(1, 4) + "1\nl -1 -5 NONE 0 1 NONE 0 1 ALLREDUCE 4096 0\n",
         " line 3 fwd_compute_time",
         "'-5'"},
        {"type",
         AicbHeader(1, 4) + "1\nl -1 1 ALLREDUCE_XP 64 1 NONE 0 1 NONE 0 0\n",
         " line 3 fwd_comm_type",
         "'ALLREDUCE_XP'"},
        {"fewer", AicbHeader(1, 4) + "3\n" + dpLayer + dpLayer, " line 2 layer count", "'3'"},
        {"more", AicbHeader(1, 4) + "1\n" + dpLayer + "\n" + dpLayer, " line 5", "'l'"},
        {"count", AicbHeader(1, 4) + "two\n" + dpLayer, " line 2 layer count", "'two'"},
        {"gpus", AicbHeader(8, 12) + "1\n" + dpLayer, " line 1 all_gpus", "'12'"},
        {"ep", AicbHeader(2, 8, 3) + "1\n" + dpLayer, " line 1 ep", "'3'"},
        {"checkpoints",
         "HYBRID_TRANSFORMER_FWD_IN_BCKWD all_gpus: 4 checkpoints: 2 0 3\n1\n" + dpLayer,
         " line 1 checkpoints",
         "'3'"},
        {"checkpoint-list",
         "HYBRID_TRANSFORMER_FWD_IN_BCKWD all_gpus: 4 checkpoints: 3 0 1\n1\n" + dpLayer,
         " line 1 checkpoints",
         "'3'"},
        {"initiate-self",
         "HYBRID_TRANSFORMER_FWD_IN_BCKWD all_gpus: 4 checkpoints: 1 1 checkpoint_initiates: 1 "
         "1\n2\n" +
             dpLayer + dpLayer,
         " line 1 checkpoint_initiates",
         "'1'"},
        {"initiate-policy",
         "HYBRID_TRANSFORMER all_gpus: 4 checkpoints: 1 0 checkpoint_initiates: 1 1\n2\n" +
             dpLayer + dpLayer,
         " line 1 checkpoint_initiates",
         "'1'"},
    };
    for (const Case& c : cases)
    {
        const std::string path = WorkloadFile("bad-" + c.tag, c.text);
        const std::string e = ReadError(path);
        EXPECT_NE(e.find(path + c.where), std::string::npos) << c.tag << ": " << e;
        EXPECT_NE(e.find(c.value), std::string::npos) << c.tag << ": " << e;
        EXPECT_NE(e.find("allowed"), std::string::npos) << c.tag << ": " << e;
    }
    EXPECT_NE(ReadError(::testing::TempDir() + "aicb-none.txt").find("AICB workload file"),
              std::string::npos);
    AicbReplayOptions o;
    o.algorithm = "nope";
    EXPECT_NE(
        ReadError(WorkloadFile("alg", AicbHeader(1, 4) + "1\n" + dpLayer), o).find("algorithm"),
        std::string::npos);
}

/// A pp > 1 header as AICB writes it (pp_comm as the decimal AICB may write).
std::string
PipelineHeader(uint32_t tp, uint32_t pp, uint32_t ga, uint32_t gpus, const std::string& ppComm)
{
    return fmt::format("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: {} ep: 1 pp: {} "
                       "vpp: 4 ga: {} all_gpus: {} checkpoints: 0 checkpoint_initiates: 0 "
                       "pp_comm: {}\n",
                       tp,
                       pp,
                       ga,
                       gpus,
                       ppComm);
}

/// A stage's layer lines as AICB writes them: one line run once, then ga
/// copies of the micro-batch's two layers (no TP or DP comms: only the
/// pipeline transfers use the network). Forward 110 us, backward 220 us per
/// micro-batch; the line run once computes 2 us forward, 31 us backward.
std::string
PipelineLayers(uint32_t ga)
{
    std::string text = fmt::format("{}\n", 1 + 2 * ga);
    text += "grad_param_compute\t-1\t2000\tNONE\t0\t30000\tNONE\t0\t1000\tNONE\t0\t100\n";
    for (uint32_t i = 0; i < ga; ++i)
    {
        text += "attention\t-1\t50000\tNONE\t0\t90000\tNONE\t0\t10000\tNONE\t0\t100\n"
                "mlp\t-1\t60000\tNONE\t0\t100000\tNONE\t0\t20000\tNONE\t0\t100\n";
    }
    return text;
}

/// Times of a 1F1B pipeline computed step by step from its definition: each
/// stage runs its passes in OneFOneB order, a pass starting when the one
/// before it on the stage has ended and its input has arrived (a transfer
/// takes \p c after the pass that sends it). Also checks that no two
/// transfers into, or out of, one stage overlap in time.
struct PipelineOracle
{
    double finish{0};     //!< last backward pass's end, over the stages
    bool disjoint{true};  //!< no two transfers share a sender or receiver at once
    uint32_t messages{0}; //!< transfers
};

PipelineOracle
OneFOneBPipeline(uint32_t pp, uint32_t m, double f, double b, double c, double start)
{
    std::vector<std::vector<std::pair<bool, uint32_t>>> order(pp);
    for (uint32_t p = 0; p < pp; ++p)
    {
        // warm-up forwards, then one forward and one backward in turn
        const uint32_t warmup = std::min(pp - 1 - p, m);
        uint32_t nf = 0;
        uint32_t nb = 0;
        for (; nf < warmup; ++nf)
        {
            order[p].emplace_back(true, nf);
        }
        while (nf < m)
        {
            order[p].emplace_back(true, nf++);
            order[p].emplace_back(false, nb++);
        }
        while (nb < m)
        {
            order[p].emplace_back(false, nb++);
        }
    }
    // end[p][fwd?0:1][mb], < 0 until known
    std::vector<std::array<std::vector<double>, 2>> end(pp);
    for (auto& e : end)
    {
        e[0].assign(m, -1);
        e[1].assign(m, -1);
    }
    std::vector<size_t> next(pp, 0);
    std::vector<double> free(pp, start);
    // per stage: [from, to) of the transfers it sends and receives
    std::vector<std::vector<std::pair<double, double>>> out(pp), in(pp);
    PipelineOracle o;
    for (bool progress = true; progress;)
    {
        progress = false;
        for (uint32_t p = 0; p < pp; ++p)
        {
            while (next[p] < order[p].size())
            {
                const auto [fwd, mb] = order[p][next[p]];
                double ready = free[p];
                if (fwd && p > 0)
                {
                    if (end[p - 1][0][mb] < 0)
                    {
                        break;
                    }
                    ready = std::max(ready, end[p - 1][0][mb] + c);
                }
                if (!fwd && p + 1 < pp)
                {
                    if (end[p + 1][1][mb] < 0)
                    {
                        break;
                    }
                    ready = std::max(ready, end[p + 1][1][mb] + c);
                }
                free[p] = ready + (fwd ? f : b);
                end[p][fwd ? 0 : 1][mb] = free[p];
                const int to = fwd ? int(p) + 1 : int(p) - 1;
                if (to >= 0 && to < int(pp))
                {
                    out[p].emplace_back(free[p], free[p] + c);
                    in[to].emplace_back(free[p], free[p] + c);
                    ++o.messages;
                }
                ++next[p];
                progress = true;
            }
        }
    }
    for (uint32_t p = 0; p < pp; ++p)
    {
        EXPECT_EQ(next[p], order[p].size()) << "stage " << p << " deadlocked";
        o.finish = std::max(o.finish, free[p]);
        for (auto* list : {&out[p], &in[p]})
        {
            std::sort(list->begin(), list->end());
            for (size_t i = 1; i < list->size(); ++i)
            {
                o.disjoint = o.disjoint && (*list)[i].first >= (*list)[i - 1].second;
            }
        }
    }
    return o;
}

// pp > 1: every stage runs the micro-batch lines in 1F1B order, the forward
// passes sending pp_comm bytes of activations to the next stage and the
// backward passes gradients to the one before, over NVLink inside one
// DGX-H100 (every transfer on its own GPU pair, none overlapping another at
// a GPU, so nothing contends). The iteration takes the 1F1B schedule's time
// with a transfer of alpha + bytes / rate; for one micro-batch that is
// pp (F + B) + 2 (pp - 1) c plus the lines run once.
TEST(AicbWorkload, PipelineStagesSendActivationsAndGradientsInOneFOneBOrder)
{
    const uint64_t ppBytes = 4 << 20;
    const double f = 110e-6;
    const double b = 220e-6;
    const double once = 2e-6 + 31e-6;
    const AlphaBetaParams nv = NvlinkRingParams();
    const double c = nv.alpha + ppBytes * 8.0 / nv.linkRateBps;

    struct Case
    {
        uint32_t tp, pp, ga, gpus;
    };

    for (const Case& k : {Case{2, 2, 4, 8}, Case{2, 4, 1, 8}, Case{2, 4, 8, 8}})
    {
        SCOPED_TRACE(fmt::format("tp {} pp {} ga {} gpus {}", k.tp, k.pp, k.ga, k.gpus));
        const std::string path = WorkloadFile(
            fmt::format("pp{}-ga{}", k.pp, k.ga),
            PipelineHeader(k.tp, k.pp, k.ga, k.gpus, "4194304.0") + PipelineLayers(k.ga));
        const AicbReplay replay = ReadAicbWorkload(path);
        const uint32_t dp = k.gpus / (k.tp * k.pp);
        EXPECT_EQ(replay.dp, dp);
        EXPECT_EQ(replay.microBatches, k.ga);
        // with one micro-batch every line is the micro-batch's (nothing tells
        // the lines run once apart)
        const bool one = k.ga == 1;
        EXPECT_EQ(replay.microBatchLayers, one ? 3U : 2U);
        EXPECT_EQ(replay.ppCommBytes, ppBytes);
        // one activation and one gradient per micro-batch per stage boundary
        // per (d, t)
        const uint64_t messages = 2ULL * (k.pp - 1) * k.ga * dp * k.tp;
        EXPECT_EQ(replay.pipelineMessages, messages);
        EXPECT_EQ(replay.pipelineBytes, messages * ppBytes);
        uint64_t sends = 0;
        uint64_t bytes = 0;
        for (const ProgramComm& pc : replay.program.comms)
        {
            ASSERT_EQ(pc.collective, "sendrecv") << pc.label; // nothing else
            ASSERT_EQ(pc.members.size(), 2U);
            const uint32_t from = (pc.members[0] / k.tp) % k.pp;
            const uint32_t to = (pc.members[1] / k.tp) % k.pp;
            EXPECT_EQ(from + 1 == to || to + 1 == from, true) << pc.label;
            EXPECT_EQ(pc.members[0] % k.tp, pc.members[1] % k.tp) << pc.label;
            EXPECT_EQ(pc.members[0] / (k.tp * k.pp), pc.members[1] / (k.tp * k.pp)) << pc.label;
            ++sends;
            bytes += pc.bytes;
        }
        EXPECT_EQ(sends, messages);
        EXPECT_EQ(bytes, messages * ppBytes);
        for (uint32_t r = 0; r < k.gpus; ++r)
        {
            EXPECT_NEAR(replay.computeSeconds[r], once + k.ga * (f + b), 1e-12);
        }

        const PipelineOracle o = one ? OneFOneBPipeline(k.pp, 1, f + 2e-6, b + 31e-6, c, 0)
                                     : OneFOneBPipeline(k.pp, k.ga, f, b, c, 2e-6);
        EXPECT_TRUE(o.disjoint); // no transfer waits for another
        EXPECT_EQ(uint64_t{o.messages} * dp * k.tp, messages);
        const double expected = o.finish + (one ? 0 : 31e-6);
        if (one)
        {
            // the closed form
            EXPECT_NEAR(expected, k.pp * (f + b + once) + 2 * (k.pp - 1) * c, 1e-12);
        }
        const double simulated = RunOnRailOnly(replay.program);
        std::printf("pp %u ga %u: simulated %.9f s, 1F1B %.9f s (transfer %.3f us)\n",
                    k.pp,
                    k.ga,
                    simulated,
                    expected,
                    c * 1e6);
        EXPECT_NEAR(simulated / expected, 1.0, 1e-4);
    }

    // with pp = 1 the same lines run as one pass (no pipeline, ga unused)
    const AicbReplay flat = ReadAicbWorkload(
        WorkloadFile("pp1-ga4", PipelineHeader(2, 1, 4, 4, "0") + PipelineLayers(4)));
    EXPECT_EQ(flat.pipelineMessages, 0U);
    EXPECT_TRUE(flat.program.comms.empty());
    EXPECT_NEAR(RunOnRailOnly(flat.program), 2e-6 + 31e-6 + 4 * (f + b), 1e-9);

    // pipeline files that cannot be replayed name the field
    const std::string noBytes =
        WorkloadFile("pp-nobytes", PipelineHeader(2, 2, 1, 4, "0") + PipelineLayers(1));
    EXPECT_NE(ReadError(noBytes).find(noBytes + " line 1 pp_comm"), std::string::npos);
    const std::string half =
        WorkloadFile("pp-half", PipelineHeader(2, 2, 1, 4, "1.5") + PipelineLayers(1));
    EXPECT_NE(ReadError(half).find(half + " line 1 pp_comm"), std::string::npos);
    const std::string zeroGa =
        WorkloadFile("pp-ga0", PipelineHeader(2, 2, 0, 4, "4096") + PipelineLayers(1));
    EXPECT_NE(ReadError(zeroGa).find(zeroGa + " line 1 ga"), std::string::npos);
    // ga 4 but two copies of the layers
    const std::string copies =
        WorkloadFile("pp-copies", PipelineHeader(2, 2, 4, 4, "4096") + PipelineLayers(2));
    const std::string e = ReadError(copies);
    EXPECT_NE(e.find(copies + " line 1 ga"), std::string::npos) << e;
    EXPECT_NE(e.find("'4'"), std::string::npos) << e;
}

/// A pp = 1 file of \p layers lines, forward f_k = 10 (k + 1) us, input
/// gradient 30 us, weight gradient 20 us; with \p tp > 1 every forward
/// all-reduces 1 MiB over the TP group. \p checkpoints ends the header.
std::string
RecomputeFile(uint32_t tp, uint32_t layers, const std::string& checkpoints)
{
    std::string text = fmt::format("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: {} "
                                   "ep: 1 pp: 1 vpp: {} ga: 1 all_gpus: 8 {}\n{}\n",
                                   tp,
                                   layers,
                                   checkpoints,
                                   layers);
    for (uint32_t k = 0; k < layers; ++k)
    {
        text += fmt::format("layer{}\t-1\t{}\t{}\t{}\t30000\tNONE\t0\t20000\tNONE\t0\t0\n",
                            k,
                            10000 * (k + 1),
                            tp > 1 ? "ALLREDUCE" : "NONE",
                            tp > 1 ? 1 << 20 : 0);
    }
    return text;
}

// Activation recomputation as SimAI reads checkpoints: the backward of an
// initiating layer i first runs again the forward (compute, then its comm,
// waited for) of the layers from its checkpoint c up to i - 1. So the
// iteration takes what it takes without plus those forwards: pp = 1 without
// comms exactly their compute; at TP 8 their compute plus one TP all-reduce
// each (as long as each of the forward ones); pp = 2 the 1F1B schedule with
// every backward pass longer by the micro-batch's recomputed forwards.
TEST(AicbWorkload, RecomputationAddsTheCheckpointedForwards)
{
    // no comms: 5 layers, checkpoints 0 and 3, initiates 2 and 4: layers 0,
    // 1 (before layer 2's backward) and 3 (before layer 4's) again
    const std::string none = "checkpoints: 0 checkpoint_initiates: 0";
    const std::string two = "checkpoints: 2 0 3 checkpoint_initiates: 2 4 2";
    const double compute = (10 + 20 + 30 + 40 + 50) * 1e-6 + 5 * 50e-6;
    const double again = (10 + 20 + 40) * 1e-6;
    const AicbReplay plain = ReadAicbWorkload(WorkloadFile("rc-plain", RecomputeFile(1, 5, none)));
    const AicbReplay rc = ReadAicbWorkload(WorkloadFile("rc", RecomputeFile(1, 5, two)));
    EXPECT_EQ(plain.recomputedLayers, 0U);
    EXPECT_EQ(rc.recomputedLayers, 3U);
    for (uint32_t r = 0; r < 8; ++r)
    {
        EXPECT_NEAR(rc.recomputeSeconds[r], again, 1e-15);
        EXPECT_NEAR(rc.computeSeconds[r], compute + again, 1e-15);
        EXPECT_EQ(plain.recomputeSeconds[r], 0);
    }
    EXPECT_NEAR(RunOnRailOnly(plain.program), compute, 1e-9);
    EXPECT_NEAR(RunOnRailOnly(rc.program), compute + again, 1e-9);

    // TP 8 (one NVLink domain): every forward all-reduces 1 MiB, waited for
    const AicbReplay tpPlain =
        ReadAicbWorkload(WorkloadFile("rc-tp-plain", RecomputeFile(8, 5, none)));
    const AicbReplay tpRc = ReadAicbWorkload(WorkloadFile("rc-tp", RecomputeFile(8, 5, two)));
    EXPECT_EQ(tpRc.program.comms.size(), tpPlain.program.comms.size() + 3);
    const double withoutS = RunOnRailOnly(tpPlain.program);
    const double allReduce = (withoutS - compute) / 5; // five forward all-reduces
    EXPECT_NEAR(allReduce / RingAllReduceTime(8, 1 << 20, NvlinkRingParams()), 1.0, 0.03);
    EXPECT_NEAR(RunOnRailOnly(tpRc.program), withoutS + again + 3 * allReduce, 1e-8);

    // pp = 2, 4 micro-batches of three lines (attention, mlp, a head of no
    // compute): the head initiates and the attention line is the
    // checkpoint, so each backward pass first recomputes attention and mlp
    const uint32_t ga = 4;
    std::string layers = fmt::format("{}\n", 1 + 3 * ga);
    layers += "grad_param_compute\t-1\t2000\tNONE\t0\t30000\tNONE\t0\t1000\tNONE\t0\t100\n";
    std::string checkpoints = fmt::format("checkpoints: {}", ga);
    std::string initiates = fmt::format(" checkpoint_initiates: {}", ga);
    for (uint32_t i = 0; i < ga; ++i)
    {
        layers += "attention\t-1\t50000\tNONE\t0\t90000\tNONE\t0\t10000\tNONE\t0\t100\n"
                  "mlp\t-1\t60000\tNONE\t0\t100000\tNONE\t0\t20000\tNONE\t0\t100\n"
                  "head\t-1\t0\tNONE\t0\t0\tNONE\t0\t0\tNONE\t0\t100\n";
        checkpoints += fmt::format(" {}", 1 + 3 * i);
        initiates += fmt::format(" {}", 3 + 3 * i);
    }
    const std::string header = fmt::format("HYBRID_TRANSFORMER_FWD_IN_BCKWD "
                                           "model_parallel_NPU_group: 2 ep: 1 pp: 2 vpp: 8 ga: {} "
                                           "all_gpus: 8 {}{} pp_comm: 4194304\n",
                                           ga,
                                           checkpoints,
                                           initiates);
    const AicbReplay pp = ReadAicbWorkload(WorkloadFile("rc-pp", header + layers));
    EXPECT_EQ(pp.microBatchLayers, 3U);
    EXPECT_EQ(pp.recomputedLayers, 2 * ga);
    const double f = 110e-6;
    const double b = 220e-6;
    const AlphaBetaParams nv = NvlinkRingParams();
    const double c = nv.alpha + 4194304 * 8.0 / nv.linkRateBps;
    const PipelineOracle o = OneFOneBPipeline(2, ga, f, b + f, c, 2e-6);
    EXPECT_TRUE(o.disjoint);
    EXPECT_NEAR(RunOnRailOnly(pp.program) / (o.finish + 31e-6), 1.0, 1e-4);
    for (double s : pp.recomputeSeconds)
    {
        EXPECT_NEAR(s, ga * f, 1e-15);
    }

    // a checkpoint in another micro-batch's pass is refused
    const std::string across = WorkloadFile(
        "rc-across",
        fmt::format("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 2 "
                    "ga: {} all_gpus: 8 checkpoints: 1 1 checkpoint_initiates: 1 6 pp_comm: 4096\n",
                    ga) +
            layers);
    const std::string e = ReadError(across);
    EXPECT_NE(e.find(across + " line 1 checkpoint_initiates"), std::string::npos) << e;
    EXPECT_NE(e.find("'6'"), std::string::npos) << e;
}

/// Times of an interleaved pipeline computed pass by pass from its
/// definition: each stage runs \p order[stage] (forward?, micro-batch,
/// chunk), a pass starting when the one before it on the stage has ended
/// and its input has arrived: a forward of chunk j on stage p needs the same
/// micro-batch's forward of virtual stage j pp + p - 1 (stage p - 1, or the
/// last stage's chunk j - 1), a backward the backward of virtual stage
/// j pp + p + 1; a transfer takes \p c. A chunk's pass takes \p f or \p b.
double
InterleavedPipeline(const std::vector<std::vector<PipelineStep>>& order,
                    uint32_t v,
                    uint32_t m,
                    double f,
                    double b,
                    double c)
{
    const auto pp = static_cast<uint32_t>(order.size());
    // end[direction][virtual stage][micro-batch]
    std::array<std::vector<std::vector<double>>, 2> end;
    for (auto& e : end)
    {
        e.assign(pp * v, std::vector<double>(m, -1));
    }
    std::vector<size_t> next(pp, 0);
    std::vector<double> free(pp, 0);
    for (bool progress = true; progress;)
    {
        progress = false;
        for (uint32_t p = 0; p < pp; ++p)
        {
            while (next[p] < order[p].size())
            {
                const PipelineStep s = order[p][next[p]];
                const uint32_t vs = s.chunk * pp + p;
                double ready = free[p];
                const bool needs = s.forward ? vs > 0 : vs + 1 < pp * v;
                if (needs)
                {
                    const double in =
                        end[s.forward ? 0 : 1][s.forward ? vs - 1 : vs + 1][s.microBatch];
                    if (in < 0)
                    {
                        break;
                    }
                    ready = std::max(ready, in + c);
                }
                free[p] = ready + (s.forward ? f : b);
                end[s.forward ? 0 : 1][vs][s.microBatch] = free[p];
                ++next[p];
                progress = true;
            }
        }
    }
    double finish = 0;
    for (uint32_t p = 0; p < pp; ++p)
    {
        EXPECT_EQ(next[p], order[p].size()) << "stage " << p << " deadlocked";
        finish = std::max(finish, free[p]);
    }
    return finish;
}

// Interleaved 1F1B (Megatron-LM's virtual stages): the order is Megatron's;
// each stage's micro-batch lines are cut into v chunks; the iteration takes
// the interleaved schedule's time (pass by pass, with transfers of alpha +
// bytes / rate), and its bubble (the time beyond ga (F + B)) is the
// non-interleaved one's over v: (pp - 1) (F + B) / v, to within the
// transfers on the critical path.
TEST(AicbWorkload, InterleavedPipelineCutsTheBubbleByVpp)
{
    // Megatron's order for pp 2, 2 chunks, 4 micro-batches, by hand:
    // forwards (mb, chunk) (0,0) (1,0) (0,1) (1,1) (2,0) (3,0) (2,1) (3,1),
    // backwards (0,1) (1,1) (0,0) (1,0) (2,1) (3,1) (2,0) (3,0); stage 0
    // warms up with 4 forwards, stage 1 with 2
    const std::vector<std::array<uint32_t, 3>> stage0 = {{1, 0, 0},
                                                         {1, 1, 0},
                                                         {1, 0, 1},
                                                         {1, 1, 1},
                                                         {1, 2, 0},
                                                         {0, 0, 1},
                                                         {1, 3, 0},
                                                         {0, 1, 1},
                                                         {1, 2, 1},
                                                         {0, 0, 0},
                                                         {1, 3, 1},
                                                         {0, 1, 0},
                                                         {0, 2, 1},
                                                         {0, 3, 1},
                                                         {0, 2, 0},
                                                         {0, 3, 0}};
    const std::vector<std::array<uint32_t, 3>> stage1 = {{1, 0, 0},
                                                         {1, 1, 0},
                                                         {1, 0, 1},
                                                         {0, 0, 1},
                                                         {1, 1, 1},
                                                         {0, 1, 1},
                                                         {1, 2, 0},
                                                         {0, 0, 0},
                                                         {1, 3, 0},
                                                         {0, 1, 0},
                                                         {1, 2, 1},
                                                         {0, 2, 1},
                                                         {1, 3, 1},
                                                         {0, 3, 1},
                                                         {0, 2, 0},
                                                         {0, 3, 0}};
    for (uint32_t p = 0; p < 2; ++p)
    {
        const auto order = InterleavedOneFOneBSchedule(p, 2, 2, 4);
        const auto& want = p == 0 ? stage0 : stage1;
        ASSERT_EQ(order.size(), want.size());
        for (size_t i = 0; i < order.size(); ++i)
        {
            EXPECT_EQ(order[i].forward, want[i][0] == 1) << p << " step " << i;
            EXPECT_EQ(order[i].microBatch, want[i][1]) << p << " step " << i;
            EXPECT_EQ(order[i].chunk, want[i][2]) << p << " step " << i;
        }
    }

    // pp 4 x tp 2 on one DGX-H100, 8 micro-batches of four equal lines
    // (forward 25 us, backward 40 + 10 us): F = 100 us, B = 200 us a stage
    const uint32_t pp = 4;
    const uint32_t ga = 8;
    const uint64_t bytes = 65536;
    std::string text = fmt::format("{}\n", 4 * ga);
    for (uint32_t i = 0; i < 4 * ga; ++i)
    {
        text += fmt::format("l{}\t-1\t25000\tNONE\t0\t40000\tNONE\t0\t10000\tNONE\t0\t0\n", i % 4);
    }
    const std::string path =
        WorkloadFile("vpp", PipelineHeader(2, pp, ga, 8, std::to_string(bytes)) + text);
    const AlphaBetaParams nv = NvlinkRingParams();
    const double c = nv.alpha + bytes * 8.0 / nv.linkRateBps;
    const double work = ga * 300e-6;
    std::vector<double> bubble;
    for (uint32_t v : {1U, 2U, 4U})
    {
        SCOPED_TRACE(v);
        AicbReplayOptions o;
        o.virtualStages = v;
        const AicbReplay replay = ReadAicbWorkload(path, o);
        EXPECT_EQ(replay.virtualStages, v);
        EXPECT_EQ(replay.pipelineMessages, 2ULL * (pp * v - 1) * ga * 2);
        std::vector<std::vector<PipelineStep>> order;
        for (uint32_t p = 0; p < pp; ++p)
        {
            order.push_back(v > 1 ? InterleavedOneFOneBSchedule(p, pp, v, ga)
                                  : OneFOneBSchedule(p, pp, ga));
        }
        const double expected = InterleavedPipeline(order, v, ga, 100e-6 / v, 200e-6 / v, c);
        const double simulated = RunOnRailOnly(replay.program);
        EXPECT_NEAR(simulated / expected, 1.0, 1e-4);
        bubble.push_back(simulated - work);
        // (pp - 1) (F + B) / v, plus at most one transfer per pass on the
        // critical path: 2 v ga passes of a stage and 2 pp v virtual stages
        // (measured: 16, 14 and 30 transfers for v = 1, 2, 4)
        std::printf("vpp %u: bubble %.3f us, (pp - 1)(F + B) / v %.3f us, transfer %.3f us\n",
                    v,
                    bubble.back() * 1e6,
                    (pp - 1) * 300e-6 / v * 1e6,
                    c * 1e6);
        EXPECT_NEAR(bubble.back(), (pp - 1) * 300e-6 / v, 2.0 * v * (ga + pp) * c);
    }
    EXPECT_LT(bubble[1], 0.6 * bubble[0]);
    EXPECT_LT(bubble[2], 0.6 * bubble[1]);
    // 0: the header's vpp (4 here)
    AicbReplayOptions fromFile;
    fromFile.virtualStages = 0;
    EXPECT_EQ(ReadAicbWorkload(path, fromFile).virtualStages, 4U);

    // what cannot be interleaved names the field
    AicbReplayOptions three;
    three.virtualStages = 3; // 4 lines per micro-batch
    EXPECT_NE(ReadError(path, three).find("invalid vpp: got '3'"), std::string::npos);
    const std::string odd =
        WorkloadFile("vpp-ga", PipelineHeader(2, pp, 6, 8, "4096") + PipelineLayers(6));
    AicbReplayOptions twoChunks;
    twoChunks.virtualStages = 2;
    EXPECT_NE(ReadError(odd, twoChunks).find(odd + " line 1 ga"), std::string::npos);
    const std::string flat =
        WorkloadFile("vpp-flat", PipelineHeader(2, 1, 4, 4, "0") + PipelineLayers(4));
    EXPECT_NE(ReadError(flat, twoChunks).find("invalid vpp: got '2'"), std::string::npos);
    EXPECT_EQ(ReadAicbWorkload(flat, fromFile).virtualStages, 1U); // no pipeline
}

#ifdef GPU_FABRIC_BIN_DIR
TEST(AicbWorkload, ChakraReplayProgramReplaysAicbFilesAndExitsTwoOnBadOnes)
{
    const std::string path = WorkloadFile("program", AicbHeader(1, 8) + kDpLayers);
    const std::string json = ::testing::TempDir() + "aicb-replay.json";
    std::remove(json.c_str());
    const std::string bin = std::string(GPU_FABRIC_BIN_DIR) + "/chakra-replay";
    const std::string ok = fmt::format("{} --aicb={} --json={} > /dev/null", bin, path, json);
    ASSERT_EQ(std::system(ok.c_str()), 0) << ok;
    std::ifstream in(json);
    const nlohmann::json j = nlohmann::json::parse(in);
    EXPECT_EQ(j["ranks"], 8);
    EXPECT_EQ(j["layers_replayed"], 2);
    const double compute = 920000e-9;
    EXPECT_NEAR(j["compute_time_s"].get<double>(), compute, 1e-15);
    EXPECT_GT(j["comm_time_s"].get<double>(), 0);
    // the exposed tail is layer 0's all-reduce
    const double expected = compute + RingAllReduceTime(8, 4194304, NvlinkRingParams());
    EXPECT_NEAR(j["iteration_time_s"].get<double>() / expected, 1.0, 0.01);
    EXPECT_EQ(j["pipeline_messages"], 0);
    // pp 2: 2 x 4 micro-batches x 4 (d, t) pairs of 4 MiB
    const std::string pipelined =
        WorkloadFile("program-pp", PipelineHeader(2, 2, 4, 8, "4194304") + PipelineLayers(4));
    const std::string ppJson = ::testing::TempDir() + "aicb-replay-pp.json";
    const std::string pp =
        fmt::format("{} --aicb={} --json={} > /dev/null", bin, pipelined, ppJson);
    ASSERT_EQ(std::system(pp.c_str()), 0) << pp;
    std::ifstream ppIn(ppJson);
    const nlohmann::json jp = nlohmann::json::parse(ppIn);
    EXPECT_EQ(jp["micro_batches"], 4);
    EXPECT_EQ(jp["pipeline_messages"], 32);
    EXPECT_EQ(jp["pipeline_bytes"], 32 * 4194304ULL);
    EXPECT_EQ(jp["virtual_stages"], 1);
    EXPECT_EQ(jp["recomputed_layers"], 0);
    // --vpp=2: two chunks of one line each, 2 (2 x 2 - 1) x 4 x 4 transfers
    const std::string vppJson = ::testing::TempDir() + "aicb-replay-vpp.json";
    const std::string vpp =
        fmt::format("{} --aicb={} --vpp=2 --json={} > /dev/null", bin, pipelined, vppJson);
    ASSERT_EQ(std::system(vpp.c_str()), 0) << vpp;
    std::ifstream vppIn(vppJson);
    const nlohmann::json jv = nlohmann::json::parse(vppIn);
    EXPECT_EQ(jv["virtual_stages"], 2);
    EXPECT_EQ(jv["pipeline_messages"], 2 * 3 * 4 * 4);
    // \return the exit status and what it wrote to stderr
    const std::string err = ::testing::TempDir() + "aicb-replay.err";
    auto run = [&](const std::string& args) {
        const std::string cmd = fmt::format("{} {} > /dev/null 2> {}", bin, args, err);
        const int rc = std::system(cmd.c_str());
        std::ifstream e(err);
        const std::string text((std::istreambuf_iterator<char>(e)),
                               std::istreambuf_iterator<char>());
        return std::make_pair(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, text);
    };
    const std::string bad = WorkloadFile("program-bad", AicbHeader(8, 12) + kDpLayers);
    auto [code, text] = run("--aicb=" + bad);
    EXPECT_EQ(code, 2);
    EXPECT_NE(text.find(bad + " line 1 all_gpus"), std::string::npos) << text;
    // one workload per run; AICB-only flags need --aicb
    std::tie(code, text) = run(fmt::format("--aicb={} --trace={}", path, path));
    EXPECT_EQ(code, 2);
    EXPECT_NE(text.find("--aicb"), std::string::npos) << text;
    std::tie(code, text) = run(fmt::format("--trace={} --gpus=8", path));
    EXPECT_EQ(code, 2);
    EXPECT_NE(text.find("--gpus"), std::string::npos) << text;
    std::tie(code, text) = run(fmt::format("--aicb={} --time-unit=s", path));
    EXPECT_EQ(code, 2);
    EXPECT_NE(text.find("--time-unit"), std::string::npos) << text;
    std::tie(code, text) = run(fmt::format("--aicb={} --vpp=3", pipelined));
    EXPECT_EQ(code, 2);
    EXPECT_NE(text.find("invalid --vpp: got '3'"), std::string::npos) << text;
    std::tie(code, text) = run(fmt::format("--trace={} --vpp=2", path));
    EXPECT_EQ(code, 2);
    EXPECT_NE(text.find("--vpp"), std::string::npos) << text;
}
#endif

} // namespace
