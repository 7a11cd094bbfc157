/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * FabricNetDevice under ns-3's own Internet stack (FabricLinkHelper): what a
 * study that adds gpu-fabric links to an existing IP scenario relies on.
 */
#include "tshark.h"

#include "ns3/applications-module.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/fabric-channel.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-header.h"
#include "ns3/fabric-link-helper.h"
#include "ns3/fabric-net-device.h"
#include "ns3/fabric-routing.h"
#include "ns3/fabric-switch.h"
#include "ns3/flow-monitor-module.h"
#include "ns3/internet-module.h"
#include "ns3/names.h"
#include "ns3/pcap-file.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/traffic-control-module.h"

#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

class FabricIpTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
    }
};

/// IPv4 (20) + UDP (8) header bytes
constexpr uint32_t kIpUdp = 28;
constexpr uint32_t kEth = FabricNetDevice::kEthernetHeaderBytes;

/// A link of \p rate and \p delay between two nodes with IPv4 on both.
struct TwoHosts
{
    NodeContainer nodes;
    NetDeviceContainer devices;
    Ipv4InterfaceContainer ifaces;
    FabricLinkHelper link;

    /// \param configure sets up the link helper before Install
    TwoHosts(const std::string& rate,
             Time delay,
             const std::function<void(FabricLinkHelper&)>& configure = {})
    {
        nodes.Create(2);
        InternetStackHelper().Install(nodes);
        link.SetDeviceAttribute("DataRate", StringValue(rate));
        link.SetChannelAttribute("Delay", TimeValue(delay));
        if (configure)
        {
            configure(link);
        }
        devices = link.Install(nodes);
        Ipv4AddressHelper addresses("10.1.1.0", "255.255.255.0");
        ifaces = addresses.Assign(devices);
    }

    /// One UDP echo of \p bytes from node 0 to node 1; \return the client's send and receive times
    std::pair<std::vector<Time>, std::vector<Time>> Echo(uint32_t bytes)
    {
        UdpEchoServerHelper server(9);
        server.Install(nodes.Get(1)).Start(Seconds(0));
        UdpEchoClientHelper client(ifaces.GetAddress(1), 9);
        client.SetAttribute("MaxPackets", UintegerValue(1));
        client.SetAttribute("PacketSize", UintegerValue(bytes));
        ApplicationContainer apps = client.Install(nodes.Get(0));
        apps.Start(Seconds(1));
        auto times = std::make_shared<std::pair<std::vector<Time>, std::vector<Time>>>();
        apps.Get(0)->TraceConnectWithoutContext(
            "Tx",
            Callback<void, Ptr<const Packet>>(
                [times](Ptr<const Packet>) { times->first.push_back(Simulator::Now()); }));
        apps.Get(0)->TraceConnectWithoutContext(
            "Rx",
            Callback<void, Ptr<const Packet>>(
                [times](Ptr<const Packet>) { times->second.push_back(Simulator::Now()); }));
        Simulator::Stop(Seconds(2));
        Simulator::Run();
        return *times;
    }
};

TEST_F(FabricIpTest, UdpEchoTakesSerializationPlusDelayEachWay)
{
    // 8 Gb/s is a byte a nanosecond: a 1000-byte echo is a 1042-byte frame
    // (UDP, IPv4, Ethernet II), so the round trip is 2 x (1042 + 700) ns.
    // No ARP: a point-to-point link needs none.
    TwoHosts hosts("8Gbps", NanoSeconds(700));
    const auto [sent, received] = hosts.Echo(1000);
    ASSERT_EQ(sent.size(), 1u);
    ASSERT_EQ(received.size(), 1u);
    EXPECT_EQ(received[0] - sent[0], NanoSeconds(2 * (1000 + kIpUdp + kEth + 700)));
    for (uint32_t i = 0; i < 2; ++i)
    {
        const auto& stats = DynamicCast<FabricNetDevice>(hosts.devices.Get(i))->GetStats();
        EXPECT_EQ(stats.txPackets, 1u);
        EXPECT_EQ(stats.txBytes, 1000 + kIpUdp + kEth);
        EXPECT_EQ(stats.rxBytes, 1000 + kIpUdp + kEth);
    }
}

