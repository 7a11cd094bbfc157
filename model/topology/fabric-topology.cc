/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-topology.h"

#include "ns3/fabric-error.h"

namespace ns3
{

std::string
ToString(TopoLinkKind kind)
{
    switch (kind)
    {
    case TopoLinkKind::NvLink:
        return "nvlink";
    case TopoLinkKind::Nic:
        return "nic";
    case TopoLinkKind::SwitchToSwitch:
        return "switch";
    case TopoLinkKind::Direct:
        return "direct";
    }
    return "unknown";
}

FabricTopology::FabricTopology(std::string name)
    : m_name(std::move(name))
{
}

std::string
FabricTopology::MaxGpusAllowed()
{
    return fmt::format("at most {} (a topology is built in memory, about 1.5 KB per GPU)",
                       kMaxGpus);
}

uint32_t
FabricTopology::AddGpu(int32_t domain, uint32_t local)
{
    FabricRequire(m_gpuVertex.size() < kMaxGpus, "gpus", m_gpuVertex.size() + 1, MaxGpusAllowed());
    TopoNode n;
    n.kind = TopoNodeKind::Gpu;
    n.role = "gpu";
    n.rank = m_gpuVertex.size();
    n.domain = domain;
    n.local = local;
    n.chassis = m_nextChassis++;
    const auto v = static_cast<uint32_t>(boost::add_vertex(n, m_graph));
    m_gpuVertex.push_back(v);
    return v;
}

uint32_t
FabricTopology::AddSwitch(TopoNodeKind kind,
                          const std::string& role,
                          uint32_t tier,
                          int64_t chassis)
{
    TopoNode n;
    n.kind = kind;
    n.role = role;
    n.tier = tier;
    n.chassis = chassis < 0 ? m_nextChassis++ : static_cast<uint32_t>(chassis);
    return static_cast<uint32_t>(boost::add_vertex(n, m_graph));
}

uint32_t
FabricTopology::AddCable(uint32_t a,
                         uint32_t b,
                         uint64_t rateBps,
                         int64_t delayNs,
                         TopoLinkKind kind)
{
    const uint32_t id = AddArc(a, b, rateBps, delayNs, kind);
    TopoCable& c = m_cables[id];
    c.bidirectional = true;
    TopoLink back;
    back.kind = kind;
    back.rateBps = rateBps;
    back.delayNs = delayNs;
    back.srcPort = c.bPort;
    back.dstPort = c.aPort;
    back.cable = id;
    boost::add_edge(b, a, back, m_graph);
    return id;
}

uint32_t
FabricTopology::AddArc(uint32_t a, uint32_t b, uint64_t rateBps, int64_t delayNs, TopoLinkKind kind)
{
    FabricRequire(a < GetNVertices() && b < GetNVertices() && a != b,
                  "link endpoints",
                  fmt::format("{} -> {}", a, b),
                  fmt::format("two distinct vertices below {}", GetNVertices()));
    FabricRequire(rateBps > 0, "link rate (bps)", rateBps, "a positive rate");
    FabricRequire(delayNs >= 0, "link delay (ns)", delayNs, "a non-negative delay");
    TopoCable c;
    c.a = a;
    c.b = b;
    c.aPort = m_graph[a].ports++;
    c.bPort = m_graph[b].ports++;
    c.rateBps = rateBps;
    c.delayNs = delayNs;
    c.kind = kind;
    c.bidirectional = false;
    const auto id = static_cast<uint32_t>(m_cables.size());
    m_cables.push_back(c);
    TopoLink fwd;
    fwd.kind = kind;
    fwd.rateBps = rateBps;
    fwd.delayNs = delayNs;
    fwd.srcPort = c.aPort;
    fwd.dstPort = c.bPort;
    fwd.cable = id;
    boost::add_edge(a, b, fwd, m_graph);
    return id;
}

void
FabricTopology::SetDomain(uint32_t v, int32_t domain, uint32_t plane)
{
    FabricRequire(v < GetNVertices(), "vertex", v, fmt::format("below {}", GetNVertices()));
    m_graph[v].domain = domain;
    m_graph[v].local = plane;
}

const FabricTopology::Graph&
FabricTopology::GetGraph() const
{
    return m_graph;
}

const std::vector<TopoCable>&
FabricTopology::Cables() const
{
    return m_cables;
}

uint32_t
FabricTopology::GetNVertices() const
{
    return static_cast<uint32_t>(boost::num_vertices(m_graph));
}

uint32_t
FabricTopology::GetNGpus() const
{
    return static_cast<uint32_t>(m_gpuVertex.size());
}

uint32_t
FabricTopology::GpuVertex(uint32_t rank) const
{
    FabricRequire(rank < m_gpuVertex.size(),
                  "rank",
                  rank,
                  fmt::format("a rank below {}", m_gpuVertex.size()));
    return m_gpuVertex[rank];
}

const TopoNode&
FabricTopology::Node(uint32_t v) const
{
    return m_graph[v];
}

const std::string&
FabricTopology::GetName() const
{
    return m_name;
}

} // namespace ns3
