/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Collective schedules: structure, checker, algorithms, JSON and metrics.
#include "ns3/collective-algorithms.h"
#include "ns3/collective-metrics.h"
#include "ns3/collective-schedule.h"
#include "ns3/fabric-error.h"
#include "ns3/schedule-checker.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

std::vector<uint32_t>
RankCounts()
{
    std::vector<uint32_t> ns;
    for (uint32_t n = 2; n <= 33; ++n)
    {
        ns.push_back(n);
    }
    ns.push_back(64);
    ns.push_back(128);
    return ns;
}

std::vector<uint32_t>
Divisors(uint32_t n)
{
    std::vector<uint32_t> d;
    for (uint32_t k = 1; k <= n; ++k)
    {
        if (n % k == 0)
        {
            d.push_back(k);
        }
    }
    return d;
}

/// Conservation: every send is matched by exactly one receive of the same
/// bytes, and the matched bytes add up to everything sent and received.
void
ExpectConservation(const CollectiveSchedule& s, const std::string& what)
{
    auto partner = s.MatchingOps();
    uint64_t matched = 0;
    uint64_t sends = 0;
    std::vector<std::vector<uint32_t>> hits(s.NumRanks());
    for (uint32_t r = 0; r < s.NumRanks(); ++r)
    {
        hits[r].assign(s.NumOps(r), 0);
    }
    for (uint32_t r = 0; r < s.NumRanks(); ++r)
    {
        for (uint32_t i = 0; i < s.NumOps(r); ++i)
        {
            const CollectiveOp& op = s.Op(r, i);
            if (op.kind != OpKind::Send)
            {
                continue;
            }
            ++sends;
            const uint32_t j = partner[r][i];
            const CollectiveOp& rv = s.Op(op.peer, j);
            ASSERT_EQ(rv.kind, OpKind::Recv) << what;
            ASSERT_EQ(rv.peer, r) << what;
            ASSERT_EQ(partner[op.peer][j], i) << what;
            ASSERT_EQ(rv.bytes, op.bytes) << what;
            ++hits[op.peer][j];
            matched += op.bytes;
        }
    }
    uint64_t recvs = 0;
    for (uint32_t r = 0; r < s.NumRanks(); ++r)
    {
        for (uint32_t i = 0; i < s.NumOps(r); ++i)
        {
            if (s.Op(r, i).kind == OpKind::Recv)
            {
                ++recvs;
                ASSERT_EQ(hits[r][i], 1U) << what << " recv " << r << "/" << i;
            }
        }
    }
    EXPECT_EQ(sends, recvs) << what;
    EXPECT_EQ(matched, s.TotalBytesSent()) << what;
    EXPECT_EQ(matched, s.TotalBytesReceived()) << what;
}

void
ExpectCorrect(const CollectiveSchedule& s, const std::string& what)
{
    ScheduleCheckResult r = ScheduleChecker::Check(s);
    ASSERT_TRUE(r.Ok()) << what << ": " << r.message;
    ExpectConservation(s, what);
}

uint64_t
SendsOf(const CollectiveSchedule& s, uint32_t r)
{
    uint64_t k = 0;
    for (const auto& op : s.Ops(r))
    {
        k += op.kind == OpKind::Send;
    }
    return k;
}

uint64_t
RecvsOf(const CollectiveSchedule& s, uint32_t r)
{
    return s.NumOps(r) - SendsOf(s, r);
}

/// Pipeline depth the generators use for a largest piece of \p piece bytes.
uint64_t
Depth(uint64_t piece, uint64_t chunk)
{
    return chunk == 0 || piece <= chunk ? 1 : (piece + chunk - 1) / chunk;
}

} // namespace

TEST(CollectiveSchedule, SplitBytesSpreadsRemainderFirst)
{
    EXPECT_EQ(SplitBytes(10, 4), (std::vector<uint64_t>{3, 3, 2, 2}));
    EXPECT_EQ(SplitBytes(3, 5), (std::vector<uint64_t>{1, 1, 1, 0, 0}));
    EXPECT_EQ(SplitBytes(8, 1), (std::vector<uint64_t>{8}));
    EXPECT_THROW(SplitBytes(8, 0), FabricConfigError);
    // Tiny buffers: zero-byte chunks still move (as synchronisation) and every byte counts.
    CollectiveSchedule s = RingAllReduce(8, 3, 0, 1);
    uint64_t sum = 0;
    uint32_t empty = 0;
    for (const ChunkInfo& c : s.Chunks())
    {
        sum += c.bytes;
        empty += c.bytes == 0;
    }
    EXPECT_EQ(sum, 3U);
    EXPECT_EQ(empty, 5U);
    EXPECT_TRUE(ScheduleChecker::Check(s).Ok());
}

// ---------------------------------------------------------------------------
// The checker accepts every algorithm for n = 2..33, 64, 128.

TEST(CollectiveAlgorithms, RingAcceptedForAllRankCounts)
{
    for (uint32_t n : RankCounts())
    {
        struct V
        {
            uint64_t bytes;
            uint64_t chunk;
            uint32_t channels;
        };

        std::vector<V> vs{{1000003, 0, 1}, {777, 7, 2}, {5, 0, 3}};
        for (const V& v : vs)
        {
            if (n >= 64 && v.chunk)
            {
                continue; // keep the big cases quick; chunking is covered below
            }
            for (auto* gen : {&RingAllReduce, &RingAllGather, &RingReduceScatter})
            {
                CollectiveSchedule s = (*gen)(n, v.bytes, v.chunk, v.channels);
                ExpectCorrect(s,
                              std::string(CollectiveTypeName(s.Type())) +
                                  " ring n=" + std::to_string(n));
            }
        }
    }
}

TEST(CollectiveAlgorithms, TreeAndHalvingDoublingAcceptedForAllRankCounts)
{
    for (uint32_t n : RankCounts())
    {
        for (uint64_t chunk : {uint64_t{0}, uint64_t{300}})
        {
            for (uint32_t ch : {1U, 2U})
            {
                ExpectCorrect(DoubleBinaryTreeAllReduce(n, 10007, chunk, ch),
                              "tree n=" + std::to_string(n));
                ExpectCorrect(HalvingDoublingAllReduce(n, 10007, chunk, ch),
                              "halving-doubling n=" + std::to_string(n));
            }
        }
    }
}

TEST(CollectiveAlgorithms, HierarchicalAcceptedForEveryDomainSize)
{
    for (uint32_t n : RankCounts())
    {
        for (uint32_t K : Divisors(n))
        {
            if (n >= 64 && K != 2 && K != 8 && K != n)
            {
                continue;
            }
            ExpectCorrect(HierarchicalAllReduce(n, K, 100003, 0, 1),
                          "hierarchical n=" + std::to_string(n) + " K=" + std::to_string(K));
            if (n <= 33)
            {
                ExpectCorrect(HierarchicalAllReduce(n, K, 100003, 1000, 2),
                              "hierarchical chunked n=" + std::to_string(n) +
                                  " K=" + std::to_string(K));
            }
        }
    }
}

