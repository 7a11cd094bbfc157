/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_HELPER_H
#define GPU_FABRIC_FABRIC_HELPER_H

#include "ns3/fabric-partition.h"
#include "ns3/fabric-trace-helper.h"
#include "ns3/fabric.h"
#include "ns3/object-factory.h"

#include <optional>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \param tid a TypeId \param name one of its attributes (its own or a parent's)
 * \param value set to the default's text when it was changed (may be null)
 * \return whether the attribute's default was changed from the one it was
 *         registered with (Config::SetDefault, --ns3:: flags)
 */
bool AttributeDefaultChanged(TypeId tid, const std::string& name, std::string* value = nullptr);

/**
 * \ingroup gpu-fabric
 * The names FabricHelper gives a topology's vertices, without prefix:
 * "gpu-R", "nvswitch-D-P" (an NVSwitch outside any domain: "nvswitch-I"),
 * "<role>-I" (I counts that role's switches in vertex order). A hand-built
 * topology whose roles make a name twice gets "-v<vertex>" on the switch (or
 * the later vertex of one kind). Partition files name vertices this way.
 * \param topo the topology \return one name per vertex
 */
std::vector<std::string> FabricVertexNames(const FabricTopology& topo);

/**
 * \ingroup gpu-fabric
 * \brief Instantiates a FabricTopology in ns-3.
 *
 * Attributes set here apply to every object of that kind; per-link rate and
 * delay come from the topology. PCAP capture of any port works through ns-3's
 * standard EnablePcap / EnablePcapAll (Ethernet framing, DLT_EN10MB), and
 * ns-3's ASCII trace through EnableAscii / EnableAsciiAll (see
 * FabricDeviceTraceHelper).
 *
 * Install gives the fabric ns-3 Names (ns3::Names), so that Config paths and
 * pcap file names can use them: every node, by its vertex of the topology,
 * "gpu-R" (rank R), "nvswitch-D-P" (domain D, plane P) and "<role>-I" for a
 * network switch (the I-th switch of that role in vertex order: "leaf-0",
 * "rail-3", "spine-1", "aggregation-2", "core-0"); the Fabric itself
 * "fabric" (its FaultInjector is reached as $ns3::FaultInjector under it) and
 * its PacketTransport "transport". ns-3's Names cannot remove a name, so:
 *  - all the names of a fabric take one prefix (SetNamePrefix). Unset, it is
 *    "" if every name of the fabric is free, else the first of "fabric1-",
 *    "fabric2-", ... whose names are all free: the first fabric of a
 *    simulation is "gpu-3", a second one in the same simulation
 *    "fabric1-gpu-3" (Fabric::GetNamePrefix tells).
 *  - the names live until Simulator::Destroy, which then calls Names::Clear
 *    (ns-3's only way to release a name), as it empties the NodeList: the
 *    next simulation's fabric is "gpu-3" again. Names of one's own go with
 *    them; DisableNames leaves Names alone.
 */
class FabricHelper : public FabricDeviceTraceHelper
{
  public:
    FabricHelper();

    /// Set an attribute of every FabricSwitch (network switches).
    void SetSwitchAttribute(const std::string& name, const AttributeValue& value);
    /// Set an attribute of every NVSwitch.
    void SetNvSwitchAttribute(const std::string& name, const AttributeValue& value);
    /// Set an attribute of every FabricGpu.
    void SetGpuAttribute(const std::string& name, const AttributeValue& value);
    /// Set an attribute of every FabricNetDevice (before the switch's own).
    void SetDeviceAttribute(const std::string& name, const AttributeValue& value);

    /**
     * \return the frame Mtu Install gives the devices (their Mtu attribute as
     *         set here or by default)
     * \throws FabricConfigError if that Mtu is invalid
     */
    uint32_t GetDeviceFrameMtu() const;

    /// \brief Throw FabricConfigError if an attribute the topology sets (a device's
    /// DataRate, a cable's Delay, a GPU's Rank, a switch's Role) was given a
    /// default of its own: it could not take effect (TransportHelper
    /// checks it for the flow level too, which takes them from the topology).
    static void RequireTopologyAttributesUnset();

    /**
     * Name the next fabrics' nodes, fabric and transport with this prefix
     * ("rack2-" gives "rack2-gpu-3"). Install throws FabricConfigError if a
     * name it needs is taken (another fabric of this simulation, or a name of
     * one's own).
     * \param prefix the prefix (no '/'; "" for the plain names)
     */
    void SetNamePrefix(const std::string& prefix);

    /// Give the next fabrics no ns-3 Names (and leave Names alone at Simulator::Destroy).
    void DisableNames();

    /**
     * Build the next fabrics partitioned over MPI ranks: each vertex's node
     * gets its rank as ns-3 system id (FabricPartitioner makes one). In a
     * distributed run every rank builds the whole fabric and simulates its
     * own nodes; without one (one process) the ids only label the nodes.
     * Every node handles same-instant arrivals in the canonical order
     * (FabricNode::SetCanonicalTies), so the fabric gives the same results
     * on one process and on any number of ranks; its ports' RED marking
     * draws take random streams 2^40 + 2 x cable + end
     * (FabricNetDevice::AssignStreams), so they do not depend on which port
     * marks first either.
     * \param partition the partition (its rankOf has one entry per vertex of
     *        the topologies installed next)
     */
    void SetPartition(const FabricPartition& partition);

    /**
     * Build the fabric.
     * \param topology the description
     * \return the fabric
     */
    Ptr<Fabric> Install(const FabricTopology& topology) const;

  private:
    /**
     * \param names the names a fabric needs, without prefix
     * \return the prefix that makes them all free (see SetNamePrefix)
     */
    std::string ChooseNamePrefix(const std::vector<std::string>& names) const;

    ObjectFactory m_switchFactory;
    ObjectFactory m_nvswitchFactory;
    ObjectFactory m_gpuFactory;
    ObjectFactory m_deviceFactory;
    std::optional<std::string> m_namePrefix; //!< unset: the first free one
    bool m_names{true};                      //!< name the fabric's objects
    std::vector<uint32_t> m_rankOf;          //!< per vertex: its system id (empty: all 0)
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_HELPER_H
