/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "collective-algorithms.h"

#include "collective-algorithms-internal.h"

#include "ns3/fabric-error.h"
#include "ns3/fabric-memory.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace ns3
{

namespace
{

/// Dense (rank, chunk) tables above this many entries switch to a hash map.
constexpr uint64_t kDenseLimit = uint64_t{1} << 22;
/// Chunk indices must stay below this.
constexpr uint64_t kMaxChunks = uint64_t{1} << 31;

void
RequireRanks(uint32_t ranks)
{
    FabricRequire(ranks >= 2, "ranks", ranks, "at least 2");
}

void
RequireChannels(uint32_t channels, uint32_t perChannel = 1)
{
    FabricRequire(channels >= 1 && uint64_t{channels} * perChannel <= 65535,
                  "channels",
                  channels,
                  fmt::format("1 to {}", 65535 / perChannel));
}

void
RequireDomain(uint32_t ranks, uint32_t domainSize)
{
    FabricRequire(domainSize >= 1 && ranks % domainSize == 0,
                  "domainSize",
                  domainSize,
                  fmt::format("a divisor of ranks ({}), at least 1", ranks));
}

void
RequireRoot(uint32_t ranks, uint32_t root)
{
    FabricRequire(root < ranks, "root", root, fmt::format("a local index below {}", ranks));
}

/// Pipeline depth: chunks per piece so that no chunk exceeds chunkBytes.
uint64_t
PipelineDepth(uint64_t largestPiece, uint64_t chunkBytes)
{
    if (chunkBytes == 0 || largestPiece <= chunkBytes)
    {
        return 1;
    }
    return (largestPiece + chunkBytes - 1) / chunkBytes;
}

/// The largest piece of TwoLevelSplit(bytes, outer, inner) (inner 1:
/// SplitBytes(bytes, outer)), without building the pieces.
uint64_t
LargestPiece(uint64_t bytes, uint64_t outer, uint64_t inner = 1)
{
    const uint64_t part = bytes / outer + (bytes % outer != 0);
    return part / inner + (part % inner != 0);
}

/// P, the chunks per piece of \p pieces pieces of up to \p largest bytes,
/// checked against the chunk limit of a schedule (pieces is a double: a
/// hostile all-to-all has more than 2^64).
uint32_t
DepthOf(double pieces, uint64_t largest, uint64_t chunkBytes)
{
    const uint64_t P = PipelineDepth(largest, chunkBytes);
    FabricRequire(
        pieces * static_cast<double>(P) < static_cast<double>(kMaxChunks),
        "chunkBytes",
        chunkBytes,
        fmt::format("a size giving fewer than {} chunks ({:.0f} pieces of up to {} bytes)",
                    kMaxChunks,
                    pieces,
                    largest));
    return static_cast<uint32_t>(P);
}

/// P, the chunks per piece (from the largest piece), checked against the
/// chunk limit of a schedule.
uint32_t
PiecesDepth(const std::vector<uint64_t>& pieces, uint64_t chunkBytes)
{
    const uint64_t largest = pieces.empty() ? 0 : *std::max_element(pieces.begin(), pieces.end());
    return DepthOf(static_cast<double>(pieces.size()), largest, chunkBytes);
}

/// The memory estimate of a schedule's chunks and operations (with two
/// dependencies per operation), bytes.
double
ScheduleBytes(double chunks, double ops)
{
    return chunks * sizeof(ChunkInfo) + ops * (sizeof(CollectiveOp) + 2 * sizeof(uint32_t));
}

/**
 * Refuse, before they are allocated, chunks and operations whose memory
 * estimate cannot fit (--chunk-bytes=1 on a large message makes a chunk of
 * every byte, and a ring moves each one 2(n - 1) times).
 * The message names chunkBytes if it split the pieces, else the ranks (the
 * chunks are then the pieces: a ring of n ranks has n of them, moved 2(n - 1)
 * times by each rank).
 * \param ranks ranks of the schedule \param chunkBytes the chunk size asked for
 * \param size depth, chunks and operations of the schedule
 * \return \p size
 */
ScheduleSizeEstimate
RequireScheduleFits(uint32_t ranks, uint64_t chunkBytes, const ScheduleSizeEstimate& size)
{
    const bool chunked = size.depth > 1;
    FabricRequireMemory(
        size.bytes,
        chunked ? "chunkBytes" : "ranks",
        chunked ? uint64_t{chunkBytes} : uint64_t{ranks},
        fmt::format("the schedule ({:.0f} chunks, {:.0f} operations)", size.chunks, size.ops));
    return size;
}

/// A schedule of \p pieces pieces of up to \p largest bytes, with
/// \p transfers transfers (a Send and a Recv each) per pipelining chunk of a
/// piece: its depth P, chunks and operations.
ScheduleSizeEstimate
SizeOf(double pieces, uint64_t largest, uint64_t chunkBytes, double transfers)
{
    ScheduleSizeEstimate e;
    e.depth = DepthOf(pieces, largest, chunkBytes);
    e.chunks = pieces * static_cast<double>(e.depth);
    e.ops = 2 * transfers * static_cast<double>(e.depth);
    e.bytes = ScheduleBytes(e.chunks, e.ops);
    return e;
}

// Closed forms of each generator's size (n ranks, C channels, P depth), all
// exact; the tests hold them to NumChunks() and TotalOps().

/// Ring: C n pieces, each passed on n - 1 times per pass (two passes for
/// allreduce): 2 n (n - 1) C P transfers for allreduce.
ScheduleSizeEstimate
RingSize(CollectiveType type, uint32_t n, uint64_t bytes, uint64_t chunkBytes, uint32_t channels)
{
    const double passes = type == CollectiveType::AllReduce ? 2.0 : 1.0;
    return SizeOf(static_cast<double>(channels) * n,
                  LargestPiece(bytes, channels, n),
                  chunkBytes,
                  passes * (n - 1.0) * n * channels);
}

/// Double binary tree: 2C pieces, each up (n - 1) and down (n - 1) its tree.
ScheduleSizeEstimate
TreeSize(uint32_t n, uint64_t bytes, uint64_t chunkBytes, uint32_t channels)
{
    const uint64_t parts = uint64_t{2} * channels;
    return SizeOf(double(parts), LargestPiece(bytes, parts), chunkBytes, 2.0 * (n - 1.0) * parts);
}

/// Halving-doubling on p = 2^floor(log2 n): C p pieces; each step's range of
/// pieces is one message per channel and chunk of a piece: log2 p halving and
/// log2 p doubling steps of p messages, a fold and an unfold per extra rank
/// (n - p): 2 C P (p log2 p + n - p) transfers.
ScheduleSizeEstimate
HalvingDoublingSize(uint32_t n, uint64_t bytes, uint64_t chunkBytes, uint32_t channels)
{
    uint64_t p = 1;
    while (p * 2 <= n)
    {
        p *= 2;
    }
    uint32_t steps = 0;
    for (uint64_t q = p; q > 1; q /= 2)
    {
        ++steps;
    }
    // one message per (step, rank, channel, chunk of a piece): log2 p halving
    // and log2 p doubling steps of p ranks, n - p folds and unfolds
    return SizeOf(static_cast<double>(channels) * p,
                  LargestPiece(bytes, channels, p),
                  chunkBytes,
                  2.0 * channels * (static_cast<double>(p) * steps + (n - p)));
}

/// Hierarchical (K per domain, D = n / K domains): C n pieces; in each domain
/// 2 (K - 1) steps of K messages (each one operation moving D sub-pieces), on
/// each rail 2 (D - 1) steps of D: 2 C P n (K + D - 2) transfers.
ScheduleSizeEstimate
HierarchicalSize(uint32_t n, uint32_t K, uint64_t bytes, uint64_t chunkBytes, uint32_t channels)
{
    const double D = n / K;
    return SizeOf(static_cast<double>(channels) * n,
                  LargestPiece(bytes, channels, n),
                  chunkBytes,
                  2.0 * channels * n * (K + D - 2));
}

/// All-to-all: n^2 C pieces, n (n - 1) C of them moved. Direct: one hop each.
/// PXN (K per domain, D = n / K): two hops for the n (n - K) - n (D - 1)
/// pairs in other domains on other rails: C P n (2n - K - D) transfers.
ScheduleSizeEstimate
AllToAllSize(uint32_t n,
             uint32_t K,
             bool pxn,
             uint64_t bytes,
             uint64_t chunkBytes,
             uint32_t channels)
{
    const double D = n / K;
    const double pairs =
        pxn ? static_cast<double>(n) * (2.0 * n - K - D) : static_cast<double>(n) * (n - 1.0);
    return SizeOf(static_cast<double>(n) * n * channels,
                  LargestPiece(bytes, n, channels),
                  chunkBytes,
                  pairs * channels);
}

/// Chain or tree broadcast / reduce: C pieces, each over the n - 1 edges.
ScheduleSizeEstimate
RootedSize(uint32_t n, uint64_t bytes, uint64_t chunkBytes, uint32_t channels)
{
    return SizeOf(static_cast<double>(channels),
                  LargestPiece(bytes, channels),
                  chunkBytes,
                  (n - 1.0) * channels);
}

/// Send/receive of \p pairs pairs: C pieces per pair, each moved once.
ScheduleSizeEstimate
SendRecvSize(uint64_t pairs, uint64_t bytes, uint64_t chunkBytes, uint32_t channels)
{
    const double pieces = double(pairs) * channels;
    return SizeOf(pieces, LargestPiece(bytes, channels), chunkBytes, pieces);
}

/**
 * Adds pieces.size() * P chunks (piece-major) to \p s, where P is derived
 * from the largest piece; \return P.  src/dst give each piece's chunk fields.
 * The caller has checked the schedule's size (RequireScheduleFits).
 */
template <typename SrcFn, typename DstFn>
uint32_t
AddPieces(CollectiveSchedule& s,
          const std::vector<uint64_t>& pieces,
          uint64_t chunkBytes,
          SrcFn src,
          DstFn dst)
{
    const uint32_t P = PiecesDepth(pieces, chunkBytes);
    for (size_t k = 0; k < pieces.size(); ++k)
    {
        for (uint64_t b : SplitBytes(pieces[k], P))
        {
            s.AddChunk(b, src(k), dst(k));
        }
    }
    return P;
}

/// Splits \p bytes into outer parts, each into inner pieces (flattened, outer-major).
std::vector<uint64_t>
TwoLevelSplit(uint64_t bytes, uint64_t outer, uint64_t inner)
{
    std::vector<uint64_t> out;
    out.reserve(outer * inner);
    for (uint64_t part : SplitBytes(bytes, outer))
    {
        for (uint64_t p : SplitBytes(part, inner))
        {
            out.push_back(p);
        }
    }
    return out;
}

auto kNoSrc = [](size_t) { return kNoRank; };

/// Ring phases shared by allreduce, allgather and reduce-scatter.
CollectiveSchedule
Ring(CollectiveType type, uint32_t n, uint64_t bytes, uint64_t chunkBytes, uint32_t channels)
{
    RequireRanks(n);
    RequireChannels(channels);
    // every rank sends and receives each chunk 2(n - 1) times (allreduce)
    RequireScheduleFits(n, chunkBytes, RingSize(type, n, bytes, chunkBytes, channels));
    CollectiveSchedule s(type, n, bytes);
    s.SetAlgorithm("ring");
    auto pieces = TwoLevelSplit(bytes, channels, n);
    auto pieceRank = [n](size_t k) { return static_cast<uint32_t>(k % n); };
    uint32_t P;
    if (type == CollectiveType::AllGather)
    {
        P = AddPieces(s, pieces, chunkBytes, pieceRank, kNoSrc);
    }
    else if (type == CollectiveType::ReduceScatter)
    {
        P = AddPieces(s, pieces, chunkBytes, kNoSrc, pieceRank);
    }
    else
    {
        P = AddPieces(s, pieces, chunkBytes, kNoSrc, kNoSrc);
    }
    auto chunk = [&](uint32_t ch, uint32_t q, uint32_t j) { return (ch * n + q) * P + j; };
    const uint64_t perRank =
        uint64_t{2} * (type == CollectiveType::AllReduce ? 2 : 1) * (n - 1) * channels * P;
    for (uint32_t r = 0; r < n; ++r)
    {
        s.ReserveOps(r, perRank, 2 * perRank);
    }
    ScheduleBuilder b(s);
    if (type != CollectiveType::AllGather)
    {
        // Reduce-scatter: at step t rank r passes piece r-t-1 on, so after
        // n-1 steps rank r holds piece r reduced over all ranks.
        for (uint32_t t = 0; t + 1 < n; ++t)
        {
            for (uint32_t ch = 0; ch < channels; ++ch)
            {
                for (uint32_t j = 0; j < P; ++j)
                {
                    for (uint32_t r = 0; r < n; ++r)
                    {
                        uint32_t q = (r + 2 * n - t - 1) % n;
                        b.Transfer(r, (r + 1) % n, chunk(ch, q, j), RecvMode::Reduce, ch);
                    }
                }
            }
        }
    }
    if (type != CollectiveType::ReduceScatter)
    {
        // Allgather: at step t rank r passes piece r-t on (its own at t = 0).
        for (uint32_t t = 0; t + 1 < n; ++t)
        {
            for (uint32_t ch = 0; ch < channels; ++ch)
            {
                for (uint32_t j = 0; j < P; ++j)
                {
                    for (uint32_t r = 0; r < n; ++r)
                    {
                        uint32_t q = (r + n - t) % n;
                        b.Transfer(r, (r + 1) % n, chunk(ch, q, j), RecvMode::Copy, ch);
                    }
                }
            }
        }
    }
    return s;
}

/// AllToAll with K ranks per domain; K = 1 gives direct all-to-all.
CollectiveSchedule
AllToAll(uint32_t n, uint32_t K, bool pxn, uint64_t bytes, uint64_t chunkBytes, uint32_t channels)
{
    RequireRanks(n);
    RequireChannels(channels);
    RequireDomain(n, K);
    RequireScheduleFits(n, chunkBytes, AllToAllSize(n, K, pxn, bytes, chunkBytes, channels));
    CollectiveSchedule s(CollectiveType::AllToAll, n, bytes);
    s.SetAlgorithm(pxn ? "pxn" : "direct");
    // Pieces in (src, dst, channel) order; every source splits the same way.
    std::vector<uint64_t> perSrc = TwoLevelSplit(bytes, n, channels);
    std::vector<uint64_t> pieces;
    pieces.reserve(uint64_t{n} * n * channels);
    for (uint32_t i = 0; i < n; ++i)
    {
        pieces.insert(pieces.end(), perSrc.begin(), perSrc.end());
    }
    const uint64_t per = uint64_t{n} * channels;
    uint32_t P = AddPieces(
        s,
        pieces,
        chunkBytes,
        [&](size_t k) { return static_cast<uint32_t>(k / per); },
        [&](size_t k) { return static_cast<uint32_t>((k % per) / channels); });
    auto chunk = [&](uint32_t i, uint32_t j, uint32_t ch, uint32_t sub) {
        return static_cast<uint32_t>(((uint64_t{i} * n + j) * channels + ch) * P + sub);
    };
    auto dom = [K](uint32_t g) { return g / K; };
    auto loc = [K](uint32_t g) { return g % K; };
    ScheduleBuilder b(s);
    auto each = [&](uint32_t i, uint32_t j, uint32_t from, uint32_t to) {
        for (uint32_t ch = 0; ch < channels; ++ch)
        {
            for (uint32_t sub = 0; sub < P; ++sub)
            {
                b.Transfer(from, to, chunk(i, j, ch, sub), RecvMode::Copy, ch);
            }
        }
    };
    // First hops: inside the domain (direct, or to the GPU on j's rail).
    for (uint32_t t = 1; t < n; ++t)
    {
        for (uint32_t i = 0; i < n; ++i)
        {
            uint32_t j = (i + t) % n;
            if (dom(i) == dom(j))
            {
                each(i, j, i, j);
            }
            else if (pxn && loc(i) != loc(j))
            {
                each(i, j, i, dom(i) * K + loc(j));
            }
        }
    }
    // PXN in one chunk aggregates per destination rail as NCCL's PXN does:
    // the rail step starts when the NVLink step has delivered everything
    // (the two steps do not overlap, as the rail-only paper's model assumes);
    // with pipelining chunks are forwarded as they arrive.
    if (pxn && P == 1)
    {
        b.EndStep();
    }
    // Second hops: over the rails (or any direct pair without pxn).
    for (uint32_t t = 1; t < n; ++t)
    {
        for (uint32_t i = 0; i < n; ++i)
        {
            uint32_t j = (i + t) % n;
            if (dom(i) == dom(j))
            {
                continue;
            }
            uint32_t from = pxn && loc(i) != loc(j) ? dom(i) * K + loc(j) : i;
            each(i, j, from, j);
        }
    }
    return s;
}

/// Chain or tree broadcast / reduce.
CollectiveSchedule
RootedCollective(CollectiveType type,
                 bool tree,
                 uint32_t n,
                 uint32_t root,
                 uint64_t bytes,
                 uint64_t chunkBytes,
                 uint32_t channels)
{
    RequireRanks(n);
    RequireRoot(n, root);
    RequireChannels(channels);
    RequireScheduleFits(n, chunkBytes, RootedSize(n, bytes, chunkBytes, channels));
    CollectiveSchedule s(type, n, bytes);
    s.SetRoot(root);
    s.SetAlgorithm(tree ? "tree" : "ring");
    uint32_t P = AddPieces(s, SplitBytes(bytes, channels), chunkBytes, kNoSrc, kNoSrc);
    // parent[] of the tree in rank space (a chain is a tree of height n-1).
    std::vector<uint32_t> parent(n, kNoRank);
    std::vector<uint32_t> topDown;
    if (tree)
    {
        BinaryTree t = InOrderBinaryTree(n);
        for (uint32_t x = 0; x < n; ++x)
        {
            if (t.parent[x] != kNoRank)
            {
                parent[(x + root) % n] = (t.parent[x] + root) % n;
            }
        }
        for (uint32_t x : t.topDown)
        {
            topDown.push_back((x + root) % n);
        }
    }
    else
    {
        for (uint32_t k = 0; k < n; ++k)
        {
            topDown.push_back((root + k) % n);
            if (k > 0)
            {
                parent[(root + k) % n] = (root + k - 1) % n;
            }
        }
    }
    ScheduleBuilder b(s);
    b.SetCommutingReduces(tree); // a node takes both children's chunks at once
    for (uint32_t ch = 0; ch < channels; ++ch)
    {
        for (uint32_t j = 0; j < P; ++j)
        {
            const uint32_t c = ch * P + j;
            if (type == CollectiveType::Broadcast)
            {
                for (uint32_t v : topDown)
                {
                    if (v != root)
                    {
                        b.Transfer(parent[v], v, c, RecvMode::Copy, ch);
                    }
                }
            }
            else
            {
                for (auto it = topDown.rbegin(); it != topDown.rend(); ++it)
                {
                    if (*it != root)
                    {
                        b.Transfer(*it, parent[*it], c, RecvMode::Reduce, ch);
                    }
                }
            }
        }
    }
    return s;
}

} // namespace

// ---------------------------------------------------------------------------
// ScheduleBuilder

ScheduleBuilder::ScheduleBuilder(CollectiveSchedule& schedule)
    : m_s(schedule)
{
    const uint64_t cells = uint64_t{schedule.NumRanks()} * schedule.NumChunks();
    m_dense = cells <= kDenseLimit;
    if (m_dense)
    {
        m_table.resize(cells);
    }
}

void
ScheduleBuilder::SetCommutingReduces(bool commute)
{
    m_commute = commute;
}

void
ScheduleBuilder::AddWriters(const Access& a)
{
    if (a.group != kNoIndex)
    {
        m_deps.insert(m_deps.end(), m_groups[a.group].begin(), m_groups[a.group].end());
    }
    else if (a.writer != kNoIndex)
    {
        m_deps.push_back(a.writer);
    }
}

void
ScheduleBuilder::AddFence(uint32_t rank)
{
    if (!m_fence.empty() && !m_fence[rank].empty())
    {
        m_deps.insert(m_deps.end(), m_fence[rank].begin(), m_fence[rank].end());
    }
    std::sort(m_deps.begin(), m_deps.end());
    m_deps.erase(std::unique(m_deps.begin(), m_deps.end()), m_deps.end());
}

void
ScheduleBuilder::EndStep()
{
    const uint32_t n = m_s.NumRanks();
    if (m_stepStart.empty())
    {
        m_stepStart.assign(n, 0);
        m_fence.assign(n, {});
        m_seen.assign(2 * uint64_t{n}, kNoIndex);
    }
    for (uint32_t r = 0; r < n; ++r)
    {
        const uint32_t end = m_s.NumOps(r);
        if (end == m_stepStart[r])
        {
            continue; // idle in this step: still waits for its older steps
        }
        // The last Send to and the last Recv from each peer, scanning back.
        std::vector<uint32_t>& fence = m_fence[r];
        fence.clear();
        for (uint32_t i = end; i-- > m_stepStart[r];)
        {
            const CollectiveOp& op = m_s.Op(r, i);
            uint32_t& seen = m_seen[2 * op.peer + (op.kind == OpKind::Recv)];
            if (seen != r)
            {
                seen = r;
                fence.push_back(i);
            }
        }
        std::sort(fence.begin(), fence.end());
        m_stepStart[r] = end;
    }
    // m_seen holds ranks as stamps: reset so the next call starts clean.
    std::fill(m_seen.begin(), m_seen.end(), kNoIndex);
}

ScheduleBuilder::Access&
ScheduleBuilder::At(uint32_t rank, uint32_t chunk)
{
    const uint64_t key = uint64_t{rank} * m_s.NumChunks() + chunk;
    return m_dense ? m_table[key] : m_map[key];
}

void
ScheduleBuilder::Transfer(uint32_t src,
                          uint32_t dst,
                          uint32_t chunk,
                          RecvMode mode,
                          uint16_t channel,
                          uint32_t count)
{
    const uint32_t n = m_s.NumRanks();
    if (!(src < n && dst < n && src != dst))
    {
        throw FabricConfigError("transfer",
                                fmt::format("{}", fmt::format("{} -> {}", src, dst)),
                                fmt::format("two different local indices below {}", n));
    }
    if (!(chunk < m_s.NumChunks()))
    {
        throw FabricConfigError("chunk",
                                fmt::format("{}", chunk),
                                fmt::format("a chunk index below {}", m_s.NumChunks()));
    }
    if (!(count >= 1 && count <= m_s.NumChunks() - chunk))
    {
        throw FabricConfigError("count",
                                fmt::format("{}", count),
                                fmt::format("1 to {}", m_s.NumChunks() - chunk));
    }
    const uint32_t end = chunk + count;
    CollectiveOp op;
    op.peer = dst;
    op.chunk = chunk;
    op.count = count;
    op.channel = channel;
    op.bytes = m_s.RunBytes(chunk, count);
    // Sender: read after write, for every chunk it sends.
    {
        m_deps.clear();
        for (uint32_t c = chunk; c < end; ++c)
        {
            AddWriters(At(src, c));
        }
        AddFence(src);
        op.kind = OpKind::Send;
        const uint32_t idx = m_s.AddOp(src, op, m_deps.data(), m_deps.size());
        for (uint32_t c = chunk; c < end; ++c)
        {
            Access& a = At(src, c);
            if (a.nReaders < 2)
            {
                a.readers[a.nReaders] = idx;
            }
            else
            {
                if (a.overflow == kNoIndex)
                {
                    a.overflow = static_cast<uint32_t>(m_overflow.size());
                    m_overflow.emplace_back();
                }
                m_overflow[a.overflow].push_back(idx);
            }
            ++a.nReaders;
        }
    }
    // Receiver: write after write and write after read.
    op.kind = OpKind::Recv;
    op.mode = mode;
    op.peer = src;
    m_deps.clear();
    if (count == 1)
    {
        Access& a = At(dst, chunk);
        if (m_commute && mode == RecvMode::Reduce && a.writerReduces && a.nReaders == 0)
        {
            // Reductions commute: join the group of Reduce receives since the
            // last read, waiting only for what its first member waits for.
            const auto first = m_s.Deps(dst, a.writer);
            m_deps.assign(first.begin(), first.end());
            AddFence(dst);
            const uint32_t idx = m_s.AddOp(dst, op, m_deps.data(), m_deps.size());
            if (a.group == kNoIndex)
            {
                if (m_freeGroups.empty())
                {
                    a.group = static_cast<uint32_t>(m_groups.size());
                    m_groups.emplace_back();
                }
                else
                {
                    a.group = m_freeGroups.back();
                    m_freeGroups.pop_back();
                }
                m_groups[a.group].assign(1, a.writer);
            }
            m_groups[a.group].push_back(idx);
            return;
        }
    }
    for (uint32_t c = chunk; c < end; ++c)
    {
        Access& a = At(dst, c);
        AddWriters(a);
        for (uint32_t k = 0; k < std::min<uint32_t>(a.nReaders, 2); ++k)
        {
            m_deps.push_back(a.readers[k]);
        }
        if (a.overflow != kNoIndex)
        {
            m_deps.insert(m_deps.end(),
                          m_overflow[a.overflow].begin(),
                          m_overflow[a.overflow].end());
            m_overflow[a.overflow].clear();
        }
    }
    AddFence(dst);
    const uint32_t idx = m_s.AddOp(dst, op, m_deps.data(), m_deps.size());
    for (uint32_t c = chunk; c < end; ++c)
    {
        Access& a = At(dst, c);
        a.writer = idx;
        a.writerReduces = mode == RecvMode::Reduce;
        if (a.group != kNoIndex)
        {
            m_groups[a.group].clear();
            m_freeGroups.push_back(a.group);
            a.group = kNoIndex;
        }
        a.nReaders = 0;
    }
}

// ---------------------------------------------------------------------------
// Trees

BinaryTree
InOrderBinaryTree(uint32_t n)
{
    FabricRequire(n >= 1, "ranks", n, "at least 1");
    BinaryTree t;
    t.root = 0;
    t.parent.assign(n, kNoRank);
    t.children.assign(n, {});
    for (uint32_t r = 1; r < n; ++r)
    {
        const uint32_t b = r & (~r + 1);
        // r = b * m with m odd; the neighbour r +- b whose lowest bit is 2b is
        // the parent in the infinite in-order tree.
        uint64_t up = (r & (uint64_t{b} << 1)) ? r - b : uint64_t{r} + b;
        if (up >= n)
        {
            up = r - b; // nearest ancestor below n
        }
        t.parent[r] = static_cast<uint32_t>(up);
        t.children[up].push_back(r);
    }
    // Children were appended in increasing rank order already.
    std::vector<uint32_t> depth(n, 0);
    t.topDown.push_back(0);
    for (size_t k = 0; k < t.topDown.size(); ++k)
    {
        uint32_t v = t.topDown[k];
        for (uint32_t c : t.children[v])
        {
            depth[c] = depth[v] + 1;
            t.height = std::max(t.height, depth[c]);
            t.topDown.push_back(c);
        }
    }
    return t;
}

std::array<BinaryTree, 2>
DoubleBinaryTree(uint32_t n)
{
    RequireRanks(n);
    BinaryTree a = InOrderBinaryTree(n);
    // NCCL's placement: the mirror (n even) or the shift by one (n odd).
    auto place = [n](uint32_t x) { return n % 2 == 0 ? n - 1 - x : (x + 1) % n; };
    BinaryTree b;
    b.root = place(a.root);
    b.height = a.height;
    b.parent.assign(n, kNoRank);
    b.children.assign(n, {});
    for (uint32_t x = 0; x < n; ++x)
    {
        if (a.parent[x] != kNoRank)
        {
            b.parent[place(x)] = place(a.parent[x]);
        }
        for (uint32_t c : a.children[x])
        {
            b.children[place(x)].push_back(place(c));
        }
        std::sort(b.children[place(x)].begin(), b.children[place(x)].end());
    }
    for (uint32_t x : a.topDown)
    {
        b.topDown.push_back(place(x));
    }
    // Where the trees share an edge, each direction of it carries both trees'
    // streams on one connection, first in first out: a leaf queues its whole
    // input at once and the other tree's chunks wait behind it.  Shared edges
    // join a leaf of tree 1 to its parent; swapping two leaves of tree 1 keeps
    // its shape and who is inner where, so swap greedily until none is left.
    auto inA = [&](uint32_t x, uint32_t y) {
        return (x < n && a.parent[x] == y) || (y < n && a.parent[y] == x);
    };
    std::vector<uint32_t> leaves;
    for (uint32_t x = 0; x < n; ++x)
    {
        if (b.children[x].empty() && x != b.root)
        {
            leaves.push_back(x);
        }
    }
    std::vector<uint32_t> pos(n);
    for (uint32_t k = 0; k < n; ++k)
    {
        pos[b.topDown[k]] = k;
    }
    for (uint32_t y : leaves)
    {
        if (!inA(y, b.parent[y]))
        {
            continue;
        }
        for (uint32_t z : leaves)
        {
            const uint32_t py = b.parent[y];
            const uint32_t pz = b.parent[z];
            if (py == pz || inA(y, pz) || inA(z, py))
            {
                continue;
            }
            std::replace(b.children[py].begin(), b.children[py].end(), y, z);
            std::replace(b.children[pz].begin(), b.children[pz].end(), z, y);
            std::sort(b.children[py].begin(), b.children[py].end());
            std::sort(b.children[pz].begin(), b.children[pz].end());
            b.parent[y] = pz;
            b.parent[z] = py;
            std::swap(b.topDown[pos[y]], b.topDown[pos[z]]);
            std::swap(pos[y], pos[z]);
            break;
        }
    }
    return {std::move(a), std::move(b)};
}

// ---------------------------------------------------------------------------
// Generators

CollectiveSchedule
RingAllReduce(uint32_t ranks, uint64_t bytes, uint64_t chunkBytes, uint32_t channels)
{
    return Ring(CollectiveType::AllReduce, ranks, bytes, chunkBytes, channels);
}

CollectiveSchedule
RingAllGather(uint32_t ranks, uint64_t bytes, uint64_t chunkBytes, uint32_t channels)
{
    return Ring(CollectiveType::AllGather, ranks, bytes, chunkBytes, channels);
}

CollectiveSchedule
RingReduceScatter(uint32_t ranks, uint64_t bytes, uint64_t chunkBytes, uint32_t channels)
{
    return Ring(CollectiveType::ReduceScatter, ranks, bytes, chunkBytes, channels);
}

CollectiveSchedule
DoubleBinaryTreeAllReduce(uint32_t n, uint64_t bytes, uint64_t chunkBytes, uint32_t channels)
{
    RequireRanks(n);
    RequireChannels(channels, 2);
    // refused before the trees are built
    RequireScheduleFits(n, chunkBytes, TreeSize(n, bytes, chunkBytes, channels));
    return DoubleBinaryTreeAllReduce(DoubleBinaryTree(n), bytes, chunkBytes, channels);
}

CollectiveSchedule
DoubleBinaryTreeAllReduce(const std::array<BinaryTree, 2>& trees,
                          uint64_t bytes,
                          uint64_t chunkBytes,
                          uint32_t channels)
{
    const auto n = static_cast<uint32_t>(trees[0].parent.size());
    RequireRanks(n);
    for (int k = 0; k < 2; ++k)
    {
        const BinaryTree& t = trees[k];
        std::vector<char> seen(n, 0);
        bool ok = t.parent.size() == n && t.topDown.size() == n && t.root < n &&
                  t.topDown[0] == t.root && t.parent[t.root] == kNoRank;
        for (size_t i = 0; ok && i < n; ++i)
        {
            const uint32_t v = t.topDown[i];
            // every rank once, after its parent
            ok = v < n && !seen[v] && (v == t.root || (t.parent[v] < n && seen[t.parent[v]]));
            if (ok)
            {
                seen[v] = 1;
            }
        }
        FabricRequire(
            ok,
            fmt::format("trees[{}]", k),
            fmt::format("{} ranks", t.parent.size()),
            fmt::format("a tree over ranks 0..{} rooted at topDown[0], parents first", n - 1));
    }
    RequireChannels(channels, 2);
    RequireScheduleFits(n, chunkBytes, TreeSize(n, bytes, chunkBytes, channels));
    CollectiveSchedule s(CollectiveType::AllReduce, n, bytes);
    s.SetAlgorithm("tree");
    const uint32_t parts = 2 * channels;
    uint32_t P = AddPieces(s, SplitBytes(bytes, parts), chunkBytes, kNoSrc, kNoSrc);
    ScheduleBuilder b(s);
    // A node takes both children's chunks at once, into separate buffers.
    b.SetCommutingReduces(true);
    for (uint32_t j = 0; j < P; ++j)
    {
        for (uint32_t k = 0; k < parts; ++k)
        {
            const BinaryTree& t = trees[k % 2];
            const uint32_t c = k * P + j;
            const uint16_t ch = static_cast<uint16_t>(k);
            // Up: deepest first, so a node sends only after all its children reduced into it.
            for (auto it = t.topDown.rbegin(); it != t.topDown.rend(); ++it)
            {
                if (*it != t.root)
                {
                    b.Transfer(*it, t.parent[*it], c, RecvMode::Reduce, ch);
                }
            }
            // Down: the root's result to everyone.
            for (uint32_t v : t.topDown)
            {
                if (v != t.root)
                {
                    b.Transfer(t.parent[v], v, c, RecvMode::Copy, ch);
                }
            }
        }
    }
    return s;
}

CollectiveSchedule
HalvingDoublingAllReduce(uint32_t n, uint64_t bytes, uint64_t chunkBytes, uint32_t channels)
{
    RequireRanks(n);
    RequireChannels(channels);
    RequireScheduleFits(n, chunkBytes, HalvingDoublingSize(n, bytes, chunkBytes, channels));
    uint32_t p = 1;
    while (p <= n / 2)
    {
        p *= 2;
    }
    const uint32_t extra = n - p;
    CollectiveSchedule s(CollectiveType::AllReduce, n, bytes);
    s.SetAlgorithm("halving-doubling");
    // Piece q of channel ch is cut into P chunks; chunk j of every piece of a
    // channel sits in one run, (ch P + j) p + q, so that a step's range of
    // pieces leaves as one message per (channel, j): one sendrecv, not a
    // message per piece (1,024 ranks at 1 KiB made 512 one-byte messages
    // of the first step's).
    const std::vector<uint64_t> pieces = TwoLevelSplit(bytes, channels, p);
    const uint32_t P = PiecesDepth(pieces, chunkBytes);
    std::vector<std::vector<uint64_t>> parts(pieces.size());
    for (size_t k = 0; k < pieces.size(); ++k)
    {
        parts[k] = SplitBytes(pieces[k], P);
    }
    for (uint32_t ch = 0; ch < channels; ++ch)
    {
        for (uint32_t j = 0; j < P; ++j)
        {
            for (uint32_t q = 0; q < p; ++q)
            {
                s.AddChunk(parts[static_cast<size_t>(ch) * p + q][j]);
            }
        }
    }
    auto chunk = [&](uint32_t ch, uint32_t q, uint32_t j) { return (ch * P + j) * p + q; };
    ScheduleBuilder b(s);
    auto move = [&](uint32_t from, uint32_t to, uint32_t lo, uint32_t cnt, RecvMode mode) {
        for (uint32_t ch = 0; ch < channels; ++ch)
        {
            for (uint32_t j = 0; j < P; ++j)
            {
                b.Transfer(from, to, chunk(ch, lo, j), mode, ch, cnt);
            }
        }
    };
    // Every phase and every halving or doubling step is one sendrecv per
    // rank, taken in order (EndStep), as MPI runs it: minimal data
    // dependencies alone let a rank start step s+1 while its next partner is
    // still busy with step s, and the two steps then share links.
    // Fold: the ranks beyond the power of two hand their data to a partner.
    for (uint32_t e = 0; e < extra; ++e)
    {
        move(p + e, e, 0, p, RecvMode::Reduce);
    }
    b.EndStep();
    // Recursive halving: each rank keeps the half of its range on its side
    // of the partner bit and sends the other half; it ends with piece r.
    std::vector<uint32_t> lo(p, 0);
    uint32_t cnt = p;
    for (uint32_t d = p / 2; d >= 1; d /= 2)
    {
        const uint32_t half = cnt / 2;
        for (uint32_t r = 0; r < p; ++r)
        {
            const bool upper = (r & d) != 0;
            move(r, r ^ d, upper ? lo[r] : lo[r] + half, half, RecvMode::Reduce);
        }
        for (uint32_t r = 0; r < p; ++r)
        {
            lo[r] += (r & d) ? half : 0;
        }
        cnt = half;
        b.EndStep();
    }
    // Recursive doubling: exchange ranges with partners at growing distance.
    for (uint32_t d = 1; d < p; d *= 2)
    {
        for (uint32_t r = 0; r < p; ++r)
        {
            move(r, r ^ d, lo[r], cnt, RecvMode::Copy);
        }
        for (uint32_t r = 0; r < p; ++r)
        {
            lo[r] = std::min(lo[r], lo[r ^ d]);
        }
        cnt *= 2;
        b.EndStep();
    }
    // Unfold: give the result back.
    for (uint32_t e = 0; e < extra; ++e)
    {
        move(e, p + e, 0, p, RecvMode::Copy);
    }
    return s;
}

CollectiveSchedule
HierarchicalAllReduce(uint32_t n,
                      uint32_t K,
                      uint64_t bytes,
                      uint64_t chunkBytes,
                      uint32_t channels)
{
    RequireRanks(n);
    RequireChannels(channels);
    RequireDomain(n, K);
    const uint32_t D = n / K;
    RequireScheduleFits(n, chunkBytes, HierarchicalSize(n, K, bytes, chunkBytes, channels));
    CollectiveSchedule s(CollectiveType::AllReduce, n, bytes);
    s.SetAlgorithm("hierarchical");
    // Per channel the buffer is K pieces (one per local index l), each of D
    // sub-pieces (one per domain, for the rail ring), each of P pipelining
    // chunks. Chunk (ch, l, d, j) is numbered with d innermost so that the D
    // sub-pieces' chunk j of a piece are consecutive: a domain step moves
    // them as one message (CollectiveOp::count = D), as an implementation
    // sends a piece's buffer, not D messages.
    const std::vector<uint64_t> pieces = TwoLevelSplit(bytes, channels, uint64_t{K} * D);
    const uint32_t P = PiecesDepth(pieces, chunkBytes);
    {
        std::vector<std::vector<uint64_t>> split(D);
        for (uint32_t cl = 0; cl < channels * K; ++cl)
        {
            for (uint32_t d = 0; d < D; ++d)
            {
                split[d] = SplitBytes(pieces[uint64_t{cl} * D + d], P);
            }
            for (uint32_t j = 0; j < P; ++j)
            {
                for (uint32_t d = 0; d < D; ++d)
                {
                    s.AddChunk(split[d][j], kNoRank, kNoRank);
                }
            }
        }
    }
    auto chunk = [&](uint32_t ch, uint32_t l, uint32_t d, uint32_t j) {
        return ((ch * K + l) * P + j) * D + d;
    };
    ScheduleBuilder b(s);
    // Moves piece q inside a domain: per pipelining chunk j, its D sub-pieces
    // in one message.
    auto domainStep = [&](uint32_t dom, uint32_t l, uint32_t q, uint32_t ch, RecvMode mode) {
        for (uint32_t j = 0; j < P; ++j)
        {
            b.Transfer(dom * K + l, dom * K + (l + 1) % K, chunk(ch, q, 0, j), mode, ch, D);
        }
    };
    // (1) Reduce-scatter in each domain: local index l ends with piece l.
    for (uint32_t t = 0; t + 1 < K; ++t)
    {
        for (uint32_t ch = 0; ch < channels; ++ch)
        {
            for (uint32_t dom = 0; dom < D; ++dom)
            {
                for (uint32_t l = 0; l < K; ++l)
                {
                    domainStep(dom, l, (l + 2 * K - t - 1) % K, ch, RecvMode::Reduce);
                }
            }
        }
    }
    // (2) Ring allreduce of piece l over rail l (ranks dom * K + l).
    for (int phase = 0; phase < 2; ++phase)
    {
        for (uint32_t t = 0; t + 1 < D; ++t)
        {
            for (uint32_t ch = 0; ch < channels; ++ch)
            {
                for (uint32_t l = 0; l < K; ++l)
                {
                    for (uint32_t dom = 0; dom < D; ++dom)
                    {
                        uint32_t q = phase == 0 ? (dom + 2 * D - t - 1) % D : (dom + D - t) % D;
                        for (uint32_t j = 0; j < P; ++j)
                        {
                            b.Transfer(dom * K + l,
                                       ((dom + 1) % D) * K + l,
                                       chunk(ch, l, q, j),
                                       phase == 0 ? RecvMode::Reduce : RecvMode::Copy,
                                       ch);
                        }
                    }
                }
            }
        }
    }
    // (3) Allgather in each domain.
    for (uint32_t t = 0; t + 1 < K; ++t)
    {
        for (uint32_t ch = 0; ch < channels; ++ch)
        {
            for (uint32_t dom = 0; dom < D; ++dom)
            {
                for (uint32_t l = 0; l < K; ++l)
                {
                    domainStep(dom, l, (l + K - t) % K, ch, RecvMode::Copy);
                }
            }
        }
    }
    return s;
}

CollectiveSchedule
DirectAllToAll(uint32_t ranks, uint64_t bytes, uint64_t chunkBytes, uint32_t channels)
{
    return AllToAll(ranks, 1, false, bytes, chunkBytes, channels);
}

CollectiveSchedule
PxnAllToAll(uint32_t ranks,
            uint32_t domainSize,
            uint64_t bytes,
            uint64_t chunkBytes,
            uint32_t channels)
{
    return AllToAll(ranks, domainSize, true, bytes, chunkBytes, channels);
}

CollectiveSchedule
ChainBroadcast(uint32_t ranks,
               uint32_t root,
               uint64_t bytes,
               uint64_t chunkBytes,
               uint32_t channels)
{
    return RootedCollective(CollectiveType::Broadcast,
                            false,
                            ranks,
                            root,
                            bytes,
                            chunkBytes,
                            channels);
}

CollectiveSchedule
ChainReduce(uint32_t ranks, uint32_t root, uint64_t bytes, uint64_t chunkBytes, uint32_t channels)
{
    return RootedCollective(CollectiveType::Reduce,
                            false,
                            ranks,
                            root,
                            bytes,
                            chunkBytes,
                            channels);
}

CollectiveSchedule
TreeBroadcast(uint32_t ranks, uint32_t root, uint64_t bytes, uint64_t chunkBytes, uint32_t channels)
{
    return RootedCollective(CollectiveType::Broadcast,
                            true,
                            ranks,
                            root,
                            bytes,
                            chunkBytes,
                            channels);
}

CollectiveSchedule
TreeReduce(uint32_t ranks, uint32_t root, uint64_t bytes, uint64_t chunkBytes, uint32_t channels)
{
    return RootedCollective(CollectiveType::Reduce, true, ranks, root, bytes, chunkBytes, channels);
}

CollectiveSchedule
SendRecvPairs(uint32_t n,
              const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
              uint64_t bytes,
              uint64_t chunkBytes,
              uint32_t channels)
{
    RequireRanks(n);
    RequireChannels(channels);
    FabricRequire(!pairs.empty(), "pairs", "[]", "at least one (src, dst) pair");
    std::set<std::pair<uint32_t, uint32_t>> seen;
    for (const auto& [a, d] : pairs)
    {
        FabricRequire(a < n && d < n && a != d && seen.insert({a, d}).second,
                      "pairs",
                      fmt::format("({}, {})", a, d),
                      fmt::format("distinct pairs of different local indices below {}", n));
    }
    RequireScheduleFits(n, chunkBytes, SendRecvSize(pairs.size(), bytes, chunkBytes, channels));
    CollectiveSchedule s(CollectiveType::SendRecv, n, bytes);
    s.SetAlgorithm("direct");
    std::vector<uint64_t> pieces;
    for (size_t k = 0; k < pairs.size(); ++k)
    {
        for (uint64_t b : SplitBytes(bytes, channels))
        {
            pieces.push_back(b);
        }
    }
    uint32_t P = AddPieces(
        s,
        pieces,
        chunkBytes,
        [&](size_t k) { return pairs[k / channels].first; },
        [&](size_t k) { return pairs[k / channels].second; });
    ScheduleBuilder b(s);
    for (uint32_t ch = 0; ch < channels; ++ch)
    {
        for (uint32_t j = 0; j < P; ++j)
        {
            for (size_t k = 0; k < pairs.size(); ++k)
            {
                b.Transfer(pairs[k].first,
                           pairs[k].second,
                           static_cast<uint32_t>((k * channels + ch) * P + j),
                           RecvMode::Copy,
                           ch);
            }
        }
    }
    return s;
}

CollectiveSchedule
RingSendRecv(uint32_t n, uint64_t bytes, uint64_t chunkBytes, uint32_t channels)
{
    RequireRanks(n);
    RequireChannels(channels);
    // before the n pairs are listed
    RequireScheduleFits(n, chunkBytes, SendRecvSize(n, bytes, chunkBytes, channels));
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    for (uint32_t r = 0; r < n; ++r)
    {
        pairs.emplace_back(r, (r + 1) % n);
    }
    return SendRecvPairs(n, pairs, bytes, chunkBytes, channels);
}

// ---------------------------------------------------------------------------
// Factory

std::vector<std::string>
AlgorithmsFor(std::string_view collective)
{
    switch (ParseCollectiveType(collective))
    {
    case CollectiveType::AllReduce:
        return {"ring", "tree", "halving-doubling", "hierarchical"};
    case CollectiveType::AllGather:
    case CollectiveType::ReduceScatter:
        return {"ring"};
    case CollectiveType::AllToAll:
        return {"direct", "pxn"};
    case CollectiveType::Broadcast:
    case CollectiveType::Reduce:
        return {"ring", "tree"};
    case CollectiveType::SendRecv:
        return {"direct"};
    }
    return {};
}

ScheduleSizeEstimate
EstimateScheduleSize(const ScheduleRequest& q)
{
    const CollectiveType type = ParseCollectiveType(q.collective, "collective");
    const uint32_t n =
        q.communicator.empty() ? q.ranks : static_cast<uint32_t>(q.communicator.size());
    const uint64_t B = q.bytes;
    const uint64_t C = q.chunkBytes;
    const uint32_t ch = q.channels;
    RequireRanks(n);
    RequireChannels(ch, q.algorithm == "tree" && type == CollectiveType::AllReduce ? 2 : 1);
    switch (type)
    {
    case CollectiveType::AllReduce:
        if (q.algorithm == "tree")
        {
            return TreeSize(n, B, C, ch);
        }
        if (q.algorithm == "halving-doubling")
        {
            return HalvingDoublingSize(n, B, C, ch);
        }
        if (q.algorithm == "hierarchical")
        {
            RequireDomain(n, q.domainSize);
            return HierarchicalSize(n, q.domainSize, B, C, ch);
        }
        [[fallthrough]];
    case CollectiveType::AllGather:
    case CollectiveType::ReduceScatter:
        return RingSize(type, n, B, C, ch);
    case CollectiveType::AllToAll:
        if (q.algorithm == "pxn")
        {
            RequireDomain(n, q.domainSize);
            return AllToAllSize(n, q.domainSize, true, B, C, ch);
        }
        return AllToAllSize(n, 1, false, B, C, ch);
    case CollectiveType::Broadcast:
    case CollectiveType::Reduce:
        return RootedSize(n, B, C, ch);
    case CollectiveType::SendRecv:
        return SendRecvSize(n, B, C, ch);
    }
    return {};
}

CollectiveSchedule
MakeSchedule(const ScheduleRequest& q)
{
    const CollectiveType type = ParseCollectiveType(q.collective, "collective");
    const std::vector<std::string> allowed = AlgorithmsFor(q.collective);
    static const char* known[] =
        {"ring", "tree", "halving-doubling", "hierarchical", "direct", "pxn"};
    if (std::find(std::begin(known), std::end(known), q.algorithm) == std::end(known))
    {
        throw FabricConfigError("algorithm",
                                q.algorithm,
                                "ring, tree, halving-doubling, hierarchical, direct, pxn");
    }
    if (std::find(allowed.begin(), allowed.end(), q.algorithm) == allowed.end())
    {
        std::string list;
        for (const auto& a : allowed)
        {
            list += (list.empty() ? "" : ", ") + a;
        }
        throw FabricConfigError("algorithm",
                                q.algorithm,
                                fmt::format("for {}: {}", q.collective, list));
    }
    uint32_t n = q.ranks;
    if (!q.communicator.empty())
    {
        FabricRequire(n == 0 || n == q.communicator.size(),
                      "ranks",
                      n,
                      fmt::format("0 or the communicator size ({})", q.communicator.size()));
        n = static_cast<uint32_t>(q.communicator.size());
    }
    const bool needsDomain = q.algorithm == "hierarchical" || q.algorithm == "pxn";
    if (needsDomain)
    {
        FabricRequire(
            q.domainSize >= 1,
            "domainSize",
            q.domainSize,
            fmt::format("the HB domain size K (a divisor of ranks, {}) for {}", n, q.algorithm));
    }
    // every message must fit the transports (the packet level's 2^32 packets
    // of 4 KiB): refused here, not halfway through a run
    FabricRequire(q.bytes <= kMaxCollectiveBytes,
                  "bytes",
                  q.bytes,
                  fmt::format("at most {} (16 TiB)", kMaxCollectiveBytes));
    CollectiveSchedule s;
    const uint64_t B = q.bytes;
    const uint64_t C = q.chunkBytes;
    const uint32_t ch = q.channels;
    switch (type)
    {
    case CollectiveType::AllReduce:
        if (q.algorithm == "ring")
        {
            s = RingAllReduce(n, B, C, ch);
        }
        else if (q.algorithm == "tree")
        {
            s = DoubleBinaryTreeAllReduce(n, B, C, ch);
        }
        else if (q.algorithm == "halving-doubling")
        {
            s = HalvingDoublingAllReduce(n, B, C, ch);
        }
        else
        {
            s = HierarchicalAllReduce(n, q.domainSize, B, C, ch);
        }
        break;
    case CollectiveType::AllGather:
        s = RingAllGather(n, B, C, ch);
        break;
    case CollectiveType::ReduceScatter:
        s = RingReduceScatter(n, B, C, ch);
        break;
    case CollectiveType::AllToAll:
        s = q.algorithm == "pxn" ? PxnAllToAll(n, q.domainSize, B, C, ch)
                                 : DirectAllToAll(n, B, C, ch);
        break;
    case CollectiveType::Broadcast:
        s = q.algorithm == "tree" ? TreeBroadcast(n, q.root, B, C, ch)
                                  : ChainBroadcast(n, q.root, B, C, ch);
        break;
    case CollectiveType::Reduce:
        s = q.algorithm == "tree" ? TreeReduce(n, q.root, B, C, ch)
                                  : ChainReduce(n, q.root, B, C, ch);
        break;
    case CollectiveType::SendRecv:
        s = RingSendRecv(n, B, C, ch);
        break;
    }
    if (!q.communicator.empty())
    {
        s.SetCommunicator(q.communicator);
    }
    return s;
}

} // namespace ns3
