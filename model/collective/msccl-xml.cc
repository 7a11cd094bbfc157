/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "msccl-xml.h"

#include "schedule-checker.h"

#include "ns3/fabric-error.h"

#include <algorithm>
#include <charconv>
#include <deque>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <pugixml.hpp>
#include <queue>
#include <set>
#include <sstream>
#include <tuple>

namespace ns3
{

namespace
{

/// MSCCL files above this many chunks per loop are refused (their runtime holds far fewer).
constexpr int64_t kMaxMscclChunks = 1 << 20;

/// \return the coll attribute MSCCL uses for \p type; empty if MSCCL has none we write
std::string_view
MscclCollName(CollectiveType type)
{
    if (type == CollectiveType::AllToAll || type == CollectiveType::SendRecv)
    {
        return "";
    }
    // msccl-tools spells one name its own way
    return type == CollectiveType::ReduceScatter ? "reduce_scatter" : CollectiveTypeName(type);
}

constexpr const char* kCollsAllowed = "allreduce, allgather, reduce_scatter, broadcast, reduce";

/// In place, one buffer holds every chunk: allgather's output, the others' input.
const char*
PrimaryBuffer(CollectiveType type)
{
    return type == CollectiveType::AllGather ? "o" : "i";
}

/// Which rank a chunk belongs to in MSCCL's layout (rank r's share at r*k..), or kNoRank.
uint32_t
ChunkOwner(CollectiveType type, const ChunkInfo& c)
{
    if (type == CollectiveType::AllGather)
    {
        return c.src;
    }
    if (type == CollectiveType::ReduceScatter)
    {
        return c.dst;
    }
    return kNoRank;
}

// ---------------------------------------------------------------------------
// Export

/// A thread block: (direction, peer, channel), direction 0 send, 1 receive.
using TbKey = std::tuple<int, uint32_t, uint16_t>;

/// One step to write: an operation, or a nop carrying one extra dependency.
struct OutStep
{
    uint32_t op;            //!< the op (a nop: the op it precedes)
    bool nop{false};        //!< nop step
    uint32_t dep{kNoIndex}; //!< op waited for in another thread block
};

/// MSCCL chunk offsets and counts of a schedule's chunks.
struct ChunkLayout
{
    std::vector<uint64_t> offset; //!< per chunk
    std::vector<uint64_t> units;  //!< per chunk
    uint64_t total{0};            //!< nchunksperloop
};

ChunkLayout
LayOutChunks(const CollectiveSchedule& s)
{
    const uint32_t m = s.NumChunks();
    ChunkLayout l;
    l.units.assign(m, 1);
    uint64_t lo = UINT64_MAX;
    uint64_t hi = 0;
    uint64_t base = UINT64_MAX;
    for (const ChunkInfo& c : s.Chunks())
    {
        lo = std::min(lo, c.bytes);
        hi = std::max(hi, c.bytes);
        if (c.bytes > 0)
        {
            base = std::min(base, c.bytes);
        }
    }
    // chunks cut from one split differ by a byte at most: one MSCCL chunk
    // each; other sizes become whole multiples of the smallest
    if (m > 0 && hi - lo > 1)
    {
        for (uint32_t c = 0; c < m; ++c)
        {
            l.units[c] = std::max<uint64_t>(1, (s.Chunk(c).bytes + base / 2) / base);
        }
    }
    std::vector<uint32_t> order(m);
    for (uint32_t c = 0; c < m; ++c)
    {
        order[c] = c;
    }
    const CollectiveType type = s.Type();
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return ChunkOwner(type, s.Chunk(a)) < ChunkOwner(type, s.Chunk(b));
    });
    l.offset.assign(m, 0);
    for (uint32_t c : order)
    {
        l.offset[c] = l.total;
        l.total += l.units[c];
    }
    FabricRequire(l.total <= static_cast<uint64_t>(kMaxMscclChunks),
                  "schedule chunks",
                  fmt::format("{} MSCCL chunks", l.total),
                  fmt::format("at most {} MSCCL chunks per loop", kMaxMscclChunks));
    if (type == CollectiveType::AllGather || type == CollectiveType::ReduceScatter)
    {
        const uint32_t n = s.NumRanks();
        std::vector<uint64_t> share(n, 0);
        for (uint32_t c = 0; c < m; ++c)
        {
            share[ChunkOwner(type, s.Chunk(c))] += l.units[c];
        }
        for (uint32_t r = 0; r < n; ++r)
        {
            FabricRequire(share[r] * n == l.total,
                          "schedule chunks",
                          fmt::format("rank {} owns {} of {} MSCCL chunks", r, share[r], l.total),
                          "every rank the same share (MSCCL lays rank r's chunks at r*k ..)");
        }
    }
    return l;
}

/// \return the MSCCL (offset, cnt) of an op, whose chunks must be consecutive there
std::pair<uint64_t, uint64_t>
OpRange(const CollectiveSchedule& s, const ChunkLayout& l, uint32_t rank, uint32_t i)
{
    const CollectiveOp& op = s.Op(rank, i);
    uint64_t cnt = 0;
    for (uint32_t k = 0; k < op.count; ++k)
    {
        const uint32_t c = op.chunk + k;
        FabricRequire(l.offset[c] == l.offset[op.chunk] + cnt,
                      fmt::format("ranks[{}].ops[{}].count", rank, i),
                      op.count,
                      "chunks that lie next to each other in MSCCL's layout");
        cnt += l.units[c];
    }
    return {l.offset[op.chunk], cnt};
}

