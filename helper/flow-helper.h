/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FLOW_HELPER_H
#define GPU_FABRIC_FLOW_HELPER_H

#include "fabric-helper.h"

#include "ns3/flow-transport.h"
#include "ns3/object-factory.h"

#include <set>
#include <string>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Builds the flow-level backend for a topology: one call, no ns-3
 * nodes or devices. The result is a Transport, so CollectiveHelper (its
 * Transport constructor) runs collectives on it unchanged.
 *
 * \code
 *   Ptr<FlowTransport> flow = FlowHelper().Install(BuildRailOnly(p));
 *   CollectiveHelper collectives{Ptr<Transport>(flow)};
 * \endcode
 */
class FlowHelper
{
  public:
    FlowHelper();

    /// Set an attribute of the FlowTransport (PacketPayload, PacketOverhead, ...).
    void SetTransportAttribute(const std::string& name, const AttributeValue& value);

    /**
     * Frame the flows as the packet level would on devices of this Mtu:
     * PacketPayload = \p frameMtu minus the FabricHeader, PacketOverhead =
     * the FabricHeader, unless either was set with SetTransportAttribute or
     * its default changed (Config::SetDefault, --ns3:: flags).
     * TransportHelper calls it with its FabricHelper's device Mtu, so that
     * both backends cut messages alike.
     * \param frameMtu the devices' frame Mtu (ns3::FabricNetDevice::Mtu)
     */
    void SetFrameMtu(uint32_t frameMtu);

    /**
     * Flow backend on a topology, routes derived on demand (scales to 32k GPUs).
     * \param topology the topology (read during the call only)
     * \return the transport
     */
    Ptr<FlowTransport> Install(const FabricTopology& topology) const;

    /**
     * Flow backend with the routing tables of a packet-level fabric (same
     * paths by construction; for cross-validation), framed as its
     * transport's packets (their payload and StripeMinPayload, unless set
     * here or by default, as SetFrameMtu).
     * \param fabric the fabric \return the transport
     */
    Ptr<FlowTransport> Install(Ptr<Fabric> fabric) const;

  private:
    /**
     * \param frameMtu devices' frame Mtu (0: none given)
     * \param minStripe a transport's StripeMinPayload (0: none given)
     * \return the factory with that framing, where the user set none
     */
    ObjectFactory Framed(uint32_t frameMtu, uint32_t minStripe) const;

    ObjectFactory m_factory;     //!< FlowTransport factory
    std::set<std::string> m_set; //!< attributes set with SetTransportAttribute
    uint32_t m_frameMtu{0};      //!< SetFrameMtu (0: not given)
};

} // namespace ns3

#endif // GPU_FABRIC_FLOW_HELPER_H
