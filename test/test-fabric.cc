/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Data-plane tests: closed-form message times, incast fairness and
// losslessness, conservation, determinism, and rejection of bad input.
#include "record-now.h"
#include "scheduler-env.h"
#include "star-topology.h"
#include "tshark.h"

// FabricPrefetchingTxSource: the traffic source's look-ahead hook is internal
#include "../model/fabric/fabric-internal.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/error-model.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-helper.h"
#include "ns3/fabric-routing.h"
#include "ns3/fabric-switch.h"
#include "ns3/hb-domain-preset.h"
#include "ns3/hb-domain.h"
#include "ns3/node.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/pcap-file.h"
#include "ns3/pointer.h"
#include "ns3/queue-size.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/topology-builders.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <array>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

using gpu_fabric_test::RecordNow;
using gpu_fabric_test::Star;
using namespace ns3;

namespace
{

/// Each test owns the simulator for its duration.
class FabricTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
    }
};

/// Closed form of one uncontended message over `hops` links of equal rate:
/// all wire bytes serialize at the first hop; each further hop adds the
/// store-and-forward time of the largest packet (the pipeline's bottleneck
/// stage), and each link adds its delay.
double
StoreAndForwardTime(uint64_t bytes, uint32_t payload, double rateBps, uint32_t hops, double delayS)
{
    const uint64_t packets = (bytes + payload - 1) / payload;
    const double wire = bytes + packets * FabricHeader::kSerializedSize;
    const double largest = std::min<uint64_t>(bytes, payload) + FabricHeader::kSerializedSize;
    return (wire + (hops - 1) * largest) * 8 / rateBps + hops * delayS;
}

/// Two GPUs joined by one cable.
FabricTopology
OneLink(uint64_t rate, int64_t delayNs)
{
    FabricTopology topo("link");
    const uint32_t a = topo.AddGpu(-1, 0);
    const uint32_t b = topo.AddGpu(-1, 0);
    topo.AddCable(a, b, rate, delayNs, TopoLinkKind::Direct);
    return topo;
}

