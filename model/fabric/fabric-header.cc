/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-header.h"

#include "ns3/packet.h"

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

void
FabricHeader::Serialize(Buffer::Iterator i) const
{
    // Locally administered MAC addresses carrying the ranks.
    i.WriteU8(0x02);
    i.WriteU8(0x00);
    i.WriteHtonU32(dst);
    i.WriteU8(0x02);
    i.WriteU8(0x00);
    i.WriteHtonU32(src);
    i.WriteHtonU16(kEtherType);
    i.WriteHtonU32(messageId);
    i.WriteHtonU32(sequence);
    i.WriteHtonU16(flowLabel);
    i.WriteU8(flags);
    i.WriteU8(hop);
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
    i.Next(2);
    dst = i.ReadNtohU32();
    i.Next(2);
    src = i.ReadNtohU32();
    i.Next(2);
    messageId = i.ReadNtohU32();
    sequence = i.ReadNtohU32();
    flowLabel = i.ReadNtohU16();
    flags = i.ReadU8();
    hop = i.ReadU8();
    return kSerializedSize;
}

void
FabricHeader::Print(std::ostream& os) const
{
    os << "src=" << src << " dst=" << dst << " msg=" << messageId << " seq=" << sequence
       << " flow=" << flowLabel << " flags=" << static_cast<uint32_t>(flags)
       << " hop=" << static_cast<uint32_t>(hop);
}

} // namespace ns3
