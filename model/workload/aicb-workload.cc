/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "aicb-workload.h"

#include "chakra-trace.h"
#include "training-iteration.h"

#include "ns3/collective-algorithms.h"
#include "ns3/fabric-error.h"
#include "ns3/log.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("AicbWorkload");

namespace
{

/// Layer lines a file may have.
constexpr uint32_t kMaxLayers = 1u << 20;
/// GPUs (ranks) a replay may have.
constexpr uint32_t kMaxGpus = 1u << 20;
/// Tasks a replay holds, all ranks.
constexpr uint64_t kMaxTasks = uint64_t{1} << 24;
/// Largest file read.
constexpr uintmax_t kMaxFileBytes = uintmax_t{256} << 20;
/// Fields of a layer line.
constexpr size_t kLayerFields = 12;

/// Names of the layer fields, as SimAI's workload reader calls them.
const char* const kFieldNames[kLayerFields] = {"name",
                                               "reserved",
                                               "fwd_compute_time",
                                               "fwd_comm_type",
                                               "fwd_comm_size",
                                               "ig_compute_time",
                                               "ig_comm_type",
                                               "ig_comm_size",
                                               "wg_compute_time",
                                               "wg_comm_type",
                                               "wg_comm_size",
                                               "wg_update_time"};

constexpr const char* kCommTypes =
    "NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER or ALLTOALL, optionally followed by _TP, _DP, "
    "_EP or _DP_EP (BROADCAST is read and not replayed, as in SimAI)";

/// The communicator a comm runs over.
enum class Group : uint8_t
{
    TP,
    DP,
    EP,
    DpEp,
};

/// One comm column of a layer.
struct Comm
{
    std::string collective; //!< module name; empty: none
    Group group{Group::TP};
    uint64_t size{0};      //!< bytes as the file gives them
    std::string field;     //!< e.g. "fwd_comm_type", for messages
    bool broadcast{false}; //!< BROADCAST (not replayed)
};

struct Layer
{
    uint32_t line{0};
    std::string name;
    double fwd{0};
    double ig{0};
    double wg{0};
    double update{0};
    Comm fwdComm;
    Comm igComm;
    Comm wgComm;
};

/// Where an error points: file, line, field.
std::string
At(const std::string& file, uint32_t line, std::string_view field)
{
    return field.empty() ? fmt::format("{} line {}", file, line)
                         : fmt::format("{} line {} {}", file, line, field);
}

std::vector<std::string>
Split(const std::string& line)
{
    std::istringstream in(line);
    std::vector<std::string> tokens;
    std::string t;
    while (in >> t)
    {
        tokens.push_back(t);
    }
    return tokens;
}

/// A whole-token unsigned integer in [lo, hi].
uint64_t
ParseUnsigned(const std::string& token,
              const std::string& where,
              uint64_t lo,
              uint64_t hi,
              std::string_view allowed)
{
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
    FabricRequire(ec == std::errc() && end == token.data() + token.size() && v >= lo && v <= hi,
                  where,
                  token,
                  allowed);
    return v;
}

/// A whole-token finite number >= 0 (times; AICB may write them as decimals).
double
ParseTime(const std::string& token, const std::string& where)
{
    const char* begin = token.c_str();
    char* end = nullptr;
    const double v = std::strtod(begin, &end);
    FabricRequire(end != begin && *end == '\0' && std::isfinite(v) && v >= 0 && v < 1e18,
                  where,
                  token,
                  "a time >= 0 (a decimal number, in the time unit; below 1e18)");
    return v;
}

Comm
ParseComm(const std::string& file,
          uint32_t line,
          const std::string& type,
          const std::string& size,
          const char* typeField,
          const char* sizeField,
          Group defaultGroup)
{
    Comm c;
    c.field = typeField;
    c.size = ParseUnsigned(size,
                           At(file, line, sizeField),
                           0,
                           kMaxCollectiveBytes,
                           fmt::format("bytes, an integer from 0 to {}", kMaxCollectiveBytes));
    if (type == "NONE" || type == "BROADCAST")
    {
        c.broadcast = type == "BROADCAST";
        return c;
    }
    static const std::pair<const char*, const char*> kBases[] = {
        {"ALLREDUCE", "allreduce"},
        {"ALLGATHER", "allgather"},
        {"REDUCESCATTER", "reducescatter"},
        {"ALLTOALL", "alltoall"},
    };
    static const std::pair<const char*, std::optional<Group>> kSuffixes[] = {
        {"", std::nullopt},
        {"_TP", Group::TP},
        {"_DP", Group::DP},
        {"_EP", Group::EP},
        {"_DP_EP", Group::DpEp},
    };
    for (const auto& [base, collective] : kBases)
    {
        for (const auto& [suffix, group] : kSuffixes)
        {
            if (type == std::string(base) + suffix)
            {
                c.collective = collective;
                c.group = group.value_or(defaultGroup);
                return c;
            }
        }
    }
    throw FabricConfigError(At(file, line, typeField), type, kCommTypes);
}

/// The header's key: value pairs that matter here.
struct FileHeader
{
    std::string policy;
    uint32_t tp{1};
    uint32_t ep{1};
    uint32_t pp{1};
    std::optional<uint32_t> gpus;
    std::optional<uint32_t> ga;        //!< micro-batches per iteration
    std::optional<uint64_t> ppBytes;   //!< pp_comm: bytes of one pipeline transfer
    std::optional<uint32_t> vpp;       //!< virtual stages (AICB writes its layer count)
    std::vector<uint32_t> checkpoints; //!< layers whose activations are kept
    std::vector<uint32_t> initiates;   //!< layers whose backward first recomputes
};

FileHeader
ParseHeader(const std::string& file, const std::string& line)
{
    const std::vector<std::string> tokens = Split(line);
    FileHeader h;
    // SimAI's other policies (ASTRA-sim's), which AICB does not write
    static const char* const kNotReplayed[] = {"DATA",
                                               "MODEL",
                                               "HYBRID_DATA_MODEL",
                                               "HYBRID_MODEL_DATA",
                                               "HYBRID_CUSTOMIZED",
                                               "HYBRID_DLRM",
                                               "HYBRID_DLRM_ENHANCED",
                                               "DISTRIBUTED_INFERENCE"};
    const bool known =
        !tokens.empty() && std::find(std::begin(kNotReplayed), std::end(kNotReplayed), tokens[0]) !=
                               std::end(kNotReplayed);
    FabricRequire(!tokens.empty() && (tokens[0] == "HYBRID_TRANSFORMER_FWD_IN_BCKWD" ||
                                      tokens[0] == "HYBRID_TRANSFORMER" || tokens[0] == "MICRO"),
                  At(file, 1, "policy"),
                  tokens.empty() ? std::string("(empty line)") : tokens[0],
                  std::string(known ? "a policy replayed here (SimAI's DATA, MODEL, HYBRID_*_MODEL/"
                                      "DATA, HYBRID_CUSTOMIZED, DLRM and DISTRIBUTED_INFERENCE "
                                      "policies are not): "
                                    : "") +
                      "HYBRID_TRANSFORMER_FWD_IN_BCKWD, HYBRID_TRANSFORMER or MICRO (the "
                      "policies AICB writes), then key: value pairs");
    h.policy = tokens[0];
    const std::string sizeAllowed = fmt::format("an integer from 1 to {}", kMaxGpus);
    const std::string indexAllowed = fmt::format("a layer index from 0 to {}", kMaxLayers - 1);
    for (size_t i = 1; i < tokens.size(); i += 2)
    {
        std::string key = tokens[i];
        // SimAI also reads "pp_comm" without its colon
        FabricRequire((key.size() > 1 && key.back() == ':') || key == "pp_comm",
                      At(file, 1, "key"),
                      key,
                      "key: value pairs (model_parallel_NPU_group: 8 ep: 1 ...)");
        if (key.back() == ':')
        {
            key.pop_back();
        }
        const std::string where = At(file, 1, key);
        FabricRequire(i + 1 < tokens.size(), where, "(no value)", "a value after the key");
        const std::string& value = tokens[i + 1];
        if (key == "model_parallel_NPU_group")
        {
            h.tp = ParseUnsigned(value, where, 1, kMaxGpus, sizeAllowed);
        }
        else if (key == "ep" || key == "expert_parallel_npu_group")
        {
            h.ep = ParseUnsigned(value, where, 1, kMaxGpus, sizeAllowed);
        }
        else if (key == "pp")
        {
            h.pp = ParseUnsigned(value, where, 1, kMaxGpus, sizeAllowed);
        }
        else if (key == "all_gpus")
        {
            h.gpus = ParseUnsigned(value, where, 1, kMaxGpus, sizeAllowed);
        }
        else if (key == "vpp")
        {
            // AICB writes the layer count here: interleaving is replayed only
            // when asked for (AicbReplayOptions::virtualStages)
            h.vpp = ParseUnsigned(value, where, 0, kMaxLayers, "an integer >= 0");
        }
        else if (key == "ga")
        {
            // AICB has already unrolled gradient accumulation into the
            // layers; with pp > 1 it gives the micro-batches of the pipeline
            h.ga = ParseUnsigned(value, where, 0, kMaxLayers, "an integer >= 0");
        }
        else if (key == "pp_comm")
        {
            // AICB writes 2 x micro_batch x seq_length x hidden_size (over tp
            // with sequence parallelism), possibly as a decimal ("8192.0")
            const double bytes = ParseTime(value, where);
            FabricRequire(bytes == std::floor(bytes) &&
                              bytes <= static_cast<double>(kMaxCollectiveBytes),
                          where,
                          value,
                          fmt::format("a whole number of bytes from 0 to {}", kMaxCollectiveBytes));
            h.ppBytes = static_cast<uint64_t>(bytes);
        }
        else if (key == "checkpoints" || key == "checkpoint_initiates")
        {
            // a count, then that many layer indices (SimAI's fwd_in_bckwd)
            const auto n = ParseUnsigned(value,
                                         where,
                                         0,
                                         kMaxLayers,
                                         fmt::format("a count of layer indices from 0 to {}, then "
                                                     "the indices",
                                                     kMaxLayers));
            FabricRequire(i + 1 + n < tokens.size(),
                          where,
                          value,
                          fmt::format("a count followed by that many layer indices ({} follow)",
                                      tokens.size() - i - 2));
            auto& list = key == "checkpoints" ? h.checkpoints : h.initiates;
            for (uint64_t k = 0; k < n; ++k)
            {
                list.push_back(static_cast<uint32_t>(
                    ParseUnsigned(tokens[i + 2 + k], where, 0, kMaxLayers - 1, indexAllowed)));
            }
            i += n;
        }
        else
        {
            throw FabricConfigError(At(file, 1, "key"),
                                    tokens[i],
                                    "model_parallel_NPU_group:, ep:, expert_parallel_npu_group:, "
                                    "pp:, vpp:, ga:, all_gpus:, pp_comm:, checkpoints: or "
                                    "checkpoint_initiates:");
        }
    }
    return h;
}

/// The groups of one kind: members of each, and each rank's group.
struct Groups
{
    std::vector<std::vector<uint32_t>> members;
    std::vector<uint32_t> of; //!< rank -> index into members
};

/// rank = (d * pp + p) * tp + t; DP index d = b * ep + e (EP block b, place e).
Groups
MakeGroups(Group kind, uint32_t tp, uint32_t pp, uint32_t dp, uint32_t ep)
{
    const uint32_t gpus = tp * pp * dp;
    Groups g;
    g.of.assign(gpus, 0);
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> index;
    for (uint32_t r = 0; r < gpus; ++r)
    {
        const uint32_t t = r % tp;
        const uint32_t p = (r / tp) % pp;
        const uint32_t d = r / (tp * pp);
        std::tuple<uint32_t, uint32_t, uint32_t> key;
        switch (kind)
        {
        case Group::TP:
            key = {d, p, 0};
            break;
        case Group::DP:
            key = {p, t, 0};
            break;
        case Group::EP:
            key = {p * tp + t, d / ep, 0};
            break;
        case Group::DpEp:
            key = {p * tp + t, d % ep, 1};
            break;
        }
        auto [it, added] = index.emplace(key, static_cast<uint32_t>(g.members.size()));
        if (added)
        {
            g.members.emplace_back();
        }
        g.of[r] = it->second;
        g.members[it->second].push_back(r); // ascending rank = communicator order
    }
    return g;
}

const char*
GroupName(Group g)
{
    switch (g)
    {
    case Group::TP:
        return "TP";
    case Group::DP:
        return "DP";
    case Group::EP:
        return "EP";
    case Group::DpEp:
        return "DP_EP";
    }
    return "?";
}

/// Builds the program: every rank in lockstep, or (pp > 1) the ranks of one
/// pipeline stage at a time, each stage in its own 1F1B order.
class Builder
{
  public:
    Builder(const std::string& file,
            const AicbReplayOptions& options,
            AicbReplay& out,
            uint32_t gpus)
        : m_file(file),
          m_options(options),
          m_out(out),
          m_prev(gpus),
          m_extra(gpus)
    {
        for (Group kind : {Group::TP, Group::DP, Group::EP, Group::DpEp})
        {
            m_groups.emplace(kind, MakeGroups(kind, out.tp, out.pp, out.dp, out.ep));
        }
        out.program.ranks = gpus;
        out.program.tasks.assign(gpus, {});
        out.computeSeconds.assign(gpus, 0);
        out.recomputeSeconds.assign(gpus, 0);
    }