void
SetInt(pugi::xml_node node, const char* name, int64_t value)
{
    node.append_attribute(name).set_value(static_cast<long long>(value));
}

} // namespace

std::string
MscclXml::Export(const CollectiveSchedule& s, const MscclExportOptions& options)
{
    s.Validate();
    const CollectiveType type = s.Type();
    FabricRequire(!MscclCollName(type).empty(),
                  "collective",
                  CollectiveTypeName(type),
                  "allreduce, allgather, reducescatter, broadcast, reduce (MSCCL export of "
                  "alltoall and sendrecv is not supported)");
    const uint32_t n = s.NumRanks();
    const ChunkLayout layout = LayOutChunks(s);
    const uint64_t share = layout.total / std::max<uint32_t>(n, 1);

    uint32_t nchannels = 1;
    for (uint32_t r = 0; r < n; ++r)
    {
        for (const CollectiveOp& op : s.Ops(r))
        {
            nchannels = std::max<uint32_t>(nchannels, op.channel + 1u);
        }
    }

    pugi::xml_document doc;
    pugi::xml_node algo = doc.append_child("algo");
    const std::string name =
        !options.name.empty() ? options.name
                              : (s.Algorithm().empty() ? std::string("gpu-fabric") : s.Algorithm());
    algo.append_attribute("name").set_value(name.c_str());
    algo.append_attribute("proto").set_value(options.protocol.c_str());
    SetInt(algo, "nchannels", nchannels);
    SetInt(algo, "nchunksperloop", static_cast<int64_t>(layout.total));
    SetInt(algo, "ngpus", n);
    algo.append_attribute("coll").set_value(std::string(MscclCollName(type)).c_str());
    SetInt(algo, "inplace", 1);
    if (CollectiveHasRoot(type))
    {
        SetInt(algo, "root", s.Root());
    }
    const char* buf = PrimaryBuffer(type);
    const bool gather = type == CollectiveType::AllGather;
    const bool scatter = type == CollectiveType::ReduceScatter;

    for (uint32_t r = 0; r < n; ++r)
    {
        const auto& ops = s.Ops(r);
        // one thread block per (direction, peer, channel), ids in key order
        std::map<TbKey, uint32_t> tbOf;
        for (const CollectiveOp& op : ops)
        {
            tbOf.emplace(TbKey{op.kind == OpKind::Send ? 0 : 1, op.peer, op.channel}, 0);
        }
        std::vector<TbKey> keys;
        for (auto& [key, id] : tbOf)
        {
            id = static_cast<uint32_t>(keys.size());
            keys.push_back(key);
        }
        const size_t ntb = keys.size();
        std::vector<uint32_t> opTb(ops.size());
        std::vector<std::vector<OutStep>> steps(ntb);
        // per thread block, the ops of other thread blocks an earlier step waits for
        std::vector<std::set<uint32_t>> waited(ntb);
        for (uint32_t i = 0; i < ops.size(); ++i)
        {
            const CollectiveOp& op = ops[i];
            const uint32_t t = tbOf.at(TbKey{op.kind == OpKind::Send ? 0 : 1, op.peer, op.channel});
            opTb[i] = t;
            // an earlier op of the same thread block is waited for by the
            // step order, and so is what an earlier step waited for (a step
            // starts after the one before it started; Import reads it so)
            std::vector<uint32_t> deps;
            for (uint32_t d : s.Deps(r, i))
            {
                if (opTb[d] != t && waited[t].insert(d).second)
                {
                    deps.push_back(d);
                }
            }
            // by thread block, then step: the text does not depend on list order
            std::sort(deps.begin(), deps.end(), [&](uint32_t a, uint32_t b) {
                return std::make_pair(opTb[a], a) < std::make_pair(opTb[b], b);
            });
            for (size_t k = 0; k + 1 < deps.size(); ++k)
            {
                steps[t].push_back(OutStep{i, true, deps[k]});
            }
            steps[t].push_back(OutStep{i, false, deps.empty() ? kNoIndex : deps.back()});
        }
        std::vector<uint32_t> stepOf(ops.size(), 0);
        for (size_t t = 0; t < ntb; ++t)
        {
            for (uint32_t k = 0; k < steps[t].size(); ++k)
            {
                if (!steps[t][k].nop)
                {
                    stepOf[steps[t][k].op] = k;
                }
            }
        }
        std::vector<char> hasDep(ops.size(), 0);
        for (const auto& tb : steps)
        {
            for (const OutStep& st : tb)
            {
                if (st.dep != kNoIndex)
                {
                    hasDep[st.dep] = 1;
                }
            }
        }

        pugi::xml_node gpu = algo.append_child("gpu");
        SetInt(gpu, "id", r);
        SetInt(gpu, "i_chunks", static_cast<int64_t>(gather ? share : layout.total));
        SetInt(gpu, "o_chunks", static_cast<int64_t>(scatter ? share : layout.total));
        SetInt(gpu, "s_chunks", 0);
        for (size_t t = 0; t < ntb; ++t)
        {
            const auto& [dir, peer, channel] = keys[t];
            pugi::xml_node tb = gpu.append_child("tb");
            SetInt(tb, "id", static_cast<int64_t>(t));
            SetInt(tb, "send", dir == 0 ? static_cast<int64_t>(peer) : -1);
            SetInt(tb, "recv", dir == 1 ? static_cast<int64_t>(peer) : -1);
            SetInt(tb, "chan", channel);
            for (uint32_t k = 0; k < steps[t].size(); ++k)
            {
                const OutStep& st = steps[t][k];
                pugi::xml_node step = tb.append_child("step");
                SetInt(step, "s", k);
                const CollectiveOp& op = ops[st.op];
                if (st.nop)
                {
                    step.append_attribute("type").set_value("nop");
                    step.append_attribute("srcbuf").set_value("i");
                    SetInt(step, "srcoff", -1);
                    step.append_attribute("dstbuf").set_value("o");
                    SetInt(step, "dstoff", -1);
                    SetInt(step, "cnt", 0);
                }
                else
                {
                    const auto [off, cnt] = OpRange(s, layout, r, st.op);
                    const char* kind = op.kind == OpKind::Send       ? "s"
                                       : op.mode == RecvMode::Reduce ? "rrc"
                                                                     : "r";
                    step.append_attribute("type").set_value(kind);
                    step.append_attribute("srcbuf").set_value(buf);
                    SetInt(step, "srcoff", static_cast<int64_t>(off));
                    step.append_attribute("dstbuf").set_value(buf);
                    SetInt(step, "dstoff", static_cast<int64_t>(off));
                    SetInt(step, "cnt", static_cast<int64_t>(cnt));
                }
                SetInt(step, "depid", st.dep == kNoIndex ? -1 : static_cast<int64_t>(opTb[st.dep]));
                SetInt(step,
                       "deps",
                       st.dep == kNoIndex ? -1 : static_cast<int64_t>(stepOf[st.dep]));
                SetInt(step, "hasdep", !st.nop && hasDep[st.op] ? 1 : 0);
            }
        }
    }
    std::ostringstream os;
    doc.save(os, "  ", pugi::format_default | pugi::format_no_declaration);
    return os.str();
}

