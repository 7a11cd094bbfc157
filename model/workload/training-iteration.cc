/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "training-iteration.h"

#include "ns3/abort.h"
#include "ns3/collective-algorithms.h"
#include "ns3/fabric-error.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace ns3
{

std::string_view
ParallelDimName(ParallelDim dim)
{
    switch (dim)
    {
    case ParallelDim::TP:
        return "tp";
    case ParallelDim::PP:
        return "pp";
    case ParallelDim::DP:
        return "dp";
    case ParallelDim::EP:
        return "ep";
    }
    return "?";
}

std::string_view
IterationPhaseName(IterationPhase phase)
{
    switch (phase)
    {
    case IterationPhase::Forward:
        return "forward";
    case IterationPhase::Backward:
        return "backward";
    case IterationPhase::Gradient:
        return "gradient";
    }
    return "?";
}

CollectiveSchedule
CollectiveCall::BuildSchedule(uint64_t chunkBytes, uint32_t channels) const
{
    const auto n = static_cast<uint32_t>(communicator.size());
    CollectiveSchedule s;
    if (type == CollectiveType::AllReduce && algorithm == "ring")
    {
        s = RingAllReduce(n, bytes, chunkBytes, channels);
    }
    else if (type == CollectiveType::AllReduce && algorithm == "hierarchical")
    {
        s = HierarchicalAllReduce(n, domainSize, bytes, chunkBytes, channels);
    }
    else if (type == CollectiveType::AllToAll && algorithm == "direct")
    {
        s = DirectAllToAll(n, bytes, chunkBytes, channels);
    }
    else if (type == CollectiveType::AllToAll && algorithm == "pxn")
    {
        s = PxnAllToAll(n, domainSize, bytes, chunkBytes, channels);
    }
    else if (type == CollectiveType::SendRecv && algorithm == "pairs")
    {
        s = SendRecvPairs(n, pairs, bytes, chunkBytes, channels);
    }
    else
    {
        throw FabricConfigError("collective call algorithm",
                                fmt::format("{} {}", CollectiveTypeName(type), algorithm),
                                "allreduce ring|hierarchical, alltoall direct|pxn, sendrecv pairs");
    }
    s.SetCommunicator(communicator);
    return s;
}

void
WorkloadOptions::Validate() const
{
    FabricRequire(dpAlgorithm == "hierarchical" || dpAlgorithm == "ring",
                  "DP algorithm",
                  dpAlgorithm,
                  "hierarchical or ring");
    FabricRequire(epAlgorithm == "pxn" || epAlgorithm == "direct",
                  "EP algorithm",
                  epAlgorithm,
                  "pxn or direct");
    FabricRequire(std::isfinite(gpuFlops) && gpuFlops > 0,
                  "GPU FLOP/s",
                  gpuFlops,
                  "a positive number");
    FabricRequire(std::isfinite(computeEfficiency) && computeEfficiency > 0 &&
                      computeEfficiency <= 1,
                  "compute efficiency",
                  computeEfficiency,
                  "a number in (0, 1]");
}

TrainingIteration::TrainingIteration(const LlmModel& model,
                                     const Parallelism& parallelism,
                                     const WorkloadOptions& options)
    : m_model(model),
      m_par(parallelism),
      m_opt(options)
{
    m_par.ValidateFor(m_model);
    m_opt.Validate();
    BuildCalls();
}

uint64_t
TrainingIteration::MicroBatchTokens() const
{
    return m_par.MicroBatchSequences() * m_model.seqLength;
}

uint64_t
TrainingIteration::ActivationBytesPerMicroBatch() const
{
    return static_cast<uint64_t>(std::llround(m_model.ActivationBytes(MicroBatchTokens())));
}

uint32_t
TrainingIteration::LayersPerStage() const
{
    return m_model.layers / m_par.Pp();
}

uint32_t
TrainingIteration::MoeLayersInStage(uint32_t stage) const
{
    if (!m_model.IsMoe())
    {
        return 0;
    }
    const uint32_t first = stage * LayersPerStage();
    const uint32_t interval = m_model.moeLayerInterval;
    // blocks k with (k + 1) % interval == 0, as LlmModel places them
    return (first + LayersPerStage()) / interval - first / interval;
}

uint64_t
TrainingIteration::DenseGradientBytes(uint32_t stage) const
{
    const uint32_t moe = MoeLayersInStage(stage);
    const double params =
        (LayersPerStage() - moe) * m_model.DenseBlockParams() + moe * m_model.AttentionParams();
    return static_cast<uint64_t>(std::llround(params * m_model.bytesPerParam / m_par.Tp()));
}

uint64_t
TrainingIteration::ExpertGradientBytes(uint32_t stage) const
{
    const double params = MoeLayersInStage(stage) *
                          (static_cast<double>(m_model.experts) / m_par.Ep()) * m_model.FfnParams();
    return static_cast<uint64_t>(std::llround(params * m_model.bytesPerParam / m_par.Tp()));
}

double
TrainingIteration::ForwardFlops(uint32_t stage) const
{
    FabricRequire(stage < m_par.Pp(), "PP stage", stage, fmt::format("below PP = {}", m_par.Pp()));
    double perToken = 0;
    for (uint32_t b = stage * LayersPerStage(); b < (stage + 1) * LayersPerStage(); ++b)
    {
        perToken += m_model.BlockForwardFlopsPerToken(b, m_opt.attentionFlops);
    }
    if (stage + 1 == m_par.Pp())
    {
        perToken += 2.0 * m_model.vocabSize * static_cast<double>(m_model.hiddenSize);
    }
    return perToken * static_cast<double>(MicroBatchTokens()) / m_par.Tp();
}

double
TrainingIteration::ForwardSeconds(uint32_t stage) const
{
    return ForwardFlops(stage) / (m_opt.gpuFlops * m_opt.computeEfficiency);
}

double
TrainingIteration::BackwardSeconds(uint32_t stage) const
{
    return 2.0 * ForwardSeconds(stage);
}

double
TrainingIteration::ComputeSecondsPerIteration(uint32_t rank) const
{
    const uint32_t stage = m_par.Coord(rank).pp;
    return m_par.MicroBatches() * (ForwardSeconds(stage) + BackwardSeconds(stage));
}

double
TrainingIteration::PipelineBubbleSeconds() const
{
    // the slowest stage sets the 1F1B pace
    double slowest = 0;
    for (uint32_t s = 0; s < m_par.Pp(); ++s)
    {
        slowest = std::max(slowest, ForwardSeconds(s) + BackwardSeconds(s));
    }
    return (m_par.Pp() - 1) * slowest;
}

std::vector<PipelineStep>
TrainingIteration::OneFOneBOrder(uint32_t stage) const
{
    FabricRequire(stage < m_par.Pp(), "PP stage", stage, fmt::format("below PP = {}", m_par.Pp()));
    return OneFOneBSchedule(stage, m_par.Pp(), m_par.MicroBatches());
}

std::vector<PipelineStep>
OneFOneBSchedule(uint32_t stage, uint32_t pp, uint32_t microBatches)
{
    const uint32_t m = microBatches;
    const uint32_t warmup = std::min(pp - 1 - stage, m);
    std::vector<PipelineStep> steps;
    steps.reserve(2 * m);
    uint32_t nextF = 0;
    uint32_t nextB = 0;
    for (; nextF < warmup; ++nextF)
    {
        steps.push_back({true, nextF});
    }
    while (nextF < m)
    {
        steps.push_back({true, nextF++});
        steps.push_back({false, nextB++});
    }
    while (nextB < m)
    {
        steps.push_back({false, nextB++});
    }
    return steps;
}

std::vector<PipelineStep>
InterleavedOneFOneBSchedule(uint32_t stage, uint32_t pp, uint32_t chunks, uint32_t microBatches)
{
    NS_ABORT_MSG_IF(pp < 2 || chunks < 2 || microBatches % pp != 0 || stage >= pp,
                    "interleaving needs pp > 1, chunks > 1 and micro-batches a multiple of pp");
    const uint32_t total = microBatches * chunks;
    // the k-th pass of a direction: pp micro-batches through one chunk,
    // then the next chunk, then the next pp micro-batches
    const auto step = [&](bool forward, uint32_t k) {
        const uint32_t round = (k / pp) % chunks;
        return PipelineStep{forward,
                            (k / (pp * chunks)) * pp + k % pp,
                            forward ? round : chunks - 1 - round};
    };
    const uint32_t warmup =
        microBatches == pp ? total : std::min(2 * (pp - 1 - stage) + (chunks - 1) * pp, total);
    std::vector<PipelineStep> steps;
    steps.reserve(2 * total);
    uint32_t nextF = 0;
    uint32_t nextB = 0;
    for (; nextF < warmup; ++nextF)
    {
        steps.push_back(step(true, nextF));
    }
    while (nextF < total)
    {
        steps.push_back(step(true, nextF++));
        steps.push_back(step(false, nextB++));
    }
    while (nextB < total)
    {
        steps.push_back(step(false, nextB++));
    }
    return steps;
}

void
TrainingIteration::BuildCalls()
{
    const uint32_t m = m_par.MicroBatches();
    const uint64_t act = ActivationBytesPerMicroBatch();
    const uint64_t allReducesPerPass = m_model.tpRoundsPerBlock / 4; // M_cc/2 split over 2 passes

    if (m_par.Tp() > 1)
    {
        for (auto& group : m_par.AllTpGroups())
        {
            const uint32_t stage = m_par.Coord(group.front()).pp;
            for (IterationPhase ph : {IterationPhase::Forward, IterationPhase::Backward})
            {
                CollectiveCall c;
                c.dim = ParallelDim::TP;
                c.phase = ph;
                c.type = CollectiveType::AllReduce;
                c.algorithm = "ring";
                c.communicator = group;
                c.domainSize = static_cast<uint32_t>(group.size());
                c.bytes = act;
                c.count = allReducesPerPass * LayersPerStage() * m;
                c.stage = stage;
                c.what = "tp-allreduce";
                m_calls.push_back(std::move(c));
            }
        }
    }

    if (m_par.Pp() > 1)
    {
        for (auto& pipeline : m_par.AllPpPipelines())
        {
            for (IterationPhase ph : {IterationPhase::Forward, IterationPhase::Backward})
            {
                CollectiveCall c;
                c.dim = ParallelDim::PP;
                c.phase = ph;
                c.type = CollectiveType::SendRecv;
                c.algorithm = "pairs";
                c.communicator = pipeline;
                c.domainSize = 1;
                for (uint32_t s = 0; s + 1 < m_par.Pp(); ++s)
                {
                    c.pairs.emplace_back(ph == IterationPhase::Forward ? s : s + 1,
                                         ph == IterationPhase::Forward ? s + 1 : s);
                }
                c.bytes = act;
                c.count = m;
                c.stage = kNoRank;
                c.what = ph == IterationPhase::Forward ? "pp-activation" : "pp-gradient";
                m_calls.push_back(std::move(c));
            }
        }
    }

    auto gradientCall = [this](const std::vector<uint32_t>& group, uint64_t bytes, const char* w) {
        CollectiveCall c;
        c.dim = ParallelDim::DP;
        c.phase = IterationPhase::Gradient;
        c.type = CollectiveType::AllReduce;
        c.algorithm = m_opt.dpAlgorithm;
        c.communicator = group;
        c.domainSize = m_par.MembersPerDomain(group);
        NS_ABORT_MSG_IF(c.domainSize == 0, "placement bug: DP group not domain-major");
        if (c.algorithm == "ring")
        {
            c.domainSize = static_cast<uint32_t>(group.size());
        }
        c.bytes = bytes;
        c.count = 1;
        c.stage = m_par.Coord(group.front()).pp;
        c.what = w;
        m_calls.push_back(std::move(c));
    };
    if (m_par.Dp() > 1)
    {
        for (auto& group : m_par.AllDpGroups())
        {
            const uint64_t g = DenseGradientBytes(m_par.Coord(group.front()).pp);
            if (g > 0)
            {
                gradientCall(group, g, "dp-gradient");
            }
        }
    }
    if (m_model.IsMoe() && m_par.Dp() / m_par.Ep() > 1)
    {
        for (auto& group : m_par.AllExpertDpGroups())
        {
            const uint64_t g = ExpertGradientBytes(m_par.Coord(group.front()).pp);
            if (g > 0)
            {
                gradientCall(group, g, "dp-expert-gradient");
            }
        }
    }

    if (m_model.IsMoe() && m_par.Ep() > 1)
    {
        const uint64_t sendBuffer = static_cast<uint64_t>(
            std::llround(static_cast<double>(MicroBatchTokens()) * m_model.topK *
                         m_model.hiddenSize * m_model.bytesPerActivation / m_par.Tp()));
        for (auto& group : m_par.AllEpGroups())
        {
            const uint32_t stage = m_par.Coord(group.front()).pp;
            const uint32_t moe = MoeLayersInStage(stage);
            if (moe == 0)
            {
                continue;
            }
            for (IterationPhase ph : {IterationPhase::Forward, IterationPhase::Backward})
            {
                CollectiveCall c;
                c.dim = ParallelDim::EP;
                c.phase = ph;
                c.type = CollectiveType::AllToAll;
                c.algorithm = m_opt.epAlgorithm;
                c.communicator = group;
                c.domainSize = m_par.MembersPerDomain(group);
                NS_ABORT_MSG_IF(c.domainSize == 0, "placement bug: EP group not domain-major");
                c.bytes = sendBuffer;
                c.count = 2ULL * moe * m; // dispatch and combine per MoE block
                c.stage = stage;
                c.what = "ep-alltoall";
                m_calls.push_back(std::move(c));
            }
        }
    }
}

} // namespace ns3