    /// Only the ranks of pipeline stage \p stage from now on (nullopt: all),
    /// \p microBatch naming the comms' micro-batch in their labels.
    void Select(std::optional<uint32_t> stage, std::optional<uint32_t> microBatch = {})
    {
        m_stage = stage;
        m_microBatch = microBatch;
    }

    /// Every selected rank computes for \p units, after its last waited-for
    /// task (\p recompute: a forward pass run again during the backward).
    void Compute(double units, bool recompute = false)
    {
        if (units <= 0)
        {
            return;
        }
        const double s = units * m_options.timeUnitSeconds;
        for (uint32_t r = 0; r < m_out.program.ranks; ++r)
        {
            if (Selected(r))
            {
                m_prev[r] = Chain(r, ProgramTask::Kind::Compute, s, 0, true);
                m_out.computeSeconds[r] += s;
                m_out.recomputeSeconds[r] += recompute ? s : 0;
            }
        }
    }

    /// Every selected rank takes part in its group's \p c (if it runs), then
    /// waits the update time; later tasks wait for both when \p wait.
    void Communicate(const Layer& l, uint32_t index, const Comm& c, const char* phase, bool wait)
    {
        const Groups& g = m_groups.at(c.group);
        if (c.collective.empty() || c.size == 0 || g.members.front().size() < 2)
        {
            return;
        }
        const uint32_t n = g.members.front().size();
        const uint64_t bytes = c.collective == "allgather" ? c.size * n : c.size;
        FabricRequire(bytes <= kMaxCollectiveBytes,
                      At(m_file, l.line, c.field),
                      fmt::format("{} of {} bytes per rank over {} ranks", c.collective, c.size, n),
                      fmt::format("a collective of at most {} bytes", kMaxCollectiveBytes));
        // a group lies in one stage: only the selected stage's groups run here
        std::vector<uint32_t> commOf(g.members.size(), 0);
        bool checked = false;
        for (size_t k = 0; k < g.members.size(); ++k)
        {
            if (!Selected(g.members[k].front()))
            {
                continue;
            }
            ProgramComm pc;
            pc.collective = c.collective;
            pc.algorithm = ReplayAlgorithm(c.collective, m_options.algorithm);
            pc.members = g.members[k];
            pc.bytes = bytes;
            pc.chunkBytes = m_options.chunkBytes;
            pc.domainSize = m_options.domainSize;
            pc.label = fmt::format("{} {} {} #{} layer {} '{}'{}",
                                   phase,
                                   c.collective,
                                   GroupName(c.group),
                                   k,
                                   index,
                                   l.name,
                                   m_microBatch ? fmt::format(" mb {}", *m_microBatch) : "");
            if (!checked)
            {
                // the groups differ only in their ranks
                RequireRunnableComm(pc, At(m_file, l.line, c.field));
                checked = true;
            }
            commOf[k] = static_cast<uint32_t>(m_out.program.comms.size());
            m_out.program.comms.push_back(std::move(pc));
        }
        const double update = l.update * m_options.timeUnitSeconds;
        for (uint32_t r = 0; r < m_out.program.ranks; ++r)
        {
            if (!Selected(r))
            {
                continue;
            }
            uint32_t end = Chain(r, ProgramTask::Kind::Comm, 0, commOf[g.of[r]], wait);
            if (update > 0)
            {
                end = Add(r, ProgramTask::Kind::Compute, update, 0, {end});
            }
            if (wait)
            {
                m_prev[r] = end;
            }
        }
    }

