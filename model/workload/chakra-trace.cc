/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "chakra-trace.h"

#include "../collective/collective-algorithms-internal.h"
#include "chakra-et.pb.h"

#include "ns3/collective-algorithms.h"
#include "ns3/fabric-error.h"
#include "ns3/log.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <queue>
#include <tuple>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ChakraTrace");

namespace
{

namespace pb = ChakraProtoMsg;

/// Ranks a replay reads (one file each).
constexpr uint32_t kMaxTraceRanks = 1u << 20;
/// Nodes a replay holds, all ranks (a task and its dependencies each).
constexpr uint64_t kMaxTraceNodes = uint64_t{1} << 24;
/// Largest comm-groups file read.
constexpr uintmax_t kMaxGroupsFileBytes = uintmax_t{64} << 20;

/// What a node is replayed as.
enum class NodeRole : uint8_t
{
    Delay,      //!< busy for duration_micros
    Instant,    //!< takes no time
    Collective, //!< part of a collective
    Send,       //!< point-to-point send
    Recv,       //!< point-to-point receive
};

NodeRole
RoleOf(const std::string& file, const pb::Node& n)
{
    switch (static_cast<int>(n.type()))
    {
    case pb::METADATA_NODE:
        return NodeRole::Instant;
    case pb::MEM_LOAD_NODE:
    case pb::MEM_STORE_NODE:
    case pb::COMP_NODE:
    case pb::STORAGE_NODE:
    case pb::BATCH_NODE:
    case pb::CHECKPOINT_NODE:
        return NodeRole::Delay;
    case pb::COMM_SEND_NODE:
        return NodeRole::Send;
    case pb::COMM_RECV_NODE:
        return NodeRole::Recv;
    case pb::COMM_COLL_NODE:
        return NodeRole::Collective;
    default:
        throw FabricConfigError(fmt::format("{} node {} type", file, n.id()),
                                std::to_string(static_cast<int>(n.type())),
                                "a Chakra node type 1-10 (METADATA_NODE .. CHECKPOINT_NODE)");
    }
}

/// Where an error points: file, node id, field.
std::string
At(const std::string& file, uint64_t id, std::string_view field)
{
    return fmt::format("{} node {} {}", file, id, field);
}

const pb::AttributeProto*
FindAttr(const pb::Node& n, std::string_view name)
{
    for (const auto& a : n.attr())
    {
        if (a.name() == name)
        {
            return &a;
        }
    }
    return nullptr;
}

/// An integer attribute of any of protobuf's integer kinds, or none.
std::optional<int64_t>
IntAttr(const std::string& file, const pb::Node& n, std::string_view name)
{
    const pb::AttributeProto* a = FindAttr(n, name);
    if (!a)
    {
        return std::nullopt;
    }
    using A = pb::AttributeProto;
    switch (a->value_case())
    {
    case A::kInt32Val:
        return a->int32_val();
    case A::kInt64Val:
        return a->int64_val();
    case A::kUint32Val:
        return a->uint32_val();
    case A::kSint32Val:
        return a->sint32_val();
    case A::kSint64Val:
        return a->sint64_val();
    case A::kFixed32Val:
        return a->fixed32_val();
    case A::kSfixed32Val:
        return a->sfixed32_val();
    case A::kSfixed64Val:
        return a->sfixed64_val();
    case A::kUint64Val:
    case A::kFixed64Val: {
        const uint64_t v = a->value_case() == A::kUint64Val ? a->uint64_val() : a->fixed64_val();
        FabricRequire(v <= uint64_t(std::numeric_limits<int64_t>::max()),
                      At(file, n.id(), name),
                      v,
                      "below 2^63");
        return static_cast<int64_t>(v);
    }
    default:
        throw FabricConfigError(At(file, n.id(), name),
                                a->DebugString(),
                                "an integer attribute (int32_val, int64_val, uint64_val, ...)");
    }
}

/// A required integer attribute in [lo, hi].
uint64_t
RequireInt(const std::string& file,
           const pb::Node& n,
           std::string_view name,
           int64_t lo,
           int64_t hi,
           std::string_view allowed)
{
    const std::optional<int64_t> v = IntAttr(file, n, name);
    FabricRequire(v.has_value(), At(file, n.id(), name), "(missing)", allowed);
    FabricRequire(*v >= lo && *v <= hi, At(file, n.id(), name), *v, allowed);
    return static_cast<uint64_t>(*v);
}

std::string
StringAttr(const std::string& file, const pb::Node& n, std::string_view name)
{
    const pb::AttributeProto* a = FindAttr(n, name);
    if (!a)
    {
        return {};
    }
    FabricRequire(a->value_case() == pb::AttributeProto::kStringVal,
                  At(file, n.id(), name),
                  a->DebugString(),
                  "a string attribute (string_val)");
    return a->string_val();
}

/// One rank's file, its nodes in a dependency order.
struct RankTrace
{
    std::string file;
    std::vector<pb::Node> nodes; //!< in replay order (task index)
};

std::string
RankFile(const std::string& prefix, uint32_t rank)
{
    return fmt::format("{}.{}.et", prefix, rank);
}

std::vector<pb::Node>
ParseFile(const std::string& file, uint64_t& totalNodes)
{
    std::error_code error;
    FabricRequire(std::filesystem::is_regular_file(file, error),
                  "trace file",
                  file,
                  "a readable regular file (not a directory, device or pipe)");
    std::ifstream in(file, std::ios::binary);
    FabricRequire(in.good(), "trace file", file, "a readable regular file");
    google::protobuf::io::IstreamInputStream stream(&in);
    using google::protobuf::util::ParseDelimitedFromZeroCopyStream;
    pb::GlobalMetadata meta;
    bool eof = false;
    if (!ParseDelimitedFromZeroCopyStream(&meta, &stream, &eof))
    {
        throw FabricConfigError("trace file",
                                file,
                                eof ? "a Chakra execution trace (it is empty)"
                                    : "a Chakra execution trace: a length-delimited "
                                      "GlobalMetadata, then Nodes (the first message "
                                      "does not parse)");
    }
    std::vector<pb::Node> nodes;
    while (true)
    {
        pb::Node n;
        if (!ParseDelimitedFromZeroCopyStream(&n, &stream, &eof))
        {
            if (eof)
            {
                break;
            }
            throw FabricConfigError(
                fmt::format("trace file {} node message {}", file, nodes.size() + 1),
                nodes.empty() ? "(first node)" : fmt::format("after node {}", nodes.back().id()),
                "a length-delimited Chakra Node (this one does not parse)");
        }
        FabricRequire(++totalNodes <= kMaxTraceNodes,
                      "trace nodes (all ranks)",
                      fmt::format("more than {} at {}", kMaxTraceNodes, file),
                      fmt::format("at most {}", kMaxTraceNodes));
        nodes.push_back(std::move(n));
    }
    return nodes;
}

/// Orders \p nodes so that every node follows its dependencies (smallest id
/// first among the ready ones, so a trace in execution order keeps it).
std::vector<pb::Node>
DependencyOrder(const std::string& file, std::vector<pb::Node> nodes)
{
    std::map<uint64_t, uint32_t> index;
    for (uint32_t i = 0; i < nodes.size(); ++i)
    {
        FabricRequire(index.emplace(nodes[i].id(), i).second,
                      At(file, nodes[i].id(), "id"),
                      nodes[i].id(),
                      "ids unique within a file");
    }
    std::vector<uint32_t> waiting(nodes.size(), 0);
    std::vector<std::vector<uint32_t>> dependents(nodes.size());
    for (uint32_t i = 0; i < nodes.size(); ++i)
    {
        std::vector<uint32_t> deps;
        for (const char* field : {"ctrl_deps", "data_deps"})
        {
            const auto& list = std::string_view(field) == "ctrl_deps" ? nodes[i].ctrl_deps()
                                                                      : nodes[i].data_deps();
            for (uint64_t d : list)
            {
                auto it = index.find(d);
                FabricRequire(it != index.end(),
                              At(file, nodes[i].id(), field),
                              d,
                              "ids of nodes in the same file");
                deps.push_back(it->second);
            }
        }
        std::sort(deps.begin(), deps.end());
        deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
        waiting[i] = deps.size();
        for (uint32_t d : deps)
        {
            dependents[d].push_back(i);
        }
    }
    // ready nodes by id
    std::priority_queue<std::pair<uint64_t, uint32_t>,
                        std::vector<std::pair<uint64_t, uint32_t>>,
                        std::greater<>>
        ready;
    for (uint32_t i = 0; i < nodes.size(); ++i)
    {
        if (waiting[i] == 0)
        {
            ready.emplace(nodes[i].id(), i);
        }
    }
    std::vector<uint32_t> order;
    order.reserve(nodes.size());
    while (!ready.empty())
    {
        const uint32_t i = ready.top().second;
        ready.pop();
        order.push_back(i);
        for (uint32_t j : dependents[i])
        {
            if (--waiting[j] == 0)
            {
                ready.emplace(nodes[j].id(), j);
            }
        }
    }
    if (order.size() < nodes.size())
    {
        // every node left waits on a node left: walk along those
        // dependencies until a node repeats, which is on a cycle
        auto unfinishedDep = [&](uint32_t i) {
            for (const auto* list : {&nodes[i].ctrl_deps(), &nodes[i].data_deps()})
            {
                for (uint64_t d : *list)
                {
                    if (waiting[index[d]] > 0)
                    {
                        return index[d];
                    }
                }
            }
            return i;
        };
        uint32_t at = 0;
        while (waiting[at] == 0)
        {
            ++at;
        }
        std::vector<bool> seen(nodes.size(), false);
        while (!seen[at])
        {
            seen[at] = true;
            at = unfinishedDep(at);
        }
        throw FabricConfigError(At(file, nodes[at].id(), "dependencies"),
                                "a cycle through this node",
                                "dependencies without cycles");
    }
    std::vector<pb::Node> sorted;
    sorted.reserve(nodes.size());
    for (uint32_t i : order)
    {
        sorted.push_back(std::move(nodes[i]));
    }
    return sorted;
}

/// A collective's type name in the module, from Chakra's comm_type.
std::string
CollectiveOf(const std::string& file, const pb::Node& n)
{
    const uint64_t t =
        RequireInt(file, n, "comm_type", 0, 9, "a CollectiveCommType 0-9 (ALL_REDUCE .. BARRIER)");
    switch (static_cast<int>(t))
    {
    case pb::ALL_REDUCE:
    case pb::BARRIER:
        return "allreduce";
    case pb::REDUCE:
        return "reduce";
    case pb::ALL_GATHER:
        return "allgather";
    case pb::BROADCAST:
        return "broadcast";
    case pb::ALL_TO_ALL:
        return "alltoall";
    case pb::REDUCE_SCATTER:
    case pb::REDUCE_SCATTER_BLOCK:
        return "reducescatter";
    default:
        throw FabricConfigError(At(file, n.id(), "comm_type"),
                                std::to_string(t),
                                "ALL_REDUCE, REDUCE, ALL_GATHER, BROADCAST, ALL_TO_ALL, "
                                "REDUCE_SCATTER(_BLOCK) or BARRIER (GATHER and SCATTER "
                                "have no algorithm in the module)");
    }
}

uint64_t
CommSize(const std::string& file, const pb::Node& n)
{
    return RequireInt(file,
                      n,
                      "comm_size",
                      0,
                      static_cast<int64_t>(kMaxCollectiveBytes),
                      fmt::format("bytes, 0 to {}", kMaxCollectiveBytes));
}

/// The comm-groups file: process group name -> ranks in communicator order.
std::map<std::string, std::vector<uint32_t>>
ReadGroups(const std::string& path, uint32_t ranks)
{
    std::error_code error;
    FabricRequire(std::filesystem::is_regular_file(path, error),
                  "comm-groups file",
                  path,
                  "a readable regular file");
    FabricRequire(std::filesystem::file_size(path, error) <= kMaxGroupsFileBytes,
                  "comm-groups file",
                  path,
                  fmt::format("at most {} bytes", kMaxGroupsFileBytes));
    std::ifstream in(path);
    FabricRequire(in.good(), "comm-groups file", path, "a readable regular file");
    nlohmann::json j;
    try
    {
        j = nlohmann::json::parse(in);
    }
    catch (const nlohmann::json::exception& e)
    {
        throw FabricConfigError("comm-groups file " + path,
                                e.what(),
                                "JSON: {\"pg_name\": [rank, ...], ...}");
    }
    FabricRequire(j.is_object(),
                  "comm-groups file " + path,
                  j.type_name(),
                  "a JSON object {\"pg_name\": [rank, ...], ...}");
    std::map<std::string, std::vector<uint32_t>> groups;
    for (const auto& [name, list] : j.items())
    {
        const std::string where = fmt::format("comm-groups file {} group '{}'", path, name);
        FabricRequire(list.is_array() && !list.empty(),
                      where,
                      list.dump(),
                      "a non-empty array of ranks");
        std::vector<uint32_t> members;
        std::vector<bool> in(ranks, false);
        for (const auto& r : list)
        {
            FabricRequire(r.is_number_unsigned() && r.get<uint64_t>() < ranks,
                          where,
                          r.dump(),
                          fmt::format("ranks 0-{} (one trace file each)", ranks - 1));
            const auto rank = r.get<uint32_t>();
            FabricRequire(!in[rank], where, rank, "each rank once");
            in[rank] = true;
            members.push_back(rank);
        }
        groups.emplace(name, std::move(members));
    }
    return groups;
}

/// Builds the program from the ordered traces.
class Replay
{
  public:
    Replay(std::vector<RankTrace> traces, const ChakraReplayOptions& options)
        : m_traces(std::move(traces)),
          m_options(options)
    {
        const auto n = static_cast<uint32_t>(m_traces.size());
        m_out.program.ranks = n;
        m_out.program.tasks.resize(n);
        m_out.computeSeconds.assign(n, 0.0);
        for (const auto& t : m_traces)
        {
            m_out.nodes += t.nodes.size();
        }
    }

