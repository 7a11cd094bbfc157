/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * What the programs take from the workload layer about Eq. 1 (the rail-only
 * paper's analytical model): a pipeline stage's variables and iteration
 * time, the TP size a mode chooses, the best feasible TP size of a job, and
 * the 1F1B bubble, each against its closed form.
 */
#include "ns3/analytical-model.h"
#include "ns3/fabric-error.h"
#include "ns3/hb-domain-preset.h"
#include "ns3/llm-model.h"
#include "ns3/training-iteration.h"

#include <cmath>
#include <gtest/gtest.h>
#include <string>

using namespace ns3;

namespace
{

/// Round figures whose Eq. 1 terms can be worked by hand.
AnalyticalParams
HandParams()
{
    AnalyticalParams p;
    p.N = 32;
    p.K = 8;
    p.l = 4;
    p.d_model = 100;
    p.S_T = 1e6;
    p.b = 1000;
    p.M_cc = 8;
    p.M_flop = 3.2e13;
    p.C = 1e12;
    p.B_F = 1e9;
    p.B_S = 1e8;
    return p;
}

TEST(AnalyticalModelPipeline, AStageHasItsShareOfGpusBlocksAndFlops)
{
    const AnalyticalParams job = HandParams();
    const AnalyticalParams stage = job.PipelineStage(2);
    EXPECT_EQ(stage.N, 16);
    EXPECT_EQ(stage.l, 2);
    EXPECT_EQ(stage.M_flop, 1.6e13);
    // the rest is the job's
    EXPECT_EQ(stage.K, job.K);
    EXPECT_EQ(stage.S_T, job.S_T);
    EXPECT_EQ(stage.b, job.b);
    EXPECT_EQ(stage.B_F, job.B_F);
    EXPECT_EQ(stage.B_S, job.B_S);
    EXPECT_EQ(job.PipelineStage(1).N, job.N);
    EXPECT_THROW(job.PipelineStage(0), FabricConfigError);
}

TEST(AnalyticalModelPipeline, StageIterationTimeIsEq1OfTheStage)
{
    // stage of PP 2: N = 16, l = 2, M_flop = 1.6e13; TP 2, so N_Df = 2, N_Ds = 4
    //   compute   = 1.6e13 / (16 x 1e12)              = 1
    //   DP rail   = 2 x 2 x 1e6 x (2 - 1) / (16 x 1e8) = 0.0025
    //   DP domain = 2 x 2 x 1e6 x (4 - 1) / (8 x 1e9)  = 0.0015
    //   TP        = 2 x 8 x 1000 x 100 x (2 - 1) / (16 x 1e9) = 0.0001
    const double t = PipelineStageIterationTime(HandParams(), 2, 2);
    EXPECT_NEAR(t, 1.0041, 1e-12);
    // without a pipeline it is Eq. 1 of the job: compute 1, DP rail 4 x 2e6 x 3 / 3.2e9
    // = 0.0075, DP domain 4 x 2e6 x 3 / 8e9 = 0.003, TP 4 x 8e5 / 3.2e10 = 0.0001
    EXPECT_NEAR(PipelineStageIterationTime(HandParams(), 1, 2), 1.0106, 1e-12);
    EXPECT_DOUBLE_EQ(PipelineStageIterationTime(HandParams(), 1, 2),
                     AnalyticalModel(HandParams()).IterationTime(2));
}

TEST(AnalyticalModelPipeline, AStageSmallerThanADomainHasNoEq1)
{
    // 32 GPUs in 8 stages: 4 per stage, K = 8
    EXPECT_TRUE(std::isnan(PipelineStageIterationTime(HandParams(), 8, 2)));
    // 4 stages of 8: one domain each, Eq. 1 applies (no rail term)
    EXPECT_FALSE(std::isnan(PipelineStageIterationTime(HandParams(), 4, 2)));
    EXPECT_THROW(PipelineStageIterationTime(HandParams(), 2, 9), FabricConfigError); // TP > K
}

/// N_M* = sqrt(N S_T) / (2 sqrt(b M_cc d_model)) = sqrt(64 x 5625) / (2 x 100) = 3.
AnalyticalParams
TpParams(double k)
{
    AnalyticalParams p = HandParams();
    p.N = 64;
    p.K = k;
    p.S_T = 5625;
    p.b = 125; // b M_cc d_model = 125 x 8 x 10 = 1e4
    p.d_model = 10;
    return p;
}

TEST(ChooseTp, EachModeAsItsClosedForm)
{
    const AnalyticalModel k16(TpParams(16));
    EXPECT_DOUBLE_EQ(ChooseTp(k16, TpMode::Paper), 3);
    // the minimiser of Eq. 1 is 2 sqrt(2) N_M*
    EXPECT_DOUBLE_EQ(ChooseTp(k16, TpMode::Eq1), 6 * std::sqrt(2.0));
    EXPECT_DOUBLE_EQ(ChooseTp(k16, TpMode::Domain), 16);
    // clamped to [1, K]
    const AnalyticalModel k8(TpParams(8));
    EXPECT_DOUBLE_EQ(ChooseTp(k8, TpMode::Eq1), 8);
    const AnalyticalModel k2(TpParams(2));
    EXPECT_DOUBLE_EQ(ChooseTp(k2, TpMode::Paper), 2);
    EXPECT_DOUBLE_EQ(ChooseTp(k2, TpMode::Domain), 2);
}

TEST(ChooseTp, ModesByName)
{
    EXPECT_EQ(TpModeFromName("--tp-mode", "paper"), TpMode::Paper);
    EXPECT_EQ(TpModeFromName("--tp-mode", "eq1"), TpMode::Eq1);
    EXPECT_EQ(TpModeFromName("--tp-mode", "domain"), TpMode::Domain);
    try
    {
        TpModeFromName("--tp-mode", "Paper");
        ADD_FAILURE() << "took 'Paper'";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_EQ(std::string(e.what()),
                  "invalid --tp-mode: got 'Paper', allowed: paper, eq1 or domain");
    }
}

TEST(BestFeasibleTp, TheShortestEq1AmongTheSizesAJobCanRun)
{
    // N = 64, K = 16 (TpParams): N_M's terms of Eq. 1 vary as
    // 2 S_T / N_M + M_cc b d_model N_M / N = 11250 / N_M + 156.25 N_M:
    // 3437.5 at 4, 2656.25 at 8, 3203.125 at 16 (the minimum is near 8.49)
    const AnalyticalModel eq1(TpParams(16));
    const auto best = [&](uint32_t heads, uint64_t sequences) {
        // only the heads and the batch of the model count here
        return BestFeasibleTp(eq1, LlmModel::Custom(8, 768, heads, 1024, 8192, sequences * 1024));
    };
    EXPECT_EQ(best(16, 64), 8U);
    // 12 heads: TP divides 12 and 16, so 1, 2 or 4
    EXPECT_EQ(best(12, 64), 4U);
    // 8 sequences: DP = 64 / TP divides 8, so TP is 8 or 16
    EXPECT_EQ(best(16, 8), 8U);
    // 4 sequences: only TP 16, slower but the one the job can run
    EXPECT_EQ(best(16, 4), 16U);
    // 6 heads and 4 sequences: TP 16 does not divide 6: none
    EXPECT_EQ(best(6, 4), 0U);
}

TEST(PipelineBubble, OneFOneBWaitsPpMinusOneStagesOfTheSlowest)
{
    // 64 GPUs, K = 8, TP 8, PP 2, DP 4, 2 micro-batches of one 1024-token sequence
    const uint32_t d = 1024;
    const uint32_t v = 8192;
    const LlmModel model = LlmModel::Custom(8, d, 16, 1024, v, 4 * 2 * 1024);
    const auto shape = [](uint32_t pp) {
        Parallelism::Shape s;
        s.gpus = 64;
        s.gpusPerDomain = 8;
        s.tp = 8;
        s.pp = pp;
        s.dp = 64 / (8 * pp);
        s.microBatches = 2;
        s.globalBatchSequences = s.dp * 2;
        return s;
    };
    const auto iteration = [&](uint32_t pp) {
        return TrainingIteration(model, Parallelism(shape(pp)));
    };
    const LlmModel sized = LlmModel::Custom(8, d, 16, 1024, v, 8 * 2 * 1024);
    const TrainingIteration pp1(sized, Parallelism(shape(1)));
    EXPECT_EQ(pp1.PipelineBubbleSeconds(), 0);
    // the last stage is the slowest: its 4 blocks of 24 d^2 FLOPs per token
    // and the output layer's 2 V d, for 1024 tokens over TP 8, forward and
    // backward (2 x) at 989 TFLOP/s
    const double lastForward =
        (4 * 24.0 * d * d + 2.0 * v * d) * 1024 / 8 / WorkloadOptions().gpuFlops;
    EXPECT_NEAR(iteration(2).PipelineBubbleSeconds(), 1 * 3 * lastForward, 1e-15);
}

} // namespace

TEST(ThreeDParallel, EachTermAsWorkedByHand)
{
    // N 32 in domains of 8, TP 2, PP 2: DP 8; b = 1000 tokens in micro-batches
    // of 25: m = 1000 / (8 x 25) = 5 per pipeline. A stage: 16 GPUs, 2 blocks.
    const AnalyticalParams p = HandParams();
    const ThreeDParallelBreakdown t = ThreeDParallelTime(p, 2, 2, 25, true, 2);
    EXPECT_EQ(t.dp, 8);
    EXPECT_EQ(t.microBatches, 5);
    const double compute = 4.0 / 3.0 * 3.2e13 / (32 * 1e12);     // r M_flop / (N C)
    const double tp = 1.5 * 4 * 8 * 1000 * 100 * 1 / (32 * 1e9); // 3/2 l M_cc b d (TP-1) / (N B_F)
    EXPECT_NEAR(t.compute, compute, 1e-12);
    EXPECT_NEAR(t.tpComm, tp, 1e-15);
    EXPECT_NEAR(t.bubble, (2 - 1) / 5.0 * (compute + tp), 1e-12);
    EXPECT_NEAR(t.ppComm, 2 * (5 + 2 - 1) * 25 * 100 * 2 / (2 * 1e8), 1e-15);
    // the stage's DP: 2 blocks, N_Df = 16 / 8 = 2 on rails, N_Ds = 8 / 2 = 4 in domains
    EXPECT_NEAR(t.dpRail, 2 * 2 * 1e6 * (2 - 1) / (16 * 1e8), 1e-15);
    EXPECT_NEAR(t.dpDomain, 2 * 2 * 1e6 * (4 - 1) / (8 * 1e9), 1e-15);
    EXPECT_NEAR(t.total, t.compute + t.tpComm + t.bubble + t.ppComm + t.dpRail + t.dpDomain, 1e-12);
    // HFU counts the recomputed forward pass, MFU does not
    EXPECT_NEAR(t.hfu, 4.0 / 3.0 * 3.2e13 / (32 * 1e12 * t.total), 1e-12);
    EXPECT_NEAR(t.hfu, 4.0 / 3.0 * t.mfu, 1e-12);
    EXPECT_LT(t.hfu, 1);
}

TEST(ThreeDParallel, WithoutPipelineOrRecomputationItIsEq1)
{
    const AnalyticalParams p = HandParams();
    const ThreeDParallelBreakdown t = ThreeDParallelTime(p, 4, 1, 125, false);
    EXPECT_EQ(t.bubble, 0);
    EXPECT_EQ(t.ppComm, 0);
    EXPECT_NEAR(t.total, AnalyticalModel(p).IterationTime(4), 1e-12);
    EXPECT_NEAR(t.hfu, t.mfu, 1e-15);
}

TEST(ThreeDParallel, Gpt1tUtilizationRisesWithTheBatchAsTheBubbleShrinks)
{
    // GPT-1T on 32768 GH200 GPUs (K = 256), TP 8, PP 64: DP 64, so a batch of
    // B sequences gives m = B / 64 micro-batches and a bubble of 63 / m.
    const LlmModel gpt = LlmModel::Get("gpt-1t");
    double last = 0;
    for (uint64_t sequences : {256, 512, 1024, 2048, 4096})
    {
        LlmModel m = gpt;
        m.globalBatchTokens = sequences * m.seqLength;
        const AnalyticalParams p =
            AnalyticalParams::From(m, HbDomainPreset::Get("gh200-256"), 32768);
        const ThreeDParallelBreakdown t = ThreeDParallelTime(p, 8, 64, m.seqLength, true);
        EXPECT_EQ(t.microBatches, sequences / 64.0);
        EXPECT_NEAR(t.bubble, 63 / t.microBatches * (t.compute + t.tpComm), 1e-9 * t.total);
        EXPECT_GT(t.hfu, last);
        EXPECT_LT(t.hfu, 1 / (1 + 63 / t.microBatches)); // never above the bubble's bound
        last = t.hfu;
    }
}

TEST(ThreeDParallel, LayoutsAJobCannotHaveAreRefusedByName)
{
    const AnalyticalParams p = HandParams();
    const auto refused = [&](uint32_t tp, uint32_t pp, double micro, const std::string& name) {
        try
        {
            ThreeDParallelTime(p, tp, pp, micro, true);
        }
        catch (const FabricConfigError& e)
        {
            return std::string(e.what()).find(name) != std::string::npos;
        }
        return false;
    };
    EXPECT_TRUE(refused(3, 2, 25, "TP size")); // 3 does not divide K = 8
    EXPECT_TRUE(refused(2, 8, 25, "PP size")); // stages of 4 GPUs < K
    EXPECT_TRUE(refused(2, 2, 30, "batch"));   // 1000 / (8 x 30) is not whole
    EXPECT_TRUE(refused(2, 2, 0, "micro-batch"));
    EXPECT_TRUE(refused(2, 2, 2000, "batch")); // fewer than one micro-batch
}
