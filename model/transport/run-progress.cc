/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "run-progress.h"

#include "ns3/fabric-memory.h"
#include "ns3/fabric-work.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <fmt/format.h>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RunProgress");
NS_OBJECT_ENSURE_REGISTERED(RunProgress);

TypeId
RunProgress::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RunProgress")
            .SetParent<Object>()
            .SetGroupName("GpuFabric")
            .AddConstructor<RunProgress>()
            .AddAttribute("Interval",
                          "Wall time between two Progress reports.",
                          TimeValue(Seconds(10)),
                          MakeTimeAccessor(&RunProgress::m_interval),
                          MakeTimeChecker(MilliSeconds(1)))
            .AddTraceSource("Progress",
                            "How far the run has come (at most once per Interval of wall time).",
                            MakeTraceSourceAccessor(&RunProgress::m_progressTrace),
                            "ns3::RunProgress::ProgressTracedCallback");
    return tid;
}

RunProgress::RunProgress() = default;

void
RunProgress::DoDispose()
{
    if (m_transport)
    {
        m_transport->WatchProgress(nullptr);
    }
    m_transport = nullptr;
    Object::DoDispose();
}

void
RunProgress::Install(Ptr<Transport> transport, uint64_t bytesExpected)
{
    NS_ABORT_MSG_UNLESS(transport, "RunProgress::Install needs a transport");
    if (m_transport && m_transport != transport)
    {
        m_transport->WatchProgress(nullptr);
    }
    m_transport = transport;
    m_baseBytes = transport->GetTotals().bytesDelivered;
    m_expected = bytesExpected;
    m_baseEvents = Simulator::GetEventCount();
    m_start = m_lastReport = std::chrono::steady_clock::now();
    transport->WatchProgress(this);
}

void
RunProgress::AddExpectedBytes(uint64_t bytes)
{
    m_expected += bytes;
}

RunProgress::Report
RunProgress::Current() const
{
    Report r;
    r.now = Simulator::Now();
    r.bytesDelivered = m_transport ? m_transport->GetTotals().bytesDelivered - m_baseBytes : 0;
    r.bytesExpected = m_expected;
    r.events = Simulator::GetEventCount() - m_baseEvents;
    r.wallSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    if (r.bytesDelivered > 0 && r.bytesDelivered <= m_expected)
    {
        r.remainingSeconds = r.wallSeconds * static_cast<double>(m_expected - r.bytesDelivered) /
                             static_cast<double>(r.bytesDelivered);
    }
    return r;
}

void
RunProgress::Poll()
{
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - m_lastReport).count() >= m_interval.GetSeconds())
    {
        m_lastReport = now;
        m_progressTrace(Current());
    }
}

std::string
RunProgress::Describe(const Report& r)
{
    // the expected bytes are an estimate for some workloads: never past 100 %
    const double share =
        r.bytesExpected > 0
            ? std::min(100.0, 100.0 * static_cast<double>(r.bytesDelivered) / r.bytesExpected)
            : 0;
    return fmt::format("progress: {:.1f} % of {} delivered, simulated {:.6g} s, {:.3g} events in "
                       "{}{}",
                       share,
                       FabricBytesText(static_cast<double>(r.bytesExpected)),
                       r.now.GetSeconds(),
                       static_cast<double>(r.events),
                       FabricDurationText(r.wallSeconds),
                       r.remainingSeconds < 0
                           ? ""
                           : ", about " + FabricDurationText(r.remainingSeconds) + " left");
}

} // namespace ns3