void
MscclXml::Save(const CollectiveSchedule& s, const std::string& path, const MscclExportOptions& o)
{
    const std::string text = Export(s, o);
    std::ofstream out(path);
    FabricRequire(static_cast<bool>(out), "msccl file", path, "a writable file path");
    out << text;
    out.close();
    FabricRequire(static_cast<bool>(out), "msccl file", path, "a writable file path");
}

// ---------------------------------------------------------------------------
// Import

namespace
{

/// Step types MSCCL defines that a schedule can hold.
enum class StepType : uint8_t
{
    Send,               // s
    Recv,               // r
    RecvReduceCopy,     // rrc
    RecvCopySend,       // rcs
    RecvReduceSend,     // rrs
    RecvReduceCopySend, // rrcs
    Nop,                // nop
};

constexpr const char* kStepTypesAllowed =
    "s, r, rrc, rcs, rrs, rrcs or nop (cpy and re move data between two offsets of one GPU, "
    "which a schedule's chunks cannot)";

bool
Receives(StepType t)
{
    return t != StepType::Send && t != StepType::Nop;
}

bool
Sends(StepType t)
{
    return t == StepType::Send || t == StepType::RecvCopySend || t == StepType::RecvReduceSend ||
           t == StepType::RecvReduceCopySend;
}

struct InStep
{
    pugi::xml_node node;
    StepType type{StepType::Nop};
    int64_t depTb{-1};
    int64_t depStep{-1};
    bool hasdep{false};
    uint32_t chunk{0}; //!< local chunk (first)
    uint32_t cnt{0};
    uint32_t recvPart{kNoIndex};
    uint32_t sendPart{kNoIndex};
    uint32_t nopPart{kNoIndex};

    uint32_t First() const
    {
        return recvPart != kNoIndex ? recvPart : (sendPart != kNoIndex ? sendPart : nopPart);
    }

    uint32_t Last() const
    {
        return sendPart != kNoIndex ? sendPart : (recvPart != kNoIndex ? recvPart : nopPart);
    }
};

struct InTb
{
    pugi::xml_node node;
    int64_t send{-1};
    int64_t recv{-1};
    uint16_t chan{0};
    std::vector<InStep> steps;
};

/// One half of a step: its receive, its send, or a nop; a message joins a send and a receive.
struct Part
{
    uint32_t gpu;
    uint32_t tb;
    uint32_t step;
    int kind;                    //!< 0 receive, 1 send, 2 nop
    std::vector<uint32_t> preds; //!< parts of the same GPU whose completion it waits for
    uint32_t chain{kNoIndex};    //!< the thread block's step before (see Read)
};

class Reader
{
  public:
    Reader(const std::string& text, std::string source)
        : m_text(text),
          m_source(std::move(source))
    {
    }

    CollectiveSchedule Read(uint64_t totalBytes);

  private:
    size_t Line(ptrdiff_t offset) const
    {
        if (offset < 0)
        {
            return 0;
        }
        const auto end = m_text.begin() + std::min<ptrdiff_t>(offset, m_text.size());
        return 1 + static_cast<size_t>(std::count(m_text.begin(), end, '\n'));
    }

    std::string Where(pugi::xml_node node) const
    {
        std::string what;
        const std::string name = node.name();
        if (name == "step")
        {
            what = fmt::format("<step s=\"{}\"> of gpu {} tb {}",
                               node.attribute("s").value(),
                               node.parent().parent().attribute("id").value(),
                               node.parent().attribute("id").value());
        }
        else if (name == "tb")
        {
            what = fmt::format("<tb id=\"{}\"> of gpu {}",
                               node.attribute("id").value(),
                               node.parent().attribute("id").value());
        }
        else if (name == "gpu")
        {
            what = fmt::format("<gpu id=\"{}\">", node.attribute("id").value());
        }
        else
        {
            what = fmt::format("<{}>", name);
        }
        return fmt::format("{}:{}: {}", m_source, Line(node.offset_debug()), what);
    }

