/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_CONGESTION_CONTROL_H
#define GPU_FABRIC_CONGESTION_CONTROL_H

#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/fabric-header.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>
#include <limits>
#include <string>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief What an ACK tells a flow's congestion control.
 */
struct FabricAckInfo
{
    uint64_t ackedBytes{0};  //!< payload bytes acknowledged that earlier ACKs did not
    uint64_t markedBytes{0}; //!< of which arrived marked CE
    uint64_t ackedTotal{0};  //!< payload bytes the receiver has had so far
    uint64_t sentTotal{0};   //!< payload bytes the flow has sent so far
    Time rtt;                //!< now minus the acked packet's send time (0: unknown)
    /// the acked packet's telemetry (UsesTelemetry), or nullptr
    const FabricIntHeader* telemetry{nullptr};
};

/**
 * \ingroup gpu-fabric
 * \brief The sender's congestion control of one flow (a GPU's traffic to
 * one destination through its NIC), as a RoCE NIC runs it per queue pair.
 *
 * PacketTransport creates one per flow from the TypeId its
 * CongestionControl attribute names (attributes set with Config::SetDefault
 * apply to every flow) and tells it what the flow sends and what comes back:
 * ACKs (every AckEvery packets, with the running totals of bytes received
 * and of bytes received marked CE) and CNPs. The flow may send while its
 * bytes in flight stay under GetWindow() (a packet always goes when nothing
 * is in flight), and no faster than GetRate() (paced per packet; the line
 * rate means unpaced). Subclasses are the algorithms: DCQCN, DCTCP.
 */
class FabricCongestionControl : public Object
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    FabricCongestionControl();

    /// No window: the flow is limited by its rate only.
    static constexpr uint64_t kNoWindow = std::numeric_limits<uint64_t>::max();

    /**
     * The flow starts (before its first packet).
     * \param lineRate the rate of the port it leaves by
     * \param mss payload bytes of a full packet
     */
    virtual void Start(DataRate lineRate, uint32_t mss);

    /**
     * A packet of the flow was handed to its port.
     * \param bytes its frame size
     */
    virtual void OnSent(uint32_t bytes);

    /**
     * An ACK arrived.
     * \param ack what it says
     */
    virtual void OnAck(const FabricAckInfo& ack);

    /// A CNP arrived (the receiver saw a CE mark).
    virtual void OnCnp();

    /// \return whether the algorithm reacts to CNPs (the receiver sends them only then)
    virtual bool UsesCnp() const;
    /// \return whether the flow's data packets carry a FabricIntHeader (the
    /// send time for RTTs, and INT hops from the switches), echoed by ACKs
    virtual bool UsesTelemetry() const;

    /// \return the pacing rate, bit/s (the line rate: unpaced)
    uint64_t GetRate() const;
    /// \return the window, payload bytes in flight (kNoWindow: none)
    uint64_t GetWindow() const;
    /// \return the line rate given to Start, bit/s
    uint64_t GetLineRate() const;

  protected:
    /// \param bps the new pacing rate, clamped to [1 bit/s, line rate]
    void SetRate(double bps);
    /// \param bytes the new window
    void SetWindow(uint64_t bytes);
    /// \return the payload bytes of a full packet given to Start
    uint32_t GetMss() const;

  private:
    uint64_t m_lineRate{0};       //!< bit/s
    uint64_t m_rate{0};           //!< bit/s
    uint64_t m_window{kNoWindow}; //!< payload bytes
    uint32_t m_mss{0};            //!< payload bytes of a full packet
};

/**
 * \ingroup gpu-fabric
 * \brief DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA
 * Deployments", SIGCOMM 2015): rate-based, driven by CNPs.
 *
 * On a CNP: target rate Rt = Rc (with ClampTargetRate false only if the rate
 * rose since the last CNP), current rate Rc = Rc (1 - alpha / 2),
 * alpha = (1 - g) alpha + g, and the increase stages restart. Without CNPs,
 * alpha decays by (1 - g) every AlphaTimer; the rate rises at every expiry
 * of the RateTimer and of the ByteCounter: the first FastRecoverySteps
 * increases halve the distance to Rt (fast recovery), then Rt grows by
 * RateAi per step (additive increase), and once both timer and byte counter
 * have passed FastRecoverySteps, by i RateHai in the i-th step after that
 * (hyper increase), Rc = (Rt + Rc)/2
 * each time. The flow starts at line rate with alpha = 1.
 */
