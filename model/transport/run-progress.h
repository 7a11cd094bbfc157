/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_RUN_PROGRESS_H
#define GPU_FABRIC_RUN_PROGRESS_H

#include "transport.h"

#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <chrono>
#include <cstdint>
#include <string>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Reports how far a long run has come, at intervals of wall time.
 *
 * It compares the bytes a transport has delivered with the bytes the
 * workload is expected to deliver, and fires the Progress trace source at
 * most once per Interval of wall time (ns-3's ShowProgress shows simulated
 * time and events only, and keeps a run alive until Simulator::Stop; runs of
 * this module end when their work is done).
 *
 * It schedules no events: the transport it watches asks it to look at the
 * clock from its own events (every 64th data packet delivered, every 16th
 * flow-level rate change), so a run's events, their count and the time
 * Simulator::Run() ends at are the same with or without it.
 */
class RunProgress : public Object
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    RunProgress();

    /// What the Progress trace source reports.
    struct Report
    {
        Time now;                    //!< simulated time
        uint64_t bytesDelivered{0};  //!< delivered since Install
        uint64_t bytesExpected{0};   //!< expected since Install
        uint64_t events{0};          //!< events executed since Install
        double wallSeconds{0};       //!< wall time since Install
        double remainingSeconds{-1}; //!< wall time left at the rate so far (-1: unknown)
    };

    /// Signature of the Progress trace source.
    typedef void (*ProgressTracedCallback)(const Report& report);

    /**
     * Start watching a run.
     * \param transport the transport whose delivered bytes count
     * \param bytesExpected payload bytes the run delivers from now on
     */
    void Install(Ptr<Transport> transport, uint64_t bytesExpected);

    /// \param bytes more payload bytes the run delivers (work declared later)
    void AddExpectedBytes(uint64_t bytes);

    /// \return the report as of now (what Progress would fire)
    Report Current() const;

    /// Look at the clock: fire Progress if Interval of wall time has passed
    /// since the last report (the watched transport calls it; cheap).
    void Poll();

    /**
     * \param report a report
     * \return one line for a person ("progress: 12.5 % of 4.3 GB delivered,
     *         simulated 1.25 ms, 3.1e+08 events in 2.0 minutes, about 14
     *         minutes left")
     */
    static std::string Describe(const Report& report);

  protected:
    void DoDispose() override;

  private:
    Ptr<Transport> m_transport;
    Time m_interval; //!< wall time between reports
    uint64_t m_baseBytes{0};
    uint64_t m_expected{0};
    uint64_t m_baseEvents{0};
    std::chrono::steady_clock::time_point m_start;
    std::chrono::steady_clock::time_point m_lastReport;
    TracedCallback<const Report&> m_progressTrace;
};

} // namespace ns3

#endif // GPU_FABRIC_RUN_PROGRESS_H
