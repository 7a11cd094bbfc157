/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-node.h"

#include "fabric-internal.h"

#include "ns3/boolean.h"
#include "ns3/fabric-error.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <fmt/format.h>
#include <tuple>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FabricNode");
NS_OBJECT_ENSURE_REGISTERED(FabricNode);

TypeId
FabricNode::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FabricNode")
            .SetParent<Node>()
            .SetGroupName("GpuFabric")
            .AddAttribute(
                "CanonicalTies",
                "Handle frames arriving at the same instant in a canonical order "
                "(port index, PFC frames first) after the instant's other events, "
                "so that a distributed run on any number of ranks gives the results "
                "of one process (SetCanonicalTies; on for a partitioned fabric).",
                BooleanValue(false),
                MakeBooleanAccessor(&FabricNode::SetCanonicalTies, &FabricNode::GetCanonicalTies),
                MakeBooleanChecker())
            .AddTraceSource("NoRouteDrop",
                            "A packet was dropped because no route leads to its destination "
                            "(or it carries no FabricHeader to route on).",
                            MakeTraceSourceAccessor(&FabricNode::m_noRouteTrace),
                            "ns3::Packet::TracedCallback");
    return tid;
}

uint32_t&
FabricNextSystemId()
{
    static uint32_t next = 0;
    return next;
}

FabricNode::FabricNode()
    : Node(FabricNextSystemId()),
      m_flush(Create<FabricRecurringEvent<FabricNode, &FabricNode::FlushDeferred>>(this))
{
    m_fwd.salt = FabricEcmpHash(GetId(), 0x9e3779b9U, 0, 0);
}

FabricNode::~FabricNode() = default;

void
FabricNode::DoDispose()
{
    m_loss = FabricNetDevice::LossCallback();
    m_flush->Detach(); // a pending flush may outlive the node
    m_deferred.clear();
    m_flushing.clear();
    m_fwd.ports.clear();
    Node::DoDispose();
}

uint32_t
FabricNode::AddPort(Ptr<FabricNetDevice> device)
{
    // with XON at or above XOFF each pause is undone by the next release:
    // no backpressure, and the lossless bound no longer holds
    UintegerValue xon;
    UintegerValue xoff;
    device->GetAttribute("PfcXon", xon);
    device->GetAttribute("PfcXoff", xoff);
    FabricRequire(xon.Get() < xoff.Get(),
                  "FabricNetDevice::PfcXon",
                  xon.Get(),
                  fmt::format("less than PfcXoff ({}) on port {} of node {}",
                              xoff.Get(),
                              m_fwd.ports.size(),
                              GetId()));
    AddDevice(device); // sets the device's node
    device->SetPortIndex(m_fwd.ports.size());
    device->m_port.deferTies = m_canonicalTies;
    m_fwd.ports.push_back(device);
    return m_fwd.ports.size() - 1;
}

void
FabricNode::AddStandIn(Ptr<FabricNetDevice> device, uint32_t port)
{
    AddDevice(device);
    // a fabric's ports are its nodes' first devices, in port order: this
    // index is the port's interface index where the node is simulated
    device->SetIfIndex(port);
    device->SetPortIndex(port);
}

void
FabricNode::SetCanonicalTies(bool on)
{
    m_canonicalTies = on;
    for (const auto& port : m_fwd.ports)
    {
        port->m_port.deferTies = on;
    }
}

bool
FabricNode::GetCanonicalTies() const
{
    return m_canonicalTies;
}

void
FabricNode::Defer(FabricNetDevice* port,
                  const Ptr<Packet>& p,
                  const FabricFrameMeta& meta,
                  uint32_t epoch)
{
    if (m_deferred.empty())
    {
        // after every event of this instant already due: all arrivals of an
        // instant are scheduled before it (a cable's delay or a frame's
        // serialization ahead), from this rank or, in a distributed run,
        // received from another before the instant is simulated
        m_flush->Schedule(GetId(), Time(0));
    }
    m_deferred.push_back(Deferred{port->m_port.portIndex, true, port, p, meta, epoch, false});
}

