/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-partition.h"

#include "fabric-helper.h"

#include "ns3/fabric-error.h"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

namespace ns3
{

std::string
FabricPartition::ToString() const
{
    std::string out = fmt::format("{} rank(s); vertices per rank [{}], GPUs per rank [{}]; ",
                                  ranks,
                                  fmt::join(verticesOnRank, ", "),
                                  fmt::join(gpusOnRank, ", "));
    if (cutCables == 0)
    {
        return out + "no cable cut";
    }
    return out +
           fmt::format("{} cable(s) cut, lookahead {} ns", cutCables, lookahead.GetNanoSeconds());
}

namespace
{
/// Block b of n items over r ranks: contiguous, sizes differing by one.
uint32_t
BlockRank(uint64_t b, uint64_t n, uint32_t ranks)
{
    return static_cast<uint32_t>(b * ranks / n);
}

/// Vertices per cable end: who each vertex's cables lead to.
std::vector<std::vector<uint32_t>>
Neighbours(const FabricTopology& topo)
{
    std::vector<std::vector<uint32_t>> out(topo.GetNVertices());
    for (const TopoCable& c : topo.Cables())
    {
        out[c.a].push_back(c.b);
        out[c.b].push_back(c.a);
    }
    return out;
}

/// \return what the domain policies place whole: the topology's HB domains,
/// or its GPUs where it has none (\p domains says which)
uint32_t
DomainUnits(const FabricTopology& topo, bool& domains)
{
    int32_t count = 0;
    for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
    {
        count = std::max(count, topo.Node(v).domain + 1);
    }
    domains = count > 0;
    return domains ? static_cast<uint32_t>(count) : topo.GetNGpus();
}

/**
 * Whole HB domains per rank (GPUs where there are none): \p blocks
 * contiguous blocks of them per rank, block k of ranks x blocks on rank
 * k % ranks. One block per rank keeps neighbours together; more spread each
 * stretch of domains, such as a pipeline stage's, over every rank.
 */
std::vector<int64_t>
ByDomain(const FabricTopology& topo, uint32_t ranks, uint32_t blocks, const std::string& spec)
{
    const uint64_t parts = static_cast<uint64_t>(ranks) * blocks;
    bool domains = false;
    const uint32_t units = DomainUnits(topo, domains);
    FabricRequire(units >= parts,
                  "ranks",
                  ranks,
                  fmt::format("at most the topology's {} {} in {} block(s) per rank "
                              "(partition '{}')",
                              units,
                              domains ? "HB domain(s)" : "GPU(s)",
                              blocks,
                              spec));
    std::vector<int64_t> fixed(topo.GetNVertices(), -1);
    for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
    {
        const TopoNode& n = topo.Node(v);
        // no HB domains: GPUs in contiguous blocks
        const int64_t unit = domains                       ? int64_t{n.domain}
                             : n.kind == TopoNodeKind::Gpu ? int64_t{n.rank}
                                                           : -1;
        if (unit >= 0)
        {
            fixed[v] = BlockRank(unit, units, static_cast<uint32_t>(parts)) % ranks;
        }
    }
    return fixed;
}

std::vector<int64_t>
ByPod(const FabricTopology& topo, uint32_t ranks)
{
    const uint32_t nv = topo.GetNVertices();
    uint32_t top = 0;
    for (uint32_t v = 0; v < nv; ++v)
    {
        top = std::max(top, topo.Node(v).tier);
    }
    // pods: connected components once the top tier (if above the leaves) is gone
    const auto nb = Neighbours(topo);
    std::vector<int64_t> pod(nv, -1);
    std::vector<uint32_t> podFirstGpu;
    for (uint32_t v = 0; v < nv; ++v)
    {
        if (pod[v] >= 0 || (top >= 2 && topo.Node(v).tier == top))
        {
            continue;
        }
        const auto id = static_cast<int64_t>(podFirstGpu.size());
        uint32_t firstGpu = UINT32_MAX;
        std::vector<uint32_t> stack{v};
        pod[v] = id;
        while (!stack.empty())
        {
            const uint32_t x = stack.back();
            stack.pop_back();
            if (topo.Node(x).kind == TopoNodeKind::Gpu)
            {
                firstGpu = std::min(firstGpu, topo.Node(x).rank);
            }
            for (const uint32_t y : nb[x])
            {
                if (pod[y] < 0 && !(top >= 2 && topo.Node(y).tier == top))
                {
                    pod[y] = id;
                    stack.push_back(y);
                }
            }
        }
        podFirstGpu.push_back(firstGpu);
    }
    const auto pods = static_cast<uint32_t>(podFirstGpu.size());
    FabricRequire(pods >= ranks,
                  "ranks",
                  ranks,
                  fmt::format("at most the topology's {} pod(s) with partition 'pod' (a pod: "
                              "what stays connected without the top tier; try 'domain')",
                              pods));
    // pods in the order of their GPUs, in contiguous blocks
    std::vector<uint32_t> order(pods);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
        return podFirstGpu[x] < podFirstGpu[y];
    });
    std::vector<uint32_t> rankOfPod(pods);
    for (uint32_t i = 0; i < pods; ++i)
    {
        rankOfPod[order[i]] = BlockRank(i, pods, ranks);
    }
    std::vector<int64_t> fixed(nv, -1);
    for (uint32_t v = 0; v < nv; ++v)
    {
        if (pod[v] >= 0)
        {
            fixed[v] = rankOfPod[pod[v]];
        }
    }
    return fixed;
}

