/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "progress-watchdog.h"

#include "ns3/boolean.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-switch.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ProgressWatchdog");
NS_OBJECT_ENSURE_REGISTERED(ProgressWatchdog);

TypeId
ProgressWatchdog::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::ProgressWatchdog")
            .SetParent<Object>()
            .SetGroupName("GpuFabric")
            .AddConstructor<ProgressWatchdog>()
            .AddAttribute("Interval",
                          "Simulated time without a byte serialized anywhere, while messages "
                          "are pending, after which the run is declared stuck.",
                          TimeValue(MilliSeconds(1)),
                          MakeTimeAccessor(&ProgressWatchdog::m_interval),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("StopRun",
                          "Call Simulator::Stop when the run is stuck.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&ProgressWatchdog::m_stopRun),
                          MakeBooleanChecker())
            .AddAttribute("MaxListed",
                          "At most this many blocked queues and pending messages in the report.",
                          UintegerValue(32),
                          MakeUintegerAccessor(&ProgressWatchdog::m_maxListed),
                          MakeUintegerChecker<uint32_t>(1))
            .AddTraceSource("Stalled",
                            "No byte moved for an Interval while messages were pending (the "
                            "report).",
                            MakeTraceSourceAccessor(&ProgressWatchdog::m_stallTrace),
                            "ns3::TracedCallback::String");
    return tid;
}

ProgressWatchdog::ProgressWatchdog() = default;

void
ProgressWatchdog::DoDispose()
{
    if (m_transport)
    {
        m_transport->SetBusyCallback(Callback<void>());
    }
    Simulator::Cancel(m_event);
    m_transport = nullptr;
    m_devices.clear();
    Object::DoDispose();
}

void
ProgressWatchdog::Install(Ptr<PacketTransport> transport, const NodeContainer& nodes)
{
    FabricRequire(transport != nullptr, "transport", "null", "a PacketTransport");
    m_transport = transport;
    m_devices.clear();
    for (auto it = nodes.Begin(); it != nodes.End(); ++it)
    {
        for (uint32_t i = 0; i < (*it)->GetNDevices(); ++i)
        {
            if (auto dev = DynamicCast<FabricNetDevice>((*it)->GetDevice(i)))
            {
                m_devices.push_back(dev);
            }
        }
    }
    transport->SetBusyCallback(MakeCallback(&ProgressWatchdog::Arm, this));
    if (transport->GetPendingMessages() > 0)
    {
        Arm();
    }
}

uint64_t
ProgressWatchdog::BytesMoved() const
{
    uint64_t bytes = 0;
    for (const auto& d : m_devices)
    {
        bytes += d->GetStats().txBytes;
    }
    return bytes;
}

void
ProgressWatchdog::Arm()
{
    if (m_armed || m_fired)
    {
        return;
    }
    m_armed = true;
    m_lastBytes = BytesMoved();
    m_event = Simulator::Schedule(m_interval, &ProgressWatchdog::Tick, this);
}

void
ProgressWatchdog::Tick()
{
    m_armed = false;
    if (m_transport->GetPendingMessages() == 0)
    {
        return; // idle: the next message re-arms
    }
    const uint64_t bytes = BytesMoved();
    if (bytes != m_lastBytes)
    {
        Arm();
        return;
    }
    Fire();
}

namespace
{

std::string
PortName(const Ptr<FabricNetDevice>& d)
{
    Ptr<Node> n = d->GetNode();
    if (auto gpu = DynamicCast<FabricGpu>(n))
    {
        return fmt::format("gpu{} port {}", gpu->GetRank(), d->GetPortIndex());
    }
    if (auto sw = DynamicCast<FabricSwitch>(n))
    {
        return fmt::format("{} switch (node {}) port {}",
                           sw->GetRole(),
                           n->GetId(),
                           d->GetPortIndex());
    }
    return fmt::format("node {} device {}", n->GetId(), d->GetIfIndex());
}

} // namespace

void
ProgressWatchdog::Fire()
{
    m_fired = true;
    m_blocked.clear();
    uint32_t paused = 0;
    for (const auto& d : m_devices)
    {
        // a down port holds nothing (its queue is lost with the link), so it
        // is listed for being down: what waits for it is in the transport
        const bool down = !d->IsUp();
        if (!down && !(d->IsTxPaused() && d->GetQueuePackets() > 0))
        {
            continue;
        }
        ++paused;
        if (m_blocked.size() < m_maxListed)
        {
            m_blocked.push_back(down ? fmt::format("{}: link down", PortName(d))
                                     : fmt::format("{}: {} packets ({} bytes) queued, paused by "
                                                   "its peer (PFC)",
                                                   PortName(d),
                                                   d->GetQueuePackets(),
                                                   d->GetQueueBytes()));
        }
    }
    m_pending = m_transport->GetPendingReports(m_maxListed);
    std::string r = fmt::format("progress watchdog: no byte moved from {:.9f} s to {:.9f} s "
                                "while {} message(s) were pending; {} blocked port(s)\n",
                                (Simulator::Now() - m_interval).GetSeconds(),
                                Simulator::Now().GetSeconds(),
                                m_transport->GetPendingMessages(),
                                paused);
    for (const auto& b : m_blocked)
    {
        r += "  blocked: " + b + "\n";
    }
    for (const auto& m : m_pending)
    {
        r += "  pending: " + m.ToString() + "\n";
    }
    m_report = r;
    NS_LOG_WARN(r);
    m_stallTrace(r);
    if (m_stopRun)
    {
        Simulator::Stop();
    }
}

bool
ProgressWatchdog::HasFired() const
{
    return m_fired;
}

const std::string&
ProgressWatchdog::GetReport() const
{
    return m_report;
}

const std::vector<std::string>&
ProgressWatchdog::GetBlockedQueues() const
{
    return m_blocked;
}

const std::vector<PacketTransport::MessageReport>&
ProgressWatchdog::GetPendingMessages() const
{
    return m_pending;
}

} // namespace ns3
