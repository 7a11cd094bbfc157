/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "schedule-checker.h"

#include "ns3/fabric-error.h"

#include <algorithm>
#include <fmt/format.h>

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

bool
CheckRaces(const CollectiveSchedule& s, ScheduleCheckResult& res)
{
    // Reduce receives into one chunk with no read between them form a group:
    // reductions commute, so its members need not be ordered among
    // themselves, only after what came before the group (prevWriters,
    // prevReaders); what comes after must be ordered after all of them.
    struct Access
    {
        std::vector<uint32_t> writers;     // the last write, or the open Reduce group
        std::vector<uint32_t> readers;     // sends since the last write
        std::vector<uint32_t> prevWriters; // open group: the write before it
        std::vector<uint32_t> prevReaders; // open group: the sends before it
        bool group{false};                 // writers is an open Reduce group
        bool touched{false};
    };

    std::vector<Access> acc(s.NumChunks());
    std::vector<uint32_t> touched;
    Reach reach(s);
    auto race = [&](uint32_t r, uint32_t i, uint32_t j, uint32_t chunk) {
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
        return false;
    };
    // The first op of \p list that op i of rank r is not ordered after, or kNone.
    auto unordered = [&](uint32_t r, uint32_t i, const std::vector<uint32_t>& list) {
        for (uint32_t j : list)
        {
            if (!reach(r, i, j))
            {
                return j;
            }
        }
        return kNone;
    };
    for (uint32_t r = 0; r < s.NumRanks(); ++r)
    {
        reach.NewRank();
        const auto& ops = s.Ops(r);
        for (uint32_t i = 0; i < ops.size(); ++i)
        {
            // an op moving several chunks accesses each of them
            for (uint32_t c = ops[i].chunk; c < ops[i].chunk + ops[i].count; ++c)
            {
                Access& a = acc[c];
                if (!a.touched)
                {
                    a.touched = true;
                    touched.push_back(c);
                }
                const bool reduce = ops[i].kind == OpKind::Recv && ops[i].mode == RecvMode::Reduce;
                if (reduce && a.group && a.readers.empty())
                {
                    // Joins the open group: ordered after what preceded the group.
                    uint32_t j = unordered(r, i, a.prevWriters);
                    j = j != kNone ? j : unordered(r, i, a.prevReaders);
                    if (j != kNone)
                    {
                        return race(r, i, j, c);
                    }
                    a.writers.push_back(i);
                    continue;
                }
                uint32_t j = unordered(r, i, a.writers);
                if (j != kNone)
                {
                    return race(r, i, j, c);
                }
                if (ops[i].kind == OpKind::Send)
                {
                    a.readers.push_back(i);
                    continue;
                }
                j = unordered(r, i, a.readers);
                if (j != kNone)
                {
                    return race(r, i, j, c);
                }
                a.group = reduce;
                if (reduce)
                {
                    a.prevWriters.swap(a.writers);
                    a.prevReaders.swap(a.readers);
                }
                a.writers.assign(1, i);
                a.readers.clear();
            }
        }
        for (uint32_t c : touched)
        {
            acc[c] = Access();
        }
        touched.clear();
    }
    return true;
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
    ScheduleCheckResult res;
    std::vector<std::vector<uint32_t>> partner;
    if (auto issue = s.FindStructureError(&partner))
    {
        res.status = CheckStatus::InvalidStructure;
        res.rank = issue->rank;
        res.op = issue->op;
        res.chunk = issue->chunk;
        res.message = fmt::format("invalid {}: got '{}', allowed: {}",
                                  issue->parameter,
                                  FabricShownValue(issue->value),
                                  issue->allowed);
        return res;
    }
    if (!CheckRaces(s, res))
    {
        return res;
    }

    const uint32_t n = s.NumRanks();
    std::vector<uint32_t> base(n + 1, 0); // global id of (r, i) = base[r] + i
    for (uint32_t r = 0; r < n; ++r)
    {
        base[r + 1] = base[r] + s.NumOps(r);
    }
    const uint32_t total = base[n];
    auto rankOf = [&](uint32_t g) {
        return static_cast<uint32_t>(std::upper_bound(base.begin(), base.end(), g) - base.begin() -
                                     1);
    };

    // Successor lists (CSR): dependents of each op, plus send -> matching recv.
    std::vector<uint32_t> indeg(total, 0);
    std::vector<uint32_t> start(total + 1, 0);
    for (uint32_t r = 0; r < n; ++r)
    {
        for (uint32_t i = 0; i < s.NumOps(r); ++i)
        {
            const uint32_t g = base[r] + i;
            for (uint32_t d : s.Deps(r, i))
            {
                ++start[base[r] + d + 1];
            }
            indeg[g] = static_cast<uint32_t>(s.Deps(r, i).size());
            if (s.Op(r, i).kind == OpKind::Send)
            {
                ++start[g + 1];
            }
            else
            {
                ++indeg[g];
            }
        }
    }
    for (uint32_t g = 0; g < total; ++g)
    {
        start[g + 1] += start[g];
    }
    std::vector<uint32_t> succ(start[total]);
    {
        std::vector<uint32_t> fill(start.begin(), start.end() - 1);
        for (uint32_t r = 0; r < n; ++r)
        {
            for (uint32_t i = 0; i < s.NumOps(r); ++i)
            {
                const uint32_t g = base[r] + i;
                for (uint32_t d : s.Deps(r, i))
                {
                    succ[fill[base[r] + d]++] = g;
                }
                const CollectiveOp& op = s.Op(r, i);
                if (op.kind == OpKind::Send)
                {
                    succ[fill[g]++] = base[op.peer] + partner[r][i];
                }
            }
        }
    }

    // Execute in a dependency-respecting order (first in, first out: roughly by step).
    std::vector<uint32_t> order;
    order.reserve(total);
    for (uint32_t g = 0; g < total; ++g)
    {
        if (indeg[g] == 0)
        {
            order.push_back(g);
        }
    }
    for (size_t head = 0; head < order.size(); ++head)
    {
        const uint32_t g = order[head];
        for (uint32_t k = start[g]; k < start[g + 1]; ++k)
        {
            if (--indeg[succ[k]] == 0)
            {
                order.push_back(succ[k]);
            }
        }
    }
    if (order.size() < total)
    {
        // Every stuck op waits for a stuck op: an unfinished dependency, or (a
        // receive whose dependencies are done) its matching send.  Following
        // these waits from any stuck op must close a cycle.
        std::vector<uint8_t> done(total, 0);
        for (uint32_t g : order)
        {
            done[g] = 1;
        }
        uint32_t g = 0;
        while (done[g])
        {
            ++g;
        }
        std::vector<uint32_t> visitPos(total, kNone);
        std::vector<uint32_t> path;
        while (visitPos[g] == kNone)
        {
            visitPos[g] = static_cast<uint32_t>(path.size());
            path.push_back(g);
            const uint32_t r = rankOf(g);
            const uint32_t i = g - base[r];
            uint32_t next = kNone;
            for (uint32_t d : s.Deps(r, i))
            {
                if (!done[base[r] + d])
                {
                    next = base[r] + d;
                    break;
                }
            }
            if (next == kNone)
            {
                const CollectiveOp& op = s.Op(r, i);
                next = base[op.peer] + partner[r][i];
            }
            g = next;
        }
        std::vector<uint32_t> cycle(path.begin() + visitPos[g], path.end());
        std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
        res.status = CheckStatus::Deadlock;
        std::string text;
        for (size_t k = 0; k < cycle.size(); ++k)
        {
            const uint32_t r = rankOf(cycle[k]);
            res.cycle.emplace_back(r, cycle[k] - base[r]);
            if (k < 12)
            {
                text += Describe(s, r, cycle[k] - base[r]) + " waits for ";
            }
        }
        text += cycle.size() > 12 ? "... " : "";
        text += Describe(s, res.cycle[0].first, res.cycle[0].second);
        res.rank = res.cycle[0].first;
        res.op = res.cycle[0].second;
        res.chunk = s.Op(res.rank, res.op).chunk;
        res.message = fmt::format("deadlock: {} of {} operations can never run; cycle of waits: {}",
                                  total - order.size(),
                                  total,
                                  text);
        return res;
    }

    // Symbolic execution, one chunk at a time: chunks never interact, and the
    // race check made every order of conflicting accesses fixed by deps.
    const uint32_t nChunks = s.NumChunks();

    // What the execution needs of each op, packed so that the per-chunk pass
    // reads memory sequentially (the ops themselves are scattered).
    struct Rec
    {
        uint32_t g;     // global id
        uint32_t rank;  // rank running it
        uint32_t key;   // send: global id of its receive; recv: its own id
        uint32_t chunk; // chunk
        uint8_t kind;   // 0 send, 1 recv-copy, 2 recv-reduce
    };

    // one record per (op, chunk it moves)
    uint64_t records = 0;
    for (uint32_t r = 0; r < n; ++r)
    {
        for (const CollectiveOp& op : s.Ops(r))
        {
            records += op.count;
        }
    }
    std::vector<uint32_t> cstart(nChunks + 1, 0);
    std::vector<Rec> byChunk(records); // execution order, grouped by chunk
    {
        std::vector<Rec> recs(total);
        for (uint32_t r = 0; r < n; ++r)
        {
            const auto& ops = s.Ops(r);
            for (uint32_t i = 0; i < ops.size(); ++i)
            {
                const uint32_t g = base[r] + i;
                const CollectiveOp& op = ops[i];
                const bool send = op.kind == OpKind::Send;
                recs[g] = Rec{g,
                              r,
                              send ? base[op.peer] + partner[r][i] : g,
                              op.chunk,
                              static_cast<uint8_t>(send                        ? 0
                                                   : op.mode == RecvMode::Copy ? 1
                                                                               : 2)};
                for (uint32_t c = op.chunk; c < op.chunk + op.count; ++c)
                {
                    ++cstart[c + 1];
                }
            }
        }
        for (uint32_t c = 0; c < nChunks; ++c)
        {
            cstart[c + 1] += cstart[c];
        }
        std::vector<uint32_t> fill(cstart.begin(), cstart.end() - 1);
        for (uint32_t g : order)
        {
            Rec rec = recs[g];
            const uint32_t first = rec.chunk;
            for (uint32_t c = first; c < first + s.Op(rec.rank, g - base[rec.rank]).count; ++c)
            {
                rec.chunk = c;
                byChunk[fill[c]++] = rec;
            }
        }
    }
    indeg = std::vector<uint32_t>();
    succ = std::vector<uint32_t>();
    start = std::vector<uint32_t>();

    const uint32_t W = (n + 63) / 64;
    std::vector<uint64_t> bits(uint64_t{n} * W, 0);
    std::vector<uint8_t> isTouched(n, 0);
    std::vector<uint32_t> touchedRanks;
    std::vector<uint64_t> pool;                 // message snapshots, W words each
    std::vector<uint32_t> freeSlots;            // reusable snapshot slots
    std::vector<uint32_t> slotOf(total, kNone); // recv global id -> its data's slot
    std::vector<uint64_t> full(W, ~uint64_t{0});
    if (n % 64)
    {
        full[W - 1] = (uint64_t{1} << (n % 64)) - 1;
    }

    struct DataError
    {
        uint32_t g{kNone};
        CheckStatus status{CheckStatus::Ok};
        std::vector<uint32_t> held;
        std::vector<uint32_t> other;
    };

    std::vector<DataError> dataErrors;
    bool haveWrong = false;
    ScheduleCheckResult wrong;
    const CollectiveType type = s.Type();
    const uint32_t root = s.Root();

    auto set = [&](uint32_t r) {
        if (!isTouched[r])
        {
            isTouched[r] = 1;
            touchedRanks.push_back(r);
        }
        return bits.data() + uint64_t{r} * W;
    };
    auto get = [&](uint32_t r) { return bits.data() + uint64_t{r} * W; };
    auto single = [&](uint32_t r, uint32_t member) {
        uint64_t* b = set(r);
        b[member / 64] |= uint64_t{1} << (member % 64);
    };

    for (uint32_t c = 0; c < nChunks; ++c)
    {
        const ChunkInfo& info = s.Chunk(c);
        switch (type)
        {
        case CollectiveType::AllReduce:
        case CollectiveType::Reduce:
        case CollectiveType::ReduceScatter:
            for (uint32_t r = 0; r < n; ++r)
            {
                single(r, r);
            }
            break;
        case CollectiveType::AllGather:
        case CollectiveType::AllToAll:
        case CollectiveType::SendRecv:
            single(info.src, info.src);
            break;
        case CollectiveType::Broadcast:
            single(root, root);
            break;
        }
        for (uint32_t k = cstart[c]; k < cstart[c + 1]; ++k)
        {
            const Rec& rec = byChunk[k];
            const uint32_t g = rec.g;
            const uint32_t r = rec.rank;
            if (rec.kind == 0)
            {
                const uint64_t* src = get(r);
                if (IsEmpty(src, W))
                {
                    dataErrors.push_back({g, CheckStatus::SendWithoutData, {}, {}});
                    break;
                }
                uint32_t slot;
                if (!freeSlots.empty())
                {
                    slot = freeSlots.back();
                    freeSlots.pop_back();
                }
                else
                {
                    slot = static_cast<uint32_t>(pool.size() / W);
                    pool.resize(pool.size() + W);
                }
                std::copy(src, src + W, pool.begin() + uint64_t{slot} * W);
                slotOf[rec.key] = slot;
                continue;
            }
            const uint32_t slot = slotOf[g];
            const uint64_t* msg = pool.data() + uint64_t{slot} * W;
            uint64_t* dst = set(r);
            if (rec.kind == 1)
            {
                std::copy(msg, msg + W, dst);
            }
            else
            {
                if (IsEmpty(dst, W))
                {
                    dataErrors.push_back({g, CheckStatus::ReduceIntoEmpty, {}, {}});
                    break;
                }
                bool overlap = false;
                for (uint32_t w = 0; w < W; ++w)
                {
                    overlap |= (dst[w] & msg[w]) != 0;
                }
                if (overlap)
                {
                    dataErrors.push_back(
                        {g, CheckStatus::DoubleCount, SetMembers(dst, W), SetMembers(msg, W)});
                    break;
                }
                for (uint32_t w = 0; w < W; ++w)
                {
                    dst[w] |= msg[w];
                }
            }
            freeSlots.push_back(slot);
        }
        // Postcondition: find this chunk's smallest wrong rank.
        std::vector<uint64_t> expect(W, 0);
        auto check = [&](uint32_t r) {
            const uint64_t* h = get(r);
            if (std::equal(h, h + W, expect.begin()))
            {
                return true;
            }
            if (!haveWrong || r < wrong.rank || (r == wrong.rank && c < wrong.chunk))
            {
                haveWrong = true;
                wrong.rank = r;
                wrong.chunk = c;
                wrong.held = SetMembers(h, W);
                wrong.expected = SetMembers(expect.data(), W);
            }
            return false;
        };
        switch (type)
        {
        case CollectiveType::AllReduce:
            expect = full;
            for (uint32_t r = 0; r < n && check(r); ++r)
            {
            }
            break;
        case CollectiveType::Reduce:
            expect = full;
            check(root);
            break;
        case CollectiveType::ReduceScatter:
            expect = full;
            check(info.dst);
            break;
        case CollectiveType::AllGather:
            expect[info.src / 64] = uint64_t{1} << (info.src % 64);
            for (uint32_t r = 0; r < n && check(r); ++r)
            {
            }
            break;
        case CollectiveType::Broadcast:
            expect[root / 64] = uint64_t{1} << (root % 64);
            for (uint32_t r = 0; r < n && check(r); ++r)
            {
            }
            break;
        case CollectiveType::AllToAll:
        case CollectiveType::SendRecv:
            expect[info.src / 64] = uint64_t{1} << (info.src % 64);
            check(info.dst);
            break;
        }
        for (uint32_t r : touchedRanks)
        {
            std::fill(bits.begin() + uint64_t{r} * W, bits.begin() + uint64_t{r + 1} * W, 0);
            isTouched[r] = 0;
        }
        touchedRanks.clear();
        // All snapshots of a chunk are consumed by its receives (or dropped
        // with a chunk aborted by an error): start the next chunk afresh.
        freeSlots.clear();
        pool.clear();
    }

    if (!dataErrors.empty())
    {
        // Report the error that happens first in the execution order.
        std::vector<uint32_t> pos(total);
        for (uint32_t k = 0; k < total; ++k)
        {
            pos[order[k]] = k;
        }
        const DataError* first = &dataErrors.front();
        for (const DataError& e : dataErrors)
        {
            if (pos[e.g] < pos[first->g])
            {
                first = &e;
            }
        }
        const uint32_t r = rankOf(first->g);
        const uint32_t i = first->g - base[r];
        const CollectiveOp& op = s.Op(r, i);
        res.status = first->status;
        res.rank = r;
        res.op = i;
        res.chunk = op.chunk;
        switch (first->status)
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
            res.held = first->held;
            std::vector<uint32_t> both;
            std::set_intersection(first->held.begin(),
                                  first->held.end(),
                                  first->other.begin(),
                                  first->other.end(),
                                  std::back_inserter(both));
            res.message = fmt::format("rank {} chunk {}: {} double counts the contribution of "
                                      "rank(s) {}: it holds {} and receives {}",
                                      r,
                                      op.chunk,
                                      Describe(s, r, i),
                                      SetText(both),
                                      SetText(first->held),
                                      SetText(first->other));
            break;
        }
        }
        return res;
    }
    if (haveWrong)
    {
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