/// The ranks a partition file gives the vertices it names (-1: the others).
/// On one rank the ranks are not checked: a file written for N ranks also
/// runs on one.
std::vector<int64_t>
FromFile(const FabricTopology& topo, uint32_t ranks, const std::string& path)
{
    std::ifstream in(path);
    FabricRequire(static_cast<bool>(in), "partition file", path, "a readable file");
    nlohmann::json j;
    try
    {
        j = nlohmann::json::parse(in);
    }
    catch (const nlohmann::json::parse_error& e)
    {
        throw FabricConfigError(fmt::format("partition file {}", path),
                                e.what(),
                                "well-formed JSON");
    }
    FabricRequire(j.is_object(),
                  fmt::format("partition file {}", path),
                  j.dump().substr(0, 40),
                  "a JSON object of vertex name -> rank, e.g. {\"gpu-0\": 0, \"leaf-1\": 1}");
    const std::vector<std::string> names = FabricVertexNames(topo);
    std::map<std::string, uint32_t> index;
    for (uint32_t v = 0; v < names.size(); ++v)
    {
        index.emplace(names[v], v);
    }
    std::vector<int64_t> fixed(topo.GetNVertices(), -1);
    for (const auto& [name, value] : j.items())
    {
        const auto it = index.find(name);
        FabricRequire(it != index.end(),
                      fmt::format("partition file {}: vertex", path),
                      name,
                      fmt::format("a vertex of the topology (gpu-0..gpu-{}, and its switches by "
                                  "role: {}, ...)",
                                  topo.GetNGpus() - 1,
                                  names.back()));
        FabricRequire(value.is_number_unsigned() && (ranks == 1 || value.get<uint64_t>() < ranks),
                      fmt::format("partition file {}: rank of {}", path, name),
                      value.dump(),
                      fmt::format("a rank in 0..{}", ranks - 1));
        fixed[it->second] = value.get<int64_t>();
    }
    return fixed;
}
} // namespace

