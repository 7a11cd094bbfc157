/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// A training iteration as per-rank programs: structure, formulas, topologies.
#include "ns3/analytical-model.h"
#include "ns3/collective-algorithms.h"
#include "ns3/collective-metrics.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-helper.h"
#include "ns3/flow-helper.h"
#include "ns3/iteration-program.h"
#include "ns3/simulator.h"
#include "ns3/topology-builders.h"

#include <cstdio>
#include <gtest/gtest.h>
#include <map>
#include <tuple>

using namespace ns3;

namespace
{

constexpr double kPayloadShare = 4096.0 / 4122.0; // goodput of a full packet

class IterationProgramTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
    }
};

/// A small GPT-like model: l layers, d_model d, 16 heads, sequences of seq tokens.
LlmModel
SmallGpt(uint32_t layers, uint32_t d, uint32_t seq, uint64_t sequences)
{
    return LlmModel::Custom(layers, d, 16, seq, 8192, sequences * seq);
}

/// Bytes each comm moves (sum over its schedule's pairs), per dimension.
std::array<uint64_t, kParallelDims>
ProgramBytes(const IterationProgram& ip)
{
    std::array<uint64_t, kParallelDims> bytes{};
    std::map<std::tuple<std::string, std::string, size_t, uint64_t, uint32_t>, uint64_t> cache;
    for (uint32_t c = 0; c < ip.program.comms.size(); ++c)
    {
        const ProgramComm& comm = ip.program.comms[c];
        uint64_t total = 0;
        if (comm.collective == "sendrecv")
        {
            total = comm.bytes;
        }
        else
        {
            auto key = std::make_tuple(comm.collective,
                                       comm.algorithm,
                                       comm.members.size(),
                                       comm.bytes,
                                       comm.domainSize);
            auto it = cache.find(key);
            if (it == cache.end())
            {
                ScheduleRequest req;
                req.collective = comm.collective;
                req.algorithm = comm.algorithm;
                req.ranks = comm.members.size();
                req.bytes = comm.bytes;
                req.domainSize = comm.domainSize;
                uint64_t sum = 0;
                for (const PairBytes& p : MakeSchedule(req).TrafficMatrix())
                {
                    sum += p.bytes;
                }
                it = cache.emplace(key, sum).first;
            }
            total = it->second;
        }
        bytes[static_cast<size_t>(ip.info[c].dim)] += total;
    }
    return bytes;
}

TEST(IterationProgramStructure, OneFOneBTransfersCountsAndBytesMatchTheIteration)
{
    // 64 GPUs in domains of 8: TP 4, PP 4, DP 4 (2 per domain), 6 micro-batches
    const LlmModel model = SmallGpt(8, 512, 256, 4 * 6);
    Parallelism::Shape shape;
    shape.gpus = 64;
    shape.gpusPerDomain = 8;
    shape.tp = 4;
    shape.pp = 4;
    shape.dp = 4;
    shape.microBatches = 6;
    shape.globalBatchSequences = 4 * 6;
    const Parallelism par(shape);
    const TrainingIteration it(model, par);
    const IterationProgram ip = BuildIterationProgram(it);
    ip.program.Validate();
    ASSERT_EQ(ip.info.size(), ip.program.comms.size());

    // every comm has exactly one task on each member rank
    std::vector<std::vector<uint32_t>> users(ip.program.comms.size());
    for (uint32_t r = 0; r < ip.program.ranks; ++r)
    {
        for (const ProgramTask& t : ip.program.tasks[r])
        {
            if (t.kind == ProgramTask::Kind::Comm)
            {
                users[t.comm].push_back(r);
            }
        }
    }
    for (uint32_t c = 0; c < users.size(); ++c)
    {
        auto members = ip.program.comms[c].members;
        std::sort(members.begin(), members.end());
        std::sort(users[c].begin(), users[c].end());
        EXPECT_EQ(users[c], members) << ip.program.comms[c].label;
    }

    // 1F1B order per rank, each pass after the previous one, compute adds up
    for (uint32_t r = 0; r < ip.program.ranks; ++r)
    {
        const uint32_t stage = par.Coord(r).pp;
        const auto order = it.OneFOneBOrder(stage);
        ASSERT_EQ(ip.steps[r].size(), order.size());
        for (size_t i = 0; i < order.size(); ++i)
        {
            EXPECT_EQ(ip.steps[r][i].step.forward, order[i].forward);
            EXPECT_EQ(ip.steps[r][i].step.microBatch, order[i].microBatch);
            if (i > 0)
            {
                EXPECT_GT(ip.steps[r][i].firstTask, ip.steps[r][i - 1].lastTask);
            }
        }
        double compute = 0;
        for (const ProgramTask& t : ip.program.tasks[r])
        {
            if (t.kind == ProgramTask::Kind::Compute)
            {
                compute += t.seconds;
            }
        }
        EXPECT_NEAR(compute, it.ComputeSecondsPerIteration(r), 1e-9 * compute);
    }

    // 2 m (stages - 1) PP transfers per pipeline; counts per call as the iteration says
    std::map<uint32_t, uint64_t> perCall;
    uint64_t pp = 0;
    for (const auto& info : ip.info)
    {
        ++perCall[info.call];
        pp += info.dim == ParallelDim::PP;
    }
    const uint64_t pipelines = par.Tp() * par.Dp();
    EXPECT_EQ(pp, pipelines * 2 * par.MicroBatches() * (par.Pp() - 1));
    const auto& calls = it.Collectives();
    for (uint32_t c = 0; c < calls.size(); ++c)
    {
        const uint64_t expected = calls[c].type == CollectiveType::SendRecv
                                      ? calls[c].count * calls[c].pairs.size()
                                      : calls[c].count;
        EXPECT_EQ(perCall[c], expected) << calls[c].what;
    }

    // bytes per dimension equal the traffic matrix's
    const auto bytes = ProgramBytes(ip);
    const IterationTrafficMatrix tm = IterationTrafficMatrix::FromIteration(it);
    for (size_t d = 0; d < kParallelDims; ++d)
    {
        EXPECT_EQ(bytes[d], tm.TotalBytes(static_cast<ParallelDim>(d)))
            << ParallelDimName(static_cast<ParallelDim>(d));
    }

    // deterministic
    const IterationProgram again = BuildIterationProgram(it);
    ASSERT_EQ(again.program.comms.size(), ip.program.comms.size());
    for (uint32_t c = 0; c < ip.program.comms.size(); ++c)
    {
        EXPECT_EQ(again.program.comms[c].label, ip.program.comms[c].label);
        EXPECT_EQ(again.program.comms[c].members, ip.program.comms[c].members);
    }
}