TEST_F(FabricIpTest, MtuExcludesTheEthernetHeaderAndIpFragmentsToIt)
{
    // Mtu is the largest frame; IP reads GetMtu() = Mtu - 14 and fragments
    // a 3000-byte datagram into frames no larger than Mtu.
    TwoHosts hosts("8Gbps", NanoSeconds(700));
    auto dev0 = DynamicCast<FabricNetDevice>(hosts.devices.Get(0));
    EXPECT_EQ(dev0->GetMtu(), dev0->GetFrameMtu() - kEth);
    for (uint32_t i = 0; i < 2; ++i)
    {
        hosts.devices.Get(i)->SetAttribute("Mtu", UintegerValue(1514));
        EXPECT_EQ(hosts.devices.Get(i)->GetMtu(), 1500);
    }
    uint32_t largest = 0;
    uint32_t frames = 0;
    dev0->TraceConnectWithoutContext("PhyTxBegin",
                                     Callback<void, Ptr<const Packet>>([&](Ptr<const Packet> p) {
                                         largest = std::max(largest, p->GetSize());
                                         ++frames;
                                     }));
    const auto [sent, received] = hosts.Echo(3000);
    ASSERT_EQ(received.size(), 1u);
    EXPECT_EQ(frames, 3u); // 3008 bytes of UDP in 1480-byte IP fragments
    EXPECT_EQ(largest, 1514u);
    // too large for Send: refused and counted as a drop, not sent whole
    EXPECT_FALSE(dev0->Send(Create<Packet>(1501), dev0->GetBroadcast(), 0x0800));
    EXPECT_EQ(dev0->GetStats().drops, 1u);
    EXPECT_THROW(dev0->SetMtu(65535 - 13), FabricConfigError);
}

