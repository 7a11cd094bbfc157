/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The records frames cross ranks in (FabricAppendRecord, FabricReadRecord):
 * every kind of frame is read back as it was written, byte for byte, tag for
 * tag; only plain fabric frames take the short form, and a batch never grows
 * past its limit.
 */
#include "../model/fabric/fabric-internal.h"

#include "ns3/packet.h"
#include "ns3/socket.h"

#include <cstring>
#include <gtest/gtest.h>
#include <vector>

using namespace ns3;

namespace
{

/// A data packet as PacketTransport makes one: zeros, then its header.
Ptr<Packet>
DataPacket(const FabricHeaderData& h, uint32_t payload)
{
    Ptr<Packet> p = Create<Packet>(payload);
    p->AddHeader(FabricHeader(h));
    return p;
}

FabricHeaderData
SomeHeader()
{
    FabricHeaderData h;
    h.src = 7;
    h.dst = 1'000'003;
    h.messageId = 42;
    h.sequence = 9;
    h.flowLabel = 0xBEEF;
    h.flags = FabricHeader::kFlagCe | FabricHeader::kFlagLast | FabricHeader::kFlagCc;
    h.hop = 3;
    return h;
}

FabricRemoteEnvelope
FrameEnvelope(const FabricHeaderData& h)
{
    FabricRemoteEnvelope e;
    e.kind = FabricRemoteEnvelope::kFrame;
    e.epoch = 5;
    e.meta.header = h;
    e.meta.hasHeader = true;
    return e;
}

FabricMessageInfo
SomeInfo()
{
    FabricMessageInfo info;
    info.bytes = 1ULL << 40;
    info.start = -12345;
    info.sink = 77;
    info.cookie = 0xFEEDFACECAFEULL;
    info.hasSink = true;
    info.serial = 31;
    info.mayReorder = true;
    return info;
}

std::vector<uint8_t>
Bytes(const Packet& p)
{
    std::vector<uint8_t> out(p.GetSize());
    p.CopyData(out.data(), p.GetSize());
    return out;
}

/// Write one record, read it back; \return it, and its size in \p size.
FabricRecord
RoundTrip(const FabricRemoteEnvelope* e, const Packet* p, uint32_t& size)
{
    std::vector<uint8_t> batch;
    size = FabricAppendRecord(batch, 1800, e, p, NanoSeconds(123'456), 17, 4);
    EXPECT_EQ(batch.size(), size);
    const uint8_t* at = batch.data();
    FabricRecord r = FabricReadRecord(at, batch.data() + batch.size());
    EXPECT_EQ(at, batch.data() + batch.size()) << "the record is read to its end";
    EXPECT_EQ(r.rxTime, NanoSeconds(123'456));
    EXPECT_EQ(r.node, 17u);
    EXPECT_EQ(r.ifIndex, 4u);
    EXPECT_EQ(r.hasEnvelope, e != nullptr);
    if (e != nullptr)
    {
        EXPECT_EQ(r.envelope.kind, e->kind);
        EXPECT_EQ(r.envelope.epoch, e->epoch);
        EXPECT_EQ(r.envelope.meta.hasHeader, e->meta.hasHeader);
        if (e->meta.hasHeader)
        {
            EXPECT_EQ(
                std::memcmp(&r.envelope.meta.header, &e->meta.header, sizeof(FabricHeaderData)),
                0);
        }
    }
    EXPECT_TRUE(r.packet);
    if (p != nullptr && r.packet)
    {
        EXPECT_EQ(r.packet->GetSize(), p->GetSize());
        EXPECT_EQ(Bytes(*r.packet), Bytes(*p)) << "header and payload, byte for byte";
        EXPECT_EQ(r.packet->GetSerializedSize(), p->GetSerializedSize())
            << "the same written bytes, tags and metadata";
    }
    return r;
}

/// The FabricMessageInfo of \p p's tag (bytes is 0 without one).
FabricMessageInfo
InfoOf(const Packet& p)
{
    FabricMessageTag tag;
    p.PeekPacketTag(tag);
    return tag.info;
}

} // namespace

TEST(RemoteRecord, APlainDataFrameCrossesAsFieldsAndComesBackTheSame)
{
    const FabricHeaderData h = SomeHeader();
    const FabricRemoteEnvelope e = FrameEnvelope(h);
    for (const bool tagged : {false, true})
    {
        SCOPED_TRACE(tagged);
        Ptr<Packet> p = DataPacket(h, 4096);
        if (tagged)
        {
            FabricMessageTag tag;
            tag.info = SomeInfo();
            p->AddPacketTag(tag);
        }
        uint32_t size = 0;
        const FabricRecord r = RoundTrip(&e, PeekPointer(p), size);
        EXPECT_TRUE(r.asFields);
        const FabricMessageInfo got = InfoOf(*r.packet);
        const FabricMessageInfo want = tagged ? SomeInfo() : FabricMessageInfo();
        EXPECT_EQ(got.bytes, want.bytes);
        EXPECT_EQ(got.start, want.start);
        EXPECT_EQ(got.sink, want.sink);
        EXPECT_EQ(got.cookie, want.cookie);
        EXPECT_EQ(got.hasSink, want.hasSink);
        EXPECT_EQ(got.serial, want.serial);
        EXPECT_EQ(got.mayReorder, want.mayReorder);
        // the record without Packet::Serialize: the fixed part (21 bytes),
        // kind and epoch (5), the header's fields and, tagged, the tag's (41)
        EXPECT_EQ(size, 21u + 5u + sizeof(FabricHeaderData) + (tagged ? 41u : 0u));
        // and what the same frame takes serialized, for the comparison
        FabricRemoteEnvelope ip = e;
        ip.meta.hasHeader = false; // a frame without a header's copy crosses serialized
        uint32_t serialized = 0;
        EXPECT_FALSE(RoundTrip(&ip, PeekPointer(p), serialized).asFields);
        EXPECT_EQ(serialized, 21u + 5u + p->GetSerializedSize());
        EXPECT_LT(size, serialized);
    }
}

TEST(RemoteRecord, ACnpAndAnEmptyFrameCrossAsFields)
{
    FabricHeaderData h = SomeHeader();
    h.flags = FabricHeader::kFlagCnp;
    const FabricRemoteEnvelope e = FrameEnvelope(h);
    for (const uint32_t payload : {0u, 1u, 2u, 38u})
    {
        SCOPED_TRACE(payload);
        const Ptr<Packet> p = DataPacket(h, payload);
        uint32_t size = 0;
        EXPECT_TRUE(RoundTrip(&e, PeekPointer(p), size).asFields);
    }
}

TEST(RemoteRecord, AnythingElseCrossesSerializedAndComesBackTheSame)
{
    const FabricHeaderData plain = SomeHeader();
    uint32_t size = 0;
    {
        SCOPED_TRACE("an ACK: its own header follows the fabric header");
        FabricHeaderData h = plain;
        h.flags = FabricHeader::kFlagAck;
        Ptr<Packet> p = Create<Packet>(22);
        FabricAckHeader ack;
        ack.ackedBytes = 1'000'000;
        ack.markedBytes = 4'096;
        p->AddHeader(ack);
        p->AddHeader(FabricHeader(h));
        const FabricRemoteEnvelope e = FrameEnvelope(h);
        const FabricRecord r = RoundTrip(&e, PeekPointer(p), size);
        EXPECT_FALSE(r.asFields);
        FabricHeader back;
        r.packet->RemoveHeader(back);
        FabricAckHeader ackBack;
        r.packet->RemoveHeader(ackBack);
        EXPECT_EQ(ackBack.ackedBytes, 1'000'000u);
        EXPECT_EQ(ackBack.markedBytes, 4'096u);
    }
    {
        SCOPED_TRACE("a packet tag other than FabricMessageTag");
        Ptr<Packet> p = DataPacket(plain, 1000);
        SocketPriorityTag priority;
        priority.SetPriority(6);
        p->AddPacketTag(priority);
        const FabricRemoteEnvelope e = FrameEnvelope(plain);
        const FabricRecord r = RoundTrip(&e, PeekPointer(p), size);
        EXPECT_FALSE(r.asFields);
        SocketPriorityTag back;
        ASSERT_TRUE(r.packet->PeekPacketTag(back));
        EXPECT_EQ(back.GetPriority(), 6);
    }
    {
        SCOPED_TRACE("a byte tag");
        Ptr<Packet> p = DataPacket(plain, 1000);
        SocketPriorityTag priority;
        p->AddByteTag(priority);
        const FabricRemoteEnvelope e = FrameEnvelope(plain);
        const FabricRecord r = RoundTrip(&e, PeekPointer(p), size);
        EXPECT_FALSE(r.asFields);
        EXPECT_TRUE(r.packet->GetByteTagIterator().HasNext());
    }
    for (const uint8_t extra : {1, 2, 3})
    {
        // ns-3 rounds written bytes up to 4 in its serialization, so one or
        // two more bytes after the header would not change its length
        SCOPED_TRACE(static_cast<int>(extra));
        const std::vector<uint8_t> tail(extra, 0xAB);
        Ptr<Packet> p = Create<Packet>(tail.data(), extra);
        p->AddHeader(FabricHeader(plain));
        const FabricRemoteEnvelope e = FrameEnvelope(plain);
        EXPECT_FALSE(RoundTrip(&e, PeekPointer(p), size).asFields);
    }
    {
        SCOPED_TRACE("a PFC frame: an envelope, no packet");
        FabricRemoteEnvelope e;
        e.kind = FabricRemoteEnvelope::kPause;
        e.epoch = 2;
        const FabricRecord r = RoundTrip(&e, nullptr, size);
        EXPECT_FALSE(r.asFields);
        EXPECT_EQ(r.packet->GetSize(), 0u);
        EXPECT_EQ(size, 21u + 5u);
    }
    {
        SCOPED_TRACE("a transport word: an envelope and real bytes");
        FabricRemoteEnvelope e;
        e.kind = FabricRemoteEnvelope::kTransport;
        const std::vector<uint8_t> word{1, 2, 3, 4, 5, 6, 7, 8, 9};
        const Ptr<Packet> p = Create<Packet>(word.data(), 9);
        EXPECT_FALSE(RoundTrip(&e, PeekPointer(p), size).asFields);
    }
    {
        SCOPED_TRACE("FabricDistributed::SendPacket's: no envelope");
        const Ptr<Packet> p = DataPacket(plain, 100);
        EXPECT_FALSE(RoundTrip(nullptr, PeekPointer(p), size).asFields);
    }
}

TEST(RemoteRecord, ABatchStopsAtItsLimitAndReadsBackInOrder)
{
    const FabricHeaderData h = SomeHeader();
    const FabricRemoteEnvelope e = FrameEnvelope(h);
    std::vector<uint8_t> batch;
    const uint32_t limit = 1800;
    uint32_t written = 0;
    for (uint32_t i = 0;; ++i)
    {
        FabricHeaderData hi = h;
        hi.sequence = i;
        FabricRemoteEnvelope ei = e;
        ei.meta.header = hi;
        const Ptr<Packet> p = DataPacket(hi, 4096);
        const size_t before = batch.size();
        const uint32_t size =
            FabricAppendRecord(batch, limit, &ei, PeekPointer(p), NanoSeconds(i), i, 0);
        if (batch.size() == before)
        {
            EXPECT_GT(before + size, limit) << "refused only when it would not fit";
            break;
        }
        EXPECT_EQ(batch.size(), before + size);
        ++written;
    }
    EXPECT_LE(batch.size(), limit);
    EXPECT_EQ(written, limit / (21 + 5 + sizeof(FabricHeaderData)));
    const uint8_t* at = batch.data();
    for (uint32_t i = 0; i < written; ++i)
    {
        const FabricRecord r = FabricReadRecord(at, batch.data() + batch.size());
        EXPECT_EQ(r.envelope.meta.header.sequence, i);
        EXPECT_EQ(r.rxTime, NanoSeconds(i));
        EXPECT_EQ(r.packet->GetSize(), 4096u + FabricHeader::kSerializedSize);
    }
    EXPECT_EQ(at, batch.data() + batch.size());
}

TEST(RemoteRecordDeathTest, ATruncatedBatchAbortsByName)
{
    const FabricHeaderData h = SomeHeader();
    const FabricRemoteEnvelope e = FrameEnvelope(h);
    const Ptr<Packet> p = DataPacket(h, 64);
    std::vector<uint8_t> batch;
    FabricAppendRecord(batch, 1800, &e, PeekPointer(p), Time(0), 0, 0);
    for (const size_t cut : {size_t{1}, size_t{20}, batch.size() - 1})
    {
        const uint8_t* at = batch.data();
        EXPECT_DEATH(FabricReadRecord(at, batch.data() + cut), "a truncated batch");
    }
}