    [[noreturn]] void Fail(pugi::xml_node node,
                           const char* attr,
                           std::string_view value,
                           std::string_view allowed) const
    {
        throw FabricConfigError(fmt::format("{} attribute {}", Where(node), attr), value, allowed);
    }

    int64_t Int(pugi::xml_node node, const char* attr, int64_t lo, int64_t hi) const
    {
        const pugi::xml_attribute a = node.attribute(attr);
        const std::string allowed = fmt::format("an integer in [{}, {}]", lo, hi);
        if (!a)
        {
            Fail(node, attr, "(missing)", allowed);
        }
        const std::string_view v = a.value();
        int64_t x = 0;
        const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
        if (ec != std::errc() || end != v.data() + v.size() || x < lo || x > hi)
        {
            Fail(node, attr, v, allowed);
        }
        return x;
    }

    std::string Str(pugi::xml_node node, const char* attr, std::string_view allowed) const
    {
        const pugi::xml_attribute a = node.attribute(attr);
        if (!a)
        {
            Fail(node, attr, "(missing)", allowed);
        }
        return a.value();
    }

    /// Elements under \p parent, each named \p child (anything else refused).
    std::vector<pugi::xml_node> Children(pugi::xml_node parent, const char* child) const
    {
        std::vector<pugi::xml_node> out;
        for (pugi::xml_node c : parent.children())
        {
            if (c.type() != pugi::node_element)
            {
                continue;
            }
            if (std::string_view(c.name()) != child)
            {
                throw FabricConfigError(fmt::format("{}:{}: element <{}> in {}",
                                                    m_source,
                                                    Line(c.offset_debug()),
                                                    c.name(),
                                                    Where(parent)),
                                        c.name(),
                                        fmt::format("<{}> (MSCCL algorithm XML)", child));
            }
            out.push_back(c);
        }
        return out;
    }

    /// Reads the buffer, offset and count of a data step; \return its first chunk.
    uint32_t Location(pugi::xml_node step, uint32_t gpu, bool src, uint32_t cnt) const;

    /// "gpu g tb t step k" of a part
    std::string Name(const Part& p, const std::vector<std::vector<InTb>>& gpus) const
    {
        return fmt::format("gpu {} tb {} step {}",
                           p.gpu,
                           gpus[p.gpu][p.tb].node.attribute("id").value(),
                           p.step);
    }

    /// Refuses parts that could not be ordered: a cycle of waits, or
    /// messages of a pair received in another order than sent.
    [[noreturn]] void FailUnordered(const std::vector<Part>& parts,
                                    const std::vector<std::vector<uint32_t>>& succ,
                                    std::vector<uint32_t> indeg,
                                    const std::vector<char>& emitted,
                                    const std::vector<std::vector<InTb>>& gpus) const;

