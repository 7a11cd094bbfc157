/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "schedule-checker.h"

#include "ns3/fabric-error.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace ns3
{

namespace
{

constexpr uint32_t kNone = kNoIndex;

/// Text of one operation, for messages.
std::string
Describe(const CollectiveSchedule& s, uint32_t rank, uint32_t i)
{
    const CollectiveOp& op = s.Op(rank, i);
    const std::string chunks = op.count == 1
                                   ? fmt::format("chunk {}", op.chunk)
                                   : fmt::format("chunks {}-{}", op.chunk, op.chunk + op.count - 1);
    if (op.kind == OpKind::Send)
    {
        return fmt::format("rank {} op {} (send {} to rank {})", rank, i, chunks, op.peer);
    }
    return fmt::format("rank {} op {} (recv-{} {} from rank {})",
                       rank,
                       i,
                       op.mode == RecvMode::Copy ? "copy" : "reduce",
                       chunks,
                       op.peer);
}

/// "{0-3,5}" style text of a rank set.
std::string
SetText(const std::vector<uint32_t>& ranks)
{
    std::string out = "{";
    for (size_t i = 0; i < ranks.size();)
    {
        size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
        {
            ++j;
        }
        if (i > 0)
        {
            out += ",";
        }
        out += j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
        i = j + 1;
    }
    return out + "}";
}

std::vector<uint32_t>
SetMembers(const uint64_t* bits, uint32_t words)
{
    std::vector<uint32_t> out;
    for (uint32_t w = 0; w < words; ++w)
    {
        uint64_t x = bits[w];
        while (x)
        {
            out.push_back(w * 64 + static_cast<uint32_t>(__builtin_ctzll(x)));
            x &= x - 1;
        }
    }
    return out;
}

bool
IsEmpty(const uint64_t* bits, uint32_t words)
{
    for (uint32_t w = 0; w < words; ++w)
    {
        if (bits[w])
        {
            return false;
        }
    }
    return true;
}

/// Race detection: does op b of one rank transitively depend on op a (a < b)?
class Reach
{
  public:
    explicit Reach(const CollectiveSchedule& s)
        : m_s(s)
    {
    }

    bool operator()(uint32_t rank, uint32_t b, uint32_t a)
    {
        for (uint32_t d : m_s.Deps(rank, b))
        {
            if (d == a)
            {
                return true;
            }
        }
        // Deps point backwards, so nodes below a cannot lead to a: prune them.
        if (m_stamp.size() < m_s.NumOps(rank))
        {
            m_stamp.resize(m_s.NumOps(rank), 0);
        }
        if (++m_gen == 0)
        {
            std::fill(m_stamp.begin(), m_stamp.end(), 0);
            m_gen = 1;
        }
        m_stack.clear();
        m_stack.push_back(b);
        while (!m_stack.empty())
        {
            uint32_t x = m_stack.back();
            m_stack.pop_back();
            for (uint32_t d : m_s.Deps(rank, x))
            {
                if (d == a)
                {
                    return true;
                }
                if (d > a && m_stamp[d] != m_gen)
                {
                    m_stamp[d] = m_gen;
                    m_stack.push_back(d);
                }
            }
        }
        return false;
    }

    /// Forget per-rank marks (stamps are per rank indices).
    void NewRank()
    {
        if (++m_gen == 0)
        {
            std::fill(m_stamp.begin(), m_stamp.end(), 0);
            m_gen = 1;
        }
    }

  private:
    const CollectiveSchedule& m_s;
    std::vector<uint32_t> m_stamp;
    std::vector<uint32_t> m_stack;
    uint32_t m_gen{0};
};

/**
 * What one rank has done to one chunk so far, for the race check.  Reduce
 * receives into one chunk with no read between them form a group:
 * reductions commute, so its members need not be ordered among themselves,
 * only after what came before the group (prevWriters, prevReaders); what
 * comes after must be ordered after all of them.
 */
struct ChunkAccess
{
    std::vector<uint32_t> writers;     // the last write, or the open Reduce group
    std::vector<uint32_t> readers;     // sends since the last write
    std::vector<uint32_t> prevWriters; // open group: the write before it
    std::vector<uint32_t> prevReaders; // open group: the sends before it
    bool group{false};                 // writers is an open Reduce group
    bool touched{false};
};

/// The first op of \p list that op \p i of rank \p r is not ordered after, or kNone.
uint32_t
FirstUnordered(Reach& reach, uint32_t r, uint32_t i, const std::vector<uint32_t>& list)
{
    for (uint32_t j : list)
    {
        if (!reach(r, i, j))
        {
            return j;
        }
    }
    return kNone;
}

/// Record that op \p i of rank \p r accesses the chunk \p a describes;
/// \return the earlier op it races with (not ordered before it), or kNone.
uint32_t
RecordAccess(ChunkAccess& a, const CollectiveOp& op, uint32_t r, uint32_t i, Reach& reach)
{
    const bool reduce = op.kind == OpKind::Recv && op.mode == RecvMode::Reduce;
    if (reduce && a.group && a.readers.empty())
    {
        // Joins the open group: ordered after what preceded the group.
        uint32_t j = FirstUnordered(reach, r, i, a.prevWriters);
        j = j != kNone ? j : FirstUnordered(reach, r, i, a.prevReaders);
        if (j == kNone)
        {
            a.writers.push_back(i);
        }
        return j;
    }
    uint32_t j = FirstUnordered(reach, r, i, a.writers);
    if (j != kNone)
    {
        return j;
    }
    if (op.kind == OpKind::Send)
    {
        a.readers.push_back(i);
        return kNone;
    }
    j = FirstUnordered(reach, r, i, a.readers);
    if (j != kNone)
    {
        return j;
    }
    a.group = reduce;
    if (reduce)
    {
        a.prevWriters.swap(a.writers);
        a.prevReaders.swap(a.readers);
    }
    a.writers.assign(1, i);
    a.readers.clear();
    return kNone;
}

/// Fill \p res for a race: op \p i of rank \p r is not ordered after op \p j on \p chunk.
void
ReportRace(const CollectiveSchedule& s,
           uint32_t r,
           uint32_t i,
           uint32_t j,
           uint32_t chunk,
           ScheduleCheckResult& res)
{
    res.status = CheckStatus::Race;
    res.rank = r;
    res.op = i;
    res.chunk = chunk;
    res.message = fmt::format("race at rank {} on chunk {}: {} is not ordered after {} by "
                              "dependencies, so the data it {} depends on timing",
                              r,
                              res.chunk,
                              Describe(s, r, i),
                              Describe(s, r, j),
                              s.Op(r, i).kind == OpKind::Send ? "sends" : "leaves");
}

/// Conflicting accesses to one (rank, chunk) must be ordered by the
/// dependencies, so that every execution order gives the same result.
/// \return false (with \p res filled) at the first race
bool
CheckRaces(const CollectiveSchedule& s, ScheduleCheckResult& res)
{
    std::vector<ChunkAccess> acc(s.NumChunks());
    std::vector<uint32_t> touched;
    Reach reach(s);
    for (uint32_t r = 0; r < s.NumRanks(); ++r)
    {
        reach.NewRank();
        const auto& ops = s.Ops(r);
        for (uint32_t i = 0; i < ops.size(); ++i)
        {
            // an op moving several chunks accesses each of them
            for (uint32_t c = ops[i].chunk; c < ops[i].chunk + ops[i].count; ++c)
            {
                ChunkAccess& a = acc[c];
                if (!a.touched)
                {
                    a.touched = true;
                    touched.push_back(c);
                }
                const uint32_t j = RecordAccess(a, ops[i], r, i, reach);
                if (j != kNone)
                {
                    ReportRace(s, r, i, j, c, res);
                    return false;
                }
            }
        }
        for (uint32_t c : touched)
        {
            acc[c] = ChunkAccess();
        }
        touched.clear();
    }
    return true;
}

/// The structure defect FindStructureError found, as a result.
ScheduleCheckResult
StructureResult(const ScheduleIssue& issue)
{
    ScheduleCheckResult res;
    res.status = CheckStatus::InvalidStructure;
    res.rank = issue.rank;
    res.op = issue.op;
    res.chunk = issue.chunk;
    res.message = fmt::format("invalid {}: got '{}', allowed: {}",
                              issue.parameter,
                              FabricShownValue(issue.value),
                              issue.allowed);
    return res;
}

/// Per rank, per op, the index of its matching op at the peer.
using Matching = std::vector<std::vector<uint32_t>>;

/// Global ids of the operations, (r, i) -> base[r] + i: the deadlock and
/// data checks see all ranks' operations as one graph.
struct OpIds
{
    explicit OpIds(const CollectiveSchedule& s)
        : base(s.NumRanks() + 1, 0)
    {
        for (uint32_t r = 0; r < s.NumRanks(); ++r)
        {
            base[r + 1] = base[r] + s.NumOps(r);
        }
        total = base[s.NumRanks()];
    }

    /// \param g global id \return the rank running it
    uint32_t RankOf(uint32_t g) const
    {
        return static_cast<uint32_t>(std::upper_bound(base.begin(), base.end(), g) - base.begin() -
                                     1);
    }

    std::vector<uint32_t> base; //!< first global id of each rank (and the total)
    uint32_t total{0};          //!< operations over all ranks
};

/// The operations' waits in CSR form: each op's dependents, plus send ->
/// matching receive (a receive also waits for its send).
struct WaitGraph
{
    std::vector<uint32_t> indeg; //!< unfinished predecessors per op
    std::vector<uint32_t> start; //!< successors of g: succ[start[g] .. start[g + 1])
    std::vector<uint32_t> succ;  //!< successor lists, concatenated
};

/// With in-order connections (CollectiveSchedule::SetInOrderConnections),
/// each send's previous send of the same rank to the same (peer, channel),
/// as a global id (kNone for the first, and for every op otherwise): a send
/// is not issued before it.
std::vector<uint32_t>
ConnectionPredecessors(const CollectiveSchedule& s, const OpIds& ids)
{
    std::vector<uint32_t> prev;
    if (!s.InOrderConnections())
    {
        return prev;
    }
    prev.assign(ids.total, kNone);
    for (uint32_t r = 0; r < s.NumRanks(); ++r)
    {
        std::map<uint64_t, uint32_t> last; // (peer, channel) -> latest send so far
        for (uint32_t i = 0; i < s.NumOps(r); ++i)
        {
            const CollectiveOp& op = s.Op(r, i);
            if (op.kind != OpKind::Send)
            {
                continue;
            }
            const uint32_t g = ids.base[r] + i;
            auto [it, first] =
                last.try_emplace((static_cast<uint64_t>(op.peer) << 16) | op.channel, g);
            if (!first)
            {
                prev[g] = it->second;
                it->second = g;
            }
        }
    }
    return prev;
}

/// Size the CSR rows: count each op's predecessors and successors.
void
CountWaits(const CollectiveSchedule& s,
           const OpIds& ids,
           const std::vector<uint32_t>& connPrev,
           WaitGraph& w)
{
    w.indeg.assign(ids.total, 0);
    w.start.assign(ids.total + 1, 0);
    for (uint32_t r = 0; r < s.NumRanks(); ++r)
    {
        for (uint32_t i = 0; i < s.NumOps(r); ++i)
        {
            const uint32_t g = ids.base[r] + i;
            for (uint32_t d : s.Deps(r, i))
            {
                ++w.start[ids.base[r] + d + 1];
            }
            w.indeg[g] = static_cast<uint32_t>(s.Deps(r, i).size());
            if (s.Op(r, i).kind == OpKind::Send)
            {
                ++w.start[g + 1];
            }
            else
            {
                ++w.indeg[g];
            }
            if (!connPrev.empty() && connPrev[g] != kNone)
            {
                ++w.start[connPrev[g] + 1];
                ++w.indeg[g];
            }
        }
    }
    for (uint32_t g = 0; g < ids.total; ++g)
    {
        w.start[g + 1] += w.start[g];
    }
}

/// Fill the successor lists CountWaits sized.
void
FillWaits(const CollectiveSchedule& s,
          const OpIds& ids,
          const Matching& partner,
          const std::vector<uint32_t>& connPrev,
          WaitGraph& w)
{
    w.succ.assign(w.start[ids.total], 0);
    std::vector<uint32_t> fill(w.start.begin(), w.start.end() - 1);
    for (uint32_t r = 0; r < s.NumRanks(); ++r)
    {
        for (uint32_t i = 0; i < s.NumOps(r); ++i)
        {
            const uint32_t g = ids.base[r] + i;
            for (uint32_t d : s.Deps(r, i))
            {
                w.succ[fill[ids.base[r] + d]++] = g;
            }
            const CollectiveOp& op = s.Op(r, i);
            if (op.kind == OpKind::Send)
            {
                w.succ[fill[g]++] = ids.base[op.peer] + partner[r][i];
            }
            if (!connPrev.empty() && connPrev[g] != kNone)
            {
                w.succ[fill[connPrev[g]]++] = g;
            }
        }
    }
}

/// Execute in a dependency-respecting order (first in, first out: roughly by
/// step). \return the global ids in that order; fewer than all when some ops
/// can never run
std::vector<uint32_t>
ExecutionOrder(const CollectiveSchedule& s, const OpIds& ids, const Matching& partner)
{
    WaitGraph w;
    const std::vector<uint32_t> connPrev = ConnectionPredecessors(s, ids);
    CountWaits(s, ids, connPrev, w);
    FillWaits(s, ids, partner, connPrev, w);
    std::vector<uint32_t> order;
    order.reserve(ids.total);
    for (uint32_t g = 0; g < ids.total; ++g)
    {
        if (w.indeg[g] == 0)
        {
            order.push_back(g);
        }
    }
    for (size_t head = 0; head < order.size(); ++head)
    {
        const uint32_t g = order[head];
        for (uint32_t k = w.start[g]; k < w.start[g + 1]; ++k)
        {
            if (--w.indeg[w.succ[k]] == 0)
            {
                order.push_back(w.succ[k]);
            }
        }
    }
    return order;
}

/**
 * A cycle of waits among the ops \p order never reached, as global ids from
 * the smallest.  Every stuck op waits for a stuck op: an unfinished
 * dependency, or (a receive whose dependencies are done) its matching send.
 * Following these waits from any stuck op must close a cycle.
 */
std::vector<uint32_t>
WaitCycle(const CollectiveSchedule& s,
          const OpIds& ids,
          const Matching& partner,
          const std::vector<uint32_t>& order)
{
    std::vector<uint8_t> done(ids.total, 0);
    for (uint32_t g : order)
    {
        done[g] = 1;
    }
    uint32_t g = 0;
    while (done[g])
    {
        ++g;
    }
    const std::vector<uint32_t> connPrev = ConnectionPredecessors(s, ids);
    std::vector<uint32_t> visitPos(ids.total, kNone);
    std::vector<uint32_t> path;
    while (visitPos[g] == kNone)
    {
        visitPos[g] = static_cast<uint32_t>(path.size());
        path.push_back(g);
        const uint32_t r = ids.RankOf(g);
        const uint32_t i = g - ids.base[r];
        uint32_t next = kNone;
        for (uint32_t d : s.Deps(r, i))
        {
            if (!done[ids.base[r] + d])
            {
                next = ids.base[r] + d;
                break;
            }
        }
        const CollectiveOp& op = s.Op(r, i);
        if (next == kNone && !connPrev.empty() && connPrev[g] != kNone && !done[connPrev[g]])
        {
            next = connPrev[g]; // a send waits for its connection's earlier send
        }
        if (next == kNone)
        {
            next = ids.base[op.peer] + partner[r][i];
        }
        g = next;
    }
    std::vector<uint32_t> cycle(path.begin() + visitPos[g], path.end());
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
    return cycle;
}

/// Some ops can never run: report a cycle of waits (the first 12 in words).
ScheduleCheckResult
DeadlockResult(const CollectiveSchedule& s,
               const OpIds& ids,
               const Matching& partner,
               const std::vector<uint32_t>& order)
{
    const std::vector<uint32_t> cycle = WaitCycle(s, ids, partner, order);
    ScheduleCheckResult res;
    res.status = CheckStatus::Deadlock;
    std::string text;
    for (size_t k = 0; k < cycle.size(); ++k)
    {
        const uint32_t r = ids.RankOf(cycle[k]);
        res.cycle.emplace_back(r, cycle[k] - ids.base[r]);
        if (k < 12)
        {
            text += Describe(s, r, cycle[k] - ids.base[r]) + " waits for ";
        }
    }
    text += cycle.size() > 12 ? "... " : "";
    text += Describe(s, res.cycle[0].first, res.cycle[0].second);
    res.rank = res.cycle[0].first;
    res.op = res.cycle[0].second;
    res.chunk = s.Op(res.rank, res.op).chunk;
    res.message = fmt::format("deadlock: {} of {} operations can never run; cycle of waits: {}",
                              ids.total - order.size(),
                              ids.total,
                              text);
    return res;
}

/// What the symbolic execution needs of one (op, chunk it moves), packed so
/// that the per-chunk pass reads memory sequentially (the ops themselves are
/// scattered).
struct Rec
{
    uint32_t g;     // global id
    uint32_t rank;  // rank running it
    uint32_t key;   // send: global id of its receive; recv: its own id
    uint32_t chunk; // chunk
    uint8_t kind;   // 0 send, 1 recv-copy, 2 recv-reduce
};

/// Every (op, chunk) record in execution order, grouped by chunk: chunk c's
/// are recs[start[c] .. start[c + 1]).
struct ChunkRecords
{
    std::vector<uint32_t> start; //!< per chunk, its first record (and the total)
    std::vector<Rec> recs;       //!< records
};

/// One record per op, for its first chunk; counts each chunk's records
/// into \p start[c + 1].
std::vector<Rec>
OpRecords(const CollectiveSchedule& s,
          const OpIds& ids,
          const Matching& partner,
          std::vector<uint32_t>& start)
{
    std::vector<Rec> recs(ids.total);
    for (uint32_t r = 0; r < s.NumRanks(); ++r)
    {
        const auto& ops = s.Ops(r);
        for (uint32_t i = 0; i < ops.size(); ++i)
        {
            const uint32_t g = ids.base[r] + i;
            const CollectiveOp& op = ops[i];
            const bool send = op.kind == OpKind::Send;
            recs[g] = Rec{g,
                          r,
                          send ? ids.base[op.peer] + partner[r][i] : g,
                          op.chunk,
                          static_cast<uint8_t>(send                        ? 0
                                               : op.mode == RecvMode::Copy ? 1
                                                                           : 2)};
            for (uint32_t c = op.chunk; c < op.chunk + op.count; ++c)
            {
                ++start[c + 1];
            }
        }
    }
    return recs;
}

/// The records of every chunk in execution order (see ChunkRecords).
ChunkRecords
GroupByChunk(const CollectiveSchedule& s,
             const OpIds& ids,
             const Matching& partner,
             const std::vector<uint32_t>& order)
{
    // one record per (op, chunk it moves)
    uint64_t records = 0;
    for (uint32_t r = 0; r < s.NumRanks(); ++r)
    {
        for (const CollectiveOp& op : s.Ops(r))
        {
            records += op.count;
        }
    }
    const uint32_t nChunks = s.NumChunks();
    ChunkRecords out;
    out.start.assign(nChunks + 1, 0);
    out.recs.resize(records);
    const std::vector<Rec> recs = OpRecords(s, ids, partner, out.start);
    for (uint32_t c = 0; c < nChunks; ++c)
    {
        out.start[c + 1] += out.start[c];
    }
    std::vector<uint32_t> fill(out.start.begin(), out.start.end() - 1);
    for (uint32_t g : order)
    {
        Rec rec = recs[g];
        const uint32_t first = rec.chunk;
        for (uint32_t c = first; c < first + s.Op(rec.rank, g - ids.base[rec.rank]).count; ++c)
        {
            rec.chunk = c;
            out.recs[fill[c]++] = rec;
        }
    }
    return out;
}

/// A data error met during the symbolic execution (status and sets).
struct DataError
{
    uint32_t g{kNone};
    CheckStatus status{CheckStatus::Ok};
    std::vector<uint32_t> held;
    std::vector<uint32_t> other;
};

/**
 * Symbolic execution, one chunk at a time: chunks never interact, and the
 * race check made every order of conflicting accesses fixed by deps.  Each
 * (rank, chunk) holds the set of ranks whose contributions it contains, W
 * words of bits; only the current chunk's sets and message snapshots exist.
 */
class SymbolicExecution
{
  public:
    /// \param s the schedule \param total its operations
    SymbolicExecution(const CollectiveSchedule& s, uint32_t total)
        : m_s(s),
          m_n(s.NumRanks()),
          m_w((s.NumRanks() + 63) / 64),
          m_type(s.Type()),
          m_root(s.Root()),
          m_bits(uint64_t{m_n} * m_w, 0),
          m_isTouched(m_n, 0),
          m_slotOf(total, kNone),
          m_full(m_w, ~uint64_t{0}),
          m_expect(m_w, 0)
    {
        if (m_n % 64)
        {
            m_full[m_w - 1] = (uint64_t{1} << (m_n % 64)) - 1;
        }
    }

    /// Execute every chunk's records and check its postcondition.
    void Run(const ChunkRecords& chunks)
    {
        for (uint32_t c = 0; c < m_s.NumChunks(); ++c)
        {
            const ChunkInfo& info = m_s.Chunk(c);
            Seed(info);
            Execute(chunks.recs.data() + chunks.start[c], chunks.recs.data() + chunks.start[c + 1]);
            CheckPostcondition(c, info);
            Clear();
        }
    }

    /// \return the data errors, one at most per chunk
    const std::vector<DataError>& DataErrors() const
    {
        return m_dataErrors;
    }

    /// \return the smallest wrong (rank, chunk) with its sets, or null
    const ScheduleCheckResult* Wrong() const
    {
        return m_haveWrong ? &m_wrong : nullptr;
    }

  private:
    /// \return rank \p r's set of the current chunk, marked for Clear()
    uint64_t* Set(uint32_t r)
    {
        if (!m_isTouched[r])
        {
            m_isTouched[r] = 1;
            m_touchedRanks.push_back(r);
        }
        return m_bits.data() + uint64_t{r} * m_w;
    }

    /// \return rank \p r's set of the current chunk
    const uint64_t* Get(uint32_t r) const
    {
        return m_bits.data() + uint64_t{r} * m_w;
    }

    /// Add \p member to rank \p r's set.
    void Single(uint32_t r, uint32_t member)
    {
        uint64_t* b = Set(r);
        b[member / 64] |= uint64_t{1} << (member % 64);
    }

    void Seed(const ChunkInfo& info);
    void Execute(const Rec* first, const Rec* last);
    bool Send(const Rec& rec);
    bool Receive(const Rec& rec);
    void CheckPostcondition(uint32_t c, const ChunkInfo& info);
    void RecordWrong(uint32_t r, uint32_t c, const uint64_t* h);

    /// Does rank \p r hold the expected set of chunk \p c?  (RecordWrong if not.)
    bool Holds(uint32_t r, uint32_t c)
    {
        const uint64_t* h = Get(r);
        if (std::equal(h, h + m_w, m_expect.begin()))
        {
            return true;
        }
        RecordWrong(r, c, h);
        return false;
    }

    void Clear();

    const CollectiveSchedule& m_s;
    const uint32_t m_n;               // ranks
    const uint32_t m_w;               // words per set
    const CollectiveType m_type;      // collective
    const uint32_t m_root;            // root (Broadcast, Reduce)
    std::vector<uint64_t> m_bits;     // every rank's set of the current chunk
    std::vector<uint8_t> m_isTouched; // per rank: set since the last Clear()
    std::vector<uint32_t> m_touchedRanks;
    std::vector<uint64_t> m_pool;      // message snapshots, W words each
    std::vector<uint32_t> m_freeSlots; // reusable snapshot slots
    std::vector<uint32_t> m_slotOf;    // recv global id -> its data's slot
    std::vector<uint64_t> m_full;      // every rank
    std::vector<uint64_t> m_expect;    // the current postcondition's set
    std::vector<DataError> m_dataErrors;
    bool m_haveWrong{false};
    ScheduleCheckResult m_wrong;
};

/// Initial sets: which ranks start with the chunk, per collective.
void
SymbolicExecution::Seed(const ChunkInfo& info)
{
    switch (m_type)
    {
    case CollectiveType::AllReduce:
    case CollectiveType::Reduce:
    case CollectiveType::ReduceScatter:
        for (uint32_t r = 0; r < m_n; ++r)
        {
            Single(r, r);
        }
        break;
    case CollectiveType::AllGather:
    case CollectiveType::AllToAll:
    case CollectiveType::SendRecv:
        Single(info.src, info.src);
        break;
    case CollectiveType::Broadcast:
        Single(m_root, m_root);
        break;
    }
}

/// Run one chunk's records in order; its first data error ends the chunk.
void
SymbolicExecution::Execute(const Rec* first, const Rec* last)
{
    for (const Rec* rec = first; rec != last; ++rec)
    {
        if (!(rec->kind == 0 ? Send(*rec) : Receive(*rec)))
        {
            return;
        }
    }
}

/// A send snapshots the sender's set for its receive. \return false on a data error
bool
SymbolicExecution::Send(const Rec& rec)
{
    const uint32_t W = m_w;
    const uint64_t* src = Get(rec.rank);
    if (IsEmpty(src, W))
    {
        m_dataErrors.push_back({rec.g, CheckStatus::SendWithoutData, {}, {}});
        return false;
    }
    uint32_t slot;
    if (!m_freeSlots.empty())
    {
        slot = m_freeSlots.back();
        m_freeSlots.pop_back();
    }
    else
    {
        slot = static_cast<uint32_t>(m_pool.size() / W);
        m_pool.resize(m_pool.size() + W);
    }
    std::copy(src, src + W, m_pool.begin() + uint64_t{slot} * W);
    m_slotOf[rec.key] = slot;
    return true;
}

/// A receive copies its send's snapshot or reduces it into the receiver's
/// set. \return false on a data error
bool
SymbolicExecution::Receive(const Rec& rec)
{
    const uint32_t W = m_w;
    const uint32_t slot = m_slotOf[rec.g];
    const uint64_t* msg = m_pool.data() + uint64_t{slot} * W;
    uint64_t* dst = Set(rec.rank);
    if (rec.kind == 1)
    {
        std::copy(msg, msg + W, dst);
    }
    else
    {
        if (IsEmpty(dst, W))
        {
            m_dataErrors.push_back({rec.g, CheckStatus::ReduceIntoEmpty, {}, {}});
            return false;
        }
        bool overlap = false;
        for (uint32_t w = 0; w < W; ++w)
        {
            overlap |= (dst[w] & msg[w]) != 0;
        }
        if (overlap)
        {
            m_dataErrors.push_back(
                {rec.g, CheckStatus::DoubleCount, SetMembers(dst, W), SetMembers(msg, W)});
            return false;
        }
        for (uint32_t w = 0; w < W; ++w)
        {
            dst[w] |= msg[w];
        }
    }
    m_freeSlots.push_back(slot);
    return true;
}

/// Remember rank \p r holding \p h of chunk \p c if it is the smallest wrong (rank, chunk).
void
SymbolicExecution::RecordWrong(uint32_t r, uint32_t c, const uint64_t* h)
{
    if (!m_haveWrong || r < m_wrong.rank || (r == m_wrong.rank && c < m_wrong.chunk))
    {
        m_haveWrong = true;
        m_wrong.rank = r;
        m_wrong.chunk = c;
        m_wrong.held = SetMembers(h, m_w);
        m_wrong.expected = SetMembers(m_expect.data(), m_w);
    }
}

/// Postcondition of chunk \p c: find its smallest wrong rank.
void
SymbolicExecution::CheckPostcondition(uint32_t c, const ChunkInfo& info)
{
    std::fill(m_expect.begin(), m_expect.end(), 0);
    switch (m_type)
    {
    case CollectiveType::AllReduce:
        m_expect = m_full;
        for (uint32_t r = 0; r < m_n && Holds(r, c); ++r)
        {
        }
        break;
    case CollectiveType::Reduce:
        m_expect = m_full;
        Holds(m_root, c);
        break;
    case CollectiveType::ReduceScatter:
        m_expect = m_full;
        Holds(info.dst, c);
        break;
    case CollectiveType::AllGather:
        m_expect[info.src / 64] = uint64_t{1} << (info.src % 64);
        for (uint32_t r = 0; r < m_n && Holds(r, c); ++r)
        {
        }
        break;
    case CollectiveType::Broadcast:
        m_expect[m_root / 64] = uint64_t{1} << (m_root % 64);
        for (uint32_t r = 0; r < m_n && Holds(r, c); ++r)
        {
        }
        break;
    case CollectiveType::AllToAll:
    case CollectiveType::SendRecv:
        m_expect[info.src / 64] = uint64_t{1} << (info.src % 64);
        Holds(info.dst, c);
        break;
    }
}

/// Empty the sets the chunk touched and its snapshots, for the next chunk.
void
SymbolicExecution::Clear()
{
    for (uint32_t r : m_touchedRanks)
    {
        std::fill(m_bits.begin() + uint64_t{r} * m_w, m_bits.begin() + uint64_t{r + 1} * m_w, 0);
        m_isTouched[r] = 0;
    }
    m_touchedRanks.clear();
    // All snapshots of a chunk are consumed by its receives (or dropped
    // with a chunk aborted by an error): start the next chunk afresh.
    m_freeSlots.clear();
    m_pool.clear();
}

/// \return the error that happens first in the execution \p order
const DataError&
FirstInOrder(const std::vector<DataError>& errors, const std::vector<uint32_t>& order)
{
    std::vector<uint32_t> pos(order.size());
    for (uint32_t k = 0; k < order.size(); ++k)
    {
        pos[order[k]] = k;
    }
    const DataError* first = &errors.front();
    for (const DataError& e : errors)
    {
        if (pos[e.g] < pos[first->g])
        {
            first = &e;
        }
    }
    return *first;
}

/// The data error that happens first in the execution order, in words.
ScheduleCheckResult
DataErrorResult(const CollectiveSchedule& s,
                const OpIds& ids,
                const std::vector<uint32_t>& order,
                const std::vector<DataError>& errors)
{
    const DataError& first = FirstInOrder(errors, order);
    const uint32_t r = ids.RankOf(first.g);
    const uint32_t i = first.g - ids.base[r];
    const CollectiveOp& op = s.Op(r, i);
    ScheduleCheckResult res;
    res.status = first.status;
    res.rank = r;
    res.op = i;
    res.chunk = op.chunk;
    switch (first.status)
    {
    case CheckStatus::SendWithoutData:
        res.message = fmt::format("rank {} chunk {}: {} sends data the rank does not hold "
                                  "(its contribution set is empty)",
                                  r,
                                  op.chunk,
                                  Describe(s, r, i));
        break;
    case CheckStatus::ReduceIntoEmpty:
        res.message = fmt::format("rank {} chunk {}: {} reduces into a chunk the rank holds "
                                  "nothing of",
                                  r,
                                  op.chunk,
                                  Describe(s, r, i));
        break;
    default: {
        res.held = first.held;
        std::vector<uint32_t> both;
        std::set_intersection(first.held.begin(),
                              first.held.end(),
                              first.other.begin(),
                              first.other.end(),
                              std::back_inserter(both));
        res.message = fmt::format("rank {} chunk {}: {} double counts the contribution of "
                                  "rank(s) {}: it holds {} and receives {}",
                                  r,
                                  op.chunk,
                                  Describe(s, r, i),
                                  SetText(both),
                                  SetText(first.held),
                                  SetText(first.other));
        break;
    }
    }
    return res;
}

/// The smallest (rank, chunk) whose postcondition fails, in words.
ScheduleCheckResult
WrongResult(CollectiveType type, const ScheduleCheckResult& wrong)
{
    ScheduleCheckResult res;
    res.status = CheckStatus::WrongResult;
    res.rank = wrong.rank;
    res.chunk = wrong.chunk;
    res.held = wrong.held;
    res.expected = wrong.expected;
    res.message = fmt::format("{} postcondition fails first at rank {} chunk {}: holds "
                              "contributions {}, expected {}",
                              CollectiveTypeName(type),
                              wrong.rank,
                              wrong.chunk,
                              SetText(wrong.held),
                              SetText(wrong.expected));
    return res;
}

} // namespace

std::string_view
CheckStatusName(CheckStatus s)
{
    switch (s)
    {
    case CheckStatus::Ok:
        return "ok";
    case CheckStatus::InvalidStructure:
        return "invalid-structure";
    case CheckStatus::Race:
        return "race";
    case CheckStatus::Deadlock:
        return "deadlock";
    case CheckStatus::SendWithoutData:
        return "send-without-data";
    case CheckStatus::ReduceIntoEmpty:
        return "reduce-into-empty";
    case CheckStatus::DoubleCount:
        return "double-count";
    case CheckStatus::WrongResult:
        return "wrong-result";
    }
    return "unknown";
}

ScheduleCheckResult
ScheduleChecker::Check(const CollectiveSchedule& s)
{
    // The checks in the documented order; each needs the ones before it to
    // have passed (matching, then races, then a complete order).
    Matching partner;
    if (auto issue = s.FindStructureError(&partner))
    {
        return StructureResult(*issue);
    }
    ScheduleCheckResult res;
    if (!CheckRaces(s, res))
    {
        return res;
    }
    const OpIds ids(s);
    const std::vector<uint32_t> order = ExecutionOrder(s, ids, partner);
    if (order.size() < ids.total)
    {
        return DeadlockResult(s, ids, partner, order);
    }
    SymbolicExecution run(s, ids.total);
    run.Run(GroupByChunk(s, ids, partner, order));
    if (!run.DataErrors().empty())
    {
        return DataErrorResult(s, ids, order, run.DataErrors());
    }
    if (const ScheduleCheckResult* wrong = run.Wrong())
    {
        return WrongResult(s.Type(), *wrong);
    }
    res.message = "ok";
    return res;
}

void
ScheduleChecker::Require(const CollectiveSchedule& schedule)
{
    ScheduleCheckResult r = Check(schedule);
    if (!r.Ok())
    {
        throw FabricConfigError("schedule", CheckStatusName(r.status), r.message);
    }
}

} // namespace ns3
