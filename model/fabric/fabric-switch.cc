/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-switch.h"

#include "fabric-channel.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/fabric-error.h"
#include "ns3/log.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <limits>

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
            .AddAttribute("EcnKmin",
                          "RED-style marking of every port (FabricNetDevice::EcnKmin): no "
                          "mark at or below this many queued bytes.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&FabricSwitch::m_ecnKmin),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("EcnKmax",
                          "RED-style marking of every port: every data frame marked above this "
                          "many queued bytes, with probability rising linearly to EcnPmax "
                          "between EcnKmin and it (0 disables RED marking). DCQCN's published "
                          "setting is Kmin 5 KB, Kmax 200 KB, Pmax 1 %.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&FabricSwitch::m_ecnKmax),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("EcnPmax",
                          "RED-style marking of every port: marking probability at EcnKmax, "
                          "in [0, 1].",
                          DoubleValue(0),
                          MakeDoubleAccessor(&FabricSwitch::m_ecnPmax),
                          MakeDoubleChecker<double>())
            .AddAttribute("LoadBalancing",
                          "How a packet's output is chosen among its destination's equal-cost "
                          "ports: ecmp (per flow, by hash), spray (per packet, in turn), "
                          "flowlet (a new hashed port after FlowletGap idle, as LetFlow), "
                          "adaptive (per packet, the port with the fewest queued bytes).",
                          StringValue("ecmp"),
                          MakeStringAccessor(&FabricSwitch::SetLoadBalancingName,
                                             &FabricSwitch::GetLoadBalancingName),
                          MakeStringChecker())
            .AddAttribute("FlowletGap",
                          "With LoadBalancing flowlet: the idle time after which a flow's "
                          "next packet may take another port.",
                          TimeValue(MicroSeconds(5)),
                          MakeTimeAccessor(&FabricSwitch::m_flowletGap),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("FlowletTableSize",
                          "With LoadBalancing flowlet: most flows the switch remembers (64 K "
                          "entries, as the flowlet tables of CONGA and LetFlow); when full, "
                          "the flow seen least recently is forgotten and its next packet "
                          "starts a new flowlet.",
                          UintegerValue(65536),
                          MakeUintegerAccessor(&FabricSwitch::m_flowletTable),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("IntEnabled",
                          "Every port appends a hop of in-band telemetry (queue, rate, "
                          "transmitted bytes, time) to the data packets that carry a "
                          "FabricIntHeader (those of HPCC and Swift flows).",
                          BooleanValue(true),
                          MakeBooleanAccessor(&FabricSwitch::m_intEnabled),
                          MakeBooleanChecker())
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
    FabricRequire(m_ecnKmin <= m_ecnKmax || m_ecnKmax == 0,
                  "FabricSwitch::EcnKmin",
                  m_ecnKmin,
                  fmt::format("at most EcnKmax ({})", m_ecnKmax));
    FabricRequire(m_ecnPmax >= 0 && m_ecnPmax <= 1,
                  "FabricSwitch::EcnPmax",
                  m_ecnPmax,
                  "a probability in [0, 1]");
    device->SetAttribute("EcnThreshold", UintegerValue(m_ecnThreshold));
    device->SetAttribute("EcnKmin", UintegerValue(m_ecnKmin));
    device->SetAttribute("EcnKmax", UintegerValue(m_ecnKmax));
    device->SetAttribute("EcnPmax", DoubleValue(m_ecnPmax));
    device->SetAttribute("IntEnabled", BooleanValue(m_intEnabled));
    SetLoadBalancing(m_loadBalancing, m_flowletGap);
    SetFlowletTableSize(m_flowletTable);
    device->SetAttribute("PfcEnabled", BooleanValue(m_pfcEnabled));
    device->SetAttribute("PfcXoff", UintegerValue(m_pfcXoff));
    device->SetAttribute("PfcXon", UintegerValue(m_pfcXon));
    return FabricNode::AddPort(device);
}

const std::vector<std::string>&
FabricSwitch::LoadBalancingNames()
{
    static const std::vector<std::string> names{"ecmp", "spray", "flowlet", "adaptive"};
    return names;
}

void
FabricSwitch::CheckLoadBalancingName(const std::string& name, const std::string& parameter)
{
    const auto& names = LoadBalancingNames();
    FabricRequire(std::find(names.begin(), names.end(), name) != names.end(),
                  parameter,
                  name,
                  "ecmp, spray, flowlet or adaptive");
}

void
FabricSwitch::SetLoadBalancingName(const std::string& name)
{
    CheckLoadBalancingName(name, "ns3::FabricSwitch::LoadBalancing");
    const auto& names = LoadBalancingNames();
    m_loadBalancing =
        static_cast<LoadBalancing>(std::find(names.begin(), names.end(), name) - names.begin());
}

std::string
FabricSwitch::GetLoadBalancingName() const
{
    return LoadBalancingNames()[m_loadBalancing];
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
        need += GetLosslessPortBytes(port->GetDataRate().GetBitRate(),
                                     channel->GetDelay(),
                                     port->GetFrameMtu());
    }
    return need;
}

uint64_t
FabricSwitch::GetLosslessPortBytes(uint64_t rateBps, Time delay, uint32_t frameMtu) const
{
    // bits in flight over the round trip of the pause: 2 x Delay x DataRate
    const auto inFlightBits = static_cast<unsigned __int128>(rateBps) * 2 * delay.GetTimeStep() /
                              static_cast<uint64_t>(Seconds(1).GetTimeStep());
    return m_pfcXoff + static_cast<uint64_t>((inFlightBits + 7) / 8) + 2 * uint64_t{frameMtu};
}

void
FabricSwitch::RequireLosslessBufferFits() const
{
    RequireLosslessBufferFits(GetLosslessBufferBytes(), GetNPorts());
}

void
FabricSwitch::RequireLosslessBufferFits(uint64_t need, uint32_t ports) const
{
    if (!m_pfcEnabled || !m_growBuffer || m_portBuffer.GetUnit() != QueueSizeUnit::BYTES)
    {
        return;
    }
    // ns-3's QueueSize holds 32 bits: a larger need would wrap to a tiny
    // queue and a silently lossy switch
    if (need <= std::numeric_limits<uint32_t>::max())
    {
        return; // the message is formatted only when it is needed
    }
    throw FabricConfigError(
        fmt::format("lossless buffer of switch node {} (PfcXoff {} B, {} ports)",
                    GetId(),
                    m_pfcXoff,
                    ports),
        fmt::format("{} bytes", need),
        "at most 4294967295 bytes per output queue (ns-3's QueueSize is 32-bit): "
        "lower PfcXoff, or set GrowBufferForPfc false and a PortBuffer");
}

void
FabricSwitch::DoInitialize()
{
    if (m_pfcEnabled && m_growBuffer && m_portBuffer.GetUnit() == QueueSizeUnit::BYTES)
    {
        const uint64_t need = GetLosslessBufferBytes();
        RequireLosslessBufferFits();
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
