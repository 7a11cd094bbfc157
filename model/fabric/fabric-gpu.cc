/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-gpu.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FabricGpu");
NS_OBJECT_ENSURE_REGISTERED(FabricGpu);

TypeId
FabricGpu::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FabricGpu")
            .SetParent<FabricNode>()
            .SetGroupName("GpuFabric")
            .AddConstructor<FabricGpu>()
            .AddAttribute("Rank",
                          "Global rank of this GPU.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&FabricGpu::m_rank),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("Forwarding",
                          "Relay packets addressed to other ranks (rail-only cross-rail "
                          "traffic, direct-connect multi-hop paths).",
                          BooleanValue(true),
                          MakeBooleanAccessor(&FabricGpu::m_forwarding),
                          MakeBooleanChecker())
            .AddAttribute("SprayPackets",
                          "Stripe each of this GPU's messages packet by packet over all "
                          "equal-cost NVLink ports (its NVSwitch planes), as NVLink stripes a "
                          "transfer over its links; false, or when a route leaves through a NIC "
                          "or direct link: one ECMP port per message.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&FabricGpu::m_spray),
                          MakeBooleanChecker());
    return tid;
}

FabricGpu::FabricGpu() = default;

void
FabricGpu::DoDispose()
{
    m_deliver = DeliveryCallback();
    FabricNode::DoDispose();
}

void
FabricGpu::SetRank(uint32_t rank)
{
    m_rank = rank;
}

uint32_t
FabricGpu::GetRank() const
{
    return m_rank;
}

void
FabricGpu::SetDeliveryCallback(DeliveryCallback cb)
{
    m_deliver = cb;
}

bool
FabricGpu::GetSprayPackets() const
{
    return m_spray;
}

uint64_t
FabricGpu::GetRefusedPackets() const
{
    return m_refused;
}

bool
FabricGpu::GetForwarding() const
{
    return m_forwarding;
}

uint64_t
FabricGpu::GetForwardedPackets() const
{
    return m_forwarded;
}

void
FabricGpu::HandlePacket(FabricNetDevice* port, const Ptr<Packet>& p, const FabricHeaderData& h)
{
    if (h.dst == m_rank)
    {
        if (!m_deliver.IsNull())
        {
            m_deliver(p, h);
        }
        return;
    }
    if (!m_forwarding)
    {
        NS_LOG_WARN("GPU " << m_rank << " refuses to relay a packet for rank " << h.dst);
        ++m_refused;
        // no route onward through this GPU: counted and traced as such, so
        // that Fabric::GetTotalDrops and the NoRouteDrop trace see it
        DropUnroutable(p, true);
        return;
    }
    if (Forward(port, p, h))
    {
        ++m_forwarded; // taken by an output port (not dropped, not lost to a down link)
    }
}

} // namespace ns3
