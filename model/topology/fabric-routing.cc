/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-routing.h"

#include "ns3/fabric-error.h"
#include "ns3/fabric-memory.h"

#include <boost/graph/push_relabel_max_flow.hpp>
#include <deque>
#include <functional>
#include <limits>
#include <queue>
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

/**
 * The graph's edges in flat arrays, by vertex (compressed rows), in Boost's
 * edge order (the order of a group's ports). The tables walk every edge
 * once per destination; Boost's bidirectional adjacency list reaches each
 * edge's properties through a pointer of its own, and a vertex's kind lies in
 * a TopoNode with its strings.
 */
struct Adjacency
{
    /// An edge leaving a vertex.
    struct Out
    {
        uint32_t target; //!< the vertex it reaches
        uint32_t cable;  //!< its cable (FabricTopology::Cables)
        uint16_t port;   //!< its port at the source
        bool direct;     //!< a direct-connect arc
    };

    /// An edge entering a vertex.
    struct In
    {
        uint32_t source; //!< the vertex it leaves
        uint32_t cable;  //!< its cable
        bool direct;     //!< a direct-connect arc
    };

    std::vector<uint32_t> outBegin; //!< by vertex: its first edge in out (size vertices + 1)
    std::vector<Out> out;           //!< the edges leaving each vertex, vertex by vertex
    std::vector<uint32_t> inBegin;  //!< by vertex: its first edge in in
    std::vector<In> in;             //!< the edges entering each vertex
    std::vector<char> transit;      //!< by vertex: may carry transit traffic (IsTransit)

    /// \param topo the topology
    explicit Adjacency(const FabricTopology& topo)
    {
        const auto& g = topo.GetGraph();
        const uint32_t nv = topo.GetNVertices();
        outBegin.reserve(nv + 1);
        inBegin.reserve(nv + 1);
        out.reserve(boost::num_edges(g));
        in.reserve(boost::num_edges(g));
        transit.resize(nv);
        for (uint32_t v = 0; v < nv; ++v)
        {
            outBegin.push_back(out.size());
            for (auto [it, end] = boost::out_edges(v, g); it != end; ++it)
            {
                const TopoLink& l = g[*it];
                out.push_back({static_cast<uint32_t>(boost::target(*it, g)),
                               l.cable,
                               static_cast<uint16_t>(l.srcPort),
                               l.kind == TopoLinkKind::Direct});
            }
            inBegin.push_back(in.size());
            for (auto [it, end] = boost::in_edges(v, g); it != end; ++it)
            {
                const TopoLink& l = g[*it];
                in.push_back({static_cast<uint32_t>(boost::source(*it, g)),
                              l.cable,
                              l.kind == TopoLinkKind::Direct});
            }
            transit[v] = IsTransit(topo, v);
        }
        outBegin.push_back(out.size());
        inBegin.push_back(in.size());
    }
};

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

    bool Cable(uint32_t c) const
    {
        return !cable.empty() && cable[c];
    }

    bool Transit(const Adjacency& adj, uint32_t v) const
    {
        return adj.transit[v] || (!extraTransit.empty() && extraTransit[v]);
    }
};

/**
 * The routing length of an edge. A direct-connect arc counts as
 * kDirectArcHops hops when the topology also has NVLink (HB domains as graph
 * nodes): shortest paths then take the fewest arcs first, the NVLink hops to
 * and from the GPU that holds an arc breaking ties. Counted as one hop each,
 * a path over three arcs whose ends happen to sit on the GPUs that hold the
 * next arc ties with the direct arc plus two NVLink hops, and ECMP sent
 * traffic between neighbouring domains around the graph over arcs other
 * collectives were using (BFB on a Hypercube(3) of DGX-H100 domains: 1.7 x
 * its formula). Elsewhere every edge is one hop (the same paths as before).
 */
constexpr uint32_t kDirectArcHops = 16;

/// \return whether \p topo has both direct-connect arcs and NVLink
bool
MixesArcsAndNvlink(const FabricTopology& topo)
{
    bool arcs = false;
    bool nvlink = false;
    for (const TopoCable& c : topo.Cables())
    {
        arcs = arcs || c.kind == TopoLinkKind::Direct;
        nvlink = nvlink || c.kind == TopoLinkKind::NvLink;
    }
    return arcs && nvlink;
}