    ChakraReplay Build(const std::string& groupsFile)
    {
        Tasks();
        Collectives(groupsFile);
        SendRecvs();
        m_out.program.Validate();
        return std::move(m_out);
    }

  private:
    /// One task per node; comm tasks get their comm later.
    void Tasks()
    {
        for (uint32_t r = 0; r < m_traces.size(); ++r)
        {
            const RankTrace& t = m_traces[r];
            std::map<uint64_t, uint32_t> task;
            for (uint32_t i = 0; i < t.nodes.size(); ++i)
            {
                task.emplace(t.nodes[i].id(), i);
            }
            for (uint32_t i = 0; i < t.nodes.size(); ++i)
            {
                const pb::Node& n = t.nodes[i];
                ProgramTask pt;
                for (uint64_t d : n.ctrl_deps())
                {
                    pt.deps.push_back(task[d]);
                }
                for (uint64_t d : n.data_deps())
                {
                    pt.deps.push_back(task[d]);
                }
                std::sort(pt.deps.begin(), pt.deps.end());
                pt.deps.erase(std::unique(pt.deps.begin(), pt.deps.end()), pt.deps.end());
                switch (RoleOf(t.file, n))
                {
                case NodeRole::Delay:
                    pt.seconds = static_cast<double>(n.duration_micros()) * 1e-6;
                    m_out.computeSeconds[r] += pt.seconds;
                    break;
                case NodeRole::Instant:
                    break;
                case NodeRole::Collective:
                    pt.kind = ProgramTask::Kind::Comm;
                    m_collectives[StringAttr(t.file, n, "pg_name")][r].push_back(i);
                    break;
                case NodeRole::Send:
                case NodeRole::Recv:
                    pt.kind = ProgramTask::Kind::Comm;
                    PointToPoint(r, i, n);
                    break;
                }
                m_out.program.tasks[r].push_back(std::move(pt));
            }
        }
    }