class DcqcnCongestionControl : public FabricCongestionControl
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    DcqcnCongestionControl();

    void Start(DataRate lineRate, uint32_t mss) override;
    void OnSent(uint32_t bytes) override;
    void OnCnp() override;
    bool UsesCnp() const override;

    /// \return alpha (decayed to now)
    double GetAlpha() const;
    /// \return the target rate Rt, bit/s
    double GetTargetRate() const;

  protected:
    void DoDispose() override;

  private:
    /// Alpha decayed by the AlphaTimer expiries since the last CNP.
    double DecayedAlpha() const;
    /// One rate increase (timer or byte counter expired).
    void Increase();
    /// The RateTimer expired.
    void TimerExpired();

    double m_g;               //!< alpha gain
    Time m_alphaTimer;        //!< alpha decay period
    Time m_rateTimer;         //!< rate increase period
    uint64_t m_byteCounter;   //!< bytes per byte-counter increase
    uint32_t m_fastSteps;     //!< F
    DataRate m_rateAi;        //!< additive increase step
    DataRate m_rateHai;       //!< hyper increase step
    DataRate m_minRate;       //!< floor of Rc
    bool m_clampTarget{true}; //!< Rt = Rc at every CNP, not only after an increase
    double m_alpha{1};        //!< at m_lastCnp
    Time m_lastCnp;           //!< alpha's reference time
    double m_rc{0};           //!< current rate, bit/s
    double m_rt{0};           //!< target rate, bit/s
    uint32_t m_timerSteps{0}; //!< timer expiries since the last CNP
    uint32_t m_byteSteps{0};  //!< byte-counter expiries since the last CNP
    uint64_t m_bytes{0};      //!< bytes sent toward the next byte-counter expiry
    EventId m_timer;          //!< the RateTimer
};

/**
 * \ingroup gpu-fabric
 * \brief DCTCP-style window over ECN (Alizadeh et al., "Data Center TCP",
 * SIGCOMM 2010), as an RDMA NIC would run it.
 *
 * Once per window of data (about an RTT) alpha = (1 - g) alpha + g F, F the
 * fraction of bytes the ACKs report marked; if any was marked the window is
 * cut to W (1 - alpha / 2), else it grows by one packet per window. The
 * window starts at InitialWindow (0: the line rate times BaseRtt, so that a
 * flow starts at line rate, as RDMA flows do) and never falls below one
 * packet.
 */
class DctcpCongestionControl : public FabricCongestionControl
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    DctcpCongestionControl();

    void Start(DataRate lineRate, uint32_t mss) override;
    void OnAck(const FabricAckInfo& ack) override;

    /// \return alpha
    double GetAlpha() const;

  private:
    double m_g;                 //!< alpha gain
    Time m_baseRtt;             //!< for the initial window
    uint64_t m_initialWindow;   //!< bytes (0: line rate x BaseRtt)
    double m_alpha{0};          //!< the marked fraction's moving average
    double m_window{0};         //!< bytes
    uint64_t m_windowAcked{0};  //!< bytes acked in this observation window
    uint64_t m_windowMarked{0}; //!< of which marked
};

/**
 * \ingroup gpu-fabric
 * \brief HPCC (Li et al., "HPCC: High Precision Congestion Control",
 * SIGCOMM 2019), window and rate from in-band telemetry.
 *
 * Each ACK echoes the INT of its packet's path. Per hop (records of the same
 * egress port in this ACK and the previous one), the normalized
 * inflight u = min(q, q') / (B T) + txRate / B (q, q' the queue in this and
 * the previous record, txRate from the two records' transmitted bytes and
 * times, B the link's rate, T = BaseRtt); the largest over the hops updates
 * U = (1 - tau/T) U + tau/T u (tau the records' interval, at most T). The
 * window follows W = Wc / (U / Eta) + W_AI when U >= Eta or after MaxStage
 * additive steps, else W = Wc + W_AI; the reference Wc takes W once per
 * round trip (when an ACK passes what was sent at the last update). The flow
 * is paced at W / T. W starts at W_init = line rate x T; W_AI = W_init (1 -
 * Eta) / ExpectedFlows (125 reproduces HPCC's simulator in the paper's
 * runs, W_init / 2500), or RateAi x T if set.
 */
