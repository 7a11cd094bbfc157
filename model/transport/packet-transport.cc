/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "packet-transport.h"

#include "ns3/fabric-error.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PacketTransport");
NS_OBJECT_ENSURE_REGISTERED(Transport);
NS_OBJECT_ENSURE_REGISTERED(PacketTransport);

TypeId
Transport::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::GpuFabricTransport").SetParent<Object>().SetGroupName("GpuFabric");
    return tid;
}

TypeId
PacketTransport::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PacketTransport")
            .SetParent<Transport>()
            .SetGroupName("GpuFabric")
            .AddConstructor<PacketTransport>()
            .AddTraceSource("MessageComplete",
                            "The last byte of a message was delivered.",
                            MakeTraceSourceAccessor(&PacketTransport::m_completeTrace),
                            "ns3::PacketTransport::MessageCompleteTracedCallback");
    return tid;
}

PacketTransport::PacketTransport() = default;

void
PacketTransport::DoDispose()
{
    for (auto& gpu : m_gpus)
    {
        gpu->SetDeliveryCallback(FabricGpu::DeliveryCallback());
        for (uint32_t i = 0; i < gpu->GetNPorts(); ++i)
        {
            gpu->GetPort(i)->SetTxReadyCallback(FabricNetDevice::TxReadyCallback());
        }
    }
    m_gpus.clear();
    m_messages.clear();
    Transport::DoDispose();
}

void
PacketTransport::Install(const std::vector<Ptr<FabricGpu>>& gpus)
{
    m_gpus = gpus;
    m_endpoints.assign(gpus.size(), Endpoint());
    uint32_t mtu = 65535;
    for (uint32_t r = 0; r < gpus.size(); ++r)
    {
        FabricRequire(gpus[r]->GetRank() == r,
                      "GPU rank",
                      gpus[r]->GetRank(),
                      fmt::format("{}", r));
        gpus[r]->SetDeliveryCallback(MakeCallback(&PacketTransport::Deliver, this));
        m_endpoints[r].busy.resize(gpus[r]->GetNPorts());
        for (uint32_t i = 0; i < gpus[r]->GetNPorts(); ++i)
        {
            Ptr<FabricNetDevice> port = gpus[r]->GetPort(i);
            port->SetTxReadyCallback(MakeCallback(&PacketTransport::TxReady, this));
            mtu = std::min<uint32_t>(mtu, port->GetMtu());
        }
    }
    m_payload = mtu - FabricHeader::kSerializedSize;
}

uint32_t
PacketTransport::GetNRanks() const
{
    return m_gpus.size();
}

Transport::Totals
PacketTransport::GetTotals() const
{
    return m_totals;
}

uint32_t
PacketTransport::GetPayloadPerPacket() const
{
    return m_payload;
}

uint64_t
PacketTransport::GetPacketsDelivered() const
{
    return m_packetsDelivered;
}

uint64_t
PacketTransport::GetEcnMarkedPackets() const
{
    return m_ecnMarked;
}

uint32_t
PacketTransport::NewMessage(uint32_t srcRank, uint32_t dstRank, uint64_t bytes, DoneCallback done)
{
    const uint32_t n = m_gpus.size();
    FabricRequire(srcRank < n, "source rank", srcRank, fmt::format("a rank below {}", n));
    FabricRequire(dstRank < n, "destination rank", dstRank, fmt::format("a rank below {}", n));
    uint32_t id;
    if (!m_free.empty())
    {
        id = m_free.back();
        m_free.pop_back();
    }
    else
    {
        id = m_messages.size();
        m_messages.emplace_back();
    }
    Message& m = m_messages[id];
    m = Message();
    m.src = srcRank;
    m.dst = dstRank;
    m.bytes = bytes;
    m.start = Simulator::Now();
    m.done = done;
    // Flow label per message (like one queue pair per message): spreads
    // concurrent messages of one pair over ECMP paths, keeps each in order.
    m.flowLabel = static_cast<uint16_t>(FabricNode::EcmpHash(srcRank, dstRank, id, 0x6d));
    return id;
}

bool
PacketTransport::Local(uint32_t id)
{
    Message& m = m_messages[id];
    ++m_totals.messagesSent;
    m_totals.bytesSent += m.bytes;
    if (m.bytes != 0 && m.src != m.dst)
    {
        return false;
    }
    // Nothing crosses the fabric: complete now, but from the event loop so
    // that callers never see re-entrant callbacks.
    m.delivered = m.bytes;
    Simulator::ScheduleNow(&PacketTransport::Complete, this, id);
    return true;
}

void
PacketTransport::Reject(uint32_t id, const std::string& why)
{
    const Message m = m_messages[id];
    m_free.push_back(id);
    --m_totals.messagesSent;
    m_totals.bytesSent -= m.bytes;
    throw FabricConfigError("destination rank",
                            std::to_string(m.dst),
                            fmt::format("a rank reachable from rank {} ({})", m.src, why));
}