    void PointToPoint(uint32_t rank, uint32_t task, const pb::Node& n)
    {
        const std::string& file = m_traces[rank].file;
        const bool send = n.type() == pb::COMM_SEND_NODE;
        const int64_t last = static_cast<int64_t>(m_traces.size()) - 1;
        const std::string ranks =
            fmt::format("a rank 0-{} other than this file's ({})", last, rank);
        const uint64_t peer = RequireInt(file, n, send ? "comm_dst" : "comm_src", 0, last, ranks);
        FabricRequire(peer != rank, At(file, n.id(), send ? "comm_dst" : "comm_src"), peer, ranks);
        // the optional other end, when given, is this rank
        if (auto self = IntAttr(file, n, send ? "comm_src" : "comm_dst"))
        {
            FabricRequire(*self == rank,
                          At(file, n.id(), send ? "comm_src" : "comm_dst"),
                          *self,
                          fmt::format("this file's rank ({})", rank));
        }
        const int64_t tag = IntAttr(file, n, "comm_tag").value_or(0);
        const auto key = send ? std::make_tuple(uint32_t(rank), uint32_t(peer), tag)
                              : std::make_tuple(uint32_t(peer), uint32_t(rank), tag);
        auto& ends = m_p2p[key];
        (send ? ends.first : ends.second).push_back({rank, task});
    }

