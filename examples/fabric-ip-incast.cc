/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// examples/fabric-ip-incast: gpu-fabric links in a plain ns-3 IP study.
// N hosts send TCP bulk transfers through one router to a sink; every link
// is a FabricNetDevice pair made by FabricLinkHelper, under ns-3's own
// Internet stack and applications, with a queue disc above every interface
// (ns-3's default FqCoDel, another one, or none). Prints each flow's
// completion time and goodput, the router port's and its queue disc's
// drops and backlog, and the line-rate bound (all bytes, with
// TCP/IP/Ethernet framing, through the one bottleneck port).
#include "program-support.h"

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/gpu-fabric-module.h"
#include "ns3/internet-module.h"
#include "ns3/program-flags.h"
#include "ns3/traffic-control-module.h"

#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

using namespace ns3;

namespace
{

/// Bytes and last arrival per sender, from the sink's Rx trace.
struct Flows
{
    std::map<Ipv4Address, uint64_t> bytes;
    std::map<Ipv4Address, Time> last;
    uint64_t expected{0}; //!< all senders' bytes
    uint64_t received{0};

    void Received(Ptr<const Packet> p, const Address& from)
    {
        const Ipv4Address sender = InetSocketAddress::ConvertFrom(from).GetIpv4();
        bytes[sender] += p->GetSize();
        last[sender] = Simulator::Now();
        received += p->GetSize();
        if (received == expected)
        {
            // queue discs with a periodic timer (PIE) would run forever
            Simulator::Stop();
        }
    }
};

/// Queue discs that run as a root disc without configuration.
const std::vector<std::string> kQueueDiscs = {"ns3::FqCoDelQueueDisc",
                                              "ns3::FqPieQueueDisc",
                                              "ns3::PfifoFastQueueDisc",
                                              "ns3::FifoQueueDisc",
                                              "ns3::RedQueueDisc",
                                              "ns3::CoDelQueueDisc",
                                              "ns3::PieQueueDisc"};

/// Largest value a TracedValue took.
struct MaxOf
{
    uint32_t max{0};

    void Changed(uint32_t, uint32_t now)
    {
        max = std::max(max, now);
    }
};

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t senders = 4;
    uint64_t bytes = 4'000'000;
    std::string rate = "10Gbps";
    uint32_t delayNs = 1000;
    uint32_t queuePackets = 100;
    uint32_t segmentBytes = 1448;
    std::string queueDisc = "ns3::FqCoDelQueueDisc";
    std::string pcap;
    std::string ascii;
    std::string json;
    ProgramFlags cmd("fabric-ip-incast", __FILE__);
    cmd.Usage("TCP incast through one router over gpu-fabric links (FabricLinkHelper) under "
              "ns-3's Internet stack.");
    cmd.AddValue("senders", "number of TCP senders", senders);
    cmd.AddValue("bytes", "bytes each sender transfers", bytes);
    cmd.AddValue("rate", "line rate of every link", rate);
    cmd.AddValue("delay-ns", "propagation delay of every link, ns", delayNs);
    cmd.AddValue("queue-packets", "transmit queue of every port, packets", queuePackets);
    cmd.AddValue("segment-bytes", "TCP segment size, bytes", segmentBytes);
    cmd.AddValue("queue-disc",
                 fmt::format("queue disc above every interface: {} (the first is ns-3's "
                             "default), or none (no NetDeviceQueueInterface: packets queue and "
                             "drop in the device)",
                             fmt::join(kQueueDiscs, ", ")),
                 queueDisc);
    cmd.AddValue("pcap", "write pcap files with this prefix (empty: none)", pcap);
    cmd.AddValue("ascii", "write an ns-3 ASCII trace to this path (empty: none)", ascii);
    cmd.AddValue("json", "write results as JSON to this path", json);
    cmd.UseFabricScheduler();
    cmd.Parse(argc, argv);