TEST_F(FabricIpTest, FlowMonitorSeesEveryPacketAtTheClosedFormDelay)
{
    // ns-3's FlowMonitor on a UDP flow through a router: 1 Gb/s of
    // 1000-byte datagrams on 8 Gb/s links never queue, so every packet takes
    // 2 x (1042-byte frame at a byte a nanosecond + 700 ns), none is lost.
    NodeContainer nodes;
    nodes.Create(3);
    InternetStackHelper().Install(nodes);
    FabricLinkHelper link;
    link.SetDeviceAttribute("DataRate", StringValue("8Gbps"));
    link.SetChannelAttribute("Delay", TimeValue(NanoSeconds(700)));
    Ipv4AddressHelper addresses("10.2.0.0", "255.255.255.0");
    addresses.Assign(link.Install(nodes.Get(0), nodes.Get(1)));
    addresses.NewNetwork();
    Ipv4InterfaceContainer far = addresses.Assign(link.Install(nodes.Get(1), nodes.Get(2)));
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    OnOffHelper source("ns3::UdpSocketFactory", InetSocketAddress(far.GetAddress(1), 9));
    source.SetConstantRate(DataRate("1Gbps"), 1000);
    source.SetAttribute("MaxBytes", UintegerValue(100 * 1000));
    source.Install(nodes.Get(0)).Start(MilliSeconds(1));
    PacketSinkHelper("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9))
        .Install(nodes.Get(2));
    FlowMonitorHelper monitors;
    Ptr<FlowMonitor> monitor = monitors.InstallAll();
    Simulator::Stop(MilliSeconds(10));
    Simulator::Run();
    const auto stats = monitor->GetFlowStats();
    ASSERT_EQ(stats.size(), 1u);
    const auto& flow = stats.begin()->second;
    EXPECT_EQ(flow.txPackets, 100u);
    EXPECT_EQ(flow.rxPackets, 100u);
    EXPECT_EQ(flow.lostPackets, 0u);
    EXPECT_EQ(flow.rxBytes, 100u * (1000 + kIpUdp));
    const Time hop = NanoSeconds(1000 + kIpUdp + kEth + 700);
    EXPECT_EQ(flow.delaySum, 100 * 2 * hop);
    EXPECT_EQ(flow.jitterSum, Time(0)); // every packet the same
}

TEST_F(FabricIpTest, TcpThroughARouterDeliversEveryByteAndTheDropsAreTraced)
{
    // Four TCP senders share a router's 10 Gb/s port to one sink. A router
    // is a plain ns-3 node, so nothing paces the senders but TCP: with a
    // 20-packet queue and no queue disc above it the port overflows, the Drop trace counts every
    // packet the device refused, and TCP still delivers every byte.
    const uint32_t senders = 4;
    const uint64_t bytes = 1'000'000;
    NodeContainer hosts;
    hosts.Create(senders + 1);
    NodeContainer router;
    router.Create(1);
    InternetStackHelper().Install(hosts);
    InternetStackHelper().Install(router);
    FabricLinkHelper link;
    link.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    link.SetChannelAttribute("Delay", TimeValue(MicroSeconds(1)));
    link.SetQueue("ns3::DropTailQueue", "MaxSize", QueueSizeValue(QueueSize("20p")));
    // no queue discs: packets queue, and drop, in the devices
    link.DisableFlowControl();
    // CE marks are for FabricHeaders: an IP frame past the threshold must
    // pass unchanged (marking rewrote its Ethernet and IPv4 bytes once)
    link.SetDeviceAttribute("EcnThreshold", UintegerValue(3000));
    Ipv4AddressHelper addresses("10.0.0.0", "255.255.255.0");
    std::vector<Ptr<FabricNetDevice>> ports;
    Ipv4Address sinkAddress;
    for (uint32_t h = 0; h <= senders; ++h)
    {
        NetDeviceContainer d = link.Install(hosts.Get(h), router.Get(0));
        Ipv4InterfaceContainer i = addresses.Assign(d);
        addresses.NewNetwork();
        ports.push_back(DynamicCast<FabricNetDevice>(d.Get(0)));
        ports.push_back(DynamicCast<FabricNetDevice>(d.Get(1)));
        sinkAddress = i.GetAddress(0); // the last host is the sink
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 5000));
    ApplicationContainer sinkApp = sink.Install(hosts.Get(senders));
    for (uint32_t h = 0; h < senders; ++h)
    {
        BulkSendHelper source("ns3::TcpSocketFactory", InetSocketAddress(sinkAddress, 5000));
        source.SetAttribute("MaxBytes", UintegerValue(bytes));
        source.Install(hosts.Get(h)).Start(MilliSeconds(1));
    }
    uint64_t dropTraced = 0;
    for (const auto& port : ports)
    {
        port->TraceConnectWithoutContext(
            "Drop",
            Callback<void, Ptr<const Packet>>([&dropTraced](Ptr<const Packet>) { ++dropTraced; }));
    }
    Simulator::Stop(Seconds(10));
    Simulator::Run();
    EXPECT_EQ(DynamicCast<PacketSink>(sinkApp.Get(0))->GetTotalRx(), senders * bytes);
    uint64_t drops = 0;
    for (const auto& port : ports)
    {
        drops += port->GetStats().drops;
        EXPECT_EQ(port->GetStats().lost, 0u);
    }
    // the router's port toward the sink overflows (a sender's own NIC may
    // too: TCP hands it a window at once); nothing was CE-marked
    EXPECT_GT(ports[2 * senders + 1]->GetStats().drops, 0u);
    EXPECT_GT(ports[2 * senders + 1]->GetStats().maxQueueBytes, 3000u);
    for (const auto& port : ports)
    {
        EXPECT_EQ(port->GetStats().ecnMarks, 0u);
    }
    EXPECT_EQ(dropTraced, drops);
}

