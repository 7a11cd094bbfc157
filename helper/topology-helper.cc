/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "topology-helper.h"

#include "program-flags.h"

#include "ns3/fabric-error.h"
#include "ns3/hb-domain.h"
#include "ns3/topology-finder.h"

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
    const DirectConnectGraph g = BuildFromName(m_graph);
    FabricRequire(!m_gpusRequired || m_cluster.gpus == g.NumNodes(),
                  m_gpusParameter,
                  m_cluster.gpus,
                  fmt::format("the node count of {}={} ({}), or no {}: a direct-connect "
                              "topology has one GPU per node",
                              m_graphParameter,
                              m_graph,
                              g.NumNodes(),
                              m_gpusParameter));
    ClusterParams p = m_cluster;
    p.platform = HbDomainPreset::Custom(1, p.platform.nvlinkRate, p.platform.nicRate);
    return BuildDirectConnect(g, m_nodeBandwidthBps, p);
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