TEST(IterationProgramStructure, BlockPiecesFollowTheirFlopsAndTheBackwardRunsInReverse)
{
    // GPT blocks (attention 4 d^2, MLP 8 d^2) with TP 2: per block and pass
    // an attention piece and an MLP piece in the ratio 1 : 2, each followed
    // by its TP AllReduce; the backward pass runs the MLP first
    const LlmModel model = SmallGpt(2, 512, 256, 1);
    Parallelism::Shape shape;
    shape.gpus = 2;
    shape.gpusPerDomain = 2;
    shape.tp = 2;
    shape.dp = 1;
    shape.globalBatchSequences = 1;
    const Parallelism par(shape);
    const TrainingIteration it(model, par);
    const IterationProgram ip = BuildIterationProgram(it);
    std::vector<double> compute;
    for (const ProgramTask& t : ip.program.tasks[0])
    {
        if (t.kind == ProgramTask::Kind::Compute)
        {
            compute.push_back(t.seconds);
        }
    }
    // forward: block 0 (attn, mlp), block 1 (attn, mlp), output layer;
    // backward: output layer, block 1 (mlp, attn), block 0 (mlp, attn)
    ASSERT_EQ(compute.size(), 10u);
    const double block = it.ForwardSeconds(0) - compute[4];
    EXPECT_NEAR(compute[0], block / 2 / 3, 1e-12 * block);
    EXPECT_NEAR(compute[1], block / 2 * 2 / 3, 1e-12 * block);
    EXPECT_NEAR(compute[6], 2 * compute[1], 1e-12 * block); // backward: MLP first, 2x
    EXPECT_NEAR(compute[7], 2 * compute[0], 1e-12 * block);

    // Mixtral-like MoE block (EP 2, TP 1): forward attention, dispatch,
    // experts, combine; backward combine's and dispatch's AllToAlls around
    // the experts first, then the attention
    const LlmModel moe = LlmModel::Get("mixtral-8x7b");
    Parallelism::Shape moeShape;
    moeShape.gpus = 2;
    moeShape.gpusPerDomain = 2;
    moeShape.dp = 2;
    moeShape.ep = 2;
    moeShape.microBatches = 64;
    moeShape.globalBatchSequences = moe.GlobalBatchSequences();
    const Parallelism mpar(moeShape);
    const TrainingIteration mit(moe, mpar);
    const IterationProgram mp = BuildIterationProgram(mit);
    std::string order;
    for (const ProgramTask& t : mp.program.tasks[0])
    {
        if (t.kind == ProgramTask::Kind::Compute)
        {
            order += 'c';
        }
        else if (mp.info[t.comm].dim == ParallelDim::EP)
        {
            order += 'e';
        }
    }
    const std::string perBlockForward = "cece";  // attention, A2A, experts, A2A
    const std::string perBlockBackward = "ecec"; // A2A, experts, A2A, attention
    // the first pass: its blocks, the output layer's forward, then the
    // first backward pass: the output layer and the last block in reverse
    const size_t heads = order.find("cc");
    ASSERT_NE(heads, std::string::npos) << order;
    EXPECT_EQ(order.substr(0, 4), perBlockForward) << order;
    EXPECT_EQ(order.substr(heads - 4, 4), perBlockForward) << order;
    EXPECT_EQ(order.substr(heads + 2, 4), perBlockBackward) << order;
    // the attention piece of an MoE block is its share of the active FLOPs
    double first = -1;
    double second = -1;
    for (const ProgramTask& t : mp.program.tasks[0])
    {
        if (t.kind == ProgramTask::Kind::Compute)
        {
            (first < 0 ? first : second) = t.seconds;
            if (second >= 0)
            {
                break;
            }
        }
    }
    const double share = moe.AttentionForwardFlopsPerToken() / moe.BlockForwardFlopsPerToken(0);
    EXPECT_NEAR(first / (first + second), share, 1e-12);
    EXPECT_LT(share, 0.15); // about 10.6 % for Mixtral, not half
}

