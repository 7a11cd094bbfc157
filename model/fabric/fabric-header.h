/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_HEADER_H
#define GPU_FABRIC_FABRIC_HEADER_H

#include "ns3/header.h"

#include <array>
#include <cstdint>

namespace ns3
{

class Packet;

/**
 * \ingroup gpu-fabric
 * \brief The fields of a FabricHeader as plain data: what the data plane
 * passes along beside a packet from hop to hop (cheap to copy, unlike an
 * ns-3 Header object).
 */
struct FabricHeaderData
{
    uint32_t src{0};       //!< source rank
    uint32_t dst{0};       //!< destination rank
    uint32_t messageId{0}; //!< transport message id
    uint32_t sequence{0};  //!< packet index within the message
    uint16_t flowLabel{0}; //!< ECMP entropy of the message's flow
    uint8_t flags{0};      //!< FabricHeader::kFlagCe ... kFlagNack
    uint8_t hop{0};        //!< hops taken so far (source-routed packets)
};

/**
 * \ingroup gpu-fabric
 * \brief The one compact header every fabric packet carries (26 bytes).
 *
 * It is laid out as an Ethernet II frame header so that PCAP captures open in
 * Wireshark/tshark as Ethernet (DLT_EN10MB) with the local experimental
 * EtherType 0x88B5:
 *
 *   dst MAC (6) = 02:00:<dst rank, 4 bytes big-endian>
 *   src MAC (6) = 02:00:<src rank>
 *   EtherType (2) = 0x88B5
 *   message id (4), packet sequence number within the message (4),
 *   flow label (2, the ECMP entropy, like RoCEv2's UDP source port),
 *   flags (1: bit 0 = ECN congestion experienced (on an ACK: ECN echo), bit 1 =
 *   last packet, bit 2 = source-routed, bit 3 = ACK, bit 4 = CNP, bit 5 =
 *   congestion-controlled data, bit 6 = INT follows, bit 7 = NACK), hop (1:
 *   hops taken, source-routed packets).
 *
 * ACKs and CNPs (sent only with congestion control on) and NACKs (sent only
 * with PacketTransport::Nack; the sequence field names the packet the
 * receiver expects) are the control class:
 * every port sends them ahead of data, they are never paused by PFC, never
 * marked and never charged to an input port.
 *
 * A source-routed packet carries its route id in the flow label: every node
 * takes the output port of hop `hop` of that route from the fabric's
 * FabricSourceRoutes instead of its forwarding table.
 *
 * The payload is not carried as real bytes (ns-3's zero-filled virtual
 * payload), so the header is the only per-packet data.
 */
class FabricHeader : public Header, public FabricHeaderData
{
  public:
    FabricHeader() = default;

    /// \param data the fields
    explicit FabricHeader(const FabricHeaderData& data)
        : FabricHeaderData(data)
    {
    }

    static constexpr uint32_t kSerializedSize = 26;   //!< bytes on the wire
    static constexpr uint16_t kEtherType = 0x88B5;    //!< IEEE local experimental
    static constexpr uint8_t kFlagCe = 0x01;          //!< ECN congestion experienced
    static constexpr uint8_t kFlagLast = 0x02;        //!< last packet of a message
    static constexpr uint8_t kFlagSourceRoute = 0x04; //!< follows a registered route
    static constexpr uint8_t kFlagAck = 0x08;         //!< an ACK (FabricAckHeader follows)
    static constexpr uint8_t kFlagCnp = 0x10;         //!< a congestion notification packet
    /// a data packet its sender's congestion control tracks: the receiver
    /// acknowledges it (and sends CNPs for it when marked)
    static constexpr uint8_t kFlagCc = 0x20;
    /// a FabricIntHeader follows (after the FabricAckHeader on an ACK):
    /// switches append a hop of telemetry to a data packet that carries one
    static constexpr uint8_t kFlagInt = 0x40;
    /// a NACK: the receiver found a gap before packet `sequence` of the message
    static constexpr uint8_t kFlagNack = 0x80;
    /// the control class
    static constexpr uint8_t kControlFlags = kFlagAck | kFlagCnp | kFlagNack;

    /**
     * \param p a frame
     * \return true if \p p starts with a FabricHeader (its EtherType is
     *         kEtherType); a frame NetDevice::Send framed (IP) does not
     */
    static bool IsFabricFrame(const Packet& p);

    /// \return the TypeId
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;
};

/**
 * \ingroup gpu-fabric
 * \brief What an ACK carries after its FabricHeader (16 bytes): the
 * receiver's running totals for the flow (sender, receiver), so that a lost
 * ACK is made good by the next one.
 */
class FabricAckHeader : public Header
{
  public:
    uint64_t ackedBytes{0};  //!< payload bytes of the flow received so far
    uint64_t markedBytes{0}; //!< of which arrived marked CE

    static constexpr uint32_t kSerializedSize = 16; //!< bytes on the wire

    /// \return the TypeId
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;
};

/**
 * \ingroup gpu-fabric
 * \brief In-band network telemetry (INT), as HPCC reads it: the sender's
 * send time, then one record per switch egress the packet passed (9 + 20
 * bytes per hop on the wire). An ACK echoes its data packet's.
 *
 * Each hop: the egress queue's bytes when the packet left, the link rate,
 * the port's transmitted bytes and clock (ns), both modulo 2^32, so a reader
 * takes differences of two records of the same port, and the port's id (so
 * that records of different paths are not compared).
 */
class FabricIntHeader : public Header
{
  public:
    /// One switch egress.
    struct Hop
    {
        uint32_t queueBytes{0}; //!< bytes queued behind the packet as it left
        uint32_t rateMbps{0};   //!< the link's rate, Mb/s
        uint32_t txBytes{0};    //!< bytes the port had sent, modulo 2^32
        uint32_t timeNs{0};     //!< when it left, ns modulo 2^32
        uint32_t port{0};       //!< which egress: node id x 2^16 + port index (mod 2^32)
    };

    static constexpr uint32_t kMaxHops = 8; //!< records kept (more hops: not recorded)

    uint64_t sentNs{0};               //!< the sender's send time, ns
    uint8_t nHops{0};                 //!< records that follow
    std::array<Hop, kMaxHops> hops{}; //!< the records

    /**
     * \param p a data frame whose FabricHeader has kFlagInt
     * \return the telemetry that follows its FabricHeader
     */
    static FabricIntHeader Of(const Packet& p);

    /// \return the TypeId
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;
};

/**
 * \ingroup gpu-fabric
 * \brief What travels beside a packet from port to port: its header's
 * fields when the sender knew them (the next node then routes without
 * parsing the packet's bytes).
 */
struct FabricFrameMeta
{
    FabricHeaderData header; //!< the header's fields, if hasHeader
    bool hasHeader{false};   //!< header is valid
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_HEADER_H
