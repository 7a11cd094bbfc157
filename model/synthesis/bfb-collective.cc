/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "bfb-collective.h"

#include "ns3/collective-algorithms.h"
#include "ns3/collective-baselines.h"
#include "ns3/fabric-error.h"

#include <algorithm>
#include <boost/integer/common_factor_rt.hpp>
#include <fmt/format.h>
#include <limits>
#include <numeric>
#include <unordered_map>

namespace ns3
{

namespace
{

constexpr uint32_t kNotHeld = std::numeric_limits<uint32_t>::max();

/// Largest-remainder split of \p total units by \p weights (which sum to 1).
std::vector<uint32_t>
LargestRemainder(uint32_t total, const std::vector<Fraction>& weights)
{
    std::vector<uint32_t> out(weights.size());
    std::vector<std::pair<Fraction, size_t>> rem;
    uint32_t used = 0;
    for (size_t i = 0; i < weights.size(); ++i)
    {
        Fraction exact = weights[i] * Fraction(total);
        // integer division is floor for the non-negative weights used here
        const auto fl = static_cast<uint32_t>(exact.numerator() / exact.denominator());
        out[i] = fl;
        used += fl;
        rem.emplace_back(exact - Fraction(fl), i);
    }
    std::stable_sort(rem.begin(), rem.end(), [](const auto& a, const auto& b) {
        return a.first > b.first;
    });
    for (size_t i = 0; used < total && i < rem.size(); ++i, ++used)
    {
        ++out[rem[i].second];
    }
    return out;
}

CollectiveType
ToCollectiveType(SynthCollective c)
{
    switch (c)
    {
    case SynthCollective::ALLGATHER:
        return CollectiveType::AllGather;
    case SynthCollective::REDUCE_SCATTER:
        return CollectiveType::ReduceScatter;
    case SynthCollective::ALLREDUCE:
        return CollectiveType::AllReduce;
    }
    return CollectiveType::AllReduce;
}

} // namespace

uint64_t
BfbExactChunksPerShard(const BfbSchedule& s)
{
    constexpr uint64_t cap = std::numeric_limits<uint32_t>::max();
    uint64_t l = 1;
    auto add = [&](const Fraction& f) {
        l = boost::integer::lcm<uint64_t>(l, static_cast<uint64_t>(f.denominator()));
        l = std::min(l, cap);
    };
    for (const auto& w : s.pieceWeights)
    {
        add(w);
    }
    const uint32_t pieces = s.NumPieces();
    for (const auto& step : s.steps)
    {
        for (const auto& ns : step.nodes)
        {
            for (const auto& g : ns.groups)
            {
                for (uint32_t piece : g.pieces)
                {
                    for (const auto& sp : g.splits)
                    {
                        add(sp.fraction * s.pieceWeights[piece % pieces]);
                    }
                }
            }
        }
    }
    return l;
}

double
BfbPredictedTime(const BfbSchedule& s,
                 double bytes,
                 double nodeBandwidthBps,
                 double linkDelaySeconds)
{
    // a full packet: 4096 payload bytes in 4122 on the wire
    constexpr double kFrameBytes = 4122.0;
    constexpr double kPayloadBytes = 4096.0;
    const double alpha = linkDelaySeconds + kFrameBytes * 8 / (nodeBandwidthBps / s.degree);
    return AlphaBetaTime(s.Steps(),
                         s.Tb(),
                         alpha,
                         bytes,
                         nodeBandwidthBps * kPayloadBytes / kFrameBytes);
}

uint32_t
BfbAutoChunksPerShard(const BfbSchedule& s, uint32_t cap)
{
    const uint64_t exact = BfbExactChunksPerShard(s);
    if (s.kind != SynthCollective::ALLGATHER)
    {
        uint64_t l = exact;
        for (uint64_t k = 2; k <= s.degree && l <= cap; ++k)
        {
            l = std::lcm(l, k);
        }
        if (l <= cap)
        {
            return static_cast<uint32_t>(l);
        }
    }
    return static_cast<uint32_t>(std::max<uint64_t>(1, std::min<uint64_t>(exact, cap)));
}

BfbChunkPlan
PlanBfbChunks(const BfbSchedule& s, uint64_t totalBytes, uint32_t chunksPerShard)
{
    const uint32_t n = s.nodes;
    FabricRequire(n >= 2, "BFB schedule nodes", n, "at least 2");
    FabricRequire(chunksPerShard >= 1, "chunksPerShard", chunksPerShard, "an integer >= 1");
    FabricRequire(static_cast<uint64_t>(n) * chunksPerShard <= std::numeric_limits<uint32_t>::max(),
                  "chunksPerShard",
                  chunksPerShard,
                  fmt::format("at most {} for N = {} (N * chunksPerShard < 2^32)",
                              std::numeric_limits<uint32_t>::max() / n,
                              n));
    bool hasGroups = s.steps.empty();
    for (const auto& step : s.steps)
    {
        hasGroups = hasGroups || !step.nodes.empty();
    }
    FabricRequire(hasGroups,
                  "BFB schedule",
                  s.graphName,
                  "a schedule with its per-host groups (BfbOptions::keepSchedule = true)");

    BfbChunkPlan plan;
    plan.nodes = n;
    plan.chunksPerShard = chunksPerShard;
    const uint32_t cps = chunksPerShard;
    const uint32_t chunks = n * cps;
    const auto shardBytes = SplitBytes(totalBytes, n);
    plan.chunkBytes.reserve(chunks);
    for (uint32_t v = 0; v < n; ++v)
    {
        for (uint64_t b : SplitBytes(shardBytes[v], cps))
        {
            plan.chunkBytes.push_back(b);
        }
    }

    // chunk run of every piece of a shard
    const uint32_t pieces = s.NumPieces();
    const std::vector<uint32_t> pieceCount = LargestRemainder(cps, s.pieceWeights);
    std::vector<uint32_t> pieceStart(pieces, 0);
    for (uint32_t p = 1; p < pieces; ++p)
    {
        pieceStart[p] = pieceStart[p - 1] + pieceCount[p - 1];
    }

    // allgather steps: the step at which each host got each chunk (0: its own)
    std::vector<uint32_t> heldSince;
    auto resetHeld = [&]() {
        heldSince.assign(static_cast<size_t>(n) * chunks, kNotHeld);
        for (uint32_t v = 0; v < n; ++v)
        {
            for (uint32_t k = 0; k < cps; ++k)
            {
                heldSince[static_cast<size_t>(v) * chunks + v * cps + k] = 0;
            }
        }
    };
    bool inAllGather = false;

    const uint32_t numArcs = static_cast<uint32_t>(s.arcs.size());
    std::vector<uint64_t> arcBytes(numArcs, 0);
    std::vector<uint32_t> arcChunks(numArcs, 0); // assigned, this node-step
    std::vector<Fraction> arcTarget(numArcs, 0); // exact, in chunks of the rounded pieces
    std::vector<Fraction> arcExact(numArcs, 0);  // exact BFB load, in shards
    std::vector<uint32_t> touched;
    std::vector<uint32_t> counts;
    std::vector<uint32_t> order;
    std::vector<Fraction> rems;

    for (size_t t = 0; t < s.steps.size(); ++t)
    {
        const BfbStep& step = s.steps[t];
        const uint32_t stepNo = static_cast<uint32_t>(t + 1);
        const bool ag = step.phase == SynthCollective::ALLGATHER;
        if (ag && !inAllGather)
        {
            resetHeld();
        }
        inAllGather = ag;
        std::fill(arcBytes.begin(), arcBytes.end(), 0);
        uint64_t stepMax = 0;
        Fraction stepErr(0);
        for (const BfbNodeStep& ns : step.nodes)
        {
            touched.clear();
            for (const BfbGroup& g : ns.groups)
            {
                for (uint32_t piece : g.pieces)
                {
                    const uint32_t v = piece / pieces;
                    const uint32_t pp = piece % pieces;
                    const uint32_t k = pieceCount[pp];
                    const size_t m = g.splits.size();
                    counts.assign(m, 0);
                    rems.assign(m, Fraction(0));
                    order.clear();
                    uint32_t used = 0;
                    for (size_t i = 0; i < m; ++i)
                    {
                        const BfbSplit& sp = g.splits[i];
                        FabricRequire(sp.arc < numArcs,
                                      "BFB schedule arc",
                                      sp.arc,
                                      fmt::format("an arc id < {}", numArcs));
                        if (arcChunks[sp.arc] == 0 && arcTarget[sp.arc] == 0 &&
                            arcExact[sp.arc] == 0)
                        {
                            touched.push_back(sp.arc);
                        }
                        const Fraction exact = sp.fraction * Fraction(k);
                        const auto fl =
                            static_cast<uint32_t>(exact.numerator() / exact.denominator());
                        counts[i] = fl;
                        used += fl;
                        rems[i] = exact - Fraction(fl);
                        arcTarget[sp.arc] += exact;
                        arcExact[sp.arc] += sp.fraction * s.pieceWeights[pp];
                        if (rems[i] > 0)
                        {
                            order.push_back(static_cast<uint32_t>(i));
                        }
                    }
                    // the remaining chunks: arcs lagging furthest behind their exact load first
                    auto lag = [&](uint32_t i) {
                        const uint32_t a = g.splits[i].arc;
                        return arcTarget[a] - Fraction(arcChunks[a] + counts[i]);
                    };
                    std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
                        const Fraction lx = lag(x);
                        const Fraction ly = lag(y);
                        if (lx != ly)
                        {
                            return lx > ly;
                        }
                        if (rems[x] != rems[y])
                        {
                            return rems[x] > rems[y];
                        }
                        return g.splits[x].arc < g.splits[y].arc;
                    });
                    for (size_t j = 0; used < k && j < order.size(); ++j, ++used)
                    {
                        ++counts[order[j]];
                    }
                    FabricRequire(used == k,
                                  "BFB schedule split",
                                  fmt::format("piece {} at step {}", piece, stepNo),
                                  "fractions that sum to 1");
                    // hand out the piece's chunks in split order
                    uint32_t c = v * cps + pieceStart[pp];
                    for (size_t i = 0; i < m; ++i)
                    {
                        const BfbSplit& sp = g.splits[i];
                        const auto& arc = s.arcs[sp.arc];
                        arcChunks[sp.arc] += counts[i];
                        if (counts[i] > 0)
                        {
                            FabricRequire(arc.from != arc.to,
                                          "BFB schedule arc",
                                          fmt::format("{} ({} -> {})", sp.arc, arc.from, arc.to),
                                          "an arc between two hosts (self-loops carry no data)");
                        }
                        for (uint32_t j = 0; j < counts[i]; ++j, ++c)
                        {
                            if (ag)
                            {
                                const size_t src = static_cast<size_t>(arc.from) * chunks + c;
                                FabricRequire(heldSince[src] < stepNo,
                                              "BFB schedule",
                                              fmt::format("host {} sends chunk {} of shard {} at "
                                                          "step {}",
                                                          arc.from,
                                                          c,
                                                          v,
                                                          stepNo),
                                              "a sender that received the chunk in an earlier "
                                              "step");
                                uint32_t& dst = heldSince[static_cast<size_t>(arc.to) * chunks + c];
                                dst = std::min(dst, stepNo);
                            }
                            arcBytes[sp.arc] += plan.chunkBytes[c];
                            plan.transfers.push_back(
                                {stepNo, step.phase, sp.arc, arc.from, arc.to, c});
                        }
                    }
                }
            }
            for (uint32_t a : touched)
            {
                const Fraction err = Fraction(arcChunks[a], cps) - arcExact[a];
                stepErr = std::max(stepErr, err < 0 ? -err : err);
                stepMax = std::max(stepMax, arcBytes[a]);
                arcChunks[a] = 0;
                arcTarget[a] = 0;
                arcExact[a] = 0;
            }
        }
        plan.stepMaxArcBytes.push_back(stepMax);
        plan.stepRoundingError.push_back(stepErr);
    }
    return plan;
}

