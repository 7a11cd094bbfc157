/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "analytical-model.h"

#include "llm-model.h"

#include "ns3/fabric-error.h"
#include "ns3/hb-domain-preset.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace ns3
{

AnalyticalParams
AnalyticalParams::From(const LlmModel& model,
                       const HbDomainPreset& platform,
                       uint32_t gpus,
                       bool attentionFlops)
{
    model.Validate();
    platform.Validate();
    AnalyticalParams p;
    p.N = gpus;
    p.K = platform.gpusPerDomain;
    p.l = model.layers;
    p.d_model = model.hiddenSize;
    p.S_T = model.BlockParamBytes();
    p.b = static_cast<double>(model.globalBatchTokens);
    p.M_cc = model.tpRoundsPerBlock;
    p.M_flop = model.FlopsPerIteration(attentionFlops);
    p.C = platform.gpuFlops;
    p.B_F = FromRateBps(static_cast<double>(platform.nvlinkRate.GetBitRate()));
    p.B_S = FromRateBps(static_cast<double>(platform.nicRate.GetBitRate()));
    p.Validate();
    return p;
}

void
AnalyticalParams::Validate() const
{
    auto positive = [](double v) { return std::isfinite(v) && v > 0; };
    FabricRequire(positive(N) && N >= 1, "N (GPUs)", N, "a number >= 1");
    FabricRequire(positive(K) && K >= 1 && K <= N, "K (HB domain size)", K, "in [1, N]");
    FabricRequire(std::fmod(N, K) == 0,
                  "K (HB domain size)",
                  K,
                  fmt::format("a divisor of N = {}", N));
    FabricRequire(positive(l), "l (layers)", l, "a positive number");
    FabricRequire(positive(d_model), "d_model", d_model, "a positive number");
    FabricRequire(positive(S_T), "S_T (bytes per block)", S_T, "a positive number of bytes");
    FabricRequire(positive(b), "b (batch, tokens)", b, "a positive number of tokens");
    FabricRequire(positive(M_cc), "M_cc", M_cc, "a positive number");
    FabricRequire(std::isfinite(M_flop) && M_flop >= 0, "M_flop", M_flop, "a number >= 0");
    FabricRequire(positive(C), "C (GPU FLOP/s)", C, "a positive FLOP/s");
    FabricRequire(positive(B_F), "B_F (HB bandwidth)", B_F, "a positive number of bytes/s");
    FabricRequire(positive(B_S), "B_S (NIC bandwidth)", B_S, "a positive number of bytes/s");
    FabricRequire(positive(activationBytes),
                  "activation bytes factor",
                  activationBytes,
                  "a positive number (1: the paper's formula)");
}

AnalyticalParams
AnalyticalParams::PipelineStage(uint32_t pp) const
{
    FabricRequire(pp >= 1, "PP size", pp, "an integer >= 1");
    AnalyticalParams stage = *this;
    stage.N /= pp;
    stage.l /= pp;
    stage.M_flop /= pp;
    return stage;
}

AnalyticalModel::AnalyticalModel(const AnalyticalParams& params)
    : m_p(params)
{
    m_p.Validate();
}

double
AnalyticalModel::OptimalTp() const
{
    return std::sqrt(m_p.N * m_p.S_T) /
           (2.0 * std::sqrt(m_p.b * m_p.activationBytes * m_p.M_cc * m_p.d_model));
}

double
AnalyticalModel::Eq1MinimizingTp() const
{
    return std::sqrt(2.0 * m_p.N * m_p.S_T /
                     (m_p.M_cc * m_p.b * m_p.activationBytes * m_p.d_model));
}

double
AnalyticalModel::ClampedOptimalTp() const
{
    return std::clamp(OptimalTp(), 1.0, m_p.K);
}

IterationTimeBreakdown
AnalyticalModel::Breakdown(double N_M) const
{
    FabricRequire(std::isfinite(N_M) && N_M >= 1 && N_M <= m_p.K,
                  "N_M (TP size)",
                  N_M,
                  fmt::format("in [1, K = {}]", m_p.K));
    const AnalyticalParams& p = m_p;
    IterationTimeBreakdown t;
    t.N_M = N_M;
    t.N_Ds = p.K / N_M;
    t.N_Df = p.N / p.K;
    t.compute = p.M_flop / (p.N * p.C);
    t.dpRail = p.l * 2.0 * p.S_T * (t.N_Df - 1) / (p.N * p.B_S);
    t.dpDomain = p.l * 2.0 * p.S_T * (t.N_Ds - 1) / (p.K * p.B_F);
    t.tp = p.l * p.M_cc * p.b * p.activationBytes * p.d_model * (N_M - 1) / (p.N * p.B_F);
    t.total = t.compute + t.dpRail + t.dpDomain + t.tp;
    return t;
}

double
AnalyticalModel::IterationTime(double N_M) const
{
    return Breakdown(N_M).total;
}

double
AnalyticalModel::IdealTime() const
{
    return IdealTimeAt(std::clamp(OptimalTp(), 1.0, m_p.N));
}

double
AnalyticalModel::IdealTimeAt(double N_M) const
{
    const AnalyticalParams& p = m_p;
    FabricRequire(std::isfinite(N_M) && N_M >= 1 && N_M <= p.N,
                  "N_M (TP size)",
                  N_M,
                  fmt::format("in [1, N = {}]", p.N));
    return p.M_flop / (p.N * p.C) + p.l / (p.B_F * p.N) *
                                        (2.0 * p.S_T * (p.N / N_M - 1) +
                                         p.M_cc * p.b * p.activationBytes * p.d_model * (N_M - 1));
}

double
PipelineStageIterationTime(const AnalyticalParams& job, uint32_t pp, double N_M)
{
    const AnalyticalParams stage = job.PipelineStage(pp);
    if (stage.N < stage.K)
    {
        return std::numeric_limits<double>::quiet_NaN();
    }
    return AnalyticalModel(stage).IterationTime(N_M);
}

ThreeDParallelBreakdown
ThreeDParallelTime(const AnalyticalParams& job,
                   uint32_t tp,
                   uint32_t pp,
                   double microBatchTokens,
                   bool recompute,
                   double activationBytes)
{
    job.Validate();
    const auto k = static_cast<uint64_t>(job.K);
    const auto n = static_cast<uint64_t>(job.N);
    FabricRequire(tp >= 1 && k % tp == 0,
                  "TP size",
                  tp,
                  fmt::format("a divisor of K = {} (TP stays in the HB domain)", k));
    FabricRequire(pp >= 1 && n % pp == 0 && (n / pp) % k == 0,
                  "PP size",
                  pp,
                  fmt::format("a divisor of N = {} whose stages of N / PP GPUs fill whole HB "
                              "domains of {}",
                              n,
                              k));
    FabricRequire(std::isfinite(microBatchTokens) && microBatchTokens > 0,
                  "micro-batch",
                  microBatchTokens,
                  "a positive number of tokens");
    FabricRequire(std::isfinite(activationBytes) && activationBytes > 0,
                  "activation bytes",
                  activationBytes,
                  "a positive number");
    ThreeDParallelBreakdown t;
    t.tp = tp;
    t.pp = pp;
    t.dp = static_cast<double>(n / (uint64_t{tp} * pp));
    t.microBatches = job.b / (t.dp * microBatchTokens);
    FabricRequire(t.microBatches >= 1 && std::floor(t.microBatches) == t.microBatches,
                  "batch",
                  job.b,
                  fmt::format("a whole number >= 1 of micro-batches per pipeline: a multiple of "
                              "DP x micro-batch = {} x {} tokens",
                              t.dp,
                              microBatchTokens));
    const IterationTimeBreakdown stage = AnalyticalModel(job.PipelineStage(pp)).Breakdown(tp);
    const double r = recompute ? 4.0 / 3.0 : 1.0;
    t.compute = r * stage.compute;
    t.tpComm = (recompute ? 1.5 : 1.0) * stage.tp;
    t.bubble = (pp - 1) / t.microBatches * (t.compute + t.tpComm);
    t.ppComm = pp == 1 ? 0.0
                       : 2.0 * (t.microBatches + pp - 1) * microBatchTokens * job.d_model *
                             activationBytes / (tp * job.B_S);
    t.dpRail = stage.dpRail;
    t.dpDomain = stage.dpDomain;
    t.total = t.compute + t.tpComm + t.bubble + t.ppComm + t.dpRail + t.dpDomain;
    t.hfu = r * job.M_flop / (job.N * job.C * t.total);
    t.mfu = job.M_flop / (job.N * job.C * t.total);
    return t;
}

TpMode
TpModeFromName(const std::string& parameter, const std::string& name)
{
    if (name == "paper")
    {
        return TpMode::Paper;
    }
    if (name == "eq1")
    {
        return TpMode::Eq1;
    }
    FabricRequire(name == "domain", parameter, name, "paper, eq1 or domain");
    return TpMode::Domain;
}

double
ChooseTp(const AnalyticalModel& eq1, TpMode mode)
{
    switch (mode)
    {
    case TpMode::Paper:
        return eq1.ClampedOptimalTp();
    case TpMode::Eq1:
        return std::clamp(eq1.Eq1MinimizingTp(), 1.0, eq1.Params().K);
    case TpMode::Domain:
        break;
    }
    return eq1.Params().K;
}

double
IdealTp(const AnalyticalModel& eq1, TpMode mode)
{
    const double n = eq1.Params().N;
    switch (mode)
    {
    case TpMode::Paper:
        return std::clamp(eq1.OptimalTp(), 1.0, n);
    case TpMode::Eq1:
        return std::clamp(eq1.Eq1MinimizingTp(), 1.0, n);
    case TpMode::Domain:
        break;
    }
    return eq1.Params().K;
}

uint32_t
BestFeasibleTp(const AnalyticalModel& eq1, const LlmModel& model)
{
    const auto gpus = static_cast<uint32_t>(eq1.Params().N);
    const auto k = static_cast<uint32_t>(eq1.Params().K);
    const uint64_t sequences = model.globalBatchTokens / model.seqLength;
    uint32_t best = 0;
    double bestTime = 0;
    for (uint32_t tp = 1; tp <= k; ++tp)
    {
        const bool feasible =
            k % tp == 0 && model.heads % tp == 0 && gpus % tp == 0 && sequences % (gpus / tp) == 0;
        if (!feasible)
        {
            continue;
        }
        const double t = eq1.IterationTime(tp);
        if (best == 0 || t < bestTime)
        {
            best = tp;
            bestTime = t;
        }
    }
    return best;
}

} // namespace ns3