/// How the burst test sets up its 10-packet device queues.
enum class QueueSetup
{
    kHelper,            //!< FabricLinkHelper::SetQueue
    kReplacedAfterward, //!< the device's SetQueue after Install (the interface must follow)
    kNoFlowControl,     //!< FabricLinkHelper::DisableFlowControl
};

/// What a burst of UDP datagrams did.
struct BurstResult
{
    uint32_t received{0};
    Time last;
    uint32_t maxDiscBacklog{0};
    Ptr<QueueDisc> disc; //!< the sender's root queue disc, if any
    FabricNetDevice::Stats device;
};

/// \p n 1000-byte UDP datagrams sent at once at t = 1 s over an 8 Gb/s,
/// 700 ns link whose device queue holds 10 packets.
BurstResult
SendBurst(QueueSetup setup, uint32_t n)
{
    const QueueSizeValue tenPackets(QueueSize("10p"));
    TwoHosts hosts("8Gbps", NanoSeconds(700), [&](FabricLinkHelper& link) {
        if (setup == QueueSetup::kHelper)
        {
            link.SetQueue("ns3::DropTailQueue", "MaxSize", tenPackets);
        }
        if (setup == QueueSetup::kNoFlowControl)
        {
            link.SetQueue("ns3::DropTailQueue", "MaxSize", tenPackets);
            link.DisableFlowControl();
        }
    });
    auto device = DynamicCast<FabricNetDevice>(hosts.devices.Get(0));
    if (setup == QueueSetup::kReplacedAfterward)
    {
        device->SetQueue(CreateObjectWithAttributes<DropTailQueue<Packet>>("MaxSize", tenPackets));
    }
    BurstResult result;
    result.disc =
        hosts.nodes.Get(0)->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(device);
    if (result.disc)
    {
        result.disc->TraceConnectWithoutContext(
            "PacketsInQueue",
            Callback<void, uint32_t, uint32_t>([&result](uint32_t, uint32_t now) {
                result.maxDiscBacklog = std::max(result.maxDiscBacklog, now);
            }));
    }
    PacketSinkHelper sinkHelper("ns3::UdpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), 9));
    ApplicationContainer sink = sinkHelper.Install(hosts.nodes.Get(1));
    sink.Get(0)->TraceConnectWithoutContext("Rx",
                                            Callback<void, Ptr<const Packet>, const Address&>(
                                                [&result](Ptr<const Packet>, const Address&) {
                                                    ++result.received;
                                                    result.last = Simulator::Now();
                                                }));
    Ptr<Socket> socket = Socket::CreateSocket(hosts.nodes.Get(0), UdpSocketFactory::GetTypeId());
    socket->Connect(InetSocketAddress(hosts.ifaces.GetAddress(1), 9));
    Simulator::Schedule(Seconds(1), [socket, n] {
        for (uint32_t i = 0; i < n; ++i)
        {
            socket->Send(Create<Packet>(1000));
        }
    });
    Simulator::Stop(Seconds(2));
    Simulator::Run();
    result.device = device->GetStats();
    return result;
}

TEST_F(FabricIpTest, TheQueueDiscHoldsTheBacklogWhenTheDeviceQueueIsFull)
{
    // 500 datagrams at once into a 10-packet device queue. As with
    // PointToPointHelper, the device has a NetDeviceQueueInterface, so
    // Ipv4AddressHelper installs ns-3's default queue disc above it: the
    // first datagram finds the port idle, the next 10 fill the queue, which
    // then stops traffic control, and the other 489 wait in the queue disc.
    // Each dequeue wakes the disc at once, so the wire never idles: the last
    // 1042-byte frame arrives 500 frame times plus the delay after the first
    // was sent (8 Gb/s: a byte a nanosecond).
    const uint32_t n = 500;
    const uint32_t frame = 1000 + kIpUdp + kEth;
    for (QueueSetup setup : {QueueSetup::kHelper, QueueSetup::kReplacedAfterward})
    {
        SCOPED_TRACE(static_cast<int>(setup));
        const BurstResult r = SendBurst(setup, n);
        ASSERT_TRUE(r.disc);
        EXPECT_EQ(r.disc->GetInstanceTypeId().GetName(), "ns3::FqCoDelQueueDisc");
        EXPECT_EQ(r.received, n);
        EXPECT_EQ(r.device.drops, 0u);
        EXPECT_EQ(r.disc->GetStats().nTotalDroppedPackets, 0u);
        EXPECT_EQ(r.maxDiscBacklog, n - 1 - 10);
        EXPECT_EQ(r.device.maxQueueBytes, 10 * frame);
        EXPECT_EQ(r.last, Seconds(1) + NanoSeconds(n * frame + 700));
        Simulator::Destroy();
    }
    // DisableFlowControl: no interface, no queue disc; the device queue
    // takes 10 behind the one on the wire and drops the other 489
    const BurstResult r = SendBurst(QueueSetup::kNoFlowControl, n);
    EXPECT_FALSE(r.disc);
    EXPECT_EQ(r.received, 11u);
    EXPECT_EQ(r.device.drops, n - 11);
    EXPECT_EQ(r.last, Seconds(1) + NanoSeconds(11 * frame + 700));
}

/// Every record of a PCAP file.
std::vector<std::vector<uint8_t>>
ReadPcap(const std::string& file, uint32_t* linkType)
{
    PcapFile pcap;
    pcap.Open(file, std::ios::in);
    std::vector<std::vector<uint8_t>> records;
    if (pcap.Fail())
    {
        ADD_FAILURE() << "cannot open " << file;
        return records;
    }
    *linkType = pcap.GetDataLinkType();
    while (true)
    {
        std::vector<uint8_t> data(70000);
        uint32_t sec = 0;
        uint32_t usec = 0;
        uint32_t incl = 0;
        uint32_t orig = 0;
        uint32_t read = 0;
        pcap.Read(data.data(), data.size(), sec, usec, incl, orig, read);
        if (pcap.Eof() || pcap.Fail())
        {
            break;
        }
        data.resize(incl);
        records.push_back(data);
    }
    return records;
}

TEST_F(FabricIpTest, PcapAndAsciiTracesShowEthernetFramedIpv4)
{
    const std::string prefix = ::testing::TempDir() + "gpu-fabric-ip";
    const std::string asciiFile = prefix + ".tr";
    std::string pcapFile;
    uint8_t mac[6];
    {
        TwoHosts hosts("8Gbps", NanoSeconds(700));
        hosts.link.EnablePcapAll(prefix);
        AsciiTraceHelper ascii;
        hosts.link.EnableAsciiAll(ascii.CreateFileStream(asciiFile));
        const auto [sent, received] = hosts.Echo(100);
        ASSERT_EQ(received.size(), 1u);
        // node 0's device 1 (device 0 is the Internet stack's loopback)
        pcapFile = prefix + "-" + std::to_string(hosts.nodes.Get(0)->GetId()) + "-" +
                   std::to_string(hosts.devices.Get(0)->GetIfIndex()) + ".pcap";
        Mac48Address::ConvertFrom(hosts.devices.Get(0)->GetAddress()).CopyTo(mac);
    }
    Simulator::Destroy(); // with the devices gone, closes (flushes) the files
    uint32_t linkType = 0;
    const auto records = ReadPcap(pcapFile, &linkType);
    EXPECT_EQ(linkType, 1u);       // DLT_EN10MB
    ASSERT_EQ(records.size(), 2u); // the request sent, the echo received
    for (const auto& r : records)
    {
        ASSERT_EQ(r.size(), 100 + kIpUdp + kEth);
        EXPECT_EQ(r[12], 0x08); // EtherType IPv4
        EXPECT_EQ(r[13], 0x00);
        EXPECT_EQ(r[14] >> 4, 4); // IP version
        EXPECT_EQ(r[14 + 9], 17); // UDP
    }
    EXPECT_TRUE(std::equal(mac, mac + 6, records[0].begin() + 6)); // request: from the client
    EXPECT_TRUE(std::equal(mac, mac + 6, records[1].begin()) ||    // echo: to it, or broadcast
                records[1][0] == 0xff);
    // ASCII: each end hands over one packet (+), serializes it (-), and
    // receives the other's (r); no drops
    std::ifstream in(asciiFile);
    std::map<char, uint32_t> lines;
    std::string line;
    while (std::getline(in, line))
    {
        ++lines[line.empty() ? '?' : line[0]];
        EXPECT_NE(line.find("$ns3::FabricNetDevice/"), std::string::npos) << line;
    }
    EXPECT_EQ(lines.count('d'), 0u);
    EXPECT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines['+'], 2u);
    EXPECT_EQ(lines['-'], 2u);
    EXPECT_EQ(lines['r'], 2u);
}