/// \return the routing length of an edge (see kDirectArcHops)
/// \param direct whether it is a direct-connect arc
/// \param weighted whether arcs count kDirectArcHops
uint32_t
EdgeHops(bool direct, bool weighted)
{
    return weighted && direct ? kDirectArcHops : 1;
}

/// Hop distances of every vertex to \p target, walking edges backwards and
/// expanding only through vertices allowed to carry transit traffic.
/// \p inside restricts the walk (empty: whole graph). With \p weighted,
/// arcs count kDirectArcHops (Dijkstra); else a breadth-first walk.
void
DistancesTo(const Adjacency& adj,
            uint32_t target,
            const std::vector<char>& inside,
            std::vector<uint32_t>& dist,
            const Dead& dead,
            bool weighted = false)
{
    dist.assign(adj.transit.size(), kUnreached);
    dist[target] = 0;
    if (dead.Vertex(target))
    {
        return;
    }
    using Item = std::pair<uint32_t, uint32_t>; // distance, vertex
    std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
    std::vector<uint32_t> queue; // breadth-first: taken from next on
    size_t next = 0;
    if (weighted)
    {
        heap.emplace(0, target);
    }
    else
    {
        queue.reserve(adj.transit.size());
        queue.push_back(target);
    }
    while (next < queue.size() || !heap.empty())
    {
        uint32_t x = 0;
        if (weighted)
        {
            const auto [d, v] = heap.top();
            heap.pop();
            if (d != dist[v])
            {
                continue; // a stale entry
            }
            x = v;
        }
        else
        {
            x = queue[next++];
        }
        for (uint32_t e = adj.inBegin[x]; e < adj.inBegin[x + 1]; ++e)
        {
            const Adjacency::In& edge = adj.in[e];
            const uint32_t y = edge.source;
            const uint32_t through = dist[x] + EdgeHops(edge.direct, weighted);
            if (dist[y] <= through || (!inside.empty() && !inside[y]) || dead.Vertex(y) ||
                dead.Cable(edge.cable))
            {
                continue;
            }
            dist[y] = through;
            if (dead.Transit(adj, y))
            {
                if (weighted)
                {
                    heap.emplace(through, y);
                }
                else
                {
                    queue.push_back(y);
                }
            }
        }
    }
}

/// Equal-cost next-hop ports of \p y toward \p target given distances.
void
NextHops(const Adjacency& adj,
         uint32_t y,
         uint32_t target,
         const std::vector<uint32_t>& dist,
         std::vector<uint16_t>& ports,
         const Dead& dead,
         bool weighted = false)
{
    ports.clear();
    if (dist[y] == kUnreached || y == target || dead.Vertex(target))
    {
        return;
    }
    for (uint32_t e = adj.outBegin[y]; e < adj.outBegin[y + 1]; ++e)
    {
        const Adjacency::Out& edge = adj.out[e];
        const uint32_t x = edge.target;
        if (dist[x] != kUnreached && dist[x] + EdgeHops(edge.direct, weighted) == dist[y] &&
            (x == target || dead.Transit(adj, x)) && !dead.Vertex(x) && !dead.Cable(edge.cable))
        {
            ports.push_back(edge.port);
        }
    }
}

/// Ports are numbered in 16 bits in the tables: every vertex must fit.
void
RequirePortsFit(const FabricTopology& topo)
{
    const uint32_t nv = topo.GetNVertices();
    for (uint32_t v = 0; v < nv; ++v)
    {
        FabricRequire(topo.Node(v).ports <= 65535,
                      "ports of a vertex",
                      topo.Node(v).ports,
                      "at most 65535");
    }
}

/// The failed elements of \p faults as flags (after checking each exists);
/// nothing at all when nothing failed, so the healthy case pays nothing.
Dead
DeadElements(const FabricTopology& topo, const FaultState& faults)
{
    Dead dead;
    if (faults.Empty())
    {
        return dead;
    }
    const uint32_t nv = topo.GetNVertices();
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
    return dead;
}