void
FabricNode::DeferFlowControl(FabricNetDevice* port, bool pause, uint32_t epoch)
{
    if (m_deferred.empty())
    {
        m_flush->Schedule(GetId(), Time(0));
    }
    m_deferred.push_back(Deferred{port->m_port.portIndex, false, port, nullptr, {}, epoch, pause});
}

void
FabricNode::TakeNote(uint64_t sink, uint64_t cookie, const NoteCallback& take)
{
    if (!m_canonicalTies)
    {
        take(sink, cookie);
        return;
    }
    if (m_deferred.empty())
    {
        m_flush->Schedule(GetId(), Time(0));
    }
    Deferred d{kNotePort, false, nullptr, nullptr, {}, 0, false};
    d.sink = sink;
    d.cookie = cookie;
    d.take = take;
    m_deferred.push_back(d);
}

void
FabricNode::FlushDeferred()
{
    // the batch goes to a buffer kept for its capacity: most instants bring
    // one arrival, and a vector made per flush cost an allocation each
    std::vector<Deferred>& batch = m_flushing;
    batch.swap(m_deferred);
    // by port, PFC before data; a port's own arrivals keep their order (one
    // cable direction is FIFO); then notes, by sink and cookie
    const auto before = [](const Deferred& a, const Deferred& b) {
        if (a.port != b.port)
        {
            return a.port < b.port;
        }
        if (a.port == kNotePort)
        {
            return std::tie(a.sink, a.cookie) < std::tie(b.sink, b.cookie);
        }
        return !a.data && b.data;
    };
    // std::stable_sort takes a temporary buffer even for two elements;
    // an instant's few arrivals are sorted in place (insertion: stable)
    if (batch.size() > 16)
    {
        std::stable_sort(batch.begin(), batch.end(), before);
    }
    else
    {
        for (size_t i = 1; i < batch.size(); ++i)
        {
            for (size_t j = i; j > 0 && before(batch[j], batch[j - 1]); --j)
            {
                std::swap(batch[j], batch[j - 1]);
            }
        }
    }
    for (const Deferred& d : batch)
    {
        if (d.port == kNotePort)
        {
            d.take(d.sink, d.cookie);
        }
        else if (d.data)
        {
            d.dev->ReceiveNow(d.packet, d.meta, d.epoch);
        }
        else
        {
            d.dev->ReceiveFlowControlNow(d.pause, d.epoch);
        }
    }
    batch.clear();
}

uint32_t
FabricNode::GetNPorts() const
{
    return m_fwd.ports.size();
}

Ptr<FabricNetDevice>
FabricNode::GetPort(uint32_t i) const
{
    return m_fwd.ports.at(i);
}

void
FabricNode::SetEcmpSalt(uint32_t salt)
{
    m_fwd.salt = salt;
}

void
FabricNode::SetSourceRoutes(std::shared_ptr<const FabricSourceRoutes> routes)
{
    m_fwd.sourceRoutes = std::move(routes);
}

void
FabricNode::SetRoutingTable(FabricRoutingTable table)
{
    m_fwd.table = std::move(table);
}

const FabricRoutingTable&
FabricNode::GetRoutingTable() const
{
    return m_fwd.table;
}

inline uint32_t
FabricNode::SelectPortIndex(const FabricHeaderData& h) const
{
    const uint32_t n = m_fwd.table.GetNPorts(h.dst);
    if (n == 0)
    {
        return UINT32_MAX;
    }
    if (n == 1)
    {
        return m_fwd.table.GetPort(h.dst, 0);
    }
    if (m_fwd.lb != kEcmp)
    {
        return SelectBalanced(h, n);
    }
    const uint32_t i = FabricEcmpHash(h.src, h.dst, h.flowLabel, m_fwd.salt) % n;
    return m_fwd.table.GetPort(h.dst, i);
}

void
FabricNode::SetLoadBalancing(LoadBalancing mode, Time flowletGap)
{
    m_fwd.lb = mode;
    m_balance.gap = flowletGap;
}

