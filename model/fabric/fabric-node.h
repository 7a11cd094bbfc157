/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_NODE_H
#define GPU_FABRIC_FABRIC_NODE_H

#include "fabric-header.h"
#include "fabric-net-device.h"

#include "ns3/node.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Forwarding table of one fabric node: for every destination rank,
 * the set of equal-cost output ports.
 *
 * Destinations point to shared port groups (a Clos switch has a few: its
 * uplinks, and one group per downlink), so that the table of a switch is
 * two bytes per destination: a fat-tree of a thousand hosts has over a
 * million entries across its switches, and a packet-level run reads one per
 * hop.
 */
class FabricRoutingTable
{
  public:
    /**
     * Start a table for \p numRanks destinations, all without a route.
     * \param numRanks number of GPU ranks in the fabric
     */
    explicit FabricRoutingTable(uint32_t numRanks = 0);

    /**
     * Set the equal-cost ports toward \p dst. Destinations must be added in
     * increasing order, each once.
     * \param dst destination rank
     * \param ports port indices
     */
    void Append(uint32_t dst, const std::vector<uint16_t>& ports);

    /**
     * Replace the ports of the destination appended last.
     * \param dst that destination
     * \param ports the new port indices
     */
    void Replace(uint32_t dst, const std::vector<uint16_t>& ports);

    /// \return number of destinations covered
    uint32_t GetNRanks() const;

    /// \return number of distinct port groups
    uint32_t GetNGroups() const;

    /// \param dst destination \return number of ports toward it (0: no route)
    uint32_t GetNPorts(uint32_t dst) const
    {
        if (dst >= m_group.size())
        {
            return 0;
        }
        const uint16_t g = m_group[dst];
        return m_groupOffset[g + 1] - m_groupOffset[g];
    }

    /// Prefetch the route to \p dst (FabricLookaheadScheduler).
    /// \param dst destination
    void PrefetchRoute(uint32_t dst) const
    {
        if (dst < m_group.size())
        {
            __builtin_prefetch(&m_group[dst]);
            __builtin_prefetch(m_groupOffset.data());
        }
    }

    /// \param dst destination \param i index among its ports \return port index
    uint16_t GetPort(uint32_t dst, uint32_t i) const
    {
        return m_ports[m_groupOffset[m_group[dst]] + i];
    }

  private:
    /// \return the group holding exactly these ports (created if new)
    uint16_t Group(const std::vector<uint16_t>& ports);

    std::vector<uint16_t> m_group;       //!< destination -> port group (0: no route)
    std::vector<uint32_t> m_groupOffset; //!< first port of each group, size groups+1
    std::vector<uint16_t> m_ports;       //!< concatenated groups
    std::map<std::vector<uint16_t>, uint16_t> m_groupIndex; //!< ports -> group
};

/**
 * \ingroup gpu-fabric
 * \brief Explicit routes of a fabric (direct-connect schedules that name
 * their path): route id -> the output port taken at each hop, the source
 * GPU's port first. Shared by all nodes of one fabric.
 */
struct FabricSourceRoutes
{
    std::vector<std::vector<uint16_t>> ports; //!< per route, per hop
};

/**
 * \ingroup gpu-fabric
 * \brief A node of the fabric (GPU or switch): numbered FabricNetDevice
 * ports and a forwarding table, with ECMP over equal-cost ports.
 *
 * ECMP picks a port with a deterministic hash of (source, destination, flow
 * label) salted per node, so that a flow keeps one path (no reordering) and
 * successive tiers do not make correlated choices.
 */
