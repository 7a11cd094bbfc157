/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric.h"

#include "ns3/fabric-error.h"
#include "ns3/fabric-routing.h"
#include "ns3/names.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(Fabric);

TypeId
Fabric::GetTypeId()
{
    static TypeId tid = TypeId("ns3::Fabric").SetParent<Object>().SetGroupName("GpuFabric");
    return tid;
}

void
Fabric::DoDispose()
{
    // a fabric whose Install threw part way (a device attribute refused)
    // has empty slots: it is disposed on the way out all the same
    for (const auto& dev : m_devs)
    {
        if (dev)
        {
            dev->SetLossCallback(FabricNetDevice::LossCallback());
        }
    }
    for (const auto& node : m_nodes)
    {
        if (node)
        {
            node->SetLossCallback(FabricNetDevice::LossCallback());
        }
    }
    if (m_transport)
    {
        m_transport->Dispose();
    }
    m_transport = nullptr;
    m_nodes.clear();
    m_gpus.clear();
    m_devs.clear();
    Object::DoDispose();
}

const FabricTopology&
Fabric::GetTopology() const
{
    return m_topology;
}

uint32_t
Fabric::GetNGpus() const
{
    return m_gpus.size();
}

Ptr<FabricGpu>
Fabric::GetGpu(uint32_t rank) const
{
    return m_gpus.at(rank);
}

Ptr<FabricNode>
Fabric::GetNodeOfVertex(uint32_t vertex) const
{
    return m_nodes.at(vertex);
}

NodeContainer
Fabric::GetNodes() const
{
    NodeContainer c;
    for (const auto& n : m_nodes)
    {
        c.Add(n);
    }
    return c;
}

std::string
Fabric::GetNodeName(uint32_t vertex) const
{
    return Names::FindName(m_nodes.at(vertex));
}

const std::string&
Fabric::GetNamePrefix() const
{
    return m_namePrefix;
}

Ptr<PacketTransport>
Fabric::GetTransport() const
{
    return m_transport;
}

std::vector<FabricRoutingTable>
Fabric::GetRoutingTables() const
{
    std::vector<FabricRoutingTable> tables;
    tables.reserve(m_nodes.size());
    for (const auto& node : m_nodes)
    {
        tables.push_back(node->GetRoutingTable());
    }
    return tables;
}

const FabricRoutingTable&
Fabric::GetRoutingTable(uint32_t vertex) const
{
    if (vertex >= m_nodes.size())
    {
        // the message is formatted only when it is needed (FaultInjector
        // reads tables per destination)
        FabricRequire(false, "vertex", vertex, fmt::format("a vertex below {}", m_nodes.size()));
    }
    return m_nodes[vertex]->GetRoutingTable();
}

void
Fabric::BuildAllRoutingTables()
{
    if (m_someTables)
    {
        m_someTables = false;
        InstallTables(ComputeRoutingTables(m_topology));
    }
}

void
Fabric::InstallTables(std::vector<FabricRoutingTable> tables)
{
    for (uint32_t v = 0; v < m_nodes.size(); ++v)
    {
        m_nodes[v]->SetRoutingTable(std::move(tables[v]));
    }
}

std::pair<Ptr<FabricNetDevice>, Ptr<FabricNetDevice>>
Fabric::GetCableDevices(uint32_t cable) const
{
    return {m_devs.at(2 * cable), m_devs.at(2 * cable + 1)};
}

uint16_t
Fabric::RegisterRoute(const std::vector<uint32_t>& vertices)
{
    if (auto it = m_routeIds.find(vertices); it != m_routeIds.end())
    {
        return it->second;
    }
    const auto& g = m_topology.GetGraph();
    FabricRequire(vertices.size() >= 2 && vertices.front() < m_topology.GetNVertices() &&
                      vertices.back() < m_topology.GetNVertices() &&
                      m_topology.Node(vertices.front()).kind == TopoNodeKind::Gpu &&
                      m_topology.Node(vertices.back()).kind == TopoNodeKind::Gpu,
                  "source route",
                  fmt::format("{} vertices", vertices.size()),
                  "a path of at least 2 vertices from a GPU to a GPU");
    FabricRequire(m_sourceRoutes->ports.size() < 65535,
                  "source routes",
                  m_sourceRoutes->ports.size(),
                  "at most 65535 per fabric");
    std::vector<uint16_t> ports;
    for (size_t i = 0; i + 1 < vertices.size(); ++i)
    {
        bool found = false;
        if (vertices[i] < m_topology.GetNVertices())
        {
            for (auto [it, end] = boost::out_edges(vertices[i], g); it != end; ++it)
            {
                if (boost::target(*it, g) == vertices[i + 1])
                {
                    ports.push_back(static_cast<uint16_t>(g[*it].srcPort));
                    found = true;
                    break;
                }
            }
        }
        FabricRequire(found,
                      "source route hop",
                      fmt::format("{} -> {}", vertices[i], vertices[i + 1]),
                      "vertices joined by a link of the topology");
    }
    const auto id = static_cast<uint16_t>(m_sourceRoutes->ports.size());
    m_sourceRoutes->ports.push_back(std::move(ports));
    m_routeIds.emplace(vertices, id);
    return id;
}

uint64_t
Fabric::SendAlongPath(const std::vector<uint32_t>& vertices,
                      uint64_t bytes,
                      Transport::DoneCallback done)
{
    const uint16_t id = RegisterRoute(vertices);
    return m_transport->SendRouted(m_topology.Node(vertices.front()).rank,
                                   m_topology.Node(vertices.back()).rank,
                                   bytes,
                                   id,
                                   done);
}

void
Fabric::SetRoutingTables(std::vector<FabricRoutingTable> tables)
{
    FabricRequire(tables.size() == m_nodes.size(),
                  "routing tables",
                  tables.size(),
                  fmt::format("one per vertex ({})", m_nodes.size()));
    InstallTables(std::move(tables));
    m_transport->RoutesChanged();
}

uint64_t
Fabric::GetTotalLost() const
{
    uint64_t lost = 0;
    for (const auto& d : m_devs)
    {
        if (d) // (a cable of other ranks' switches is not built here)
        {
            lost += d->GetStats().lost + d->GetStats().corrupted;
        }
    }
    return lost;
}

Fabric::EventCounts
Fabric::GetEventCounts() const
{
    EventCounts c;
    for (const auto& d : m_devs)
    {
        if (!d)
        {
            continue;
        }
        const FabricNetDevice::Stats& s = d->GetStats();
        c.arrivals += s.arrivals;
        c.serializationEnds += s.serializationEnds;
        c.flowControlFrames += s.flowControlFrames;
    }
    return c;
}

uint64_t
Fabric::GetTotalDrops() const
{
    uint64_t drops = 0;
    for (const auto& d : m_devs)
    {
        if (d)
        {
            drops += d->GetStats().drops;
        }
    }
    for (const auto& n : m_nodes)
    {
        drops += n->GetNoRouteDrops();
    }
    return drops;
}

} // namespace ns3