TEST(CollectiveAlgorithms, AllToAllAcceptedDirectAndPxn)
{
    for (uint32_t n : RankCounts())
    {
        ExpectCorrect(DirectAllToAll(n, 4099, 0, 1), "direct n=" + std::to_string(n));
        for (uint32_t K : Divisors(n))
        {
            if (n >= 64 && K != 8)
            {
                continue;
            }
            ExpectCorrect(PxnAllToAll(n, K, 4099, 0, 1),
                          "pxn n=" + std::to_string(n) + " K=" + std::to_string(K));
        }
        if (n <= 16)
        {
            ExpectCorrect(DirectAllToAll(n, 4099, 50, 2), "direct chunked");
            ExpectCorrect(PxnAllToAll(n, n % 2 ? 1 : 2, 4099, 50, 2), "pxn chunked");
        }
    }
}

TEST(CollectiveAlgorithms, RootedAndSendRecvAccepted)
{
    for (uint32_t n : RankCounts())
    {
        for (uint32_t root : {0U, n / 2, n - 1})
        {
            for (uint64_t chunk : {uint64_t{0}, uint64_t{1000}})
            {
                const std::string tag = " n=" + std::to_string(n) + " root=" + std::to_string(root);
                ExpectCorrect(ChainBroadcast(n, root, 10001, chunk, 2), "chain broadcast" + tag);
                ExpectCorrect(ChainReduce(n, root, 10001, chunk, 2), "chain reduce" + tag);
                ExpectCorrect(TreeBroadcast(n, root, 10001, chunk, 1), "tree broadcast" + tag);
                ExpectCorrect(TreeReduce(n, root, 10001, chunk, 1), "tree reduce" + tag);
            }
        }
        ExpectCorrect(RingSendRecv(n, 12345, 1000, 2), "sendrecv n=" + std::to_string(n));
        std::vector<std::pair<uint32_t, uint32_t>> pipeline;
        for (uint32_t r = 0; r + 1 < n; ++r)
        {
            pipeline.emplace_back(r, r + 1);
        }
        ExpectCorrect(SendRecvPairs(n, pipeline, 999, 100, 1), "pipeline sendrecv");
    }
}

