/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// How a frame is written into a batch that crosses ranks, and read back
// (FabricAppendRecord, FabricReadRecord). No MPI here: the records are plain
// bytes, so the one-process tests check them too.
#include "fabric-internal.h"

#include "ns3/abort.h"
#include "ns3/header.h"
#include "ns3/packet.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>

namespace ns3
{

namespace
{

/// A record's format byte: how its frame crosses.
enum Format : uint8_t
{
    kPacket = 0,         //!< SendPacket: the packet serialized
    kEnvelope = 1,       //!< kind, epoch, the packet serialized
    kEnvelopeHeader = 2, //!< kind, epoch, the frame's header fields, the packet serialized
    kFields = 3,         //!< kind, epoch, header fields: the packet is that header and zeros
    kFieldsTagged = 4,   //!< kFields, then the FabricMessageTag's fields
};

/// rxTime, node, ifIndex, size (serialized, or the packet's own with kFields), format
constexpr uint32_t kRecordHeader = 8 + 4 + 4 + 4 + 1;
constexpr uint32_t kEnvelopeSize = 1 + 4; //!< kind, epoch
static_assert(std::is_trivially_copyable_v<FabricHeaderData>, "copied as bytes");
constexpr uint32_t kHeaderFields = sizeof(FabricHeaderData);

/// What follows a record's fixed part: \p format's fields, and the packet
/// serialized (\p size bytes) unless it crosses as fields.
uint32_t
BodyBytes(Format format, uint32_t size)
{
    const bool fields = format == kFields || format == kFieldsTagged;
    return (format == kPacket ? 0 : kEnvelopeSize) +
           (format >= kEnvelopeHeader ? kHeaderFields : 0) +
           (format == kFieldsTagged ? FabricMessageInfo::kSerializedSize : 0) + (fields ? 0 : size);
}

template <typename T>
void
Put(uint8_t*& at, T value)
{
    std::memcpy(at, &value, sizeof(T));
    at += sizeof(T);
}

template <typename T>
T
Take(const uint8_t*& at)
{
    T value;
    std::memcpy(&value, at, sizeof(T));
    at += sizeof(T);
    return value;
}

/**
 * What Packet::GetSerializedSize gives for a packet that is a FabricHeader
 * and zero-filled payload, without and with one FabricMessageTag: the
 * payload's length is not in it (ns-3 writes its zero area as a count).
 */
const std::array<uint32_t, 2>&
PlainSerializedSizes()
{
    static const std::array<uint32_t, 2> sizes = [] {
        Packet bare(100);
        bare.AddHeader(FabricHeader());
        Packet tagged(100);
        tagged.AddHeader(FabricHeader());
        tagged.AddPacketTag(FabricMessageTag());
        return std::array<uint32_t, 2>{bare.GetSerializedSize(), tagged.GetSerializedSize()};
    }();
    return sizes;
}

/**
 * Reads the (up to) two bytes after a FabricHeader, without copying the
 * header (Packet::CopyData reads byte by byte): as a header that starts
 * where the packet does.
 */
class BytesAfterHeader : public Header
{
  public:
    uint16_t bytes{0}; //!< what they hold (0: zeros, or none there)

    TypeId GetInstanceTypeId() const override
    {
        return Header::GetTypeId(); // never registered: it only reads
    }

    uint32_t GetSerializedSize() const override
    {
        return FabricHeader::kSerializedSize + 2;
    }

    void Serialize(Buffer::Iterator) const override
    {
        NS_FATAL_ERROR("BytesAfterHeader is only read");
    }

    uint32_t Deserialize(Buffer::Iterator start) override
    {
        const uint32_t size = start.GetSize();
        start.Next(FabricHeader::kSerializedSize);
        bytes = start.ReadU8();
        if (size > FabricHeader::kSerializedSize + 1)
        {
            bytes |= static_cast<uint16_t>(start.ReadU8()) << 8;
        }
        return std::min(size, FabricHeader::kSerializedSize + 2);
    }