TEST(IterationProgramStructure, AggregatedBucketedAndMoeProgramsKeepTheBytes)
{
    // MoE: 8 experts top-2 on every second block, EP 2 inside the domain
    LlmModel moe = LlmModel::Custom(4, 512, 16, 256, 8192, 8 * 2 * 256, 4.0, 8, 2);
    moe.moeLayerInterval = 2;
    Parallelism::Shape shape;
    shape.gpus = 32;
    shape.gpusPerDomain = 8;
    shape.tp = 2;
    shape.pp = 2;
    shape.dp = 8;
    shape.ep = 2;
    shape.microBatches = 2;
    shape.globalBatchSequences = 8 * 2;
    const Parallelism par(shape);
    const TrainingIteration it(moe, par);
    const IterationTrafficMatrix tm = IterationTrafficMatrix::FromIteration(it);
    for (const std::string granularity : {"layer", "micro-batch"})
    {
        for (bool overlap : {false, true})
        {
            if (overlap && granularity != "layer")
            {
                IterationProgramOptions bad;
                bad.tpGranularity = granularity;
                bad.overlapDp = true;
                EXPECT_THROW(BuildIterationProgram(it, bad), FabricConfigError);
                continue;
            }
            IterationProgramOptions opt;
            opt.tpGranularity = granularity;
            opt.overlapDp = overlap;
            opt.dpBuckets = 1; // the stage has 2 blocks; 1 bucket holds both
            const IterationProgram ip = BuildIterationProgram(it, opt);
            const auto bytes = ProgramBytes(ip);
            for (size_t d = 0; d < kParallelDims; ++d)
            {
                const double want = tm.TotalBytes(static_cast<ParallelDim>(d));
                EXPECT_NEAR(bytes[d], want, 1e-6 * want + 64)
                    << granularity << " overlap " << overlap << " "
                    << ParallelDimName(static_cast<ParallelDim>(d));
            }
            uint64_t ep = 0;
            for (const auto& info : ip.info)
            {
                ep += info.dim == ParallelDim::EP;
            }
            EXPECT_GT(ep, 0U);
        }
    }
    IterationProgramOptions bad;
    bad.tpGranularity = "block";
    EXPECT_THROW(BuildIterationProgram(it, bad), FabricConfigError);
}

/// Alpha of one message: two cables and one store-and-forward packet.
double
Alpha(double cableDelayS, double hopRateBps)
{
    return 2 * cableDelayS + 4122 * 8.0 / hopRateBps;
}

