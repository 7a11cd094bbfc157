/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-cost.h"

#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/fabric-error.h"

#include <algorithm>
#include <cmath>
#include <fmt/ranges.h>
#include <iterator>
#include <set>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FabricCostModel);

namespace
{

/// CountEquipment without the cables \p removed marks (none when null).
FabricCounts
Count(const FabricTopology& topo, uint32_t radix, const std::vector<bool>* removed)
{
    FabricRequire(radix >= 1, "radix", radix, "an integer >= 1");
    FabricCounts c;
    // switches that keep a cable (all of them when nothing is removed)
    std::vector<bool> cabled(topo.GetNVertices(), removed == nullptr);
    if (removed != nullptr)
    {
        for (uint32_t i = 0; i < topo.Cables().size(); ++i)
        {
            if (!(*removed)[i])
            {
                const TopoCable& cable = topo.Cables()[i];
                cabled[cable.a] = true;
                cabled[cable.b] = true;
                const bool aSwitch = topo.Node(cable.a).kind == TopoNodeKind::Switch;
                const bool bSwitch = topo.Node(cable.b).kind == TopoNodeKind::Switch;
                c.switchPortsUsed += (aSwitch ? 1 : 0) + (bSwitch ? 1 : 0);
            }
        }
    }
    std::set<uint32_t> chassis;
    for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
    {
        const TopoNode& n = topo.Node(v);
        if (n.kind != TopoNodeKind::Switch || !cabled[v])
        {
            continue;
        }
        if (chassis.insert(n.chassis).second)
        {
            ++c.switchesByTier[n.tier];
        }
        if (removed == nullptr)
        {
            c.switchPortsUsed += n.ports;
        }
    }
    c.switches = chassis.size();
    c.switchPorts = c.switches * radix;
    // each chassis at the rate of its fastest cable (0: none)
    std::map<uint32_t, uint64_t> chassisRate;
    for (const uint32_t box : chassis)
    {
        chassisRate[box] = 0;
    }
    // direct arcs between graph nodes (HB domains, or GPUs without one)
    std::map<std::pair<int64_t, int64_t>, uint64_t> arcs;
    const auto graphNode = [&topo](uint32_t v) {
        const int32_t domain = topo.Node(v).domain;
        return domain >= 0 ? int64_t{domain} : -1 - int64_t{v};
    };
    uint64_t directTransceivers = 0;
    for (uint32_t i = 0; i < topo.Cables().size(); ++i)
    {
        const TopoCable& cable = topo.Cables()[i];
        if (removed != nullptr && (*removed)[i])
        {
            continue;
        }
        switch (cable.kind)
        {
        case TopoLinkKind::NvLink:
            ++c.nvlinks;
            break;
        case TopoLinkKind::Nic:
        case TopoLinkKind::SwitchToSwitch:
            c.nics += cable.kind == TopoLinkKind::Nic ? 1 : 0;
            ++c.links;
            ++c.switchedCablesByRate[cable.rateBps];
            for (const uint32_t end : {cable.a, cable.b})
            {
                if (topo.Node(end).kind == TopoNodeKind::Switch)
                {
                    uint64_t& rate = chassisRate[topo.Node(end).chassis];
                    rate = std::max(rate, cable.rateBps);
                }
            }
            break;
        case TopoLinkKind::Direct:
            ++c.directLinks;
            ++c.links;
            // a transmitter at the tail and a receiver at the head: one
            // transceiver's worth per direction
            directTransceivers += cable.bidirectional ? 2 : 1;
            c.directTransceiversByRate[cable.rateBps] += cable.bidirectional ? 2 : 1;
            ++arcs[{graphNode(cable.a), graphNode(cable.b)}];
            if (cable.bidirectional)
            {
                ++arcs[{graphNode(cable.b), graphNode(cable.a)}];
            }
            break;
        }
    }
    // a duplex fibre carries one arc each way between a pair of nodes
    for (const auto& [ends, n] : arcs)
    {
        const auto reverse = arcs.find({ends.second, ends.first});
        const uint64_t back = reverse == arcs.end() ? 0 : reverse->second;
        if (ends.first < ends.second || (back == 0 && ends.first != ends.second))
        {
            c.directFibres += std::max(n, back);
        }
    }
    for (const auto& [box, rate] : chassisRate)
    {
        c.switchPortsByRate[rate] += radix;
    }
    c.cables = c.links - c.directLinks + c.directFibres;
    c.transceivers = 2 * (c.links - c.directLinks) + directTransceivers;
    return c;
}

} // namespace