    /// The comm of a node, or a task that takes no time (one rank, no bytes).
    void Assign(uint32_t rank, uint32_t task, std::optional<uint32_t> comm)
    {
        ProgramTask& t = m_out.program.tasks[rank][task];
        if (comm)
        {
            t.comm = *comm;
        }
        else
        {
            t.kind = ProgramTask::Kind::Compute;
            t.seconds = 0;
        }
    }

    void Collectives(const std::string& groupsFile)
    {
        const auto n = static_cast<uint32_t>(m_traces.size());
        std::map<std::string, std::vector<uint32_t>> groups;
        if (!groupsFile.empty())
        {
            groups = ReadGroups(groupsFile, n);
        }
        for (auto& [pg, byRank] : m_collectives)
        {
            std::vector<uint32_t> members;
            auto g = groups.find(pg);
            if (g != groups.end())
            {
                members = g->second;
            }
            else
            {
                const auto& [rank, tasks] = *byRank.begin();
                FabricRequire(
                    groupsFile.empty() || pg.empty(),
                    At(m_traces[rank].file, m_traces[rank].nodes[tasks[0]].id(), "pg_name"),
                    pg,
                    "a process group of " + groupsFile);
                for (const auto& entry : byRank)
                {
                    members.push_back(entry.first);
                }
            }
            for (const auto& [rank, tasks] : byRank)
            {
                FabricRequire(
                    std::find(members.begin(), members.end(), rank) != members.end(),
                    At(m_traces[rank].file, m_traces[rank].nodes[tasks[0]].id(), "pg_name"),
                    pg,
                    fmt::format("a process group with rank {} ({} is {})",
                                rank,
                                pg,
                                fmt::join(members, ",")));
            }
            const uint32_t first = members.front();
            const std::vector<uint32_t>& ref = byRank[first];
            for (uint32_t m : members)
            {
                FabricRequire(
                    byRank[m].size() == ref.size(),
                    fmt::format("collectives of process group '{}' in {}", pg, m_traces[m].file),
                    byRank[m].size(),
                    fmt::format("as many as in {} ({}): every member takes part "
                                "in every collective",
                                m_traces[first].file,
                                ref.size()));
            }
            for (uint32_t k = 0; k < ref.size(); ++k)
            {
                Collective(pg, members, byRank, k);
            }
        }
    }