    const std::string& m_text;
    std::string m_source;
    CollectiveType m_type{CollectiveType::AllReduce};
    uint32_t m_n{0};
    int64_t m_chunks{0}; //!< nchunksperloop
    std::vector<int64_t> m_iChunks;
    std::vector<int64_t> m_oChunks;
};

uint32_t
Reader::Location(pugi::xml_node step, uint32_t gpu, bool src, uint32_t cnt) const
{
    const char* bufAttr = src ? "srcbuf" : "dstbuf";
    const char* offAttr = src ? "srcoff" : "dstoff";
    const std::string buf = Str(step, bufAttr, "i or o");
    if (buf != "i" && buf != "o")
    {
        Fail(step,
             bufAttr,
             buf,
             buf == "s" ? "i or o (scratch buffers are not imported)" : "i or o");
    }
    const int64_t share = m_chunks / m_n;
    int64_t base = 0;
    int64_t size = m_chunks;
    // in place, MSCCL's smaller buffer is a window of the larger one
    if ((m_type == CollectiveType::AllGather && buf == "i") ||
        (m_type == CollectiveType::ReduceScatter && buf == "o"))
    {
        base = gpu * share;
        size = share;
    }
    const int64_t declared = buf == "i" ? m_iChunks[gpu] : m_oChunks[gpu];
    size = std::min(size, declared);
    const int64_t off = Int(step, offAttr, 0, std::max<int64_t>(0, size - 1));
    if (off + cnt > size)
    {
        Fail(step,
             offAttr,
             std::to_string(off),
             fmt::format("0 .. {} (buffer {} of gpu {} holds {} chunks, cnt is {})",
                         size - cnt,
                         buf,
                         gpu,
                         size,
                         cnt));
    }
    return static_cast<uint32_t>(base + off);
}

void
Reader::FailUnordered(const std::vector<Part>& parts,
                      const std::vector<std::vector<uint32_t>>& succ,
                      std::vector<uint32_t> indeg,
                      const std::vector<char>& emitted,
                      const std::vector<std::vector<InTb>>& gpus) const
{
    const auto np = static_cast<uint32_t>(parts.size());
    std::vector<uint32_t> stack;
    for (uint32_t p = 0; p < np; ++p)
    {
        if (indeg[p] == 0)
        {
            stack.push_back(p);
        }
    }
    while (!stack.empty())
    {
        const uint32_t p = stack.back();
        stack.pop_back();
        for (uint32_t w : succ[p])
        {
            if (--indeg[w] == 0)
            {
                stack.push_back(w);
            }
        }
    }
    uint32_t v = 0;
    while (v < np && indeg[v] == 0)
    {
        ++v;
    }
    if (v == np)
    {
        // no cycle: the first receive held back for the order of its pair
        v = 0;
        while (emitted[v] || parts[v].kind != 0)
        {
            ++v;
        }
        const InTb& tb = gpus[parts[v].gpu][parts[v].tb];
        Fail(tb.node,
             "chan",
             std::to_string(tb.chan),
             fmt::format("channels whose messages between two GPUs a schedule can order: {} "
                         "receives from gpu {} in an order across channels other than the "
                         "one it is sent in (a schedule matches a pair's sends and receives in "
                         "one order over all channels)",
                         Name(parts[v], gpus),
                         tb.recv));
    }
    // walk back along waits that never end until a part repeats: a cycle
    std::vector<std::vector<uint32_t>> pred(np);
    for (uint32_t p = 0; p < np; ++p)
    {
        for (uint32_t w : succ[p])
        {
            pred[w].push_back(p);
        }
    }
    std::vector<uint32_t> pos(np, kNoIndex);
    std::vector<uint32_t> path;
    while (pos[v] == kNoIndex)
    {
        pos[v] = static_cast<uint32_t>(path.size());
        path.push_back(v);
        for (uint32_t u : pred[v])
        {
            if (indeg[u] > 0)
            {
                v = u;
                break;
            }
        }
    }
    // in time order: v, what waits for it, ..., v again (a step's two parts once)
    std::string cycle = Name(parts[v], gpus);
    std::string last = cycle;
    for (size_t k = path.size(); k-- > pos[v];)
    {
        const std::string name = Name(parts[path[k]], gpus);
        if (name != last)
        {
            cycle += " -> " + name;
            last = name;
        }
    }
    const InStep& st = gpus[parts[v].gpu][parts[v].tb].steps[parts[v].step];
    Fail(st.node,
         "depid",
         st.node.attribute("depid").value(),
         fmt::format("dependencies without a cycle; this step waits on itself through the steps "
                     "before it, dependencies and messages: {}",
                     cycle));
}

CollectiveSchedule
Reader::Read(uint64_t totalBytes)
{
    pugi::xml_document doc;
    const pugi::xml_parse_result parsed =
        doc.load_buffer(m_text.data(), m_text.size(), pugi::parse_default, pugi::encoding_utf8);
    if (!parsed)
    {
        throw FabricConfigError(fmt::format("{}:{}", m_source, Line(parsed.offset)),
                                parsed.description(),
                                "well-formed MSCCL algorithm XML");
    }
    pugi::xml_node algo = doc.document_element();
    if (!algo || std::string_view(algo.name()) != "algo")
    {
        throw FabricConfigError(
            fmt::format("{}:{}: root element", m_source, algo ? Line(algo.offset_debug()) : 1),
            algo ? fmt::format("<{}>", algo.name()) : std::string("(none)"),
            "<algo> (an MSCCL algorithm XML document)");
    }
    const std::string coll = Str(algo, "coll", kCollsAllowed);
    if (coll == "allreduce")
    {
        m_type = CollectiveType::AllReduce;
    }
    else if (coll == "allgather")
    {
        m_type = CollectiveType::AllGather;
    }
    else if (coll == "reduce_scatter" || coll == "reducescatter")
    {
        m_type = CollectiveType::ReduceScatter;
    }
    else if (coll == "broadcast")
    {
        m_type = CollectiveType::Broadcast;
    }
    else if (coll == "reduce")
    {
        m_type = CollectiveType::Reduce;
    }
    else
    {
        Fail(algo, "coll", coll, kCollsAllowed);
    }
    m_n = static_cast<uint32_t>(Int(algo, "ngpus", 2, 1 << 20));
    const std::vector<pugi::xml_node> gpuNodes = Children(algo, "gpu");
    if (gpuNodes.size() != m_n)
    {
        Fail(algo,
             "ngpus",
             std::to_string(m_n),
             fmt::format("the number of <gpu> elements, {}", gpuNodes.size()));
    }
    m_chunks = Int(algo, "nchunksperloop", 1, kMaxMscclChunks);
    const int64_t nchannels = Int(algo, "nchannels", 1, 1 << 16);
    if (Int(algo, "inplace", 0, 1) != 1)
    {
        Fail(algo, "inplace", "0", "1 (out-of-place algorithms are not imported)");
    }
    if ((m_type == CollectiveType::AllGather || m_type == CollectiveType::ReduceScatter) &&
        m_chunks % m_n != 0)
    {
        Fail(algo,
             "nchunksperloop",
             std::to_string(m_chunks),
             fmt::format("a multiple of ngpus {} (each rank's share of {})", m_n, coll));
    }
    uint32_t root = kNoRank;
    if (CollectiveHasRoot(m_type))
    {
        root = static_cast<uint32_t>(Int(algo, "root", 0, m_n - 1));
    }

    // GPUs, thread blocks, steps, and every attribute
    std::vector<std::vector<InTb>> gpus(m_n);
    std::vector<pugi::xml_node> gpuNode(m_n);
    m_iChunks.assign(m_n, 0);
    m_oChunks.assign(m_n, 0);
    for (pugi::xml_node g : gpuNodes)
    {
        const auto id = static_cast<uint32_t>(Int(g, "id", 0, m_n - 1));
        if (gpuNode[id])
        {
            Fail(g, "id", std::to_string(id), "each GPU id 0 .. ngpus-1 once");
        }
        gpuNode[id] = g;
        m_iChunks[id] = Int(g, "i_chunks", 0, kMaxMscclChunks);
        m_oChunks[id] = Int(g, "o_chunks", 0, kMaxMscclChunks);
        Int(g, "s_chunks", 0, kMaxMscclChunks);
    }
    const std::map<std::string, StepType> types{{"s", StepType::Send},
                                                {"r", StepType::Recv},
                                                {"rrc", StepType::RecvReduceCopy},
                                                {"rcs", StepType::RecvCopySend},
                                                {"rrs", StepType::RecvReduceSend},
                                                {"rrcs", StepType::RecvReduceCopySend},
                                                {"nop", StepType::Nop}};
    std::vector<Part> parts;
    for (uint32_t g = 0; g < m_n; ++g)
    {
        const std::vector<pugi::xml_node> tbNodes = Children(gpuNode[g], "tb");
        auto& tbs = gpus[g];
        tbs.resize(tbNodes.size());
        std::vector<char> seen(tbNodes.size(), 0);
        // (send or receive, peer, channel) -> thread block id
        std::map<TbKey, int64_t> links;
        for (pugi::xml_node tbNode : tbNodes)
        {
            const int64_t id = Int(tbNode, "id", 0, static_cast<int64_t>(tbNodes.size()) - 1);
            if (seen[id])
            {
                Fail(tbNode,
                     "id",
                     std::to_string(id),
                     fmt::format("each thread block id 0 .. {} once", tbNodes.size() - 1));
            }
            seen[id] = 1;
            InTb& tb = tbs[id];
            tb.node = tbNode;
            tb.chan = static_cast<uint16_t>(Int(tbNode, "chan", 0, nchannels - 1));
            for (int dir = 0; dir < 2; ++dir)
            {
                const char* attr = dir == 0 ? "send" : "recv";
                const int64_t peer = Int(tbNode, attr, -1, m_n - 1);
                if (peer == static_cast<int64_t>(g))
                {
                    Fail(tbNode, attr, std::to_string(peer), "-1 or another GPU's id");
                }
                (dir == 0 ? tb.send : tb.recv) = peer;
                if (peer >= 0)
                {
                    auto [it, fresh] =
                        links.emplace(TbKey{dir, static_cast<uint32_t>(peer), tb.chan}, id);
                    if (!fresh)
                    {
                        Fail(tbNode,
                             attr,
                             std::to_string(peer),
                             fmt::format("a peer no other thread block of gpu {} uses on "
                                         "channel {} (tb {} does)",
                                         g,
                                         tb.chan,
                                         it->second));
                    }
                }
            }
        }
        for (uint32_t t = 0; t < tbs.size(); ++t)
        {
            InTb& tb = tbs[t];
            const std::vector<pugi::xml_node> stepNodes = Children(tb.node, "step");
            for (uint32_t k = 0; k < stepNodes.size(); ++k)
            {
                pugi::xml_node sn = stepNodes[k];
                if (Int(sn, "s", 0, INT32_MAX) != k)
                {
                    Fail(sn,
                         "s",
                         sn.attribute("s").value(),
                         fmt::format("{} (steps are numbered from 0 in order)", k));
                }
                InStep st;
                st.node = sn;
                const std::string type = Str(sn, "type", kStepTypesAllowed);
                const auto it = types.find(type);
                if (it == types.end())
                {
                    Fail(sn, "type", type, kStepTypesAllowed);
                }
                st.type = it->second;
                if (Receives(st.type) && tb.recv < 0)
                {
                    Fail(sn, "type", type, "a type that does not receive: the tb has recv=-1");
                }
                if (Sends(st.type) && tb.send < 0)
                {
                    Fail(sn, "type", type, "a type that does not send: the tb has send=-1");
                }
                st.depTb = Int(sn, "depid", -1, static_cast<int64_t>(tbs.size()) - 1);
                if (st.depTb >= 0)
                {
                    const auto steps = static_cast<int64_t>(
                        std::distance(tbs[st.depTb].node.children("step").begin(),
                                      tbs[st.depTb].node.children("step").end()));
                    st.depStep = Int(sn, "deps", 0, steps - 1);
                }
                st.hasdep = Int(sn, "hasdep", 0, 1) == 1;
                if (st.type != StepType::Nop)
                {
                    st.cnt = static_cast<uint32_t>(Int(sn, "cnt", 1, m_chunks));
                    // the local chunk: what a send reads, what a receive writes
                    const bool readsSrc =
                        st.type == StepType::Send || st.type == StepType::RecvReduceSend;
                    st.chunk = Location(sn, g, readsSrc, st.cnt);
                    if (st.type == StepType::RecvReduceCopy ||
                        st.type == StepType::RecvReduceCopySend)
                    {
                        if (Location(sn, g, true, st.cnt) != st.chunk)
                        {
                            Fail(sn,
                                 "srcoff",
                                 sn.attribute("srcoff").value(),
                                 "the chunk dstbuf/dstoff names (reductions are imported in "
                                 "place)");
                        }
                    }
                }
                const auto addPart = [&](int kind) {
                    parts.push_back(Part{g, t, k, kind, {}, kNoIndex});
                    return static_cast<uint32_t>(parts.size() - 1);
                };
                if (Receives(st.type))
                {
                    st.recvPart = addPart(0);
                }
                if (Sends(st.type))
                {
                    st.sendPart = addPart(1);
                    if (st.recvPart != kNoIndex)
                    {
                        parts[st.sendPart].preds.push_back(st.recvPart);
                    }
                }
                if (st.type == StepType::Nop)
                {
                    st.nopPart = addPart(2);
                }
                tb.steps.push_back(st);
            }
        }
        // waits: the step before in the thread block, and depid/deps
        for (auto& tb : tbs)
        {
            for (uint32_t k = 0; k < tb.steps.size(); ++k)
            {
                InStep& st = tb.steps[k];
                auto& preds = parts[st.First()].preds;
                if (k > 0)
                {
                    parts[st.First()].chain = tb.steps[k - 1].Last();
                }
                if (st.depTb >= 0)
                {
                    InStep& target = tbs[st.depTb].steps[st.depStep];
                    if (!target.hasdep)
                    {
                        Fail(target.node,
                             "hasdep",
                             "0",
                             fmt::format("1: gpu {} tb {} step {} depends on it (the runtime "
                                         "signals only steps with hasdep=1)",
                                         g,
                                         tb.node.attribute("id").value(),
                                         k));
                    }
                    preds.push_back(target.Last());
                }
            }
        }
    }

    // messages: the k-th send of (g -> p, channel) is the k-th receive at p from g on it
    std::vector<uint32_t> partner(parts.size(), kNoIndex);
    for (uint32_t g = 0; g < m_n; ++g)
    {
        for (const InTb& tb : gpus[g])
        {
            for (int dir = 0; dir < 2; ++dir)
            {
                const int64_t peer = dir == 0 ? tb.send : tb.recv;
                if (peer < 0)
                {
                    continue;
                }
                const InTb* other = nullptr;
                for (const InTb& o : gpus[peer])
                {
                    if ((dir == 0 ? o.recv : o.send) == static_cast<int64_t>(g) &&
                        o.chan == tb.chan)
                    {
                        other = &o;
                    }
                }
                std::vector<const InStep*> mine;
                std::vector<const InStep*> theirs;
                for (const InStep& st : tb.steps)
                {
                    if (dir == 0 ? Sends(st.type) : Receives(st.type))
                    {
                        mine.push_back(&st);
                    }
                }
                if (other)
                {
                    for (const InStep& st : other->steps)
                    {
                        if (dir == 0 ? Receives(st.type) : Sends(st.type))
                        {
                            theirs.push_back(&st);
                        }
                    }
                }
                if (mine.size() != theirs.size())
                {
                    Fail(tb.node,
                         dir == 0 ? "send" : "recv",
                         std::to_string(peer),
                         fmt::format("a peer that {} as many messages on channel {}: this tb {} "
                                     "{}, gpu {} {} {}",
                                     dir == 0 ? "receives" : "sends",
                                     tb.chan,
                                     dir == 0 ? "sends" : "receives",
                                     mine.size(),
                                     peer,
                                     dir == 0 ? "receives" : "sends",
                                     theirs.size()));
                }
                if (dir == 1)
                {
                    continue; // checked from the sending side
                }
                for (size_t k = 0; k < mine.size(); ++k)
                {
                    const InStep& s = *mine[k];
                    const InStep& r = *theirs[k];
                    if (r.cnt != s.cnt)
                    {
                        Fail(r.node,
                             "cnt",
                             std::to_string(r.cnt),
                             fmt::format("{}, the cnt of its matching send, {}",
                                         s.cnt,
                                         Where(s.node)));
                    }
                    if (r.chunk != s.chunk)
                    {
                        Fail(r.node,
                             r.type == StepType::RecvReduceSend ? "srcoff" : "dstoff",
                             std::to_string(r.chunk),
                             fmt::format("chunk {}, the one its matching send {} sends (a "
                                         "chunk keeps its offset)",
                                         s.chunk,
                                         Where(s.node)));
                    }
                    partner[s.sendPart] = r.recvPart;
                    partner[r.recvPart] = s.sendPart;
                }
            }
        }
    }

    CollectiveSchedule s(m_type, m_n, totalBytes);
    s.SetAlgorithm(fmt::format("msccl:{}", algo.attribute("name").value()));
    if (root != kNoRank)
    {
        s.SetRoot(root);
    }
    const std::vector<uint64_t> bytes = SplitBytes(totalBytes, static_cast<uint64_t>(m_chunks));
    const uint64_t share = static_cast<uint64_t>(m_chunks) / m_n;
    const bool owned =
        m_type == CollectiveType::AllGather || m_type == CollectiveType::ReduceScatter;
    for (int64_t c = 0; c < m_chunks; ++c)
    {
        const uint32_t owner = owned ? static_cast<uint32_t>(c / share) : kNoRank;
        s.AddChunk(bytes[c],
                   m_type == CollectiveType::AllGather ? owner : kNoRank,
                   m_type == CollectiveType::ReduceScatter ? owner : kNoRank);
    }

    // Parts are appended in an order that respects every wait (a receive
    // also waits for its send).  A schedule matches the k-th send of a pair
    // of ranks with the k-th receive over all channels, so a receive is
    // appended only once the receives of the sends appended before its own
    // on that pair are.
    const size_t np = parts.size();
    std::vector<std::vector<uint32_t>> succ(np);
    std::vector<uint32_t> indeg(np, 0);
    for (uint32_t p = 0; p < np; ++p)
    {
        for (uint32_t q : parts[p].preds)
        {
            succ[q].push_back(p);
            ++indeg[p];
        }
        if (parts[p].chain != kNoIndex)
        {
            succ[parts[p].chain].push_back(p);
            ++indeg[p];
        }
        if (parts[p].kind == 0)
        {
            succ[partner[p]].push_back(p);
            ++indeg[p];
        }
    }
    const std::vector<uint32_t> indeg0 = indeg;
    std::map<std::pair<uint32_t, uint32_t>, std::deque<uint32_t>> pending; // (g, p) -> receives
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
    const auto pairOf = [&](uint32_t recvPart) {
        return std::make_pair(parts[partner[recvPart]].gpu, parts[recvPart].gpu);
    };
    const auto tryReady = [&](uint32_t p) {
        if (indeg[p] > 0)
        {
            return;
        }
        if (parts[p].kind == 0)
        {
            const auto& q = pending[pairOf(p)];
            if (q.empty() || q.front() != p)
            {
                return;
            }
        }
        ready.push(p);
    };
    for (uint32_t p = 0; p < np; ++p)
    {
        tryReady(p);
    }
    // ops a part stands for, once appended (a nop: what it waits for), and
    // what it waited for (issued).  A step waits for the step before it in
    // its thread block to have started (what that one waited for), and to
    // have completed only when that one is a receive into the chunks it
    // uses: MSCCL's send hands its data to the connection's buffer and the
    // block goes on, and receives of one connection arrive in order anyway;
    // a receive that waited for a send's delivery would, under the
    // executor's rendezvous, hold up a ring it is part of.  A depid waits
    // for completion.
    std::vector<std::vector<uint32_t>> opsOf(np);
    std::vector<std::vector<uint32_t>> issued(np);
    std::vector<uint32_t> deps;
    std::vector<char> emitted(np, 0);
    size_t done = 0;
    while (!ready.empty())
    {
        const uint32_t p = ready.top();
        ready.pop();
        ++done;
        emitted[p] = 1;
        const Part& part = parts[p];
        deps.clear();
        for (uint32_t q : part.preds)
        {
            deps.insert(deps.end(), opsOf[q].begin(), opsOf[q].end());
        }
        if (part.chain != kNoIndex)
        {
            const Part& before = parts[part.chain];
            const InStep& b = gpus[before.gpu][before.tb].steps[before.step];
            const InStep& me = gpus[part.gpu][part.tb].steps[part.step];
            const bool overlap =
                part.kind != 2 && b.chunk < me.chunk + me.cnt && me.chunk < b.chunk + b.cnt;
            const auto& c = before.kind == 0 && overlap ? opsOf[part.chain] : issued[part.chain];
            deps.insert(deps.end(), c.begin(), c.end());
        }
        std::sort(deps.begin(), deps.end());
        deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
        issued[p] = deps;
        const InTb& tb = gpus[part.gpu][part.tb];
        const InStep& st = tb.steps[part.step];
        if (part.kind == 2)
        {
            opsOf[p] = deps;
        }
        else if (part.kind == 1)
        {
            opsOf[p] = {s.AddSend(part.gpu,
                                  st.chunk,
                                  static_cast<uint32_t>(tb.send),
                                  deps,
                                  tb.chan,
                                  st.cnt)};
            auto& q = pending[pairOf(partner[p])];
            q.push_back(partner[p]);
            if (q.size() == 1)
            {
                tryReady(q.front());
            }
        }
        else
        {
            const bool reduce = st.type == StepType::RecvReduceCopy ||
                                st.type == StepType::RecvReduceSend ||
                                st.type == StepType::RecvReduceCopySend;
            opsOf[p] = {s.AddRecv(part.gpu,
                                  st.chunk,
                                  static_cast<uint32_t>(tb.recv),
                                  reduce ? RecvMode::Reduce : RecvMode::Copy,
                                  deps,
                                  tb.chan,
                                  st.cnt)};
            auto& q = pending[pairOf(p)];
            q.pop_front();
            if (!q.empty())
            {
                tryReady(q.front());
            }
        }
        for (uint32_t w : succ[p])
        {
            if (--indeg[w] == 0)
            {
                tryReady(w);
            }
        }
    }
    if (done < np)
    {
        FailUnordered(parts, succ, indeg0, emitted, gpus);
    }

    if (auto issue = s.FindStructureError())
    {
        throw FabricConfigError(fmt::format("{}: {}", m_source, issue->parameter),
                                issue->value,
                                issue->allowed);
    }
    const ScheduleCheckResult check = ScheduleChecker::Check(s);
    if (!check.Ok())
    {
        std::string where;
        if (check.rank != kNoRank)
        {
            where += fmt::format("first wrong rank {} (<gpu id=\"{}\">)", check.rank, check.rank);
        }
        if (check.chunk != kNoIndex)
        {
            where += fmt::format(", chunk {} (offset {} of buffer {})",
                                 check.chunk,
                                 check.chunk,
                                 PrimaryBuffer(m_type));
        }
        throw FabricConfigError(m_source,
                                CheckStatusName(check.status),
                                fmt::format("an algorithm that implements {}; {}: {}",
                                            coll,
                                            where.empty() ? "the checker found" : where,
                                            check.message));
    }
    return s;
}

} // namespace

CollectiveSchedule
MscclXml::Import(const std::string& text, uint64_t totalBytes, const std::string& source)
{
    return Reader(text, source).Read(totalBytes);
}

CollectiveSchedule
MscclXml::Load(const std::string& path, uint64_t totalBytes)
{
    std::ifstream in(path);
    FabricRequire(static_cast<bool>(in), "schedule file", path, "a readable MSCCL XML file");
    std::stringstream ss;
    ss << in.rdbuf();
    return Import(ss.str(), totalBytes, path);
}

} // namespace ns3
