/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fault-injector.h"

#include "ns3/boolean.h"
#include "ns3/fabric-error.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FaultInjector");
NS_OBJECT_ENSURE_REGISTERED(FaultInjector);

TypeId
FaultInjector::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FaultInjector")
            .SetParent<Object>()
            .SetGroupName("GpuFabric")
            .AddConstructor<FaultInjector>()
            .AddAttribute("DetectionDelay",
                          "Time from a fault (or a repair) to the routing reaction: the "
                          "forwarding tables are recomputed without the failed elements.",
                          TimeValue(MicroSeconds(50)),
                          MakeTimeAccessor(&FaultInjector::m_detectionDelay),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("HbDomainRelay",
                          "Relay traffic that lost its network path through the HB domains "
                          "(NVLink to a GPU on a healthy rail). Off, or when GPUs do not "
                          "forward, such traffic has no path and its messages fail.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&FaultInjector::m_hbDomainRelay),
                          MakeBooleanChecker())
            .AddTraceSource("Fault",
                            "A fault or repair took effect on the data path (description).",
                            MakeTraceSourceAccessor(&FaultInjector::m_faultTrace),
                            "ns3::TracedCallback::String")
            .AddTraceSource("RoutesChanged",
                            "Routing reacted to a fault (description).",
                            MakeTraceSourceAccessor(&FaultInjector::m_routesTrace),
                            "ns3::TracedCallback::String");
    return tid;
}

FaultInjector::FaultInjector() = default;

void
FaultInjector::DoDispose()
{
    m_fabric = nullptr;
    Object::DoDispose();
}

void
FaultInjector::SetFabric(Fabric* fabric)
{
    m_fabric = fabric;
    // a routing update keeps withdrawn routes from the tables of every
    // node's neighbours, computed from theirs: every process needs them all
    fabric->BuildAllRoutingTables();
    const FabricTopology& topo = fabric->GetTopology();
    m_cablesOf.assign(topo.GetNVertices(), {});
    const auto& cables = topo.Cables();
    for (uint32_t c = 0; c < cables.size(); ++c)
    {
        m_cablesOf[cables[c].a].push_back(c);
        m_cablesOf[cables[c].b].push_back(c);
    }
}

bool
FaultInjector::HasFabric() const
{
    return m_fabric != nullptr;
}

void
FaultInjector::RequireFabric() const
{
    FabricRequire(m_fabric != nullptr,
                  "fabric of the FaultHelper",
                  "disposed (Fabric::Dispose or Simulator::Destroy)",
                  "a fabric installed since the last Simulator::Destroy (make a new FaultHelper "
                  "for it)");
}

void
FaultInjector::RequireCable(uint32_t cable) const
{
    RequireFabric();
    const uint32_t n = m_fabric->GetTopology().Cables().size();
    FabricRequire(cable < n, "cable", cable, fmt::format("below {}", n));
}

void
FaultInjector::RequireGpu(uint32_t rank) const
{
    RequireFabric();
    const uint32_t n = m_fabric->GetTopology().GetNGpus();
    FabricRequire(rank < n, "GPU rank", rank, fmt::format("below {}", n));
}

void
FaultInjector::RequireRateFraction(double fraction)
{
    FabricRequire(fraction > 0 && fraction <= 1,
                  "link rate fraction",
                  fraction,
                  "a fraction in (0, 1] of the cable's rate");
}

void
FaultInjector::ApplyCable(uint32_t cable)
{
    const TopoCable& c = m_fabric->GetTopology().Cables()[cable];
    const bool up = m_state.cables.count(cable) == 0 && m_state.vertices.count(c.a) == 0 &&
                    m_state.vertices.count(c.b) == 0;
    auto devs = m_fabric->GetCableDevices(cable);
    if (devs.first) // (not built here: the ranks of its ends apply it)
    {
        DynamicCast<FabricChannel>(devs.first->GetChannel())->SetLinkUp(up);
    }
}

void
FaultInjector::ApplyVertex(uint32_t vertex)
{
    for (uint32_t c : m_cablesOf[vertex])
    {
        ApplyCable(c);
    }
}

void
FaultInjector::Changed(const std::string& what)
{
    const std::string line = fmt::format("{:.9f} s: {}", Simulator::Now().GetSeconds(), what);
    NS_LOG_INFO(line);
    m_log.push_back(line);
    m_faultTrace(what);
    Simulator::Schedule(m_detectionDelay, &FaultInjector::Detect, this, m_state, what);
}