    void Collective(const std::string& pg,
                    const std::vector<uint32_t>& members,
                    std::map<uint32_t, std::vector<uint32_t>>& byRank,
                    uint32_t k)
    {
        const uint32_t first = members.front();
        const std::string& file0 = m_traces[first].file;
        const pb::Node& n0 = m_traces[first].nodes[byRank[first][k]];
        const std::string collective = CollectiveOf(file0, n0);
        const bool barrier = IntAttr(file0, n0, "comm_type") == int64_t(pb::BARRIER);
        uint64_t bytes = CommSize(file0, n0);
        for (uint32_t m : members)
        {
            const pb::Node& n = m_traces[m].nodes[byRank[m][k]];
            for (const char* field : {"comm_type", "comm_size"})
            {
                FabricRequire(IntAttr(m_traces[m].file, n, field) == IntAttr(file0, n0, field),
                              At(m_traces[m].file, n.id(), field),
                              IntAttr(m_traces[m].file, n, field).value_or(-1),
                              fmt::format("the value of collective {} of process group '{}' "
                                          "at {} node {} ({})",
                                          k,
                                          pg,
                                          file0,
                                          n0.id(),
                                          IntAttr(file0, n0, field).value_or(-1)));
            }
        }
        if (barrier && bytes == 0)
        {
            bytes = 4;
        }
        std::optional<uint32_t> comm;
        if (members.size() >= 2 && bytes > 0)
        {
            ProgramComm c;
            c.collective = collective;
            c.algorithm = ReplayAlgorithm(collective, m_options.algorithm);
            c.members = members;
            c.bytes = bytes;
            c.chunkBytes = m_options.chunkBytes;
            c.domainSize = m_options.domainSize;
            c.label = fmt::format("{} '{}' #{} ({})", collective, pg, k, n0.name());
            RequireRunnableComm(c, At(file0, n0.id(), "(collective)"));
            comm = static_cast<uint32_t>(m_out.program.comms.size());
            m_out.program.comms.push_back(std::move(c));
        }
        for (uint32_t m : members)
        {
            Assign(m, byRank[m][k], comm);
        }
    }