    /// Every rank of the selected stage receives micro-batch \p mb's
    /// activations (\p forward) or gradients for its model chunk \p chunk
    /// from its peer in stage \p from: posted now, so the sender never
    /// waits; the rank's next task waits for it.
    void Receive(uint32_t from, uint32_t mb, uint32_t chunk, bool forward)
    {
        for (uint32_t r = 0; r < m_out.program.ranks; ++r)
        {
            if (Selected(r))
            {
                const uint32_t comm = Transfer(Peer(r, from), r, mb, chunk, forward);
                m_extra[r].push_back(Add(r, ProgramTask::Kind::Comm, 0, comm, {}));
            }
        }
    }

    /// Every rank of the selected stage sends micro-batch \p mb's
    /// activations (\p forward) or gradients to its peer in stage \p to,
    /// for that peer's model chunk \p chunk, after its pass; its next pass
    /// does not wait for the send.
    void Send(uint32_t to, uint32_t mb, uint32_t chunk, bool forward)
    {
        for (uint32_t r = 0; r < m_out.program.ranks; ++r)
        {
            if (Selected(r))
            {
                const uint32_t comm = Transfer(r, Peer(r, to), mb, chunk, forward);
                std::vector<uint32_t> deps = m_extra[r];
                if (m_prev[r])
                {
                    deps.push_back(*m_prev[r]);
                }
                Add(r, ProgramTask::Kind::Comm, 0, comm, deps);
                m_out.pipelineMessages += 1;
                m_out.pipelineBytes += m_out.ppCommBytes;
            }
        }
    }