void
FaultInjector::Detect(FaultState snapshot, std::string what)
{
    if (m_fabric == nullptr)
    {
        return;
    }
    bool relay = m_hbDomainRelay;
    for (uint32_t r = 0; r < m_fabric->GetNGpus() && relay; ++r)
    {
        relay = m_fabric->GetGpu(r)->GetForwarding();
    }
    snapshot.hbDomainRelay = relay;
    m_detected = snapshot;
    std::vector<FabricRoutingTable> tables =
        ComputeRoutingTables(m_fabric->GetTopology(), snapshot);
    KeepWithdrawnRoutes(tables, snapshot);
    m_fabric->SetRoutingTables(std::move(tables));
    ++m_updates;
    const std::string line = fmt::format(
        "{:.9f} s: routing updated after: {}{}",
        Simulator::Now().GetSeconds(),
        what,
        m_nKept == 0
            ? std::string()
            : fmt::format(" ({} withdrawn switch routes kept for packets in flight)", m_nKept));
    NS_LOG_INFO(line);
    m_log.push_back(line);
    m_routesTrace(what);
}

void
FaultInjector::KeepWithdrawnRoutes(std::vector<FabricRoutingTable>& tables, const FaultState& state)
{
    const FabricTopology& topo = m_fabric->GetTopology();
    const auto& g = topo.GetGraph();
    const auto installed = [this](uint32_t v) -> const FabricRoutingTable& {
        return m_fabric->GetRoutingTable(v);
    };
    const uint32_t nv = topo.GetNVertices();
    const uint32_t ngpu = topo.GetNGpus();
    std::vector<char> deadVertex(nv, 0);
    for (uint32_t v : state.vertices)
    {
        deadVertex[v] = 1;
    }
    // A kept route is kept once: the next update withdraws it (the installed
    // routes it may keep are those the previous update computed, so that a
    // packet follows the old loop-free routes until it meets a node with a
    // new route, and the new ones from there).
    std::vector<std::vector<uint32_t>> kept(nv);
    m_kept.resize(nv);
    m_nKept = 0;
    constexpr uint32_t kNone = UINT32_MAX;
    std::vector<uint32_t> next;
    std::vector<uint16_t> ports;
    for (uint32_t v = 0; v < nv; ++v)
    {
        if (topo.Node(v).kind == TopoNodeKind::Gpu || deadVertex[v])
        {
            continue;
        }
        std::vector<std::pair<uint32_t, std::vector<uint16_t>>> keep;
        for (uint32_t dst = 0; dst < ngpu; ++dst)
        {
            if (tables[v].GetNPorts(dst) > 0 || installed(v).GetNPorts(dst) == 0 ||
                deadVertex[topo.GpuVertex(dst)] ||
                std::binary_search(m_kept[v].begin(), m_kept[v].end(), dst))
            {
                continue;
            }
            if (next.empty())
            {
                // the vertex behind each port, if its cable and it are up
                next.assign(topo.Node(v).ports, kNone);
                for (auto [it, end] = boost::out_edges(v, g); it != end; ++it)
                {
                    const auto x = static_cast<uint32_t>(boost::target(*it, g));
                    if (state.cables.count(g[*it].cable) == 0 && !deadVertex[x])
                    {
                        next[g[*it].srcPort] = x;
                    }
                }
            }
            // a port that still leads somewhere: to the destination, to a
            // GPU the new tables route on, or to a switch with a route
            // (new or kept)
            const uint32_t dv = topo.GpuVertex(dst);
            ports.clear();
            for (uint32_t i = 0; i < installed(v).GetNPorts(dst); ++i)
            {
                const uint16_t port = installed(v).GetPort(dst, i);
                const uint32_t x = port < next.size() ? next[port] : kNone;
                if (x != kNone &&
                    (x == dv || tables[x].GetNPorts(dst) > 0 ||
                     (topo.Node(x).kind != TopoNodeKind::Gpu && installed(x).GetNPorts(dst) > 0)))
                {
                    ports.push_back(port);
                }
            }
            if (!ports.empty())
            {
                keep.emplace_back(dst, ports);
            }
        }
        next.clear();
        if (keep.empty())
        {
            continue;
        }
        FabricRoutingTable merged(ngpu);
        auto k = keep.begin();
        for (uint32_t dst = 0; dst < ngpu; ++dst)
        {
            if (k != keep.end() && k->first == dst)
            {
                merged.Append(dst, k->second);
                kept[v].push_back(dst);
                ++k;
                continue;
            }
            ports.clear();
            for (uint32_t i = 0; i < tables[v].GetNPorts(dst); ++i)
            {
                ports.push_back(tables[v].GetPort(dst, i));
            }
            merged.Append(dst, ports);
        }
        tables[v] = std::move(merged);
        m_nKept += keep.size();
    }
    m_kept = std::move(kept);
}