    void SendRecvs()
    {
        for (const auto& [key, ends] : m_p2p)
        {
            const auto& [src, dst, tag] = key;
            const auto& [sends, recvs] = ends;
            for (size_t k = 0; k < std::max(sends.size(), recvs.size()); ++k)
            {
                if (k >= sends.size() || k >= recvs.size())
                {
                    const auto [rank, task] = k < sends.size() ? sends[k] : recvs[k];
                    throw FabricConfigError(
                        At(m_traces[rank].file, m_traces[rank].nodes[task].id(), "(peer)"),
                        k < sends.size() ? "a send with no receive" : "a receive with no send",
                        fmt::format("a matching {} in {} (rank {} to {}, comm_tag {}, "
                                    "in order)",
                                    k < sends.size() ? "COMM_RECV_NODE" : "COMM_SEND_NODE",
                                    m_traces[k < sends.size() ? dst : src].file,
                                    src,
                                    dst,
                                    tag));
                }
                const pb::Node& s = m_traces[src].nodes[sends[k].second];
                const pb::Node& r = m_traces[dst].nodes[recvs[k].second];
                const uint64_t bytes = CommSize(m_traces[src].file, s);
                FabricRequire(CommSize(m_traces[dst].file, r) == bytes,
                              At(m_traces[dst].file, r.id(), "comm_size"),
                              CommSize(m_traces[dst].file, r),
                              fmt::format("the size of its send ({} node {}: {})",
                                          m_traces[src].file,
                                          s.id(),
                                          bytes));
                std::optional<uint32_t> comm;
                if (bytes > 0)
                {
                    ProgramComm c;
                    c.collective = "sendrecv";
                    c.algorithm = "direct";
                    c.members = {src, dst};
                    c.bytes = bytes;
                    c.chunkBytes = m_options.chunkBytes;
                    c.label =
                        fmt::format("send {}->{} tag {} #{} ({})", src, dst, tag, k, s.name());
                    comm = static_cast<uint32_t>(m_out.program.comms.size());
                    m_out.program.comms.push_back(std::move(c));
                }
                Assign(src, sends[k].second, comm);
                Assign(dst, recvs[k].second, comm);
            }
        }
    }

    std::vector<RankTrace> m_traces;
    ChakraReplayOptions m_options;
    ChakraReplay m_out;
    /// pg_name -> rank -> task indices of its collectives, in order
    std::map<std::string, std::map<uint32_t, std::vector<uint32_t>>> m_collectives;
    using End = std::pair<uint32_t, uint32_t>; //!< rank, task
    /// (src, dst, tag) -> sends, receives in order
    std::map<std::tuple<uint32_t, uint32_t, int64_t>, std::pair<std::vector<End>, std::vector<End>>>
        m_p2p;
};

} // namespace

std::string
ReplayAlgorithm(const std::string& collective, const std::string& algorithm)
{
    const std::vector<std::string> all = AlgorithmsFor(collective);
    if (algorithm != "auto" && std::find(all.begin(), all.end(), algorithm) != all.end())
    {
        return algorithm;
    }
    return collective == "alltoall" ? "direct" : "ring";
}

