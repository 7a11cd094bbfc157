/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_TOPOLOGY_HELPER_H
#define GPU_FABRIC_TOPOLOGY_HELPER_H

#include "fabric-helper.h"

#include "ns3/direct-connect-graph.h"
#include "ns3/fabric-topology.h"
#include "ns3/hb-domain-preset.h"
#include "ns3/llm-model.h"
#include "ns3/topology-builders.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Build a cluster topology by name, as the module's programs do for
 * their --topology flag, so that a scenario of one's own can offer the same
 * choice:
 *
 * - "rail-only": BuildRailOnly (rails without a spine);
 * - "rail-optimized": BuildRailOptimized (a rail-optimized fat-tree);
 * - "fat-tree": BuildFatTree (whole servers under a leaf);
 * - "direct-connect": BuildDirectConnect over the graph SetGraph names
 *   (BuildFromName, e.g. "C(16,{1,2})"), one GPU per node (or, with
 *   SetDomainsAsNodes(true), one HB domain of the platform's K GPUs per
 *   node, sharing its arcs), the node bandwidth spread over its arcs.
 *
 * The three switched topologies are built from the cluster (SetCluster:
 * N, the platform, the radix, ...). A direct-connect topology has as many
 * GPUs as its graph has nodes (times K with domains as nodes):
 * ClusterParams::gpus is then replaced by that count, unless
 * SetGpusRequired(true) says the count was chosen (a --gpus the user gave),
 * in which case a different count is refused rather than ignored.
 *
 * \code
 *   ClusterParams p;
 *   p.gpus = 64;
 *   p.platform = TopologyHelper::GetPlatform("dgx-h100");
 *   TopologyHelper topologies(p);
 *   FabricTopology railOnly = topologies.Create("rail-only");
 * \endcode
 *
 * Errors are FabricConfigError naming the parameter ("topology", "gpus",
 * "graph" by default; SetParameterNames gives a program's flag names).
 */
class TopologyHelper
{
  public:
    /// A cluster of ClusterParams' defaults.
    TopologyHelper();

    /// \param cluster the cluster the switched topologies are built for
    explicit TopologyHelper(const ClusterParams& cluster);

    /// \return the names Create takes, in the order above
    static std::vector<std::string> GetNames();

    /// \param cluster the cluster (N, platform, radix, link delay and rate)
    void SetCluster(const ClusterParams& cluster);

    /// \return the cluster
    const ClusterParams& GetCluster() const;

    /**
     * The graph of a "direct-connect" topology.
     * \param graph a construction name (BuildFromName)
     * \param nodeBandwidthBps one node's bandwidth, spread over its arcs (0:
     *        the NICs of its GPUs, GetGpusPerNode() x the platform's NIC rate,
     *        the scale-out bandwidth those GPUs have on a switched fabric)
     */
    void SetGraph(const std::string& graph, uint64_t nodeBandwidthBps);

    /**
     * \param domains true: every node of a direct-connect graph is an HB
     *        domain of the platform's K GPUs (NVSwitch inside, the node's arcs
     *        leaving from its GPUs in turn); false (the default): one GPU per node
     */
    void SetDomainsAsNodes(bool domains);

    /// \return GPUs per node of a direct-connect graph: K with domains as nodes, else 1
    uint32_t GetGpusPerNode() const;

    /// \return the direct-connect graph SetGraph named (FabricConfigError for a bad name)
    DirectConnectGraph GetGraph() const;

    /**
     * \param required whether ClusterParams::gpus was chosen (a
     *        direct-connect graph must then have that many nodes) or is a
     *        default the graph's node count replaces (false, the default)
     */
    void SetGpusRequired(bool required);

    /**
     * Name the parameters an error blames (a program gives its flags,
     * "--topology", "--gpus", "--graph").
     * \param topology the topology name's ("topology" by default)
     * \param gpus the GPU count's ("gpus" by default)
     * \param graph the graph's ("graph" by default)
     */
    void SetParameterNames(const std::string& topology,
                           const std::string& gpus,
                           const std::string& graph);

    /**
     * Set on a packet fabric what a topology of this helper needs of it: on
     * "direct-connect" with HB domains as nodes, the relays (the GPUs'
     * FabricNetDevices and the NVSwitch) pause only past
     * kDcRelayPfcXoff bytes per port (resume at 3/4 of it). A domain's GPUs
     * and NVSwitch relay its arcs for all K GPUs; under the default per-port
     * thresholds a busy arc pauses the NVLink port ahead of it and the
     * deliveries queued behind it, around the graph, and the fabric
     * deadlocks (a relayed chunk would wait in the relaying GPU's memory).
     * Other topologies leave \p fabric as it is.
     * \param name the topology Create builds
     * \param fabric the packet fabric's helper (TransportHelper::GetFabricHelper)
     */
    void ConfigureFabric(const std::string& name, FabricHelper& fabric) const;

    /// A relay's pause threshold on a direct-connect fabric of HB domains, bytes
    static constexpr uint32_t kDcRelayPfcXoff = 1U << 26;

    /**
     * \param name one of GetNames()
     * \return the topology
     * \throws FabricConfigError for another name, a bad cluster or graph, or
     *         a required GPU count that a direct-connect graph does not have
     */
    FabricTopology Create(const std::string& name) const;

    /**
     * The platform a preset names, with any figure overridden through the
     * ns3::HbDomain attributes (e.g. --ns3::HbDomain::NvSwitchPlanes=2):
     * HbDomain::PlatformOf, which refuses a ns3::HbDomain::Preset naming
     * another preset.
     * \param preset one of HbDomainPreset::Names()
     * \return the platform, validated
     * \throws FabricConfigError for an unknown preset or a bad figure
     */
    static HbDomainPreset GetPlatform(const std::string& preset);

    /**
     * The model presets of a comma-separated list, all looked up before
     * any is used.
     * \param parameter what gave the list (for an error)
     * \param names e.g. "gpt3-175b,opt-175b" (LlmModel::Names())
     * \return the models, in order
     * \throws FabricConfigError for an empty item or an unknown model
     */
    static std::vector<LlmModel> GetModels(const std::string& parameter, const std::string& names);

  private:
    ClusterParams m_cluster;                     //!< the cluster
    std::string m_graph;                         //!< direct-connect graph name
    uint64_t m_nodeBandwidthBps{0};              //!< direct-connect node bandwidth
    bool m_gpusRequired{false};                  //!< ClusterParams::gpus was chosen
    bool m_domainsAsNodes{false};                //!< a graph node is an HB domain
    std::string m_topologyParameter{"topology"}; //!< what a bad name blames
    std::string m_gpusParameter{"gpus"};         //!< what a bad GPU count blames
    std::string m_graphParameter{"graph"};       //!< what names the graph
};

} // namespace ns3

#endif // GPU_FABRIC_TOPOLOGY_HELPER_H
