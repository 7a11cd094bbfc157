// Uses the installed gpu-fabric: one message across a rail-only fabric, then
// the same on the flow-level backend through the by-name helpers.
#include "ns3/gpu-fabric-module.h"
#include "ns3/simulator.h"

#include <cstdio>

using namespace ns3;

int
main()
{
    ClusterParams p;
    p.gpus = 16;
    p.platform = HbDomainPreset::Get("dgx-h100");
    Ptr<Fabric> fabric = FabricHelper().Install(BuildRailOnly(p));
    fabric->GetTransport()->Send(1, 13, 1 << 20, Transport::DoneCallback());
    Simulator::Run();
    const auto totals = fabric->GetTransport()->GetTotals();
    std::printf("delivered %llu bytes\n", static_cast<unsigned long long>(totals.bytesDelivered));
    Simulator::Destroy();
    // the same by name on the flow-level backend, as a scenario of one's own
    // offering --topology and --backend would
    InstalledTransport flow =
        TransportHelper("flow").Install(TopologyHelper(p).Create("rail-only"));
    flow.transport->Send(1, 13, 1 << 20, Transport::DoneCallback());
    Simulator::Run();
    const auto flowTotals = flow.transport->GetTotals();
    std::printf("flow: delivered %llu bytes\n",
                static_cast<unsigned long long>(flowTotals.bytesDelivered));
    flow.Dispose();
    Simulator::Destroy();
    return totals.bytesDelivered == (1u << 20) && flowTotals.bytesDelivered == (1u << 20) ? 0 : 1;
}