TEST_F(FabricIpTest, TsharkDecodesTcpOverFabricLinks)
{
    // A 100 kB TCP transfer over one fabric link, captured at the sender:
    // Wireshark's dissectors see Ethernet, IPv4 and TCP in every frame, and
    // the TCP payload of the sender's frames adds up to the bytes sent.
    const std::string prefix = ::testing::TempDir() + "gpu-fabric-tcp";
    const uint64_t bytes = 100'000;
    std::string pcapFile;
    std::string senderIp;
    {
        TwoHosts hosts("10Gbps", MicroSeconds(1));
        hosts.link.EnablePcap(prefix, hosts.devices.Get(0), false, true);
        pcapFile = prefix;
        PacketSinkHelper sink("ns3::TcpSocketFactory",
                              InetSocketAddress(Ipv4Address::GetAny(), 5000));
        ApplicationContainer sinkApp = sink.Install(hosts.nodes.Get(1));
        BulkSendHelper source("ns3::TcpSocketFactory",
                              InetSocketAddress(hosts.ifaces.GetAddress(1), 5000));
        source.SetAttribute("MaxBytes", UintegerValue(bytes));
        source.Install(hosts.nodes.Get(0)).Start(MilliSeconds(1));
        Simulator::Stop(Seconds(1));
        Simulator::Run();
        ASSERT_EQ(DynamicCast<PacketSink>(sinkApp.Get(0))->GetTotalRx(), bytes);
        std::ostringstream ip;
        ip << hosts.ifaces.GetAddress(0);
        senderIp = ip.str();
    }
    Simulator::Destroy(); // closes the capture
    const auto lines =
        gpu_fabric_test::TsharkFields(pcapFile, {"frame.protocols", "ip.src", "tcp.len"});
    ASSERT_GT(lines.size(), 70u); // at least the 70 data segments of 1448 bytes
    uint64_t payload = 0;
    for (const auto& line : lines)
    {
        const auto f = gpu_fabric_test::SplitTabs(line);
        ASSERT_EQ(f.size(), 3u) << line;
        EXPECT_EQ(f[0].rfind("eth:ethertype:ip:tcp", 0), 0u) << line;
        if (f[1] == senderIp)
        {
            payload += std::stoull(f[2]);
        }
    }
    EXPECT_EQ(payload, bytes);
}

