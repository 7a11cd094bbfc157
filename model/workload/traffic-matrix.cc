/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "traffic-matrix.h"

#include "ns3/abort.h"
#include "ns3/collective-algorithms.h"
#include "ns3/fabric-error.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace ns3
{

uint64_t
TrafficEntry::Total() const
{
    uint64_t t = 0;
    for (uint64_t b : bytes)
    {
        t += b;
    }
    return t;
}

namespace
{

double
Fraction(uint64_t part, uint64_t whole)
{
    return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

uint64_t
Round(double bytes)
{
    return static_cast<uint64_t>(std::llround(bytes));
}

} // namespace

double
TrafficStats::IdlePairFraction() const
{
    return orderedPairs == 0 ? 0.0 : 1.0 - Fraction(pairsWithTraffic, orderedPairs);
}

double
TrafficStats::IntraDomainFraction() const
{
    return Fraction(all.intraDomain, all.Total());
}

double
TrafficStats::SameRailFraction() const
{
    return Fraction(all.sameRailInter, all.Total());
}

double
TrafficStats::OtherFraction() const
{
    return Fraction(all.otherInter, all.Total());
}

IterationTrafficMatrix::IterationTrafficMatrix(uint32_t gpus,
                                               uint32_t gpusPerDomain,
                                               uint32_t exactGroupLimit)
    : m_gpus(gpus),
      m_k(gpusPerDomain),
      m_exactGroupLimit(exactGroupLimit)
{
    FabricRequire(gpus >= 1, "GPUs (N)", gpus, "an integer >= 1");
    FabricRequire(gpusPerDomain >= 1 && gpus % gpusPerDomain == 0,
                  "HB domain size (K)",
                  gpusPerDomain,
                  fmt::format("a divisor of the GPU count {}", gpus));
}

IterationTrafficMatrix
IterationTrafficMatrix::FromIteration(const TrainingIteration& iteration, uint32_t exactGroupLimit)
{
    const Parallelism& p = iteration.GetParallelism();
    IterationTrafficMatrix tm(p.Gpus(), p.GpusPerDomain(), exactGroupLimit);
    for (const auto& call : iteration.Collectives())
    {
        tm.AddCall(call);
    }
    return tm;
}

std::vector<PairBytes>
IterationTrafficMatrix::LocalTraffic(const CollectiveCall& call, bool exact)
{
    const auto n = static_cast<uint32_t>(call.communicator.size());
    if (n < 2)
    {
        return {};
    }
    if (exact)
    {
        return call.BuildSchedule().TrafficMatrix();
    }
    std::map<std::pair<uint32_t, uint32_t>, double> acc;
    const double s = static_cast<double>(call.bytes);
    if (call.type == CollectiveType::AllReduce && call.algorithm == "ring")
    {
        for (uint32_t i = 0; i < n; ++i)
        {
            acc[{i, (i + 1) % n}] += 2.0 * (n - 1) * s / n;
        }
    }
    else if (call.type == CollectiveType::AllReduce && call.algorithm == "hierarchical")
    {
        const uint32_t k = call.domainSize;
        const uint32_t d = n / k;
        for (uint32_t i = 0; i < n; ++i)
        {
            const uint32_t dom = i / k;
            const uint32_t loc = i % k;
            if (k > 1)
            {
                acc[{i, dom * k + (loc + 1) % k}] += 2.0 * (k - 1) * s / k;
            }
            if (d > 1)
            {
                acc[{i, ((dom + 1) % d) * k + loc}] +=
                    2.0 * (d - 1) * s / (static_cast<double>(k) * d);
            }
        }
    }
    else if (call.type == CollectiveType::AllToAll && call.algorithm == "direct")
    {
        for (uint32_t i = 0; i < n; ++i)
        {
            for (uint32_t j = 0; j < n; ++j)
            {
                if (i != j)
                {
                    acc[{i, j}] += s / n;
                }
            }
        }
    }
    else if (call.type == CollectiveType::AllToAll && call.algorithm == "pxn")
    {
        const uint32_t k = call.domainSize;
        const uint32_t d = n / k;
        for (uint32_t i = 0; i < n; ++i)
        {
            for (uint32_t j = 0; j < n; ++j)
            {
                if (i == j)
                {
                    continue;
                }
                if (i / k == j / k)
                {
                    acc[{i, j}] += s / n * d;
                }
                else if (i % k == j % k)
                {
                    acc[{i, j}] += s / n * k;
                }
            }
        }
    }
    else if (call.type == CollectiveType::SendRecv && call.algorithm == "pairs")
    {
        for (const auto& [a, b] : call.pairs)
        {
            acc[{a, b}] += s;
        }
    }
    else
    {
        throw FabricConfigError("collective call algorithm",
                                fmt::format("{} {}", CollectiveTypeName(call.type), call.algorithm),
                                "allreduce ring|hierarchical, alltoall direct|pxn, sendrecv pairs");
    }
    std::vector<PairBytes> out;
    out.reserve(acc.size());
    for (const auto& [key, bytes] : acc)
    {
        const uint64_t b = Round(bytes);
        if (b > 0)
        {
            out.push_back({key.first, key.second, b, 1});
        }
    }
    return out;
}

const std::vector<PairBytes>&
IterationTrafficMatrix::CachedLocalTraffic(const CollectiveCall& call)
{
    std::vector<uint64_t> pairKey;
    pairKey.reserve(call.pairs.size());
    for (const auto& [a, b] : call.pairs)
    {
        pairKey.push_back((static_cast<uint64_t>(a) << 32) | b);
    }
    auto key = std::make_tuple(call.algorithm,
                               static_cast<int>(call.type),
                               static_cast<uint32_t>(call.communicator.size()),
                               call.domainSize,
                               call.bytes,
                               std::move(pairKey));
    auto it = m_cache.find(key);
    if (it == m_cache.end())
    {
        const bool exact = call.communicator.size() <= m_exactGroupLimit;
        it = m_cache.emplace(std::move(key), LocalTraffic(call, exact)).first;
    }
    return it->second;
}

void
IterationTrafficMatrix::Add(uint32_t src, uint32_t dst, ParallelDim dim, uint64_t bytes)
{
    FabricRequire(src < m_gpus && dst < m_gpus && src != dst,
                  "traffic pair",
                  fmt::format("{} -> {}", src, dst),
                  fmt::format("two different ranks below N = {}", m_gpus));
    if (bytes == 0)
    {
        return;
    }
    const uint64_t key = (static_cast<uint64_t>(src) << 32) | dst;
    m_map[key][static_cast<size_t>(dim)] += bytes;
}

void
IterationTrafficMatrix::AddCall(const CollectiveCall& call)
{
    if (call.count == 0)
    {
        return;
    }
    for (const PairBytes& pb : CachedLocalTraffic(call))
    {
        Add(call.communicator[pb.src], call.communicator[pb.dst], call.dim, pb.bytes * call.count);
    }
}

uint64_t
IterationTrafficMatrix::Bytes(uint32_t src, uint32_t dst) const
{
    auto it = m_map.find((static_cast<uint64_t>(src) << 32) | dst);
    if (it == m_map.end())
    {
        return 0;
    }
    uint64_t t = 0;
    for (uint64_t b : it->second)
    {
        t += b;
    }
    return t;
}

uint64_t
IterationTrafficMatrix::Bytes(uint32_t src, uint32_t dst, ParallelDim dim) const
{
    auto it = m_map.find((static_cast<uint64_t>(src) << 32) | dst);
    return it == m_map.end() ? 0 : it->second[static_cast<size_t>(dim)];
}

std::vector<TrafficEntry>
IterationTrafficMatrix::Entries() const
{
    std::vector<TrafficEntry> out;
    out.reserve(m_map.size());
    for (const auto& [key, bytes] : m_map)
    {
        TrafficEntry e;
        e.src = static_cast<uint32_t>(key >> 32);
        e.dst = static_cast<uint32_t>(key & 0xffffffffULL);
        e.bytes = bytes;
        out.push_back(e);
    }
    std::sort(out.begin(), out.end(), [](const TrafficEntry& a, const TrafficEntry& b) {
        return std::make_pair(a.src, a.dst) < std::make_pair(b.src, b.dst);
    });
    return out;
}

TrafficStats
IterationTrafficMatrix::Stats() const
{
    TrafficStats st;
    st.gpus = m_gpus;
    st.gpusPerDomain = m_k;
    st.orderedPairs = static_cast<uint64_t>(m_gpus) * (m_gpus - 1);
    st.pairsWithTraffic = m_map.size();
    for (const auto& [key, bytes] : m_map)
    {
        const auto src = static_cast<uint32_t>(key >> 32);
        const auto dst = static_cast<uint32_t>(key & 0xffffffffULL);
        const bool sameDomain = src / m_k == dst / m_k;
        const bool sameRail = src % m_k == dst % m_k;
        if (!sameDomain)
        {
            ++st.interDomainPairsWithTraffic;
            if (!sameRail)
            {
                ++st.otherPairsWithTraffic;
            }
        }
        for (size_t d = 0; d < kParallelDims; ++d)
        {
            uint64_t TrafficSplit::*field = sameDomain ? &TrafficSplit::intraDomain
                                            : sameRail ? &TrafficSplit::sameRailInter
                                                       : &TrafficSplit::otherInter;
            st.byDim[d].*field += bytes[d];
            st.all.*field += bytes[d];
        }
    }
    return st;
}

uint64_t
IterationTrafficMatrix::TotalBytes(ParallelDim dim) const
{
    uint64_t t = 0;
    for (const auto& [key, bytes] : m_map)
    {
        t += bytes[static_cast<size_t>(dim)];
    }
    return t;
}

uint64_t
IterationTrafficMatrix::TotalBytes() const
{
    uint64_t t = 0;
    for (const auto& [key, bytes] : m_map)
    {
        for (uint64_t b : bytes)
        {
            t += b;
        }
    }
    return t;
}

} // namespace ns3