FabricCounts
CountEquipment(const FabricTopology& topo, uint32_t radix)
{
    return Count(topo, radix, nullptr);
}

std::vector<bool>
RailTrimmableCables(const FabricTopology& topo)
{
    const uint32_t nv = topo.GetNVertices();
    // rails: a GPU's local index; their sizes
    std::map<uint32_t, uint64_t> railSize;
    for (uint32_t r = 0; r < topo.GetNGpus(); ++r)
    {
        ++railSize[topo.Node(topo.GpuVertex(r)).local];
    }
    // Down-sets, interned: switches of one block share one (a Clos has few
    // distinct ones), so each is merged once, keyed by its children's sets.
    std::vector<std::vector<uint32_t>> sets; // sorted GPU vertices
    std::map<std::vector<uint32_t>, uint32_t> byChildren;
    std::vector<int64_t> setOf(nv, -1);
    std::vector<std::vector<uint32_t>> children(nv); // lower neighbours (GPUs, switches)
    const auto isSwitch = [&topo](uint32_t v) { return topo.Node(v).kind == TopoNodeKind::Switch; };
    for (const TopoCable& cable : topo.Cables())
    {
        if (cable.kind != TopoLinkKind::Nic && cable.kind != TopoLinkKind::SwitchToSwitch)
        {
            continue;
        }
        const uint32_t ta = isSwitch(cable.a) ? topo.Node(cable.a).tier : 0;
        const uint32_t tb = isSwitch(cable.b) ? topo.Node(cable.b).tier : 0;
        if (ta < tb)
        {
            children[cable.b].push_back(cable.a);
        }
        else if (tb < ta)
        {
            children[cable.a].push_back(cable.b);
        }
    }
    for (uint32_t v = 0; v < nv; ++v)
    {
        if (topo.Node(v).kind == TopoNodeKind::Gpu)
        {
            setOf[v] = static_cast<int64_t>(sets.size());
            sets.push_back({v});
        }
    }
    std::vector<uint32_t> order; // switches by ascending tier: children first
    for (uint32_t v = 0; v < nv; ++v)
    {
        if (isSwitch(v))
        {
            order.push_back(v);
        }
    }
    std::stable_sort(order.begin(), order.end(), [&topo](uint32_t a, uint32_t b) {
        return topo.Node(a).tier < topo.Node(b).tier;
    });
    for (uint32_t v : order)
    {
        std::vector<uint32_t> key;
        for (uint32_t child : children[v])
        {
            if (setOf[child] >= 0)
            {
                key.push_back(static_cast<uint32_t>(setOf[child]));
            }
        }
        std::sort(key.begin(), key.end());
        key.erase(std::unique(key.begin(), key.end()), key.end());
        if (key.empty())
        {
            continue; // no GPU below (a switch of another kind of fabric)
        }
        const auto [it, fresh] = byChildren.emplace(key, sets.size());
        if (fresh)
        {
            std::vector<uint32_t> members;
            for (uint32_t id : key)
            {
                std::vector<uint32_t> merged;
                std::set_union(members.begin(),
                               members.end(),
                               sets[id].begin(),
                               sets[id].end(),
                               std::back_inserter(merged));
                members.swap(merged);
            }
            sets.push_back(std::move(members));
        }
        setOf[v] = it->second;
    }
    // a down-set splits a rail when it holds some but not all of its GPUs
    std::vector<int8_t> splits(sets.size(), -1);
    const auto splitsRail = [&](uint32_t id) {
        if (splits[id] < 0)
        {
            std::map<uint32_t, uint64_t> inside;
            for (uint32_t g : sets[id])
            {
                ++inside[topo.Node(g).local];
            }
            splits[id] = 0;
            for (const auto& [rail, n] : inside)
            {
                splits[id] |= n < railSize[rail] ? 1 : 0;
            }
        }
        return splits[id] == 1;
    };
    std::vector<bool> removable(topo.Cables().size(), false);
    for (uint32_t i = 0; i < topo.Cables().size(); ++i)
    {
        const TopoCable& cable = topo.Cables()[i];
        if (cable.kind != TopoLinkKind::SwitchToSwitch)
        {
            continue;
        }
        const uint32_t ta = topo.Node(cable.a).tier;
        const uint32_t tb = topo.Node(cable.b).tier;
        if (ta == tb)
        {
            continue;
        }
        const uint32_t lower = ta < tb ? cable.a : cable.b;
        removable[i] = setOf[lower] >= 0 && !splitsRail(static_cast<uint32_t>(setOf[lower]));
    }
    return removable;
}