/// The vertices (GPUs and NVSwitch planes) of each HB domain, by domain,
/// in vertex order.
std::vector<std::vector<uint32_t>>
DomainMembers(const FabricTopology& topo)
{
    std::vector<std::vector<uint32_t>> members;
    const uint32_t nv = topo.GetNVertices();
    for (uint32_t v = 0; v < nv; ++v)
    {
        const TopoNode& n = topo.Node(v);
        if (n.domain >= 0)
        {
            if (members.size() <= static_cast<uint32_t>(n.domain))
            {
                members.resize(n.domain + 1);
            }
            members[n.domain].push_back(v);
        }
    }
    return members;
}

/// Next-hop ports of each HB domain member toward each GPU of its domain:
/// result[rank][member index].
using NvlinkPorts = std::vector<std::vector<std::vector<uint16_t>>>;

/// For every GPU, the next hops of its domain's members toward it over the
/// domain's own links (NVLink): inside a domain traffic stays on NVLink (a
/// NIC path through a leaf can tie with it in hop count), and the relays
/// need these routes too.
NvlinkPorts
DomainRoutes(const FabricTopology& topo,
             const Adjacency& adj,
             const std::vector<std::vector<uint32_t>>& domainMembers,
             const Dead& dead)
{
    const uint32_t ngpu = topo.GetNGpus();
    NvlinkPorts nvlinkPorts(ngpu);
    std::vector<char> inside(topo.GetNVertices(), 0);
    std::vector<uint32_t> d2;
    for (uint32_t r = 0; r < ngpu; ++r)
    {
        const uint32_t rv = topo.GpuVertex(r);
        const auto& members = domainMembers[topo.Node(rv).domain];
        for (uint32_t m : members)
        {
            inside[m] = 1;
        }
        DistancesTo(adj, rv, inside, d2, dead);
        nvlinkPorts[r].resize(members.size());
        for (size_t i = 0; i < members.size(); ++i)
        {
            NextHops(adj, members[i], rv, d2, nvlinkPorts[r][i], dead);
        }
        for (uint32_t m : members)
        {
            inside[m] = 0;
        }
    }
    return nvlinkPorts;
}

/**
 * The tables, built destination by destination: shortest paths first, then
 * the HB-domain rules that override them (NVLink inside a domain, rail
 * relay, relays around failures).
 */
class RoutingBuild
{
  public:
    /// \param topo the topology \param dead its failed elements
    /// \param faults the faults (for FaultState::hbDomainRelay)
    /// \param keep per vertex: keep its table (empty: all)
    RoutingBuild(const FabricTopology& topo,
                 Dead dead,
                 const FaultState& faults,
                 const std::vector<char>& keep)
        : m_topo(topo),
          m_adj(topo),
          m_dead(std::move(dead)),
          m_keep(keep),
          m_route(topo.GetNVertices()),
          m_k(topo.gpusPerDomain),
          m_domains(m_k > 1),
          m_railRelay(topo.railRelay && m_domains),
          m_relayAround(m_domains && !faults.Empty() && faults.hbDomainRelay),
          m_weighted(MixesArcsAndNvlink(topo))
    {
        m_tables.reserve(topo.GetNVertices());
        for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
        {
            m_tables.emplace_back(Kept(v) ? topo.GetNGpus() : 0);
        }
        if (m_domains)
        {
            m_domainMembers = DomainMembers(topo);
            m_nvlinkPorts = DomainRoutes(topo, m_adj, m_domainMembers, m_dead);
        }
    }

    /// Every route toward GPU \p dst, the steps in order.
    void Destination(uint32_t dst)
    {
        const uint32_t dv = m_topo.GpuVertex(dst);
        ShortestPaths(dv);
        if (m_domains)
        {
            StayOnNvlink(dst, dv);
            if (m_railRelay)
            {
                RelayOverRails(dv);
            }
            if (m_relayAround)
            {
                RelayAroundFailures(dst, dv);
            }
        }
        // every vertex's route to dst is final: the kept tables take theirs
        for (uint32_t v = 0; v < m_route.size(); ++v)
        {
            if (Kept(v))
            {
                m_tables[v].Append(dst, m_route[v]);
            }
        }
    }

    /// \return the tables (once every destination is done)
    std::vector<FabricRoutingTable> Take()
    {
        return std::move(m_tables);
    }

