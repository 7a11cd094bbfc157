/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "collective-schedule.h"

#include "ns3/fabric-error.h"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

namespace ns3
{

namespace
{

constexpr const char* kCollectiveNames =
    "allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv";

/// Which chunk fields a collective uses.
bool
UsesSrc(CollectiveType t)
{
    return t == CollectiveType::AllGather || t == CollectiveType::AllToAll ||
           t == CollectiveType::SendRecv;
}

bool
UsesDst(CollectiveType t)
{
    return t == CollectiveType::ReduceScatter || t == CollectiveType::AllToAll ||
           t == CollectiveType::SendRecv;
}

std::string
OpPath(uint32_t rank, uint32_t op)
{
    return fmt::format("ranks[{}].ops[{}]", rank, op);
}

ScheduleIssue
MakeIssue(std::string parameter,
          std::string value,
          std::string allowed,
          uint32_t rank = kNoRank,
          uint32_t op = kNoIndex,
          uint32_t chunk = kNoIndex)
{
    ScheduleIssue i;
    i.parameter = std::move(parameter);
    i.value = std::move(value);
    i.allowed = std::move(allowed);
    i.rank = rank;
    i.op = op;
    i.chunk = chunk;
    return i;
}

using PeerOp = std::pair<uint32_t, uint32_t>; // (peer, op index)

/// Match the sends \p sends of rank \p r to one peer p (sorted by list
/// position) with p's receives \p recvsOfP (sorted by (source, position)):
/// the k-th send pairs with the k-th receive from r. \return the first defect
std::optional<ScheduleIssue>
MatchSendGroup(const CollectiveSchedule& s,
               uint32_t r,
               const PeerOp* sends,
               size_t count,
               const std::vector<PeerOp>& recvsOfP,
               std::vector<std::vector<uint32_t>>& partner)
{
    const uint32_t p = sends[0].first;
    auto lo = std::lower_bound(recvsOfP.begin(), recvsOfP.end(), PeerOp(r, 0));
    size_t have = 0;
    while (lo + have != recvsOfP.end() && (lo + have)->first == r)
    {
        ++have;
    }
    for (size_t k = 0; k < count; ++k)
    {
        const uint32_t i = sends[k].second;
        const CollectiveOp& op = s.Op(r, i);
        if (k >= have)
        {
            return MakeIssue(
                OpPath(r, i),
                fmt::format("send #{} of chunk {} from rank {} to rank {}", k, op.chunk, r, p),
                fmt::format("a matching receive: rank {} posts only {} receive(s) from rank {}",
                            p,
                            have,
                            r),
                r,
                i,
                op.chunk);
        }
        const uint32_t j = (lo + k)->second;
        const CollectiveOp& rv = s.Op(p, j);
        if (rv.chunk != op.chunk || rv.count != op.count || rv.bytes != op.bytes ||
            rv.channel != op.channel)
        {
            return MakeIssue(OpPath(p, j),
                             fmt::format("receive of chunk {} x {} ({} bytes, channel {}) from "
                                         "rank {}",
                                         rv.chunk,
                                         rv.count,
                                         rv.bytes,
                                         rv.channel,
                                         r),
                             fmt::format("the same chunks, bytes and channel as its "
                                         "matching send {} (chunk {} x {}, {} bytes, channel {})",
                                         OpPath(r, i),
                                         op.chunk,
                                         op.count,
                                         op.bytes,
                                         op.channel),
                             p,
                             j,
                             rv.chunk);
        }
        partner[r][i] = j;
        partner[p][j] = i;
    }
    return std::nullopt;
}

/// \return the first receive no send matched (after every send group matched)
std::optional<ScheduleIssue>
UnmatchedReceive(const CollectiveSchedule& s, const std::vector<std::vector<uint32_t>>& partner)
{
    for (uint32_t p = 0; p < s.NumRanks(); ++p)
    {
        const auto& ops = s.Ops(p);
        for (uint32_t j = 0; j < ops.size(); ++j)
        {
            if (ops[j].kind == OpKind::Recv && partner[p][j] == kNoIndex)
            {
                return MakeIssue(OpPath(p, j),
                                 fmt::format("receive of chunk {} at rank {} from rank {}",
                                             ops[j].chunk,
                                             p,
                                             ops[j].peer),
                                 fmt::format("a matching send: rank {} sends fewer messages to "
                                             "rank {}",
                                             ops[j].peer,
                                             p),
                                 p,
                                 j,
                                 ops[j].chunk);
            }
        }
    }
    return std::nullopt;
}

/**
 * Match sends and receives (k-th send r->p with k-th recv at p from r).
 * Fills \p partner (per rank, per op) or returns the first defect.
 */
std::optional<ScheduleIssue>
Match(const CollectiveSchedule& s, std::vector<std::vector<uint32_t>>& partner)
{
    const uint32_t n = s.NumRanks();
    partner.assign(n, {});
    // Per rank, sends sorted by (destination, list position) and receives by
    // (source, list position): the k-th send of the group (r -> p) then
    // pairs with the k-th receive of the group (p <- r).
    std::vector<std::vector<PeerOp>> sends(n);
    std::vector<std::vector<PeerOp>> recvs(n);
    for (uint32_t r = 0; r < n; ++r)
    {
        const auto& ops = s.Ops(r);
        partner[r].assign(ops.size(), kNoIndex);
        for (uint32_t i = 0; i < ops.size(); ++i)
        {
            (ops[i].kind == OpKind::Send ? sends[r] : recvs[r]).emplace_back(ops[i].peer, i);
        }
        std::sort(sends[r].begin(), sends[r].end());
        std::sort(recvs[r].begin(), recvs[r].end());
    }
    for (uint32_t r = 0; r < n; ++r)
    {
        const auto& list = sends[r];
        for (size_t a = 0; a < list.size();)
        {
            const uint32_t p = list[a].first;
            size_t b = a;
            while (b < list.size() && list[b].first == p)
            {
                ++b;
            }
            if (auto issue = MatchSendGroup(s, r, list.data() + a, b - a, recvs[p], partner))
            {
                return issue;
            }
            a = b;
        }
    }
    return UnmatchedReceive(s, partner);
}

// ---- JSON reading helpers: every error names the field ----

const nlohmann::json&
Field(const nlohmann::json& obj, const char* key, const std::string& path)
{
    auto it = obj.find(key);
    if (it == obj.end())
    {
        throw FabricConfigError(path + "." + key, "missing", "a value (required field)");
    }
    return *it;
}

uint64_t
ReadUint(const nlohmann::json& v, const std::string& path, uint64_t max)
{
    if (!v.is_number_integer() ||
        (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() < 0))
    {
        throw FabricConfigError(path, v.dump(), fmt::format("an integer in [0, {}]", max));
    }
    uint64_t x = v.get<uint64_t>();
    if (x > max)
    {
        throw FabricConfigError(path, v.dump(), fmt::format("an integer in [0, {}]", max));
    }
    return x;
}

std::string
ReadString(const nlohmann::json& v, const std::string& path, const char* allowed)
{
    if (!v.is_string())
    {
        throw FabricConfigError(path, v.dump(), allowed);
    }
    return v.get<std::string>();
}

const nlohmann::json&
ReadArray(const nlohmann::json& v, const std::string& path)
{
    if (!v.is_array())
    {
        throw FabricConfigError(path, v.dump().substr(0, 60), "an array");
    }
    return v;
}

const nlohmann::json&
ReadObject(const nlohmann::json& v, const std::string& path)
{
    if (!v.is_object())
    {
        throw FabricConfigError(path, v.dump().substr(0, 60), "an object");
    }
    return v;
}

constexpr const char* kFormatName = "gpu-fabric-collective-schedule";
constexpr int kFormatVersion = 1;

} // namespace

std::string_view
CollectiveTypeName(CollectiveType type)
{
    switch (type)
    {
    case CollectiveType::AllReduce:
        return "allreduce";
    case CollectiveType::AllGather:
        return "allgather";
    case CollectiveType::ReduceScatter:
        return "reducescatter";
    case CollectiveType::Broadcast:
        return "broadcast";
    case CollectiveType::Reduce:
        return "reduce";
    case CollectiveType::AllToAll:
        return "alltoall";
    case CollectiveType::SendRecv:
        return "sendrecv";
    }
    return "unknown";
}

CollectiveType
ParseCollectiveType(std::string_view name, std::string_view parameter)
{
    static const CollectiveType all[] = {CollectiveType::AllReduce,
                                         CollectiveType::AllGather,
                                         CollectiveType::ReduceScatter,
                                         CollectiveType::Broadcast,
                                         CollectiveType::Reduce,
                                         CollectiveType::AllToAll,
                                         CollectiveType::SendRecv};
    for (CollectiveType t : all)
    {
        if (CollectiveTypeName(t) == name)
        {
            return t;
        }
    }
    throw FabricConfigError(parameter, name, kCollectiveNames);
}

bool
CollectiveHasRoot(CollectiveType type)
{
    return type == CollectiveType::Broadcast || type == CollectiveType::Reduce;
}

std::vector<uint64_t>
SplitBytes(uint64_t total, uint64_t parts)
{
    FabricRequire(parts >= 1, "parts", parts, "at least 1");
    std::vector<uint64_t> out(parts, total / parts);
    const uint64_t rem = total % parts;
    for (uint64_t i = 0; i < rem; ++i)
    {
        ++out[i];
    }
    return out;
}

CollectiveSchedule::CollectiveSchedule(CollectiveType type, uint32_t ranks, uint64_t totalBytes)
    : m_type(type),
      m_totalBytes(totalBytes),
      m_programs(ranks)
{
    m_communicator.resize(ranks);
    for (uint32_t i = 0; i < ranks; ++i)
    {
        m_communicator[i] = i;
    }
}

void
CollectiveSchedule::SetCommunicator(std::vector<uint32_t> globalRanks)
{
    FabricRequire(globalRanks.size() == m_communicator.size(),
                  "communicator size",
                  globalRanks.size(),
                  fmt::format("{} (the schedule's rank count)", m_communicator.size()));
    std::vector<uint32_t> sorted = globalRanks;
    std::sort(sorted.begin(), sorted.end());
    auto dup = std::adjacent_find(sorted.begin(), sorted.end());
    FabricRequire(dup == sorted.end(),
                  "communicator",
                  dup == sorted.end() ? 0 : *dup,
                  "distinct global rank ids (this one appears twice)");
    m_communicator = std::move(globalRanks);
}

uint32_t
CollectiveSchedule::AddChunk(uint64_t bytes, uint32_t src, uint32_t dst)
{
    m_chunks.push_back(ChunkInfo{bytes, src, dst});
    return static_cast<uint32_t>(m_chunks.size() - 1);
}

uint32_t
CollectiveSchedule::AddOp(uint32_t rank, const CollectiveOp& op, const uint32_t* deps, size_t n)
{
    if (!(rank < m_programs.size()))
    {
        throw FabricConfigError("rank",
                                fmt::format("{}", rank),
                                fmt::format("a local index below {}", m_programs.size()));
    }
    RankProgram& p = m_programs[rank];
    CollectiveOp o = op;
    o.depBegin = static_cast<uint32_t>(p.deps.size());
    o.depCount = static_cast<uint32_t>(n);
    p.deps.insert(p.deps.end(), deps, deps + n);
    p.ops.push_back(o);
    return static_cast<uint32_t>(p.ops.size() - 1);
}

CollectiveOp
CollectiveSchedule::ChunkOp(OpKind kind,
                            RecvMode mode,
                            uint32_t chunk,
                            uint32_t peer,
                            uint16_t channel,
                            uint32_t count) const
{
    if (!(chunk < m_chunks.size()))
    {
        throw FabricConfigError("chunk",
                                fmt::format("{}", chunk),
                                fmt::format("a chunk index below {}", m_chunks.size()));
    }
    if (!(count >= 1 && count <= m_chunks.size() - chunk))
    {
        throw FabricConfigError(
            "count",
            fmt::format("{}", count),
            fmt::format("1 to {} (chunks from {} to the last)", m_chunks.size() - chunk, chunk));
    }
    CollectiveOp op;
    op.kind = kind;
    op.mode = mode;
    op.chunk = chunk;
    op.count = count;
    op.peer = peer;
    op.channel = channel;
    op.bytes = RunBytes(chunk, count);
    return op;
}

uint64_t
CollectiveSchedule::RunBytes(uint32_t chunk, uint32_t count) const
{
    uint64_t b = 0;
    for (uint32_t c = chunk; c < chunk + count; ++c)
    {
        b += m_chunks.at(c).bytes;
    }
    return b;
}

uint32_t
CollectiveSchedule::AddSend(uint32_t rank,
                            uint32_t chunk,
                            uint32_t peer,
                            const std::vector<uint32_t>& deps,
                            uint16_t channel,
                            uint32_t count)
{
    const CollectiveOp op = ChunkOp(OpKind::Send, RecvMode::Copy, chunk, peer, channel, count);
    return AddOp(rank, op, deps.data(), deps.size());
}

uint32_t
CollectiveSchedule::AddRecv(uint32_t rank,
                            uint32_t chunk,
                            uint32_t peer,
                            RecvMode mode,
                            const std::vector<uint32_t>& deps,
                            uint16_t channel,
                            uint32_t count)
{
    const CollectiveOp op = ChunkOp(OpKind::Recv, mode, chunk, peer, channel, count);
    return AddOp(rank, op, deps.data(), deps.size());
}

uint64_t
CollectiveSchedule::TotalOps() const
{
    uint64_t t = 0;
    for (const auto& p : m_programs)
    {
        t += p.ops.size();
    }
    return t;
}

void
CollectiveSchedule::SetDeps(uint32_t rank, uint32_t i, const std::vector<uint32_t>& deps)
{
    RankProgram& p = m_programs.at(rank);
    CollectiveOp& op = p.ops.at(i);
    // Appending keeps other ops' ranges valid; the old range becomes unused.
    op.depBegin = static_cast<uint32_t>(p.deps.size());
    op.depCount = static_cast<uint32_t>(deps.size());
    p.deps.insert(p.deps.end(), deps.begin(), deps.end());
}

void
CollectiveSchedule::ReserveOps(uint32_t rank, size_t ops, size_t deps)
{
    m_programs.at(rank).ops.reserve(ops);
    m_programs.at(rank).deps.reserve(deps);
}

void
CollectiveSchedule::RemoveOp(uint32_t rank, uint32_t i)
{
    RankProgram& p = m_programs.at(rank);
    FabricRequire(i < p.ops.size(), "op", i, fmt::format("an index below {}", p.ops.size()));
    RankProgram q;
    q.ops.reserve(p.ops.size() - 1);
    for (uint32_t k = 0; k < p.ops.size(); ++k)
    {
        if (k == i)
        {
            continue;
        }
        CollectiveOp op = p.ops[k];
        op.depBegin = static_cast<uint32_t>(q.deps.size());
        uint32_t count = 0;
        for (uint32_t d = 0; d < p.ops[k].depCount; ++d)
        {
            uint32_t dep = p.deps[p.ops[k].depBegin + d];
            if (dep == i)
            {
                continue;
            }
            q.deps.push_back(dep > i ? dep - 1 : dep);
            ++count;
        }
        op.depCount = count;
        q.ops.push_back(op);
    }
    p = std::move(q);
}

uint64_t
CollectiveSchedule::BytesSent(uint32_t rank) const
{
    uint64_t t = 0;
    for (const auto& op : m_programs.at(rank).ops)
    {
        t += op.kind == OpKind::Send ? op.bytes : 0;
    }
    return t;
}

uint64_t
CollectiveSchedule::BytesReceived(uint32_t rank) const
{
    uint64_t t = 0;
    for (const auto& op : m_programs.at(rank).ops)
    {
        t += op.kind == OpKind::Recv ? op.bytes : 0;
    }
    return t;
}

uint64_t
CollectiveSchedule::TotalBytesSent() const
{
    uint64_t t = 0;
    for (uint32_t r = 0; r < NumRanks(); ++r)
    {
        t += BytesSent(r);
    }
    return t;
}

uint64_t
CollectiveSchedule::TotalBytesReceived() const
{
    uint64_t t = 0;
    for (uint32_t r = 0; r < NumRanks(); ++r)
    {
        t += BytesReceived(r);
    }
    return t;
}

std::vector<PairBytes>
CollectiveSchedule::TrafficMatrix() const
{
    std::vector<PairBytes> out;
    const uint32_t n = NumRanks();
    std::vector<uint32_t> slot(n, kNoIndex);
    for (uint32_t r = 0; r < n; ++r)
    {
        const size_t first = out.size();
        for (const auto& op : m_programs[r].ops)
        {
            if (op.kind != OpKind::Send || op.peer >= n)
            {
                continue;
            }
            if (slot[op.peer] == kNoIndex)
            {
                slot[op.peer] = static_cast<uint32_t>(out.size());
                out.push_back(PairBytes{r, op.peer, 0, 0});
            }
            out[slot[op.peer]].bytes += op.bytes;
            out[slot[op.peer]].messages += 1;
        }
        for (size_t k = first; k < out.size(); ++k)
        {
            slot[out[k].dst] = kNoIndex;
        }
        std::sort(out.begin() + first, out.end(), [](const PairBytes& a, const PairBytes& b) {
            return a.dst < b.dst;
        });
    }
    return out;
}

std::optional<ScheduleIssue>
CollectiveSchedule::FindStructureError() const
{
    return FindStructureError(nullptr);
}

namespace
{

/// Chunk \p c's src and dst, where the collective \p type uses them.
std::optional<ScheduleIssue>
ChunkFieldError(CollectiveType type, uint32_t n, uint32_t c, const ChunkInfo& ch)
{
    if (UsesSrc(type) && ch.src >= n)
    {
        return MakeIssue(fmt::format("chunks[{}].src", c),
                         ch.src == kNoRank ? "none" : std::to_string(ch.src),
                         fmt::format("a local index below {} for {}", n, CollectiveTypeName(type)),
                         kNoRank,
                         kNoIndex,
                         c);
    }
    if (UsesDst(type) && ch.dst >= n)
    {
        return MakeIssue(fmt::format("chunks[{}].dst", c),
                         ch.dst == kNoRank ? "none" : std::to_string(ch.dst),
                         fmt::format("a local index below {} for {}", n, CollectiveTypeName(type)),
                         kNoRank,
                         kNoIndex,
                         c);
    }
    if (type == CollectiveType::SendRecv && ch.src == ch.dst)
    {
        return MakeIssue(fmt::format("chunks[{}].dst", c),
                         std::to_string(ch.dst),
                         "a rank other than the chunk's src for sendrecv",
                         kNoRank,
                         kNoIndex,
                         c);
    }
    return std::nullopt;
}

/// Chunk bytes per collective: per source (AllToAll), per (src, dst) pair
/// (SendRecv, keyed src * n + dst) or in all (the others) equal to \p total.
std::optional<ScheduleIssue>
ChunkBytesError(CollectiveType type,
                uint32_t n,
                uint64_t total,
                const std::vector<uint64_t>& perSrc,
                const std::unordered_map<uint64_t, uint64_t>& perPair,
                uint64_t sum)
{
    if (type == CollectiveType::AllToAll)
    {
        for (uint32_t r = 0; r < n; ++r)
        {
            if (perSrc[r] != total)
            {
                return MakeIssue(
                    "chunks",
                    fmt::format("{} bytes with src {}", perSrc[r], r),
                    fmt::format("chunks of every source summing to total_bytes ({})", total),
                    r);
            }
        }
    }
    else if (type == CollectiveType::SendRecv)
    {
        for (const auto& [key, bytes] : perPair)
        {
            if (bytes != total)
            {
                return MakeIssue("chunks",
                                 fmt::format("{} bytes from {} to {}", bytes, key / n, key % n),
                                 fmt::format("chunks of every (src, dst) pair summing to "
                                             "total_bytes ({})",
                                             total),
                                 static_cast<uint32_t>(key / n));
            }
        }
    }
    else if (sum != total)
    {
        return MakeIssue("chunks",
                         fmt::format("{} bytes in all chunks", sum),
                         fmt::format("chunks summing to total_bytes ({})", total));
    }
    return std::nullopt;
}

/// What is wrong with an operation, in the order it is checked.
enum class OpDefect : uint8_t
{
    None,
    Peer,     // out of range or the rank itself
    Chunk,    // first chunk out of range
    Count,    // chunks past the last
    Bytes,    // not its chunks' sizes
    Mode,     // a mode on a send
    DepRange, // dependencies outside the rank's dependency array
    DepOrder, // a dependency not on an earlier op
};

/**
 * The first defect of op \p i of rank \p r (\p deps: the rank's dependency
 * array; \p dep: the offending dependency, for DepOrder).  No message is made
 * here: large schedules have millions of ops and almost never a defect.
 */
OpDefect
FindOpDefect(const CollectiveSchedule& s,
             const CollectiveOp& op,
             uint32_t r,
             uint32_t i,
             const std::vector<uint32_t>& deps,
             uint32_t& dep)
{
    const uint32_t nChunks = s.NumChunks();
    if (op.peer >= s.NumRanks() || op.peer == r)
    {
        return OpDefect::Peer;
    }
    if (op.chunk >= nChunks)
    {
        return OpDefect::Chunk;
    }
    if (op.count < 1 || op.count > nChunks - op.chunk)
    {
        return OpDefect::Count;
    }
    if (op.bytes != s.RunBytes(op.chunk, op.count))
    {
        return OpDefect::Bytes;
    }
    if (op.kind == OpKind::Send && op.mode != RecvMode::Copy)
    {
        return OpDefect::Mode;
    }
    if (uint64_t{op.depBegin} + op.depCount > deps.size())
    {
        return OpDefect::DepRange;
    }
    for (uint32_t d = 0; d < op.depCount; ++d)
    {
        dep = deps[op.depBegin + d];
        if (dep >= i)
        {
            return OpDefect::DepOrder;
        }
    }
    return OpDefect::None;
}

/// The issue for \p defect of op \p i of rank \p r (see FindOpDefect).
ScheduleIssue
OpIssue(const CollectiveSchedule& s,
        OpDefect defect,
        const CollectiveOp& op,
        uint32_t r,
        uint32_t i,
        uint32_t dep)
{
    const uint32_t n = s.NumRanks();
    const uint32_t nChunks = s.NumChunks();
    const std::string path = OpPath(r, i);
    switch (defect)
    {
    case OpDefect::Peer:
        return MakeIssue(path + ".peer",
                         std::to_string(op.peer),
                         fmt::format("a local index below {} other than {}", n, r),
                         r,
                         i,
                         op.chunk);
    case OpDefect::Chunk:
        return MakeIssue(path + ".chunk",
                         std::to_string(op.chunk),
                         fmt::format("a chunk index below {}", nChunks),
                         r,
                         i);
    case OpDefect::Count:
        return MakeIssue(
            path + ".count",
            std::to_string(op.count),
            fmt::format("1 to {} (chunks from {} to the last)", nChunks - op.chunk, op.chunk),
            r,
            i,
            op.chunk);
    case OpDefect::Bytes: {
        const uint64_t want = s.RunBytes(op.chunk, op.count);
        return MakeIssue(path + ".bytes",
                         std::to_string(op.bytes),
                         op.count == 1 ? fmt::format("the size of chunk {} ({})", op.chunk, want)
                                       : fmt::format("the size of chunks {} to {} ({})",
                                                     op.chunk,
                                                     op.chunk + op.count - 1,
                                                     want),
                         r,
                         i,
                         op.chunk);
    }
    case OpDefect::Mode:
        return MakeIssue(path + ".mode", "reduce", "no mode on a send", r, i, op.chunk);
    case OpDefect::DepRange:
        return MakeIssue(path + ".deps",
                         "out of the dependency array",
                         "a valid range",
                         r,
                         i,
                         op.chunk);
    case OpDefect::DepOrder:
    case OpDefect::None:
        break;
    }
    return MakeIssue(path + ".deps",
                     std::to_string(dep),
                     fmt::format("indices of earlier ops of rank {} (below {})", r, i),
                     r,
                     i,
                     op.chunk);
}

} // namespace

std::optional<ScheduleIssue>
CollectiveSchedule::FindStructureError(std::vector<std::vector<uint32_t>>* matching) const
{
    // In the documented order: each check may index what the ones before it
    // found in range.
    if (auto issue = FindCommunicatorError())
    {
        return issue;
    }
    if (auto issue = FindChunksError())
    {
        return issue;
    }
    if (auto issue = FindOpsError())
    {
        return issue;
    }
    std::vector<std::vector<uint32_t>> partner;
    auto issue = Match(*this, partner);
    if (!issue && matching)
    {
        *matching = std::move(partner);
    }
    return issue;
}

std::optional<ScheduleIssue>
CollectiveSchedule::FindCommunicatorError() const
{
    const uint32_t n = NumRanks();
    if (n == 0)
    {
        return MakeIssue("communicator", "[]", "at least one rank");
    }
    {
        std::vector<uint32_t> sorted = m_communicator;
        std::sort(sorted.begin(), sorted.end());
        auto dup = std::adjacent_find(sorted.begin(), sorted.end());
        if (dup != sorted.end())
        {
            return MakeIssue("communicator",
                             std::to_string(*dup),
                             "distinct global rank ids (this one appears twice)");
        }
    }
    if (m_programs.size() != n)
    {
        return MakeIssue("ranks",
                         fmt::format("{} programs", m_programs.size()),
                         fmt::format("one program per communicator entry ({})", n));
    }
    if (CollectiveHasRoot(m_type) && m_root >= n)
    {
        return MakeIssue(
            "root",
            m_root == kNoRank ? "none" : std::to_string(m_root),
            fmt::format("a local index below {} for {}", n, CollectiveTypeName(m_type)));
    }
    if (m_type == CollectiveType::SendRecv && m_chunks.empty())
    {
        return MakeIssue("chunks", "[]", "at least one chunk for sendrecv");
    }
    return std::nullopt;
}

std::optional<ScheduleIssue>
CollectiveSchedule::FindChunksError() const
{
    const uint32_t n = NumRanks();
    std::vector<uint64_t> perSrc(UsesSrc(m_type) ? n : 0, 0);
    std::unordered_map<uint64_t, uint64_t> perPair;
    uint64_t sum = 0;
    for (uint32_t c = 0; c < m_chunks.size(); ++c)
    {
        const ChunkInfo& ch = m_chunks[c];
        if (auto issue = ChunkFieldError(m_type, n, c, ch))
        {
            return issue;
        }
        sum += ch.bytes;
        if (UsesSrc(m_type))
        {
            perSrc[ch.src] += ch.bytes;
        }
        if (m_type == CollectiveType::SendRecv)
        {
            perPair[uint64_t{ch.src} * n + ch.dst] += ch.bytes;
        }
    }
    return ChunkBytesError(m_type, n, m_totalBytes, perSrc, perPair, sum);
}

std::optional<ScheduleIssue>
CollectiveSchedule::FindOpsError() const
{
    for (uint32_t r = 0; r < NumRanks(); ++r)
    {
        const RankProgram& p = m_programs[r];
        for (uint32_t i = 0; i < p.ops.size(); ++i)
        {
            uint32_t dep = 0;
            const OpDefect defect = FindOpDefect(*this, p.ops[i], r, i, p.deps, dep);
            if (defect != OpDefect::None)
            {
                return OpIssue(*this, defect, p.ops[i], r, i, dep);
            }
        }
    }
    return std::nullopt;
}

void
CollectiveSchedule::Validate() const
{
    ValidatedMatching();
}

std::vector<std::vector<uint32_t>>
CollectiveSchedule::ValidatedMatching() const
{
    std::vector<std::vector<uint32_t>> partner;
    if (auto issue = FindStructureError(&partner))
    {
        throw FabricConfigError("schedule " + issue->parameter, issue->value, issue->allowed);
    }
    return partner;
}

std::vector<std::vector<uint32_t>>
CollectiveSchedule::MatchingOps() const
{
    std::vector<std::vector<uint32_t>> partner;
    if (auto issue = Match(*this, partner))
    {
        throw FabricConfigError("schedule " + issue->parameter, issue->value, issue->allowed);
    }
    return partner;
}

nlohmann::json
CollectiveSchedule::ToJson() const
{
    nlohmann::json j;
    j["format"] = kFormatName;
    j["version"] = kFormatVersion;
    j["collective"] = std::string(CollectiveTypeName(m_type));
    j["algorithm"] = m_algorithm;
    if (m_inOrderConnections)
    {
        j["in_order_connections"] = true;
    }
    if (m_root != kNoRank)
    {
        j["root"] = m_root;
    }
    j["communicator"] = m_communicator;
    j["total_bytes"] = m_totalBytes;
    nlohmann::json chunks = nlohmann::json::array();
    for (const ChunkInfo& c : m_chunks)
    {
        nlohmann::json cj;
        cj["bytes"] = c.bytes;
        if (c.src != kNoRank)
        {
            cj["src"] = c.src;
        }
        if (c.dst != kNoRank)
        {
            cj["dst"] = c.dst;
        }
        chunks.push_back(std::move(cj));
    }
    j["chunks"] = std::move(chunks);
    nlohmann::json ranks = nlohmann::json::array();
    for (uint32_t r = 0; r < m_programs.size(); ++r)
    {
        nlohmann::json ops = nlohmann::json::array();
        for (uint32_t i = 0; i < m_programs[r].ops.size(); ++i)
        {
            const CollectiveOp& op = m_programs[r].ops[i];
            nlohmann::json oj;
            oj["op"] = op.kind == OpKind::Send ? "send" : "recv";
            oj["chunk"] = op.chunk;
            if (op.count != 1)
            {
                oj["count"] = op.count;
            }
            oj["peer"] = op.peer;
            oj["bytes"] = op.bytes;
            if (op.kind == OpKind::Recv)
            {
                oj["mode"] = op.mode == RecvMode::Copy ? "copy" : "reduce";
            }
            oj["channel"] = op.channel;
            nlohmann::json deps = nlohmann::json::array();
            for (uint32_t d : Deps(r, i))
            {
                deps.push_back(d);
            }
            oj["deps"] = std::move(deps);
            ops.push_back(std::move(oj));
        }
        nlohmann::json rj;
        rj["ops"] = std::move(ops);
        ranks.push_back(std::move(rj));
    }
    j["ranks"] = std::move(ranks);
    return j;
}

CollectiveSchedule
CollectiveSchedule::FromJson(const nlohmann::json& j)
{
    const std::string root = "schedule";
    ReadObject(j, root);
    constexpr uint64_t kU32 = std::numeric_limits<uint32_t>::max() - 1;
    if (j.contains("format"))
    {
        std::string f = ReadString(j["format"], root + ".format", kFormatName);
        FabricRequire(f == kFormatName, root + ".format", f, kFormatName);
    }
    if (j.contains("version"))
    {
        uint64_t v = ReadUint(j["version"], root + ".version", 1000);
        FabricRequire(v == kFormatVersion, root + ".version", v, "1");
    }
    const std::string collName =
        ReadString(Field(j, "collective", root), root + ".collective", kCollectiveNames);
    CollectiveType type = ParseCollectiveType(collName, root + ".collective");
    const auto& comm = ReadArray(Field(j, "communicator", root), root + ".communicator");
    std::vector<uint32_t> communicator;
    communicator.reserve(comm.size());
    for (size_t i = 0; i < comm.size(); ++i)
    {
        communicator.push_back(static_cast<uint32_t>(
            ReadUint(comm[i], fmt::format("{}.communicator[{}]", root, i), kU32)));
    }
    FabricRequire(!communicator.empty(), root + ".communicator", "[]", "at least one rank");
    const uint32_t n = static_cast<uint32_t>(communicator.size());
    uint64_t total = ReadUint(Field(j, "total_bytes", root),
                              root + ".total_bytes",
                              std::numeric_limits<uint64_t>::max());
    CollectiveSchedule s(type, n, total);
    s.SetCommunicator(std::move(communicator));
    if (j.contains("algorithm"))
    {
        s.SetAlgorithm(ReadString(j["algorithm"], root + ".algorithm", "a string"));
    }
    if (j.contains("in_order_connections"))
    {
        const auto& v = j["in_order_connections"];
        FabricRequire(v.is_boolean(), root + ".in_order_connections", v.dump(), "true or false");
        s.SetInOrderConnections(v.get<bool>());
    }
    if (j.contains("root"))
    {
        s.SetRoot(static_cast<uint32_t>(ReadUint(j["root"], root + ".root", n - 1)));
    }
    const auto& chunks = ReadArray(Field(j, "chunks", root), root + ".chunks");
    for (size_t c = 0; c < chunks.size(); ++c)
    {
        const std::string path = fmt::format("{}.chunks[{}]", root, c);
        const auto& cj = ReadObject(chunks[c], path);
        uint64_t bytes = ReadUint(Field(cj, "bytes", path),
                                  path + ".bytes",
                                  std::numeric_limits<uint64_t>::max());
        uint32_t src = kNoRank;
        uint32_t dst = kNoRank;
        if (cj.contains("src"))
        {
            src = static_cast<uint32_t>(ReadUint(cj["src"], path + ".src", n - 1));
        }
        if (cj.contains("dst"))
        {
            dst = static_cast<uint32_t>(ReadUint(cj["dst"], path + ".dst", n - 1));
        }
        s.AddChunk(bytes, src, dst);
    }
    const auto& ranks = ReadArray(Field(j, "ranks", root), root + ".ranks");
    FabricRequire(ranks.size() == n,
                  root + ".ranks",
                  fmt::format("{} entries", ranks.size()),
                  fmt::format("one entry per communicator rank ({})", n));
    std::vector<uint32_t> deps;
    for (uint32_t r = 0; r < n; ++r)
    {
        const std::string rpath = fmt::format("{}.ranks[{}]", root, r);
        const auto& rj = ReadObject(ranks[r], rpath);
        const auto& ops = ReadArray(Field(rj, "ops", rpath), rpath + ".ops");
        for (size_t i = 0; i < ops.size(); ++i)
        {
            const std::string path = fmt::format("{}.ops[{}]", rpath, i);
            const auto& oj = ReadObject(ops[i], path);
            CollectiveOp op;
            std::string kind = ReadString(Field(oj, "op", path), path + ".op", "send, recv");
            if (kind == "send")
            {
                op.kind = OpKind::Send;
                FabricRequire(!oj.contains("mode"), path + ".mode", "present", "absent on a send");
            }
            else if (kind == "recv")
            {
                op.kind = OpKind::Recv;
                std::string mode =
                    ReadString(Field(oj, "mode", path), path + ".mode", "copy, reduce");
                FabricRequire(mode == "copy" || mode == "reduce",
                              path + ".mode",
                              mode,
                              "copy, reduce");
                op.mode = mode == "copy" ? RecvMode::Copy : RecvMode::Reduce;
            }
            else
            {
                throw FabricConfigError(path + ".op", kind, "send, recv");
            }
            op.chunk =
                static_cast<uint32_t>(ReadUint(Field(oj, "chunk", path), path + ".chunk", kU32));
            if (!(op.chunk < s.NumChunks()))
            {
                throw FabricConfigError(path + ".chunk",
                                        fmt::format("{}", op.chunk),
                                        fmt::format("a chunk index below {}", s.NumChunks()));
            }
            op.count = oj.contains("count")
                           ? static_cast<uint32_t>(
                                 ReadUint(oj["count"], path + ".count", s.NumChunks() - op.chunk))
                           : 1;
            FabricRequire(op.count >= 1,
                          path + ".count",
                          op.count,
                          fmt::format("1 to {}", s.NumChunks() - op.chunk));
            op.peer =
                static_cast<uint32_t>(ReadUint(Field(oj, "peer", path), path + ".peer", n - 1));
            op.bytes =
                oj.contains("bytes")
                    ? ReadUint(oj["bytes"], path + ".bytes", std::numeric_limits<uint64_t>::max())
                    : s.RunBytes(op.chunk, op.count);
            op.channel = oj.contains("channel")
                             ? static_cast<uint16_t>(ReadUint(oj["channel"],
                                                              path + ".channel",
                                                              std::numeric_limits<uint16_t>::max()))
                             : 0;
            deps.clear();
            if (oj.contains("deps"))
            {
                const auto& dj = ReadArray(oj["deps"], path + ".deps");
                for (size_t d = 0; d < dj.size(); ++d)
                {
                    deps.push_back(static_cast<uint32_t>(
                        ReadUint(dj[d], fmt::format("{}.deps[{}]", path, d), kU32)));
                }
            }
            s.AddOp(r, op, deps.data(), deps.size());
        }
    }
    s.Validate();
    return s;
}

std::string
CollectiveSchedule::ToJsonString(int indent) const
{
    return ToJson().dump(indent);
}

CollectiveSchedule
CollectiveSchedule::FromJsonString(const std::string& text)
{
    nlohmann::json j;
    try
    {
        j = nlohmann::json::parse(text);
    }
    catch (const nlohmann::json::parse_error& e)
    {
        throw FabricConfigError("schedule JSON", e.what(), "well-formed JSON");
    }
    return FromJson(j);
}

void
CollectiveSchedule::Save(const std::string& path) const
{
    std::ofstream out(path);
    FabricRequire(static_cast<bool>(out), "schedule file", path, "a writable path");
    out << ToJsonString(1) << "\n";
    // a text smaller than the stream's buffer reaches the file only at close
    out.close();
    FabricRequire(!out.fail(), "schedule file", path, "a path with room to write");
}

CollectiveSchedule
CollectiveSchedule::Load(const std::string& path)
{
    std::ifstream in(path);
    FabricRequire(static_cast<bool>(in), "schedule file", path, "a readable JSON file");
    std::stringstream ss;
    ss << in.rdbuf();
    return FromJsonString(ss.str());
}

} // namespace ns3