class FabricNode : public Node
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    FabricNode();

    /**
     * Add a port: the device is added to the node and numbered.
     * \param device the port
     * \return its port index
     */
    virtual uint32_t AddPort(Ptr<FabricNetDevice> device);
    /// \return number of ports
    uint32_t GetNPorts() const;
    /// \param i port index \return the port
    Ptr<FabricNetDevice> GetPort(uint32_t i) const;

    /// \param salt ECMP salt (FabricHelper uses VertexSalt of the topology vertex)
    void SetEcmpSalt(uint32_t salt);

    /// \param routes the fabric's explicit routes (shared by its nodes)
    void SetSourceRoutes(std::shared_ptr<const FabricSourceRoutes> routes);

    /// \param table the forwarding table
    void SetRoutingTable(FabricRoutingTable table);
    /// \return the forwarding table
    const FabricRoutingTable& GetRoutingTable() const;

    /**
     * Output port for a packet of the given flow, or nullptr without route.
     * \param h the packet's header
     * \return the port
     */
    FabricNetDevice* SelectPort(const FabricHeaderData& h) const;

    /**
     * Stage \p stage of what forwarding \p h reads (FabricLookaheadScheduler;
     * stage 1: this node's fields and the route, 2 and 3: the output port's).
     * \param stage the stage
     * \param h the packet's header data
     */
    void PrefetchForward(uint32_t stage, const FabricHeaderData& h) const;

    /**
     * The ECMP hash used by every node.
     * \param src source rank \param dst destination rank
     * \param flowLabel flow label \param salt per-node salt
     * \return a well-mixed 32-bit value
     */
    static uint32_t EcmpHash(uint32_t src, uint32_t dst, uint16_t flowLabel, uint32_t salt);

    /**
     * Called by a port for every received packet.
     * \param port the input port
     * \param p the packet
     * \param h its header as the previous hop passed it along, or nullptr
     *        (then it is read from the packet)
     */
    void ReceiveFromPort(FabricNetDevice* port, const Ptr<Packet>& p, const FabricHeaderData* h);

    /// \return packets dropped for lack of a route (on a GPU, also those it
    ///         refused to relay)
    uint64_t GetNoRouteDrops() const;

    /// \param cb called with every packet this node drops (no route, refused relay)
    void SetLossCallback(FabricNetDevice::LossCallback cb);

  protected:
    /**
     * Handle a received packet whose header has been read.
     * \param port input port \param p packet \param h its header
     */
    virtual void HandlePacket(FabricNetDevice* port,
                              const Ptr<Packet>& p,
                              const FabricHeaderData& h) = 0;

    /**
     * Forward toward h.dst through the routing table.
     * \param port input port (charged for flow control)
     * \param p packet \param h its header
     * \return true if an output port took it, false if it was dropped (no
     *         route, or the port's queue full or its link down)
     */
    bool Forward(FabricNetDevice* port, const Ptr<Packet>& p, const FabricHeaderData& h);

    void DoDispose() override;

    /**
     * Count and trace a packet dropped for lack of a route.
     * \param p the packet
     * \param notifyLoss also report it to the loss callback (a transport's
     *        packet, which it may resend)
     */
    void DropUnroutable(const Ptr<Packet>& p, bool notifyLoss);

    /// Report a packet this node dropped to the loss callback.
    /// \param p the packet
    void NotifyLoss(Ptr<const Packet> p) const;

  private:
    /**
     * What SelectPort() picks, as a port index (inline in fabric-node.cc,
     * its only user: the data plane's hot path).
     * \param h the packet's header
     * \return the port index, or UINT32_MAX without route
     */
    uint32_t SelectPortIndex(const FabricHeaderData& h) const;

    FabricNetDevice::LossCallback m_loss;                     //!< dropped packets
    std::vector<Ptr<FabricNetDevice>> m_ports;                //!< ports by index
    FabricRoutingTable m_table;                               //!< destination -> ports
    std::shared_ptr<const FabricSourceRoutes> m_sourceRoutes; //!< explicit routes
    uint32_t m_salt{0};                                       //!< ECMP salt (from the node id)
    uint64_t m_noRouteDrops{0};                               //!< packets without route
    TracedCallback<Ptr<const Packet>> m_noRouteTrace;         //!< dropped: no route
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_NODE_H