CollectiveSchedule
BfbToCollectiveSchedule(const BfbSchedule& s,
                        uint64_t totalBytes,
                        uint32_t chunksPerShard,
                        BfbChunkPlan* planOut)
{
    BfbChunkPlan plan = PlanBfbChunks(s, totalBytes, chunksPerShard);
    CollectiveSchedule out(ToCollectiveType(s.kind), s.nodes, totalBytes);
    out.SetAlgorithm("bfb:" + s.graphName);
    const uint32_t cps = plan.chunksPerShard;
    for (uint32_t c = 0; c < plan.chunkBytes.size(); ++c)
    {
        const uint32_t owner = c / cps;
        switch (s.kind)
        {
        case SynthCollective::ALLGATHER:
            out.AddChunk(plan.chunkBytes[c], owner, kNoRank);
            break;
        case SynthCollective::REDUCE_SCATTER:
            out.AddChunk(plan.chunkBytes[c], kNoRank, owner);
            break;
        case SynthCollective::ALLREDUCE:
            out.AddChunk(plan.chunkBytes[c]);
            break;
        }
    }
    std::vector<size_t> opsPerRank(s.nodes, 0);
    for (const auto& x : plan.transfers)
    {
        ++opsPerRank[x.from];
        ++opsPerRank[x.to];
    }
    for (uint32_t r = 0; r < s.nodes; ++r)
    {
        out.ReserveOps(r, opsPerRank[r], 2 * opsPerRank[r]);
    }
    // A host sends on each arc in step order, as a thread block per
    // connection runs its steps: without it a later step's chunk whose data
    // came early goes first and holds up the earlier step's chunk behind it
    // (12 % per step on 1,024 hosts). BFB's steps depend only on earlier
    // steps, so this cannot deadlock.
    out.SetInOrderConnections(true);
    ScheduleBuilder b(out);
    // a host reduces what its in-arcs bring in one step in any order, so they
    // all flow at once instead of taking turns
    b.SetCommutingReduces(true);
    for (const auto& x : plan.transfers)
    {
        b.Transfer(x.from,
                   x.to,
                   x.chunk,
                   x.phase == SynthCollective::ALLGATHER ? RecvMode::Copy : RecvMode::Reduce);
    }
    if (planOut)
    {
        *planOut = std::move(plan);
    }
    return out;
}

} // namespace ns3
