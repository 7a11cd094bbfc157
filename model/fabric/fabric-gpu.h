/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_GPU_H
#define GPU_FABRIC_FABRIC_GPU_H

#include "fabric-node.h"

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief A GPU: a rank, its NVLink port(s) to the NVSwitch planes of its HB
 * domain, and one NIC on its rail (or direct-connect ports).
 *
 * Packets addressed to the GPU go to the delivery callback (the transport);
 * other packets are forwarded through the routing table without involving
 * the application, which is how rail-only traffic crosses rails through the
 * HB domain (PXN-style) and how direct-connect hosts relay.
 */
class FabricGpu : public FabricNode
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    FabricGpu();

    /// \param rank the global rank
    void SetRank(uint32_t rank);
    /// \return the global rank
    uint32_t GetRank() const;

    /// Receives every packet addressed to this GPU.
    typedef Callback<void, Ptr<Packet>, const FabricHeaderData&> DeliveryCallback;
    /// \param cb the delivery callback
    void SetDeliveryCallback(DeliveryCallback cb);

    /// \return true if its messages are striped over all equal-cost ports
    bool GetSprayPackets() const;

    /// \return packets this GPU forwarded for others (an output port took them)
    uint64_t GetForwardedPackets() const;
    /// \return packets of others dropped because forwarding is off (also
    ///         counted by GetNoRouteDrops and the NoRouteDrop trace)
    uint64_t GetRefusedPackets() const;
    /// \return true if this GPU relays packets of other ranks
    bool GetForwarding() const;

  protected:
    void HandlePacket(FabricNetDevice* port,
                      const Ptr<Packet>& p,
                      const FabricHeaderData& h) override;
    void DoDispose() override;

  private:
    uint32_t m_rank{0};         //!< global rank
    bool m_forwarding{true};    //!< relay packets of other ranks
    bool m_spray{true};         //!< stripe own messages over equal-cost ports
    uint64_t m_forwarded{0};    //!< relayed packets
    uint64_t m_refused{0};      //!< packets dropped with forwarding off
    DeliveryCallback m_deliver; //!< local delivery
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_GPU_H
