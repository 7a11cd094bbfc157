/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "topology-helper.h"

#include "program-flags.h"

#include "ns3/fabric-error.h"
#include "ns3/hb-domain.h"
#include "ns3/topology-finder.h"
#include "ns3/uinteger.h"

#include <fmt/format.h>

namespace ns3
{

TopologyHelper::TopologyHelper() = default;

TopologyHelper::TopologyHelper(const ClusterParams& cluster)
    : m_cluster(cluster)
{
}

std::vector<std::string>
TopologyHelper::GetNames()
{
    return {"rail-only", "rail-optimized", "fat-tree", "direct-connect"};
}

void
TopologyHelper::SetCluster(const ClusterParams& cluster)
{
    m_cluster = cluster;
}

const ClusterParams&
TopologyHelper::GetCluster() const
{
    return m_cluster;
}

void
TopologyHelper::SetGraph(const std::string& graph, uint64_t nodeBandwidthBps)
{
    m_graph = graph;
    m_nodeBandwidthBps = nodeBandwidthBps;
}

void
TopologyHelper::SetDomainsAsNodes(bool domains)
{
    m_domainsAsNodes = domains;
}

uint32_t
TopologyHelper::GetGpusPerNode() const
{
    return m_domainsAsNodes ? m_cluster.platform.gpusPerDomain : 1;
}

DirectConnectGraph
TopologyHelper::GetGraph() const
{
    return BuildFromName(m_graph);
}

void
TopologyHelper::SetGpusRequired(bool required)
{
    m_gpusRequired = required;
}

void
TopologyHelper::SetParameterNames(const std::string& topology,
                                  const std::string& gpus,
                                  const std::string& graph)
{
    m_topologyParameter = topology;
    m_gpusParameter = gpus;
    m_graphParameter = graph;
}

FabricTopology
TopologyHelper::Create(const std::string& name) const
{
    if (name == "rail-only")
    {
        return BuildRailOnly(m_cluster);
    }
    if (name == "rail-optimized")
    {
        return BuildRailOptimized(m_cluster);
    }
    if (name == "fat-tree")
    {
        return BuildFatTree(m_cluster);
    }
    FabricRequire(name == "direct-connect",
                  m_topologyParameter,
                  name,
                  "rail-only, rail-optimized, fat-tree or direct-connect");
    const DirectConnectGraph g = GetGraph();
    const uint32_t k = GetGpusPerNode();
    FabricRequire(
        !m_gpusRequired || m_cluster.gpus == uint64_t{g.NumNodes()} * k,
        m_gpusParameter,
        m_cluster.gpus,
        k == 1 ? fmt::format("the node count of {}={} ({}), or no {}: a direct-connect "
                             "topology has one GPU per node",
                             m_graphParameter,
                             m_graph,
                             g.NumNodes(),
                             m_gpusParameter)
               : fmt::format("K x the node count of {}={} ({} x {} = {}), or no {}: with HB "
                             "domains as nodes, a direct-connect topology has K GPUs per node",
                             m_graphParameter,
                             m_graph,
                             k,
                             g.NumNodes(),
                             uint64_t{g.NumNodes()} * k,
                             m_gpusParameter));
    ClusterParams p = m_cluster;
    if (k == 1)
    {
        p.platform = HbDomainPreset::Custom(1, p.platform.nvlinkRate, p.platform.nicRate);
    }
    const uint64_t nodeBps = m_nodeBandwidthBps != 0
                                 ? m_nodeBandwidthBps
                                 : k * static_cast<uint64_t>(p.platform.nicRate.GetBitRate());
    return BuildDirectConnect(g, nodeBps, p);
}

void
TopologyHelper::ConfigureFabric(const std::string& name, FabricHelper& fabric) const
{
    if (name != "direct-connect" || GetGpusPerNode() == 1)
    {
        return;
    }
    const UintegerValue xoff(kDcRelayPfcXoff);
    const UintegerValue xon(kDcRelayPfcXoff / 4 * 3);
    fabric.SetDeviceAttribute("PfcXoff", xoff);
    fabric.SetDeviceAttribute("PfcXon", xon);
    fabric.SetNvSwitchAttribute("PfcXoff", xoff);
    fabric.SetNvSwitchAttribute("PfcXon", xon);
}

HbDomainPreset
TopologyHelper::GetPlatform(const std::string& preset)
{
    return HbDomain::PlatformOf(preset);
}

std::vector<LlmModel>
TopologyHelper::GetModels(const std::string& parameter, const std::string& names)
{
    std::vector<LlmModel> models;
    for (const auto& name : SplitList(parameter, names))
    {
        models.push_back(LlmModel::Get(name));
    }
    return models;
}

} // namespace ns3
