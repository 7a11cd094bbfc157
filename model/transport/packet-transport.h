/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_PACKET_TRANSPORT_H
#define GPU_FABRIC_PACKET_TRANSPORT_H

#include "fabric-transport.h"

#include "ns3/fabric-gpu.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Reliable RDMA-like messages over the packet-level fabric.
 *
 * A message is cut into packets of the fabric's MTU (one FabricHeader each)
 * and leaves on the port the GPU's routing table gives its flow (ECMP on
 * source, destination and the message's flow label), or striped over all
 * NVLink ports.  Messages to one destination through one port form a
 * connection (a queue pair) and are sent in order, so that chunked
 * collectives pipeline; each port serves its busy connections packet by
 * packet in round robin, and is fed only when its queue holds at most one
 * packet, so that a GPU injects at line rate and link-level flow control
 * backs up into the transport instead of dropping.
 * Links are lossless by default, so no retransmission is modelled.
 */
class PacketTransport : public Transport
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    PacketTransport();

    /**
     * Serve these GPUs (index = rank).
     * \param gpus the GPUs, in rank order, with their ports attached
     */
    void Install(const std::vector<Ptr<FabricGpu>>& gpus);

    uint64_t Send(uint32_t srcRank, uint32_t dstRank, uint64_t bytes, DoneCallback done) override;

    /**
     * Send a message along a registered explicit route (see
     * Fabric::RegisterRoute) instead of the forwarding tables.
     * \param srcRank sender \param dstRank receiver \param bytes payload
     * \param routeId the route \param done delivery callback
     * \return the message id
     */
    uint64_t SendRouted(uint32_t srcRank,
                        uint32_t dstRank,
                        uint64_t bytes,
                        uint16_t routeId,
                        DoneCallback done);

    /// \param routes the fabric's explicit routes
    void SetSourceRoutes(std::shared_ptr<const FabricSourceRoutes> routes);
    uint32_t GetNRanks() const override;
    Totals GetTotals() const override;

    /// \return payload bytes per packet (smallest MTU minus the header)
    uint32_t GetPayloadPerPacket() const;
    /// \return packets delivered so far
    uint64_t GetPacketsDelivered() const;
    /// \return delivered packets that carried an ECN mark
    uint64_t GetEcnMarkedPackets() const;

    /// Signature of the MessageComplete trace: src, dst, bytes, send time.
    typedef void (*MessageCompleteTracedCallback)(uint32_t, uint32_t, uint64_t, Time);

  protected:
    void DoDispose() override;

  private:
    struct Message
    {
        uint32_t src{0};
        uint32_t dst{0};
        uint64_t bytes{0};
        uint64_t queued{0};    //!< bytes already packetized
        uint64_t delivered{0}; //!< bytes delivered
        uint32_t nextSeq{0};
        uint16_t flowLabel{0};
        uint32_t queueRefs{0}; //!< entries in port queues (the id is reused only at 0)
        bool routed{false};    //!< follows a source route (flowLabel = route id)
        bool completed{false};
        Time start;
        DoneCallback done;
    };

    uint32_t NewMessage(uint32_t srcRank, uint32_t dstRank, uint64_t bytes, DoneCallback done);
    bool Local(uint32_t id);
    [[noreturn]] void Reject(uint32_t id, const std::string& why);
    void Queue(uint32_t id, const std::vector<FabricNetDevice*>& ports);
    void TxReady(Ptr<FabricNetDevice> port);
    void Pump(FabricNetDevice* port);
    void Deliver(Ptr<Packet> p, const FabricHeader& h);
    void Complete(uint32_t id);
    void Release(uint32_t id);

    std::vector<Ptr<FabricGpu>> m_gpus; //!< rank -> GPU

    /// Messages from one GPU to one destination through one port, served in
    /// order (a queue pair); ports serve their connections in round robin.
    struct Connection
    {
        std::deque<uint32_t> messages; //!< message ids, first in first out
    };

    /// Per GPU: its connections and, per port, the round robin of busy ones.
    struct Endpoint
    {
        std::unordered_map<uint64_t, uint32_t> index; //!< (dst, port) -> connection
        std::vector<Connection> connections;          //!< by index
        std::vector<std::deque<uint32_t>> busy;       //!< per port: connections with data
    };

    std::vector<Endpoint> m_endpoints;                        //!< by rank
    std::shared_ptr<const FabricSourceRoutes> m_sourceRoutes; //!< explicit routes
    std::vector<Message> m_messages;                          //!< by id
    std::vector<uint32_t> m_free;                             //!< recycled ids
    uint32_t m_payload{0};                                    //!< payload bytes per packet
    Totals m_totals;
    uint64_t m_packetsDelivered{0};
    uint64_t m_ecnMarked{0};
    TracedCallback<uint32_t, uint32_t, uint64_t, Time> m_completeTrace;
};

} // namespace ns3

#endif // GPU_FABRIC_PACKET_TRANSPORT_H