  private:
    bool Selected(uint32_t rank) const
    {
        return !m_stage || (rank / m_out.tp) % m_out.pp == *m_stage;
    }

    /// The rank of \p rank's (d, t) in stage \p stage.
    uint32_t Peer(uint32_t rank, uint32_t stage) const
    {
        const uint32_t t = rank % m_out.tp;
        const uint32_t d = rank / (m_out.tp * m_out.pp);
        return (d * m_out.pp + stage) * m_out.tp + t;
    }

    /// The sendrecv comm of one pipeline transfer, made when first asked for.
    uint32_t Transfer(uint32_t src, uint32_t dst, uint32_t mb, uint32_t chunk, bool forward)
    {
        const auto [it, added] =
            m_transfers.emplace(std::make_tuple(src, dst, mb, chunk, forward),
                                static_cast<uint32_t>(m_out.program.comms.size()));
        if (added)
        {
            ProgramComm pc;
            pc.collective = "sendrecv";
            pc.algorithm = "direct";
            pc.members = {src, dst};
            pc.bytes = m_out.ppCommBytes;
            pc.chunkBytes = m_options.chunkBytes;
            pc.label = fmt::format("pp {} mb {}{} {}->{}",
                                   forward ? "activation" : "gradient",
                                   mb,
                                   m_out.virtualStages > 1 ? fmt::format(" chunk {}", chunk) : "",
                                   src,
                                   dst);
            m_out.program.comms.push_back(std::move(pc));
        }
        return it->second;
    }