    try
    {
        FabricRequire(senders >= 1 && senders <= 250, "--senders", senders, "1 to 250");
        FabricRequire(bytes > 0, "--bytes", bytes, "a positive byte count");
        FabricRequire(queuePackets > 0, "--queue-packets", queuePackets, "at least 1 packet");
        FabricRequire(segmentBytes > 0 && segmentBytes <= 65495,
                      "--segment-bytes",
                      segmentBytes,
                      "1 to 65495 (an IPv4 datagram's payload)");
        {
            // ns-3's TCP/IP stack costs about 35 us of wall time per segment
            // here (4 x 4 MB in 1448-byte segments: 0.39 s); 50 us errs long
            const double segments = std::ceil(static_cast<double>(bytes) / segmentBytes) * senders;
            FabricRequireWork(segments * 50e-6,
                              segmentBytes < 1448 ? "--segment-bytes" : "--bytes",
                              segmentBytes < 1448 ? std::to_string(segmentBytes)
                                                  : std::to_string(bytes),
                              fmt::format("{:.3g} TCP segments", segments));
        }
        const bool withQueueDisc = queueDisc != "none";
        if (withQueueDisc &&
            std::find(kQueueDiscs.begin(), kQueueDiscs.end(), queueDisc) == kQueueDiscs.end())
        {
            throw FabricConfigError("--queue-disc",
                                    queueDisc,
                                    fmt::format("none or one of {}", fmt::join(kQueueDiscs, ", ")));
        }
        const DataRate lineRate = ParseRate("--rate", rate);
        Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segmentBytes));

        NodeContainer hosts;
        hosts.Create(senders + 1); // the last is the sink
        NodeContainer router;
        router.Create(1);
        InternetStackHelper internet;
        internet.Install(hosts);
        internet.Install(router);
        FabricLinkHelper link;
        link.SetDeviceAttribute("DataRate", DataRateValue(lineRate));
        link.SetChannelAttribute("Delay", TimeValue(NanoSeconds(delayNs)));
        link.SetQueue("ns3::DropTailQueue",
                      "MaxSize",
                      QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queuePackets)));
        TrafficControlHelper queueDiscs;
        if (withQueueDisc)
        {
            queueDiscs.SetRootQueueDisc(queueDisc);
        }
        else
        {
            link.DisableFlowControl();
        }
        Ipv4AddressHelper addresses("10.0.0.0", "255.255.255.0");
        Ptr<FabricNetDevice> bottleneck;
        Ipv4Address sinkAddress;
        for (uint32_t h = 0; h <= senders; ++h)
        {
            NetDeviceContainer d = link.Install(hosts.Get(h), router.Get(0));
            if (withQueueDisc)
            {
                queueDiscs.Install(d); // before Assign, which would install its default
            }
            Ipv4InterfaceContainer i = addresses.Assign(d);
            addresses.NewNetwork();
            bottleneck = DynamicCast<FabricNetDevice>(d.Get(1)); // the router's port
            sinkAddress = i.GetAddress(0);
        }
        Ipv4GlobalRoutingHelper::PopulateRoutingTables();
        if (!pcap.empty())
        {
            link.EnablePcapAll(pcap);
        }
        if (!ascii.empty())
        {
            // ns-3 aborts on a path it cannot open: opened here first, by name
            FabricRequire(std::ofstream(ascii).is_open(),
                          "--ascii",
                          ascii,
                          "a writable file path (is its folder there?)");
            AsciiTraceHelper traces;
            link.EnableAsciiAll(traces.CreateFileStream(ascii));
        }

        const uint16_t port = 5000;
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sinkApp = sinkHelper.Install(hosts.Get(senders));
        Flows flows;
        const uint64_t total = uint64_t{senders} * bytes;
        flows.expected = total;
        sinkApp.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&Flows::Received, &flows));
        const Time start = MilliSeconds(1);
        for (uint32_t h = 0; h < senders; ++h)
        {
            BulkSendHelper source("ns3::TcpSocketFactory", InetSocketAddress(sinkAddress, port));
            source.SetAttribute("MaxBytes", UintegerValue(bytes));
            source.Install(hosts.Get(h)).Start(start);
        }
        Ptr<QueueDisc> bottleneckDisc =
            router.Get(0)->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(bottleneck);
        MaxOf discBacklog;
        if (bottleneckDisc)
        {
            bottleneckDisc->TraceConnectWithoutContext("PacketsInQueue",
                                                       MakeCallback(&MaxOf::Changed, &discBacklog));
        }
        // TCP recovers from any loss well within this; a run that gets here
        // fails below (bytes missing) instead of running forever
        Simulator::Stop(Seconds(1000));
        Simulator::Run();

        // every byte crosses the router's port to the sink in segments of
        // segmentBytes, each framed by TCP (with timestamps: 32), IPv4 (20)
        // and Ethernet II (14) headers
        const uint64_t segments = (bytes + segmentBytes - 1) / segmentBytes * senders;
        const double wire = total + segments * (32.0 + 20 + FabricNetDevice::kEthernetHeaderBytes);
        const double bound = wire * 8 / lineRate.GetBitRate();
        fmt::print("{} TCP senders x {} bytes -> router -> sink, {} links, {} ns, {}-packet "
                   "queues, queue disc {}\n",
                   senders,
                   bytes,
                   rate,
                   delayNs,
                   queuePackets,
                   queueDisc);
        fmt::print("{:<12} {:>12} {:>12} {:>12}\n", "sender", "bytes", "done_ms", "goodput_Gbps");
        nlohmann::json out = {{"senders", senders},
                              {"bytes", bytes},
                              {"rate_bps", lineRate.GetBitRate()},
                              {"delay_ns", delayNs},
                              {"queue_packets", queuePackets},
                              {"queue_disc", queueDisc},
                              {"flows", nlohmann::json::array()}};
        Time lastDone = start;
        for (const auto& [sender, got] : flows.bytes)
        {
            const Time done = flows.last[sender];
            lastDone = std::max(lastDone, done);
            const double gbps = got * 8.0 / (done - start).GetSeconds() / 1e9;
            std::ostringstream name;
            name << sender;
            fmt::print("{:<12} {:>12} {:>12.3f} {:>12.2f}\n",
                       name.str(),
                       got,
                       (done - start).GetSeconds() * 1e3,
                       gbps);
            out["flows"].push_back(
                {{"sender", name.str()}, {"bytes", got}, {"done_s", (done - start).GetSeconds()}});
        }
        const uint64_t delivered = DynamicCast<PacketSink>(sinkApp.Get(0))->GetTotalRx();
        const auto& stats = bottleneck->GetStats();
        fmt::print("delivered {} of {} bytes; all done at {:.3f} ms, line-rate bound {:.3f} ms "
                   "({:.1f} % of it)\n",
                   delivered,
                   total,
                   (lastDone - start).GetSeconds() * 1e3,
                   bound * 1e3,
                   100.0 * bound / (lastDone - start).GetSeconds());
        fmt::print("router port to the sink: {} packets sent, {} dropped (queue full), max queue "
                   "{} bytes\n",
                   stats.txPackets,
                   stats.drops,
                   stats.maxQueueBytes);
        out["bottleneck_queue_disc"] = nullptr; // none
        if (bottleneckDisc)
        {
            const QueueDisc::Stats& discStats = bottleneckDisc->GetStats();
            fmt::print("router queue disc to the sink ({}): max backlog {} packets, {} dropped, "
                       "{} marked\n",
                       queueDisc,
                       discBacklog.max,
                       discStats.nTotalDroppedPackets,
                       discStats.nTotalMarkedPackets);
            out["bottleneck_queue_disc"] = {{"max_packets", discBacklog.max},
                                            {"drops", discStats.nTotalDroppedPackets},
                                            {"marks", discStats.nTotalMarkedPackets}};
        }
        out["delivered_bytes"] = delivered;
        out["all_done_s"] = (lastDone - start).GetSeconds();
        out["line_rate_bound_s"] = bound;
        out["bottleneck"] = {{"tx_packets", stats.txPackets},
                             {"drops", stats.drops},
                             {"max_queue_bytes", stats.maxQueueBytes}};
        if (!json.empty())
        {
            WriteTextFile("--json", json, out.dump(2) + "\n");
        }
        Simulator::Destroy();
        if (delivered != total)
        {
            fmt::print(stderr, "fabric-ip-incast: {} of {} bytes delivered\n", delivered, total);
            return 1;
        }
    }
    catch (const FabricConfigError& e)
    {
        fmt::print(stderr, "fabric-ip-incast: {}\n", e.what());
        return 2;
    }
    return 0;
}
