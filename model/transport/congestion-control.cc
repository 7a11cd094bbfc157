/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "congestion-control.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/fabric-error.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FabricCongestionControl");
NS_OBJECT_ENSURE_REGISTERED(FabricCongestionControl);
NS_OBJECT_ENSURE_REGISTERED(DcqcnCongestionControl);
NS_OBJECT_ENSURE_REGISTERED(DctcpCongestionControl);
NS_OBJECT_ENSURE_REGISTERED(HpccCongestionControl);
NS_OBJECT_ENSURE_REGISTERED(SwiftCongestionControl);

TypeId
FabricCongestionControl::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FabricCongestionControl").SetParent<Object>().SetGroupName("GpuFabric");
    return tid;
}

FabricCongestionControl::FabricCongestionControl() = default;

void
FabricCongestionControl::Start(DataRate lineRate, uint32_t mss)
{
    m_lineRate = lineRate.GetBitRate();
    m_rate = m_lineRate;
    m_mss = std::max<uint32_t>(mss, 1);
}

void
FabricCongestionControl::OnSent(uint32_t /* bytes */)
{
}

void
FabricCongestionControl::OnAck(const FabricAckInfo& /* ack */)
{
}

bool
FabricCongestionControl::UsesTelemetry() const
{
    return false;
}

void
FabricCongestionControl::OnCnp()
{
}

bool
FabricCongestionControl::UsesCnp() const
{
    return false;
}

uint64_t
FabricCongestionControl::GetRate() const
{
    return m_rate;
}

uint64_t
FabricCongestionControl::GetWindow() const
{
    return m_window;
}

uint64_t
FabricCongestionControl::GetLineRate() const
{
    return m_lineRate;
}

void
FabricCongestionControl::SetRate(double bps)
{
    m_rate = static_cast<uint64_t>(std::clamp(bps, 1.0, static_cast<double>(m_lineRate)));
}

void
FabricCongestionControl::SetWindow(uint64_t bytes)
{
    m_window = bytes;
}

uint32_t
FabricCongestionControl::GetMss() const
{
    return m_mss;
}

// DCQCN ------------------------------------------------------------------

