/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-transport.h"

#include "flow-water-fill-internal.h"

#include "ns3/boolean.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-routing.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowTransport");
NS_OBJECT_ENSURE_REGISTERED(FlowTransport);

namespace
{
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
constexpr uint32_t kInf = std::numeric_limits<uint32_t>::max();
constexpr uint8_t kFieldInf = 255;

/**
 * When the busiest of \p planes equal planes has carried \p k packets dealt
 * round-robin (all full but the last, \p last wire bytes) across both of
 * its hops (GPU to NVSwitch to GPU, store-and-forward), in bytes at the
 * plane rate: a plane's bytes plus the one packet its second hop ends with.
 */
double
BusiestPlaneBytes(uint64_t k, double full, double last, uint64_t planes)
{
    double busiest = 0;
    for (uint64_t p = 0; p < std::min(k, planes); ++p)
    {
        const uint64_t n = (k - p + planes - 1) / planes; // packets p, p + planes, ...
        const bool hasLast = (k - 1) % planes == p;
        const double onPlane =
            hasLast ? static_cast<double>(n - 1) * full + last : static_cast<double>(n) * full;
        // the second hop ends one packet after the first: the short last
        // packet's own length if it is the plane's only one, else a full
        // packet's (the short one waits behind the full one ahead of it)
        busiest = std::max(busiest, onPlane + (hasLast && n == 1 ? last : full));
    }
    return busiest;
}
} // namespace

