/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "collective-metrics.h"

#include "collective-algorithms.h"

#include "ns3/fabric-error.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <string>

namespace ns3
{

namespace
{

void
RequireChannels(const AlphaBetaParams& p)
{
    FabricRequire(p.channels >= 1, "channels", p.channels, "at least 1");
}

/// Bytes of one message when a piece of \p piece bytes is cut as the generators cut it.
double
ChunkOf(double piece, uint64_t chunkBytes)
{
    if (chunkBytes == 0 || piece <= static_cast<double>(chunkBytes))
    {
        return piece;
    }
    return piece / std::ceil(piece / static_cast<double>(chunkBytes));
}

void
RequireRate(double bps, const char* name)
{
    FabricRequire(bps > 0, name, bps, "a positive rate in bits per second");
}

void
RequireN(uint32_t n)
{
    FabricRequire(n >= 1, "ranks", n, "at least 1");
}

} // namespace

double
AlgorithmBandwidth(uint64_t bytes, double seconds)
{
    FabricRequire(seconds > 0, "seconds", seconds, "a positive time");
    return static_cast<double>(bytes) / seconds;
}

double
BusBandwidthFactor(CollectiveType type, uint32_t n)
{
    RequireN(n);
    const double dn = n;
    switch (type)
    {
    case CollectiveType::AllReduce:
        return 2.0 * (dn - 1) / dn;
    case CollectiveType::AllGather:
    case CollectiveType::ReduceScatter:
    case CollectiveType::AllToAll:
        return (dn - 1) / dn;
    case CollectiveType::Broadcast:
    case CollectiveType::Reduce:
    case CollectiveType::SendRecv:
        return 1.0;
    }
    return 1.0;
}

double
BusBandwidth(CollectiveType type, uint32_t n, uint64_t bytes, double seconds)
{
    return AlgorithmBandwidth(bytes, seconds) * BusBandwidthFactor(type, n);
}

double
PipelineTime(uint64_t steps,
             double stepBytes,
             double chunkBytes,
             double alpha,
             double rateBps,
             bool sameLink)
{
    if (steps == 0)
    {
        return 0;
    }
    RequireRate(rateBps, "rate");
    const double chunkHop = alpha + 8 * chunkBytes / rateBps;
    const double stepPush = 8 * stepBytes / rateBps;
    const double tau = sameLink ? std::max(chunkHop, stepPush) : chunkHop;
    return static_cast<double>(steps - 1) * tau + alpha + stepPush;
}

double
RingAllReduceTime(uint32_t n, uint64_t bytes, const AlphaBetaParams& p)
{
    RequireN(n);
    RequireChannels(p);
    // The generator cuts S into channels x n pieces; a link moves S/n per
    // step whatever the channel count (channels share the rank's port).
    const double step = static_cast<double>(bytes) / n;
    return PipelineTime(2 * (uint64_t{n} - 1),
                        step,
                        ChunkOf(step / p.channels, p.chunkBytes),
                        p.alpha,
                        p.linkRateBps,
                        true);
}

double
RingAllGatherTime(uint32_t n, uint64_t bytes, const AlphaBetaParams& p)
{
    RequireN(n);
    RequireChannels(p);
    const double step = static_cast<double>(bytes) / n;
    return PipelineTime(uint64_t{n} - 1,
                        step,
                        ChunkOf(step / p.channels, p.chunkBytes),
                        p.alpha,
                        p.linkRateBps,
                        true);
}

double
DoubleBinaryTreeAllReduceTime(uint32_t n, uint64_t bytes, const AlphaBetaParams& p)
{
    RequireN(n);
    RequireChannels(p);
    RequireRate(p.linkRateBps, "linkRateBps");
    if (n < 2)
    {
        return 0;
    }
    // every rank an inner node of one tree (with two children) and a leaf
    // of the other needs four ranks; below, the ports move less than 2S
    FabricRequire(n >= 4,
                  "double binary tree ranks",
                  n,
                  "n >= 4 for the closed form (with 2 or 3 ranks no rank has two children)");
    const double h = InOrderBinaryTree(n).height;
    const double S = static_cast<double>(bytes);
    const double c = ChunkOf(S / 2 / p.channels, p.chunkBytes);
    const double B = p.linkRateBps;
    return (2 * h - 1) * (p.alpha + 16 * c / B) + p.alpha + 16 * S / B;
}

double
HalvingDoublingAllReduceTime(uint32_t n, uint64_t bytes, const AlphaBetaParams& p)
{
    RequireN(n);
    RequireChannels(p);
    RequireRate(p.linkRateBps, "linkRateBps");
    uint32_t pw = 1;
    uint32_t logp = 0;
    while (pw * 2 <= n)
    {
        pw *= 2;
        ++logp;
    }
    const double S = static_cast<double>(bytes);
    const double B = p.linkRateBps;
    double t = 2 * logp * p.alpha + 2.0 * (pw - 1) / pw * 8 * S / B;
    if (n > pw)
    {
        t += 2 * (p.alpha + 8 * S / B);
    }
    return t;
}

double
HierarchicalAllReduceTime(uint32_t n, uint64_t bytes, const AlphaBetaParams& p)
{
    RequireN(n);
    RequireChannels(p);
    const uint32_t K = p.domainSize;
    FabricRequire(K >= 1 && n % K == 0, "domainSize", K, fmt::format("a divisor of ranks ({})", n));
    const uint32_t D = n / K;
    const double S = static_cast<double>(bytes);
    double t = 0;
    if (K > 1)
    {
        RequireRate(p.nvlinkRateBps, "nvlinkRateBps");
        // Reduce-scatter and allgather: K-1 steps each, S/K per step, in
        // messages of D sub-piece chunks (one message per step unchunked)
        const double step = S / K;
        t += 2 * PipelineTime(K - 1,
                              step,
                              D * ChunkOf(S / n / p.channels, p.chunkBytes),
                              p.alpha,
                              p.nvlinkRateBps,
                              true);
    }
    if (D > 1)
    {
        RequireRate(p.nicRateBps, "nicRateBps");
        // Ring allreduce on the rail: 2(D-1) steps, S/(K D) per step.
        const double step = S / (double(K) * D);
        t += PipelineTime(2 * (uint64_t{D} - 1),
                          step,
                          ChunkOf(step / p.channels, p.chunkBytes),
                          p.alpha,
                          p.nicRateBps,
                          true);
    }
    return t;
}

double
DirectAllToAllTime(uint32_t n, uint64_t bytes, const AlphaBetaParams& p)
{
    RequireN(n);
    RequireChannels(p);
    const double S = static_cast<double>(bytes);
    const uint32_t K = p.domainSize;
    if (K <= 1)
    {
        RequireRate(p.linkRateBps, "linkRateBps");
        return p.alpha + (n - 1.0) / n * 8 * S / p.linkRateBps;
    }
    FabricRequire(n % K == 0, "domainSize", K, fmt::format("a divisor of ranks ({})", n));
    RequireRate(p.nvlinkRateBps, "nvlinkRateBps");
    const double nv = (K - 1.0) / n * 8 * S / p.nvlinkRateBps;
    double nic = 0;
    if (n > K)
    {
        RequireRate(p.nicRateBps, "nicRateBps");
        nic = double(n - K) / n * 8 * S / p.nicRateBps;
    }
    return p.alpha + std::max(nv, nic);
}

double
PxnAllToAllTime(uint32_t n, uint64_t bytes, const AlphaBetaParams& p)
{
    RequireN(n);
    RequireChannels(p);
    const uint32_t K = p.domainSize;
    FabricRequire(K >= 1 && n % K == 0, "domainSize", K, fmt::format("a divisor of ranks ({})", n));
    const uint32_t D = n / K;
    const double S = static_cast<double>(bytes);
    double nv = 0;
    double nic = 0;
    if (K > 1)
    {
        RequireRate(p.nvlinkRateBps, "nvlinkRateBps");
        nv = (K - 1.0) / K * 8 * S / p.nvlinkRateBps;
    }
    if (D > 1)
    {
        RequireRate(p.nicRateBps, "nicRateBps");
        nic = (D - 1.0) / D * 8 * S / p.nicRateBps;
    }
    const double piece = S / n / p.channels;
    const double c = ChunkOf(piece, p.chunkBytes);
    if (K == 1 || D == 1)
    {
        return p.alpha + nv + nic; // one hop only
    }
    if (c >= piece)
    {
        return 2 * p.alpha + nv + nic;
    }
    return 2 * p.alpha + 8 * c / p.nvlinkRateBps + std::max(nv, nic);
}

double
ChainBroadcastTime(uint32_t n, uint64_t bytes, const AlphaBetaParams& p)
{
    RequireN(n);
    RequireChannels(p);
    const double S = static_cast<double>(bytes);
    return PipelineTime(uint64_t{n} - 1,
                        S,
                        ChunkOf(S / p.channels, p.chunkBytes),
                        p.alpha,
                        p.linkRateBps,
                        false);
}

double
TreeBroadcastTime(uint32_t n, uint64_t bytes, const AlphaBetaParams& p)
{
    RequireN(n);
    RequireChannels(p);
    RequireRate(p.linkRateBps, "linkRateBps");
    if (n < 2)
    {
        return 0;
    }
    // A node with k children sends each chunk k times through its port: the
    // first chunk reaches a leaf after the hops of its path, a hop from a
    // node with k children taking alpha + 8kc/B (the last child served is
    // the one that waits; the root has one child), and every further chunk
    // is paced by the busiest port.
    const BinaryTree tree = InOrderBinaryTree(n);
    const double S = static_cast<double>(bytes);
    const double c = ChunkOf(S / p.channels, p.chunkBytes);
    const double B = p.linkRateBps;
    std::vector<double> first(n, 0); // first chunk's arrival, from the root
    double fill = 0;
    size_t busiest = 1;
    for (uint32_t u : tree.topDown)
    {
        const size_t k = tree.children[u].size();
        busiest = std::max(busiest, k);
        for (uint32_t v : tree.children[u])
        {
            first[v] = first[u] + p.alpha + 8 * static_cast<double>(k) * c / B;
            fill = std::max(fill, first[v]);
        }
    }
    return fill + 8 * static_cast<double>(busiest) * (S - c) / B;
}

double
SendRecvTime(uint64_t bytes, const AlphaBetaParams& p)
{
    RequireRate(p.linkRateBps, "linkRateBps");
    return p.alpha + 8 * static_cast<double>(bytes) / p.linkRateBps;
}

double
PredictedTime(std::string_view collective,
              std::string_view algorithm,
              uint32_t n,
              uint64_t bytes,
              const AlphaBetaParams& p)
{
    const CollectiveType type = ParseCollectiveType(collective);
    RequireChannels(p);
    const auto allowed = AlgorithmsFor(collective);
    if (std::find(allowed.begin(), allowed.end(), std::string(algorithm)) == allowed.end())
    {
        std::string list;
        for (const auto& a : allowed)
        {
            list += (list.empty() ? "" : ", ") + a;
        }
        throw FabricConfigError("algorithm",
                                algorithm,
                                fmt::format("for {}: {}", collective, list));
    }
    switch (type)
    {
    case CollectiveType::AllReduce:
        if (algorithm == "ring")
        {
            return RingAllReduceTime(n, bytes, p);
        }
        if (algorithm == "tree")
        {
            return DoubleBinaryTreeAllReduceTime(n, bytes, p);
        }
        if (algorithm == "halving-doubling")
        {
            return HalvingDoublingAllReduceTime(n, bytes, p);
        }
        return HierarchicalAllReduceTime(n, bytes, p);
    case CollectiveType::AllGather:
    case CollectiveType::ReduceScatter:
        return RingAllGatherTime(n, bytes, p);
    case CollectiveType::AllToAll:
        return algorithm == "pxn" ? PxnAllToAllTime(n, bytes, p) : DirectAllToAllTime(n, bytes, p);
    case CollectiveType::Broadcast:
    case CollectiveType::Reduce:
        return algorithm == "tree" ? TreeBroadcastTime(n, bytes, p)
                                   : ChainBroadcastTime(n, bytes, p);
    case CollectiveType::SendRecv:
        return SendRecvTime(bytes, p);
    }
    return 0;
}

} // namespace ns3