uint64_t
FaultInjector::GetKeptRoutes() const
{
    return m_nKept;
}

void
FaultInjector::DetectNow()
{
    Detect(m_state, "faults present at start");
}

void
FaultInjector::LinkDown(uint32_t cable)
{
    RequireCable(cable);
    m_state.cables.insert(cable);
    ApplyCable(cable);
    Changed(fmt::format("cable {} down", cable));
}

void
FaultInjector::LinkUp(uint32_t cable)
{
    RequireCable(cable);
    m_state.cables.erase(cable);
    ApplyCable(cable);
    Changed(fmt::format("cable {} up", cable));
}

void
FaultInjector::RequireSwitch(uint32_t vertex) const
{
    RequireFabric();
    const FabricTopology& topo = m_fabric->GetTopology();
    FabricRequire(vertex < topo.GetNVertices() && topo.Node(vertex).kind != TopoNodeKind::Gpu,
                  "switch vertex",
                  vertex,
                  "a switch or NVSwitch vertex of the topology (GPUs: GpuDown)");
}

void
FaultInjector::SwitchDown(uint32_t vertex)
{
    RequireSwitch(vertex);
    const FabricTopology& topo = m_fabric->GetTopology();
    m_state.vertices.insert(vertex);
    ApplyVertex(vertex);
    Changed(fmt::format("{} switch (vertex {}) down", topo.Node(vertex).role, vertex));
}

void
FaultInjector::SwitchUp(uint32_t vertex)
{
    RequireSwitch(vertex);
    const FabricTopology& topo = m_fabric->GetTopology();
    m_state.vertices.erase(vertex);
    ApplyVertex(vertex);
    Changed(fmt::format("{} switch (vertex {}) up", topo.Node(vertex).role, vertex));
}

void
FaultInjector::GpuDown(uint32_t rank)
{
    RequireGpu(rank);
    const FabricTopology& topo = m_fabric->GetTopology();
    const uint32_t v = topo.GpuVertex(rank);
    m_state.vertices.insert(v);
    m_fabric->GetTransport()->SetEndpointDown(rank, true);
    ApplyVertex(v);
    Changed(fmt::format("GPU {} down", rank));
}

void
FaultInjector::DegradeLink(uint32_t cable, double fraction)
{
    RequireCable(cable);
    RequireRateFraction(fraction);
    const FabricTopology& topo = m_fabric->GetTopology();
    const auto rate = static_cast<uint64_t>(topo.Cables()[cable].rateBps * fraction);
    FabricRequire(rate > 0, "degraded link rate", rate, "at least 1 bit/s");
    m_degraded[cable] = rate;
    auto devs = m_fabric->GetCableDevices(cable);
    if (devs.first)
    {
        devs.first->SetDataRate(DataRate(rate));
        devs.second->SetDataRate(DataRate(rate));
    }
    // a slower link is still a link: routing does not change
    const std::string line = fmt::format("{:.9f} s: cable {} at {} of its rate ({} bit/s)",
                                         Simulator::Now().GetSeconds(),
                                         cable,
                                         fraction,
                                         rate);
    m_log.push_back(line);
    m_faultTrace(line);
}

void
FaultInjector::SetBitErrorRate(uint32_t cable, double ber)
{
    RequireCable(cable);
    auto devs = m_fabric->GetCableDevices(cable);
    if (devs.first)
    {
        // a stream per cable: the same run draws the same corruptions
        DynamicCast<FabricChannel>(devs.first->GetChannel())->SetBitErrorRate(ber, 1000 + cable);
    }
    const std::string line = fmt::format("{:.9f} s: cable {} bit-error rate {}",
                                         Simulator::Now().GetSeconds(),
                                         cable,
                                         ber);
    m_log.push_back(line);
    m_faultTrace(line);
}

uint64_t
FaultInjector::GetCableRate(uint32_t cable) const
{
    RequireCable(cable);
    const auto it = m_degraded.find(cable);
    return it != m_degraded.end() ? it->second : m_fabric->GetTopology().Cables()[cable].rateBps;
}

const FaultState&
FaultInjector::GetFaultState() const
{
    return m_state;
}

const FaultState&
FaultInjector::GetDetectedState() const
{
    return m_detected;
}

const std::vector<std::string>&
FaultInjector::GetLog() const
{
    return m_log;
}

uint32_t
FaultInjector::GetRoutingUpdates() const
{
    return m_updates;
}

} // namespace ns3