TEST_F(FabricIpTest, LinkChangeCallbacksFireWhenTheLinkGoesDownAndUp)
{
    TwoHosts hosts("8Gbps", NanoSeconds(700));
    uint32_t changes = 0;
    for (uint32_t i = 0; i < 2; ++i)
    {
        hosts.devices.Get(i)->AddLinkChangeCallback(Callback<void>([&changes]() { ++changes; }));
    }
    auto channel = DynamicCast<FabricChannel>(hosts.devices.Get(0)->GetChannel());
    channel->SetLinkUp(false);
    EXPECT_FALSE(hosts.devices.Get(0)->IsLinkUp());
    EXPECT_EQ(changes, 2u);
    channel->SetLinkUp(false); // no change, no call
    EXPECT_EQ(changes, 2u);
    channel->SetLinkUp(true);
    EXPECT_TRUE(hosts.devices.Get(1)->IsLinkUp());
    EXPECT_EQ(changes, 4u);
}

TEST_F(FabricIpTest, AFabricSwitchDropsFramesWithoutAFabricHeader)
{
    // An IP packet (any frame whose EtherType is not 0x88B5) reaching a
    // FabricSwitch has no rank to route on: counted as unroutable and
    // traced, never misread as a FabricHeader (a short one has not even
    // 26 bytes to read).
    Ptr<Node> host = CreateObject<Node>();
    Ptr<FabricSwitch> sw = CreateObject<FabricSwitch>();
    FabricLinkHelper link;
    NetDeviceContainer d = link.Install(host, sw); // the switch's port 0
    ASSERT_EQ(sw->GetNPorts(), 1u);
    // every rank the MAC bytes could be misread as is routable (back out of
    // port 0), so only the EtherType check keeps the frames from going on
    const uint32_t ranks = 1 << 16;
    FabricRoutingTable table(ranks);
    for (uint32_t r = 0; r < ranks; ++r)
    {
        table.Append(r, {0});
    }
    sw->SetRoutingTable(std::move(table));
    uint32_t traced = 0;
    sw->TraceConnectWithoutContext(
        "NoRouteDrop",
        Callback<void, Ptr<const Packet>>([&traced](Ptr<const Packet>) { ++traced; }));
    EXPECT_TRUE(d.Get(0)->Send(Create<Packet>(1000), d.Get(1)->GetAddress(), 0x0800));
    EXPECT_TRUE(d.Get(0)->Send(Create<Packet>(4), d.Get(1)->GetAddress(), 0x0800));
    Simulator::Run();
    EXPECT_EQ(sw->GetNoRouteDrops(), 2u);
    EXPECT_EQ(traced, 2u);
}