TypeId
DcqcnCongestionControl::GetTypeId()
{
    // defaults: the parameters of Zhu et al., SIGCOMM 2015, section 5, also
    // the default set of the DCQCN fluid model (Zhu et al., CoNEXT 2016)
    static TypeId tid =
        TypeId("ns3::DcqcnCongestionControl")
            .SetParent<FabricCongestionControl>()
            .SetGroupName("GpuFabric")
            .AddConstructor<DcqcnCongestionControl>()
            .AddAttribute("G",
                          "Gain of alpha's moving average (g).",
                          DoubleValue(1.0 / 256),
                          MakeDoubleAccessor(&DcqcnCongestionControl::m_g),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("AlphaTimer",
                          "Without a CNP for this long, alpha decays by (1 - g) (K).",
                          TimeValue(MicroSeconds(55)),
                          MakeTimeAccessor(&DcqcnCongestionControl::m_alphaTimer),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("RateTimer",
                          "Period of the timer that raises the rate (T).",
                          TimeValue(MicroSeconds(55)),
                          MakeTimeAccessor(&DcqcnCongestionControl::m_rateTimer),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("ByteCounter",
                          "Bytes sent per byte-counter increase (B).",
                          UintegerValue(10 * 1024 * 1024),
                          MakeUintegerAccessor(&DcqcnCongestionControl::m_byteCounter),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("FastRecoverySteps",
                          "Increases of fast recovery before additive increase (F).",
                          UintegerValue(5),
                          MakeUintegerAccessor(&DcqcnCongestionControl::m_fastSteps),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("RateAi",
                          "Additive increase step of the target rate (R_AI).",
                          DataRateValue(DataRate("40Mbps")),
                          MakeDataRateAccessor(&DcqcnCongestionControl::m_rateAi),
                          MakeDataRateChecker())
            .AddAttribute("RateHai",
                          "Hyper increase step of the target rate (R_HAI; 10 x R_AI).",
                          DataRateValue(DataRate("400Mbps")),
                          MakeDataRateAccessor(&DcqcnCongestionControl::m_rateHai),
                          MakeDataRateChecker())
            .AddAttribute("MinRate",
                          "Floor of the current rate.",
                          DataRateValue(DataRate("100Mbps")),
                          MakeDataRateAccessor(&DcqcnCongestionControl::m_minRate),
                          MakeDataRateChecker())
            .AddAttribute("ClampTargetRate",
                          "true: every CNP sets the target rate to the current rate (Rt = "
                          "Rc, as Zhu et al. 2015 write it); false: only a CNP after a "
                          "rate increase does, so that CNPs in a row keep the target the "
                          "rate had before them (as the DCQCN code of HPCC's ns-3 "
                          "simulator runs it: CLAMP_TARGET_RATE 0 in its run scripts).",
                          BooleanValue(true),
                          MakeBooleanAccessor(&DcqcnCongestionControl::m_clampTarget),
                          MakeBooleanChecker());
    return tid;
}

DcqcnCongestionControl::DcqcnCongestionControl() = default;

void
DcqcnCongestionControl::DoDispose()
{
    m_timer.Cancel();
    FabricCongestionControl::DoDispose();
}

void
DcqcnCongestionControl::Start(DataRate lineRate, uint32_t mss)
{
    FabricCongestionControl::Start(lineRate, mss);
    m_rc = static_cast<double>(GetLineRate());
    m_rt = m_rc;
    m_alpha = 1;
    m_lastCnp = Simulator::Now();
}

bool
DcqcnCongestionControl::UsesCnp() const
{
    return true;
}

double
DcqcnCongestionControl::DecayedAlpha() const
{
    // the alpha timer restarts at every CNP: count its expiries since
    const auto ticks = (Simulator::Now() - m_lastCnp).GetTimeStep() / m_alphaTimer.GetTimeStep();
    return m_alpha * std::pow(1 - m_g, static_cast<double>(ticks));
}

double
DcqcnCongestionControl::GetAlpha() const
{
    return DecayedAlpha();
}

double
DcqcnCongestionControl::GetTargetRate() const
{
    return m_rt;
}

void
DcqcnCongestionControl::OnCnp()
{
    const double alpha = DecayedAlpha();
    if (m_clampTarget || m_timerSteps + m_byteSteps > 0)
    {
        m_rt = m_rc;
    }
    m_rc = std::max(m_rc * (1 - alpha / 2), static_cast<double>(m_minRate.GetBitRate()));
    m_alpha = (1 - m_g) * alpha + m_g;
    m_lastCnp = Simulator::Now();
    m_timerSteps = 0;
    m_byteSteps = 0;
    m_bytes = 0;
    m_timer.Cancel();
    m_timer = Simulator::Schedule(m_rateTimer, &DcqcnCongestionControl::TimerExpired, this);
    SetRate(m_rc);
}

void
DcqcnCongestionControl::OnSent(uint32_t bytes)
{
    if (!m_timer.IsRunning())
    {
        return; // at line rate: nothing to recover
    }
    m_bytes += bytes;
    while (m_bytes >= m_byteCounter)
    {
        m_bytes -= m_byteCounter;
        ++m_byteSteps;
        Increase();
    }
}

void
DcqcnCongestionControl::TimerExpired()
{
    ++m_timerSteps;
    Increase();
    const auto line = static_cast<double>(GetLineRate());
    if (m_rc < line || m_rt < line)
    {
        m_timer = Simulator::Schedule(m_rateTimer, &DcqcnCongestionControl::TimerExpired, this);
    }
}

void
DcqcnCongestionControl::Increase()
{
    const uint32_t high = std::max(m_timerSteps, m_byteSteps);
    const uint32_t low = std::min(m_timerSteps, m_byteSteps);
    const auto line = static_cast<double>(GetLineRate());
    if (low > m_fastSteps)
    {
        // hyper increase once both counters have passed F, by i R_HAI in its
        // i-th step (as QCN's hyper-active increase)
        m_rt +=
            static_cast<double>(low - m_fastSteps) * static_cast<double>(m_rateHai.GetBitRate());
    }
    else if (high > m_fastSteps)
    {
        // additive increase once one counter has passed F
        m_rt += static_cast<double>(m_rateAi.GetBitRate());
    }
    m_rt = std::min(m_rt, line);
    m_rc = std::min((m_rt + m_rc) / 2, line);
    SetRate(m_rc);
}

// DCTCP ------------------------------------------------------------------

TypeId
DctcpCongestionControl::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::DctcpCongestionControl")
            .SetParent<FabricCongestionControl>()
            .SetGroupName("GpuFabric")
            .AddConstructor<DctcpCongestionControl>()
            .AddAttribute("G",
                          "Gain of alpha's moving average (g; 1/16 in Alizadeh et al.).",
                          DoubleValue(1.0 / 16),
                          MakeDoubleAccessor(&DctcpCongestionControl::m_g),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("BaseRtt",
                          "Round trip of an empty path, for the initial window.",
                          TimeValue(MicroSeconds(8)),
                          MakeTimeAccessor(&DctcpCongestionControl::m_baseRtt),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("InitialWindow",
                          "Initial window, payload bytes (0: line rate x BaseRtt).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&DctcpCongestionControl::m_initialWindow),
                          MakeUintegerChecker<uint64_t>());
    return tid;
}

DctcpCongestionControl::DctcpCongestionControl() = default;

void
DctcpCongestionControl::Start(DataRate lineRate, uint32_t mss)
{
    FabricCongestionControl::Start(lineRate, mss);
    const double bdp = static_cast<double>(GetLineRate()) / 8 * m_baseRtt.GetSeconds();
    m_window = m_initialWindow != 0 ? static_cast<double>(m_initialWindow) : bdp;
    m_window = std::max(m_window, static_cast<double>(GetMss()));
    SetWindow(static_cast<uint64_t>(m_window));
}

void
DctcpCongestionControl::OnAck(const FabricAckInfo& ack)
{
    m_windowAcked += ack.ackedBytes;
    m_windowMarked += ack.markedBytes;
    if (static_cast<double>(m_windowAcked) < m_window)
    {
        return;
    }
    // one window of data acknowledged: about one round trip
    const double fraction =
        static_cast<double>(m_windowMarked) / static_cast<double>(m_windowAcked);
    m_alpha = (1 - m_g) * m_alpha + m_g * fraction;
    if (m_windowMarked > 0)
    {
        m_window *= 1 - m_alpha / 2;
    }
    else
    {
        m_window += GetMss();
    }
    m_window = std::max(m_window, static_cast<double>(GetMss()));
    m_windowAcked = 0;
    m_windowMarked = 0;
    SetWindow(static_cast<uint64_t>(m_window));
}

double
DctcpCongestionControl::GetAlpha() const
{
    return m_alpha;
}

// HPCC -------------------------------------------------------------------

TypeId
HpccCongestionControl::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::HpccCongestionControl")
            .SetParent<FabricCongestionControl>()
            .SetGroupName("GpuFabric")
            .AddConstructor<HpccCongestionControl>()
            .AddAttribute("Eta",
                          "Target utilization (eta; 0.95 in Li et al.), in (0, 1].",
                          DoubleValue(0.95),
                          MakeDoubleAccessor(&HpccCongestionControl::m_eta),
                          MakeDoubleChecker<double>())
            .AddAttribute("MaxStage",
                          "Additive steps before a multiplicative update (maxStage; 5 as the "
                          "paper prints it, 0 in the authors' simulations).",
                          UintegerValue(5),
                          MakeUintegerAccessor(&HpccCongestionControl::m_maxStage),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("BaseRtt",
                          "T: the base round trip, the window's time unit.",
                          TimeValue(MicroSeconds(8)),
                          MakeTimeAccessor(&HpccCongestionControl::m_baseRtt),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("ExpectedFlows",
                          "N, the most flows expected to share a link: W_AI = W_init (1 - "
                          "Eta) / N, so that N flows' additive steps together stay within "
                          "the headroom eta leaves (W_init = line rate x BaseRtt). 100 "
                          "gives 50 B at 100 Gb/s and 8 us; 125 is the step of the paper's "
                          "simulations (HPCC's simulator, run.py --cc hp: RATE_AI = 10 Mb/s "
                          "per 25 Gb/s of NIC rate, W_init / 2500 per round trip).",
                          UintegerValue(100),
                          MakeUintegerAccessor(&HpccCongestionControl::m_expectedFlows),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("RateAi",
                          "Additive increase as a rate, W_AI = RateAi x BaseRtt, instead of "
                          "the ExpectedFlows rule (0: the rule).",
                          DataRateValue(DataRate(0)),
                          MakeDataRateAccessor(&HpccCongestionControl::m_rateAi),
                          MakeDataRateChecker());
    return tid;
}

HpccCongestionControl::HpccCongestionControl() = default;

void
HpccCongestionControl::Start(DataRate lineRate, uint32_t mss)
{
    // eta in (0, 1]: NaN fails both comparisons
    FabricRequire(m_eta > 0 && m_eta <= 1, "ns3::HpccCongestionControl::Eta", m_eta, "in (0, 1]");
    FabricCongestionControl::Start(lineRate, mss);
    m_window = static_cast<double>(GetLineRate()) / 8 * m_baseRtt.GetSeconds();
    // W_AI: RateAi x T if given, else Li et al.'s W_init (1 - eta) / N
    m_ai = m_rateAi.GetBitRate() > 0
               ? static_cast<double>(m_rateAi.GetBitRate()) / 8 * m_baseRtt.GetSeconds()
               : m_window * (1 - m_eta) / m_expectedFlows;
    m_window = std::max(m_window, static_cast<double>(GetMss()));
    m_reference = m_window;
    m_u = 1;
    m_stage = 0;
    m_haveLast = false;
    SetWindow(static_cast<uint64_t>(m_window));
}

bool
HpccCongestionControl::UsesTelemetry() const
{
    return true;
}

double
HpccCongestionControl::GetAdditiveIncrease() const
{
    return m_ai;
}

double
HpccCongestionControl::GetUtilization() const
{
    return m_u;
}

double
HpccCongestionControl::ComputeWindow(double u, bool update)
{
    const double ai = m_ai;
    double w;
    if (u >= m_eta || m_stage >= m_maxStage)
    {
        w = m_reference / (u / m_eta) + ai;
        if (update)
        {
            m_stage = 0;
            m_reference = w;
        }
    }
    else
    {
        w = m_reference + ai;
        if (update)
        {
            ++m_stage;
            m_reference = w;
        }
    }
    const double line = static_cast<double>(GetLineRate()) / 8 * m_baseRtt.GetSeconds();
    return std::clamp(w, static_cast<double>(GetMss()), std::max(line, double(GetMss())));
}

void
HpccCongestionControl::OnAck(const FabricAckInfo& ack)
{
    const FabricIntHeader* now = ack.telemetry;
    if (now == nullptr || now->nHops == 0)
    {
        return; // no switch on the path: nothing to measure
    }
    if (!m_haveLast || m_last.nHops != now->nHops)
    {
        m_last = *now; // the first records of this path (or of a longer or shorter one)
        m_haveLast = true;
        return;
    }
    const double t = m_baseRtt.GetSeconds();
    double u = 0;
    double tau = 0;
    bool measured = false;
    for (uint32_t i = 0; i < now->nHops; ++i)
    {
        const FabricIntHeader::Hop& a = now->hops[i];
        const FabricIntHeader::Hop& b = m_last.hops[i];
        const uint32_t dt = a.timeNs - b.timeNs; // modulo 2^32
        if (a.port != b.port || dt == 0 || dt > 0x80000000U)
        {
            continue; // another port (a sprayed path), the same record, or an older one
        }
        const double rate = static_cast<double>(a.rateMbps) * 1e6 / 8; // bytes/s
        const double txRate = static_cast<double>(a.txBytes - b.txBytes) / (dt * 1e-9);
        const double hop =
            static_cast<double>(std::min(a.queueBytes, b.queueBytes)) / (rate * t) + txRate / rate;
        if (!measured || hop > u)
        {
            u = hop;
            tau = dt * 1e-9;
            measured = true;
        }
    }
    m_last = *now;
    if (!measured)
    {
        return;
    }
    tau = std::min(tau, t);
    m_u = (1 - tau / t) * m_u + tau / t * u;
    const bool update = ack.ackedTotal > m_lastUpdate;
    m_window = ComputeWindow(m_u, update);
    if (update)
    {
        m_lastUpdate = ack.sentTotal;
    }
    SetWindow(static_cast<uint64_t>(m_window));
    SetRate(m_window * 8 / t);
}

// Swift ------------------------------------------------------------------

TypeId
SwiftCongestionControl::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::SwiftCongestionControl")
            .SetParent<FabricCongestionControl>()
            .SetGroupName("GpuFabric")
            .AddConstructor<SwiftCongestionControl>()
            .AddAttribute("TargetDelay",
                          "Round trip the window aims at (base RTT plus the queueing "
                          "allowed).",
                          TimeValue(MicroSeconds(15)),
                          MakeTimeAccessor(&SwiftCongestionControl::m_target),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("BaseRtt",
                          "Round trip of an empty path, for the initial window.",
                          TimeValue(MicroSeconds(8)),
                          MakeTimeAccessor(&SwiftCongestionControl::m_baseRtt),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("Ai",
                          "Additive increase, packets per window of ACKs.",
                          DoubleValue(1.0),
                          MakeDoubleAccessor(&SwiftCongestionControl::m_ai),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("Beta",
                          "Multiplicative decrease gain (beta).",
                          DoubleValue(0.8),
                          MakeDoubleAccessor(&SwiftCongestionControl::m_beta),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("MaxMdf",
                          "Largest multiplicative cut (max_mdf).",
                          DoubleValue(0.5),
                          MakeDoubleAccessor(&SwiftCongestionControl::m_maxMdf),
                          MakeDoubleChecker<double>(0, 1));
    return tid;
}

SwiftCongestionControl::SwiftCongestionControl() = default;

void
SwiftCongestionControl::Start(DataRate lineRate, uint32_t mss)
{
    FabricCongestionControl::Start(lineRate, mss);
    m_window = static_cast<double>(GetLineRate()) / 8 * m_baseRtt.GetSeconds();
    m_window = std::max(m_window, static_cast<double>(GetMss()));
    SetWindow(static_cast<uint64_t>(m_window));
}

bool
SwiftCongestionControl::UsesTelemetry() const
{
    return true;
}

void
SwiftCongestionControl::OnAck(const FabricAckInfo& ack)
{
    if (!ack.rtt.IsStrictlyPositive())
    {
        return;
    }
    const double mss = GetMss();
    const Time now = Simulator::Now();
    if (ack.rtt < m_target)
    {
        // Ai packets per window of acknowledged bytes
        m_window += m_ai * mss * static_cast<double>(ack.ackedBytes) / m_window;
    }
    else if (!m_decreased || now - m_lastDecrease >= ack.rtt)
    {
        const double over = (ack.rtt - m_target).GetSeconds() / ack.rtt.GetSeconds();
        m_window *= std::max(1 - m_beta * over, 1 - m_maxMdf);
        m_lastDecrease = now;
        m_decreased = true;
    }
    const double line = static_cast<double>(GetLineRate()) / 8 * m_target.GetSeconds();
    m_window = std::clamp(m_window, mss, std::max(line, mss));
    SetWindow(static_cast<uint64_t>(m_window));
}

// names ------------------------------------------------------------------

std::string
ResolveCongestionControl(const std::string& name, const std::string& parameter)
{
    if (name.empty() || name == "none")
    {
        return "";
    }
    if (name == "dcqcn")
    {
        return "ns3::DcqcnCongestionControl";
    }
    if (name == "dctcp")
    {
        return "ns3::DctcpCongestionControl";
    }
    if (name == "hpcc")
    {
        return "ns3::HpccCongestionControl";
    }
    if (name == "swift")
    {
        return "ns3::SwiftCongestionControl";
    }
    TypeId tid;
    const bool known = TypeId::LookupByNameFailSafe(name, &tid);
    FabricRequire(known && tid != FabricCongestionControl::GetTypeId() &&
                      tid.IsChildOf(FabricCongestionControl::GetTypeId()) && tid.HasConstructor(),
                  parameter,
                  name,
                  "none, dcqcn, dctcp, hpcc, swift, or the TypeId name of a "
                  "FabricCongestionControl subclass");
    return name;
}

EcnMarking
PublishedEcnMarking(const std::string& type)
{
    if (type == "ns3::DcqcnCongestionControl")
    {
        return {5'000, 200'000, 0.01};
    }
    return {100'000, 100'000, 1.0};
}

} // namespace ns3
