/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "parallelism.h"

#include "llm-model.h"

#include "ns3/fabric-error.h"

#include <algorithm>
#include <fmt/format.h>
#include <unordered_set>

namespace ns3
{

Parallelism::Parallelism(const Shape& shape)
    : m_gpus(shape.gpus),
      m_k(shape.gpusPerDomain),
      m_tp(shape.tp),
      m_pp(shape.pp),
      m_dp(shape.dp),
      m_ep(shape.ep),
      m_dpInner(1),
      m_microBatches(shape.microBatches),
      m_globalBatch(shape.globalBatchSequences)
{
    FabricRequire(shape.gpus >= 1, "GPUs (N)", shape.gpus, "an integer >= 1");
    FabricRequire(shape.gpusPerDomain >= 1 && shape.gpus % shape.gpusPerDomain == 0,
                  "HB domain size (K)",
                  shape.gpusPerDomain,
                  fmt::format("a divisor of the GPU count {}", shape.gpus));
    FabricRequire(shape.tp >= 1, "TP", shape.tp, "an integer >= 1");
    FabricRequire(shape.pp >= 1, "PP", shape.pp, "an integer >= 1");
    FabricRequire(shape.dp >= 1, "DP", shape.dp, "an integer >= 1");
    FabricRequire(static_cast<uint64_t>(shape.tp) * shape.pp * shape.dp == shape.gpus,
                  "TP*PP*DP",
                  fmt::format("{}*{}*{} = {}",
                              shape.tp,
                              shape.pp,
                              shape.dp,
                              static_cast<uint64_t>(shape.tp) * shape.pp * shape.dp),
                  fmt::format("equal to the GPU count N = {}", shape.gpus));
    // the paper keeps TP inside one HB domain, so TP traffic never needs the NICs
    FabricRequire(shape.tp <= shape.gpusPerDomain,
                  "TP",
                  shape.tp,
                  fmt::format("at most the HB domain size K = {}", shape.gpusPerDomain));
    FabricRequire(shape.gpusPerDomain % shape.tp == 0,
                  "TP",
                  shape.tp,
                  fmt::format("a divisor of the HB domain size K = {}", shape.gpusPerDomain));
    const uint32_t perDomain = shape.gpusPerDomain / shape.tp; // TP groups per domain
    FabricRequire(shape.dp % perDomain == 0 || perDomain % shape.dp == 0,
                  "DP",
                  shape.dp,
                  fmt::format("a multiple or a divisor of K / TP = {} (so that every DP group "
                              "has the same number of members in each domain it touches)",
                              perDomain));
    m_dpInner = std::min(shape.dp, perDomain);
    FabricRequire(
        shape.ep >= 1 && shape.dp % shape.ep == 0,
        "EP",
        shape.ep,
        fmt::format("a divisor of DP = {} (EP groups are made of DP replicas)", shape.dp));
    FabricRequire((shape.ep <= m_dpInner && m_dpInner % shape.ep == 0) || shape.ep % m_dpInner == 0,
                  "EP",
                  shape.ep,
                  fmt::format("a divisor or a multiple of N_Ds = {} (so that every EP group "
                              "has the same number of members in each domain it touches)",
                              m_dpInner));
    FabricRequire(shape.microBatches >= 1, "micro-batches", shape.microBatches, "an integer >= 1");
    FabricRequire(shape.globalBatchSequences >= 1 &&
                      shape.globalBatchSequences %
                              (static_cast<uint64_t>(shape.dp) * shape.microBatches) ==
                          0,
                  "global batch (sequences)",
                  shape.globalBatchSequences,
                  fmt::format("a positive multiple of DP * micro-batches = {}",
                              static_cast<uint64_t>(shape.dp) * shape.microBatches));
}

void
Parallelism::ValidateFor(const LlmModel& model) const
{
    model.Validate();
    FabricRequire(model.layers % m_pp == 0,
                  "PP",
                  m_pp,
                  fmt::format("a divisor of the model's {} layers", model.layers));
    FabricRequire(model.heads % m_tp == 0,
                  "TP",
                  m_tp,
                  fmt::format("a divisor of the model's {} attention heads", model.heads));
    if (model.IsMoe())
    {
        FabricRequire(model.experts % m_ep == 0,
                      "EP",
                      m_ep,
                      fmt::format("a divisor of the model's {} experts", model.experts));
    }
    else
    {
        FabricRequire(m_ep == 1, "EP", m_ep, fmt::format("1 for the dense model {}", model.name));
    }
    FabricRequire(m_globalBatch == model.GlobalBatchSequences(),
                  "global batch (sequences)",
                  m_globalBatch,
                  fmt::format("the model's batch: {} tokens / {} = {} sequences",
                              model.globalBatchTokens,
                              model.seqLength,
                              model.GlobalBatchSequences()));
}

RankCoord
Parallelism::Coord(uint32_t rank) const
{
    FabricRequire(rank < m_gpus, "rank", rank, fmt::format("below N = {}", m_gpus));
    RankCoord c;
    c.tp = rank % m_tp;
    c.dp = (rank / m_tp) % m_dp;
    c.pp = StageOfSlot(rank / (m_tp * m_dp));
    c.dpInner = c.dp % m_dpInner;
    c.dpOuter = c.dp / m_dpInner;
    c.ep = c.dp % m_ep;
    c.epGroup = c.dp / m_ep;
    return c;
}

uint32_t
Parallelism::Rank(uint32_t tp, uint32_t pp, uint32_t dp) const
{
    FabricRequire(tp < m_tp, "TP index", tp, fmt::format("below TP = {}", m_tp));
    FabricRequire(pp < m_pp, "PP stage", pp, fmt::format("below PP = {}", m_pp));
    FabricRequire(dp < m_dp, "DP index", dp, fmt::format("below DP = {}", m_dp));
    return tp + m_tp * (dp + m_dp * SlotOfStage(pp));
}

uint32_t
Parallelism::StagesPerDomain() const
{
    const uint32_t replicaGpus = m_tp * m_dp;
    return replicaGpus >= m_k ? 1 : m_k / replicaGpus;
}

uint32_t
Parallelism::SlotOfStage(uint32_t stage) const
{
    // snake order: in every second domain the stages run backwards, so the
    // stage that closes a domain and the one that opens the next share a rail
    const uint32_t q = StagesPerDomain();
    const uint32_t block = stage / q;
    const uint32_t j = stage % q;
    return block * q + (block % 2 == 1 ? q - 1 - j : j);
}

uint32_t
Parallelism::StageOfSlot(uint32_t slot) const
{
    return SlotOfStage(slot); // the snake permutation is its own inverse
}

std::vector<uint32_t>
Parallelism::TpGroup(uint32_t rank) const
{
    const RankCoord c = Coord(rank);
    std::vector<uint32_t> g(m_tp);
    for (uint32_t t = 0; t < m_tp; ++t)
    {
        g[t] = Rank(t, c.pp, c.dp);
    }
    return g;
}

std::vector<uint32_t>
Parallelism::PpPipeline(uint32_t rank) const
{
    const RankCoord c = Coord(rank);
    std::vector<uint32_t> g(m_pp);
    for (uint32_t s = 0; s < m_pp; ++s)
    {
        g[s] = Rank(c.tp, s, c.dp);
    }
    return g;
}

std::vector<uint32_t>
Parallelism::DpGroup(uint32_t rank) const
{
    const RankCoord c = Coord(rank);
    std::vector<uint32_t> g(m_dp);
    for (uint32_t d = 0; d < m_dp; ++d)
    {
        g[d] = Rank(c.tp, c.pp, d);
    }
    return g;
}

std::vector<uint32_t>
Parallelism::EpGroup(uint32_t rank) const
{
    const RankCoord c = Coord(rank);
    std::vector<uint32_t> g(m_ep);
    for (uint32_t e = 0; e < m_ep; ++e)
    {
        g[e] = Rank(c.tp, c.pp, c.epGroup * m_ep + e);
    }
    return g;
}

std::vector<uint32_t>
Parallelism::ExpertDpGroup(uint32_t rank) const
{
    const RankCoord c = Coord(rank);
    std::vector<uint32_t> g(m_dp / m_ep);
    for (uint32_t j = 0; j < g.size(); ++j)
    {
        g[j] = Rank(c.tp, c.pp, j * m_ep + c.ep);
    }
    return g;
}

std::vector<std::vector<uint32_t>>
Parallelism::AllTpGroups() const
{
    std::vector<std::vector<uint32_t>> out;
    for (uint32_t r = 0; r < m_gpus; r += m_tp)
    {
        out.push_back(TpGroup(r));
    }
    return out;
}

std::vector<std::vector<uint32_t>>
Parallelism::AllPpPipelines() const
{
    std::vector<std::vector<uint32_t>> out;
    for (uint32_t r = 0; r < m_tp * m_dp; ++r) // the stage-0 ranks
    {
        out.push_back(PpPipeline(r));
    }
    return out;
}

std::vector<std::vector<uint32_t>>
Parallelism::AllDpGroups() const
{
    std::vector<std::vector<uint32_t>> out;
    for (uint32_t s = 0; s < m_pp; ++s)
    {
        for (uint32_t t = 0; t < m_tp; ++t)
        {
            out.push_back(DpGroup(Rank(t, s, 0)));
        }
    }
    return out;
}

std::vector<std::vector<uint32_t>>
Parallelism::AllEpGroups() const
{
    std::vector<std::vector<uint32_t>> out;
    if (m_ep == 1)
    {
        return out;
    }
    for (uint32_t s = 0; s < m_pp; ++s)
    {
        for (uint32_t e = 0; e < m_dp; e += m_ep)
        {
            for (uint32_t t = 0; t < m_tp; ++t)
            {
                out.push_back(EpGroup(Rank(t, s, e)));
            }
        }
    }
    return out;
}

std::vector<std::vector<uint32_t>>
Parallelism::AllExpertDpGroups() const
{
    std::vector<std::vector<uint32_t>> out;
    for (uint32_t s = 0; s < m_pp; ++s)
    {
        for (uint32_t e = 0; e < m_ep; ++e)
        {
            for (uint32_t t = 0; t < m_tp; ++t)
            {
                out.push_back(ExpertDpGroup(Rank(t, s, e)));
            }
        }
    }
    return out;
}

uint32_t
Parallelism::MembersPerDomain(const std::vector<uint32_t>& communicator) const
{
    if (communicator.empty())
    {
        return 0;
    }
    uint32_t per = 0;
    while (per < communicator.size() &&
           DomainOf(communicator[per]) == DomainOf(communicator.front()))
    {
        ++per;
    }
    if (communicator.size() % per != 0)
    {
        return 0;
    }
    std::unordered_set<uint32_t> seen;
    for (size_t i = 0; i < communicator.size(); i += per)
    {
        const uint32_t domain = DomainOf(communicator[i]);
        if (!seen.insert(domain).second)
        {
            return 0; // a domain visited twice: not domain-major
        }
        for (size_t j = i + 1; j < i + per; ++j)
        {
            if (DomainOf(communicator[j]) != domain)
            {
                return 0;
            }
        }
    }
    return per;
}

std::string
Parallelism::ToString() const
{
    return fmt::format("N={} K={} TP={} PP={} DP={} (N_Ds={} N_Df={}) EP={} m={} batch={}",
                       m_gpus,
                       m_k,
                       m_tp,
                       m_pp,
                       m_dp,
                       m_dpInner,
                       DpOuter(),
                       m_ep,
                       m_microBatches,
                       m_globalBatch);
}

} // namespace ns3
