/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_PROGRESS_WATCHDOG_H
#define GPU_FABRIC_PROGRESS_WATCHDOG_H

#include "packet-transport.h"

#include "ns3/event-id.h"
#include "ns3/node-container.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Stops a run that no longer makes progress, and says why.
 *
 * While the transport has pending messages, the watchdog looks every
 * Interval at the bytes serialized by all ports of the fabric. If none moved
 * during a whole Interval (a flow-control deadlock, a pause that never
 * ends), it calls Simulator::Stop and leaves a report naming the blocked
 * queues (ports paused by their peer with packets queued, and ports of down
 * links) and the pending messages. It is idle, and schedules nothing, while
 * no message is pending, so a run still ends when its work is done (at most
 * one Interval later than without the watchdog).
 *
 * Choose Interval above the longest legitimate silence: the transport's
 * RetransmitTimeout and the fault injector's DetectionDelay.
 */
class ProgressWatchdog : public Object
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    ProgressWatchdog();

    /**
     * Watch a fabric.
     * \param transport its message layer
     * \param nodes its nodes (GPUs and switches; FabricNode ports are watched)
     */
    void Install(Ptr<PacketTransport> transport, const NodeContainer& nodes);

    /// \return true once it has stopped the run
    bool HasFired() const;
    /// \return the report (empty until it fires)
    const std::string& GetReport() const;
    /// \return descriptions of the blocked ports found when it fired (paused with
    ///         packets queued, or link down)
    const std::vector<std::string>& GetBlockedQueues() const;
    /// \return the pending messages found when it fired
    const std::vector<PacketTransport::MessageReport>& GetPendingMessages() const;

  protected:
    void DoDispose() override;

  private:
    void Arm();
    void Tick();
    uint64_t BytesMoved() const;
    void Fire();

    Ptr<PacketTransport> m_transport;
    std::vector<Ptr<FabricNetDevice>> m_devices;
    Time m_interval;
    uint32_t m_maxListed{0};
    bool m_stopRun{true};
    bool m_armed{false};
    bool m_fired{false};
    uint64_t m_lastBytes{0};
    EventId m_event;
    std::string m_report;
    std::vector<std::string> m_blocked;
    std::vector<PacketTransport::MessageReport> m_pending;
    TracedCallback<std::string> m_stallTrace;
};

} // namespace ns3

#endif // GPU_FABRIC_PROGRESS_WATCHDOG_H