    /// A task after the rank's last waited-for task and its pending receives
    /// (which a waited-for task consumes).
    uint32_t Chain(uint32_t rank, ProgramTask::Kind kind, double seconds, uint32_t comm, bool wait)
    {
        std::vector<uint32_t> deps = m_extra[rank];
        if (m_prev[rank])
        {
            deps.push_back(*m_prev[rank]);
        }
        if (wait)
        {
            m_extra[rank].clear();
        }
        return Add(rank, kind, seconds, comm, std::move(deps));
    }

    uint32_t Add(uint32_t rank,
                 ProgramTask::Kind kind,
                 double seconds,
                 uint32_t comm,
                 std::vector<uint32_t> deps)
    {
        auto& tasks = m_out.program.tasks[rank];
        ProgramTask t;
        t.kind = kind;
        t.seconds = seconds;
        t.comm = comm;
        std::sort(deps.begin(), deps.end());
        t.deps = std::move(deps);
        tasks.push_back(std::move(t));
        return static_cast<uint32_t>(tasks.size() - 1);
    }

    const std::string& m_file;
    const AicbReplayOptions& m_options;
    AicbReplay& m_out;
    std::map<Group, Groups> m_groups;
    std::vector<std::optional<uint32_t>> m_prev; //!< per rank: last task later ones wait for
    std::vector<std::vector<uint32_t>> m_extra;  //!< per rank: receives the next task waits for
    std::optional<uint32_t> m_stage;             //!< the selected stage (none: all)
    std::optional<uint32_t> m_microBatch;        //!< for labels
    /// (src, dst, micro-batch, receiver's chunk, forward) -> comm
    std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, bool>, uint32_t> m_transfers;
};

/// The largest S such that the last m x S layer lines are m copies of one
/// sequence of layer names (AICB writes the ga micro-batches' layers one
/// after the other, after the lines it runs once); 0 when there is none.
uint32_t
MicroBatchLines(const std::vector<Layer>& layers, uint32_t m)
{
    const auto total = static_cast<uint32_t>(layers.size());
    for (uint32_t s = total / m; s > 0; --s)
    {
        const uint32_t first = total - m * s;
        bool same = true;
        for (uint32_t i = first + s; i < total && same; ++i)
        {
            same = layers[i].name == layers[i - s].name;
        }
        if (same)
        {
            return s;
        }
    }
    return 0;
}

} // namespace

