/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FAULT_INJECTOR_H
#define GPU_FABRIC_FAULT_INJECTOR_H

#include "fabric.h"

#include "ns3/fabric-routing.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <map>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Applies faults to a Fabric and makes routing react to them.
 *
 * A fault takes effect on the data path at once: a down cable loses what it
 * holds and carries nothing (FabricNetDevice::SetLinkUp), a down switch or
 * GPU takes all its cables down, a down GPU's transport endpoint is dead
 * (PacketTransport::SetEndpointDown), a degraded cable runs at a fraction of
 * its rate, a bit-error rate corrupts packets. Routing learns of each change
 * DetectionDelay later: the forwarding tables of every node are recomputed
 * without the failed elements (ComputeRoutingTables(topo, FaultState)), which
 * shrinks ECMP groups and, with HbDomainRelay, relays traffic that lost its
 * network path through the HB domains; the transport then moves queued
 * messages onto the new routes and fails those left without a path.
 *
 * Make before break: a switch the new tables leave without any route to a
 * destination it had one to keeps its former next hops that still lead
 * somewhere (an up cable to the destination, to a GPU with a new route to
 * it, or to a switch with a route), until the next update. Only packets already committed
 * to the old route use them (a source's NIC queue, a wire): after a repair
 * the relay routes are withdrawn while the relayed packets still have a
 * path, and they would otherwise be dropped for lack of a route. GPUs get no
 * kept routes (the transport reads a GPU's table to tell whether it has a
 * path).
 *
 * One injector per fabric, aggregated to it (FaultHelper finds or makes it).
 */
class FaultInjector : public Object
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    FaultInjector();

    /// \param fabric the fabric (not owned: the injector is aggregated to it)
    void SetFabric(Fabric* fabric);

    /// \return false once its fabric is disposed (faults then do nothing)
    bool HasFabric() const;

    /// \param cable a cable of the topology: take it down now
    void LinkDown(uint32_t cable);
    /// \param cable a cable: bring it back now
    void LinkUp(uint32_t cable);
    /// \param vertex a switch or NVSwitch vertex: take it (all its cables) down now
    void SwitchDown(uint32_t vertex);
    /// \param vertex a switch vertex: bring it back now
    void SwitchUp(uint32_t vertex);
    /// \param rank a GPU: its cables down and its transport endpoint dead, now
    void GpuDown(uint32_t rank);
    /**
     * Run a cable at a fraction of its rate (both directions), now.
     * \param cable the cable \param fraction in (0, 1]; 1 restores it
     */
    void DegradeLink(uint32_t cable, double fraction);
    /**
     * Corrupt packets on a cable (both directions).
     * \param cable the cable \param ber bit-error rate in [0, 1)
     */
    void SetBitErrorRate(uint32_t cable, double ber);

    /**
     * Make routing react now to every fault applied so far, without waiting
     * for DetectionDelay (a component that was already broken when the run
     * began).
     */
    void DetectNow();

    /// \return the failed elements now (what the data path sees)
    const FaultState& GetFaultState() const;
    /// \return the failed elements routing has detected so far
    const FaultState& GetDetectedState() const;
    /// \param cable a cable \return its rate now, bit/s (the topology's, or
    /// what DegradeLink left; on any rank, built here or not)
    uint64_t GetCableRate(uint32_t cable) const;
    /// \return one line per fault applied and per routing update, in order
    const std::vector<std::string>& GetLog() const;
    /// \return number of routing updates
    uint32_t GetRoutingUpdates() const;
    /// \return (switch, destination) routes the last update withdrew but
    /// kept for the packets already on their way (see the class description)
    uint64_t GetKeptRoutes() const;

    // The checks every fault runs, here and when FaultHelper schedules it
    // (so that a bad argument fails at the call, not at the fault's time).
    /// Throw FabricConfigError unless \p cable is a cable of the fabric.
    void RequireCable(uint32_t cable) const;
    /// Throw FabricConfigError unless \p vertex is a switch or NVSwitch.
    void RequireSwitch(uint32_t vertex) const;
    /// Throw FabricConfigError unless \p rank is a GPU of the fabric.
    void RequireGpu(uint32_t rank) const;
    /// Throw FabricConfigError unless \p fraction is in (0, 1].
    static void RequireRateFraction(double fraction);

  protected:
    void DoDispose() override;

  private:
    /// Throw FabricConfigError once the fabric is disposed (its devices are gone).
    void RequireFabric() const;
    void ApplyVertex(uint32_t vertex);
    void ApplyCable(uint32_t cable);
    void Changed(const std::string& what);
    void Detect(FaultState snapshot, std::string what);
    /// Give the switches of \p tables that lost every route to a destination
    /// their installed live next hops to it (make before break).
    void KeepWithdrawnRoutes(std::vector<FabricRoutingTable>& tables, const FaultState& state);

    Fabric* m_fabric{nullptr};                     //!< the fabric (owner of this injector)
    FaultState m_state;                            //!< failed now
    std::map<uint32_t, uint64_t> m_degraded;       //!< cable -> rate (DegradeLink)
    FaultState m_detected;                         //!< failed as routing knows it
    std::vector<std::vector<uint32_t>> m_cablesOf; //!< vertex -> its cables
    Time m_detectionDelay;                         //!< attribute
    bool m_hbDomainRelay{true};                    //!< attribute
    uint32_t m_updates{0};                         //!< routing updates
    std::vector<std::vector<uint32_t>> m_kept;     //!< vertex -> destinations of kept routes
    uint64_t m_nKept{0};                           //!< kept routes, last update
    std::vector<std::string> m_log;                //!< what happened
    TracedCallback<std::string> m_faultTrace;      //!< a fault was applied
    TracedCallback<std::string> m_routesTrace;     //!< routing reacted
};

} // namespace ns3

#endif // GPU_FABRIC_FAULT_INJECTOR_H
