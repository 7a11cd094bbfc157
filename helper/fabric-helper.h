/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_HELPER_H
#define GPU_FABRIC_FABRIC_HELPER_H

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
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_HELPER_H
