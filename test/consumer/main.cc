// Uses the installed gpu-fabric: one message across a rail-only fabric.
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
    return totals.bytesDelivered == (1u << 20) ? 0 : 1;
}