  private:
    /// \return whether vertex \p v's table is kept
    bool Kept(uint32_t v) const
    {
        return m_keep.empty() || m_keep[v] != 0;
    }

    void ShortestPaths(uint32_t dv);
    void StayOnNvlink(uint32_t dst, uint32_t dv);
    void RelayOverRails(uint32_t dv);
    void RelayAroundFailures(uint32_t dst, uint32_t dv);
    bool SomeLiveGpuCannotReach(uint32_t dst) const;
    void EgressRelay(uint32_t dv);
    void IngressRelay(uint32_t dv);

    const FabricTopology& m_topo;
    const Adjacency m_adj;                              // topo's edges, flat
    Dead m_dead;                                        // failed elements
    const std::vector<char>& m_keep;                    // vertices whose tables are kept
    std::vector<std::vector<uint16_t>> m_route;         // by vertex: ports to the current dst
    std::vector<FabricRoutingTable> m_tables;           // by vertex
    const uint32_t m_k;                                 // GPUs per HB domain
    const bool m_domains;                               // K > 1
    const bool m_railRelay;                             // topo.railRelay with domains
    const bool m_relayAround;                           // FaultState::hbDomainRelay applies
    std::vector<std::vector<uint32_t>> m_domainMembers; // see DomainMembers
    NvlinkPorts m_nvlinkPorts;                          // see DomainRoutes
    const std::vector<char> m_everywhere;               // no restriction for DistancesTo
    const bool m_weighted;                              // arcs count kDirectArcHops
    std::vector<uint32_t> m_dist;                       // hops to the current destination
    std::vector<uint32_t> m_dist2;                      // the same with egress relays
    std::vector<uint16_t> m_ports;                      // scratch next hops
};

/// ECMP over the shortest paths (through transit vertices) toward vertex \p dv (a GPU).
void
RoutingBuild::ShortestPaths(uint32_t dv)
{
    DistancesTo(m_adj, dv, m_everywhere, m_dist, m_dead, m_weighted);
    const uint32_t nv = m_topo.GetNVertices();
    for (uint32_t v = 0; v < nv; ++v)
    {
        // the relays around failures read every vertex's route; otherwise
        // only the kept tables take theirs (a rank keeps its own nodes')
        if (Kept(v) || m_relayAround)
        {
            NextHops(m_adj, v, dv, m_dist, m_route[v], m_dead, m_weighted);
        }
        else
        {
            m_route[v].clear();
        }
    }
}

/// The destination's domain-mates reach it over NVLink, not through a leaf.
void
RoutingBuild::StayOnNvlink(uint32_t dst, uint32_t dv)
{
    const auto& members = m_domainMembers[m_topo.Node(dv).domain];
    for (size_t i = 0; i < members.size(); ++i)
    {
        if (members[i] != dv && !m_nvlinkPorts[dst][i].empty())
        {
            m_route[members[i]] = m_nvlinkPorts[dst][i];
        }
    }
}

/// Rail relay: members of another domain the network does not bring to
/// vertex \p dv go over NVLink to their domain's GPU on the destination's rail.
void
RoutingBuild::RelayOverRails(uint32_t dv)
{
    const TopoNode& dn = m_topo.Node(dv);
    for (uint32_t d = 0; d < m_domainMembers.size(); ++d)
    {
        if (static_cast<int32_t>(d) == dn.domain)
        {
            continue;
        }
        const uint32_t relayRank = d * m_k + dn.local;
        const uint32_t rv = m_topo.GpuVertex(relayRank);
        if (m_dist[rv] == kUnreached)
        {
            continue; // the rail itself does not reach dst
        }
        const auto& members = m_domainMembers[d];
        for (size_t i = 0; i < members.size(); ++i)
        {
            const uint32_t m = members[i];
            if (m != rv && m_dist[m] == kUnreached && !m_nvlinkPorts[relayRank][i].empty())
            {
                m_route[m] = m_nvlinkPorts[relayRank][i];
            }
        }
    }
}

/// After failures: a destination some live GPUs can no longer reach gets
/// relays through the HB domains (see FaultState::hbDomainRelay).
void
RoutingBuild::RelayAroundFailures(uint32_t dst, uint32_t dv)
{
    if (m_dead.Vertex(dv) || !SomeLiveGpuCannotReach(dst))
    {
        return;
    }
    EgressRelay(dv);
    IngressRelay(dv);
}

