/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-helper.h"

#include "ns3/fabric-header.h"
#include "ns3/packet-transport.h"
#include "ns3/run-observer.h"
#include "ns3/uinteger.h"

#include <utility>
#include <vector>

namespace ns3
{

FlowHelper::FlowHelper()
{
    m_factory.SetTypeId(FlowTransport::GetTypeId());
}

void
FlowHelper::SetTransportAttribute(const std::string& name, const AttributeValue& value)
{
    m_factory.Set(name, value);
    m_set.insert(name);
}

void
FlowHelper::SetFrameMtu(uint32_t frameMtu)
{
    m_frameMtu = frameMtu;
}

ObjectFactory
FlowHelper::Framed(uint32_t frameMtu, uint32_t minStripe) const
{
    ObjectFactory factory = m_factory;
    const uint32_t header = FabricHeader::kSerializedSize;
    std::vector<std::pair<std::string, uint32_t>> framing;
    if (frameMtu > header)
    {
        framing.emplace_back("PacketPayload", frameMtu - header);
        framing.emplace_back("PacketOverhead", header);
    }
    if (minStripe != 0)
    {
        framing.emplace_back("StripeMinPayload", minStripe);
    }
    for (const auto& [name, value] : framing)
    {
        // a value the user gave (here or as the default) is kept as given
        if (m_set.count(name) == 0 && !AttributeDefaultChanged(FlowTransport::GetTypeId(), name))
        {
            factory.Set(name, UintegerValue(value));
        }
    }
    return factory;
}

Ptr<FlowTransport>
FlowHelper::Install(const FabricTopology& topology) const
{
    Ptr<FlowTransport> t = Framed(m_frameMtu, 0).Create<FlowTransport>();
    t->Setup(topology);
    RunObserver::Announce(t);
    return t;
}

Ptr<FlowTransport>
FlowHelper::Install(Ptr<Fabric> fabric) const
{
    const Ptr<PacketTransport> packets = fabric->GetTransport();
    Ptr<FlowTransport> t = Framed(packets->GetPayloadPerPacket() + FabricHeader::kSerializedSize,
                                  packets->GetStripeMinPayload())
                               .Create<FlowTransport>();
    t->Setup(fabric->GetTopology(), fabric->GetRoutingTables());
    RunObserver::Announce(t);
    return t;
}

} // namespace ns3