TEST_F(IterationProgramTest, UncontendedIterationIsComputePlusCollectiveFormulas)
{
    // TP 8 inside each of 2 DGX-H100 domains, DP 2 across them on the rails,
    // no PP: every rank runs compute and TP AllReduces back to back, then
    // the DP AllReduce over its rail.  Nothing shares a link.
    const HbDomainPreset h100 = HbDomainPreset::Get("dgx-h100");
    const uint32_t m = 2;
    const LlmModel model = SmallGpt(2, 2048, 1024, 2 * m);
    Parallelism::Shape shape;
    shape.gpus = 16;
    shape.gpusPerDomain = 8;
    shape.tp = 8;
    shape.dp = 2;
    shape.microBatches = m;
    shape.globalBatchSequences = 2 * m;
    const Parallelism par(shape);
    const TrainingIteration it(model, par);
    ClusterParams cp;
    cp.gpus = 16;
    cp.platform = h100;
    Ptr<Fabric> fabric = FabricHelper().Install(BuildRailOnly(cp));
    const IterationProgram ip = BuildIterationProgram(it);
    Ptr<ProgramRunner> runner = RunProgram(ip.program, fabric->GetTransport());
    ASSERT_TRUE(runner->IsComplete());
    const double simulated = runner->GetFinishTime().GetSeconds();

    const double nv = h100.nvlinkRate.GetBitRate();
    const double nic = h100.nicRate.GetBitRate();
    AlphaBetaParams tp;
    tp.alpha = Alpha(h100.nvlinkLatency.GetSeconds(), nv / h100.nvswitchPlanes);
    tp.linkRateBps = nv * kPayloadShare;
    AlphaBetaParams dp;
    dp.alpha = Alpha(cp.linkDelayNs * 1e-9, nic);
    dp.nvlinkRateBps = nv * kPayloadShare;
    dp.nicRateBps = nic * kPayloadShare;
    dp.domainSize = 1;
    const uint64_t tpCount = 2ULL * m * model.layers * (model.tpRoundsPerBlock / 4);
    const double compute = it.ComputeSecondsPerIteration(0);
    const double tpTime =
        tpCount * PredictedTime("allreduce", "ring", 8, it.ActivationBytesPerMicroBatch(), tp);
    const double dpTime =
        PredictedTime("allreduce", "hierarchical", 2, it.DenseGradientBytes(0), dp);
    const double expected = compute + tpTime + dpTime;
    std::printf("simulated %.6f s, formulas %.6f s (compute %.6f, TP %llu x %.3g = %.6f, "
                "DP %.6f)\n",
                simulated,
                expected,
                compute,
                static_cast<unsigned long long>(tpCount),
                tpTime / tpCount,
                tpTime,
                dpTime);
    EXPECT_NEAR(simulated / expected, 1.0, 0.03);
    fabric->Dispose();
}

/// Simulated iteration time of \p it on \p topo.
double
SimulateOn(const FabricTopology& topo,
           const TrainingIteration& it,
           const IterationProgramOptions& opt = {})
{
    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    const IterationProgram ip = BuildIterationProgram(it, opt);
    Ptr<ProgramRunner> runner = RunProgram(ip.program, fabric->GetTransport());
    EXPECT_TRUE(runner->IsComplete());
    EXPECT_EQ(fabric->GetTotalDrops(), 0U);
    const double t = runner->GetFinishTime().GetSeconds();
    fabric->Dispose();
    Simulator::Destroy();
    return t;
}

TEST_F(IterationProgramTest, RailOnlyMatchesRailOptimizedFatTreeForADenseModel)
{
    // 64 DGX-H100 GPUs, TP 8 in a domain, PP 2 and DP 4 across domains on
    // the rails (the paper's placement).  Radix 16: each rail of 8 GPUs sits
    // on one leaf of the rail-optimized fat-tree (its rail switch, as in a
    // SuperPOD) and on one switch of the rail-only network; the fat-tree's
    // spine carries nothing.  (With rails spanning several leaves, ECMP
    // collisions on the fat-tree's uplinks can make it slower than rail-only.)
    const uint32_t m = 4;
    const LlmModel model = SmallGpt(4, 1024, 1024, 4 * m);
    Parallelism::Shape shape;
    shape.gpus = 64;
    shape.gpusPerDomain = 8;
    shape.tp = 8;
    shape.pp = 2;
    shape.dp = 4;
    shape.microBatches = m;
    shape.globalBatchSequences = 4 * m;
    const Parallelism par(shape);
    const TrainingIteration it(model, par);
    ClusterParams cp;
    cp.gpus = 64;
    cp.platform = HbDomainPreset::Get("dgx-h100");
    cp.radix = 16;
    const double railOnly = SimulateOn(BuildRailOnly(cp), it);
    const double railOpt = SimulateOn(BuildRailOptimized(cp), it);
    std::printf("rail-only %.6f s, rail-optimized fat-tree %.6f s (compute %.6f s)\n",
                railOnly,
                railOpt,
                it.ComputeSecondsPerIteration(0));
    EXPECT_NEAR(railOnly / railOpt, 1.0, 0.01);
    EXPECT_GT(railOnly, it.ComputeSecondsPerIteration(0));
}