/// \return whether a live GPU other than \p dst has no route to it
bool
RoutingBuild::SomeLiveGpuCannotReach(uint32_t dst) const
{
    const uint32_t ngpu = m_topo.GetNGpus();
    for (uint32_t r = 0; r < ngpu; ++r)
    {
        const uint32_t v = m_topo.GpuVertex(r);
        if (r != dst && !m_dead.Vertex(v) && m_route[v].empty())
        {
            return true;
        }
    }
    return false;
}

/// Egress relay: the destination's domain-mates may carry its traffic, so
/// vertices without a route get the shortest paths through them.
void
RoutingBuild::EgressRelay(uint32_t dv)
{
    const uint32_t nv = m_topo.GetNVertices();
    m_dead.extraTransit.assign(nv, 0);
    for (uint32_t m : m_domainMembers[m_topo.Node(dv).domain])
    {
        if (m_topo.Node(m).kind == TopoNodeKind::Gpu)
        {
            m_dead.extraTransit[m] = 1;
        }
    }
    DistancesTo(m_adj, dv, m_everywhere, m_dist2, m_dead, m_weighted);
    for (uint32_t v = 0; v < nv; ++v)
    {
        if (v != dv && !m_dead.Vertex(v) && m_route[v].empty())
        {
            NextHops(m_adj, v, dv, m_dist2, m_ports, m_dead, m_weighted);
            if (!m_ports.empty())
            {
                m_route[v] = m_ports;
            }
        }
    }
    m_dead.extraTransit.clear();
}

/// Ingress relay: members of other domains without a path go over NVLink to
/// the GPUs of their domain that have one (any of them: the union of ports).
void
RoutingBuild::IngressRelay(uint32_t dv)
{
    for (uint32_t d = 0; d < m_domainMembers.size(); ++d)
    {
        if (static_cast<int32_t>(d) == m_topo.Node(dv).domain)
        {
            continue;
        }
        const auto& members = m_domainMembers[d];
        std::vector<uint32_t> relays;
        for (uint32_t m : members)
        {
            if (m_topo.Node(m).kind == TopoNodeKind::Gpu && !m_dead.Vertex(m) &&
                !m_route[m].empty())
            {
                relays.push_back(m_topo.Node(m).rank);
            }
        }
        if (relays.empty())
        {
            continue;
        }
        for (size_t i = 0; i < members.size(); ++i)
        {
            const uint32_t m = members[i];
            if (m_dead.Vertex(m) || !m_route[m].empty())
            {
                continue;
            }
            std::set<uint16_t> union_;
            for (uint32_t rr : relays)
            {
                union_.insert(m_nvlinkPorts[rr][i].begin(), m_nvlinkPorts[rr][i].end());
            }
            if (!union_.empty())
            {
                m_route[m].assign(union_.begin(), union_.end());
            }
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
    // an upper bound: every table dense (a table of few runs is far smaller,
    // but which ones are is known only once they are built)
    FabricRequireMemory(nv * (ngpu * sizeof(uint16_t) + sizeof(FabricRoutingTable)),
                        "gpus",
                        topo.GetNGpus(),
                        fmt::format("routing tables ({} nodes x {} destinations)",
                                    topo.GetNVertices(),
                                    topo.GetNGpus()));
}

std::vector<FabricRoutingTable>
ComputeRoutingTables(const FabricTopology& topo,
                     const FaultState& faults,
                     const std::vector<char>& keep)
{
    FabricRequire(keep.empty() || keep.size() == topo.GetNVertices(),
                  "routing tables to keep",
                  keep.size(),
                  fmt::format("none (all) or one flag per vertex ({})", topo.GetNVertices()));
    // refused by name before anything large is allocated
    RequireRoutingTablesFit(topo);
    RequirePortsFit(topo);
    RoutingBuild build(topo, DeadElements(topo, faults), faults, keep);
    const uint32_t ngpu = topo.GetNGpus();
    for (uint32_t dst = 0; dst < ngpu; ++dst)
    {
        build.Destination(dst);
    }
    return build.Take();
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