FabricCounts
CountTrimmedEquipment(const FabricTopology& topo, uint32_t radix)
{
    const std::vector<bool> removed = RailTrimmableCables(topo);
    return Count(topo, radix, &removed);
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
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("Transceiver800gPrice",
                          "US dollars per 800G optical transceiver, for links above 400 Gb/s "
                          "(assumption: TransceiverPrice's 374 x 1.79, the "
                          "800G:400G ratio of published module prices, $1,100-1,400 per 800G "
                          "OSFP DR8 against $600-800 per 400G QSFP-DD, luxoptx.com 2024).",
                          DoubleValue(668.0),
                          MakeDoubleAccessor(&FabricCostModel::m_transceiver800gPrice),
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("Transceiver800gPower",
                          "Watts per 800G optical transceiver (assumption: 16 W, within the "
                          "16-18 W power budgets of 800G QSFP-DD and OSFP modules).",
                          DoubleValue(16.0),
                          MakeDoubleAccessor(&FabricCostModel::m_transceiver800gPower),
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("SwitchPort800gPrice",
                          "US dollars per switch port of a chassis whose cables run above 400 "
                          "Gb/s (assumption: SwitchPortPrice's 748 x 668 / 374, the 800G:400G "
                          "ratio assumed for transceivers; no published figure).",
                          DoubleValue(1336.0),
                          MakeDoubleAccessor(&FabricCostModel::m_port800gPrice),
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("SwitchPort800gPower",
                          "Watts per switch port of a chassis whose cables run above 400 Gb/s "
                          "(assumption: twice Transceiver800gPower, the 2:1 ratio of the 400G "
                          "defaults).",
                          DoubleValue(32.0),
                          MakeDoubleAccessor(&FabricCostModel::m_port800gPower),
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("CablePrice",
                          "US dollars per cable (lane) of a switched link up to 400 Gb/s (0: "
                          "the rail-only papers do not price cables).",
                          DoubleValue(0.0),
                          MakeDoubleAccessor(&FabricCostModel::m_cablePrice),
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("Cable800gPrice",
                          "US dollars per cable (lane) of a switched link above 400 Gb/s at "
                          "800G optics (0: the papers' convention kept at 800G; set both cable "
                          "prices to price cables).",
                          DoubleValue(0.0),
                          MakeDoubleAccessor(&FabricCostModel::m_cable800gPrice),
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("FibrePrice",
                          "US dollars per direct-connect duplex fibre (assumption: a few metres "
                          "of single-mode patch cord; no published figure).",
                          DoubleValue(50.0),
                          MakeDoubleAccessor(&FabricCostModel::m_fibrePrice),
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("DirectConnectPatching",
                          "What terminates each end of a direct-connect fibre: patch-panel (a "
                          "patch-panel port) or ocs (an optical circuit switch port).",
                          EnumValue(PATCH_PANEL),
                          MakeEnumAccessor(&FabricCostModel::m_patching),
                          MakeEnumChecker(PATCH_PANEL, "patch-panel", OCS, "ocs"))
            .AddAttribute("PatchPanelPortPrice",
                          "US dollars per patch-panel port, one per fibre end (assumption: no "
                          "published figure; an automated panel that can re-patch between jobs).",
                          DoubleValue(100.0),
                          MakeDoubleAccessor(&FabricCostModel::m_patchPortPrice),
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("OcsPortPrice",
                          "US dollars per optical circuit switch port, one per fibre end "
                          "(assumption: no published figure; above an electrical switch port).",
                          DoubleValue(1000.0),
                          MakeDoubleAccessor(&FabricCostModel::m_ocsPortPrice),
                          MakeDoubleChecker<double>(0.0));
    return tid;
}

FabricCostModel::FabricCostModel()
    : m_transceiverPrice(374.0),
      m_portPrice(748.0),
      m_transceiverPower(12.0),
      m_portPower(24.0),
      m_transceiver800gPrice(668.0),
      m_transceiver800gPower(16.0),
      m_port800gPrice(1336.0),
      m_port800gPower(32.0),
      m_cablePrice(0.0),
      m_cable800gPrice(0.0),
      m_fibrePrice(50.0),
      m_patchPortPrice(100.0),
      m_ocsPortPrice(1000.0),
      m_patching(PATCH_PANEL)
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
    // 800G: the 400G price x 668 / 374 (Transceiver800gPrice's default over
    // TransceiverPrice's), rounded to dollars; no paper prices 800G
    const auto set = [this](double transceiver, double port) {
        m_transceiverPrice = transceiver;
        m_portPrice = port;
        m_transceiver800gPrice = std::round(transceiver * 668.0 / 374.0);
        m_port800gPrice = std::round(port * 668.0 / 374.0);
    };
    if (name == "hotnets2023")
    {
        set(374.0, 748.0);
        return;
    }
    if (name == "railonly2024")
    {
        set(199.0, 694.0);
        return;
    }
    throw FabricConfigError("prices",
                            name,
                            fmt::format("one of {}", fmt::join(PricePresets(), ", ")));
}

namespace
{

/// 400 and 800 Gb/s, the transceiver classes priced
constexpr uint64_t k400G = 400'000'000'000;
constexpr uint64_t k800G = 800'000'000'000;

/**
 * \return the counts' transceivers: switched ones at \p at(rate) per cable
 * end, direct-connect ones at \p at(rate) each, any others (counts made
 * without rates) at \p at400G
 */
template <typename F>
double
TransceiverSum(const FabricCounts& c, double at400G, F at)
{
    uint64_t priced = 0;
    double sum = 0;
    for (const auto& [rate, n] : c.directTransceiversByRate)
    {
        priced += n;
        sum += static_cast<double>(n) * at(rate);
    }
    for (const auto& [rate, n] : c.switchedCablesByRate)
    {
        priced += 2 * n;
        sum += static_cast<double>(2 * n) * at(rate);
    }
    return sum + static_cast<double>(c.transceivers - std::min(priced, c.transceivers)) * at400G;
}

/**
 * \return the counts' switch ports at \p at(rate) each by their chassis'
 * rate, any others (counts made without rates) at \p at400G
 */
template <typename F>
double
PortSum(const FabricCounts& c, double at400G, F at)
{
    uint64_t priced = 0;
    double sum = 0;
    for (const auto& [rate, n] : c.switchPortsByRate)
    {
        priced += n;
        sum += static_cast<double>(n) * at(rate);
    }
    return sum + static_cast<double>(c.switchPorts - std::min(priced, c.switchPorts)) * at400G;
}

/// The transceivers at one end of a direct-connect arc: 400G or 800G ones
struct Optics
{
    uint64_t at400G{0}; //!< 400G transceivers
    uint64_t at800G{0}; //!< 800G transceivers
};

/// \return the cheaper of ceil(rate / 400G) 400G and ceil(rate / 800G) 800G
/// transceivers (one 400G up to 400 Gb/s)
Optics
OpticsFor(uint64_t rateBps, double price400G, double price800G)
{
    const uint64_t n400 = std::max<uint64_t>(1, (rateBps + k400G - 1) / k400G);
    const uint64_t n800 = (rateBps + k800G - 1) / k800G;
    if (n400 == 1 || static_cast<double>(n400) * price400G <= static_cast<double>(n800) * price800G)
    {
        return {n400, 0};
    }
    return {0, n800};
}

} // namespace

double
FabricCostModel::TransceiverPriceAt(uint64_t rateBps) const
{
    const Optics o = OpticsFor(rateBps, m_transceiverPrice, m_transceiver800gPrice);
    return static_cast<double>(o.at400G) * m_transceiverPrice +
           static_cast<double>(o.at800G) * m_transceiver800gPrice;
}

double
FabricCostModel::TransceiverPowerAt(uint64_t rateBps) const
{
    const Optics o = OpticsFor(rateBps, m_transceiverPrice, m_transceiver800gPrice);
    return static_cast<double>(o.at400G) * m_transceiverPower +
           static_cast<double>(o.at800G) * m_transceiver800gPower;
}

double
FabricCostModel::SwitchPortPriceAt(uint64_t rateBps) const
{
    return rateBps <= k400G ? m_portPrice
                            : static_cast<double>((rateBps + k800G - 1) / k800G) * m_port800gPrice;
}

double
FabricCostModel::SwitchPortPowerAt(uint64_t rateBps) const
{
    return rateBps <= k400G ? m_portPower
                            : static_cast<double>((rateBps + k800G - 1) / k800G) * m_port800gPower;
}

double
FabricCostModel::CablePriceAt(uint64_t rateBps) const
{
    const Optics o = OpticsFor(rateBps, m_transceiverPrice, m_transceiver800gPrice);
    return static_cast<double>(o.at400G) * m_cablePrice +
           static_cast<double>(o.at800G) * m_cable800gPrice;
}

double
FabricCostModel::Cost(const FabricCounts& c) const
{
    double cables = 0;
    for (const auto& [rate, n] : c.switchedCablesByRate)
    {
        cables += static_cast<double>(n) * CablePriceAt(rate);
    }
    return PortSum(c, m_portPrice, [this](uint64_t r) { return SwitchPortPriceAt(r); }) +
           TransceiverSum(c,
                          m_transceiverPrice,
                          [this](uint64_t r) { return TransceiverPriceAt(r); }) +
           cables + DirectConnectCost(c);
}

uint64_t
FabricCostModel::PatchPanelPorts(const FabricCounts& c) const
{
    return m_patching == PATCH_PANEL ? 2 * c.directFibres : 0;
}

uint64_t
FabricCostModel::OcsPorts(const FabricCounts& c) const
{
    return m_patching == OCS ? 2 * c.directFibres : 0;
}

std::string
FabricCostModel::PatchingName() const
{
    return m_patching == OCS ? "ocs" : "patch-panel";
}

double
FabricCostModel::DirectConnectCost(const FabricCounts& c) const
{
    return c.directFibres * m_fibrePrice + PatchPanelPorts(c) * m_patchPortPrice +
           OcsPorts(c) * m_ocsPortPrice;
}

double
FabricCostModel::Power(const FabricCounts& c) const
{
    return PortSum(c, m_portPower, [this](uint64_t r) { return SwitchPortPowerAt(r); }) +
           TransceiverSum(c, m_transceiverPower, [this](uint64_t r) {
               return TransceiverPowerAt(r);
           });
}

} // namespace ns3
