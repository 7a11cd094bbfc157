/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// examples/hb-domain-messages: two 8-GPU HB domains (NVSwitch inside each),
// one rail switch per rail (rail-only). Sends messages inside a domain, along
// a rail, and across rails (relayed through the sender's HB domain) and
// prints each message's path and completion time beside its closed-form
// store-and-forward estimate.
#include "program-support.h"

#include "ns3/core-module.h"
#include "ns3/gpu-fabric-module.h"
#include "ns3/program-flags.h"
#include "ns3/topology-helper.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

using namespace ns3;

namespace
{

struct Probe
{
    uint32_t src;
    uint32_t dst;
    std::string what;
    Time done;
};

void
Finished(Probe* probe)
{
    probe->done = Simulator::Now();
}

/// \return a GPU's NVLink ports (NVSwitch planes): how many, and their rates' sum (b/s)
std::pair<uint32_t, double>
NvLinkPorts(const FabricTopology& topo, uint32_t gpu)
{
    const auto& g = topo.GetGraph();
    std::pair<uint32_t, double> ports{0, 0};
    for (auto [o, oend] = boost::out_edges(gpu, g); o != oend; ++o)
    {
        if (g[*o].kind == TopoLinkKind::NvLink)
        {
            ++ports.first;
            ports.second += g[*o].rateBps;
        }
    }
    return ports;
}

/// Uncontended store-and-forward estimate along a path of links. A GPU
/// stripes its messages over its NVSwitch planes, so an NVLink hop from a
/// GPU drains at the sum of its planes' rates.
double
Estimate(const FabricTopology& topo,
         const std::vector<uint32_t>& path,
         uint64_t bytes,
         uint32_t payload)
{
    const auto& g = topo.GetGraph();
    const uint64_t packets = (bytes + payload - 1) / payload;
    const double wire = bytes + packets * FabricHeader::kSerializedSize;
    const double largest = std::min<uint64_t>(bytes, payload) + FabricHeader::kSerializedSize;
    double t = 0;
    double slowest = 1e300;
    double stripedDrain = 0; // the planes' sum on a GPU's striped first hop
    double stripedSlack = 0;
    for (size_t i = 0; i + 1 < path.size(); ++i)
    {
        for (auto [it, end] = boost::out_edges(path[i], g); it != end; ++it)
        {
            if (boost::target(*it, g) == path[i + 1])
            {
                const double rate = g[*it].rateBps;
                double drain = rate;
                if (g[*it].kind == TopoLinkKind::NvLink)
                {
                    const bool fromGpu = topo.Node(path[i]).kind == TopoNodeKind::Gpu;
                    drain = NvLinkPorts(topo, fromGpu ? path[i] : path[i + 1]).second;
                    if (fromGpu && drain > rate)
                    {
                        stripedDrain = drain;
                        stripedSlack = largest * 8 / rate - largest * 8 / drain;
                    }
                }
                t += g[*it].delayNs * 1e-9 + largest * 8 / rate;
                slowest = std::min(slowest, drain);
                break;
            }
        }
    }
    // The slowest hop paces the whole message and every hop adds one packet.
    // When the striped hop is the slowest, its first packets leave on all
    // planes at once: it takes wire / (planes' sum), not one packet at a
    // plane's rate plus the rest at the sum.
    if (stripedDrain > 0 && stripedDrain == slowest)
    {
        t -= stripedSlack;
    }
    return t + (wire - largest) * 8 / slowest;
}

/// Payload per packet the transport gives a message along \p path: a short
/// message striped to a GPU of the sender's domain is cut into a packet per
/// plane (PacketPayload).
uint32_t
PayloadOnPath(const FabricTopology& topo,
              const std::vector<uint32_t>& path,
              uint64_t bytes,
              const PacketTransport& transport)
{
    const bool inDomain = path.size() == 3 && topo.Node(path[0]).kind == TopoNodeKind::Gpu &&
                          topo.Node(path[1]).kind == TopoNodeKind::NvSwitch;
    const uint32_t planes = inDomain ? NvLinkPorts(topo, path.front()).first : 0;
    return PacketPayload(bytes,
                         transport.GetPayloadPerPacket(),
                         planes,
                         transport.GetStripeMinPayload());
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string preset = "dgx-h100";
    uint64_t bytes = 16 * 1024 * 1024;
    std::string json;
    std::string pcap;
    ProgramFlags cmd("hb-domain-messages", __FILE__);
    cmd.Usage("Two HB domains on a rail-only fabric: message times inside a domain, along a "
              "rail and across rails.");
    cmd.AddValue("preset", "platform preset (dgx-a100, dgx-h100, ...)", preset);
    cmd.AddValue("bytes", "bytes per message", bytes);
    cmd.AddValue("json", "write results as JSON to this path", json);
    cmd.AddValue("pcap", "write pcap files with this prefix (empty: none)", pcap);
    cmd.UseFabricScheduler();
    cmd.Parse(argc, argv);

    try
    {
        FabricRequire(bytes > 0, "--bytes", bytes, "a positive byte count");
        ClusterParams p;
        p.platform = TopologyHelper::GetPlatform(preset);
        p.gpus = 2 * p.platform.gpusPerDomain;
        p.radix = 64;
        const FabricTopology topo = BuildRailOnly(p);
        FabricHelper helper;
        Ptr<Fabric> fabric = helper.Install(topo);
        if (!pcap.empty())
        {
            helper.EnablePcapAll(pcap);
        }
        const uint32_t k = p.platform.gpusPerDomain;
        std::vector<Probe> probes = {{0, 3, "inside a domain (NVLink)", {}},
                                     {0, k, "same rail, other domain (rail switch)", {}},
                                     {1, k + 5, "other rail, other domain (relayed)", {}}};
        Ptr<PacketTransport> transport = fabric->GetTransport();
        for (auto& probe : probes)
        {
            // one at a time, so that each is uncontended
            const Time start = MilliSeconds(10 * (&probe - probes.data()));
            Simulator::Schedule(start, [transport, &probe, bytes]() {
                transport->Send(probe.src, probe.dst, bytes, MakeBoundCallback(&Finished, &probe));
            });
        }
        Simulator::Run();

        fmt::print("{} x 2 domains, rail-only, {} byte messages\n", p.platform.name, bytes);
        fmt::print("{:<40} {:>5} {:>5} {:>12} {:>12}  {}\n",
                   "message",
                   "src",
                   "dst",
                   "time_us",
                   "estimate_us",
                   "path");
        nlohmann::json out = {{"preset", preset},
                              {"bytes", bytes},
                              {"messages", nlohmann::json::array()}};
        const std::vector<FabricRoutingTable> tables = fabric->GetRoutingTables(); // a copy
        for (size_t i = 0; i < probes.size(); ++i)
        {
            const auto& probe = probes[i];
            const auto path = TracePath(topo, tables, probe.src, probe.dst, 0);
            const double took = (probe.done - MilliSeconds(10 * i)).GetSeconds();
            const double est =
                Estimate(topo, path, bytes, PayloadOnPath(topo, path, bytes, *transport));
            fmt::print("{:<40} {:>5} {:>5} {:>12.3f} {:>12.3f}  {}\n",
                       probe.what,
                       probe.src,
                       probe.dst,
                       took * 1e6,
                       est * 1e6,
                       PathToString(topo, path));
            out["messages"].push_back({{"what", probe.what},
                                       {"src", probe.src},
                                       {"dst", probe.dst},
                                       {"time_s", took},
                                       {"estimate_s", est},
                                       {"hops", path.size() - 1}});
        }
        if (!json.empty())
        {
            WriteTextFile("--json", json, out.dump(2) + "\n");
        }
        Simulator::Destroy();
    }
    catch (const FabricConfigError& e)
    {
        fmt::print(stderr, "hb-domain-messages: {}\n", e.what());
        return 2;
    }
    return 0;
}