void
RequireReplayAlgorithm(const std::string& parameter, const std::string& algorithm)
{
    const bool known = algorithm == "auto" || [&] {
        for (const char* c : {"allreduce", "allgather", "alltoall", "broadcast"})
        {
            const auto all = AlgorithmsFor(c);
            if (std::find(all.begin(), all.end(), algorithm) != all.end())
            {
                return true;
            }
        }
        return false;
    }();
    FabricRequire(known,
                  parameter,
                  algorithm,
                  "auto, ring, tree, halving-doubling, hierarchical, direct or pxn");
}

void
RequireRunnableComm(const ProgramComm& comm, const std::string& where)
{
    ScheduleRequest q;
    q.collective = comm.collective;
    q.algorithm = comm.algorithm;
    q.bytes = comm.bytes;
    q.chunkBytes = comm.chunkBytes;
    q.domainSize = comm.domainSize;
    q.communicator = comm.members;
    try
    {
        // the checks MakeSchedule makes when the run reaches it
        EstimateScheduleSize(q);
    }
    catch (const FabricConfigError& e)
    {
        throw FabricConfigError(where,
                                comm.label,
                                fmt::format("a collective the module can run: {}", e.what()));
    }
}

ChakraReplay
ReadChakraTraces(const std::string& prefix, const ChakraReplayOptions& options)
{
    FabricRequire(!prefix.empty(), "trace prefix", prefix, "a path prefix of PREFIX.RANK.et files");
    RequireReplayAlgorithm("algorithm", options.algorithm);
    // ranks are the files PREFIX.0.et, PREFIX.1.et, ... up to the first gap;
    // a file past the gap is a missing rank
    std::error_code error;
    uint32_t ranks = 0;
    while (ranks < kMaxTraceRanks && std::filesystem::exists(RankFile(prefix, ranks), error))
    {
        ++ranks;
    }
    FabricRequire(ranks >= 1,
                  "trace prefix",
                  prefix,
                  fmt::format("a prefix with trace files {} onwards", RankFile(prefix, 0)));
    FabricRequire(ranks < kMaxTraceRanks,
                  "trace prefix",
                  prefix,
                  fmt::format("at most {} rank files", kMaxTraceRanks - 1));
    const std::filesystem::path p(prefix);
    const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
    const std::string stem = p.filename().string() + ".";
    for (const auto& entry : std::filesystem::directory_iterator(dir, error))
    {
        const std::string name = entry.path().filename().string();
        if (name.size() > stem.size() + 3 && name.compare(0, stem.size(), stem) == 0 &&
            name.compare(name.size() - 3, 3, ".et") == 0)
        {
            const std::string digits = name.substr(stem.size(), name.size() - stem.size() - 3);
            if (!digits.empty() && digits.size() <= 9 &&
                std::all_of(digits.begin(),
                            digits.end(),
                            [](char c) { return c >= '0' && c <= '9'; }) &&
                std::stoul(digits) > ranks)
            {
                throw FabricConfigError("trace files",
                                        RankFile(prefix, ranks),
                                        fmt::format("ranks 0 to n-1 with none missing ({} exists)",
                                                    (dir / name).string()));
            }
        }
    }
    uint64_t total = 0;
    std::vector<RankTrace> traces(ranks);
    for (uint32_t r = 0; r < ranks; ++r)
    {
        traces[r].file = RankFile(prefix, r);
        traces[r].nodes = DependencyOrder(traces[r].file, ParseFile(traces[r].file, total));
    }
    std::string groups = options.commGroups;
    if (groups.empty() && std::filesystem::exists(prefix + ".comm-groups.json", error))
    {
        groups = prefix + ".comm-groups.json";
    }
    NS_LOG_INFO("replaying " << ranks << " ranks, " << total << " nodes"
                             << (groups.empty() ? "" : ", groups from " + groups));
    return Replay(std::move(traces), options).Build(groups);
}

namespace
{

pb::AttributeProto*
AddAttr(pb::Node& n, const std::string& name)
{
    pb::AttributeProto* a = n.add_attr();
    a->set_name(name);
    return a;
}

int
CommTypeOf(const std::string& collective)
{
    static const std::map<std::string, int> types = {{"allreduce", pb::ALL_REDUCE},
                                                     {"reduce", pb::REDUCE},
                                                     {"allgather", pb::ALL_GATHER},
                                                     {"broadcast", pb::BROADCAST},
                                                     {"alltoall", pb::ALL_TO_ALL},
                                                     {"reducescatter", pb::REDUCE_SCATTER}};
    auto it = types.find(collective);
    FabricRequire(it != types.end(),
                  "program comm collective",
                  collective,
                  "allreduce, reduce, allgather, broadcast, alltoall, reducescatter or sendrecv");
    return it->second;
}

} // namespace