TEST(CollectiveAlgorithms, FactoryBuildsEveryCombination)
{
    for (uint32_t n : {2U, 6U, 12U, 16U})
    {
        for (std::string coll : {"allreduce",
                                 "allgather",
                                 "reducescatter",
                                 "alltoall",
                                 "broadcast",
                                 "reduce",
                                 "sendrecv"})
        {
            for (const std::string& alg : AlgorithmsFor(coll))
            {
                ScheduleRequest q;
                q.collective = coll;
                q.algorithm = alg;
                q.ranks = n;
                q.bytes = 65536 + 3;
                q.chunkBytes = 4096;
                q.channels = 2;
                q.root = n - 1;
                q.domainSize = 2;
                CollectiveSchedule s = MakeSchedule(q);
                EXPECT_EQ(s.Algorithm(), alg);
                EXPECT_EQ(CollectiveTypeName(s.Type()), coll);
                ExpectCorrect(s, coll + "/" + alg + " n=" + std::to_string(n));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Exact operation counts from closed forms.

TEST(CollectiveAlgorithms, RingOpCounts)
{
    for (uint32_t n : {2U, 3U, 7U, 8U, 17U})
    {
        for (uint32_t C : {1U, 3U})
        {
            for (uint64_t chunk : {uint64_t{0}, uint64_t{64}})
            {
                const uint64_t S = 12000;
                // largest piece: S split into C parts, then n pieces
                const uint64_t largest = ((S + C - 1) / C + n - 1) / n;
                const uint64_t P = Depth(largest, chunk);
                CollectiveSchedule ar = RingAllReduce(n, S, chunk, C);
                CollectiveSchedule ag = RingAllGather(n, S, chunk, C);
                CollectiveSchedule rs = RingReduceScatter(n, S, chunk, C);
                EXPECT_EQ(ar.NumChunks(), uint64_t{C} * n * P);
                for (uint32_t r = 0; r < n; ++r)
                {
                    EXPECT_EQ(SendsOf(ar, r), 2 * (n - 1) * C * P);
                    EXPECT_EQ(RecvsOf(ar, r), 2 * (n - 1) * C * P);
                    EXPECT_EQ(SendsOf(ag, r), (n - 1) * C * P);
                    EXPECT_EQ(SendsOf(rs, r), (n - 1) * C * P);
                }
                // Every chunk is at most chunkBytes and all bytes are there.
                uint64_t sum = 0;
                for (const ChunkInfo& c : ar.Chunks())
                {
                    sum += c.bytes;
                    if (chunk)
                    {
                        EXPECT_LE(c.bytes, chunk);
                    }
                }
                EXPECT_EQ(sum, S);
            }
        }
    }
    // Bytes: when n divides S, ring allreduce sends exactly 2(n-1)/n * S per rank.
    CollectiveSchedule s = RingAllReduce(8, 8000, 0, 1);
    for (uint32_t r = 0; r < 8; ++r)
    {
        EXPECT_EQ(s.BytesSent(r), 2 * 7 * 1000U);
        EXPECT_EQ(s.BytesReceived(r), 2 * 7 * 1000U);
    }
    auto tm = s.TrafficMatrix();
    ASSERT_EQ(tm.size(), 8U);
    for (const PairBytes& p : tm)
    {
        EXPECT_EQ(p.dst, (p.src + 1) % 8);
        EXPECT_EQ(p.messages, 14U);
    }
}

TEST(CollectiveAlgorithms, TreeHalvingDoublingHierarchicalOpCounts)
{
    for (uint32_t n : {2U, 5U, 8U, 12U, 31U})
    {
        const uint32_t C = 2;
        // Double binary tree: per part 2(n-1) transfers (n-1 up, n-1 down).
        CollectiveSchedule t = DoubleBinaryTreeAllReduce(n, 4000, 0, C);
        EXPECT_EQ(t.TotalOps(), 2ULL * (2 * C) * 2 * (n - 1));
        auto trees = DoubleBinaryTree(n);
        for (uint32_t r = 0; r < n; ++r)
        {
            uint64_t expected = 0;
            for (const auto& tr : trees)
            {
                expected += (tr.parent[r] != kNoRank) + tr.children[r].size();
            }
            EXPECT_EQ(SendsOf(t, r), expected * C) << "n=" << n << " r=" << r;
        }
        // Halving-doubling: one message per step (2 log2 p of them) per rank
        // of the power-of-two core, moving 2(p-1) pieces in all, plus one of
        // p pieces for each fold and unfold; per channel and chunk of a piece.
        uint32_t p = 1;
        uint32_t log2p = 0;
        while (p * 2 <= n)
        {
            p *= 2;
            ++log2p;
        }
        for (uint64_t chunkBytes : {uint64_t{0}, uint64_t{100}})
        {
            CollectiveSchedule h = HalvingDoublingAllReduce(n, 4000, chunkBytes, C);
            const uint64_t P = h.NumChunks() / (uint64_t{C} * p); // chunks per piece
            EXPECT_EQ(h.NumChunks(), uint64_t{C} * p * P) << "n=" << n;
            EXPECT_EQ(P > 1, chunkBytes > 0) << "n=" << n;
            for (uint32_t r = 0; r < n; ++r)
            {
                uint64_t messages = r < p ? 2 * log2p : 1;
                uint64_t pieces = r < p ? 2 * (p - 1) : p;
                if (r < n - p)
                {
                    messages += 1; // unfold
                    pieces += p;
                }
                EXPECT_EQ(SendsOf(h, r), messages * C * P) << "n=" << n << " r=" << r;
                uint64_t moved = 0;
                for (const CollectiveOp& op : h.Ops(r))
                {
                    moved += op.kind == OpKind::Send ? op.count : 0;
                }
                EXPECT_EQ(moved, pieces * C * P) << "n=" << n << " r=" << r;
            }
        }
    }
    // Hierarchical: per rank and channel 2(K-1) in-domain messages, each moving
    // a piece's D sub-pieces (one op of count D), plus 2(D-1) rail sends.
    for (uint32_t K : {1U, 2U, 4U, 8U})
    {
        const uint32_t n = 32;
        const uint32_t D = n / K;
        CollectiveSchedule s = HierarchicalAllReduce(n, K, 1 << 20, 0, 2);
        for (uint32_t r = 0; r < n; ++r)
        {
            EXPECT_EQ(SendsOf(s, r), 2ULL * (2 * (K - 1) + 2 * (D - 1))) << "K=" << K;
            for (const CollectiveOp& op : s.Ops(r))
            {
                EXPECT_EQ(op.count, op.peer / K == r / K ? D : 1U) << "K=" << K;
            }
        }
        // Traffic between domains stays on rails: same local index.
        for (const PairBytes& pb : s.TrafficMatrix())
        {
            if (pb.src / K != pb.dst / K)
            {
                EXPECT_EQ(pb.src % K, pb.dst % K);
            }
        }
    }
}

TEST(CollectiveAlgorithms, AllToAllOpCountsAndRails)
{
    const uint32_t K = 4;
    const uint32_t D = 3;
    const uint32_t n = K * D;
    CollectiveSchedule d = DirectAllToAll(n, 1200, 0, 1);
    CollectiveSchedule x = PxnAllToAll(n, K, 1200, 0, 1);
    for (uint32_t r = 0; r < n; ++r)
    {
        EXPECT_EQ(SendsOf(d, r), n - 1);
        EXPECT_EQ(d.BytesSent(r), 1200U / n * (n - 1));
        EXPECT_EQ(SendsOf(x, r), (K - 1) + (D - 1) + 2 * (K - 1) * (D - 1));
    }
    uint64_t nvlink = 0;
    uint64_t rail = 0;
    for (const PairBytes& pb : x.TrafficMatrix())
    {
        if (pb.src / K != pb.dst / K)
        {
            EXPECT_EQ(pb.src % K, pb.dst % K) << pb.src << "->" << pb.dst;
            rail += pb.bytes;
        }
        else
        {
            nvlink += pb.bytes;
        }
    }
    // Per GPU: (K-1)/K of its buffer over NVLink, (D-1)/D over its NIC.
    EXPECT_EQ(nvlink, uint64_t{n} * 1200 * (K - 1) / K);
    EXPECT_EQ(rail, uint64_t{n} * 1200 * (D - 1) / D);
    // The direct version sends across rails.
    bool crossRail = false;
    for (const PairBytes& pb : d.TrafficMatrix())
    {
        crossRail |= pb.src / K != pb.dst / K && pb.src % K != pb.dst % K;
    }
    EXPECT_TRUE(crossRail);
}

TEST(CollectiveAlgorithms, DoubleBinaryTreeShape)
{
    for (uint32_t n = 2; n <= 70; ++n)
    {
        auto trees = DoubleBinaryTree(n);
        uint32_t innerInBoth = 0;
        std::vector<uint32_t> inner(n, 0);
        for (const auto& t : trees)
        {
            EXPECT_EQ(t.topDown.size(), n);
            EXPECT_EQ(t.parent[t.root], kNoRank);
            uint32_t h = 0;
            for (uint32_t r = 0; r < n; ++r)
            {
                EXPECT_LE(t.children[r].size(), 2U);
                inner[r] += !t.children[r].empty();
                uint32_t depth = 0;
                for (uint32_t v = r; v != t.root; v = t.parent[v])
                {
                    ++depth;
                    ASSERT_LE(depth, n);
                }
                h = std::max(h, depth);
            }
            EXPECT_EQ(h, t.height);
            // log-depth: within two of floor(log2 n) + 1
            EXPECT_LE(t.height, static_cast<uint32_t>(std::log2(n)) + 2);
        }
        for (uint32_t r = 0; r < n; ++r)
        {
            innerInBoth += inner[r] == 2;
        }
        EXPECT_LE(innerInBoth, n % 2 == 0 ? 0U : 1U) << "n=" << n;
    }
}

// ---------------------------------------------------------------------------
// Broken schedules are rejected, naming rank and chunk.

TEST(ScheduleChecker, DroppedTransferIsWrongResultAtTheReceiver)
{
    const uint32_t n = 6;
    CollectiveSchedule s = RingAllReduce(n, 600, 0, 1);
    // The last send of rank 2 feeds the last allgather receive of rank 3.  Drop both.
    uint32_t sendIdx = s.NumOps(2) - 1;
    while (s.Op(2, sendIdx).kind != OpKind::Send)
    {
        --sendIdx;
    }
    const uint32_t chunk = s.Op(2, sendIdx).chunk;
    const uint32_t recvIdx = s.MatchingOps()[2][sendIdx];
    ASSERT_EQ(s.Op(3, recvIdx).kind, OpKind::Recv);
    ASSERT_EQ(s.Op(3, recvIdx).chunk, chunk);
    s.RemoveOp(2, sendIdx);
    s.RemoveOp(3, recvIdx);
    ScheduleCheckResult r = ScheduleChecker::Check(s);
    ASSERT_EQ(r.status, CheckStatus::WrongResult) << r.message;
    EXPECT_EQ(r.rank, 3U);
    EXPECT_EQ(r.chunk, chunk);
    EXPECT_EQ(r.expected.size(), n);
    EXPECT_LT(r.held.size(), n);
    EXPECT_NE(r.message.find("rank 3 chunk " + std::to_string(chunk)), std::string::npos)
        << r.message;
}

TEST(ScheduleChecker, DroppedSingleOpIsStructureError)
{
    CollectiveSchedule s = RingAllGather(5, 500, 0, 1);
    uint32_t idx = 0;
    while (s.Op(1, idx).kind != OpKind::Send)
    {
        ++idx;
    }
    const CollectiveOp victim = s.Op(1, idx); // rank 1's first send
    s.RemoveOp(1, idx);
    ScheduleCheckResult r = ScheduleChecker::Check(s);
    ASSERT_EQ(r.status, CheckStatus::InvalidStructure);
    EXPECT_EQ(r.rank, victim.peer); // its receive is left without a send
    EXPECT_EQ(r.chunk, victim.chunk);
    EXPECT_NE(r.message.find("chunk " + std::to_string(victim.chunk)), std::string::npos)
        << r.message;
    EXPECT_THROW(s.Validate(), FabricConfigError);
}

TEST(ScheduleChecker, WrongPeer)
{
    // Structurally broken: a send to the wrong peer leaves counts unmatched.
    CollectiveSchedule s = RingAllReduce(4, 400, 0, 1);
    s.MutableOp(0, 0).peer = 2;
    ScheduleCheckResult r = ScheduleChecker::Check(s);
    EXPECT_EQ(r.status, CheckStatus::InvalidStructure) << r.message;
    EXPECT_NE(r.rank, kNoRank);
    EXPECT_NE(r.chunk, kNoIndex);

    // Consistently wrong: rank 0's chunk goes to rank 1 twice, never to rank 2.
    CollectiveSchedule g(CollectiveType::AllGather, 3, 3);
    for (uint32_t k = 0; k < 3; ++k)
    {
        g.AddChunk(1, k);
    }
    ScheduleBuilder b(g);
    b.Transfer(0, 1, 0, RecvMode::Copy);
    b.Transfer(0, 1, 0, RecvMode::Copy); // should have been rank 2
    b.Transfer(1, 0, 1, RecvMode::Copy);
    b.Transfer(1, 2, 1, RecvMode::Copy);
    b.Transfer(2, 0, 2, RecvMode::Copy);
    b.Transfer(2, 1, 2, RecvMode::Copy);
    r = ScheduleChecker::Check(g);
    ASSERT_EQ(r.status, CheckStatus::WrongResult) << r.message;
    EXPECT_EQ(r.rank, 2U);
    EXPECT_EQ(r.chunk, 0U);
    EXPECT_TRUE(r.held.empty());
    EXPECT_EQ(r.expected, std::vector<uint32_t>{0});
}

TEST(ScheduleChecker, DoubleReduce)
{
    CollectiveSchedule s(CollectiveType::AllReduce, 3, 10);
    s.AddChunk(10);
    ScheduleBuilder b(s);
    b.Transfer(0, 1, 0, RecvMode::Reduce);
    b.Transfer(1, 2, 0, RecvMode::Reduce);
    b.Transfer(0, 2, 0, RecvMode::Reduce); // rank 0 was already counted at rank 2
    ScheduleCheckResult r = ScheduleChecker::Check(s);
    ASSERT_EQ(r.status, CheckStatus::DoubleCount) << r.message;
    EXPECT_EQ(r.rank, 2U);
    EXPECT_EQ(r.chunk, 0U);
    EXPECT_EQ(r.held, (std::vector<uint32_t>{0, 1, 2}));
    EXPECT_NE(r.message.find("{0}"), std::string::npos) << r.message;

    // The same bug inside a generated ring: after the reduce-scatter rank 2
    // holds piece 2 (chunk 2) reduced over all; rank 1 reduces its partial
    // sum of it in once more (properly ordered after everything else).
    CollectiveSchedule ring = RingReduceScatter(4, 400, 0, 1);
    auto lastOn = [&](uint32_t rank, uint32_t c) {
        std::vector<uint32_t> d;
        for (uint32_t i = 0; i < ring.NumOps(rank); ++i)
        {
            if (ring.Op(rank, i).chunk == c)
            {
                d = {i};
            }
        }
        return d;
    };
    ring.AddSend(1, 2, 2, lastOn(1, 2));
    ring.AddRecv(2, 2, 1, RecvMode::Reduce, lastOn(2, 2));
    r = ScheduleChecker::Check(ring);
    ASSERT_EQ(r.status, CheckStatus::DoubleCount) << r.message;
    EXPECT_EQ(r.rank, 2U);
    EXPECT_EQ(r.chunk, 2U);
    EXPECT_EQ(r.held, (std::vector<uint32_t>{0, 1, 2, 3}));
}

TEST(ScheduleChecker, MissingDependencyIsARace)
{
    CollectiveSchedule s = RingAllReduce(5, 500, 0, 1);
    // Find a send of rank 3 that forwards a received chunk and cut its dependency.
    uint32_t victim = kNoIndex;
    for (uint32_t i = 0; i < s.NumOps(3); ++i)
    {
        if (s.Op(3, i).kind == OpKind::Send && !s.Deps(3, i).empty())
        {
            victim = i;
            break;
        }
    }
    ASSERT_NE(victim, kNoIndex);
    const auto deps = s.Deps(3, victim);
    const std::vector<uint32_t> saved(deps.begin(), deps.end());
    s.SetDeps(3, victim, {});
    ScheduleCheckResult r = ScheduleChecker::Check(s);
    ASSERT_EQ(r.status, CheckStatus::Race) << r.message;
    EXPECT_EQ(r.rank, 3U);
    EXPECT_EQ(r.op, victim);
    EXPECT_EQ(r.chunk, s.Op(3, victim).chunk);
    // Restoring the dependency fixes it.
    s.SetDeps(3, victim, saved);
    EXPECT_TRUE(ScheduleChecker::Check(s).Ok());
}

TEST(ScheduleChecker, CommutingReduceReceivesMayRunInAnyOrder)
{
    // Ranks 1 and 2 reduce into rank 0 (unordered), which then broadcasts.
    CollectiveSchedule s(CollectiveType::AllReduce, 3, 10);
    s.AddChunk(10);
    ScheduleBuilder b(s);
    b.SetCommutingReduces(true);
    b.Transfer(1, 0, 0, RecvMode::Reduce);
    b.Transfer(2, 0, 0, RecvMode::Reduce);
    b.Transfer(0, 1, 0, RecvMode::Copy);
    b.Transfer(0, 2, 0, RecvMode::Copy);
    EXPECT_TRUE(s.Deps(0, 1).empty()); // the second receive waits for nothing
    ScheduleCheckResult r = ScheduleChecker::Check(s);
    EXPECT_TRUE(r.Ok()) << r.message;
    // A send ordered after only one member of the group is a race.
    s.SetDeps(0, 2, {1});
    r = ScheduleChecker::Check(s);
    EXPECT_EQ(r.status, CheckStatus::Race) << r.message;
}

TEST(ScheduleChecker, WriteAfterReadRace)
{
    // Rank 1 forwards chunk 0 to 2 while a second copy into chunk 0 may land first.
    CollectiveSchedule s(CollectiveType::Broadcast, 3, 8);
    s.SetRoot(0);
    s.AddChunk(8);
    s.AddRecv(1, 0, 0, RecvMode::Copy);      // op 0
    s.AddSend(1, 0, 2, {0});                 // op 1
    s.AddRecv(1, 0, 0, RecvMode::Copy, {0}); // op 2: must also wait for op 1
    s.AddSend(0, 0, 1);
    s.AddSend(0, 0, 1);
    s.AddRecv(2, 0, 1, RecvMode::Copy);
    ScheduleCheckResult r = ScheduleChecker::Check(s);
    ASSERT_EQ(r.status, CheckStatus::Race) << r.message;
    EXPECT_EQ(r.rank, 1U);
    EXPECT_EQ(r.op, 2U);
    s.SetDeps(1, 2, {1});
    EXPECT_TRUE(ScheduleChecker::Check(s).Ok()) << ScheduleChecker::Check(s).message;
}

TEST(ScheduleChecker, DeadlockCycle)
{
    // A ring where every rank first waits to receive, then forwards.
    const uint32_t n = 4;
    CollectiveSchedule s(CollectiveType::AllGather, n, n);
    for (uint32_t k = 0; k < n; ++k)
    {
        s.AddChunk(1, k);
    }
    for (uint32_t r = 0; r < n; ++r)
    {
        s.AddRecv(r, (r + n - 1) % n, (r + n - 1) % n, RecvMode::Copy);
        s.AddSend(r, r, (r + 1) % n, {0}); // needless wait on the receive
    }
    ScheduleCheckResult res = ScheduleChecker::Check(s);
    ASSERT_EQ(res.status, CheckStatus::Deadlock) << res.message;
    EXPECT_EQ(res.cycle.size(), 2 * n);
    EXPECT_EQ(res.rank, 0U);
    EXPECT_EQ(res.op, 0U);
    EXPECT_EQ(res.chunk, n - 1);
    EXPECT_NE(res.message.find("waits for"), std::string::npos);

    // Without the needless dependency it runs, but one step only moves each
    // rank's own chunk to its neighbour: rank 0 lacks chunk 1 first.
    for (uint32_t r = 0; r < n; ++r)
    {
        s.SetDeps(r, 1, {});
    }
    res = ScheduleChecker::Check(s);
    EXPECT_EQ(res.status, CheckStatus::WrongResult) << res.message;
    EXPECT_EQ(res.rank, 0U);
    EXPECT_EQ(res.chunk, 1U);
}

/// Rank 2 sends chunk 0 to rank 0 only after rank 1 forwarded chunk 1 to it;
/// rank 0 forwards chunk 0 to rank 1 (its first send on 0 -> 1) and sends
/// chunk 1 to rank 1 (its second, needing nothing).
CollectiveSchedule
ForwardingTriangle()
{
    CollectiveSchedule s(CollectiveType::SendRecv, 3, 10);
    s.AddChunk(10, 2, 1); // chunk 0: rank 2's for rank 1, through rank 0
    s.AddChunk(10, 0, 2); // chunk 1: rank 0's for rank 2, through rank 1
    s.AddRecv(0, 0, 2, RecvMode::Copy);
    s.AddSend(0, 0, 1, {0});
    s.AddSend(0, 1, 1);
    s.AddRecv(1, 0, 0, RecvMode::Copy);
    s.AddRecv(1, 1, 0, RecvMode::Copy);
    s.AddSend(1, 1, 2, {1});
    s.AddRecv(2, 1, 1, RecvMode::Copy);
    s.AddSend(2, 0, 0, {0});
    return s;
}

TEST(ScheduleChecker, InOrderConnectionsCanDeadlockWhatRunsOutOfOrder)
{
    // Out of order, rank 0's second send leaves at once and everything runs.
    CollectiveSchedule s = ForwardingTriangle();
    ScheduleCheckResult res = ScheduleChecker::Check(s);
    ASSERT_TRUE(res.Ok()) << res.message;
    // In order (as an MSCCL thread block runs), that send waits for the
    // first one, which waits for rank 2, which waits for that send.
    s.SetInOrderConnections(true);
    res = ScheduleChecker::Check(s);
    ASSERT_EQ(res.status, CheckStatus::Deadlock) << res.message;
    // the cycle: rank 0's receive of c0 waits for rank 2's send, which waits
    // for its receive of c1, for rank 1's send of c1, for its receive, for
    // rank 0's send of c1, for rank 0's send of c0 (the connection's turn),
    // for rank 0's receive of c0
    EXPECT_EQ(res.cycle.size(), 7U) << res.message;
    const std::pair<uint32_t, uint32_t> connectionWait{0, 2};
    EXPECT_NE(std::find(res.cycle.begin(), res.cycle.end(), connectionWait), res.cycle.end())
        << res.message;
    // with the two sends on different channels they are two connections
    CollectiveSchedule t(CollectiveType::SendRecv, 3, 10);
    t.AddChunk(10, 2, 1);
    t.AddChunk(10, 0, 2);
    t.AddRecv(0, 0, 2, RecvMode::Copy);
    t.AddSend(0, 0, 1, {0});
    t.AddSend(0, 1, 1, {}, 1);
    t.AddRecv(1, 0, 0, RecvMode::Copy);
    t.AddRecv(1, 1, 0, RecvMode::Copy, {}, 1);
    t.AddSend(1, 1, 2, {1});
    t.AddRecv(2, 1, 1, RecvMode::Copy);
    t.AddSend(2, 0, 0, {0});
    t.SetInOrderConnections(true);
    res = ScheduleChecker::Check(t);
    EXPECT_TRUE(res.Ok()) << res.message;
}

TEST(ScheduleChecker, DataErrors)
{
    // Send before receive in a broadcast: rank 1 has nothing yet.
    CollectiveSchedule b(CollectiveType::Broadcast, 3, 4);
    b.SetRoot(0);
    b.AddChunk(4);
    ScheduleBuilder bb(b);
    bb.Transfer(1, 2, 0, RecvMode::Copy);
    bb.Transfer(0, 1, 0, RecvMode::Copy);
    ScheduleCheckResult r = ScheduleChecker::Check(b);
    ASSERT_EQ(r.status, CheckStatus::SendWithoutData) << r.message;
    EXPECT_EQ(r.rank, 1U);
    EXPECT_EQ(r.chunk, 0U);

    // Reduce into a chunk the receiver does not hold (allgather starts empty).
    CollectiveSchedule g(CollectiveType::AllGather, 2, 2);
    g.AddChunk(1, 0);
    g.AddChunk(1, 1);
    ScheduleBuilder gb(g);
    gb.Transfer(0, 1, 0, RecvMode::Reduce);
    gb.Transfer(1, 0, 1, RecvMode::Copy);
    r = ScheduleChecker::Check(g);
    ASSERT_EQ(r.status, CheckStatus::ReduceIntoEmpty) << r.message;
    EXPECT_EQ(r.rank, 1U);
    EXPECT_EQ(r.chunk, 0U);
}

TEST(ScheduleChecker, StructureErrors)
{
    CollectiveSchedule s = RingAllReduce(4, 400, 0, 1);
    {
        CollectiveSchedule t = s;
        t.MutableOp(2, 1).peer = 9;
        auto i = t.FindStructureError();
        ASSERT_TRUE(i.has_value());
        EXPECT_EQ(i->parameter, "ranks[2].ops[1].peer");
        EXPECT_EQ(i->rank, 2U);
    }
    {
        CollectiveSchedule t = s;
        t.MutableOp(1, 0).peer = 1; // itself
        EXPECT_TRUE(t.FindStructureError().has_value());
    }
    {
        CollectiveSchedule t = s;
        t.SetDeps(1, 2, {2}); // not strictly backwards
        auto i = t.FindStructureError();
        ASSERT_TRUE(i.has_value());
        EXPECT_EQ(i->parameter, "ranks[1].ops[2].deps");
    }
    {
        CollectiveSchedule t = s;
        t.MutableOp(0, 0).bytes += 1;
        auto i = t.FindStructureError();
        ASSERT_TRUE(i.has_value());
        EXPECT_EQ(i->parameter, "ranks[0].ops[0].bytes");
    }
    {
        CollectiveSchedule t = s;
        t.SetTotalBytes(401); // chunks no longer add up
        auto i = t.FindStructureError();
        ASSERT_TRUE(i.has_value());
        EXPECT_EQ(i->parameter, "chunks");
    }
    {
        CollectiveSchedule t = s;
        t.MutableOp(0, 0).chunk = (t.Op(0, 0).chunk + 1) % t.NumChunks();
        t.MutableOp(0, 0).bytes = t.Chunk(t.Op(0, 0).chunk).bytes;
        auto i = t.FindStructureError(); // matching receive names another chunk
        ASSERT_TRUE(i.has_value());
        EXPECT_EQ(i->rank, 1U);
    }
    {
        CollectiveSchedule t = ChainBroadcast(4, 0, 100, 0, 1);
        t.SetRoot(7);
        auto i = t.FindStructureError();
        ASSERT_TRUE(i.has_value());
        EXPECT_EQ(i->parameter, "root");
    }
    try
    {
        CollectiveSchedule t = s;
        t.MutableOp(3, 0).peer = 3;
        t.Validate();
        FAIL() << "no exception";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_NE(std::string(e.what()).find("ranks[3].ops[0].peer"), std::string::npos)
            << e.what();
    }
}

// ---------------------------------------------------------------------------
// JSON

namespace
{

void
ExpectSameSchedule(const CollectiveSchedule& a, const CollectiveSchedule& b)
{
    ASSERT_EQ(a.Type(), b.Type());
    ASSERT_EQ(a.Root(), b.Root());
    ASSERT_EQ(a.Algorithm(), b.Algorithm());
    ASSERT_EQ(a.Communicator(), b.Communicator());
    ASSERT_EQ(a.TotalBytes(), b.TotalBytes());
    ASSERT_EQ(a.NumChunks(), b.NumChunks());
    for (uint32_t c = 0; c < a.NumChunks(); ++c)
    {
        ASSERT_EQ(a.Chunk(c).bytes, b.Chunk(c).bytes);
        ASSERT_EQ(a.Chunk(c).src, b.Chunk(c).src);
        ASSERT_EQ(a.Chunk(c).dst, b.Chunk(c).dst);
    }
    ASSERT_EQ(a.NumRanks(), b.NumRanks());
    for (uint32_t r = 0; r < a.NumRanks(); ++r)
    {
        ASSERT_EQ(a.NumOps(r), b.NumOps(r));
        for (uint32_t i = 0; i < a.NumOps(r); ++i)
        {
            const CollectiveOp& x = a.Op(r, i);
            const CollectiveOp& y = b.Op(r, i);
            ASSERT_EQ(x.kind, y.kind);
            ASSERT_EQ(x.mode, y.mode);
            ASSERT_EQ(x.channel, y.channel);
            ASSERT_EQ(x.peer, y.peer);
            ASSERT_EQ(x.count, y.count);
            ASSERT_EQ(x.chunk, y.chunk);
            ASSERT_EQ(x.bytes, y.bytes);
            auto dx = a.Deps(r, i);
            auto dy = b.Deps(r, i);
            ASSERT_EQ(std::vector<uint32_t>(dx.begin(), dx.end()),
                      std::vector<uint32_t>(dy.begin(), dy.end()));
        }
    }
}

/// The message of the FabricConfigError \p f throws ("" if none).
std::string
ErrorOf(const std::function<void()>& f)
{
    try
    {
        f();
    }
    catch (const FabricConfigError& e)
    {
        return e.what();
    }
    return "";
}

} // namespace

/// AllGather on 3 ranks: chunks 0 and 1 come from rank 0 and travel as one
/// message (count 2) to rank 1, which forwards both to rank 2 in one message;
/// chunk 2 comes from rank 1.
CollectiveSchedule
RangedAllGather()
{
    CollectiveSchedule s(CollectiveType::AllGather, 3, 300);
    s.AddChunk(100, 0);
    s.AddChunk(100, 0);
    s.AddChunk(100, 1);
    s.AddSend(0, 0, 1, {}, 0, 2);
    const uint32_t in = s.AddRecv(1, 0, 0, RecvMode::Copy, {}, 0, 2);
    s.AddSend(1, 0, 2, {in}, 0, 2);
    s.AddRecv(2, 0, 1, RecvMode::Copy, {}, 0, 2);
    s.AddSend(1, 2, 0);
    s.AddSend(1, 2, 2);
    s.AddRecv(0, 2, 1, RecvMode::Copy);
    s.AddRecv(2, 2, 1, RecvMode::Copy);
    return s;
}

TEST(ScheduleChecker, OpsMovingSeveralChunks)
{
    CollectiveSchedule s = RangedAllGather();
    EXPECT_EQ(s.Op(0, 0).bytes, 200U);
    ScheduleCheckResult ok = ScheduleChecker::Check(s);
    ASSERT_TRUE(ok.Ok()) << ok.message;
    // Conservation: every byte sent is received once, 2 x 200 + 2 x 100.
    uint64_t sent = 0;
    uint64_t received = 0;
    for (uint32_t r = 0; r < 3; ++r)
    {
        for (const CollectiveOp& op : s.Ops(r))
        {
            (op.kind == OpKind::Send ? sent : received) += op.bytes;
        }
    }
    EXPECT_EQ(sent, 600U);
    EXPECT_EQ(received, 600U);
    // Forwarding without waiting for the receive races on the first chunk of the run.
    CollectiveSchedule race = RangedAllGather();
    race.SetDeps(1, 1, {});
    ScheduleCheckResult r = ScheduleChecker::Check(race);
    ASSERT_EQ(r.status, CheckStatus::Race) << r.message;
    EXPECT_EQ(r.rank, 1U);
    EXPECT_EQ(r.chunk, 0U);
    EXPECT_NE(r.message.find("chunks 0-1"), std::string::npos) << r.message;
    // A receive naming one chunk of a two-chunk send does not match it.
    CollectiveSchedule mismatch(CollectiveType::AllGather, 2, 200);
    mismatch.AddChunk(100, 0);
    mismatch.AddChunk(100, 0);
    mismatch.AddSend(0, 0, 1, {}, 0, 2);
    mismatch.AddRecv(1, 0, 0, RecvMode::Copy);
    ScheduleCheckResult m = ScheduleChecker::Check(mismatch);
    EXPECT_EQ(m.status, CheckStatus::InvalidStructure) << m.message;
    EXPECT_NE(m.message.find("x 2"), std::string::npos) << m.message;
    // A run past the last chunk is refused by name.
    try
    {
        mismatch.AddSend(0, 1, 1, {}, 0, 2);
        ADD_FAILURE() << "a run past the last chunk was accepted";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_NE(std::string(e.what()).find("count"), std::string::npos) << e.what();
    }
    // JSON keeps the count; a count of 0 is refused naming the field.
    CollectiveSchedule back = CollectiveSchedule::FromJson(s.ToJson());
    ExpectSameSchedule(s, back);
    nlohmann::json j = s.ToJson();
    j["ranks"][0]["ops"][0]["count"] = 0;
    try
    {
        CollectiveSchedule::FromJson(j);
        ADD_FAILURE() << "count 0 was accepted";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_NE(std::string(e.what()).find(".count"), std::string::npos) << e.what();
    }
}

TEST(ScheduleJson, RoundTrip)
{
    std::vector<CollectiveSchedule> all{RingAllReduce(5, 1001, 100, 2),
                                        DoubleBinaryTreeAllReduce(7, 999, 0, 1),
                                        HierarchicalAllReduce(8, 4, 4097, 0, 1),
                                        PxnAllToAll(6, 3, 600, 0, 1),
                                        ChainBroadcast(4, 2, 77, 10, 1),
                                        TreeReduce(5, 1, 77, 0, 1),
                                        RingReduceScatter(3, 10, 0, 1),
                                        RingSendRecv(3, 10, 0, 1)};
    all[0].SetCommunicator({10, 11, 12, 13, 14});
    for (const CollectiveSchedule& s : all)
    {
        CollectiveSchedule t = CollectiveSchedule::FromJson(s.ToJson());
        ExpectSameSchedule(s, t);
        EXPECT_EQ(s.ToJson(), t.ToJson());
        CollectiveSchedule u = CollectiveSchedule::FromJsonString(s.ToJsonString(2));
        ExpectSameSchedule(s, u);
        EXPECT_TRUE(ScheduleChecker::Check(u).Ok());
    }
    const std::string path = testing::TempDir() + "gpu-fabric-schedule.json";
    all[3].Save(path);
    ExpectSameSchedule(all[3], CollectiveSchedule::Load(path));
    std::remove(path.c_str());
    // a full disk is named, not silent (a small file is written at close)
    if (std::FILE* f = std::fopen("/dev/full", "w"))
    {
        std::fclose(f);
        try
        {
            all[3].Save("/dev/full");
            ADD_FAILURE() << "Save to /dev/full did not throw";
        }
        catch (const FabricConfigError& e)
        {
            EXPECT_NE(std::string(e.what()).find("a path with room to write"), std::string::npos)
                << e.what();
        }
    }
}

TEST(ScheduleJson, DocumentedFormat)
{
    // A hand-written file in the documented format loads and is correct.
    const char* text = R"({
      "format": "gpu-fabric-collective-schedule", "version": 1,
      "collective": "allreduce", "algorithm": "hand", "communicator": [4, 9],
      "total_bytes": 10,
      "chunks": [{"bytes": 10}],
      "ranks": [
        {"ops": [{"op": "send", "chunk": 0, "peer": 1},
                 {"op": "recv", "chunk": 0, "peer": 1, "mode": "copy", "deps": [0]}]},
        {"ops": [{"op": "recv", "chunk": 0, "peer": 0, "mode": "reduce", "bytes": 10, "channel": 0},
                 {"op": "send", "chunk": 0, "peer": 0, "deps": [0]}]}
      ]})";
    CollectiveSchedule s = CollectiveSchedule::FromJsonString(text);
    EXPECT_EQ(s.Communicator(), (std::vector<uint32_t>{4, 9}));
    EXPECT_EQ(s.Op(0, 1).mode, RecvMode::Copy);
    EXPECT_EQ(s.Op(1, 0).bytes, 10U);
    EXPECT_TRUE(ScheduleChecker::Check(s).Ok()) << ScheduleChecker::Check(s).message;
}

TEST(ScheduleJson, MalformedIsRejectedNamingTheField)
{
    const nlohmann::json good = RingAllReduce(3, 30, 0, 1).ToJson();
    auto reject = [&](const std::function<void(nlohmann::json&)>& edit, const std::string& field) {
        nlohmann::json j = good;
        edit(j);
        std::string msg = ErrorOf([&] { CollectiveSchedule::FromJson(j); });
        EXPECT_NE(msg.find(field), std::string::npos)
            << "expected '" << field << "' in '" << msg << "'";
    };
    reject([](nlohmann::json& j) { j.erase("collective"); }, "schedule.collective");
    reject([](nlohmann::json& j) { j["collective"] = "allsum"; }, "allsum");
    reject([](nlohmann::json& j) { j["total_bytes"] = -3; }, "schedule.total_bytes");
    reject([](nlohmann::json& j) { j["total_bytes"] = "30"; }, "schedule.total_bytes");
    reject([](nlohmann::json& j) { j["communicator"] = nlohmann::json::array(); },
           "schedule.communicator");
    reject([](nlohmann::json& j) { j["communicator"] = {1, 1, 2}; }, "communicator");
    reject([](nlohmann::json& j) { j["chunks"][0].erase("bytes"); }, "schedule.chunks[0].bytes");
    reject([](nlohmann::json& j) { j["ranks"][1]["ops"][2].erase("peer"); },
           "schedule.ranks[1].ops[2].peer");
    reject([](nlohmann::json& j) { j["ranks"][1]["ops"][2]["peer"] = 3; },
           "schedule.ranks[1].ops[2].peer");
    reject([](nlohmann::json& j) { j["ranks"][0]["ops"][1]["op"] = "put"; },
           "schedule.ranks[0].ops[1].op");
    reject(
        [](nlohmann::json& j) {
            for (auto& op : j["ranks"][2]["ops"])
            {
                if (op["op"] == "recv")
                {
                    op["mode"] = "sum";
                    break;
                }
            }
        },
        "mode");
    reject([](nlohmann::json& j) { j["ranks"][0]["ops"][1]["deps"] = {5}; },
           "ranks[0].ops[1].deps");
    reject([](nlohmann::json& j) { j["ranks"][0]["ops"][1]["deps"] = "0"; },
           "schedule.ranks[0].ops[1].deps");
    reject([](nlohmann::json& j) { j["ranks"][0]["ops"][0]["chunk"] = 99; },
           "schedule.ranks[0].ops[0].chunk");
    reject([](nlohmann::json& j) { j["ranks"].erase(2); }, "schedule.ranks");
    reject([](nlohmann::json& j) { j["version"] = 2; }, "schedule.version");
    reject([](nlohmann::json& j) { j["ranks"][0]["ops"].erase(0); }, "ranks[");
    std::string msg = ErrorOf([] { CollectiveSchedule::FromJsonString("{\"collective\": "); });
    EXPECT_NE(msg.find("schedule JSON"), std::string::npos) << msg;
    msg = ErrorOf([] { CollectiveSchedule::Load("/nonexistent/dir/x.json"); });
    EXPECT_NE(msg.find("schedule file"), std::string::npos) << msg;
}

TEST(ScheduleJson, InOrderConnectionsRoundTrip)
{
    CollectiveSchedule s = RingAllReduce(4, 4000, 100, 1);
    EXPECT_FALSE(s.ToJson().contains("in_order_connections"));
    s.SetInOrderConnections(true);
    const nlohmann::json j = s.ToJson();
    EXPECT_EQ(j.at("in_order_connections"), true);
    EXPECT_TRUE(CollectiveSchedule::FromJson(j).InOrderConnections());
    EXPECT_FALSE(
        CollectiveSchedule::FromJson(RingAllReduce(4, 4000, 100, 1).ToJson()).InOrderConnections());
    nlohmann::json bad = j;
    bad["in_order_connections"] = "yes";
    const std::string msg = ErrorOf([&] { CollectiveSchedule::FromJson(bad); });
    EXPECT_NE(msg.find("schedule.in_order_connections"), std::string::npos) << msg;
    EXPECT_NE(msg.find("true or false"), std::string::npos) << msg;
}

// ---------------------------------------------------------------------------
// Factory errors

TEST(CollectiveAlgorithms, FactoryRejectsBadNames)
{
    ScheduleRequest q;
    q.collective = "allreduce";
    q.algorithm = "ring";
    q.ranks = 8;
    q.bytes = 1024;
    EXPECT_NO_THROW(MakeSchedule(q));

    auto param = [](const ScheduleRequest& r) {
        try
        {
            MakeSchedule(r);
        }
        catch (const FabricConfigError& e)
        {
            return e.Parameter() + " | " + e.what();
        }
        return std::string("no error");
    };
    ScheduleRequest bad = q;
    bad.collective = "allsum";
    EXPECT_EQ(param(bad).rfind("collective |", 0), 0U) << param(bad);
    bad = q;
    bad.algorithm = "butterfly";
    EXPECT_EQ(param(bad).rfind("algorithm |", 0), 0U) << param(bad);
    bad = q;
    bad.collective = "allgather";
    bad.algorithm = "tree";
    EXPECT_NE(param(bad).find("for allgather: ring"), std::string::npos) << param(bad);
    bad = q;
    bad.collective = "alltoall";
    bad.algorithm = "ring";
    EXPECT_NE(param(bad).find("direct, pxn"), std::string::npos) << param(bad);
    bad = q;
    bad.algorithm = "hierarchical";
    EXPECT_EQ(param(bad).rfind("domainSize |", 0), 0U) << param(bad);
    bad.domainSize = 3;
    EXPECT_EQ(param(bad).rfind("domainSize |", 0), 0U) << param(bad);
    bad = q;
    bad.ranks = 1;
    EXPECT_EQ(param(bad).rfind("ranks |", 0), 0U) << param(bad);
    bad = q;
    bad.channels = 0;
    EXPECT_EQ(param(bad).rfind("channels |", 0), 0U) << param(bad);
    bad = q;
    bad.collective = "broadcast";
    bad.root = 8;
    EXPECT_EQ(param(bad).rfind("root |", 0), 0U) << param(bad);
    bad = q;
    bad.chunkBytes = 1;
    bad.bytes = uint64_t{1} << 40; // 2^40 one-byte chunks
    EXPECT_EQ(param(bad).rfind("chunkBytes |", 0), 0U) << param(bad);

    // A communicator of global ids is carried into the schedule.
    ScheduleRequest c = q;
    c.ranks = 0;
    c.communicator = {8, 9, 10, 11};
    CollectiveSchedule s = MakeSchedule(c);
    EXPECT_EQ(s.NumRanks(), 4U);
    EXPECT_EQ(s.Communicator(), c.communicator);
}

// ---------------------------------------------------------------------------
// Metrics

TEST(CollectiveMetrics, BusBandwidthFactors)
{
    EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveType::AllReduce, 8), 1.75);
    EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveType::AllGather, 8), 0.875);
    EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveType::ReduceScatter, 4), 0.75);
    EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveType::AllToAll, 2), 0.5);
    EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveType::Broadcast, 8), 1.0);
    EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveType::Reduce, 8), 1.0);
    EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveType::SendRecv, 8), 1.0);
    EXPECT_DOUBLE_EQ(AlgorithmBandwidth(1000000000, 0.5), 2e9);
    EXPECT_DOUBLE_EQ(BusBandwidth(CollectiveType::AllReduce, 8, 1000000000, 1.0), 1.75e9);
    EXPECT_DOUBLE_EQ(ToGBps(1.75e9), 1.75);
    EXPECT_THROW(AlgorithmBandwidth(1, 0), FabricConfigError);
}