TEST_F(FabricIpTest, APlainNodeReceivesFabricFramesAsEtherType88B5)
{
    // A frame with a FabricHeader (its MACs carry ranks, not the devices'
    // addresses) reaches a plain node's handler for 0x88B5 on a
    // point-to-point link, with the 12 fabric bytes after the Ethernet part
    NodeContainer nodes;
    nodes.Create(2);
    FabricLinkHelper link;
    link.SetDeviceAttribute("DataRate", StringValue("8Gbps"));
    NetDeviceContainer d = link.Install(nodes);
    std::vector<uint32_t> sizes;
    std::vector<Address> from;
    nodes.Get(1)->RegisterProtocolHandler(Node::ProtocolHandler([&](Ptr<NetDevice>,
                                                                    Ptr<const Packet> p,
                                                                    uint16_t,
                                                                    const Address& sender,
                                                                    const Address&,
                                                                    NetDevice::PacketType) {
                                              sizes.push_back(p->GetSize());
                                              from.push_back(sender);
                                          }),
                                          FabricHeader::kEtherType,
                                          d.Get(1));
    FabricHeader h;
    h.src = 3;
    h.dst = 7;
    Ptr<Packet> p = Create<Packet>(100);
    p->AddHeader(h);
    ASSERT_TRUE(DynamicCast<FabricNetDevice>(d.Get(0))->Enqueue(p, h, nullptr));
    Simulator::Run();
    ASSERT_EQ(sizes.size(), 1u);
    EXPECT_EQ(sizes[0], 100u + FabricHeader::kSerializedSize - kEth);
    EXPECT_EQ(from[0], Address(Mac48Address("02:00:00:00:00:03"))); // rank 3
}