    void Print(std::ostream& os) const override
    {
        os << "bytes=" << bytes;
    }
};

/**
 * Whether \p p is a plain fabric frame that can cross as fields: its bytes
 * the FabricHeader \p envelope holds and zeros, no byte tag, no packet tag
 * but (at most) one FabricMessageTag, which goes to \p info.
 * \return kFields or kFieldsTagged, or kPacket if it is not
 */
Format
FieldsFormat(const FabricRemoteEnvelope& envelope, const Packet& p, FabricMessageInfo& info)
{
    // an ACK's and a telemetry header follow the fabric header
    constexpr uint8_t kMoreHeaders = FabricHeader::kFlagAck | FabricHeader::kFlagInt;
    if (!envelope.meta.hasHeader || (envelope.meta.header.flags & kMoreHeaders) != 0 ||
        p.GetSize() < FabricHeader::kSerializedSize || p.GetByteTagIterator().HasNext())
    {
        return kPacket;
    }
    bool tagged = false;
    PacketTagIterator tags = p.GetPacketTagIterator();
    while (tags.HasNext())
    {
        const PacketTagIterator::Item item = tags.Next();
        if (tagged || item.GetTypeId() != FabricMessageTag::GetTypeId())
        {
            return kPacket;
        }
        FabricMessageTag tag;
        item.GetTag(tag);
        info = tag.info;
        tagged = true;
    }
    // One more check that nothing but the header is written: metadata, a
    // nix-vector or another header or trailer make the serialization
    // longer. ns-3 rounds written bytes up to 4, so the two bytes after the
    // header must be zeros too (whether written or not).
    if (p.GetSerializedSize() != PlainSerializedSizes()[tagged ? 1 : 0])
    {
        return kPacket;
    }
    if (p.GetSize() > FabricHeader::kSerializedSize)
    {
        BytesAfterHeader after;
        p.PeekHeader(after);
        if (after.bytes != 0)
        {
            return kPacket;
        }
    }
    return tagged ? kFieldsTagged : kFields;
}

} // namespace

uint32_t
FabricAppendRecord(std::vector<uint8_t>& out,
                   uint32_t limit,
                   const FabricRemoteEnvelope* envelope,
                   const Packet* p,
                   Time rxTime,
                   uint32_t node,
                   uint32_t ifIndex)
{
    FabricMessageInfo info;
    Format format = kPacket;
    if (envelope != nullptr)
    {
        format = p != nullptr && envelope->kind == FabricRemoteEnvelope::kFrame
                     ? FieldsFormat(*envelope, *p, info)
                     : kPacket;
        if (format == kPacket)
        {
            format = envelope->meta.hasHeader ? kEnvelopeHeader : kEnvelope;
        }
    }
    const bool fields = format == kFields || format == kFieldsTagged;
    const uint32_t size = p == nullptr ? 0 : fields ? p->GetSize() : p->GetSerializedSize();
    const uint32_t record = kRecordHeader + BodyBytes(format, size);
    if (out.size() + record > limit)
    {
        return record;
    }
    const size_t start = out.size();
    out.resize(start + record);
    uint8_t* at = &out[start];
    Put<int64_t>(at, rxTime.GetTimeStep());
    Put<uint32_t>(at, node);
    Put<uint32_t>(at, ifIndex);
    Put<uint32_t>(at, size);
    Put<uint8_t>(at, format);
    if (format != kPacket)
    {
        Put<uint8_t>(at, envelope->kind);
        Put<uint32_t>(at, envelope->epoch);
    }
    if (format >= kEnvelopeHeader)
    {
        Put<FabricHeaderData>(at, envelope->meta.header);
    }
    if (format == kFieldsTagged)
    {
        info.Write(at);
    }
    if (!fields && p != nullptr)
    {
        p->Serialize(at, size);
    }
    return record;
}

FabricRecord
FabricReadRecord(const uint8_t*& at, const uint8_t* end)
{
    const auto truncated = [&](uint32_t bytes) {
        NS_ABORT_MSG_IF(end - at < static_cast<std::ptrdiff_t>(bytes),
                        "FabricDistributed: a truncated batch");
    };
    truncated(kRecordHeader);
    FabricRecord r;
    r.rxTime = TimeStep(Take<int64_t>(at));
    r.node = Take<uint32_t>(at);
    r.ifIndex = Take<uint32_t>(at);
    const auto size = Take<uint32_t>(at);
    const auto format = static_cast<Format>(Take<uint8_t>(at));
    NS_ABORT_MSG_IF(format > kFieldsTagged,
                    "FabricDistributed: a record of unknown format "
                        << static_cast<uint32_t>(format));
    const bool fields = format == kFields || format == kFieldsTagged;
    truncated(BodyBytes(format, size));
    r.hasEnvelope = format != kPacket;
    if (r.hasEnvelope)
    {
        r.envelope.kind = Take<uint8_t>(at);
        r.envelope.epoch = Take<uint32_t>(at);
    }
    if (format >= kEnvelopeHeader)
    {
        r.envelope.meta.header = Take<FabricHeaderData>(at);
        r.envelope.meta.hasHeader = true;
    }
    if (fields)
    {
        NS_ABORT_MSG_IF(size < FabricHeader::kSerializedSize,
                        "FabricDistributed: a frame of " << size
                                                         << " bytes, shorter than its header");
        r.asFields = true;
        r.packet = Create<Packet>(size - FabricHeader::kSerializedSize);
        r.packet->AddHeader(FabricHeader(r.envelope.meta.header));
        if (format == kFieldsTagged)
        {
            FabricMessageTag tag;
            tag.info = FabricMessageInfo::Read(at);
            r.packet->AddPacketTag(tag);
        }
        return r;
    }
    r.packet = size > 0 ? Create<Packet>(at, size, true) : Create<Packet>();
    at += size;
    return r;
}

} // namespace ns3
