/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * FabricDistributed::SendPacket and AttachReceiver on two ranks (run by
 * test-distributed under mpirun -np 2): rank 0 sends frames of its own bytes
 * to a device of rank 1's node, changing and resending each packet after
 * sending it; rank 1 must receive every frame once, at its time, with the
 * bytes it had when it was sent. Rank 0 prints the verdict and the program
 * exits 0 only if it holds.
 */
#include "ns3/fabric-distributed.h"
#include "ns3/fabric-link-helper.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simple-net-device.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <cstdio>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

constexpr uint32_t kFrames = 40;
const Time kStart = NanoSeconds(100);

/// Frame k's bytes: its first version (sent) and its second (the same packet, changed).
std::vector<uint8_t>
FrameBytes(uint32_t k, bool changed)
{
    std::vector<uint8_t> bytes(20 + k * 7);
    for (size_t i = 0; i < bytes.size(); ++i)
    {
        bytes[i] = static_cast<uint8_t>(k * 31 + i * 7 + (changed ? 101 : 0));
    }
    return bytes;
}

/// Frame k's arrival: its first version, then its second 3 ns later.
Time
Arrival(uint32_t k, bool changed)
{
    return kStart + MicroSeconds(2) + NanoSeconds(k * 10 + (changed ? 3 : 0));
}

struct Received
{
    Time at;
    std::vector<uint8_t> bytes;
};

std::vector<Received> g_received;

void
Receive(Ptr<Packet> p)
{
    Received r{Simulator::Now(), std::vector<uint8_t>(p->GetSize())};
    p->CopyData(r.bytes.data(), p->GetSize());
    g_received.push_back(std::move(r));
}

void
SendAll(uint32_t node, uint32_t ifIndex)
{
    for (uint32_t k = 0; k < kFrames; ++k)
    {
        const std::vector<uint8_t> first = FrameBytes(k, false);
        Ptr<Packet> p = Create<Packet>(first.data(), static_cast<uint32_t>(first.size()));
        FabricDistributed::SendPacket(p, Arrival(k, false), node, ifIndex);
        // the caller may change the packet it sent, and send it again
        const std::vector<uint8_t> second = FrameBytes(k, true);
        p->RemoveAtEnd(p->GetSize());
        p->AddAtEnd(Create<Packet>(second.data(), static_cast<uint32_t>(second.size())));
        FabricDistributed::SendPacket(p, Arrival(k, true), node, ifIndex);
    }
}

/// What rank 1 got against what rank 0 sent: "" if every frame matches.
std::string
Check()
{
    if (g_received.size() != 2 * kFrames)
    {
        return "received " + std::to_string(g_received.size()) + " frames, sent " +
               std::to_string(2 * kFrames);
    }
    for (uint32_t i = 0; i < g_received.size(); ++i)
    {
        const uint32_t k = i / 2;
        const bool changed = i % 2 == 1;
        if (g_received[i].at != Arrival(k, changed))
        {
            return "frame " + std::to_string(i) + " arrived at " +
                   std::to_string(g_received[i].at.GetNanoSeconds()) + " ns, sent for " +
                   std::to_string(Arrival(k, changed).GetNanoSeconds()) + " ns";
        }
        if (g_received[i].bytes != FrameBytes(k, changed))
        {
            return "frame " + std::to_string(i) + " arrived with other bytes than it was sent with";
        }
    }
    return "";
}

} // namespace

int
main(int argc, char** argv)
{
    FabricDistributed::Enable(&argc, &argv);
    if (FabricDistributed::GetSize() != 2)
    {
        std::fprintf(stderr, "distributed-send-packet: run it under mpirun -np 2\n");
        FabricDistributed::Disable();
        return 2;
    }
    const uint32_t me = FabricDistributed::GetSystemId();
    Ptr<Node> a = CreateObject<Node>(0);
    Ptr<Node> b = CreateObject<Node>(1);
    // a cable between the ranks gives ns-3's engine its lookahead
    FabricLinkHelper link;
    link.SetChannelAttribute("Delay", TimeValue(MicroSeconds(1)));
    link.Install(a, b);
    Ptr<SimpleNetDevice> sink = CreateObject<SimpleNetDevice>();
    b->AddDevice(sink);
    if (me == 1)
    {
        FabricDistributed::AttachReceiver(sink, MakeCallback(&Receive));
    }
    else
    {
        Simulator::Schedule(kStart, &SendAll, b->GetId(), sink->GetIfIndex());
    }
    Simulator::Stop(MicroSeconds(10));
    Simulator::Run();
    const std::vector<std::string> verdicts =
        FabricDistributed::GatherToRoot(me == 1 ? Check() : "");
    int status = 0;
    if (me == 0)
    {
        if (verdicts.size() == 2 && verdicts[1].empty())
        {
            std::printf("rank 1 received all %u frames as they were sent\n", 2 * kFrames);
        }
        else
        {
            std::printf("FAILED: %s\n", verdicts.size() == 2 ? verdicts[1].c_str() : "no verdict");
            status = 1;
        }
    }
    FabricDistributed::DestroySimulation();
    FabricDistributed::Disable();
    return status;
}
