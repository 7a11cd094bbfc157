// Uses the installed gpu-fabric only by TypeId name, as a study that sets the
// module's attributes with Config::SetDefault or --ns3:: flags and never calls
// it directly: the library must still be linked and its types registered.
#include "ns3/config.h"
#include "ns3/type-id.h"
#include "ns3/uinteger.h"

#include <cstdio>

using namespace ns3;

int
main()
{
    TypeId tid;
    if (!TypeId::LookupByNameFailSafe("ns3::FabricNetDevice", &tid))
    {
        std::printf("ns3::FabricNetDevice is not registered: the library was not linked\n");
        return 1;
    }
    if (!Config::SetDefaultFailSafe("ns3::FabricNetDevice::Mtu", UintegerValue(9000)))
    {
        std::printf("ns3::FabricNetDevice::Mtu could not be set\n");
        return 1;
    }
    std::printf("by name: ns3::FabricNetDevice registered\n");
    return 0;
}