FabricNode::LoadBalancing
FabricNode::GetLoadBalancing() const
{
    return m_fwd.lb;
}

namespace
{
/// A flow's key in the flowlet table.
uint64_t
FlowletKey(const FabricHeaderData& h)
{
    return (uint64_t{h.src} << 40) ^ (uint64_t{h.dst} << 16) ^ uint64_t { h.flowLabel };
}
} // namespace

void
FabricNode::SetFlowletTableSize(uint32_t entries)
{
    m_balance.capacity = std::max<uint32_t>(entries, 1);
    while (m_balance.flows.size() > m_balance.capacity)
    {
        m_balance.flows.erase(m_balance.byUse.front());
        m_balance.byUse.pop_front();
    }
}

uint32_t
FabricNode::GetFlowletCount() const
{
    return m_balance.flows.size();
}

bool
FabricNode::HasFlowlet(const FabricHeaderData& h) const
{
    return m_balance.flows.count(FlowletKey(h)) != 0;
}

uint32_t
FabricNode::SelectBalanced(const FabricHeaderData& h, uint32_t n) const
{
    switch (m_fwd.lb)
    {
    case kSpray: {
        // a destination's equal-cost ports in turn (one turn per node would
        // pin interleaved flows each to one port)
        if (h.dst >= m_balance.next.size())
        {
            m_balance.next.resize(h.dst + 1, 0);
        }
        uint32_t& turn = m_balance.next[h.dst];
        const uint32_t port = m_fwd.table.GetPort(h.dst, turn % n);
        turn = (turn + 1) % n;
        return port;
    }
    case kFlowlet: {
        // LetFlow (Vanini et al., NSDI 2017): a flow keeps its port while its
        // packets come closer than the gap, and hashes anew after an idle gap
        const uint64_t key = FlowletKey(h);
        const Time now = Simulator::Now();
        auto [it, added] = m_balance.flows.try_emplace(key);
        Flowlet& f = it->second;
        auto& byUse = m_balance.byUse;
        if (added)
        {
            // a bounded table, as in a switch: the least recently seen flow
            // makes room (its next packet starts a new flowlet)
            if (m_balance.flows.size() > m_balance.capacity)
            {
                m_balance.flows.erase(byUse.front());
                byUse.pop_front();
            }
            f.used = byUse.insert(byUse.end(), key);
        }
        else
        {
            byUse.splice(byUse.end(), byUse, f.used);
        }
        if (added || now - f.last > m_balance.gap)
        {
            f.port = FabricEcmpHash(h.src, h.dst, h.flowLabel ^ (f.count++ << 16), m_fwd.salt) % n;
        }
        f.last = now;
        return m_fwd.table.GetPort(h.dst, f.port);
    }
    default: {
        // adaptive: the fewest queued bytes, a paused port last; ties from a
        // hashed start, so equal ports share the packets (an ACK's or CNP's
        // sequence field names its flow, not a packet: it is left out, so that
        // ties do not depend on how a rank numbers its messages)
        const uint32_t spread =
            (h.flags & (FabricHeader::kFlagAck | FabricHeader::kFlagCnp)) != 0 ? 0 : h.sequence;
        const uint32_t start = FabricEcmpHash(h.src, h.dst, h.flowLabel ^ spread, m_fwd.salt) % n;
        uint32_t best = UINT32_MAX;
        uint64_t bestLoad = UINT64_MAX;
        for (uint32_t k = 0; k < n; ++k)
        {
            const uint32_t port = m_fwd.table.GetPort(h.dst, (start + k) % n);
            const FabricNetDevice& dev = *m_fwd.ports[port];
            const uint64_t load = uint64_t{dev.GetQueueBytes()} +
                                  (dev.IsTxPaused() ? 1ULL << 32 : 0) +
                                  (dev.IsUp() ? 0 : 1ULL << 40);
            if (load < bestLoad)
            {
                best = port;
                bestLoad = load;
            }
        }
        return best;
    }
    }
}

