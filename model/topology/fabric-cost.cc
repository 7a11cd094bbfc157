/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-cost.h"

#include "ns3/double.h"
#include "ns3/fabric-error.h"

#include <fmt/ranges.h>
#include <set>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FabricCostModel);

FabricCounts
CountEquipment(const FabricTopology& topo, uint32_t radix)
{
    FabricRequire(radix >= 1, "radix", radix, "an integer >= 1");
    FabricCounts c;
    std::set<uint32_t> chassis;
    std::map<uint32_t, uint32_t> chassisTier;
    for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
    {
        const TopoNode& n = topo.Node(v);
        if (n.kind == TopoNodeKind::Switch && chassis.insert(n.chassis).second)
        {
            ++c.switchesByTier[n.tier];
        }
        if (n.kind == TopoNodeKind::Switch)
        {
            c.switchPortsUsed += n.ports;
        }
    }
    c.switches = chassis.size();
    c.switchPorts = c.switches * radix;
    for (const TopoCable& cable : topo.Cables())
    {
        switch (cable.kind)
        {
        case TopoLinkKind::NvLink:
            ++c.nvlinks;
            break;
        case TopoLinkKind::Nic:
            ++c.nics;
            ++c.links;
            break;
        case TopoLinkKind::SwitchToSwitch:
            ++c.links;
            break;
        case TopoLinkKind::Direct:
            ++c.directLinks;
            ++c.links;
            break;
        }
    }
    c.cables = c.links;
    c.transceivers = 2 * c.links;
    return c;
}

TypeId
FabricCostModel::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FabricCostModel")
            .SetParent<Object>()
            .SetGroupName("GpuFabric")
            .AddConstructor<FabricCostModel>()
            .AddAttribute("TransceiverPrice",
                          "US dollars per optical transceiver (HotNets 2023: 374).",
                          DoubleValue(374.0),
                          MakeDoubleAccessor(&FabricCostModel::m_transceiverPrice),
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("SwitchPortPrice",
                          "US dollars per switch port (HotNets 2023: 748).",
                          DoubleValue(748.0),
                          MakeDoubleAccessor(&FabricCostModel::m_portPrice),
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("TransceiverPower",
                          "Watts per optical transceiver (assumption: 12 W for 400G optics).",
                          DoubleValue(12.0),
                          MakeDoubleAccessor(&FabricCostModel::m_transceiverPower),
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("SwitchPortPower",
                          "Watts per switch port (assumption: twice a transceiver, the ratio "
                          "that reproduces the published power savings).",
                          DoubleValue(24.0),
                          MakeDoubleAccessor(&FabricCostModel::m_portPower),
                          MakeDoubleChecker<double>(0.0));
    return tid;
}

FabricCostModel::FabricCostModel()
    : m_transceiverPrice(374.0),
      m_portPrice(748.0),
      m_transceiverPower(12.0),
      m_portPower(24.0)
{
}

std::vector<std::string>
FabricCostModel::PricePresets()
{
    return {"hotnets2023", "railonly2024"};
}

void
FabricCostModel::SetPricePreset(const std::string& name)
{
    if (name == "hotnets2023")
    {
        m_transceiverPrice = 374.0;
        m_portPrice = 748.0;
        return;
    }
    if (name == "railonly2024")
    {
        m_transceiverPrice = 199.0;
        m_portPrice = 694.0;
        return;
    }
    throw FabricConfigError("prices",
                            name,
                            fmt::format("one of {}", fmt::join(PricePresets(), ", ")));
}

double
FabricCostModel::Cost(const FabricCounts& c) const
{
    return c.switchPorts * m_portPrice + c.transceivers * m_transceiverPrice;
}

double
FabricCostModel::Power(const FabricCounts& c) const
{
    return c.switchPorts * m_portPower + c.transceivers * m_transceiverPower;
}

} // namespace ns3