TypeId
FlowTransport::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FlowTransport")
            .SetParent<Transport>()
            .SetGroupName("GpuFabric")
            .AddConstructor<FlowTransport>()
            .AddAttribute("PacketPayload",
                          "Payload bytes per packet of the packet level (its MTU minus the "
                          "FabricHeader); with PacketOverhead it sets the wire bytes of a flow. "
                          "TransportHelper sets both from its FabricHelper's device Mtu unless "
                          "set on the FlowHelper or as the default.",
                          UintegerValue(4096),
                          MakeUintegerAccessor(&FlowTransport::m_payload),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("PacketOverhead",
                          "Header bytes on the wire per packet (0: pure fluid, no overhead).",
                          UintegerValue(26),
                          MakeUintegerAccessor(&FlowTransport::m_overhead),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("StoreAndForward",
                          "Add the packet level's store-and-forward latency: one packet's "
                          "serialization at every hop, minus one at the slowest hop.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&FlowTransport::m_storeAndForward),
                          MakeBooleanChecker())
            .AddAttribute("StripeNvLink",
                          "A message whose first hops are all NVLink ports (2 or more planes) "
                          "uses the aggregated NVLink links, as the packet level stripes it "
                          "(FabricGpu::SprayPackets); false: one ECMP plane per message.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&FlowTransport::m_stripe),
                          MakeBooleanChecker())
            .AddAttribute("ConnectionFifo",
                          "Send the messages of one (source, destination) pair one after the "
                          "other, as the packet level's connections (queue pairs) do; false: "
                          "every message flows from its send on.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&FlowTransport::m_fifo),
                          MakeBooleanChecker())
            .AddTraceSource("MessageComplete",
                            "The last byte of a message was delivered.",
                            MakeTraceSourceAccessor(&FlowTransport::m_completeTrace),
                            "ns3::FlowTransport::MessageCompleteTracedCallback")
            .AddTraceSource("LinkRate",
                            "The rate of a link (the sum of its flows' rates, bit/s) changed "
                            "(link, rate); fired after the instant's recomputation.",
                            MakeTraceSourceAccessor(&FlowTransport::m_linkRateTrace),
                            "ns3::FlowTransport::LinkRateTracedCallback");
    return tid;
}

FlowTransport::FlowTransport()
    : m_fill(std::make_unique<FlowWaterFill>())
{
}

FlowTransport::~FlowTransport() = default;

void
FlowTransport::DoDispose()
{
    Simulator::Cancel(m_recomputeEvent);
    Simulator::Cancel(m_fluidEvent);
    m_flows.clear();
    m_linkFlows.clear();
    m_connections.clear();
    m_tables.clear();
    m_fields.clear();
    Transport::DoDispose();
}

// ---------------------------------------------------------------------------
// topology

void
FlowTransport::BuildLinks(const FabricTopology& topo)
{
    const auto& g = topo.GetGraph();
    const uint32_t nv = topo.GetNVertices();
    m_nRanks = topo.GetNGpus();
    m_k = topo.gpusPerDomain;
    m_railRelay = topo.railRelay;
    m_gpuVertex.resize(m_nRanks);
    for (uint32_t r = 0; r < m_nRanks; ++r)
    {
        m_gpuVertex[r] = topo.GpuVertex(r);
    }
    m_kind.assign(nv, 0);
    m_domain.assign(nv, -1);
    m_rank.assign(nv, kNone);
    m_local.assign(nv, 0);
    m_outBegin.assign(nv + 1, 0);
    m_portBegin.assign(nv + 1, 0);
    for (uint32_t v = 0; v < nv; ++v)
    {
        const TopoNode& n = topo.Node(v);
        m_kind[v] = static_cast<uint8_t>(n.kind);
        m_domain[v] = n.domain;
        m_local[v] = n.local;
        if (n.kind == TopoNodeKind::Gpu)
        {
            m_rank[v] = n.rank;
        }
        m_outBegin[v + 1] = m_outBegin[v] + static_cast<uint32_t>(boost::out_degree(v, g));
        m_portBegin[v + 1] = m_portBegin[v] + n.ports;
    }
    m_nEdges = m_outBegin[nv];
    m_edgeTarget.resize(m_nEdges);
    m_edgeSource.resize(m_nEdges);
    m_edgePort.resize(m_nEdges);
    m_edgeNvLink.resize(m_nEdges);
    m_edgeDelayNs.resize(m_nEdges);
    m_capacity.resize(m_nEdges);
    m_portEdge.assign(m_portBegin[nv], kNone);
    std::vector<uint32_t> inDegree(nv + 1, 0);
    uint32_t e = 0;
    for (uint32_t v = 0; v < nv; ++v)
    {
        for (auto [it, end] = boost::out_edges(v, g); it != end; ++it, ++e)
        {
            const TopoLink& l = g[*it];
            const auto t = static_cast<uint32_t>(boost::target(*it, g));
            m_edgeTarget[e] = t;
            m_edgeSource[e] = v;
            m_edgePort[e] = static_cast<uint16_t>(l.srcPort);
            m_edgeNvLink[e] = l.kind == TopoLinkKind::NvLink;
            m_edgeDelayNs[e] = l.delayNs;
            m_capacity[e] = static_cast<double>(l.rateBps) / 8.0;
            m_portEdge[m_portBegin[v] + l.srcPort] = e;
            ++inDegree[t + 1];
        }
    }
    m_inBegin.assign(nv + 1, 0);
    for (uint32_t v = 0; v < nv; ++v)
    {
        m_inBegin[v + 1] = m_inBegin[v] + inDegree[v + 1];
    }
    m_inEdges.resize(m_nEdges);
    std::vector<uint32_t> fill(m_inBegin.begin(), m_inBegin.end() - 1);
    for (e = 0; e < m_nEdges; ++e)
    {
        m_inEdges[fill[m_edgeTarget[e]]++] = e;
    }
    // aggregated NVLink links of GPUs with several planes
    m_aggOut.assign(nv, kNone);
    m_aggIn.assign(nv, kNone);
    for (uint32_t v = 0; v < nv; ++v)
    {
        if (m_kind[v] != static_cast<uint8_t>(TopoNodeKind::Gpu))
        {
            continue;
        }
        double out = 0;
        double in = 0;
        uint32_t nOut = 0;
        uint32_t nIn = 0;
        for (uint32_t i = m_outBegin[v]; i < m_outBegin[v + 1]; ++i)
        {
            if (m_edgeNvLink[i])
            {
                out += m_capacity[i];
                ++nOut;
            }
        }
        for (uint32_t i = m_inBegin[v]; i < m_inBegin[v + 1]; ++i)
        {
            if (m_edgeNvLink[m_inEdges[i]])
            {
                in += m_capacity[m_inEdges[i]];
                ++nIn;
            }
        }
        if (nOut >= 2)
        {
            m_aggOut[v] = m_capacity.size();
            m_capacity.push_back(out);
        }
        if (nIn >= 2)
        {
            m_aggIn[v] = m_capacity.size();
            m_capacity.push_back(in);
        }
    }
    const size_t nl = m_capacity.size();
    m_linkFlows.assign(nl, {});
    m_stripedFlows.assign(nl, 0);
    m_stripedSince.assign(nl, 0);
    m_stripedPackets.assign(nl, 0);
    m_stripedWireBytes.assign(nl, 0);
    m_linkMark.assign(nl, 0);
    m_secondsPerStep = TimeStep(1).GetSeconds();
}

void
FlowTransport::Setup(const FabricTopology& topo)
{
    BuildLinks(topo);
    const uint32_t nv = topo.GetNVertices();
    // Routes on demand need: no GPU transit, single-tier NVSwitch planes that
    // join every GPU of their domain, GPUs attached only to NVSwitches of their
    // domain and to network switches, ranks numbered domain * K + local.
    bool ok = !topo.gpuTransit;
    const auto gpu = static_cast<uint8_t>(TopoNodeKind::Gpu);
    const auto nvs = static_cast<uint8_t>(TopoNodeKind::NvSwitch);
    for (uint32_t v = 0; v < nv && ok; ++v)
    {
        const uint32_t outs = m_outBegin[v + 1] - m_outBegin[v];
        for (uint32_t e = m_outBegin[v]; e < m_outBegin[v + 1] && ok; ++e)
        {
            const uint32_t t = m_edgeTarget[e];
            if (m_kind[v] == nvs)
            {
                ok = m_kind[t] == gpu && m_domain[t] == m_domain[v];
            }
            else if (m_kind[v] == gpu)
            {
                ok = m_kind[t] != gpu && (m_kind[t] != nvs || m_domain[t] == m_domain[v]);
            }
        }
        if (m_kind[v] == nvs)
        {
            ok = ok && outs == m_k && m_inBegin[v + 1] - m_inBegin[v] == m_k;
        }
        if (m_kind[v] == gpu && m_k > 1)
        {
            ok = ok && m_domain[v] >= 0 &&
                 m_rank[v] == static_cast<uint32_t>(m_domain[v]) * m_k + m_local[v];
        }
    }
    if (!ok)
    {
        NS_LOG_INFO("topology " << topo.GetName() << ": full routing tables");
        m_tables = ComputeRoutingTables(topo);
        m_useTables = true;
        return;
    }
    m_useTables = false;
    m_switchIndex.assign(nv, kNone);
    uint32_t ns = 0;
    for (uint32_t v = 0; v < nv; ++v)
    {
        if (m_kind[v] == static_cast<uint8_t>(TopoNodeKind::Switch))
        {
            m_switchIndex[v] = ns++;
        }
    }
    m_nSwitches = ns;
    m_fieldOfRank.assign(m_nRanks, -1);
}

void
FlowTransport::Setup(const FabricTopology& topo, std::vector<FabricRoutingTable> tables)
{
    FabricRequire(tables.size() == topo.GetNVertices(),
                  "routing tables",
                  tables.size(),
                  fmt::format("one per vertex ({})", topo.GetNVertices()));
    BuildLinks(topo);
    m_tables = std::move(tables);
    m_useTables = true;
}

bool
FlowTransport::UsesRoutingTables() const
{
    return m_useTables;
}

uint32_t
FlowTransport::GetNRanks() const
{
    return m_nRanks;
}

Transport::Totals
FlowTransport::GetTotals() const
{
    return m_totals;
}

FlowTransport::Stats
FlowTransport::GetStats() const
{
    return m_stats;
}

uint32_t
FlowTransport::GetNLinks() const
{
    return m_capacity.size();
}

std::string
FlowTransport::GetLinkName(uint32_t link) const
{
    if (link < m_nEdges)
    {
        return fmt::format("v{}->v{}", m_edgeSource[link], m_edgeTarget[link]);
    }
    for (uint32_t v = 0; v < m_aggOut.size(); ++v)
    {
        if (m_aggOut[v] == link)
        {
            return fmt::format("nvlink-out(gpu{})", m_rank[v]);
        }
        if (m_aggIn[v] == link)
        {
            return fmt::format("nvlink-in(gpu{})", m_rank[v]);
        }
    }
    return "unknown";
}

TopoLinkKind
FlowTransport::GetLinkKind(uint32_t link) const
{
    if (link >= m_nEdges || m_edgeNvLink[link])
    {
        return TopoLinkKind::NvLink; // beyond the edges: a GPU's aggregated NVLink
    }
    const bool gpuA = m_kind[m_edgeSource[link]] == static_cast<uint8_t>(TopoNodeKind::Gpu);
    const bool gpuB = m_kind[m_edgeTarget[link]] == static_cast<uint8_t>(TopoNodeKind::Gpu);
    if (gpuA && gpuB)
    {
        return TopoLinkKind::Direct;
    }
    return gpuA || gpuB ? TopoLinkKind::Nic : TopoLinkKind::SwitchToSwitch;
}

double
FlowTransport::GetLinkCapacityBps(uint32_t link) const
{
    return link < m_capacity.size() ? m_capacity[link] * 8.0 : 0.0;
}

double
FlowTransport::GetLinkRateBps(uint32_t link) const
{
    double rate = 0;
    if (link < m_linkFlows.size())
    {
        for (uint32_t id : m_linkFlows[link])
        {
            rate += m_flows[id].rate;
        }
    }
    return rate * 8.0;
}

double
FlowTransport::GetRateBps(uint64_t id) const
{
    if (id >= m_flows.size() || !m_flows[id].onLinks)
    {
        return 0;
    }
    return m_flows[id].rate * 8.0;
}

std::vector<uint32_t>
FlowTransport::GetFlowLinks(uint64_t id) const
{
    if (id >= m_flows.size())
    {
        return {};
    }
    return m_flows[id].links;
}

// ---------------------------------------------------------------------------
// routes

uint32_t
FlowTransport::EdgeTo(uint32_t from, uint32_t to) const
{
    for (uint32_t i = m_inBegin[to]; i < m_inBegin[to + 1]; ++i)
    {
        if (m_edgeSource[m_inEdges[i]] == from)
        {
            return m_inEdges[i];
        }
    }
    return kNone;
}

const std::vector<uint8_t>&
FlowTransport::Field(uint32_t dstRank)
{
    int32_t& f = m_fieldOfRank[dstRank];
    if (f >= 0)
    {
        return m_fields[f];
    }
    const uint32_t dv = m_gpuVertex[dstRank];
    std::vector<uint32_t> key;
    for (uint32_t i = m_inBegin[dv]; i < m_inBegin[dv + 1]; ++i)
    {
        const uint32_t s = m_edgeSource[m_inEdges[i]];
        if (m_switchIndex[s] != kNone)
        {
            key.push_back(s);
        }
    }
    std::sort(key.begin(), key.end());
    key.erase(std::unique(key.begin(), key.end()), key.end());
    auto [it, added] = m_fieldKeys.try_emplace(key, static_cast<int32_t>(m_fields.size()));
    f = it->second;
    if (!added)
    {
        return m_fields[f];
    }
    // hop distances of every switch to dst through switches only (GPUs do
    // not relay, NVSwitches only reach GPUs of their domain)
    ++m_stats.distanceFields;
    std::vector<uint8_t> dist(m_nSwitches, kFieldInf);
    m_queue.clear();
    for (uint32_t s : key)
    {
        dist[m_switchIndex[s]] = 1;
        m_queue.push_back(s);
    }
    for (size_t q = 0; q < m_queue.size(); ++q)
    {
        const uint32_t x = m_queue[q];
        const uint8_t dx = dist[m_switchIndex[x]];
        for (uint32_t i = m_inBegin[x]; i < m_inBegin[x + 1]; ++i)
        {
            const uint32_t y = m_edgeSource[m_inEdges[i]];
            const uint32_t yi = m_switchIndex[y];
            if (yi != kNone && dist[yi] == kFieldInf)
            {
                FabricRequire(dx < kFieldInf - 1, "network diameter", dx, "below 254 hops");
                dist[yi] = dx + 1;
                m_queue.push_back(y);
            }
        }
    }
    m_fields.push_back(std::move(dist));
    return m_fields[f];
}

uint32_t
FlowTransport::Dist(uint32_t v, uint32_t dstRank)
{
    const uint32_t dv = m_gpuVertex[dstRank];
    if (v == dv)
    {
        return 0;
    }
    switch (static_cast<TopoNodeKind>(m_kind[v]))
    {
    case TopoNodeKind::NvSwitch:
        return m_domain[v] == m_domain[dv] && m_domain[v] >= 0 ? 1 : kInf;
    case TopoNodeKind::Switch: {
        const uint8_t d = Field(dstRank)[m_switchIndex[v]];
        return d == kFieldInf ? kInf : d;
    }
    case TopoNodeKind::Gpu:
    default: {
        uint32_t best = kInf;
        for (uint32_t e = m_outBegin[v]; e < m_outBegin[v + 1]; ++e)
        {
            const uint32_t x = m_edgeTarget[e];
            if (x == dv)
            {
                return 1;
            }
            if (m_kind[x] != static_cast<uint8_t>(TopoNodeKind::Gpu))
            {
                const uint32_t dx = Dist(x, dstRank);
                if (dx != kInf)
                {
                    best = std::min(best, dx + 1);
                }
            }
        }
        return best;
    }
    }
}

void
FlowTransport::DomainNextHops(uint32_t v, uint32_t target, std::vector<uint32_t>& edges) const
{
    // single-tier planes (checked in Setup): a GPU reaches any member through
    // every plane, a plane reaches it directly
    edges.clear();
    if (m_kind[v] == static_cast<uint8_t>(TopoNodeKind::NvSwitch))
    {
        const uint32_t e = EdgeTo(v, target);
        if (e != kNone)
        {
            edges.push_back(e);
        }
        return;
    }
    for (uint32_t e = m_outBegin[v]; e < m_outBegin[v + 1]; ++e)
    {
        if (m_kind[m_edgeTarget[e]] == static_cast<uint8_t>(TopoNodeKind::NvSwitch))
        {
            edges.push_back(e);
        }
    }
}

void
FlowTransport::OracleNextHops(uint32_t v, uint32_t dstRank, std::vector<uint32_t>& edges)
{
    edges.clear();
    const uint32_t dv = m_gpuVertex[dstRank];
    if (v == dv)
    {
        return;
    }
    if (m_k > 1 && m_domain[v] >= 0)
    {
        if (m_domain[v] == m_domain[dv])
        {
            DomainNextHops(v, dv, edges);
            if (!edges.empty())
            {
                return;
            }
        }
        else if (m_railRelay)
        {
            const uint32_t relayRank = static_cast<uint32_t>(m_domain[v]) * m_k + m_local[dv];
            const uint32_t rv = m_gpuVertex[relayRank];
            if (v != rv && Dist(rv, dstRank) != kInf && Dist(v, dstRank) == kInf)
            {
                DomainNextHops(v, rv, edges);
                if (!edges.empty())
                {
                    return;
                }
            }
        }
    }
    const uint32_t d = Dist(v, dstRank);
    if (d == kInf)
    {
        return;
    }
    for (uint32_t e = m_outBegin[v]; e < m_outBegin[v + 1]; ++e)
    {
        const uint32_t x = m_edgeTarget[e];
        if (x != dv && m_kind[x] == static_cast<uint8_t>(TopoNodeKind::Gpu))
        {
            continue;
        }
        const uint32_t dx = Dist(x, dstRank);
        if (dx != kInf && dx + 1 == d)
        {
            edges.push_back(e);
        }
    }
}

void
FlowTransport::TableNextHops(uint32_t v, uint32_t dstRank, std::vector<uint32_t>& edges) const
{
    edges.clear();
    const FabricRoutingTable& t = m_tables[v];
    const uint32_t n = t.GetNPorts(dstRank);
    for (uint32_t i = 0; i < n; ++i)
    {
        const uint16_t port = t.GetPort(dstRank, i);
        const uint32_t e = m_portEdge[m_portBegin[v] + port];
        if (e != kNone)
        {
            edges.push_back(e);
        }
    }
}

void
FlowTransport::NextHops(uint32_t v, uint32_t dstRank, std::vector<uint32_t>& edges)
{
    if (m_useTables)
    {
        TableNextHops(v, dstRank, edges);
    }
    else
    {
        OracleNextHops(v, dstRank, edges);
    }
}

void
FlowTransport::Route(uint32_t id, uint16_t flowLabel)
{
    Flow& f = m_flows[id];
    const uint32_t src = f.src;
    const uint32_t dst = f.dst;
    const uint32_t dv = m_gpuVertex[dst];
    uint32_t v = m_gpuVertex[src];
    f.links.clear();
    f.planes = 0;
    f.payload = m_payload;
    // hops of the representative path: (edge) for latency
    m_hops2.clear();
    bool first = true;
    size_t steps = 0;
    const auto noRoute = [&]() {
        return FabricConfigError("destination rank",
                                 std::to_string(dst),
                                 fmt::format("a rank reachable from rank {} (no route)", src));
    };
    while (v != dv)
    {
        if (++steps > m_kind.size())
        {
            throw noRoute();
        }
        NextHops(v, dst, m_hops);
        const auto n = static_cast<uint32_t>(m_hops.size());
        if (n == 0)
        {
            throw noRoute();
        }
        if (first && m_stripe && n >= 2 && m_aggOut[v] != kNone &&
            std::all_of(m_hops.begin(), m_hops.end(), [this](uint32_t e) {
                return m_edgeNvLink[e] != 0;
            }))
        {
            // striped over the planes: aggregated links up to the GPU they lead to
            const uint32_t e0 = m_hops[0];
            const uint32_t sw = m_edgeTarget[e0];
            NextHops(sw, dst, m_hops);
            if (m_hops.empty())
            {
                throw noRoute();
            }
            const uint32_t pick =
                m_hops.size() == 1
                    ? 0
                    : FabricEcmpHash(src, dst, flowLabel, VertexSalt(sw)) % m_hops.size();
            const uint32_t e1 = m_hops[pick];
            const uint32_t g = m_edgeTarget[e1];
            if (m_kind[g] == static_cast<uint8_t>(TopoNodeKind::Gpu) && m_aggIn[g] != kNone)
            {
                if (g == dv)
                {
                    // cut as the packet level cuts a message striped to its
                    // destination (one relayed out of the domain is not)
                    const auto planes = static_cast<uint32_t>(
                        std::llround(m_capacity[m_aggOut[v]] / m_capacity[e0]));
                    f.payload = PacketPayload(f.bytes, m_payload, planes, GetStripeMinPayload());
                    if (m_storeAndForward)
                    {
                        f.planeRate = m_capacity[e0];
                        f.planes = planes;
                    }
                }
                f.links.push_back(m_aggOut[v]);
                f.links.push_back(m_aggIn[g]);
                m_hops2.push_back(e0);
                m_hops2.push_back(e1);
                v = g;
                first = false;
                continue;
            }
            NextHops(v, dst, m_hops); // not a plane structure: plain ECMP
        }
        first = false;
        const uint32_t i = n == 1 ? 0 : FabricEcmpHash(src, dst, flowLabel, VertexSalt(v)) % n;
        const uint32_t e = m_hops[i];
        const uint32_t t = m_edgeTarget[e];
        f.links.push_back(e);
        if (m_edgeNvLink[e])
        {
            if (m_aggOut[v] != kNone)
            {
                f.links.push_back(m_aggOut[v]);
            }
            if (m_aggIn[t] != kNone)
            {
                f.links.push_back(m_aggIn[t]);
            }
        }
        m_hops2.push_back(e);
        v = t;
    }
    // latency: propagation, plus the store-and-forward of one packet
    double seconds = 0;
    double slowest = std::numeric_limits<double>::max();
    const double pkt = static_cast<double>(std::min<uint64_t>(f.bytes, f.payload) + m_overhead);
    for (uint32_t e : m_hops2)
    {
        seconds += m_edgeDelayNs[e] * 1e-9;
        if (m_storeAndForward)
        {
            seconds += pkt / m_capacity[e];
            slowest = std::min(slowest, m_capacity[e]);
        }
    }
    if (m_storeAndForward && !m_hops2.empty())
    {
        seconds -= pkt / slowest;
    }
    f.latency = std::llround(seconds / m_secondsPerStep);
}

// ---------------------------------------------------------------------------
// messages

int64_t
FlowTransport::NowSteps() const
{
    return Simulator::Now().GetTimeStep();
}

uint64_t
FlowTransport::DoSend(uint32_t srcRank, uint32_t dstRank, uint64_t bytes, Delivery delivery)
{
    RequireRanks(srcRank, dstRank);
    // ids exactly as PacketTransport allocates them, so that flow labels and
    // hence ECMP paths agree
    const uint32_t id = m_ids.Take(m_flows.size());
    if (id == m_flows.size())
    {
        m_flows.emplace_back();
        m_newRate.push_back(0);
    }
    Flow& f = m_flows[id];
    f.src = srcRank;
    f.dst = dstRank;
    f.bytes = bytes;
    f.rate = 0;
    f.remaining = 0;
    f.onLinks = false;
    f.start = Simulator::Now();
    f.delivery = std::move(delivery);
    f.links.clear();
    f.pos.clear();
    f.next = kNoFlow;
    f.carry = 0;
    f.notBefore = 0;
    ++m_totals.messagesSent;
    m_totals.bytesSent += bytes;
    // every message counts for FlowLabels=source-sequence, as at packet level
    const auto flowLabel = NewFlowLabel(srcRank, dstRank, id);
    if (bytes == 0 || srcRank == dstRank)
    {
        Simulator::ScheduleNow(&FlowTransport::Complete, this, id);
        return id;
    }
    try
    {
        Route(id, flowLabel);
    }
    catch (const FabricConfigError&)
    {
        f.delivery = Delivery();
        m_ids.Release(id);
        --m_totals.messagesSent;
        m_totals.bytesSent -= bytes;
        throw;
    }
    f.remaining = static_cast<double>(WireBytes(f));
    if (m_fifo)
    {
        Connection& c = m_connections[ConnectionKey(srcRank, dstRank)];
        if (c.head != kNoFlow)
        {
            // behind the connection's earlier messages
            m_flows[c.tail].next = id;
            c.tail = id;
            ++m_stats.queuedMessages;
            return id;
        }
        if (c.lastId != kNoFlow)
        {
            // its predecessor has left the links but is not delivered yet
            InOrder(m_flows[c.lastId], c.lastDelivery, f);
            c.lastId = kNoFlow;
        }
        c.head = id;
        c.tail = id;
    }
    StartFlow(id);
    return id;
}

void
FlowTransport::InOrder(const Flow& before, int64_t deliveredAt, Flow& after)
{
    // On one path (not striped) packets cannot overtake each other: a
    // message is delivered no earlier than the one before it, although a
    // smaller first packet has a shorter store-and-forward latency. Striped
    // messages can (a small one's packets on planes the other left free), as
    // at the packet level.
    if (before.planes == 0 && after.planes == 0 && before.links == after.links)
    {
        after.notBefore = deliveredAt;
    }
}

void
FlowTransport::StartFlow(uint32_t id)
{
    Flow& f = m_flows[id];
    f.lastUpdate = NowSteps();
    f.onLinks = true;
    if (f.planes > 0)
    {
        // a period of striped traffic on the sender's planes starts or goes on
        const uint32_t out = f.links[0];
        if (m_stripedFlows[out]++ == 0)
        {
            m_stripedSince[out] = f.lastUpdate;
            m_stripedPackets[out] = 0;
            m_stripedWireBytes[out] = 0;
        }
        m_stripedPackets[out] += Packets(f);
        m_stripedWireBytes[out] += WireBytes(f);
    }
    f.pos.resize(f.links.size());
    for (size_t i = 0; i < f.links.size(); ++i)
    {
        const uint32_t l = f.links[i];
        f.pos[i] = m_linkFlows[l].size();
        m_linkFlows[l].push_back(id);
        MarkDirty(l);
    }
    ++m_stats.flows;
    ++m_stats.activeFlows;
    m_stats.peakActiveFlows = std::max(m_stats.peakActiveFlows, m_stats.activeFlows);
}

void
FlowTransport::MarkDirty(uint32_t link)
{
    m_dirty.push_back(link);
    if (!m_recomputeEvent.IsRunning())
    {
        m_recomputeEvent = Simulator::ScheduleNow(&FlowTransport::Recompute, this);
    }
}

void
FlowTransport::RemoveFromLinks(uint32_t id)
{
    Flow& f = m_flows[id];
    for (size_t i = 0; i < f.links.size(); ++i)
    {
        const uint32_t l = f.links[i];
        auto& list = m_linkFlows[l];
        const uint32_t p = f.pos[i];
        const uint32_t last = list.back();
        list[p] = last;
        list.pop_back();
        if (last != id)
        {
            Flow& o = m_flows[last];
            for (size_t j = 0; j < o.links.size(); ++j)
            {
                if (o.links[j] == l)
                {
                    o.pos[j] = p;
                    break;
                }
            }
        }
        m_dirty.push_back(l);
    }
    f.onLinks = false;
    --m_stats.activeFlows;
}

void
FlowTransport::Recompute()
{
    Simulator::Cancel(m_recomputeEvent);
    PollProgress(16);
    if (m_dirty.empty())
    {
        ScheduleNextFluidEnd();
        return;
    }
    ++m_epoch;
    const uint32_t epoch = m_epoch;
    // one connected component of flows and links at a time, from each dirty
    // link not yet visited; the flows of a step that start together on
    // disjoint links are so many small components, water-filled separately
    m_compLinks.clear();
    m_compFlows.clear();
    for (uint32_t l0 : m_dirty)
    {
        if (m_linkMark[l0] == epoch)
        {
            continue;
        }
        const size_t linkBegin = m_compLinks.size();
        const size_t flowBegin = m_compFlows.size();
        m_linkMark[l0] = epoch;
        m_compLinks.push_back(l0);
        for (size_t q = linkBegin; q < m_compLinks.size(); ++q)
        {
            const uint32_t l = m_compLinks[q];
            for (uint32_t id : m_linkFlows[l])
            {
                Flow& f = m_flows[id];
                if (f.mark == epoch)
                {
                    continue;
                }
                f.mark = epoch;
                m_compFlows.push_back(id);
                for (uint32_t l2 : f.links)
                {
                    if (m_linkMark[l2] != epoch)
                    {
                        m_linkMark[l2] = epoch;
                        m_compLinks.push_back(l2);
                    }
                }
            }
        }
        if (m_compFlows.size() > flowBegin)
        {
            WaterFill(linkBegin, flowBegin);
        }
    }
    if (!m_linkRateTrace.IsEmpty())
    {
        // every link whose flows changed is in a component visited above
        m_linkRateSent.resize(m_capacity.size(), 0.0);
        for (uint32_t l : m_compLinks)
        {
            const double bps = GetLinkRateBps(l);
            if (bps != m_linkRateSent[l])
            {
                m_linkRateSent[l] = bps;
                m_linkRateTrace(l, bps);
            }
        }
    }
    m_dirty.clear();
    ScheduleNextFluidEnd();
}

void
FlowTransport::WaterFill(size_t linkBegin, size_t flowBegin)
{
    const int64_t now = NowSteps();
    const size_t nFlows = m_compFlows.size() - flowBegin;
    ++m_stats.recomputations;
    m_stats.flowsRecomputed += nFlows;
    m_stats.linksRecomputed += m_compLinks.size() - linkBegin;
    // bring the bytes left up to now at the old rates
    for (size_t i = flowBegin; i < m_compFlows.size(); ++i)
    {
        Flow& f = m_flows[m_compFlows[i]];
        if (f.rate > 0 && now > f.lastUpdate)
        {
            f.remaining -= f.rate * static_cast<double>(now - f.lastUpdate) * m_secondsPerStep;
            f.remaining = std::max(0.0, f.remaining);
        }
        f.lastUpdate = now;
    }
    if (nFlows == 1)
    {
        // one flow: its slowest link
        const uint32_t id = m_compFlows[flowBegin];
        double r = std::numeric_limits<double>::max();
        for (uint32_t l : m_flows[id].links)
        {
            r = std::min(r, m_capacity[l]);
        }
        m_newRate[id] = r;
    }
    else
    {
        // progressive filling: saturate the link of smallest fair share first
        m_fill->Fill(
            m_compLinks.data() + linkBegin,
            m_compLinks.size() - linkBegin,
            m_capacity,
            [this](uint32_t l) -> const std::vector<uint32_t>& { return m_linkFlows[l]; },
            [this](uint32_t id) -> const std::vector<uint32_t>& { return m_flows[id].links; },
            m_newRate);
    }
    // new completion times where rates changed
    for (size_t i = flowBegin; i < m_compFlows.size(); ++i)
    {
        const uint32_t id = m_compFlows[i];
        Flow& f = m_flows[id];
        const double r = m_newRate[id];
        if (r == f.rate)
        {
            continue;
        }
        f.rate = r;
        ++f.version;
        int64_t end = now;
        if (f.remaining > 1e-3)
        {
            end += static_cast<int64_t>(std::ceil(f.remaining / (r * m_secondsPerStep)));
        }
        m_heap.push({end, id, f.version});
    }
}

void
FlowTransport::ScheduleNextFluidEnd()
{
    while (!m_heap.empty())
    {
        const Completion& c = m_heap.top();
        const Flow& f = m_flows[c.id];
        if (f.onLinks && f.version == c.version)
        {
            break;
        }
        m_heap.pop();
    }
    // drop stale entries in bulk when they dominate
    if (m_heap.size() > 65536 && m_heap.size() > 4 * m_stats.activeFlows)
    {
        std::vector<Completion> keep;
        keep.reserve(m_stats.activeFlows);
        while (!m_heap.empty())
        {
            const Completion c = m_heap.top();
            m_heap.pop();
            if (m_flows[c.id].onLinks && m_flows[c.id].version == c.version)
            {
                keep.push_back(c);
            }
        }
        m_heap = decltype(m_heap)(std::greater<Completion>(), std::move(keep));
    }
    if (m_heap.empty())
    {
        Simulator::Cancel(m_fluidEvent);
        m_fluidEventTime = -1;
        return;
    }
    const int64_t t = m_heap.top().time;
    if (m_fluidEvent.IsRunning() && m_fluidEventTime <= t)
    {
        // an event at or before the earliest end is pending: it will find
        // nothing due, or the due flows, and schedule the next one
        return;
    }
    Simulator::Cancel(m_fluidEvent);
    const int64_t now = NowSteps();
    m_fluidEventTime = std::max(t, now);
    m_fluidEvent =
        Simulator::Schedule(TimeStep(m_fluidEventTime - now), &FlowTransport::FluidEvent, this);
}

void
FlowTransport::FluidEvent()
{
    m_fluidEventTime = -1;
    PollProgress(16);
    const int64_t now = NowSteps();
    while (!m_heap.empty() && m_heap.top().time <= now)
    {
        const Completion c = m_heap.top();
        m_heap.pop();
        Flow& f = m_flows[c.id];
        if (!f.onLinks || f.version != c.version)
        {
            continue;
        }
        // the end was rounded up to a time step: the bytes the rate would
        // have moved in the rest of it (and credit this message could not
        // use) go to the connection's next message, so that back-to-back
        // messages do not lose up to a step each
        const double overshoot =
            std::max(0.0,
                     f.rate * static_cast<double>(now - f.lastUpdate) * m_secondsPerStep -
                         f.remaining) +
            f.carry;
        f.remaining = 0;
        f.carry = 0;
        f.lastUpdate = now;
        RemoveFromLinks(c.id);
        const int64_t deliverAt = std::max(now + f.latency + StripeImbalance(f, now), f.notBefore);
        Simulator::Schedule(TimeStep(deliverAt - now), &FlowTransport::Complete, this, c.id);
        if (m_fifo)
        {
            // the connection's next message follows its last byte
            const auto it = m_connections.find(ConnectionKey(f.src, f.dst));
            const uint32_t next = f.next;
            if (next == kNoFlow)
            {
                // kept until this message is delivered, for the order of a
                // message sent meanwhile
                it->second.head = kNoFlow;
                it->second.tail = kNoFlow;
                it->second.lastId = c.id;
                it->second.lastDelivery = deliverAt;
            }
            else
            {
                it->second.head = next;
                Flow& n = m_flows[next];
                // only a message sent before this step existed in its rest
                if (n.start.GetTimeStep() < now)
                {
                    const double take = std::min(n.remaining, overshoot);
                    n.remaining -= take;
                    n.carry = overshoot - take;
                }
                InOrder(f, deliverAt, n);
                StartFlow(next);
            }
        }
    }
    Recompute();
}

int64_t
FlowTransport::StripeImbalance(const Flow& f, int64_t now)
{
    if (f.planes == 0)
    {
        return 0;
    }
    const uint32_t out = f.links[0];
    if (--m_stripedFlows[out] > 0)
    {
        return 0; // not the last of its period: others follow on the planes
    }
    // packets are not split further: the busiest plane ends after ceil(K / P)
    // packet times, later than the fluid's K / P when K is not a multiple
    const uint64_t k = Packets(f);
    const auto full = static_cast<double>(f.payload + m_overhead);
    const auto last = static_cast<double>(f.bytes - (k - 1) * f.payload + m_overhead);
    const auto first = static_cast<double>(std::min<uint64_t>(f.bytes, f.payload) + m_overhead);
    // its packets alone (every message has some): exactly; several
    // messages': K packets of their mean size
    const uint64_t kAll = m_stripedPackets[out];
    const double mean = static_cast<double>(m_stripedWireBytes[out]) / static_cast<double>(kAll);
    const double busiest = kAll == k
                               ? BusiestPlaneBytes(k, full, last, f.planes)
                               : static_cast<double>((kAll + f.planes - 1) / f.planes + 1) * mean;
    // the planes' end, against the fluid end plus the first packet's second
    // hop that the latency already counts
    const double late = static_cast<double>(m_stripedSince[out]) * m_secondsPerStep +
                        (busiest - first) / f.planeRate -
                        static_cast<double>(now) * m_secondsPerStep;
    return late > 0 ? std::llround(late / m_secondsPerStep) : 0;
}

void
FlowTransport::Complete(uint32_t id)
{
    Flow& f = m_flows[id];
    if (m_fifo)
    {
        const auto it = m_connections.find(ConnectionKey(f.src, f.dst));
        if (it != m_connections.end() && it->second.lastId == id)
        {
            m_connections.erase(it); // idle, and nothing left to keep in order
        }
    }
    ++m_totals.messagesDelivered;
    m_totals.bytesDelivered += f.bytes;
    m_completeTrace(f.src, f.dst, f.bytes, f.start);
    Delivery delivery = std::move(f.delivery);
    f.delivery = Delivery();
    m_ids.Release(id);
    delivery.Notify();
}

} // namespace ns3
