/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_H
#define GPU_FABRIC_FABRIC_H

#include "packet-transport.h"

#include "ns3/fabric-channel.h"
#include "ns3/fabric-gpu.h"
#include "ns3/fabric-switch.h"
#include "ns3/fabric-topology.h"
#include "ns3/node-container.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ns3
{

class FabricHelper;

/**
 * \ingroup gpu-fabric
 * \brief A fabric instantiated in ns-3: nodes, devices and channels made
 * from one FabricTopology, with routing installed and a PacketTransport.
 *
 * Made by FabricHelper::Install, which also gives its nodes, itself and its
 * transport ns-3 Names (gpu-R, nvswitch-D-P, <role>-I, fabric, transport,
 * after a prefix: see FabricHelper::SetNamePrefix), so that Config paths
 * such as /Names/gpu-3/DeviceList/0/$ns3::FabricNetDevice/MacTx and
 * /Names/transport/MessageComplete reach them and pcap files are named
 * after the nodes.
 */
class Fabric : public Object
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();

    /// \return the description it was built from
    const FabricTopology& GetTopology() const;
    /// \return number of GPUs
    uint32_t GetNGpus() const;
    /// \param rank a rank \return its GPU (the ns-3 node of that rank)
    Ptr<FabricGpu> GetGpu(uint32_t rank) const;
    /// \param vertex a topology vertex \return its node
    Ptr<FabricNode> GetNodeOfVertex(uint32_t vertex) const;
    /// \return all nodes (GPUs and switches)
    NodeContainer GetNodes() const;
    /**
     * \param vertex a topology vertex
     * \return its node's ns-3 name (Names::FindName), e.g. "gpu-3"; empty if
     *         the fabric was installed without names or the names were
     *         released (Simulator::Destroy)
     */
    std::string GetNodeName(uint32_t vertex) const;
    /// \return the prefix of its ns-3 Names ("" for unprefixed names or none)
    const std::string& GetNamePrefix() const;
    /// \return the message layer
    Ptr<PacketTransport> GetTransport() const;
    /// \return a copy of the routing tables, by vertex (in a distributed run
    /// only this process's nodes have theirs, until BuildAllRoutingTables)
    std::vector<FabricRoutingTable> GetRoutingTables() const;
    /// \param vertex a topology vertex \return the routing table its node
    /// forwards with (the only copy: no copy is made)
    const FabricRoutingTable& GetRoutingTable(uint32_t vertex) const;
    /// Build every vertex's routing table where only this process's were
    /// built: routes kept after a failure depend on the tables of
    /// neighbours' neighbours (FaultInjector calls it).
    void BuildAllRoutingTables();
    /**
     * Devices of a cable.
     * \param cable index in GetTopology().Cables()
     * \return the devices at its ends a and b (in a distributed run, null for
     *         a cable between two switches of other ranks: it is not built here)
     */
    std::pair<Ptr<FabricNetDevice>, Ptr<FabricNetDevice>> GetCableDevices(uint32_t cable) const;

    /**
     * Register an explicit route (direct-connect schedules that name their
     * path): consecutive vertices must be linked; it starts and ends at GPUs.
     * The same path registered twice gets the same id.
     * \param vertices the path, source GPU first
     * \return the route id for PacketTransport::SendRouted
     */
    uint16_t RegisterRoute(const std::vector<uint32_t>& vertices);

    /**
     * Send along an explicit path (registered on first use).
     * \param vertices the path, source GPU first, destination GPU last
     * \param bytes payload \param done delivery callback \return message id
     */
    uint64_t SendAlongPath(const std::vector<uint32_t>& vertices,
                           uint64_t bytes,
                           Transport::DoneCallback done);

    /// \return packets dropped anywhere (queue overflow or no route)
    uint64_t GetTotalDrops() const;
    /// \return packets lost to link faults anywhere (down links, bit errors)
    uint64_t GetTotalLost() const;

    /// The data plane's events so far, by kind (summed over every port).
    struct EventCounts
    {
        uint64_t arrivals{0};          //!< a packet's last bit reached a port
        uint64_t serializationEnds{0}; //!< a port finished serializing (when scheduled)
        uint64_t flowControlFrames{0}; //!< a pause or resume frame reached a port
    };

    /// \return the data plane's events by kind
    EventCounts GetEventCounts() const;

    /**
     * Install new forwarding tables in every node (e.g. recomputed without
     * failed elements) and tell the transport (PacketTransport::RoutesChanged).
     * \param tables one per vertex
     */
    void SetRoutingTables(std::vector<FabricRoutingTable> tables);

  protected:
    void DoDispose() override;

  private:
    friend class FabricHelper;
    /// Move each table of \p tables (by vertex) into its node: the nodes
    /// hold the only copy (at 16k GPUs the tables are most of a run's memory).
    void InstallTables(std::vector<FabricRoutingTable> tables);
    FabricTopology m_topology;
    std::vector<Ptr<FabricNode>> m_nodes;     //!< by vertex
    std::vector<Ptr<FabricGpu>> m_gpus;       //!< by rank
    std::vector<Ptr<FabricNetDevice>> m_devs; //!< cable i: 2i (end a), 2i+1 (end b)
    bool m_someTables{false};                 //!< only this process's nodes' tables
    Ptr<PacketTransport> m_transport;
    std::shared_ptr<FabricSourceRoutes> m_sourceRoutes;   //!< shared with the nodes
    std::map<std::vector<uint32_t>, uint16_t> m_routeIds; //!< path -> route id
    std::string m_namePrefix;                             //!< of its ns-3 Names
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_H
