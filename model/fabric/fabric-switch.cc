/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-switch.h"

#include "fabric-channel.h"

#include "ns3/boolean.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/fabric-error.h"
#include "ns3/log.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FabricSwitch");
NS_OBJECT_ENSURE_REGISTERED(FabricSwitch);

TypeId
FabricSwitch::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FabricSwitch")
            .SetParent<FabricNode>()
            .SetGroupName("GpuFabric")
            .AddConstructor<FabricSwitch>()
            .AddAttribute("Role",
                          "Label of the switch's role: rail, leaf, aggregation, spine, "
                          "nvswitch.",
                          StringValue("switch"),
                          MakeStringAccessor(&FabricSwitch::m_role),
                          MakeStringChecker())
            .AddAttribute("PortBuffer",
                          "Capacity of each output queue. The default holds the PFC "
                          "threshold plus headroom of 64 input ports at 800 Gb/s and 1 us.",
                          QueueSizeValue(QueueSize("32MB")),
                          MakeQueueSizeAccessor(&FabricSwitch::m_portBuffer),
                          MakeQueueSizeChecker())
            .AddAttribute("EcnThreshold",
                          "Mark CE when an output queue holds more than this many bytes "
                          "(0 disables marking).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&FabricSwitch::m_ecnThreshold),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("PfcEnabled",
                          "Lossless links: pause an upstream port whose buffered bytes "
                          "reach PfcXoff.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&FabricSwitch::m_pfcEnabled),
                          MakeBooleanChecker())
            .AddAttribute("PfcXoff",
                          "Pause threshold per input port, bytes.",
                          UintegerValue(128 * 1024),
                          MakeUintegerAccessor(&FabricSwitch::m_pfcXoff),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("PfcXon",
                          "Resume threshold per input port, bytes.",
                          UintegerValue(96 * 1024),
                          MakeUintegerAccessor(&FabricSwitch::m_pfcXon),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("GrowBufferForPfc",
                          "With PFC on, grow each output queue the switch configured to "
                          "what its ports need to stay lossless (the sum over ports of "
                          "PfcXoff + 2 x Delay x DataRate + 2 Mtu) when PortBuffer is "
                          "smaller, at initialization. false: PortBuffer as given (to study "
                          "drops under PFC).",
                          BooleanValue(true),
                          MakeBooleanAccessor(&FabricSwitch::m_growBuffer),
                          MakeBooleanChecker());
    return tid;
}

FabricSwitch::FabricSwitch()
    : m_portBuffer("32MB"),
      m_ecnThreshold(0),
      m_pfcEnabled(true),
      m_pfcXoff(128 * 1024),
      m_pfcXon(96 * 1024)
{
}

uint32_t
FabricSwitch::AddPort(Ptr<FabricNetDevice> device)
{
    FabricRequire(m_pfcXon < m_pfcXoff,
                  "FabricSwitch::PfcXon",
                  m_pfcXon,
                  fmt::format("less than PfcXoff ({})", m_pfcXoff));
    auto queue = CreateObject<DropTailQueue<Packet>>();
    queue->SetMaxSize(m_portBuffer);
    device->SetQueue(queue);
    m_ownQueues.push_back(queue);
    device->SetAttribute("EcnThreshold", UintegerValue(m_ecnThreshold));
    device->SetAttribute("PfcEnabled", BooleanValue(m_pfcEnabled));
    device->SetAttribute("PfcXoff", UintegerValue(m_pfcXoff));
    device->SetAttribute("PfcXon", UintegerValue(m_pfcXon));
    return FabricNode::AddPort(device);
}

uint64_t
FabricSwitch::GetLosslessBufferBytes() const
{
    uint64_t need = 0;
    for (uint32_t i = 0; i < GetNPorts(); ++i)
    {
        Ptr<FabricNetDevice> port = GetPort(i);
        auto channel = DynamicCast<FabricChannel>(port->GetChannel());
        if (!channel)
        {
            continue; // not attached: nothing arrives on it
        }
        // bits in flight over the round trip of the pause: 2 x Delay x DataRate
        const auto inFlightBits = static_cast<unsigned __int128>(port->GetDataRate().GetBitRate()) *
                                  2 * channel->GetDelay().GetTimeStep() /
                                  static_cast<uint64_t>(Seconds(1).GetTimeStep());
        need += m_pfcXoff + static_cast<uint64_t>((inFlightBits + 7) / 8) +
                2 * uint64_t{port->GetFrameMtu()};
    }
    return need;
}

void
FabricSwitch::DoInitialize()
{
    if (m_pfcEnabled && m_growBuffer && m_portBuffer.GetUnit() == QueueSizeUnit::BYTES)
    {
        const uint64_t need = GetLosslessBufferBytes();
        if (need > m_portBuffer.GetValue())
        {
            for (uint32_t i = 0; i < m_ownQueues.size() && i < GetNPorts(); ++i)
            {
                // a queue replaced since (FabricLinkHelper::SetQueue) keeps its size
                if (GetPort(i)->GetQueue() == m_ownQueues[i])
                {
                    m_ownQueues[i]->SetMaxSize(QueueSize(QueueSizeUnit::BYTES, need));
                }
            }
        }
    }
    FabricNode::DoInitialize();
}

void
FabricSwitch::DoDispose()
{
    m_ownQueues.clear();
    FabricNode::DoDispose();
}

std::string
FabricSwitch::GetRole() const
{
    return m_role;
}

void
FabricSwitch::HandlePacket(FabricNetDevice* port, const Ptr<Packet>& p, const FabricHeaderData& h)
{
    Forward(port, p, h);
}

} // namespace ns3