void
WriteChakraTraces(const ParallelProgram& program, const std::string& prefix)
{
    program.Validate();
    // one process group per distinct communicator
    std::map<std::vector<uint32_t>, uint32_t> groupOf;
    std::vector<uint32_t> pg(program.comms.size(), 0);
    for (uint32_t c = 0; c < program.comms.size(); ++c)
    {
        const ProgramComm& comm = program.comms[c];
        if (comm.collective != "sendrecv")
        {
            CommTypeOf(comm.collective);
            pg[c] = groupOf.emplace(comm.members, groupOf.size()).first->second;
        }
    }
    // the reader pairs the k-th collective of a group on every member
    std::vector<std::map<uint32_t, std::vector<uint32_t>>> order(program.ranks);
    for (uint32_t r = 0; r < program.ranks; ++r)
    {
        for (const ProgramTask& t : program.tasks[r])
        {
            if (t.kind == ProgramTask::Kind::Comm && program.comms[t.comm].collective != "sendrecv")
            {
                order[r][pg[t.comm]].push_back(t.comm);
            }
        }
    }
    for (const auto& [members, g] : groupOf)
    {
        for (uint32_t m : members)
        {
            FabricRequire(order[m][g] == order[members.front()][g],
                          fmt::format("program comms of communicator {} on rank {}", g, m),
                          fmt::format("{}", fmt::join(order[m][g], ",")),
                          fmt::format("the order they have on rank {} ({})",
                                      members.front(),
                                      fmt::join(order[members.front()][g], ",")));
        }
    }
    nlohmann::json groups = nlohmann::json::object();
    for (const auto& [members, g] : groupOf)
    {
        groups[std::to_string(g)] = members;
    }
    const std::string groupsFile = prefix + ".comm-groups.json";
    {
        std::ofstream out(groupsFile);
        out << groups.dump(1) << '\n';
        FabricRequire(out.good(), "comm-groups file", groupsFile, "a writable path");
    }
    for (uint32_t r = 0; r < program.ranks; ++r)
    {
        const std::string file = RankFile(prefix, r);
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        FabricRequire(out.good(), "trace file", file, "a writable path");
        pb::GlobalMetadata meta;
        meta.set_version("0.0.4");
        google::protobuf::util::SerializeDelimitedToOstream(meta, &out);
        const auto& tasks = program.tasks[r];
        for (uint32_t i = 0; i < tasks.size(); ++i)
        {
            const ProgramTask& t = tasks[i];
            pb::Node n;
            n.set_id(i);
            for (uint32_t d : t.deps)
            {
                n.add_data_deps(d);
            }
            if (t.kind == ProgramTask::Kind::Compute)
            {
                n.set_type(pb::COMP_NODE);
                n.set_name("compute");
                n.set_duration_micros(static_cast<uint64_t>(std::llround(t.seconds * 1e6)));
            }
            else
            {
                const ProgramComm& c = program.comms[t.comm];
                n.set_name(c.label.empty() ? c.collective : c.label);
                if (c.collective == "sendrecv")
                {
                    const bool send = c.members[0] == r;
                    n.set_type(send ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE);
                    AddAttr(n, send ? "comm_dst" : "comm_src")
                        ->set_int64_val(c.members[send ? 1 : 0]);
                    AddAttr(n, "comm_tag")->set_int64_val(t.comm);
                }
                else
                {
                    n.set_type(pb::COMM_COLL_NODE);
                    AddAttr(n, "comm_type")->set_int64_val(CommTypeOf(c.collective));
                    AddAttr(n, "pg_name")->set_string_val(std::to_string(pg[t.comm]));
                }
                AddAttr(n, "comm_size")->set_int64_val(static_cast<int64_t>(c.bytes));
            }
            google::protobuf::util::SerializeDelimitedToOstream(n, &out);
        }
        FabricRequire(out.good(), "trace file", file, "a writable path");
    }
}

} // namespace ns3