class HpccCongestionControl : public FabricCongestionControl
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    HpccCongestionControl();

    void Start(DataRate lineRate, uint32_t mss) override;
    void OnAck(const FabricAckInfo& ack) override;
    bool UsesTelemetry() const override;

    /// \return U, the normalized inflight estimate
    double GetUtilization() const;
    /// \return W_AI, bytes (after Start)
    double GetAdditiveIncrease() const;

  private:
    /// The window for \p u; \p update: a new reference window (once per RTT).
    double ComputeWindow(double u, bool update);

    double m_eta;                  //!< target utilization
    uint32_t m_maxStage;           //!< additive steps before a multiplicative one
    Time m_baseRtt;                //!< T
    DataRate m_rateAi;             //!< W_AI / T, if set
    uint32_t m_expectedFlows{100}; //!< N of the W_AI rule
    double m_ai{0};                //!< W_AI, bytes
    double m_u{1};                 //!< U
    double m_window{0};            //!< W, bytes
    double m_reference{0};         //!< Wc, bytes
    uint32_t m_stage{0};           //!< additive steps since the last multiplicative one
    uint64_t m_lastUpdate{0};      //!< sentTotal at the last reference update
    FabricIntHeader m_last;        //!< the previous ACK's records
    bool m_haveLast{false};        //!< m_last holds records
};

/**
 * \ingroup gpu-fabric
 * \brief Swift-style delay-based window (Kumar et al., "Swift: Delay is
 * Simple and Effective for Congestion Control in the Datacenter", SIGCOMM
 * 2020), the RTT measured from the send time each ACK echoes.
 *
 * Below TargetDelay the window grows by Ai packets per window of ACKs; above
 * it, at most once per RTT, it is cut by max(1 - Beta (rtt - target) / rtt,
 * 1 - MaxMdf). The flow is paced at W / rtt when the window is below one
 * packet. It starts at line rate x BaseRtt.
 */
class SwiftCongestionControl : public FabricCongestionControl
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    SwiftCongestionControl();

    void Start(DataRate lineRate, uint32_t mss) override;
    void OnAck(const FabricAckInfo& ack) override;
    bool UsesTelemetry() const override;

  private:
    Time m_target;           //!< target delay
    Time m_baseRtt;          //!< for the initial window
    double m_ai;             //!< additive increase, packets per window
    double m_beta;           //!< multiplicative decrease gain
    double m_maxMdf;         //!< largest cut
    double m_window{0};      //!< bytes
    Time m_lastDecrease;     //!< when the window was last cut
    bool m_decreased{false}; //!< it was cut once
};

/**
 * \param name "none", a short name (dcqcn, dctcp, hpcc, swift) or a TypeId name of a
 *        FabricCongestionControl subclass
 * \return the TypeId name ("" for none)
 * \throw FabricConfigError naming \p parameter when it is neither
 */
std::string ResolveCongestionControl(const std::string& name, const std::string& parameter);

/**
 * \ingroup gpu-fabric
 * \brief ECN marking of switch ports: FabricSwitch's EcnKmin, EcnKmax and EcnPmax.
 */
struct EcnMarking
{
    uint32_t kmin; //!< bytes queued where marking starts
    uint32_t kmax; //!< bytes queued where the probability reaches pmax
    double pmax;   //!< marking probability at kmax
};

/**
 * The marking an algorithm's paper runs its switches with: DCQCN's RED
 * (Kmin 5 KB, Kmax 200 KB, Pmax 1 %; Zhu et al., SIGCOMM 2015), and for the
 * others DCTCP's step (every packet marked above K = 100 KB; HPCC and Swift
 * read INT and delay, and ignore marks).
 * \param type a TypeId name from ResolveCongestionControl (not "")
 * \return the marking
 */
EcnMarking PublishedEcnMarking(const std::string& type);

} // namespace ns3

#endif // GPU_FABRIC_CONGESTION_CONTROL_H
