/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-header.h"

#include "ns3/packet.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FabricHeader);

TypeId
FabricHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FabricHeader")
                            .SetParent<Header>()
                            .SetGroupName("GpuFabric")
                            .AddConstructor<FabricHeader>();
    return tid;
}

TypeId
FabricHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
FabricHeader::GetSerializedSize() const
{
    return kSerializedSize;
}

namespace
{

// Big-endian field writers and readers over a plain byte array: the header is
// built in one array and copied into the packet with one Write (one bounds
// check instead of one per field: a packet's creation is on the hot path).
uint8_t*
PutBe(uint8_t* b, uint32_t v, int bytes)
{
    for (int k = bytes - 1; k >= 0; --k)
    {
        b[k] = static_cast<uint8_t>(v);
        v >>= 8;
    }
    return b + bytes;
}

uint32_t
GetBe(const uint8_t* b, int bytes)
{
    uint32_t v = 0;
    for (int k = 0; k < bytes; ++k)
    {
        v = v << 8 | b[k];
    }
    return v;
}

} // namespace

void
FabricHeader::Serialize(Buffer::Iterator i) const
{
    // Locally administered MAC addresses carrying the ranks.
    uint8_t b[kSerializedSize];
    uint8_t* w = PutBe(b, 0x0200, 2);
    w = PutBe(w, dst, 4);
    w = PutBe(w, 0x0200, 2);
    w = PutBe(w, src, 4);
    w = PutBe(w, kEtherType, 2);
    w = PutBe(w, messageId, 4);
    w = PutBe(w, sequence, 4);
    w = PutBe(w, flowLabel, 2);
    w = PutBe(w, flags, 1);
    PutBe(w, hop, 1);
    i.Write(b, kSerializedSize);
}

bool
FabricHeader::IsFabricFrame(const Packet& p)
{
    uint8_t eth[kSerializedSize];
    return p.CopyData(eth, sizeof(eth)) == sizeof(eth) &&
           static_cast<uint16_t>(eth[12] << 8 | eth[13]) == kEtherType;
}

uint32_t
FabricHeader::Deserialize(Buffer::Iterator i)
{
    uint8_t b[kSerializedSize];
    i.Read(b, kSerializedSize);
    dst = GetBe(b + 2, 4);
    src = GetBe(b + 8, 4);
    messageId = GetBe(b + 14, 4);
    sequence = GetBe(b + 18, 4);
    flowLabel = static_cast<uint16_t>(GetBe(b + 22, 2));
    flags = b[24];
    hop = b[25];
    return kSerializedSize;
}

void
FabricHeader::Print(std::ostream& os) const
{
    os << "src=" << src << " dst=" << dst << " msg=" << messageId << " seq=" << sequence
       << " flow=" << flowLabel << " flags=" << static_cast<uint32_t>(flags)
       << " hop=" << static_cast<uint32_t>(hop);
}

NS_OBJECT_ENSURE_REGISTERED(FabricAckHeader);

TypeId
FabricAckHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FabricAckHeader")
                            .SetParent<Header>()
                            .SetGroupName("GpuFabric")
                            .AddConstructor<FabricAckHeader>();
    return tid;
}

TypeId
FabricAckHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
FabricAckHeader::GetSerializedSize() const
{
    return kSerializedSize;
}

void
FabricAckHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteHtonU64(ackedBytes);
    start.WriteHtonU64(markedBytes);
}

uint32_t
FabricAckHeader::Deserialize(Buffer::Iterator start)
{
    ackedBytes = start.ReadNtohU64();
    markedBytes = start.ReadNtohU64();
    return kSerializedSize;
}

void
FabricAckHeader::Print(std::ostream& os) const
{
    os << "acked=" << ackedBytes << " marked=" << markedBytes;
}

NS_OBJECT_ENSURE_REGISTERED(FabricIntHeader);

FabricIntHeader
FabricIntHeader::Of(const Packet& p)
{
    Ptr<Packet> copy = p.Copy();
    FabricHeader h;
    copy->RemoveHeader(h);
    FabricIntHeader telemetry;
    copy->PeekHeader(telemetry);
    return telemetry;
}

TypeId
FabricIntHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FabricIntHeader")
                            .SetParent<Header>()
                            .SetGroupName("GpuFabric")
                            .AddConstructor<FabricIntHeader>();
    return tid;
}

TypeId
FabricIntHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
FabricIntHeader::GetSerializedSize() const
{
    return 9 + 20 * uint32_t{nHops};
}

void
FabricIntHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteHtonU64(sentNs);
    start.WriteU8(nHops);
    for (uint32_t i = 0; i < nHops; ++i)
    {
        start.WriteHtonU32(hops[i].queueBytes);
        start.WriteHtonU32(hops[i].rateMbps);
        start.WriteHtonU32(hops[i].txBytes);
        start.WriteHtonU32(hops[i].timeNs);
        start.WriteHtonU32(hops[i].port);
    }
}

uint32_t
FabricIntHeader::Deserialize(Buffer::Iterator start)
{
    sentNs = start.ReadNtohU64();
    nHops = std::min<uint8_t>(start.ReadU8(), kMaxHops);
    for (uint32_t i = 0; i < nHops; ++i)
    {
        hops[i].queueBytes = start.ReadNtohU32();
        hops[i].rateMbps = start.ReadNtohU32();
        hops[i].txBytes = start.ReadNtohU32();
        hops[i].timeNs = start.ReadNtohU32();
        hops[i].port = start.ReadNtohU32();
    }
    return GetSerializedSize();
}

void
FabricIntHeader::Print(std::ostream& os) const
{
    os << "sent=" << sentNs << "ns hops=" << static_cast<uint32_t>(nHops);
    for (uint32_t i = 0; i < nHops; ++i)
    {
        os << " [q=" << hops[i].queueBytes << " rate=" << hops[i].rateMbps
           << "Mbps tx=" << hops[i].txBytes << " t=" << hops[i].timeNs << "]";
    }
}

} // namespace ns3