FabricNetDevice*
FabricNode::SelectPort(const FabricHeaderData& h) const
{
    const uint32_t port = SelectPortIndex(h);
    return port == UINT32_MAX ? nullptr : PeekPointer(m_fwd.ports[port]);
}

void
FabricDataPlane::PrefetchForward(const FabricNode& node, uint32_t stage, const FabricHeaderData& h)
{
    if ((h.flags & FabricHeader::kFlagSourceRoute) != 0)
    {
        return;
    }
    switch (stage)
    {
    case 1:
        // a node's own fields stay in cache (a few hundred nodes, each on
        // many paths): the route is asked for at once, one stage earlier
        FabricPrefetch(&node); // its vtable pointer (HandlePacket)
        FabricPrefetchObject(node.m_fwd);
        node.m_fwd.table.PrefetchRoute(h.dst);
        break;
    default: {
        // the port SelectPort() will return (a disposed node has no ports
        // left); only where choosing it changes nothing: spraying and
        // flowlets advance their state with each choice
        if (node.m_fwd.lb != FabricNode::kEcmp && node.m_fwd.lb != FabricNode::kAdaptive)
        {
            break;
        }
        const uint32_t port = node.SelectPortIndex(h);
        if (port < node.m_fwd.ports.size())
        {
            PrefetchEnqueue(*node.m_fwd.ports[port], stage - 1);
        }
    }
    }
}

uint64_t
FabricNode::GetNoRouteDrops() const
{
    return m_noRouteDrops;
}

void
FabricNode::SetLossCallback(FabricNetDevice::LossCallback cb)
{
    m_loss = cb;
}

void
FabricNode::NotifyLoss(Ptr<const Packet> p) const
{
    if (!m_loss.IsNull())
    {
        m_loss(p, false);
    }
}

void
FabricNode::ReceiveFromPort(FabricNetDevice* port, const Ptr<Packet>& p, const FabricHeaderData* h)
{
    if (h != nullptr)
    {
        HandlePacket(port, p, *h);
        return;
    }
    // A frame without a FabricHeader (an IP packet from a plain ns-3 node,
    // say) has no rank to route on: dropped as unroutable, not misread.
    if (!FabricHeader::IsFabricFrame(*p))
    {
        NS_LOG_WARN("node " << GetId() << ": frame without a FabricHeader dropped");
        DropUnroutable(p, false); // no transport's packet: nothing to resend
        return;
    }
    FabricHeader parsed;
    p->PeekHeader(parsed);
    HandlePacket(port, p, parsed);
}

void
FabricNode::DropUnroutable(const Ptr<Packet>& p, bool notifyLoss)
{
    ++m_noRouteDrops;
    m_noRouteTrace(p);
    if (notifyLoss)
    {
        NotifyLoss(p);
    }
}

bool
FabricNode::Forward(FabricNetDevice* port, const Ptr<Packet>& p, const FabricHeaderData& h)
{
    if (h.flags & FabricHeader::kFlagSourceRoute)
    {
        const auto* route = m_fwd.sourceRoutes && h.flowLabel < m_fwd.sourceRoutes->ports.size()
                                ? &m_fwd.sourceRoutes->ports[h.flowLabel]
                                : nullptr;
        const uint32_t hop = h.hop + 1u;
        if (route == nullptr || hop >= route->size() || (*route)[hop] >= m_fwd.ports.size())
        {
            NS_LOG_WARN("node " << GetId() << ": bad source route " << h.flowLabel);
            DropUnroutable(p, true);
            return false;
        }
        // only source-routed packets pay for rewriting the header
        FabricHeader next;
        p->RemoveHeader(next);
        next.hop = hop;
        p->AddHeader(next);
        return m_fwd.ports[(*route)[hop]]->Enqueue(p, next, port);
    }
    FabricNetDevice* out = SelectPort(h);
    if (out == nullptr)
    {
        NS_LOG_WARN("node " << GetId() << ": no route to rank " << h.dst);
        DropUnroutable(p, true);
        return false;
    }
    return out->Enqueue(p, h, port);
}

} // namespace ns3