TEST(CollectiveMetrics, AlphaBetaFormulas)
{
    AlphaBetaParams p;
    p.alpha = 5e-6;
    p.linkRateBps = 400e9;
    const uint64_t S = 1 << 30;
    const double B = 400e9 / 8; // bytes per second
    // Unpipelined ring allreduce: 2(n-1)(alpha + S/(nB)).
    EXPECT_NEAR(RingAllReduceTime(8, S, p), 14 * (5e-6 + S / 8.0 / B), 1e-12);
    EXPECT_NEAR(RingAllGatherTime(8, S, p), 7 * (5e-6 + S / 8.0 / B), 1e-12);
    // Pipelined: bandwidth term unchanged, latency paid per step only once per chunk hop.
    p.chunkBytes = 1 << 20;
    const double c = (S / 8.0) / std::ceil((S / 8.0) / (1 << 20));
    const double step = S / 8.0 / B;
    EXPECT_NEAR(RingAllReduceTime(8, S, p), 13 * std::max(5e-6 + c / B, step) + 5e-6 + step, 1e-12);
    // Chain broadcast pipelined: (n-2)(alpha + c/B) + alpha + S/B.
    EXPECT_NEAR(ChainBroadcastTime(4, S, p), 2 * (5e-6 + (1 << 20) / B) + 5e-6 + S / B, 1e-12);
    p.chunkBytes = 0;
    EXPECT_NEAR(ChainBroadcastTime(4, S, p), 3 * (5e-6 + S / B), 1e-12);
    // Halving-doubling on 8 and on 12 (fold/unfold).
    EXPECT_NEAR(HalvingDoublingAllReduceTime(8, S, p), 6 * 5e-6 + 2 * 7.0 / 8 * S / B, 1e-12);
    EXPECT_NEAR(HalvingDoublingAllReduceTime(12, S, p),
                6 * 5e-6 + 2 * 7.0 / 8 * S / B + 2 * (5e-6 + S / B),
                1e-12);
    // Double binary tree: large-message limit is 2S/B.
    p.alpha = 0;
    p.chunkBytes = 1 << 16;
    EXPECT_NEAR(DoubleBinaryTreeAllReduceTime(16, S, p) / (2 * S / B), 1.0, 0.01);
    EXPECT_NEAR(SendRecvTime(S, p), S / B, 1e-12);

    // Hierarchical: in the domain a step moves a piece's D sub-pieces as one
    // message: (K-1)(alpha + S/(K Bnv)) per phase; on the rail one message
    // per step: 2(D-1)(alpha + S/(K D Bnic)).
    AlphaBetaParams h;
    h.alpha = 2e-6;
    h.domainSize = 8;
    h.nvlinkRateBps = 3.6e12;
    h.nicRateBps = 400e9;
    const double bnv = 3.6e12 / 8;
    const double bnic = 400e9 / 8;
    EXPECT_NEAR(HierarchicalAllReduceTime(32, S, h),
                2 * 7 * (2e-6 + S / 8.0 / bnv) + 6 * (2e-6 + S / 32.0 / bnic),
                1e-12);
    // PXN vs direct on a rail-optimized fat-tree: overhead is the NVLink step.
    h.alpha = 0;
    const double direct = DirectAllToAllTime(32, S, h);
    const double pxn = PxnAllToAllTime(32, S, h);
    EXPECT_NEAR(direct, 24.0 / 32 * S / bnic, 1e-12);
    EXPECT_NEAR(pxn, 7.0 / 8 * S / bnv + 3.0 / 4 * S / bnic, 1e-12);
    EXPECT_NEAR((pxn - direct) / direct, (7.0 / 8) / (3.0 / 4) * 400e9 / 3.6e12, 1e-9);
    h.chunkBytes = 1 << 16;
    EXPECT_LT(PxnAllToAllTime(32, S, h), pxn); // overlapped when chunked
    // Flat direct all-to-all: (n-1)/n S/B.
    EXPECT_NEAR(DirectAllToAllTime(8, S, p), 7.0 / 8 * S / B, 1e-12);
    // Name-based prediction agrees and rejects nonsense.
    EXPECT_DOUBLE_EQ(PredictedTime("allreduce", "ring", 8, S, p), RingAllReduceTime(8, S, p));
    EXPECT_THROW(PredictedTime("allgather", "pxn", 8, S, p), FabricConfigError);
    // the double binary tree's closed form needs a rank with two children
    // in each tree: with 2 or 3 ranks the ports move S or 1.5S, not 2S
    EXPECT_THROW(DoubleBinaryTreeAllReduceTime(3, S, p), FabricConfigError);
    EXPECT_NO_THROW(DoubleBinaryTreeAllReduceTime(4, S, p));
    EXPECT_THROW(PredictedTime("allreduce", "ring", 8, S, AlphaBetaParams{}), FabricConfigError);
}

// ---------------------------------------------------------------------------
// A large ring is correct (speed is measured by bench programs, never here).

TEST(CollectiveAlgorithms, LargeRingIsCorrectAndHasTheClosedFormOpCount)
{
    CollectiveSchedule s = RingAllReduce(1024, uint64_t{1} << 30, 0, 1);
    ScheduleCheckResult r = ScheduleChecker::Check(s);
    ASSERT_TRUE(r.Ok()) << r.message;
    EXPECT_EQ(s.TotalOps(), 1024ULL * 4 * 1023);
}