FabricPartition
FabricPartitioner::Complete(const FabricTopology& topo,
                            uint32_t ranks,
                            std::vector<int64_t> fixed,
                            const std::string& what)
{
    const uint32_t nv = topo.GetNVertices();
    FabricRequire(ranks >= 1, "ranks", ranks, "at least 1");
    FabricRequire(ranks <= nv,
                  "ranks",
                  ranks,
                  fmt::format("at most the topology's {} vertices (GPUs and switches)", nv));
    FabricPartition out;
    out.ranks = ranks;
    out.verticesOnRank.assign(ranks, 0);
    out.gpusOnRank.assign(ranks, 0);
    for (uint32_t v = 0; v < nv; ++v)
    {
        if (fixed[v] >= 0)
        {
            ++out.verticesOnRank[fixed[v]];
        }
    }
    // the rest, tier by tier upward, where most of their cables lead
    const auto nb = Neighbours(topo);
    std::vector<uint32_t> order(nv);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
        return topo.Node(x).tier < topo.Node(y).tier;
    });
    for (bool progress = true; progress;)
    {
        progress = false;
        bool left = false;
        for (const uint32_t v : order)
        {
            if (fixed[v] >= 0)
            {
                continue;
            }
            std::vector<uint32_t> votes(ranks, 0);
            bool any = false;
            for (const uint32_t y : nb[v])
            {
                if (fixed[y] >= 0)
                {
                    ++votes[fixed[y]];
                    any = true;
                }
            }
            if (!any)
            {
                left = true;
                continue;
            }
            uint32_t best = 0;
            for (uint32_t r = 1; r < ranks; ++r)
            {
                if (votes[r] > votes[best] ||
                    (votes[r] == votes[best] && out.verticesOnRank[r] < out.verticesOnRank[best]))
                {
                    best = r;
                }
            }
            fixed[v] = best;
            ++out.verticesOnRank[best];
            progress = true;
        }
        if (!progress && left)
        {
            // nothing placed reaches them: the emptiest rank
            for (const uint32_t v : order)
            {
                if (fixed[v] < 0)
                {
                    const auto r = static_cast<uint32_t>(
                        std::min_element(out.verticesOnRank.begin(), out.verticesOnRank.end()) -
                        out.verticesOnRank.begin());
                    fixed[v] = r;
                    ++out.verticesOnRank[r];
                }
            }
        }
    }
    out.rankOf.resize(nv);
    for (uint32_t v = 0; v < nv; ++v)
    {
        out.rankOf[v] = static_cast<uint32_t>(fixed[v]);
        if (topo.Node(v).kind == TopoNodeKind::Gpu)
        {
            ++out.gpusOnRank[out.rankOf[v]];
        }
    }
    for (uint32_t r = 0; r < ranks; ++r)
    {
        FabricRequire(out.verticesOnRank[r] > 0,
                      "ranks",
                      ranks,
                      fmt::format("a number that leaves no rank empty (partition '{}' gives "
                                  "rank {} nothing)",
                                  what,
                                  r));
    }
    for (const TopoCable& c : topo.Cables())
    {
        if (out.rankOf[c.a] == out.rankOf[c.b])
        {
            continue;
        }
        if (c.delayNs <= 0)
        {
            // the names only for the message
            const std::vector<std::string> names = FabricVertexNames(topo);
            throw FabricConfigError(
                fmt::format("partition '{}': cut cable {} (rank {}) - {} (rank {}), delay",
                            what,
                            names[c.a],
                            out.rankOf[c.a],
                            names[c.b],
                            out.rankOf[c.b]),
                fmt::format("{} ns", c.delayNs),
                "a cable of positive delay: a cut cable's delay is the lookahead of a "
                "distributed run (keep zero-delay cables inside one rank)");
        }
        ++out.cutCables;
        out.lookahead = std::min(out.lookahead, NanoSeconds(c.delayNs));
    }
    return out;
}

FabricPartition
FabricPartitioner::Make(const FabricTopology& topo, uint32_t ranks, const std::string& spec)
{
    // the policy is checked on one rank too, where it places nothing
    const bool file = spec.rfind("file:", 0) == 0;
    // "domain" is "domain:1"; B in "domain:B" and P in "pipeline:P" whole
    // numbers from 1 to 65536
    const auto count = [&](const std::string& prefix) -> uint32_t {
        if (spec.rfind(prefix, 0) != 0)
        {
            return 0;
        }
        const std::string digits = spec.substr(prefix.size());
        const bool valid = !digits.empty() && digits.size() <= 5 &&
                           digits.find_first_not_of("0123456789") == std::string::npos &&
                           std::stoul(digits) >= 1 && std::stoul(digits) <= 65536;
        return valid ? static_cast<uint32_t>(std::stoul(digits)) : 0;
    };
    const uint32_t blocksGiven = count("domain:");
    const uint32_t stages = count("pipeline:");
    const bool domain = spec == "domain" || blocksGiven > 0 || stages > 0;
    FabricRequire(domain || spec == "pod" || file,
                  "partition",
                  spec,
                  "domain, domain:B (B = 1..65536 blocks of domains per rank, interleaved), "
                  "pipeline:P (P = 1..65536 pipeline stages: domain:B with B = min(P, domains / "
                  "ranks)), pod or file:PATH");
    FabricRequire(ranks >= 1, "ranks", ranks, "at least 1");
    FabricRequire(
        ranks <= topo.GetNVertices(),
        "ranks",
        ranks,
        fmt::format("at most the topology's {} vertices (GPUs and switches)", topo.GetNVertices()));
    if (ranks == 1)
    {
        if (file)
        {
            FromFile(topo, 1, spec.substr(5)); // a bad file fails on one rank as on several
        }
        return Complete(topo, 1, std::vector<int64_t>(topo.GetNVertices(), 0), spec);
    }
    if (domain)
    {
        // P stages, each a contiguous stretch of domains (as Parallelism
        // places them) and busy in turn: P blocks per rank spread every stage
        // over every rank, as many as the domains allow
        bool domains = false;
        const uint32_t blocks =
            stages > 0 ? std::max<uint32_t>(1, std::min(stages, DomainUnits(topo, domains) / ranks))
            : blocksGiven > 0 ? blocksGiven
                              : 1;
        return Complete(topo, ranks, ByDomain(topo, ranks, blocks, spec), spec);
    }
    if (spec == "pod")
    {
        return Complete(topo, ranks, ByPod(topo, ranks), spec);
    }
    return Complete(topo, ranks, FromFile(topo, ranks, spec.substr(5)), spec);
}

} // namespace ns3