TEST_F(FabricTest, AForwardingPortWithASmallerMtuIsNamed)
{
    // The transport cuts 4122-byte frames (the GPU ports' Mtu); a switch
    // port set to 1500 afterwards cannot carry them: a configuration error
    // naming the port, not a silent pass or 64 retransmissions.
    Ptr<Fabric> fabric = FabricHelper().Install(Star(2, 100'000'000'000ULL, 1000));
    Ptr<FabricNetDevice> switchPort = fabric->GetCableDevices(1).second;
    switchPort->SetAttribute("Mtu", UintegerValue(1500));
    FabricHeader h;
    h.src = 0;
    h.dst = 1;
    Ptr<Packet> p = Create<Packet>(4096);
    p->AddHeader(h);
    try
    {
        switchPort->Enqueue(p, h, nullptr);
        FAIL() << "a 4122-byte frame passed a 1500-byte Mtu";
    }
    catch (const FabricConfigError& e)
    {
        const std::string what = e.what();
        EXPECT_NE(what.find("FabricNetDevice::Mtu"), std::string::npos) << what;
        EXPECT_NE(what.find("1500"), std::string::npos) << what;
        EXPECT_NE(what.find("4122-byte"), std::string::npos) << what;
    }
    EXPECT_EQ(switchPort->GetStats().txPackets, 0u);
    // a frame that fits still goes
    switchPort->SetAttribute("Mtu", UintegerValue(4122));
    EXPECT_TRUE(switchPort->Enqueue(p, h, nullptr));
    fabric->Dispose();
}

TEST_F(FabricTest, OneLinkMessageTimeIsClosedForm)
{
    const uint64_t rate = 400'000'000'000ULL;
    Ptr<Fabric> fabric = FabricHelper().Install(OneLink(rate, 700));
    Time done;
    const uint64_t bytes = 10'000'000; // not a multiple of the payload
    fabric->GetTransport()->Send(0, 1, bytes, MakeBoundCallback(&RecordNow, &done));
    Simulator::Run();
    const uint32_t payload = fabric->GetTransport()->GetPayloadPerPacket();
    EXPECT_EQ(payload, 4096u);
    const double expected = StoreAndForwardTime(bytes, payload, rate, 1, 700e-9);
    const double packetTime = (payload + FabricHeader::kSerializedSize) * 8.0 / rate;
    EXPECT_NEAR(done.GetSeconds(), expected, packetTime);
    EXPECT_NEAR(done.GetSeconds(), expected, 1e-9); // exact up to time resolution
}

TEST_F(FabricTest, ConnectionWindowPacesBySendsPerCreditRoundTrip)
{
    // One link, 400 Gb/s, 700 ns; a window of 4 packets and credits that come
    // back 1 us after delivery: packet k + 4 leaves when packet k's credit
    // returns, t_p + 700 ns + 1 us after packet k left (t_p: one packet's
    // serialization). 40 packets: the last leaves 3 t_p + 9 (t_p + 1.7 us)
    // after the first and arrives t_p + 700 ns later.
    const uint64_t rate = 400'000'000'000ULL;
    const FabricTopology topo = OneLink(rate, 700);
    const uint64_t bytes = 40 * 4096;
    const double tp = (4096 + FabricHeader::kSerializedSize) * 8.0 / rate;
    for (uint64_t window : {uint64_t{0}, uint64_t{4 * 4096}})
    {
        Ptr<Fabric> fabric = FabricHelper().Install(topo);
        Ptr<PacketTransport> t = fabric->GetTransport();
        t->SetAttribute("ConnectionWindow", UintegerValue(window));
        t->SetAttribute("CreditDelay", TimeValue(MicroSeconds(1)));
        Time done;
        t->Send(0, 1, bytes, MakeBoundCallback(&RecordNow, &done));
        Simulator::Run();
        const double expected = window == 0 ? StoreAndForwardTime(bytes, 4096, rate, 1, 700e-9)
                                            : 4 * tp + 9 * (tp + 1.7e-6) + 700e-9;
        EXPECT_NEAR(done.GetSeconds(), expected, 3e-9) << "window " << window;
        EXPECT_EQ(t->GetTotals().bytesDelivered, bytes);
        fabric->Dispose();
        Simulator::Destroy();
    }
}

TEST_F(FabricTest, SwitchHopAddsOnePacketAndOneDelay)
{
    const uint64_t rate = 100'000'000'000ULL;
    Ptr<Fabric> fabric = FabricHelper().Install(Star(2, rate, 1000));
    Time done;
    const uint64_t bytes = 3'000'000;
    fabric->GetTransport()->Send(1, 0, bytes, MakeBoundCallback(&RecordNow, &done));
    Simulator::Run();
    const double expected = StoreAndForwardTime(bytes, 4096, rate, 2, 1e-6);
    EXPECT_NEAR(done.GetSeconds(), expected, 1e-9);
    // A plain wire-bytes estimate without the store-and-forward packet is off
    // by exactly one packet time: the model is store-and-forward per hop.
    const double cutThrough = StoreAndForwardTime(bytes, 4096, rate, 1, 2e-6);
    EXPECT_GT(done.GetSeconds() - cutThrough, 0.9 * 4122 * 8.0 / rate);
}

TEST_F(FabricTest, OneMessageStripesOverNvSwitchPlanesAtFullNvlinkRate)
{
    // One DGX-H100 domain: 8 GPUs, 4 NVSwitch planes of 900 Gb/s each.
    FabricTopology topo("domain");
    const HbDomainPreset h100 = HbDomainPreset::Get("dgx-h100");
    AddHbDomains(topo, 8, h100);
    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    Time done;
    const uint64_t bytes = 8'000'000;
    fabric->GetTransport()->Send(0, 5, bytes, MakeBoundCallback(&RecordNow, &done));
    Simulator::Run();
    // Packets go round robin over the planes: the wire bytes drain at the
    // full NVLink rate, then the last packet crosses the NVSwitch.
    const double rate = h100.nvlinkRate.GetBitRate();
    const double planeRate = rate / 4;
    const uint64_t packets = (bytes + 4095) / 4096;
    const double wire = bytes + packets * FabricHeader::kSerializedSize;
    const double packetTime = 4122 * 8 / planeRate;
    const double expected = wire * 8 / rate + packetTime + 2 * 100e-9;
    EXPECT_NEAR(done.GetSeconds(), expected, packetTime);
}

TEST_F(FabricTest, AShortStripedMessageSendsOnePacketPerPlane)
{
    // 4 planes of 900 Gb/s: a message of fewer bytes than a full packet per
    // plane is cut into a packet per plane (of at least StripeMinPayload, 256
    // bytes), all sent at once: the last byte arrives after one such packet's
    // time at the GPU, one at the NVSwitch and two hops' latency. Whole
    // 4 KiB packets, it took 2 x 36.6 ns on one plane for 4 KiB (272 ns, now
    // 218 ns) while the other three idled.
    const HbDomainPreset h100 = HbDomainPreset::Get("dgx-h100");
    const double planeRate = h100.nvlinkRate.GetBitRate() / 4.0;
    // bytes, then the payload of its largest packet
    for (const auto& [bytes, payload] : std::vector<std::pair<uint64_t, uint32_t>>{
             {100, 100},     // one packet: too small to cut
             {1000, 256},    // 256, 256, 256, 232
             {4096, 1024},   // a quarter each
             {8192, 2048},   //
             {12340, 3085},  // not 3 full packets and a 52-byte one
             {16384, 4096}}) // a full packet per plane already
    {
        FabricTopology topo("domain");
        AddHbDomains(topo, 8, h100);
        Ptr<Fabric> fabric = FabricHelper().Install(topo);
        Time done;
        fabric->GetTransport()->Send(0, 5, bytes, MakeBoundCallback(&RecordNow, &done));
        Simulator::Run();
        const double packetTime = (payload + FabricHeader::kSerializedSize) * 8 / planeRate;
        const double expected = 2 * packetTime + 2 * h100.nvlinkLatency.GetSeconds();
        // each hop rounds its serialization down to a ns (the remainder
        // carried to its next packet)
        EXPECT_NEAR(done.GetSeconds(), expected, 2e-9) << bytes << " bytes";
        fabric->Dispose();
        Simulator::Destroy();
    }
}

TEST_F(FabricTest, ConcurrentShortStripedMessagesSpreadOverThePlanes)
{
    // Messages of one packet from GPU 0 at t = 0, to one destination and to
    // four: each takes a plane of its own (4 planes of 900 Gb/s), so every
    // one arrives after two packet times and two hops, as a lone packet does.
    // Each message starting on plane 0 stacked three there (TxFifoPackets
    // + 1), the second and third one and two packet times late.
    const HbDomainPreset h100 = HbDomainPreset::Get("dgx-h100");
    const double packetTime = 4122 * 8 / (h100.nvlinkRate.GetBitRate() / 4.0);
    const double lone = 2 * packetTime + 2 * h100.nvlinkLatency.GetSeconds();
    for (const bool oneDestination : {true, false})
    {
        FabricTopology topo("domain");
        AddHbDomains(topo, 8, h100);
        Ptr<Fabric> fabric = FabricHelper().Install(topo);
        // whole packets (not cut into a quarter per plane): the dealing of
        // messages that are, such as a short chunk of one to three packets
        fabric->GetTransport()->SetAttribute("StripeMinPayload", UintegerValue(4096));
        std::array<Time, 4> done;
        for (uint32_t i = 0; i < done.size(); ++i)
        {
            fabric->GetTransport()->Send(0,
                                         oneDestination ? 5 : 1 + i,
                                         4096,
                                         MakeBoundCallback(&RecordNow, &done[i]));
        }
        Simulator::Run();
        for (uint32_t i = 0; i < done.size(); ++i)
        {
            EXPECT_NEAR(done[i].GetSeconds(), lone, 2e-9)
                << "message " << i << (oneDestination ? " to GPU 5" : " to its own GPU");
        }
        // a fifth waits for a plane: one packet time behind the first
        Time fifth;
        Time start;
        Simulator::Schedule(MicroSeconds(1), [&fabric, &fifth, &done, &start]() {
            start = Simulator::Now();
            for (uint32_t i = 0; i < 5; ++i)
            {
                fabric->GetTransport()
                    ->Send(0, 5, 4096, MakeBoundCallback(&RecordNow, i < 4 ? &done[i] : &fifth));
            }
        });
        Simulator::Run();
        EXPECT_NEAR((fifth - start).GetSeconds(), lone + packetTime, 2e-9);
        fabric->Dispose();
        Simulator::Destroy();
    }
}

TEST_F(FabricTest, StripedMessagesSpreadTheirBytesNotTheirPacketCount)
{
    // 12,340-byte messages (three full packets and a 78-byte one) from GPU 0
    // to GPU 5 every 30 ns on a DGX-H100 domain: 92 % of the four planes'
    // rate. Each packet goes to the plane that will be free first, so the
    // planes share the bytes and every message takes about what the first
    // does. Dealt in turn by packet count, the short packet took a plane's
    // turn: three planes carried every full packet, more than they could,
    // and each message waited longer than the one before.
    const HbDomainPreset h100 = HbDomainPreset::Get("dgx-h100");
    FabricTopology topo("domain");
    AddHbDomains(topo, 8, h100);
    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    // whole packets, as a message of more than a full packet per plane has
    // (cut, each would be four of 3,085 bytes)
    fabric->GetTransport()->SetAttribute("StripeMinPayload", UintegerValue(4096));
    const double packetTime = 4122 * 8 / (h100.nvlinkRate.GetBitRate() / 4.0);
    std::array<Time, 50> sent;
    std::array<Time, 50> done;
    for (size_t i = 0; i < sent.size(); ++i)
    {
        Simulator::Schedule(NanoSeconds(30 * i), [&fabric, &sent, &done, i]() {
            sent[i] = Simulator::Now();
            fabric->GetTransport()->Send(0, 5, 12340, MakeBoundCallback(&RecordNow, &done[i]));
        });
    }
    Simulator::Run();
    const double first = (done[0] - sent[0]).GetSeconds();
    for (size_t i = 1; i < sent.size(); ++i)
    {
        EXPECT_LE((done[i] - sent[i]).GetSeconds(), first + packetTime) << "message " << i;
    }
}

TEST_F(FabricTest, HbDomainAttributesOverrideThePreset)
{
    // DGX-H100 with 2 planes of a 2.4 Tb/s NVLink and 250 ns per hop, set as
    // ns-3 attribute defaults (what --ns3::HbDomain::... does on a command line)
    Config::SetDefault("ns3::HbDomain::NvSwitchPlanes", UintegerValue(2));
    Config::SetDefault("ns3::HbDomain::NvLinkRate", DataRateValue(DataRate("2400Gbps")));
    Config::SetDefault("ns3::HbDomain::NvLinkLatency", TimeValue(NanoSeconds(250)));
    const HbDomainPreset hw = CreateObject<HbDomain>()->GetPlatform();
    Config::Reset();
    EXPECT_EQ(hw.gpusPerDomain, 8u);
    EXPECT_EQ(hw.nvswitchPlanes, 2u);
    EXPECT_EQ(hw.nvlinkRate.GetBitRate(), 2'400'000'000'000ULL);
    EXPECT_EQ(hw.nicRate, HbDomainPreset::Get("dgx-h100").nicRate);
    EXPECT_EQ(hw.name, "dgx-h100+attributes");
    FabricTopology topo("domain");
    AddHbDomains(topo, 8, hw);
    uint32_t planes = 0;
    for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
    {
        planes += topo.Node(v).kind == TopoNodeKind::NvSwitch;
    }
    EXPECT_EQ(planes, 2u);
    // one message stripes over the two planes: the closed form at the new figures
    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    Time done;
    const uint64_t bytes = 8'000'000;
    fabric->GetTransport()->Send(0, 5, bytes, MakeBoundCallback(&RecordNow, &done));
    Simulator::Run();
    const double rate = 2.4e12;
    const uint64_t packets = (bytes + 4095) / 4096;
    const double wire = bytes + packets * FabricHeader::kSerializedSize;
    const double packetTime = 4122 * 8 / (rate / 2);
    EXPECT_NEAR(done.GetSeconds(), wire * 8 / rate + packetTime + 2 * 250e-9, packetTime);
    fabric->Dispose();
    // bad figures are named
    Ptr<HbDomain> bad = CreateObject<HbDomain>();
    bad->SetAttribute("NvSwitchPlanes", UintegerValue(7));
    try
    {
        bad->GetPlatform();
        ADD_FAILURE() << "7 planes of 3.6 Tb/s accepted";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_NE(std::string(e.what()).find("NVSwitch planes"), std::string::npos) << e.what();
    }
    bad->SetAttribute("Preset", StringValue("dgx-z9"));
    EXPECT_THROW(bad->GetPlatform(), FabricConfigError);
}

TEST_F(FabricTest, APresetNamedWhereItIsUsedWinsAndAPresetAttributeThatCannotIsRefused)
{
    // no Preset default set: the name given, with the figures that are set
    Config::SetDefault("ns3::HbDomain::NvSwitchPlanes", UintegerValue(2));
    EXPECT_EQ(HbDomain::PlatformOf("dgx-a100").gpusPerDomain, 8u);
    EXPECT_EQ(HbDomain::PlatformOf("gh200-256").gpusPerDomain, 256u);
    EXPECT_EQ(HbDomain::PlatformOf("dgx-a100").nvswitchPlanes, 2u);
    // a Preset default that names the same preset agrees
    Config::SetDefault("ns3::HbDomain::Preset", StringValue("dgx-a100"));
    EXPECT_EQ(HbDomain::PlatformOf("dgx-a100").name, "dgx-a100+attributes");
    // the attribute alone still decides where no name is given
    EXPECT_EQ(CreateObject<HbDomain>()->GetPlatform().name, "dgx-a100+attributes");
    // another one could not take effect: refused by name, not ignored
    try
    {
        HbDomain::PlatformOf("dgx-h100");
        ADD_FAILURE() << "a Preset default of dgx-a100 ignored for dgx-h100";
    }
    catch (const FabricConfigError& e)
    {
        const std::string what = e.what();
        EXPECT_NE(what.find("ns3::HbDomain::Preset"), std::string::npos) << what;
        EXPECT_NE(what.find("got 'dgx-a100'"), std::string::npos) << what;
        EXPECT_NE(what.find("(dgx-h100)"), std::string::npos) << what;
    }
    Config::SetDefault("ns3::HbDomain::Preset", StringValue("nope"));
    EXPECT_THROW(HbDomain::PlatformOf("dgx-h100"), FabricConfigError);
    Config::Reset();
}

TEST_F(FabricTest, WithoutStripingOneMessageUsesOnePlane)
{
    FabricTopology topo("domain");
    const HbDomainPreset h100 = HbDomainPreset::Get("dgx-h100");
    AddHbDomains(topo, 8, h100);
    FabricHelper helper;
    helper.SetGpuAttribute("SprayPackets", BooleanValue(false));
    Ptr<Fabric> fabric = helper.Install(topo);
    Time done;
    const uint64_t bytes = 8'000'000;
    fabric->GetTransport()->Send(0, 5, bytes, MakeBoundCallback(&RecordNow, &done));
    Simulator::Run();
    const double planeRate = h100.nvlinkRate.GetBitRate() / 4.0;
    EXPECT_NEAR(done.GetSeconds(), StoreAndForwardTime(bytes, 4096, planeRate, 2, 100e-9), 1e-9);
}

TEST_F(FabricTest, ManyMessagesOverNvlinkReachFullRateAndNoMore)
{
    FabricTopology topo("domain");
    const HbDomainPreset h100 = HbDomainPreset::Get("dgx-h100");
    AddHbDomains(topo, 8, h100);
    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    const uint32_t messages = 64;
    const uint64_t bytes = 1'000'000;
    std::vector<Time> done(messages);
    for (uint32_t i = 0; i < messages; ++i)
    {
        fabric->GetTransport()->Send(0, 1, bytes, MakeBoundCallback(&RecordNow, &done[i]));
    }
    Simulator::Run();
    Time last;
    for (const Time& t : done)
    {
        last = std::max(last, t);
    }
    const double payloadRate = messages * bytes * 8.0 / last.GetSeconds();
    const double nvlink = h100.nvlinkRate.GetBitRate();
    EXPECT_LT(payloadRate, nvlink * 4096 / 4122);
    EXPECT_GT(payloadRate, 0.98 * nvlink * 4096 / 4122);
}

/// Incast of 8 senders into one receiver through one switch.
struct IncastResult
{
    std::map<uint32_t, uint64_t> bytesBySrc; //!< delivered by the midpoint
    uint64_t drops{0};                       //!< counted by Drop traces
    uint64_t delivered{0};                   //!< messages completed
    uint64_t retransmissions{0};             //!< packets resent
};

void
CountDrop(uint64_t* drops, Ptr<const Packet>)
{
    ++*drops;
}

void
CountRx(std::map<uint32_t, uint64_t>* bySrc, bool* open, Ptr<const Packet> p)
{
    if (!*open)
    {
        return;
    }
    FabricHeader h;
    p->PeekHeader(h);
    (*bySrc)[h.src] += p->GetSize() - FabricHeader::kSerializedSize;
}

void
Close(bool* open)
{
    *open = false;
}

IncastResult
RunIncast(bool pfc, const std::string& buffer, bool recover = true)
{
    IncastResult r;
    const uint64_t rate = 100'000'000'000ULL;
    Config::SetDefault("ns3::PacketTransport::RecoverCongestionDrops", BooleanValue(recover));
    FabricHelper helper;
    helper.SetSwitchAttribute("PfcEnabled", BooleanValue(pfc));
    helper.SetSwitchAttribute("PortBuffer", QueueSizeValue(QueueSize(buffer)));
    helper.SetDeviceAttribute("PfcEnabled", BooleanValue(pfc));
    Ptr<Fabric> fabric = helper.Install(Star(9, rate, 1000));
    for (uint32_t c = 0; c < fabric->GetTopology().Cables().size(); ++c)
    {
        auto [a, b] = fabric->GetCableDevices(c);
        a->TraceConnectWithoutContext("Drop", MakeBoundCallback(&CountDrop, &r.drops));
        b->TraceConnectWithoutContext("Drop", MakeBoundCallback(&CountDrop, &r.drops));
    }
    // the receiver's NIC is the GPU end of cable 0
    bool open = true;
    fabric->GetCableDevices(0).first->TraceConnectWithoutContext(
        "MacRx",
        MakeBoundCallback(&CountRx, &r.bytesBySrc, &open));
    const uint64_t bytes = 4'000'000;
    for (uint32_t s = 1; s <= 8; ++s)
    {
        fabric->GetTransport()->Send(s, 0, bytes, Transport::DoneCallback());
    }
    // midpoint of the ideal 8 x 4 MB / 100 Gb/s = 2.56 ms
    Simulator::Schedule(MicroSeconds(1280), &Close, &open);
    Simulator::Run();
    r.delivered = fabric->GetTransport()->GetTotals().messagesDelivered;
    r.retransmissions = fabric->GetTransport()->GetRetransmissions();
    Config::Reset();
    return r;
}

TEST_F(FabricTest, IncastIsFairAndLosslessWithFlowControl)
{
    IncastResult r = RunIncast(true, "32MB");
    EXPECT_EQ(r.drops, 0u);
    EXPECT_EQ(r.delivered, 8u);
    ASSERT_EQ(r.bytesBySrc.size(), 8u);
    uint64_t total = 0;
    for (const auto& [src, bytes] : r.bytesBySrc)
    {
        total += bytes;
    }
    for (const auto& [src, bytes] : r.bytesBySrc)
    {
        EXPECT_NEAR(static_cast<double>(bytes) / total, 1.0 / 8, 0.05 / 8) << "sender " << src;
    }
}

TEST_F(FabricTest, IncastDropsWithoutFlowControlAndSmallBuffer)
{
    IncastResult r = RunIncast(false, "64KB", false);
    EXPECT_GT(r.drops, 0u);
    EXPECT_LT(r.delivered, 8u); // no retransmission: losing senders never finish
    EXPECT_EQ(r.retransmissions, 0u);
}

TEST_F(FabricTest, EcnMarksCountOnlyPacketsTheQueueTook)
{
    // 8-to-1 incast without flow control into a 64 KB port marking above
    // 8 KB: many packets find the queue above the threshold and full. Only
    // those it takes are marked and counted: the port's count equals the
    // CE-marked packets the receiver gets (nothing is lost after it)
    FabricHelper helper;
    helper.SetSwitchAttribute("PfcEnabled", BooleanValue(false));
    helper.SetSwitchAttribute("PortBuffer", QueueSizeValue(QueueSize("64KB")));
    helper.SetSwitchAttribute("EcnThreshold", UintegerValue(8192));
    helper.SetDeviceAttribute("PfcEnabled", BooleanValue(false));
    Config::SetDefault("ns3::PacketTransport::RecoverCongestionDrops", BooleanValue(false));
    Ptr<Fabric> fabric = helper.Install(Star(9, 100'000'000'000ULL, 1000));
    auto [gpuEnd, switchEnd] = fabric->GetCableDevices(0); // the receiver's cable
    uint64_t ceArrived = 0;
    gpuEnd->TraceConnectWithoutContext("MacRx",
                                       MakeBoundCallback(
                                           +[](uint64_t* n, Ptr<const Packet> p) {
                                               FabricHeader h;
                                               p->PeekHeader(h);
                                               *n += (h.flags & FabricHeader::kFlagCe) ? 1 : 0;
                                           },
                                           &ceArrived));
    for (uint32_t s = 1; s <= 8; ++s)
    {
        fabric->GetTransport()->Send(s, 0, 400'000, Transport::DoneCallback());
    }
    Simulator::Run();
    Config::Reset();
    EXPECT_GT(switchEnd->GetStats().drops, 0u);
    EXPECT_GT(ceArrived, 0u);
    EXPECT_EQ(switchEnd->GetStats().ecnMarks, ceArrived);
}

/// What a 160-to-1 incast at NVLink speed did to a star switch.
struct ManyPortIncast
{
    uint64_t drops{0};
    uint64_t pauses{0};
    uint64_t delivered{0};
    uint64_t queueLimit{0}; //!< the receiver's output queue, bytes
    uint64_t lossless{0};   //!< the switch's GetLosslessBufferBytes
    uint64_t maxQueued{0};  //!< largest backlog of that queue, bytes
};

ManyPortIncast
RunManyPortIncast(bool grow)
{
    // 161 ports at 3.6 Tb/s and 100 ns (a GH200-class NVSwitch): each input
    // may deliver PfcXoff + 2 x 100 ns x 450 GB/s + 2 x 4122 bytes = 229,316
    // before its pause bites, 36,919,876 bytes over all ports: more than the
    // default 32 MB PortBuffer
    ManyPortIncast r;
    const uint64_t rate = 3'600'000'000'000ULL;
    FabricHelper helper;
    helper.SetSwitchAttribute("GrowBufferForPfc", BooleanValue(grow));
    Ptr<Fabric> fabric = helper.Install(Star(161, rate, 100));
    for (uint32_t c = 0; c < fabric->GetTopology().Cables().size(); ++c)
    {
        auto [gpuPort, switchPort] = fabric->GetCableDevices(c);
        switchPort->TraceConnectWithoutContext("Drop", MakeBoundCallback(&CountDrop, &r.drops));
    }
    for (uint32_t s = 1; s <= 160; ++s)
    {
        fabric->GetTransport()->Send(s, 0, 1'000'000, Transport::DoneCallback());
    }
    Simulator::Run();
    auto receiverPort = fabric->GetCableDevices(0).second;
    r.queueLimit = receiverPort->GetQueue()->GetMaxSize().GetValue();
    r.maxQueued = receiverPort->GetStats().maxQueueBytes;
    r.lossless = DynamicCast<FabricSwitch>(receiverPort->GetNode())->GetLosslessBufferBytes();
    for (uint32_t c = 0; c < fabric->GetTopology().Cables().size(); ++c)
    {
        r.pauses += fabric->GetCableDevices(c).second->GetStats().pausesSent;
    }
    r.delivered = fabric->GetTransport()->GetTotals().messagesDelivered;
    fabric->Dispose();
    return r;
}

TEST_F(FabricTest, AManyPortSwitchGrowsItsBufferToStayLossless)
{
    // With the default buffer grown to the closed-form requirement, PFC
    // pauses the senders and nothing drops although the backlog passes the
    // 32 MB PortBuffer; with the buffer as given (GrowBufferForPfc false)
    // the same incast overflows it (and the drops are resent).
    const ManyPortIncast grown = RunManyPortIncast(true);
    EXPECT_EQ(grown.lossless, 161u * (128 * 1024 + 90'000 + 2 * 4122));
    EXPECT_EQ(grown.queueLimit, grown.lossless);
    EXPECT_GT(grown.pauses, 0u);
    EXPECT_EQ(grown.drops, 0u);
    EXPECT_GT(grown.maxQueued, 32'000'000u);
    EXPECT_LE(grown.maxQueued, grown.lossless);
    EXPECT_EQ(grown.delivered, 160u);
    Simulator::Destroy();
    const ManyPortIncast given = RunManyPortIncast(false);
    EXPECT_EQ(given.queueLimit, 32'000'000u);
    EXPECT_GT(given.drops, 0u);
    EXPECT_EQ(given.delivered, 160u);
}

TEST_F(FabricTest, ALosslessBufferBeyondQueueSizeIsRefusedNotWrapped)
{
    // 8 ports x (1 GiB PfcXoff + flight) is above ns-3's 32-bit QueueSize:
    // growing the buffer to it would wrap to a few bytes; the fabric is
    // refused when it is built, naming the switch and the bytes
    const uint64_t perPort = (uint64_t{1} << 30) + 2 * 500 * 100 / 8 + 2 * 4122;
    FabricHelper helper;
    helper.SetSwitchAttribute("PfcXoff", UintegerValue(1u << 30));
    helper.SetSwitchAttribute("PfcXon", UintegerValue(1u << 29));
    try
    {
        helper.Install(Star(8, 100'000'000'000ULL, 500));
        ADD_FAILURE() << "not refused";
    }
    catch (const FabricConfigError& e)
    {
        const std::string what = e.what();
        EXPECT_NE(what.find("lossless buffer"), std::string::npos) << what;
        EXPECT_NE(what.find(std::to_string(8 * perPort) + " bytes"), std::string::npos) << what;
        EXPECT_NE(what.find("32-bit"), std::string::npos) << what;
    }
    // within 32 bits it builds and grows as before
    FabricHelper fits;
    fits.SetSwitchAttribute("PfcXoff", UintegerValue(1u << 28));
    fits.SetSwitchAttribute("PfcXon", UintegerValue(1u << 27));
    Ptr<Fabric> fabric = fits.Install(Star(8, 100'000'000'000ULL, 500));
    const auto sw = DynamicCast<FabricSwitch>(fabric->GetCableDevices(0).second->GetNode());
    EXPECT_EQ(sw->GetLosslessBufferBytes(),
              8 * ((uint64_t{1} << 28) + 2 * 500 * 100 / 8 + 2 * 4122));
    fabric->Dispose();
}

TEST_F(FabricTest, CongestionDropsAreResentByDefaultSoEverySenderFinishes)
{
    IncastResult r = RunIncast(false, "64KB");
    EXPECT_GT(r.drops, 0u);
    EXPECT_EQ(r.delivered, 8u);
    EXPECT_GE(r.retransmissions, r.drops);
}

/// Random many-to-many traffic; returns completion times in send order.
std::vector<int64_t>
RunRandomTraffic(uint32_t seed, uint64_t* sent, uint64_t* delivered, bool* everyMessageExact)
{
    ClusterParams p;
    p.gpus = 32;
    p.platform = HbDomainPreset::Get("dgx-a100");
    p.radix = 8;
    Ptr<Fabric> fabric = FabricHelper().Install(BuildRailOptimized(p));
    Ptr<PacketTransport> t = fabric->GetTransport();
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<uint32_t> rank(0, p.gpus - 1);
    std::uniform_int_distribution<uint64_t> size(1, 300'000);
    std::vector<Time> done(400);
    std::vector<uint64_t> sizes(done.size());
    std::map<uint64_t, uint64_t> received;
    for (size_t i = 0; i < done.size(); ++i)
    {
        const uint32_t s = rank(rng);
        uint32_t d = rank(rng);
        d = d == s ? (d + 1) % p.gpus : d;
        sizes[i] = size(rng);
        Simulator::Schedule(NanoSeconds(rng() % 20000), [t, s, d, i, &sizes, &done]() {
            t->Send(s, d, sizes[i], MakeBoundCallback(&RecordNow, &done[i]));
        });
    }
    uint64_t deliveredBytes = 0;
    t->TraceConnectWithoutContext(
        "MessageComplete",
        MakeBoundCallback(
            +[](uint64_t* sum, uint32_t, uint32_t, uint64_t bytes, Time) { *sum += bytes; },
            &deliveredBytes));
    Simulator::Run();
    *sent = t->GetTotals().bytesSent;
    *delivered = t->GetTotals().bytesDelivered;
    *everyMessageExact = deliveredBytes == *sent && fabric->GetTotalDrops() == 0 &&
                         t->GetTotals().messagesDelivered == done.size();
    std::vector<int64_t> out;
    for (const Time& x : done)
    {
        out.push_back(x.GetTimeStep());
    }
    Simulator::Destroy();
    return out;
}

TEST_F(FabricTest, RandomTrafficConservesBytesAndIsDeterministic)
{
    uint64_t sent = 0;
    uint64_t delivered = 0;
    bool exact = false;
    const auto first = RunRandomTraffic(7, &sent, &delivered, &exact);
    EXPECT_GT(sent, 0u);
    EXPECT_EQ(sent, delivered);
    EXPECT_TRUE(exact);
    for (int64_t t : first)
    {
        EXPECT_GT(t, 0);
    }
    const auto second = RunRandomTraffic(7, &sent, &delivered, &exact);
    EXPECT_EQ(first, second);
    const auto other = RunRandomTraffic(8, &sent, &delivered, &exact);
    EXPECT_NE(first, other);
}

TEST_F(FabricTest, AttributesTheTopologySetsCannotBeSetOnFabricHelper)
{
    // the helper sets every cable's rate and latency, every GPU's rank and
    // every switch's role from the topology: a value for them could never
    // take effect, so it is refused by name (it was silently overridden)
    ClusterParams p;
    p.gpus = 16;
    const FabricTopology topo = BuildRailOnly(p);
    const auto refused = [](const std::function<void()>& f, const std::string& what) {
        try
        {
            f();
            ADD_FAILURE() << what << " accepted";
        }
        catch (const FabricConfigError& e)
        {
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("from the topology"), std::string::npos)
                << e.what();
        }
    };
    for (const auto& [attribute, value] : std::vector<std::pair<std::string, std::string>>{
             {"ns3::FabricNetDevice::DataRate", "200Gbps"},
             {"ns3::FabricChannel::Delay", "+700ns"},
             {"ns3::FabricGpu::Rank", "3"},
             {"ns3::FabricSwitch::Role", "spine"}})
    {
        Config::SetDefault(attribute, StringValue(value));
        refused([&topo] { FabricHelper().Install(topo); },
                fmt::format("invalid {}: got '", attribute));
        Config::Reset();
    }
    FabricHelper helper;
    refused([&helper] { helper.SetDeviceAttribute("DataRate", StringValue("200Gbps")); },
            "invalid FabricHelper::SetDeviceAttribute(\"DataRate\"): got '200Gbps'");
    refused([&helper] { helper.SetSwitchAttribute("Role", StringValue("spine")); },
            "SetSwitchAttribute(\"Role\")");
    refused([&helper] { helper.SetGpuAttribute("Rank", UintegerValue(3)); },
            "SetGpuAttribute(\"Rank\")");
    // what the topology does not set is taken, and the defaults still build
    helper.SetDeviceAttribute("Mtu", UintegerValue(2048 + FabricHeader::kSerializedSize));
    Ptr<Fabric> fabric = helper.Install(topo);
    EXPECT_EQ(fabric->GetTransport()->GetPayloadPerPacket(), 2048U);
    fabric->Dispose();
}

TEST_F(FabricTest, BadInputIsRejectedWithTheParameterNamed)
{
    auto dev = CreateObject<FabricNetDevice>();
    try
    {
        dev->SetDataRate(DataRate(0));
        FAIL() << "zero rate accepted";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_NE(std::string(e.what()).find("DataRate"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("positive"), std::string::npos) << e.what();
    }
    try
    {
        dev->SetFrameMtu(FabricHeader::kSerializedSize);
        FAIL() << "MTU of the header size accepted";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_NE(std::string(e.what()).find("Mtu"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("26"), std::string::npos) << e.what();
    }
    EXPECT_THROW(dev->SetAttribute("Mtu", UintegerValue(10)), FabricConfigError);
    try
    {
        dev->SetMtu(12); // the ns-3 MTU: 12 + 14 bytes of framing is no longer than a FabricHeader
        FAIL() << "NetDevice MTU of 12 accepted";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_NE(std::string(e.what()).find("SetMtu"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("13 to 65521"), std::string::npos) << e.what();
    }
    // sending on a device that is on no cable: an error naming what is missing
    try
    {
        dev->Send(Create<Packet>(100), Address(), 0x0800);
        FAIL() << "a device without a channel sent";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_NE(std::string(e.what()).find("Attach()"), std::string::npos) << e.what();
    }
    try
    {
        HbDomainPreset::Custom(0, DataRate("100Gbps"), DataRate("100Gbps"));
        FAIL() << "K = 0 accepted";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_NE(std::string(e.what()).find("HB domain size K"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("got '0'"), std::string::npos);
    }
    try
    {
        HbDomainPreset::Get("dgx-b300");
        FAIL() << "unknown preset accepted";
    }
    catch (const FabricConfigError& e)
    {
        const std::string what = e.what();
        EXPECT_NE(what.find("dgx-b300"), std::string::npos);
        EXPECT_NE(what.find("dgx-h100"), std::string::npos); // lists what is allowed
    }
    ClusterParams p;
    p.gpus = 12; // not a multiple of K = 8
    EXPECT_THROW(BuildRailOnly(p), FabricConfigError);
    // XON not below XOFF on GPU ports (the switch checks its own attributes)
    p.gpus = 16;
    FabricHelper helper;
    helper.SetDeviceAttribute("PfcXon", UintegerValue(128 * 1024));
    try
    {
        helper.Install(BuildRailOnly(p));
        FAIL() << "PfcXon = PfcXoff accepted on GPU ports";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_NE(std::string(e.what()).find("invalid FabricNetDevice::PfcXon: got '131072', "
                                             "allowed: less than PfcXoff (131072) on port 0"),
                  std::string::npos)
            << e.what();
    }
}

TEST_F(FabricTest, HeaderPassedAlongSaysWhatThePacketSays)
{
    // Nodes route on the header data passed beside each packet, not on its
    // bytes; both must agree after every rewrite on the way: CE marks at a
    // congested switch, the hop count of a source-routed packet.
    Config::SetDefault("ns3::FabricSwitch::EcnThreshold", UintegerValue(16384));
    const FabricTopology topo = Star(5, 100'000'000'000ULL, 500);
    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    Config::SetDefault("ns3::FabricSwitch::EcnThreshold", UintegerValue(0));
    uint64_t packets = 0;
    uint64_t mismatches = 0;
    uint64_t marked = 0;
    uint64_t routedAtHop1 = 0;
    fabric->GetGpu(0)->SetDeliveryCallback(
        FabricGpu::DeliveryCallback([&](Ptr<Packet> p, const FabricHeaderData& h) {
            FabricHeader bytes;
            p->PeekHeader(bytes);
            ++packets;
            const bool same = bytes.src == h.src && bytes.dst == h.dst &&
                              bytes.messageId == h.messageId && bytes.sequence == h.sequence &&
                              bytes.flowLabel == h.flowLabel && bytes.flags == h.flags &&
                              bytes.hop == h.hop;
            mismatches += same ? 0 : 1;
            marked += (h.flags & FabricHeader::kFlagCe) != 0 ? 1 : 0;
            routedAtHop1 += (h.flags & FabricHeader::kFlagSourceRoute) != 0 && h.hop == 1 ? 1 : 0;
        }));
    Ptr<PacketTransport> t = fabric->GetTransport();
    for (uint32_t s = 1; s <= 3; ++s)
    {
        t->Send(s, 0, 1'000'000, Transport::DoneCallback()); // 245 packets each
    }
    const uint32_t sw = 5; // the star's switch: added after its 5 GPUs
    const uint16_t route = fabric->RegisterRoute({topo.GpuVertex(4), sw, topo.GpuVertex(0)});
    t->SendRouted(4, 0, 100'000, route, Transport::DoneCallback()); // 25 packets
    Simulator::Run();
    EXPECT_EQ(packets, 3 * 245u + 25u);
    EXPECT_EQ(mismatches, 0u);
    EXPECT_GT(marked, 0u);      // the incast crossed the marking threshold
    EXPECT_LT(marked, packets); // and not from the first packet on
    EXPECT_EQ(routedAtHop1, 25u);
}

TEST(FabricHeaderTest, EveryFieldHasItsBytesOnTheWireAndReadsBack)
{
    // distinct bytes in every field: a swapped, shifted or truncated field
    // shows up in the bytes and in the round trip
    FabricHeader h;
    h.dst = 0x01020304;
    h.src = 0x0A0B0C0D;
    h.messageId = 0xDEADBEEF;
    h.sequence = 0x12345678;
    h.flowLabel = 0xABCD;
    h.flags = 0x5A;
    h.hop = 0x7E;
    Ptr<Packet> p = Create<Packet>(10);
    p->AddHeader(h);
    ASSERT_EQ(p->GetSize(), 10u + FabricHeader::kSerializedSize);
    std::array<uint8_t, FabricHeader::kSerializedSize> bytes{};
    p->CopyData(bytes.data(), bytes.size());
    const std::array<uint8_t, FabricHeader::kSerializedSize> expected{
        0x02, 0x00, 0x01, 0x02, 0x03, 0x04, // destination MAC: rank
        0x02, 0x00, 0x0A, 0x0B, 0x0C, 0x0D, // source MAC: rank
        0x88, 0xB5,                         // EtherType
        0xDE, 0xAD, 0xBE, 0xEF,             // message id
        0x12, 0x34, 0x56, 0x78,             // sequence
        0xAB, 0xCD,                         // flow label
        0x5A, 0x7E};                        // flags, hop
    EXPECT_EQ(bytes, expected);
    FabricHeader back;
    EXPECT_EQ(p->RemoveHeader(back), FabricHeader::kSerializedSize);
    EXPECT_EQ(back.dst, h.dst);
    EXPECT_EQ(back.src, h.src);
    EXPECT_EQ(back.messageId, h.messageId);
    EXPECT_EQ(back.sequence, h.sequence);
    EXPECT_EQ(back.flowLabel, h.flowLabel);
    EXPECT_EQ(back.flags, h.flags);
    EXPECT_EQ(back.hop, h.hop);
    EXPECT_EQ(p->GetSize(), 10u);
}

TEST_F(FabricTest, LoweringTheDelayMidRunCannotReorderAWire)
{
    // 100 Gb/s, 10 us; the delay drops to 0 at 5 us, while the first packets
    // are still on the wire. Later packets may not overtake them: arrivals
    // stay in sequence, and the last packet (sent after the change) arrives
    // as if the delay had always been 0.
    const uint64_t rate = 100'000'000'000ULL;
    Ptr<Fabric> fabric = FabricHelper().Install(OneLink(rate, 10'000));
    std::vector<uint32_t> order;
    std::vector<int64_t> at;
    const auto dev = fabric->GetCableDevices(0);
    for (const Ptr<FabricNetDevice>& d : {dev.first, dev.second})
    {
        d->TraceConnectWithoutContext("MacRx",
                                      Callback<void, Ptr<const Packet>>([&](Ptr<const Packet> p) {
                                          FabricHeader h;
                                          p->PeekHeader(h);
                                          order.push_back(h.sequence);
                                          at.push_back(Simulator::Now().GetTimeStep());
                                      }));
    }
    Simulator::Schedule(MicroSeconds(5), [&dev]() {
        dev.first->GetChannel()->SetAttribute("Delay", TimeValue(Seconds(0)));
    });
    Time done;
    const uint64_t bytes = 400'000; // 98 packets, about 33 us of serialization
    fabric->GetTransport()->Send(0, 1, bytes, MakeBoundCallback(&RecordNow, &done));
    Simulator::Run();
    ASSERT_EQ(order.size(), 98u);
    for (uint32_t i = 0; i < order.size(); ++i)
    {
        EXPECT_EQ(order[i], i);
    }
    EXPECT_TRUE(std::is_sorted(at.begin(), at.end()));
    // packets 0-15 left before 5 us and keep their 10 us of flight; packet 16
    // left after the change and would have arrived ahead of them
    const double tp = (4096 + FabricHeader::kSerializedSize) * 8.0 / rate;
    for (uint32_t i = 0; i <= 15; ++i)
    {
        EXPECT_NEAR(at[i] * 1e-9, (i + 1) * tp + 10e-6, 1e-9) << "packet " << i;
    }
    EXPECT_EQ(at[16], at[15]);
    EXPECT_NEAR(done.GetSeconds(), StoreAndForwardTime(bytes, 4096, rate, 1, 0), 1e-9);
}

TEST_F(FabricTest, OnlyPacketsThatWaitPassThroughTheTxQueue)
{
    // A packet that finds its transmitter idle and nothing waiting goes to
    // the wire without entering the TxQueue: a message's first packet. The
    // transport keeps one more packet ready behind the one serializing, so
    // the others wait in the GPU's queue; two senders into one switch port
    // make packets wait there too. Every packet enqueued is dequeued.
    Ptr<Fabric> fabric = FabricHelper().Install(Star(3, 100'000'000'000ULL, 500));

    struct Counts
    {
        uint64_t macTx{0};
        uint64_t enqueued{0};
        uint64_t dequeued{0};
    };

    const auto count = [](uint64_t* n) {
        return Callback<void, Ptr<const Packet>>([n](Ptr<const Packet>) { ++*n; });
    };
    const auto watch = [&count](const Ptr<FabricNetDevice>& dev, Counts* c) {
        Ptr<Queue<Packet>> queue = dev->GetQueue();
        ASSERT_NE(queue, nullptr); // given at attachment, before any packet
        dev->TraceConnectWithoutContext("MacTx", count(&c->macTx));
        queue->TraceConnectWithoutContext("Enqueue", count(&c->enqueued));
        queue->TraceConnectWithoutContext("Dequeue", count(&c->dequeued));
    };
    // cable g joins GPU g (first end) to the switch (second end)
    Counts toGpu0;
    Counts fromGpu1;
    Counts fromGpu2;
    ASSERT_EQ(fabric->GetCableDevices(0).first->GetNode()->GetId(), fabric->GetGpu(0)->GetId());
    watch(fabric->GetCableDevices(0).second, &toGpu0);
    watch(fabric->GetCableDevices(1).first, &fromGpu1);
    watch(fabric->GetCableDevices(2).first, &fromGpu2);
    Ptr<PacketTransport> t = fabric->GetTransport();
    t->Send(1, 0, 100 * 4096, Transport::DoneCallback());
    t->Send(2, 0, 100 * 4096, Transport::DoneCallback());
    Simulator::Run();
    EXPECT_EQ(t->GetTotals().bytesDelivered, 2u * 100 * 4096);
    for (const Counts* source : {&fromGpu1, &fromGpu2})
    {
        EXPECT_EQ(source->macTx, 100u);
        EXPECT_EQ(source->enqueued, 99u); // all but the first
        EXPECT_EQ(source->dequeued, source->enqueued);
    }
    EXPECT_EQ(toGpu0.macTx, 200u);
    // two line-rate senders into one port: from the second packet on, the
    // queue never drains, so all packets but the first wait
    EXPECT_EQ(toGpu0.enqueued, 199u);
    EXPECT_EQ(toGpu0.dequeued, toGpu0.enqueued);
}

TEST_F(FabricTest, EveryPacketTraceFiresOncePerPacketUntilDisconnected)
{
    // The hot path tests one byte for the six per-packet traces: each must
    // fire once per packet whether connected with or without context (Config
    // paths), and stop when disconnected between runs.
    Ptr<Fabric> fabric = FabricHelper().Install(Star(2, 100'000'000'000ULL, 500));
    Ptr<FabricNetDevice> gpu0 = fabric->GetCableDevices(0).first;
    Ptr<FabricNetDevice> gpu1 = fabric->GetCableDevices(1).first;
    ASSERT_EQ(gpu0->GetNode()->GetId(), fabric->GetGpu(0)->GetId());
    const std::vector<std::string> names = {"MacTx",
                                            "PhyTxBegin",
                                            "PhyTxEnd",
                                            "Sniffer",
                                            "PromiscSniffer"};
    std::map<std::string, uint64_t> sent;
    uint64_t withContext = 0;
    std::vector<Callback<void, Ptr<const Packet>>> sinks;
    for (const auto& name : names)
    {
        uint64_t* n = &sent[name];
        sinks.emplace_back([n](Ptr<const Packet>) { ++*n; });
        ASSERT_TRUE(gpu0->TraceConnectWithoutContext(name, sinks.back()));
    }
    const std::string path = "/NodeList/" + std::to_string(gpu1->GetNode()->GetId()) +
                             "/DeviceList/" + std::to_string(gpu1->GetIfIndex()) +
                             "/$ns3::FabricNetDevice/MacRx";
    const Callback<void, std::string, Ptr<const Packet>> rxContext(
        [&withContext](std::string, Ptr<const Packet>) { ++withContext; });
    Config::Connect(path, rxContext);
    Ptr<PacketTransport> t = fabric->GetTransport();
    t->Send(0, 1, 10 * 4096, Transport::DoneCallback());
    Simulator::Run();
    for (const auto& name : names)
    {
        EXPECT_EQ(sent[name], 10u) << name;
    }
    EXPECT_EQ(withContext, 10u); // MacRx has only this sink, with context
    // disconnected sinks stay silent; one still connected keeps firing
    for (size_t i = 1; i < names.size(); ++i)
    {
        ASSERT_TRUE(gpu0->TraceDisconnectWithoutContext(names[i], sinks[i]));
    }
    Config::Disconnect(path, rxContext);
    t->Send(0, 1, 5 * 4096, Transport::DoneCallback());
    Simulator::Run();
    EXPECT_EQ(sent["MacTx"], 15u);
    for (size_t i = 1; i < names.size(); ++i)
    {
        EXPECT_EQ(sent[names[i]], 10u) << names[i];
    }
    EXPECT_EQ(withContext, 10u);
}

TEST_F(FabricTest, DisposedFabricLeavesNoLiveEventsBehind)
{
    // A fabric disposed with packets on the wire and serializations pending:
    // its events still sit in the scheduler and must do nothing, so that a
    // second fabric in the same simulation gets its closed-form time.
    const uint64_t rate = 100'000'000'000ULL;
    Ptr<Fabric> first = FabricHelper().Install(Star(4, rate, 1000));
    for (uint32_t s = 1; s < 4; ++s)
    {
        first->GetTransport()->Send(s, 0, 1'000'000, Transport::DoneCallback());
    }
    Simulator::Stop(MicroSeconds(3));
    Simulator::Run();
    ASSERT_GT(first->GetTransport()->GetPendingMessages(), 0u);
    first->Dispose();
    first = nullptr;
    Ptr<Fabric> second = FabricHelper().Install(OneLink(rate, 700));
    const Time start = Simulator::Now();
    Time done;
    second->GetTransport()->Send(0, 1, 1'000'000, MakeBoundCallback(&RecordNow, &done));
    Simulator::Run();
    EXPECT_NEAR((done - start).GetSeconds(),
                StoreAndForwardTime(1'000'000, 4096, rate, 1, 700e-9),
                1e-9);
}

/// A cable of 700 ns between two plain ns-3 nodes (no FabricNode), each end
/// a FabricNetDevice at 8 Gb/s (a byte a nanosecond).
/// \return the devices, on node 0 and node 1
std::array<Ptr<FabricNetDevice>, 2>
PlainLink(const std::array<Ptr<Node>, 2>& nodes)
{
    Ptr<FabricChannel> cable = CreateObject<FabricChannel>();
    cable->SetAttribute("Delay", TimeValue(NanoSeconds(700)));
    std::array<Ptr<FabricNetDevice>, 2> dev;
    for (int i = 0; i < 2; ++i)
    {
        dev[i] = CreateObject<FabricNetDevice>();
        dev[i]->SetDataRate(DataRate("8Gbps"));
        nodes[i]->AddDevice(dev[i]);
        dev[i]->Attach(cable);
    }
    return dev;
}

TEST_F(FabricTest, PlainNodesUseItAsAPointToPointLink)
{
    // Two plain ns-3 nodes (no FabricNode): a packet sent with a protocol
    // number reaches the peer node's handler for that protocol, bytes
    // intact, from the sender's address, after serialization of the packet
    // and its 14-byte Ethernet II header plus delay; a second packet sent at
    // once waits for the first.
    Ptr<Node> a = CreateObject<Node>();
    Ptr<Node> b = CreateObject<Node>();
    const std::array<Ptr<FabricNetDevice>, 2> dev = PlainLink({a, b});

    struct Got
    {
        Time at;
        std::vector<uint8_t> bytes;
        Address from;
    };

    std::vector<Got> ipv4;
    uint64_t other = 0;
    b->RegisterProtocolHandler(Node::ProtocolHandler([&ipv4](Ptr<NetDevice>,
                                                             Ptr<const Packet> p,
                                                             uint16_t,
                                                             const Address& from,
                                                             const Address&,
                                                             NetDevice::PacketType) {
                                   std::vector<uint8_t> bytes(p->GetSize());
                                   p->CopyData(bytes.data(), bytes.size());
                                   ipv4.push_back({Simulator::Now(), bytes, from});
                               }),
                               0x0800,
                               dev[1]);
    b->RegisterProtocolHandler(Node::ProtocolHandler([&other](Ptr<NetDevice>,
                                                              Ptr<const Packet>,
                                                              uint16_t,
                                                              const Address&,
                                                              const Address&,
                                                              NetDevice::PacketType) { ++other; }),
                               0x86DD,
                               dev[1]);
    std::vector<uint8_t> payload(1000);
    for (size_t i = 0; i < payload.size(); ++i)
    {
        payload[i] = static_cast<uint8_t>(i * 7);
    }
    ASSERT_TRUE(
        dev[0]->Send(Create<Packet>(payload.data(), payload.size()), dev[1]->GetAddress(), 0x0800));
    ASSERT_TRUE(dev[0]->Send(Create<Packet>(payload.data(), 500), dev[1]->GetAddress(), 0x0800));
    Simulator::Run();
    ASSERT_EQ(ipv4.size(), 2u);
    EXPECT_EQ(other, 0u);
    EXPECT_EQ(ipv4[0].bytes, payload);
    EXPECT_EQ(ipv4[0].from, dev[0]->GetAddress());
    EXPECT_EQ(ipv4[1].bytes.size(), 500u);
    // 1000 + 14 bytes at 8 Gb/s = 1014 ns, + 700 ns; the second 514 ns later
    EXPECT_EQ(ipv4[0].at, NanoSeconds(1014 + 700));
    EXPECT_EQ(ipv4[1].at, NanoSeconds(1014 + 514 + 700));
    EXPECT_EQ(dev[0]->GetStats().txBytes, 1014u + 514u);
}

TEST_F(FabricTest, AReceiveErrorModelDropsWhatItFindsCorruptAndReportsItAsLost)
{
    // As on PointToPointNetDevice: the receiver's ReceiveErrorModel (any
    // ns-3 ErrorModel) decides per arriving frame; a corrupt one has used the
    // wire, is discarded (PhyRxDrop, Lost, Stats::corrupted) and goes to the
    // loss callback as a fault (not congestion), so a transport resends it.
    Ptr<Node> a = CreateObject<Node>();
    Ptr<Node> b = CreateObject<Node>();
    const std::array<Ptr<FabricNetDevice>, 2> dev = PlainLink({a, b});
    std::vector<uint64_t> received; // uids
    b->RegisterProtocolHandler(Node::ProtocolHandler([&received](Ptr<NetDevice>,
                                                                 Ptr<const Packet> p,
                                                                 uint16_t,
                                                                 const Address&,
                                                                 const Address&,
                                                                 NetDevice::PacketType) {
                                   received.push_back(p->GetUid());
                               }),
                               0x0800,
                               dev[1]);
    std::vector<uint64_t> phyRxDrop;
    std::vector<uint64_t> lostTrace;
    std::vector<std::pair<uint64_t, bool>> reported;
    ASSERT_TRUE(dev[1]->TraceConnectWithoutContext(
        "PhyRxDrop",
        Callback<void, Ptr<const Packet>>(
            [&phyRxDrop](Ptr<const Packet> p) { phyRxDrop.push_back(p->GetUid()); })));
    ASSERT_TRUE(dev[1]->TraceConnectWithoutContext(
        "Lost",
        Callback<void, Ptr<const Packet>>(
            [&lostTrace](Ptr<const Packet> p) { lostTrace.push_back(p->GetUid()); })));
    dev[1]->SetLossCallback(
        FabricNetDevice::LossCallback([&reported](Ptr<const Packet> p, bool congestion) {
            reported.emplace_back(p->GetUid(), congestion);
        }));
    // four packets; the model drops the second and the fourth by uid
    std::vector<Ptr<Packet>> packets;
    for (int i = 0; i < 4; ++i)
    {
        packets.push_back(Create<Packet>(1000));
    }
    Ptr<ListErrorModel> em = CreateObject<ListErrorModel>();
    em->SetList(
        {static_cast<uint32_t>(packets[1]->GetUid()), static_cast<uint32_t>(packets[3]->GetUid())});
    dev[1]->SetAttribute("ReceiveErrorModel", PointerValue(em));
    PointerValue set;
    dev[1]->GetAttribute("ReceiveErrorModel", set);
    EXPECT_EQ(set.Get<ErrorModel>(), em);
    for (const auto& p : packets)
    {
        ASSERT_TRUE(dev[0]->Send(p, dev[1]->GetAddress(), 0x0800));
    }
    Simulator::Run();
    const std::vector<uint64_t> dropped{packets[1]->GetUid(), packets[3]->GetUid()};
    EXPECT_EQ(received, (std::vector<uint64_t>{packets[0]->GetUid(), packets[2]->GetUid()}));
    EXPECT_EQ(phyRxDrop, dropped);
    EXPECT_EQ(lostTrace, dropped);
    ASSERT_EQ(reported.size(), 2u);
    for (size_t i = 0; i < reported.size(); ++i)
    {
        EXPECT_EQ(reported[i].first, dropped[i]);
        EXPECT_FALSE(reported[i].second); // a fault, not a congestion drop
    }
    const FabricNetDevice::Stats& s = dev[1]->GetStats();
    EXPECT_EQ(s.arrivals, 4u);
    EXPECT_EQ(s.corrupted, 2u);
    EXPECT_EQ(s.rxPackets, 2u);
    EXPECT_EQ(s.lost, 0u);
    EXPECT_EQ(dev[0]->GetStats().txPackets, 4u); // they used the wire
    // without the model every frame arrives
    dev[1]->SetReceiveErrorModel(nullptr);
    EXPECT_FALSE(dev[1]->GetReceiveErrorModel());
    em->SetList({static_cast<uint32_t>(packets[0]->GetUid())});
    ASSERT_TRUE(dev[0]->Send(packets[0], dev[1]->GetAddress(), 0x0800));
    Simulator::Run();
    EXPECT_EQ(received.size(), 3u);
    EXPECT_EQ(dev[1]->GetStats().corrupted, 2u);
}

TEST_F(FabricTest, BitErrorRateSetsOneBitRateErrorModelOnBothEnds)
{
    // FabricChannel::BitErrorRate is a shorthand: both ends (one attached
    // after it was set too) get the same RateErrorModel of unit bit and that
    // rate; 0 takes it off, but not a model of one's own.
    Ptr<FabricChannel> cable = CreateObject<FabricChannel>();
    cable->SetAttribute("BitErrorRate", DoubleValue(1e-5));
    std::array<Ptr<FabricNetDevice>, 2> dev;
    for (int i = 0; i < 2; ++i)
    {
        dev[i] = CreateObject<FabricNetDevice>();
        CreateObject<Node>()->AddDevice(dev[i]);
        dev[i]->Attach(cable);
    }
    Ptr<RateErrorModel> em = DynamicCast<RateErrorModel>(dev[0]->GetReceiveErrorModel());
    ASSERT_TRUE(em);
    EXPECT_EQ(dev[1]->GetReceiveErrorModel(), em);
    EXPECT_EQ(em->GetUnit(), RateErrorModel::ERROR_UNIT_BIT);
    EXPECT_EQ(em->GetRate(), 1e-5);
    cable->SetBitErrorRate(2e-6, 7);
    EXPECT_EQ(dev[1]->GetReceiveErrorModel(), em);
    EXPECT_EQ(em->GetRate(), 2e-6);
    DoubleValue ber;
    cable->GetAttribute("BitErrorRate", ber);
    EXPECT_EQ(ber.Get(), 2e-6);
    // 0: off again, but a model one set oneself stays
    Ptr<ListErrorModel> own = CreateObject<ListErrorModel>();
    dev[1]->SetReceiveErrorModel(own);
    cable->SetAttribute("BitErrorRate", DoubleValue(0));
    EXPECT_FALSE(dev[0]->GetReceiveErrorModel());
    EXPECT_EQ(dev[1]->GetReceiveErrorModel(), own);
    // and a rate of 1 or more is refused by name
    try
    {
        cable->SetBitErrorRate(1.0);
        ADD_FAILURE() << "no error for a bit-error rate of 1";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_NE(std::string(e.what()).find("bit-error rate"), std::string::npos) << e.what();
    }
}

TEST_F(FabricTest, QueueBytesTracesEachChangeOfTheQueuesByteCount)
{
    // QueueBytes fires (old, new) whenever the transmit queue's byte count
    // changes: three 1014-byte frames sent at once on an idle port, the
    // first straight to the wire, the others queued and then sent; nothing
    // once disconnected.
    const std::array<Ptr<FabricNetDevice>, 2> dev =
        PlainLink({CreateObject<Node>(), CreateObject<Node>()});
    std::vector<std::pair<uint32_t, uint32_t>> seen;
    const Callback<void, uint32_t, uint32_t> sink(
        [&seen](uint32_t from, uint32_t to) { seen.emplace_back(from, to); });
    ASSERT_TRUE(dev[0]->TraceConnectWithoutContext("QueueBytes", sink));
    const auto sendThree = [&dev] {
        for (int i = 0; i < 3; ++i)
        {
            ASSERT_TRUE(dev[0]->Send(Create<Packet>(1000), dev[1]->GetAddress(), 0x0800));
        }
    };
    sendThree();
    Simulator::Run();
    const std::vector<std::pair<uint32_t, uint32_t>> expected{{0, 1014},
                                                              {1014, 2028},
                                                              {2028, 1014},
                                                              {1014, 0}};
    EXPECT_EQ(seen, expected);
    ASSERT_TRUE(dev[0]->TraceDisconnectWithoutContext("QueueBytes", sink));
    sendThree();
    Simulator::Run();
    EXPECT_EQ(seen, expected);
    EXPECT_EQ(dev[0]->GetQueueBytes(), 0u);
}

TEST_F(FabricTest, TxFifoPacketsIsHowFarAheadTheSourcePicks)
{
    // GPU 0 streams message A to GPU 1; 1.5 packet times in, a one-packet
    // message B to GPU 2 joins the port's round robin. With a transmit FIFO
    // of F packets, B's packet was picked behind F more packets of A, so B
    // completes F packet times later than with F = 0 (picked when the wire is
    // free): 3 packet times to leave, plus two store-and-forward hops.
    const uint64_t rate = 100'000'000'000ULL;
    const double tp = (4096 + FabricHeader::kSerializedSize) * 8.0 / rate;
    const FabricTopology topo = Star(3, rate, 500);
    std::vector<double> doneB;
    for (uint32_t fifo : {0u, 1u, 2u})
    {
        Ptr<Fabric> fabric = FabricHelper().Install(topo);
        Ptr<PacketTransport> t = fabric->GetTransport();
        t->SetAttribute("TxFifoPackets", UintegerValue(fifo));
        Time a;
        Time b;
        t->Send(0, 1, 10 * 4096, MakeBoundCallback(&RecordNow, &a));
        Simulator::Schedule(Seconds(1.5 * tp),
                            [t, &b]() { t->Send(0, 2, 4096, MakeBoundCallback(&RecordNow, &b)); });
        Simulator::Run();
        EXPECT_NEAR(a.GetSeconds(), StoreAndForwardTime(11 * 4096, 4096, rate, 2, 500e-9), 2e-9)
            << "fifo " << fifo; // A is one packet later whatever F: B took one slot
        doneB.push_back(b.GetSeconds());
        fabric->Dispose();
        Simulator::Destroy();
    }
    EXPECT_NEAR(doneB[0], 5 * tp + 2 * 500e-9, 2e-9);
    EXPECT_NEAR(doneB[1] - doneB[0], tp, 2e-9);
    EXPECT_NEAR(doneB[2] - doneB[0], 2 * tp, 2e-9);
}

/// What a test source does with each pull: sends `limit` 1000-byte packets
/// to the peer, one per pull, and records its pulls (and the prefetch stages
/// asked before each, for a source that prefetches).
struct PullRecord
{
    Ptr<FabricNetDevice> peer;
    uint32_t limit{20};
    uint32_t sent{0};
    void* cookie{nullptr}; //!< the cookie the source was given
    std::vector<Time> pulls;
    std::vector<std::vector<uint32_t>> askedBeforePull;
    std::vector<uint32_t> asked;
    bool wrongCookie{false};
    uint32_t viaSource{0}; //!< pulls that came through TxReady (not by hand)

    void Pull(FabricNetDevice* port)
    {
        pulls.push_back(Simulator::Now());
        askedBeforePull.push_back(asked);
        asked.clear();
        if (sent < limit)
        {
            ++sent;
            port->Send(Create<Packet>(1000), peer->GetAddress(), 0x0800);
        }
    }
};

/// A traffic source (FabricTxSource, or one that prefetches) that records its pulls.
template <typename Source>
struct RecordingTxSource : Source
{
    PullRecord r; //!< what happened

    void TxReady(FabricNetDevice* port, void* c) override
    {
        r.wrongCookie |= c != r.cookie;
        ++r.viaSource;
        r.Pull(port);
    }
};

/// A source without the prefetch hook.
using CountingTxSource = RecordingTxSource<FabricTxSource>;

/// A source that prefetches: it records the stages it is asked.
struct PrefetchingCountingTxSource : RecordingTxSource<FabricPrefetchingTxSource>
{
    void PrefetchTxReady(const void* c, uint32_t stage) const override
    {
        // a prefetch may not change the model; the test's record may
        auto& record = const_cast<PullRecord&>(r);
        record.asked.push_back(stage);
        record.wrongCookie |= c != r.cookie;
    }
};

/// How RunPulledLink's port is fed.
enum class Feed
{
    kSource,  //!< the source
    kNothing, //!< the source, then no source
};

/// Two plain nodes joined by PlainLink, the first fed by `source` as `feed` says, on the given
/// scheduler, `record` its record; its first packet is pulled at time 0; other events every
/// 37 ns keep the scheduler's look-ahead window full.
void
RunPulledLink(FabricTxSource* source, PullRecord& record, const ObjectFactory& scheduler, Feed feed)
{
    Simulator::SetScheduler(scheduler);
    const std::array<Ptr<FabricNetDevice>, 2> dev =
        PlainLink({CreateObject<Node>(), CreateObject<Node>()});
    record.peer = dev[1];
    int cookie = 0;
    record.cookie = &cookie;
    dev[0]->SetTxSource(source, &cookie);
    if (feed == Feed::kNothing)
    {
        dev[0]->SetTxSource(nullptr, nullptr);
    }
    Simulator::Schedule(Time(0), [&record, d = PeekPointer(dev[0])] { record.Pull(d); });
    for (int64_t t = 1; t < 25'000; t += 37)
    {
        Simulator::Schedule(NanoSeconds(t), [] {});
    }
    Simulator::Run();
    Simulator::Destroy();
}

TEST_F(FabricTest, ATxSourceIsPulledAfterEachSerializationAndAskedToPrefetchAhead)
{
    // A FabricTxSource is pulled after each serialization while at most one
    // packet waits, at the same times whatever the scheduler and whether it
    // prefetches. On FabricLookaheadScheduler of Depth d, the end of
    // serialization before a pull takes stages 1..d-1, and passes 2..d-1 on
    // to a prefetching source as its stages 1..d-2 (stage 1 brings the port
    // in, which holds the source's pointer); on another scheduler nothing is
    // asked, and a source without the hook never is.
    const auto lookahead = [](uint32_t depth) {
        ObjectFactory f("ns3::FabricLookaheadScheduler");
        f.Set("Depth", UintegerValue(depth));
        f.Set("MinPending", UintegerValue(0));
        return f;
    };
    CountingTxSource onMap;
    RunPulledLink(&onMap, onMap.r, ObjectFactory("ns3::MapScheduler"), Feed::kSource);
    // the first packet goes at once; a pull after each of the 20 ends of
    // serialization (the last finds nothing to send), 1014 ns apart
    const std::vector<Time>& pulls = onMap.r.pulls;
    ASSERT_EQ(pulls.size(), 21u);
    for (uint32_t i = 0; i < pulls.size(); ++i)
    {
        EXPECT_EQ(pulls[i], NanoSeconds(1014 * i)) << "pull " << i;
    }
    // without the hook: pulled the same, never asked, also on the
    // look-ahead scheduler
    CountingTxSource plainAhead;
    RunPulledLink(&plainAhead, plainAhead.r, lookahead(5), Feed::kSource);
    EXPECT_EQ(plainAhead.r.pulls, pulls);
    for (const PullRecord* s : {&onMap.r, &plainAhead.r})
    {
        EXPECT_FALSE(s->wrongCookie);
        EXPECT_EQ(s->viaSource, s->pulls.size() - 1); // all but the first
        for (const auto& asked : s->askedBeforePull)
        {
            EXPECT_TRUE(asked.empty());
        }
    }
    // with no source left the port pulls nothing: only the first packet,
    // pulled by hand, goes
    PrefetchingCountingTxSource none;
    RunPulledLink(&none, none.r, lookahead(5), Feed::kNothing);
    EXPECT_EQ(none.r.pulls.size(), 1u);
    EXPECT_EQ(none.r.sent, 1u);
    const std::vector<std::pair<ObjectFactory, uint32_t>> runs{
        {ObjectFactory("ns3::MapScheduler"), 0},
        {lookahead(5), 3},
        {lookahead(8), 6}};
    for (const auto& [scheduler, stages] : runs)
    {
        PrefetchingCountingTxSource source;
        RunPulledLink(&source, source.r, scheduler, Feed::kSource);
        const PullRecord& r = source.r;
        const std::string name = scheduler.GetTypeId().GetName() + " " + std::to_string(stages);
        EXPECT_FALSE(r.wrongCookie) << name;
        EXPECT_EQ(r.pulls, pulls) << name;
        EXPECT_EQ(r.viaSource, r.pulls.size() - 1) << name; // all but the first
        std::vector<uint32_t> expected;
        for (uint32_t k = 1; k <= stages; ++k)
        {
            expected.push_back(k);
        }
        ASSERT_EQ(r.askedBeforePull.size(), pulls.size()) << name;
        EXPECT_TRUE(r.askedBeforePull[0].empty()) << name; // the first pull is no event's
        for (uint32_t i = 1; i < r.askedBeforePull.size(); ++i)
        {
            EXPECT_EQ(r.askedBeforePull[i], expected) << name << ", pull " << i;
        }
    }
}

TEST_F(FabricTest, PcapCaptureIsEthernetWithTheFabricEtherType)
{
    // the process id: ctest runs this case twice (the lookahead scheduler too),
    // maybe at once
    const std::string prefix = ::testing::TempDir() + "gpu-fabric-pcap-" + std::to_string(getpid());
    FabricHelper helper;
    Ptr<Fabric> fabric = helper.Install(Star(2, 100'000'000'000ULL, 1000));
    helper.EnablePcapAll(prefix);
    const uint64_t bytes = 10'000;
    fabric->GetTransport()->Send(0, 1, bytes, Transport::DoneCallback());
    Simulator::Run();
    // the sender's NIC, device 0 of the node named gpu-0 (ns3::Names)
    ASSERT_EQ(fabric->GetNodeName(fabric->GetTopology().GpuVertex(0)), "gpu-0");
    const std::string file = prefix + "-gpu-0-0.pcap";
    fabric = nullptr;
    Simulator::Destroy(); // closes (flushes) the capture files
    PcapFile pcap;
    pcap.Open(file, std::ios::in);
    ASSERT_FALSE(pcap.Fail()) << file;
    EXPECT_EQ(pcap.GetDataLinkType(), 1u); // DLT_EN10MB
    uint32_t frames = 0;
    uint64_t payload = 0;
    while (true)
    {
        uint8_t data[9000];
        uint32_t sec = 0;
        uint32_t usec = 0;
        uint32_t incl = 0;
        uint32_t orig = 0;
        uint32_t read = 0;
        pcap.Read(data, sizeof(data), sec, usec, incl, orig, read);
        if (pcap.Eof())
        {
            break;
        }
        ++frames;
        payload += orig - FabricHeader::kSerializedSize;
        EXPECT_EQ(data[12], 0x88); // EtherType 0x88B5
        EXPECT_EQ(data[13], 0xB5);
        EXPECT_EQ(data[5], 1);  // destination MAC ends with rank 1
        EXPECT_EQ(data[11], 0); // source MAC ends with rank 0
    }
    EXPECT_EQ(frames, 3u); // 10000 bytes in 4096-byte payloads
    EXPECT_EQ(payload, bytes);
    // Wireshark's own dissectors read the same: Ethernet, EtherType 0x88B5,
    // to rank 1's MAC, 10000 bytes plus three 26-byte headers
    const auto lines = gpu_fabric_test::TsharkFields(
        file,
        {"frame.protocols", "eth.type", "eth.dst", "eth.src", "frame.len"});
    ASSERT_EQ(lines.size(), 3u);
    uint64_t wire = 0;
    for (const auto& line : lines)
    {
        const auto f = gpu_fabric_test::SplitTabs(line);
        ASSERT_EQ(f.size(), 5u) << line;
        EXPECT_EQ(f[0], "eth:ethertype:data");
        EXPECT_EQ(f[1], "0x88b5");
        EXPECT_EQ(f[2], "02:00:00:00:00:01");
        EXPECT_EQ(f[3], "02:00:00:00:00:00");
        wire += std::stoull(f[4]);
    }
    EXPECT_EQ(wire, bytes + 3 * FabricHeader::kSerializedSize);

    // the module's Wireshark dissector reads each FabricHeader; nanosecond
    // timestamps show the packets one serialization time (4122 bytes at
    // 100 Gb/s = 329.76 ns) apart
    const auto dissected = gpu_fabric_test::TsharkFields(
        file,
        {"gpufabric.src_rank",
         "gpufabric.dst_rank",
         "gpufabric.seq",
         "gpufabric.last",
         "gpufabric.payload",
         "frame.time_epoch"},
        std::string("-X lua_script:") + GPU_FABRIC_SOURCE_DIR + "/doc/gpu-fabric.lua");
    ASSERT_EQ(dissected.size(), 3u);
    uint64_t carried = 0;
    for (size_t i = 0; i < dissected.size(); ++i)
    {
        const auto f = gpu_fabric_test::SplitTabs(dissected[i]);
        ASSERT_EQ(f.size(), 6u) << dissected[i];
        EXPECT_EQ(f[0], "0");
        EXPECT_EQ(f[1], "1");
        EXPECT_EQ(f[2], std::to_string(i));
        EXPECT_EQ(f[3], i + 1 == dissected.size() ? "1" : "0") << dissected[i]; // LAST flag
        carried += std::stoull(f[4]);
        EXPECT_NEAR(std::stod(f[5]), i * 4122 * 8 / 100e9, 1e-9) << dissected[i];
    }
    EXPECT_EQ(carried, bytes);
}

TEST_F(FabricTest, PresetsCarryThePublishedFigures)
{
    EXPECT_EQ(HbDomainPreset::Get("dgx-a100").nicRate.GetBitRate(), 200'000'000'000ULL);
    EXPECT_EQ(HbDomainPreset::Get("DGX-H100").nvlinkRate.GetBitRate(), 3'600'000'000'000ULL);
    EXPECT_EQ(HbDomainPreset::Get("gh200-256").gpusPerDomain, 256u);
    EXPECT_EQ(HbDomainPreset::Get("gb200-nvl72").gpusPerDomain, 72u);
    EXPECT_EQ(HbDomainPreset::Get("gb200-nvl72").nicRate.GetBitRate(), 800'000'000'000ULL);
}

} // namespace
