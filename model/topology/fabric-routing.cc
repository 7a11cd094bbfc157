/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-routing.h"

#include "ns3/fabric-error.h"
#include "ns3/fabric-memory.h"

#include <boost/graph/push_relabel_max_flow.hpp>
#include <deque>
#include <limits>
#include <set>

namespace ns3
{

namespace
{

constexpr uint32_t kUnreached = std::numeric_limits<uint32_t>::max();

bool
IsTransit(const FabricTopology& topo, uint32_t v)
{
    return topo.gpuTransit || topo.Node(v).kind != TopoNodeKind::Gpu;
}

/// Failed elements in O(1) form (empty vectors: nothing failed).
struct Dead
{
    std::vector<char> vertex;       //!< by vertex
    std::vector<char> cable;        //!< by cable
    std::vector<char> extraTransit; //!< GPUs allowed to relay for the current destination

    bool Vertex(uint32_t v) const
    {
        return !vertex.empty() && vertex[v];
    }

    bool Edge(const FabricTopology::Graph& g, FabricTopology::Edge e) const
    {
        return !cable.empty() && cable[g[e].cable];
    }

    bool Transit(const FabricTopology& topo, uint32_t v) const
    {
        return IsTransit(topo, v) || (!extraTransit.empty() && extraTransit[v]);
    }
};

/// Hop distances of every vertex to \p target, walking edges backwards and
/// expanding only through vertices allowed to carry transit traffic.
/// \p inside restricts the walk (empty: whole graph).
void
DistancesTo(const FabricTopology& topo,
            uint32_t target,
            const std::vector<char>& inside,
            std::vector<uint32_t>& dist,
            const Dead& dead)
{
    const auto& g = topo.GetGraph();
    dist.assign(topo.GetNVertices(), kUnreached);
    dist[target] = 0;
    if (dead.Vertex(target))
    {
        return;
    }
    std::deque<uint32_t> queue{target};
    while (!queue.empty())
    {
        const uint32_t x = queue.front();
        queue.pop_front();
        for (auto [it, end] = boost::in_edges(x, g); it != end; ++it)
        {
            const auto y = static_cast<uint32_t>(boost::source(*it, g));
            if (dist[y] != kUnreached || (!inside.empty() && !inside[y]) || dead.Vertex(y) ||
                dead.Edge(g, *it))
            {
                continue;
            }
            dist[y] = dist[x] + 1;
            if (dead.Transit(topo, y))
            {
                queue.push_back(y);
            }
        }
    }
}

/// Equal-cost next-hop ports of \p y toward \p target given distances.
void
NextHops(const FabricTopology& topo,
         uint32_t y,
         uint32_t target,
         const std::vector<uint32_t>& dist,
         std::vector<uint16_t>& ports,
         const Dead& dead)
{
    const auto& g = topo.GetGraph();
    ports.clear();
    if (dist[y] == kUnreached || y == target || dead.Vertex(target))
    {
        return;
    }
    for (auto [it, end] = boost::out_edges(y, g); it != end; ++it)
    {
        const auto x = static_cast<uint32_t>(boost::target(*it, g));
        if (dist[x] != kUnreached && dist[x] + 1 == dist[y] &&
            (x == target || dead.Transit(topo, x)) && !dead.Vertex(x) && !dead.Edge(g, *it))
        {
            ports.push_back(static_cast<uint16_t>(g[*it].srcPort));
        }
    }
}

} // namespace

uint32_t
VertexSalt(uint32_t vertex)
{
    return FabricEcmpHash(vertex, 0x5bd1e995U, 0x1234, 0);
}

std::vector<FabricRoutingTable>
ComputeRoutingTables(const FabricTopology& topo)
{
    return ComputeRoutingTables(topo, FaultState());
}

void
RequireRoutingTablesFit(const FabricTopology& topo)
{
    const double nv = topo.GetNVertices();
    const double ngpu = topo.GetNGpus();
    FabricRequireMemory(nv * (ngpu * sizeof(uint16_t) + sizeof(FabricRoutingTable)),
                        "gpus",
                        topo.GetNGpus(),
                        fmt::format("routing tables ({} nodes x {} destinations)",
                                    topo.GetNVertices(),
                                    topo.GetNGpus()));
}

std::vector<FabricRoutingTable>
ComputeRoutingTables(const FabricTopology& topo, const FaultState& faults)
{
    RequireRoutingTablesFit(topo);
    const uint32_t nv = topo.GetNVertices();
    const uint32_t ngpu = topo.GetNGpus();
    for (uint32_t v = 0; v < nv; ++v)
    {
        FabricRequire(topo.Node(v).ports <= 65535,
                      "ports of a vertex",
                      topo.Node(v).ports,
                      "at most 65535");
    }
    Dead dead;
    if (!faults.Empty())
    {
        dead.vertex.assign(nv, 0);
        dead.cable.assign(topo.Cables().size(), 0);
        for (uint32_t v : faults.vertices)
        {
            FabricRequire(v < nv, "failed vertex", v, fmt::format("a vertex below {}", nv));
            dead.vertex[v] = 1;
        }
        for (uint32_t c : faults.cables)
        {
            FabricRequire(c < topo.Cables().size(),
                          "failed cable",
                          c,
                          fmt::format("a cable below {}", topo.Cables().size()));
            dead.cable[c] = 1;
        }
    }
    std::vector<FabricRoutingTable> tables(nv, FabricRoutingTable(ngpu));
    std::vector<uint32_t> dist;
    std::vector<uint16_t> ports;

    // Inside an HB domain traffic stays on NVLink (a NIC path through a leaf
    // can tie with it in hop count), and rail relay needs the NVLink routes
    // too: for every GPU, the next hops of its domain's members (GPUs and
    // NVSwitch planes) toward it over the domain's own links.
    const uint32_t k = topo.gpusPerDomain;
    const bool domains = k > 1;
    const bool relay = topo.railRelay && domains;
    std::vector<std::vector<uint32_t>> domainMembers;
    if (domains)
    {
        for (uint32_t v = 0; v < nv; ++v)
        {
            const TopoNode& n = topo.Node(v);
            if (n.domain >= 0)
            {
                if (domainMembers.size() <= static_cast<uint32_t>(n.domain))
                {
                    domainMembers.resize(n.domain + 1);
                }
                domainMembers[n.domain].push_back(v);
            }
        }
    }
    // nvlinkPorts[rank][member index] = ports of that member toward the rank
    std::vector<std::vector<std::vector<uint16_t>>> nvlinkPorts;
    if (domains)
    {
        nvlinkPorts.resize(ngpu);
        std::vector<char> inside(nv, 0);
        std::vector<uint32_t> d2;
        for (uint32_t r = 0; r < ngpu; ++r)
        {
            const uint32_t rv = topo.GpuVertex(r);
            const auto& members = domainMembers[topo.Node(rv).domain];
            for (uint32_t m : members)
            {
                inside[m] = 1;
            }
            DistancesTo(topo, rv, inside, d2, dead);
            nvlinkPorts[r].resize(members.size());
            for (size_t i = 0; i < members.size(); ++i)
            {
                NextHops(topo, members[i], rv, d2, nvlinkPorts[r][i], dead);
            }
            for (uint32_t m : members)
            {
                inside[m] = 0;
            }
        }
    }

    const std::vector<char> everywhere;
    // After failures: destinations some live GPUs can no longer reach get
    // relays through the HB domains (see FaultState::hbDomainRelay).
    const bool relayAround = domains && !faults.Empty() && faults.hbDomainRelay;
    std::vector<uint32_t> dist2;
    const auto RelayAroundFailures = [&](uint32_t dst) {
        const uint32_t dv = topo.GpuVertex(dst);
        if (dead.Vertex(dv))
        {
            return;
        }
        bool missing = false;
        for (uint32_t r = 0; r < ngpu && !missing; ++r)
        {
            const uint32_t v = topo.GpuVertex(r);
            missing = r != dst && !dead.Vertex(v) && tables[v].GetNPorts(dst) == 0;
        }
        if (!missing)
        {
            return;
        }
        // egress relay: the destination's domain-mates may carry its traffic
        const auto& own = domainMembers[topo.Node(dv).domain];
        dead.extraTransit.assign(nv, 0);
        for (uint32_t m : own)
        {
            if (topo.Node(m).kind == TopoNodeKind::Gpu)
            {
                dead.extraTransit[m] = 1;
            }
        }
        DistancesTo(topo, dv, everywhere, dist2, dead);
        for (uint32_t v = 0; v < nv; ++v)
        {
            if (v != dv && !dead.Vertex(v) && tables[v].GetNPorts(dst) == 0)
            {
                NextHops(topo, v, dv, dist2, ports, dead);
                if (!ports.empty())
                {
                    tables[v].Replace(dst, ports);
                }
            }
        }
        dead.extraTransit.clear();
        // ingress relay: members without a path go over NVLink to the
        // domain's GPUs that have one
        for (uint32_t d = 0; d < domainMembers.size(); ++d)
        {
            if (static_cast<int32_t>(d) == topo.Node(dv).domain)
            {
                continue;
            }
            const auto& members = domainMembers[d];
            std::vector<uint32_t> relays;
            for (uint32_t m : members)
            {
                if (topo.Node(m).kind == TopoNodeKind::Gpu && !dead.Vertex(m) &&
                    tables[m].GetNPorts(dst) > 0)
                {
                    relays.push_back(topo.Node(m).rank);
                }
            }
            if (relays.empty())
            {
                continue;
            }
            for (size_t i = 0; i < members.size(); ++i)
            {
                const uint32_t m = members[i];
                if (dead.Vertex(m) || tables[m].GetNPorts(dst) > 0)
                {
                    continue;
                }
                std::set<uint16_t> union_;
                for (uint32_t rr : relays)
                {
                    union_.insert(nvlinkPorts[rr][i].begin(), nvlinkPorts[rr][i].end());
                }
                if (!union_.empty())
                {
                    tables[m].Replace(dst, std::vector<uint16_t>(union_.begin(), union_.end()));
                }
            }
        }
    };

    for (uint32_t dst = 0; dst < ngpu; ++dst)
    {
        const uint32_t dv = topo.GpuVertex(dst);
        DistancesTo(topo, dv, everywhere, dist, dead);
        for (uint32_t v = 0; v < nv; ++v)
        {
            NextHops(topo, v, dv, dist, ports, dead);
            tables[v].Append(dst, ports);
        }
        if (!domains)
        {
            continue;
        }

        const TopoNode& dn = topo.Node(dv);
        {
            const auto& members = domainMembers[dn.domain];
            for (size_t i = 0; i < members.size(); ++i)
            {
                if (members[i] != dv && !nvlinkPorts[dst][i].empty())
                {
                    tables[members[i]].Replace(dst, nvlinkPorts[dst][i]);
                }
            }
        }
        for (uint32_t d = 0; relay && d < domainMembers.size(); ++d)
        {
            if (static_cast<int32_t>(d) == dn.domain)
            {
                continue;
            }
            const uint32_t relayRank = d * k + dn.local;
            const uint32_t rv = topo.GpuVertex(relayRank);
            if (dist[rv] == kUnreached)
            {
                continue; // the rail itself does not reach dst
            }
            const auto& members = domainMembers[d];
            for (size_t i = 0; i < members.size(); ++i)
            {
                const uint32_t m = members[i];
                if (m != rv && dist[m] == kUnreached && !nvlinkPorts[relayRank][i].empty())
                {
                    tables[m].Replace(dst, nvlinkPorts[relayRank][i]);
                }
            }
        }
        if (relayAround)
        {
            RelayAroundFailures(dst);
        }
    }
    return tables;
}

std::vector<uint32_t>
TracePath(const FabricTopology& topo,
          const std::vector<FabricRoutingTable>& tables,
          uint32_t srcRank,
          uint32_t dstRank,
          uint16_t flowLabel)
{
    const auto& g = topo.GetGraph();
    const uint32_t dv = topo.GpuVertex(dstRank);
    uint32_t v = topo.GpuVertex(srcRank);
    std::vector<uint32_t> path{v};
    while (v != dv)
    {
        const FabricRoutingTable& t = tables[v];
        const uint32_t n = t.GetNPorts(dstRank);
        if (n == 0 || path.size() > topo.GetNVertices())
        {
            return {};
        }
        const uint32_t i =
            n == 1 ? 0 : FabricEcmpHash(srcRank, dstRank, flowLabel, VertexSalt(v)) % n;
        const uint16_t port = t.GetPort(dstRank, i);
        bool moved = false;
        for (auto [it, end] = boost::out_edges(v, g); it != end; ++it)
        {
            if (g[*it].srcPort == port)
            {
                v = static_cast<uint32_t>(boost::target(*it, g));
                moved = true;
                break;
            }
        }
        if (!moved)
        {
            return {};
        }
        path.push_back(v);
    }
    return path;
}

RoutingReport
CheckRouting(const FabricTopology& topo, const std::vector<FabricRoutingTable>& tables)
{
    RoutingReport r;
    uint64_t hopSum = 0;
    const uint32_t n = topo.GetNGpus();
    for (uint32_t s = 0; s < n; ++s)
    {
        for (uint32_t d = 0; d < n; ++d)
        {
            if (s == d)
            {
                continue;
            }
            ++r.pairs;
            const auto path = TracePath(topo, tables, s, d, 0);
            if (path.empty())
            {
                if (r.unreachable++ == 0)
                {
                    r.firstFailure = fmt::format("rank {} cannot reach rank {}", s, d);
                }
                continue;
            }
            const auto hops = static_cast<uint32_t>(path.size() - 1);
            if (r.hopHistogram.size() <= hops)
            {
                r.hopHistogram.resize(hops + 1, 0);
            }
            ++r.hopHistogram[hops];
            r.maxHops = std::max(r.maxHops, hops);
            hopSum += hops;
        }
    }
    const uint64_t reached = r.pairs - r.unreachable;
    r.meanHops = reached ? static_cast<double>(hopSum) / reached : 0.0;
    return r;
}

double
MaxFlowBps(const FabricTopology& topo,
           const std::vector<uint32_t>& srcRanks,
           const std::vector<uint32_t>& dstRanks,
           bool includeNvlink)
{
    using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
    using FlowGraph = boost::adjacency_list<
        boost::vecS,
        boost::vecS,
        boost::directedS,
        boost::no_property,
        boost::property<
            boost::edge_capacity_t,
            double,
            boost::property<boost::edge_residual_capacity_t,
                            double,
                            boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
    const uint32_t nv = topo.GetNVertices();
    FlowGraph fg(nv + 2);
    auto cap = boost::get(boost::edge_capacity, fg);
    auto rev = boost::get(boost::edge_reverse, fg);
    const auto addEdge = [&](uint32_t a, uint32_t b, double c) {
        auto e = boost::add_edge(a, b, fg).first;
        auto r = boost::add_edge(b, a, fg).first;
        cap[e] = c;
        cap[r] = 0;
        rev[e] = r;
        rev[r] = e;
    };
    std::vector<char> endpoint(nv, 0);
    const uint32_t source = nv;
    const uint32_t sink = nv + 1;
    double total = 0;
    for (const TopoCable& c : topo.Cables())
    {
        total += 2.0 * c.rateBps;
    }
    for (uint32_t r : srcRanks)
    {
        const uint32_t v = topo.GpuVertex(r);
        FabricRequire(!endpoint[v], "max-flow ranks", r, "each rank once, in one set only");
        endpoint[v] = 1;
        addEdge(source, v, total);
    }
    for (uint32_t r : dstRanks)
    {
        const uint32_t v = topo.GpuVertex(r);
        FabricRequire(!endpoint[v], "max-flow ranks", r, "each rank once, in one set only");
        endpoint[v] = 2;
        addEdge(v, sink, total);
    }
    const auto& g = topo.GetGraph();
    for (auto [it, end] = boost::edges(g); it != end; ++it)
    {
        const auto a = static_cast<uint32_t>(boost::source(*it, g));
        const auto b = static_cast<uint32_t>(boost::target(*it, g));
        // a GPU that may not relay only sends its own (source side) or
        // receives its own (sink side) traffic
        const bool aOk = IsTransit(topo, a) || endpoint[a] == 1;
        const bool bOk = IsTransit(topo, b) || endpoint[b] == 2;
        if (aOk && bOk && (includeNvlink || g[*it].kind != TopoLinkKind::NvLink))
        {
            addEdge(a, b, static_cast<double>(g[*it].rateBps));
        }
    }
    return boost::push_relabel_max_flow(fg, source, sink);
}

std::string
PathToString(const FabricTopology& topo, const std::vector<uint32_t>& path)
{
    std::string s;
    for (size_t i = 0; i < path.size(); ++i)
    {
        const TopoNode& n = topo.Node(path[i]);
        if (i > 0)
        {
            s += " -> ";
        }
        s += n.kind == TopoNodeKind::Gpu ? fmt::format("gpu{}", n.rank)
                                         : fmt::format("{}(v{})", n.role, path[i]);
    }
    return s;
}

} // namespace ns3
