/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-link-helper.h"

#include "ns3/abort.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/fabric-channel.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-net-device.h"
#include "ns3/fabric-node.h"
#include "ns3/log.h"
#include "ns3/names.h"
#include "ns3/net-device-queue-interface.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FabricLinkHelper");

FabricLinkHelper::FabricLinkHelper()
{
    m_deviceFactory.SetTypeId("ns3::FabricNetDevice");
    m_channelFactory.SetTypeId("ns3::FabricChannel");
}

void
FabricLinkHelper::SetDeviceAttribute(const std::string& name, const AttributeValue& value)
{
    m_deviceFactory.Set(name, value);
}

void
FabricLinkHelper::SetChannelAttribute(const std::string& name, const AttributeValue& value)
{
    m_channelFactory.Set(name, value);
}

void
FabricLinkHelper::DisableFlowControl()
{
    m_queueInterface = false;
}

NetDeviceContainer
FabricLinkHelper::Install(Ptr<Node> a, Ptr<Node> b) const
{
    NS_LOG_FUNCTION(this << a << b);
    FabricRequire(a && b, "FabricLinkHelper::Install node", "null", "two existing nodes");
    Ptr<FabricChannel> channel = m_channelFactory.Create<FabricChannel>();
    NetDeviceContainer devices;
    for (const Ptr<Node>& node : {a, b})
    {
        Ptr<FabricNetDevice> device = m_deviceFactory.Create<FabricNetDevice>();
        // before Attach: the channel caches the node
        if (auto fabricNode = DynamicCast<FabricNode>(node))
        {
            fabricNode->AddPort(device); // a switch configures its port's queue
        }
        else
        {
            node->AddDevice(device);
            // a FabricNode has no traffic control layer to tell
            if (m_queueInterface)
            {
                device->AggregateObject(CreateObject<NetDeviceQueueInterface>());
            }
        }
        if (m_queueFactory.GetTypeId() != TypeId())
        {
            device->SetQueue(m_queueFactory.Create<Queue<Packet>>());
        }
        else if (!DynamicCast<FabricNode>(node))
        {
            // as PointToPointHelper: a DropTailQueue of its default size
            // (100 packets), so that the backlog waits in a queue disc above
            // the device, where its AQM can act, not in a deep device queue
            device->SetQueue(CreateObject<DropTailQueue<Packet>>());
        }
        device->Attach(channel);
        devices.Add(device);
    }
    return devices;
}

NetDeviceContainer
FabricLinkHelper::Install(const NodeContainer& nodes) const
{
    // PointToPointHelper asserts this (NS_ASSERT, gone in optimized builds,
    // where it then reads past the container): a program's mistake, so it
    // aborts as ns-3 does, in every build, naming the count
    NS_ABORT_MSG_UNLESS(nodes.GetN() == 2,
                        FabricConfigError("FabricLinkHelper::Install nodes",
                                          std::to_string(nodes.GetN()),
                                          "exactly 2 (one link joins two nodes)")
                            .what());
    return Install(nodes.Get(0), nodes.Get(1));
}

namespace
{

/// The node named \p name (ns3::Names), or a FabricConfigError naming it.
Ptr<Node>
NamedNode(const std::string& name)
{
    Ptr<Node> node = Names::Find<Node>(name);
    FabricRequire(node != nullptr,
                  "FabricLinkHelper::Install node name",
                  name,
                  "the name of a node registered with ns3::Names");
    return node;
}

} // namespace

NetDeviceContainer
FabricLinkHelper::Install(const std::string& aName, const std::string& bName) const
{
    return Install(NamedNode(aName), NamedNode(bName));
}

NetDeviceContainer
FabricLinkHelper::Install(const std::string& aName, Ptr<Node> b) const
{
    return Install(NamedNode(aName), b);
}

NetDeviceContainer
FabricLinkHelper::Install(Ptr<Node> a, const std::string& bName) const
{
    return Install(a, NamedNode(bName));
}

} // namespace ns3
