/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FLOW_HELPER_H
#define GPU_FABRIC_FLOW_HELPER_H

#include "fabric-helper.h"

#include "ns3/flow-transport.h"
#include "ns3/object-factory.h"

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
     * Flow backend on a topology, routes derived on demand (scales to 32k GPUs).
     * \param topology the topology (read during the call only)
     * \return the transport
     */
    Ptr<FlowTransport> Install(const FabricTopology& topology) const;

    /**
     * Flow backend with the routing tables of a packet-level fabric (same
     * paths by construction; for cross-validation).
     * \param fabric the fabric \return the transport
     */
    Ptr<FlowTransport> Install(Ptr<Fabric> fabric) const;

  private:
    ObjectFactory m_factory; //!< FlowTransport factory
};

} // namespace ns3

#endif // GPU_FABRIC_FLOW_HELPER_H