uint64_t
PacketTransport::Send(uint32_t srcRank, uint32_t dstRank, uint64_t bytes, DoneCallback done)
{
    const uint32_t id = NewMessage(srcRank, dstRank, bytes, done);
    if (Local(id))
    {
        return id;
    }
    const Ptr<FabricGpu>& gpu = m_gpus[srcRank];
    FabricHeader h;
    h.src = srcRank;
    h.dst = dstRank;
    h.flowLabel = m_messages[id].flowLabel;
    std::vector<FabricNetDevice*> ports;
    const FabricRoutingTable& table = gpu->GetRoutingTable();
    if (gpu->GetSprayPackets())
    {
        // NVLink stripes a transfer over all its links (NVSwitch planes)
        for (uint32_t i = 0; i < table.GetNPorts(dstRank); ++i)
        {
            FabricNetDevice* port = PeekPointer(gpu->GetPort(table.GetPort(dstRank, i)));
            if (!port->IsNvLink())
            {
                ports.clear();
                break;
            }
            ports.push_back(port);
        }
    }
    if (ports.empty())
    {
        if (FabricNetDevice* port = gpu->SelectPort(h))
        {
            ports.push_back(port);
        }
    }
    if (ports.empty())
    {
        Reject(id, "no route");
    }
    Queue(id, ports);
    return id;
}

uint64_t
PacketTransport::SendRouted(uint32_t srcRank,
                            uint32_t dstRank,
                            uint64_t bytes,
                            uint16_t routeId,
                            DoneCallback done)
{
    const uint32_t id = NewMessage(srcRank, dstRank, bytes, done);
    Message& m = m_messages[id];
    m.flowLabel = routeId; // the route id travels in the flow label
    m.routed = true;
    if (Local(id))
    {
        return id;
    }
    const Ptr<FabricGpu>& gpu = m_gpus[srcRank];
    if (!m_sourceRoutes || routeId >= m_sourceRoutes->ports.size() ||
        m_sourceRoutes->ports[routeId].empty() ||
        m_sourceRoutes->ports[routeId][0] >= gpu->GetNPorts())
    {
        Reject(id, fmt::format("source route {} is not registered for it", routeId));
    }
    Queue(id, {PeekPointer(gpu->GetPort(m_sourceRoutes->ports[routeId][0]))});
    return id;
}

void
PacketTransport::SetSourceRoutes(std::shared_ptr<const FabricSourceRoutes> routes)
{
    m_sourceRoutes = std::move(routes);
}

void
PacketTransport::Queue(uint32_t id, const std::vector<FabricNetDevice*>& ports)
{
    Message& m = m_messages[id];
    Endpoint& ep = m_endpoints[m.src];
    for (FabricNetDevice* port : ports)
    {
        const uint32_t p = port->GetPortIndex();
        const uint64_t key = (static_cast<uint64_t>(m.dst) << 16) | p;
        auto [it, added] = ep.index.try_emplace(key, ep.connections.size());
        if (added)
        {
            ep.connections.emplace_back();
        }
        Connection& c = ep.connections[it->second];
        c.messages.push_back(id);
        ++m.queueRefs;
        if (c.messages.size() == 1)
        {
            ep.busy[p].push_back(it->second);
            if (ep.busy[p].size() == 1)
            {
                Pump(port);
            }
        }
    }
}

void
PacketTransport::TxReady(Ptr<FabricNetDevice> port)
{
    Pump(PeekPointer(port));
}

void
PacketTransport::Pump(FabricNetDevice* port)
{
    const auto* gpu = static_cast<const FabricGpu*>(PeekPointer(port->GetNode()));
    Endpoint& ep = m_endpoints[gpu->GetRank()];
    auto& busy = ep.busy[port->GetPortIndex()];
    // Keep at most two packets queued: one serializing next, one ready.
    while (!busy.empty() && !port->IsTxPaused() && port->GetQueuePackets() < 2)
    {
        const uint32_t cid = busy.front();
        busy.pop_front();
        Connection& c = ep.connections[cid];
        const uint32_t id = c.messages.front();
        Message& m = m_messages[id];
        if (m.queued == m.bytes)
        {
            // fully packetized through another port of a striped message
            c.messages.pop_front();
            --m.queueRefs;
            Release(id);
        }
        else
        {
            const auto payload =
                static_cast<uint32_t>(std::min<uint64_t>(m.bytes - m.queued, m_payload));
            m.queued += payload;
            FabricHeader h;
            h.src = m.src;
            h.dst = m.dst;
            h.messageId = id;
            h.sequence = m.nextSeq++;
            h.flowLabel = m.flowLabel;
            h.flags = (m.queued == m.bytes ? FabricHeader::kFlagLast : 0) |
                      (m.routed ? FabricHeader::kFlagSourceRoute : 0);
            if (m.queued == m.bytes)
            {
                c.messages.pop_front();
                --m.queueRefs;
            }
            Ptr<Packet> p = Create<Packet>(payload);
            p->AddHeader(h);
            port->Enqueue(p, nullptr);
        }
        if (!c.messages.empty())
        {
            busy.push_back(cid); // round robin among connections
        }
    }
}

void
PacketTransport::Deliver(Ptr<Packet> p, const FabricHeader& h)
{
    Message& m = m_messages[h.messageId];
    m.delivered += p->GetSize() - FabricHeader::kSerializedSize;
    ++m_packetsDelivered;
    if (h.flags & FabricHeader::kFlagCe)
    {
        ++m_ecnMarked;
    }
    if (m.delivered == m.bytes)
    {
        Complete(h.messageId);
    }
}

void
PacketTransport::Complete(uint32_t id)
{
    Message& m = m_messages[id];
    ++m_totals.messagesDelivered;
    m_totals.bytesDelivered += m.delivered;
    m_completeTrace(m.src, m.dst, m.bytes, m.start);
    DoneCallback done = m.done;
    m.done = DoneCallback();
    m.completed = true;
    Release(id);
    if (!done.IsNull())
    {
        done();
    }
}

void
PacketTransport::Release(uint32_t id)
{
    const Message& m = m_messages[id];
    if (m.completed && m.queueRefs == 0)
    {
        m_free.push_back(id);
    }
}

} // namespace ns3