TEST_F(IterationProgramTest, Gpt1tOnTheFlowBackendMatchesEq1AndRailOnlyMatchesTheFatTree)
{
    // The rail-only paper's setting at 1,024 GH200 GPUs (K = 256): GPT-1T,
    // TP 4 inside a domain, DP 256 (64 replicas per domain, 4 domains) with
    // the two-level hierarchical AllReduce, no PP, one micro-batch. Compute
    // and communication do not overlap, so the iteration is Eq. 1 (its TP
    // term in bytes) plus latencies; and its traffic stays on NVLink and the
    // rails, so rail-only takes the fat-tree's time.
    const LlmModel model = LlmModel::Get("gpt-1t");
    const HbDomainPreset gh = HbDomainPreset::Get("gh200-256");
    const uint32_t n = 1024;
    const uint32_t tp = 4;
    Parallelism::Shape shape;
    shape.gpus = n;
    shape.gpusPerDomain = 256;
    shape.tp = tp;
    shape.dp = n / tp;
    shape.globalBatchSequences = model.globalBatchTokens / model.seqLength;
    const Parallelism par(shape);
    WorkloadOptions wo;
    wo.gpuFlops = gh.gpuFlops;
    const TrainingIteration it(model, par, wo);
    IterationProgramOptions po;
    po.tpGranularity = "micro-batch";
    const IterationProgram ip = BuildIterationProgram(it, po);
    AnalyticalParams ap = AnalyticalParams::From(model, gh, n);
    ap.activationBytes = model.bytesPerActivation;
    const double eq1 = AnalyticalModel(ap).IterationTime(tp);
    ClusterParams cp;
    cp.gpus = n;
    cp.platform = gh;
    cp.radix = 64;
    std::vector<double> times;
    for (const FabricTopology& topo : {BuildRailOnly(cp), BuildRailOptimized(cp)})
    {
        Ptr<FlowTransport> flow = FlowHelper().Install(topo);
        Ptr<ProgramRunner> runner = RunProgram(ip.program, flow);
        ASSERT_TRUE(runner->IsComplete());
        const Transport::Totals tot = flow->GetTotals();
        EXPECT_EQ(tot.bytesSent, tot.bytesDelivered);
        times.push_back(runner->GetFinishTime().GetSeconds());
        flow->Dispose();
        Simulator::Destroy();
    }
    std::printf("GPT-1T on 1024 GH200, TP %u: rail-only %.6f s, rail-optimized %.6f s, Eq. 1 "
                "%.6f s\n",
                tp,
                times[0],
                times[1],
                eq1);
    EXPECT_GT(times[0], eq1); // Eq. 1 has no latency terms
    EXPECT_NEAR(times[0] / eq1, 1.0, 0.005);
    EXPECT_NEAR(times[0] / times[1], 1.0, 0.001);
}

TEST_F(IterationProgramTest, OverlappedDpIsNoSlowerAndMoeRunsToCompletion)
{
    const uint32_t m = 2;
    const LlmModel model = SmallGpt(4, 1024, 512, 2 * m);
    Parallelism::Shape shape;
    shape.gpus = 16;
    shape.gpusPerDomain = 8;
    shape.tp = 8;
    shape.dp = 2;
    shape.microBatches = m;
    shape.globalBatchSequences = 2 * m;
    const Parallelism par(shape);
    const TrainingIteration it(model, par);
    ClusterParams cp;
    cp.gpus = 16;
    const double plain = SimulateOn(BuildRailOnly(cp), it);
    IterationProgramOptions opt;
    opt.overlapDp = true;
    const double overlapped = SimulateOn(BuildRailOnly(cp), it, opt);
    std::printf("DP after backward %.6f s, overlapped %.6f s\n", plain, overlapped);
    EXPECT_LT(overlapped, plain);

    // MoE with TP 4 and EP 4 spread over 2 domains (PXN all-to-all), aggregated passes
    const LlmModel moe = LlmModel::Custom(2, 512, 16, 256, 8192, 4 * 2 * 256, 4.0, 8, 2);
    Parallelism::Shape moeShape;
    moeShape.gpus = 16;
    moeShape.gpusPerDomain = 8;
    moeShape.tp = 4;
    moeShape.dp = 4;
    moeShape.ep = 4;
    moeShape.microBatches = 2;
    moeShape.globalBatchSequences = 4 * 2;
    const Parallelism mpar(moeShape);
    const TrainingIteration mit(moe, mpar);
    IterationProgramOptions agg;
    agg.tpGranularity = "micro-batch";
    const double t = SimulateOn(BuildRailOnly(cp), mit, agg);
    EXPECT_GT(t, mit.ComputeSecondsPerIteration(0));
}

} // namespace
