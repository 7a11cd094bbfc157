/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_RUN_PROGRESS_H
#define GPU_FABRIC_RUN_PROGRESS_H

#include "transport.h"

#include "ns3/event-id.h"
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
 * It looks at the clock in events of its own, whose simulated spacing adapts
 * so that it looks about twenty times per Interval. It schedules the next one
 * only while other events are pending, so a run ends when its work is done,
 * and it never touches the model: results are the same with or without it
 * (only the count of executed events differs).
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
    void Check();

    Ptr<Transport> m_transport;
    Time m_interval; //!< wall time between reports
    Time m_step;     //!< simulated time between looks at the clock
    uint64_t m_baseBytes{0};
    uint64_t m_expected{0};
    uint64_t m_baseEvents{0};
    std::chrono::steady_clock::time_point m_start;
    std::chrono::steady_clock::time_point m_lastLook;
    std::chrono::steady_clock::time_point m_lastReport;
    EventId m_event;
    TracedCallback<const Report&> m_progressTrace;
};

} // namespace ns3

#endif // GPU_FABRIC_RUN_PROGRESS_H
