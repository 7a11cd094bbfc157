/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-helper.h"

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
}

Ptr<FlowTransport>
FlowHelper::Install(const FabricTopology& topology) const
{
    Ptr<FlowTransport> t = m_factory.Create<FlowTransport>();
    t->Setup(topology);
    return t;
}

Ptr<FlowTransport>
FlowHelper::Install(Ptr<Fabric> fabric) const
{
    Ptr<FlowTransport> t = m_factory.Create<FlowTransport>();
    t->Setup(fabric->GetTopology(), fabric->GetRoutingTables());
    return t;
}

} // namespace ns3