TEST_F(FabricIpTest, InstallNeedsExactlyTwoNodes)
{
    // a program's mistake, as PointToPointHelper's NS_ASSERT treats it: the
    // program aborts (in every build), and the message names the count
    NodeContainer three;
    three.Create(3);
    EXPECT_DEATH(FabricLinkHelper().Install(three),
                 "FabricLinkHelper::Install nodes: got '3', allowed: exactly 2");
    NodeContainer one;
    one.Create(1);
    EXPECT_DEATH(FabricLinkHelper().Install(one),
                 "FabricLinkHelper::Install nodes: got '1', allowed: exactly 2");
}

TEST_F(FabricIpTest, ThePlainNodesDefaultDeviceQueueIsPointToPointHelpers)
{
    // a shallow device queue (DropTailQueue's default, 100 packets, what
    // PointToPointHelper gives), so the backlog waits in the queue disc
    NodeContainer nodes;
    nodes.Create(2);
    const NetDeviceContainer d = FabricLinkHelper().Install(nodes);
    TypeId::AttributeInformation info;
    ASSERT_TRUE(DropTailQueue<Packet>::GetTypeId().LookupAttributeByName("MaxSize", &info));
    const std::string byDefault = info.initialValue->SerializeToString(info.checker);
    for (uint32_t i = 0; i < 2; ++i)
    {
        Ptr<Queue<Packet>> q = DynamicCast<FabricNetDevice>(d.Get(i))->GetQueue();
        ASSERT_TRUE(DynamicCast<DropTailQueue<Packet>>(q));
        EXPECT_EQ(q->GetMaxSize(), QueueSize(byDefault));
        EXPECT_EQ(q->GetMaxSize(), QueueSize("100p"));
    }
    // a switch's port keeps the queue the switch gives it (PortBuffer)
    Ptr<FabricSwitch> sw = CreateObject<FabricSwitch>();
    Ptr<Node> host = CreateObject<Node>();
    const NetDeviceContainer e = FabricLinkHelper().Install(sw, host);
    // (PortBuffer is in bytes)
    EXPECT_EQ(DynamicCast<FabricNetDevice>(e.Get(0))->GetQueue()->GetMaxSize().GetUnit(),
              QueueSizeUnit::BYTES);
}

TEST_F(FabricIpTest, InstallByNameJoinsTheNamedNodes)
{
    // as PointToPointHelper: nodes known to ns3::Names, alone or mixed with a
    // Ptr; an unknown name is bad input, named
    NodeContainer nodes;
    nodes.Create(3);
    Names::Add("gpu-fabric-test-a", nodes.Get(0));
    Names::Add("gpu-fabric-test-b", nodes.Get(1));
    FabricLinkHelper link;
    const NetDeviceContainer ab = link.Install("gpu-fabric-test-a", "gpu-fabric-test-b");
    const NetDeviceContainer ac = link.Install("gpu-fabric-test-a", nodes.Get(2));
    const NetDeviceContainer cb = link.Install(nodes.Get(2), "gpu-fabric-test-b");
    EXPECT_EQ(ab.Get(0)->GetNode(), nodes.Get(0));
    EXPECT_EQ(ab.Get(1)->GetNode(), nodes.Get(1));
    EXPECT_EQ(ac.Get(1)->GetNode(), nodes.Get(2));
    EXPECT_EQ(cb.Get(0)->GetNode(), nodes.Get(2));
    EXPECT_EQ(cb.Get(1)->GetNode(), nodes.Get(1));
    EXPECT_EQ(ab.Get(0)->GetChannel(), ab.Get(1)->GetChannel());
    EXPECT_EQ(nodes.Get(0)->GetNDevices(), 2u);
    try
    {
        link.Install("gpu-fabric-test-a", "gpu-fabric-test-nobody");
        FAIL() << "an unknown name accepted";
    }
    catch (const FabricConfigError& e)
    {
        const std::string what = e.what();
        EXPECT_NE(what.find("gpu-fabric-test-nobody"), std::string::npos) << what;
        EXPECT_NE(what.find("ns3::Names"), std::string::npos) << what;
    }
    Names::Clear();
}

} // namespace
