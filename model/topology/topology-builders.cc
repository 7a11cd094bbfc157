/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "topology-builders.h"

#include "ns3/direct-connect-graph.h"
#include "ns3/fabric-error.h"

#include <cmath>
#include <fmt/ranges.h>

namespace ns3
{

void
ClusterParams::Validate() const
{
    platform.Validate();
    FabricRequire(gpus >= 1, "gpus", gpus, "an integer >= 1");
    FabricRequire(gpus <= FabricTopology::kMaxGpus, "gpus", gpus, FabricTopology::MaxGpusAllowed());
    FabricRequire(gpus % platform.gpusPerDomain == 0,
                  "gpus",
                  gpus,
                  fmt::format("a multiple of the HB domain size K = {} ({})",
                              platform.gpusPerDomain,
                              platform.name));
    FabricRequire(radix >= 2 && radix % 2 == 0, "radix", radix, "an even integer >= 2");
    FabricRequire(radix <= 65535, "radix", radix, "at most 65535");
    FabricRequire(linkDelayNs >= 0, "link delay (ns)", linkDelayNs, "a non-negative delay");
    FabricRequire(oversubscription >= 1.0,
                  "oversubscription",
                  oversubscription,
                  "a ratio >= 1 (1 = full bisection)");
}

uint64_t
ClusterParams::NetworkRate() const
{
    return fabricRateBps != 0 ? fabricRateBps : platform.nicRate.GetBitRate();
}

std::vector<uint32_t>
AddHbDomains(FabricTopology& topo, uint32_t gpus, const HbDomainPreset& platform)
{
    platform.Validate();
    const uint32_t k = platform.gpusPerDomain;
    FabricRequire(gpus <= FabricTopology::kMaxGpus, "gpus", gpus, FabricTopology::MaxGpusAllowed());
    FabricRequire(gpus % k == 0,
                  "gpus",
                  gpus,
                  fmt::format("a multiple of the HB domain size K = {}", k));
    topo.gpusPerDomain = k;
    std::vector<uint32_t> ranks;
    ranks.reserve(gpus);
    const uint64_t planeRate = platform.nvlinkRate.GetBitRate() / platform.nvswitchPlanes;
    const int64_t nvDelay = platform.nvlinkLatency.GetNanoSeconds();
    for (uint32_t d = 0; d < gpus / k; ++d)
    {
        std::vector<uint32_t> members;
        for (uint32_t i = 0; i < k; ++i)
        {
            members.push_back(topo.AddGpu(static_cast<int32_t>(d), i));
        }
        if (k > 1)
        {
            for (uint32_t plane = 0; plane < platform.nvswitchPlanes; ++plane)
            {
                const uint32_t sw = topo.AddSwitch(TopoNodeKind::NvSwitch, "nvswitch", 0);
                topo.SetDomain(sw, static_cast<int32_t>(d), plane);
                for (uint32_t g : members)
                {
                    topo.AddCable(g, sw, planeRate, nvDelay, TopoLinkKind::NvLink);
                }
            }
        }
        ranks.insert(ranks.end(), members.begin(), members.end());
    }
    return ranks;
}

namespace
{

/// AddClos's size errors, by parameter name; InUserTerms restates them.
const char* const kClosHosts = "hosts of the Clos";
const char* const kLeafHosts = "hosts under the leaves";
const char* const kUplinkHosts = "leaf uplinks of the Clos above the leaves";

/// The oversubscription ratios a radix can split into whole ports.
std::string
ValidOversubscriptions(uint32_t radix)
{
    std::vector<std::string> ratios;
    for (uint32_t up = radix / 2; up >= 1; --up)
    {
        if ((radix - up) % up == 0)
        {
            ratios.push_back(fmt::format("{}", (radix - up) / up));
        }
    }
    return fmt::format("{} (whole ratios; any down:up with down + up = {})",
                       fmt::join(ratios, ", "),
                       radix);
}

/**
 * Run \p build (which adds Clos networks of \p closHosts hosts each) and
 * restate a Clos size error in the user's terms: the GPU count.
 */
template <typename F>
void
InUserTerms(const ClusterParams& p, const std::string& what, uint64_t closHosts, F&& build)
{
    try
    {
        build();
    }
    catch (const FabricConfigError& e)
    {
        const std::string& which = e.Parameter();
        if (which != kClosHosts && which != kLeafHosts && which != kUplinkHosts)
        {
            throw;
        }
        throw FabricConfigError(
            "gpus",
            fmt::format("{}", p.gpus),
            fmt::format("a count whose {} of {} hosts can be built from radix-{} switches "
                        "evenly ({})",
                        what,
                        closHosts,
                        p.radix,
                        e.what()));
    }
}

} // namespace

uint32_t
AddClos(FabricTopology& topo,
        const std::vector<uint32_t>& hosts,
        uint32_t radix,
        uint64_t rateBps,
        int64_t delayNs,
        const std::string& leafRole,
        int64_t chassis,
        double oversubscription,
        uint32_t tierOffset)
{
    const uint64_t n = hosts.size();
    FabricRequire(n >= 1, "Clos hosts", n, "at least one host");
    FabricRequire(radix >= 2 && radix % 2 == 0, "radix", radix, "an even integer >= 2");
    FabricRequire(oversubscription >= 1.0,
                  "oversubscription",
                  oversubscription,
                  "a ratio >= 1 (1 = full bisection)");
    const auto hostLink = [&](uint32_t h) {
        return topo.Node(h).kind == TopoNodeKind::Gpu ? TopoLinkKind::Nic
                                                      : TopoLinkKind::SwitchToSwitch;
    };
    if (n <= radix)
    {
        // one switch has no uplinks to oversubscribe: a silent full-bisection
        // switch would not be what was asked for
        FabricRequire(oversubscription == 1.0,
                      "oversubscription",
                      oversubscription,
                      fmt::format("1 here: {} hosts fit one radix-{} switch, which has no "
                                  "uplinks to oversubscribe",
                                  n,
                                  radix));
        const uint32_t sw = topo.AddSwitch(TopoNodeKind::Switch, leafRole, 1 + tierOffset, chassis);
        for (uint32_t h : hosts)
        {
            topo.AddCable(h, sw, rateBps, delayNs, hostLink(h));
        }
        return 1;
    }
    FabricRequire(radix >= 4,
                  "radix",
                  radix,
                  fmt::format("at least 4 to connect {} hosts (more than one switch)", n));
    if (oversubscription > 1.0)
    {
        // k o/(1+o) host ports and k/(1+o) uplinks per leaf, both integers
        const double upExact = radix / (1.0 + oversubscription);
        const auto up = static_cast<uint32_t>(std::llround(upExact));
        const uint32_t down = radix - up;
        FabricRequire(up >= 1 && std::abs(upExact - up) < 1e-9 &&
                          std::abs(static_cast<double>(down) / up - oversubscription) < 1e-9,
                      "oversubscription",
                      oversubscription,
                      fmt::format("a ratio that splits radix {} into whole host ports and uplinks: "
                                  "{}",
                                  radix,
                                  ValidOversubscriptions(radix)));
        FabricRequire(n % down == 0,
                      kLeafHosts,
                      n,
                      fmt::format("a multiple of {} (radix {} at {}:1 leaves {} host ports and {} "
                                  "uplinks per leaf)",
                                  down,
                                  radix,
                                  oversubscription,
                                  down,
                                  up));
        std::vector<uint32_t> leaves;
        for (uint64_t i = 0; i < n / down; ++i)
        {
            leaves.push_back(topo.AddSwitch(TopoNodeKind::Switch, leafRole, 1 + tierOffset));
        }
        for (uint64_t i = 0; i < n; ++i)
        {
            topo.AddCable(hosts[i], leaves[i / down], rateBps, delayNs, hostLink(hosts[i]));
        }
        // uplink-major order spreads each leaf's uplinks over the tier above
        std::vector<uint32_t> uplinks;
        for (uint32_t u = 0; u < up; ++u)
        {
            uplinks.insert(uplinks.end(), leaves.begin(), leaves.end());
        }
        return 1 + AddClos(topo,
                           uplinks,
                           radix,
                           rateBps,
                           delayNs,
                           "aggregation",
                           -1,
                           1.0,
                           tierOffset + 1);
    }
    const uint64_t half = radix / 2;
    // tiers: smallest t with radix * half^(t-1) >= n
    uint32_t t = 2;
    uint64_t below = half; // hosts under one tier-(t-1) block: half^(t-1)
    while (radix * below < n)
    {
        below *= half;
        ++t;
    }
    const uint64_t blocks = n / below; // tier-(t-1) blocks under the top tier
    FabricRequire(n % below == 0 && radix % blocks == 0 && below % (radix / blocks) == 0,
                  tierOffset == 0 ? kClosHosts : kUplinkHosts,
                  n,
                  fmt::format("a size that fills a {}-tier radix-{} Clos evenly: a multiple of {} "
                              "whose quotient divides {}",
                              t,
                              radix,
                              below,
                              radix));
    const uint64_t leaves = n / half;
    // level[l][i]: switch i of tier l+1; tiers 1..t-1 have n/half switches each
    std::vector<std::vector<uint32_t>> level(t);
    for (uint32_t l = 0; l + 1 < t; ++l)
    {
        const std::string role =
            l == 0 ? leafRole : (t == 3 || l + 2 < t ? "aggregation" : "spine");
        for (uint64_t i = 0; i < leaves; ++i)
        {
            level[l].push_back(topo.AddSwitch(TopoNodeKind::Switch, role, l + 1 + tierOffset));
        }
    }
    for (uint64_t i = 0; i < n; ++i)
    {
        topo.AddCable(hosts[i], level[0][i / half], rateBps, delayNs, hostLink(hosts[i]));
    }
    // Tier l+1 (1-based l+2) inside blocks of half^(l+1) leaves: switch j of
    // sub-block b, uplink u, goes to switch j*half + u of the block.
    uint64_t sub = 1; // tier-l switches per sub-block: half^(l-1)
    for (uint32_t l = 1; l + 1 < t; ++l)
    {
        const uint64_t blockSwitches = sub * half;
        for (uint64_t i = 0; i < leaves; ++i)
        {
            const uint64_t block = i / blockSwitches;
            const uint64_t j = i % sub;
            for (uint64_t u = 0; u < half; ++u)
            {
                topo.AddCable(level[l - 1][i],
                              level[l][block * blockSwitches + j * half + u],
                              rateBps,
                              delayNs,
                              TopoLinkKind::SwitchToSwitch);
            }
        }
        sub = blockSwitches;
    }
    // Top tier: each top switch takes radix/blocks links from every block.
    const uint64_t perBlock = radix / blocks;
    const uint64_t tops = below / perBlock;
    std::vector<uint32_t>& top = level[t - 1];
    for (uint64_t i = 0; i < tops; ++i)
    {
        top.push_back(
            topo.AddSwitch(TopoNodeKind::Switch, t == 2 ? "spine" : "core", t + tierOffset));
    }
    for (uint64_t i = 0; i < leaves; ++i)
    {
        const uint64_t j = i % sub; // index inside its tier-(t-1) block
        for (uint64_t u = 0; u < half; ++u)
        {
            const uint64_t g = j * half + u;
            topo.AddCable(level[t - 2][i],
                          top[g / perBlock],
                          rateBps,
                          delayNs,
                          TopoLinkKind::SwitchToSwitch);
        }
    }
    return t;
}

FabricTopology
BuildFatTree(const ClusterParams& p)
{
    p.Validate();
    FabricTopology topo("fat-tree");
    const std::vector<uint32_t> gpus = AddHbDomains(topo, p.gpus, p.platform);
    InUserTerms(p, "fat-tree", p.gpus, [&] {
        AddClos(topo,
                gpus,
                p.radix,
                p.NetworkRate(),
                p.linkDelayNs,
                "leaf",
                -1,
                p.oversubscription);
    });
    return topo;
}

FabricTopology
BuildRailOptimized(const ClusterParams& p)
{
    p.Validate();
    FabricTopology topo("rail-optimized");
    const std::vector<uint32_t> gpus = AddHbDomains(topo, p.gpus, p.platform);
    const uint32_t k = p.platform.gpusPerDomain;
    std::vector<uint32_t> railMajor;
    railMajor.reserve(gpus.size());
    for (uint32_t rail = 0; rail < k; ++rail)
    {
        for (uint32_t d = 0; d < p.gpus / k; ++d)
        {
            railMajor.push_back(gpus[d * k + rail]);
        }
    }
    // A rail smaller than a leaf's host ports shares its leaf with the next
    // rails (the Clos is filled in rail-major order, as the cost formula
    // counts it): their cross-rail traffic then turns at that leaf instead
    // of climbing to the spine (documented; fabric-routes shows it).
    InUserTerms(p, "rail-optimized fat-tree", p.gpus, [&] {
        AddClos(topo,
                railMajor,
                p.radix,
                p.NetworkRate(),
                p.linkDelayNs,
                "rail",
                -1,
                p.oversubscription);
    });
    return topo;
}

FabricTopology
BuildRailOnly(const ClusterParams& p)
{
    p.Validate();
    FabricRequire(p.oversubscription == 1.0,
                  "oversubscription",
                  p.oversubscription,
                  "1 for rail-only (each rail is a full-bisection network; the design "
                  "has no spine to oversubscribe)");
    FabricTopology topo("rail-only");
    const std::vector<uint32_t> gpus = AddHbDomains(topo, p.gpus, p.platform);
    const uint32_t k = p.platform.gpusPerDomain;
    const uint32_t domains = p.gpus / k;
    topo.railRelay = true;
    // Rails that fit one switch share chassis, floor(radix / rail size) each.
    const uint32_t railsPerChassis = domains <= p.radix ? p.radix / domains : 1;
    int64_t chassis = -1;
    InUserTerms(p, "rails (gpus / K)", domains, [&] {
        for (uint32_t rail = 0; rail < k; ++rail)
        {
            std::vector<uint32_t> members;
            for (uint32_t d = 0; d < domains; ++d)
            {
                members.push_back(gpus[d * k + rail]);
            }
            if (domains <= p.radix && rail % railsPerChassis != 0)
            {
                AddClos(topo, members, p.radix, p.NetworkRate(), p.linkDelayNs, "rail", chassis);
                continue;
            }
            const uint32_t before = topo.GetNVertices();
            AddClos(topo, members, p.radix, p.NetworkRate(), p.linkDelayNs, "rail");
            chassis = topo.Node(before).chassis;
        }
    });
    return topo;
}

FabricTopology
BuildDirectConnect(const DirectConnectGraph& graph,
                   uint64_t nodeBandwidthBps,
                   const ClusterParams& p)
{
    p.platform.Validate();
    FabricRequire(p.linkDelayNs >= 0, "link delay (ns)", p.linkDelayNs, "a non-negative delay");
    FabricRequire(p.oversubscription == 1.0,
                  "oversubscription",
                  p.oversubscription,
                  "1 for direct-connect (no switches, no uplinks)");
    FabricRequire(graph.NumNodes() >= 2, "direct-connect nodes", graph.NumNodes(), "at least 2");
    FabricRequire(graph.IsRegular() && graph.Degree() >= 1,
                  "direct-connect graph",
                  graph.Name(),
                  "a d-regular graph with d >= 1 (every node d out- and d in-arcs)");
    FabricRequire(graph.IsStronglyConnected(),
                  "direct-connect graph",
                  graph.Name(),
                  "a strongly connected graph");
    const uint32_t d = graph.Degree();
    FabricRequire(nodeBandwidthBps >= d,
                  "node bandwidth (bps)",
                  nodeBandwidthBps,
                  fmt::format("at least the degree {} so that each arc has a rate", d));
    const uint32_t k = p.platform.gpusPerDomain;
    FabricTopology topo(graph.Name().empty() ? "direct-connect" : graph.Name());
    topo.gpuTransit = true;
    const uint64_t gpuCount = uint64_t{graph.NumNodes()} * k;
    FabricRequire(gpuCount <= FabricTopology::kMaxGpus,
                  "gpus",
                  gpuCount,
                  fmt::format("{} (direct-connect nodes x K = {} x {})",
                              FabricTopology::MaxGpusAllowed(),
                              graph.NumNodes(),
                              k));
    const std::vector<uint32_t> gpus =
        AddHbDomains(topo, static_cast<uint32_t>(gpuCount), p.platform);
    const uint64_t rate = nodeBandwidthBps / d;
    std::vector<uint32_t> outUsed(graph.NumNodes(), 0);
    std::vector<uint32_t> inUsed(graph.NumNodes(), 0);
    topo.arcToCable.assign(graph.NumArcs(), -1);
    for (uint32_t id = 0; id < graph.NumArcs(); ++id)
    {
        const auto& arc = graph.GetArc(id);
        if (arc.from == arc.to)
        {
            continue; // a self-loop's port carries nothing
        }
        const uint32_t a = gpus[arc.from * k + outUsed[arc.from]++ % k];
        const uint32_t b = gpus[arc.to * k + inUsed[arc.to]++ % k];
        topo.arcToCable[id] = topo.AddArc(a, b, rate, p.linkDelayNs, TopoLinkKind::Direct);
    }
    return topo;
}

} // namespace ns3
