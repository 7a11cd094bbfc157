/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fault-helper.h"

#include "ns3/boolean.h"
#include "ns3/fabric-error.h"
#include "ns3/simulator.h"

namespace ns3
{

FaultHelper::FaultHelper(Ptr<Fabric> fabric)
    : m_fabric(fabric)
{
    FabricRequire(fabric != nullptr, "fabric", "null", "a Fabric from FabricHelper::Install");
    m_injector = fabric->GetObject<FaultInjector>();
    if (!m_injector)
    {
        m_injector = CreateObject<FaultInjector>();
        m_injector->SetFabric(PeekPointer(fabric));
        fabric->AggregateObject(m_injector);
    }
}

void
FaultHelper::SetDetectionDelay(Time delay)
{
    FabricRequire(!delay.IsStrictlyNegative(),
                  "detection delay",
                  delay.GetSeconds(),
                  "a time >= 0 (seconds)");
    m_injector->SetAttribute("DetectionDelay", TimeValue(delay));
}

void
FaultHelper::SetHbDomainRelay(bool relay)
{
    m_injector->SetAttribute("HbDomainRelay", BooleanValue(relay));
}

Time
FaultHelper::When(Time at) const
{
    FabricRequire(at >= Simulator::Now(),
                  "fault time",
                  fmt::format("{} s", at.GetSeconds()),
                  fmt::format("a time not before now ({} s)", Simulator::Now().GetSeconds()));
    return at - Simulator::Now();
}

template <typename... Args>
void
FaultHelper::At(Time at, void (FaultInjector::*fault)(Args...), Args... args) const
{
    Simulator::Schedule(When(at), [injector = m_injector, fault, args...] {
        if (injector->HasFabric())
        {
            (PeekPointer(injector)->*fault)(args...);
        }
    });
}

void
FaultHelper::LinkDown(uint32_t cable, Time at) const
{
    m_injector->RequireCable(cable);
    At(at, &FaultInjector::LinkDown, cable);
}

void
FaultHelper::LinkUp(uint32_t cable, Time at) const
{
    m_injector->RequireCable(cable);
    At(at, &FaultInjector::LinkUp, cable);
}

void
FaultHelper::SwitchDown(uint32_t vertex, Time at) const
{
    m_injector->RequireSwitch(vertex);
    At(at, &FaultInjector::SwitchDown, vertex);
}

void
FaultHelper::SwitchUp(uint32_t vertex, Time at) const
{
    m_injector->RequireSwitch(vertex);
    At(at, &FaultInjector::SwitchUp, vertex);
}

void
FaultHelper::GpuDown(uint32_t rank, Time at) const
{
    m_injector->RequireGpu(rank);
    At(at, &FaultInjector::GpuDown, rank);
}

void
FaultHelper::DegradeLink(uint32_t cable, double fraction, Time at) const
{
    m_injector->RequireCable(cable);
    FaultInjector::RequireRateFraction(fraction);
    At(at, &FaultInjector::DegradeLink, cable, fraction);
}

void
FaultHelper::SetBitErrorRate(uint32_t cable, double ber, Time at) const
{
    m_injector->RequireCable(cable);
    FabricRequire(ber >= 0 && ber < 1, "bit-error rate", ber, "a probability in [0, 1)");
    At(at, &FaultInjector::SetBitErrorRate, cable, ber);
}

Ptr<FaultInjector>
FaultHelper::GetInjector() const
{
    return m_injector;
}

uint32_t
FaultHelper::FindCable(const FabricTopology& topo, uint32_t a, uint32_t b)
{
    const auto& cables = topo.Cables();
    for (uint32_t c = 0; c < cables.size(); ++c)
    {
        if ((cables[c].a == a && cables[c].b == b) || (cables[c].a == b && cables[c].b == a))
        {
            return c;
        }
    }
    throw FabricConfigError("cable ends",
                            fmt::format("{} - {}", a, b),
                            "two vertices joined by a cable of the topology");
}

std::vector<uint32_t>
FaultHelper::FindSwitches(const FabricTopology& topo, const std::string& role)
{
    std::vector<uint32_t> out;
    for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
    {
        if (topo.Node(v).kind != TopoNodeKind::Gpu && topo.Node(v).role == role)
        {
            out.push_back(v);
        }
    }
    return out;
}

std::vector<uint32_t>
FaultHelper::CablesOf(const FabricTopology& topo, uint32_t vertex)
{
    std::vector<uint32_t> out;
    const auto& cables = topo.Cables();
    for (uint32_t c = 0; c < cables.size(); ++c)
    {
        if (cables[c].a == vertex || cables[c].b == vertex)
        {
            out.push_back(c);
        }
    }
    return out;
}

} // namespace ns3