AicbReplay
ReadAicbWorkload(const std::string& path, const AicbReplayOptions& options)
{
    RequireReplayAlgorithm("algorithm", options.algorithm);
    FabricRequire(std::isfinite(options.timeUnitSeconds) && options.timeUnitSeconds > 0 &&
                      options.timeUnitSeconds <= 1,
                  "time unit",
                  options.timeUnitSeconds,
                  "seconds per unit, > 0 and <= 1 (1e-9: nanoseconds)");
    FabricRequire(options.gpus <= kMaxGpus,
                  "gpus",
                  options.gpus,
                  fmt::format("0 (the file's all_gpus) to {}", kMaxGpus));
    std::error_code error;
    FabricRequire(std::filesystem::is_regular_file(path, error),
                  "AICB workload file",
                  path,
                  "a readable regular file (not a directory, device or pipe)");
    FabricRequire(std::filesystem::file_size(path, error) <= kMaxFileBytes,
                  "AICB workload file",
                  path,
                  fmt::format("at most {} bytes", kMaxFileBytes));
    std::ifstream in(path);
    FabricRequire(in.good(), "AICB workload file", path, "a readable regular file");

    std::string text;
    FabricRequire(static_cast<bool>(std::getline(in, text)),
                  At(path, 1, "policy"),
                  "(empty file)",
                  "a header line: HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: N ...");
    const FileHeader h = ParseHeader(path, text);

    std::string countLine;
    FabricRequire(static_cast<bool>(std::getline(in, countLine)),
                  At(path, 2, "layer count"),
                  "(end of file)",
                  fmt::format("the number of layer lines, 1 to {}", kMaxLayers));
    const std::vector<std::string> countTokens = Split(countLine);
    const std::string layerCountText = countTokens.size() == 1 ? countTokens[0] : countLine;
    const auto count = static_cast<uint32_t>(
        ParseUnsigned(layerCountText,
                      At(path, 2, "layer count"),
                      1,
                      kMaxLayers,
                      fmt::format("the number of layer lines, 1 to {}", kMaxLayers)));

    std::vector<Layer> layers;
    uint32_t lineNo = 2;
    while (std::getline(in, text))
    {
        ++lineNo;
        const std::vector<std::string> f = Split(text);
        if (f.empty())
        {
            continue;
        }
        FabricRequire(layers.size() < count,
                      At(path, lineNo, ""),
                      f[0],
                      fmt::format("{} layer line(s), as line 2 says (this is one more)", count));
        FabricRequire(f.size() == kLayerFields,
                      At(path, lineNo, "fields"),
                      fmt::format("{} field(s)", f.size()),
                      "12 whitespace-separated fields: name, reserved (-1), fwd_compute_time, "
                      "fwd_comm_type, fwd_comm_size, ig_compute_time, ig_comm_type, "
                      "ig_comm_size, wg_compute_time, wg_comm_type, wg_comm_size, "
                      "wg_update_time");
        Layer l;
        l.line = lineNo;
        l.name = f[0];
        {
            // SimAI reads it as an int and ignores it
            const char* b = f[1].c_str();
            char* e = nullptr;
            std::strtol(b, &e, 10);
            FabricRequire(e != b && *e == '\0',
                          At(path, lineNo, kFieldNames[1]),
                          f[1],
                          "an integer (AICB writes -1)");
        }
        l.fwd = ParseTime(f[2], At(path, lineNo, kFieldNames[2]));
        l.fwdComm = ParseComm(path, lineNo, f[3], f[4], kFieldNames[3], kFieldNames[4], Group::TP);
        l.ig = ParseTime(f[5], At(path, lineNo, kFieldNames[5]));
        l.igComm = ParseComm(path, lineNo, f[6], f[7], kFieldNames[6], kFieldNames[7], Group::TP);
        l.wg = ParseTime(f[8], At(path, lineNo, kFieldNames[8]));
        l.wgComm = ParseComm(path, lineNo, f[9], f[10], kFieldNames[9], kFieldNames[10], Group::DP);
        l.update = ParseTime(f[11], At(path, lineNo, kFieldNames[11]));
        layers.push_back(std::move(l));
    }
    FabricRequire(in.eof(), "AICB workload file", path, "a readable text file");
    FabricRequire(layers.size() == count,
                  At(path, 2, "layer count"),
                  count,
                  fmt::format("the number of layer lines that follow ({})", layers.size()));

    AicbReplay out;
    out.policy = h.policy;
    out.layers = count;
    out.tp = h.tp;
    out.ep = h.ep;
    out.pp = h.pp;
    if (options.gpus != 0 && h.gpus)
    {
        FabricRequire(options.gpus == *h.gpus,
                      "gpus",
                      options.gpus,
                      fmt::format("0 or the all_gpus of {} ({})", path, *h.gpus));
    }
    FabricRequire(options.gpus != 0 || h.gpus.has_value(),
                  At(path, 1, "all_gpus"),
                  "(missing)",
                  "all_gpus: N in the header, or the GPU count given (gpus, --gpus)");
    const uint32_t gpus = options.gpus != 0 ? options.gpus : *h.gpus;
    const std::string gpusWhere = h.gpus ? At(path, 1, "all_gpus") : std::string("gpus");
    FabricRequire(uint64_t{h.tp} * h.pp <= gpus && gpus % (h.tp * h.pp) == 0,
                  gpusWhere,
                  gpus,
                  fmt::format("a multiple of model_parallel_NPU_group x pp ({} x {})", h.tp, h.pp));
    out.dp = gpus / (h.tp * h.pp);
    FabricRequire(out.dp % h.ep == 0,
                  At(path, 1, "ep"),
                  h.ep,
                  fmt::format("a divisor of the DP size all_gpus / (model_parallel_NPU_group x "
                              "pp) = {}",
                              out.dp));
    if (h.pp > 1 && h.policy != "MICRO")
    {
        // AICB writes ga: 0 only when its global batch is too small
        FabricRequire(h.ga.value_or(1) >= 1,
                      At(path, 1, "ga"),
                      0,
                      "the micro-batches per iteration, >= 1, when pp > 1");
        FabricRequire(h.ppBytes.value_or(0) > 0,
                      At(path, 1, "pp_comm"),
                      h.ppBytes ? fmt::format("{}", *h.ppBytes) : std::string("(missing)"),
                      "the bytes of one micro-batch's activations, > 0 when pp > 1 (AICB writes "
                      "2 x micro_batch x seq_length x hidden_size)");
        out.microBatches = h.ga.value_or(1);
        out.ppCommBytes = *h.ppBytes;
        out.microBatchLayers = MicroBatchLines(layers, out.microBatches);
        FabricRequire(out.microBatchLayers > 0,
                      At(path, 1, "ga"),
                      out.microBatches,
                      fmt::format("a micro-batch count whose copies of one stage's layer lines "
                                  "end the file, as AICB writes them ({} layer line(s) are not "
                                  "{} copies of one sequence of names after the lines run once)",
                                  count,
                                  out.microBatches));
    }
    // interleaving: each stage's micro-batch lines in virtualStages chunks
    const bool vppFromFile = options.virtualStages == 0;
    const std::string vppWhere = vppFromFile ? At(path, 1, "vpp") : std::string("vpp");
    FabricRequire(!vppFromFile || h.pp == 1 || h.vpp.value_or(0) >= 1,
                  vppWhere,
                  h.vpp ? fmt::format("{}", *h.vpp) : std::string("(missing)"),
                  "the model chunks per pipeline stage, >= 1, when the file's vpp is asked for");
    // (without a pipeline the file's vpp, AICB's layer count, means nothing)
    out.virtualStages = !vppFromFile ? options.virtualStages : h.pp > 1 ? *h.vpp : 1;
    if (out.virtualStages > 1)
    {
        const uint32_t v = out.virtualStages;
        FabricRequire(h.pp > 1 && h.policy != "MICRO",
                      vppWhere,
                      v,
                      "1 without a pipeline (pp = 1 or MICRO): interleaving splits each "
                      "stage's layers into model chunks");
        FabricRequire(v <= out.microBatchLayers && out.microBatchLayers % v == 0,
                      vppWhere,
                      v,
                      fmt::format("a divisor of the {} layer line(s) of a micro-batch (each model "
                                  "chunk an equal share of them)",
                                  out.microBatchLayers));
        FabricRequire(out.microBatches % h.pp == 0,
                      At(path, 1, "ga"),
                      out.microBatches,
                      fmt::format("a multiple of pp = {} with interleaving (vpp {}), as "
                                  "Megatron-LM's interleaved schedule requires",
                                  h.pp,
                                  v));
    }
    // recomputation: the backward of an initiating layer first runs the
    // forward of the layers from its checkpoint up to the one below it
    for (const auto& [list, key] : {std::make_pair(&h.checkpoints, "checkpoints"),
                                    std::make_pair(&h.initiates, "checkpoint_initiates")})
    {
        for (uint32_t index : *list)
        {
            FabricRequire(index < count,
                          At(path, 1, key),
                          index,
                          fmt::format("a layer index below the {} layer line(s)", count));
        }
    }
    FabricRequire(h.initiates.empty() || h.policy == "HYBRID_TRANSFORMER_FWD_IN_BCKWD",
                  At(path, 1, "checkpoint_initiates"),
                  h.initiates.size(),
                  "0 unless the policy is HYBRID_TRANSFORMER_FWD_IN_BCKWD (the one that "
                  "recomputes forward passes in the backward)");
    std::map<uint32_t, uint32_t> recomputeFrom; // initiating layer -> its checkpoint
    for (uint32_t i : h.initiates)
    {
        uint32_t c = 0;
        bool found = false;
        for (uint32_t k : h.checkpoints)
        {
            if (k <= i && (!found || k > c))
            {
                c = k;
                found = true;
            }
        }
        // SimAI starts at the nearest checkpoint at or below; at the layer
        // itself it would run on past it into layers already done
        FabricRequire(found && c < i,
                      At(path, 1, "checkpoint_initiates"),
                      i,
                      "a layer with a checkpoint layer below it and none at it (its backward "
                      "first recomputes the forward of the layers from that checkpoint up to the "
                      "one below it)");
        if (recomputeFrom.emplace(i, c).second)
        {
            out.recomputedLayers += i - c;
        }
    }
    const uint64_t tasksPerRank = uint64_t{count} * 9 + uint64_t{out.recomputedLayers} * 3 +
                                  uint64_t{out.microBatches} * out.virtualStages * 4;
    FabricRequire(uint64_t{gpus} * tasksPerRank <= kMaxTasks,
                  At(path, 2, "layer count"),
                  count,
                  fmt::format("at most {} tasks in all: {} layers on {} GPUs make up to {}",
                              kMaxTasks,
                              count,
                              gpus,
                              uint64_t{gpus} * tasksPerRank));
    for (const Layer& l : layers)
    {
        for (const Comm* c : {&l.fwdComm, &l.igComm, &l.wgComm})
        {
            out.broadcasts += c->broadcast ? 1 : 0;
        }
    }

    Builder b(path, options, out, gpus);
    const auto forward = [&](uint32_t from, uint32_t to) {
        for (uint32_t i = from; i < to; ++i)
        {
            b.Compute(layers[i].fwd);
            b.Communicate(layers[i], i, layers[i].fwdComm, "fwd", true);
        }
    };
    const auto backward = [&](uint32_t from, uint32_t to) {
        for (uint32_t i = to; i-- > from;)
        {
            const auto again = recomputeFrom.find(i);
            if (again != recomputeFrom.end())
            {
                FabricRequire(again->second >= from,
                              At(path, 1, "checkpoint_initiates"),
                              i,
                              fmt::format("a layer whose checkpoint (layer {}) is in its own pass "
                                          "(layer lines {} to {} here)",
                                          again->second,
                                          from,
                                          to - 1));
                for (uint32_t j = again->second; j < i; ++j)
                {
                    b.Compute(layers[j].fwd, true);
                    b.Communicate(layers[j], j, layers[j].fwdComm, "recompute", true);
                }
            }
            b.Compute(layers[i].ig);
            b.Communicate(layers[i], i, layers[i].igComm, "ig", true);
            b.Compute(layers[i].wg);
            b.Communicate(layers[i], i, layers[i].wgComm, "wg", false);
        }
    };
    if (h.policy == "MICRO")
    {
        for (uint32_t i = 0; i < count; ++i)
        {
            b.Communicate(layers[i], i, layers[i].wgComm, "wg", true);
        }
    }
    else if (h.pp == 1)
    {
        forward(0, count);
        backward(0, count);
    }
    else
    {
        // every stage runs the file's lines (SimAI gives every rank the same
        // file): the lines before the micro-batches' once, around its 1F1B
        // passes of each micro-batch's lines (of one model chunk's share of
        // them when interleaved: chunk j of stage p is virtual stage j pp + p)
        const uint32_t m = out.microBatches;
        const uint32_t v = out.virtualStages;
        const uint32_t pp = h.pp;
        const uint32_t first = count - m * out.microBatchLayers;
        const uint32_t chunkLines = out.microBatchLayers / v;
        for (uint32_t p = 0; p < pp; ++p)
        {
            b.Select(p);
            forward(0, first);
            const auto order =
                v > 1 ? InterleavedOneFOneBSchedule(p, pp, v, m) : OneFOneBSchedule(p, pp, m);
            for (const PipelineStep& step : order)
            {
                const uint32_t mb = step.microBatch;
                const uint32_t chunk = step.chunk;
                b.Select(p, mb);
                const uint32_t from = first + mb * out.microBatchLayers + chunk * chunkLines;
                const uint32_t to = from + chunkLines;
                if (step.forward)
                {
                    // from the virtual stage before: stage p - 1, or the last
                    // stage's previous chunk
                    if (p > 0 || chunk > 0)
                    {
                        b.Receive(p > 0 ? p - 1 : pp - 1, mb, chunk, true);
                    }
                    forward(from, to);
                    if (p + 1 < pp || chunk + 1 < v)
                    {
                        b.Send(p + 1 < pp ? p + 1 : 0, mb, p + 1 < pp ? chunk : chunk + 1, true);
                    }
                }
                else
                {
                    if (p + 1 < pp || chunk + 1 < v)
                    {
                        b.Receive(p + 1 < pp ? p + 1 : 0, mb, chunk, false);
                    }
                    backward(from, to);
                    if (p > 0 || chunk > 0)
                    {
                        b.Send(p > 0 ? p - 1 : pp - 1, mb, p > 0 ? chunk : chunk - 1, false);
                    }
                }
            }
            b.Select(p);
            backward(0, first);
        }
    }
    out.program.Validate();
    NS_LOG_INFO(path << ": " << count << " layers, " << gpus << " GPUs (tp " << h.tp << ", dp "
                     << out.dp << ", ep " << h.ep << ", pp " << h.pp << "), "
                     << out.program.comms.size() << " comms");
    return out;
}

} // namespace ns3
