/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FAULT_HELPER_H
#define GPU_FABRIC_FAULT_HELPER_H

#include "ns3/fabric-helper.h"
#include "ns3/fabric-routing.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

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
    /// \return one line per fault applied and per routing update, in order
    const std::vector<std::string>& GetLog() const;
    /// \return number of routing updates
    uint32_t GetRoutingUpdates() const;

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

    Fabric* m_fabric{nullptr};                     //!< the fabric (owner of this injector)
    FaultState m_state;                            //!< failed now
    FaultState m_detected;                         //!< failed as routing knows it
    std::vector<std::vector<uint32_t>> m_cablesOf; //!< vertex -> its cables
    Time m_detectionDelay;                         //!< attribute
    bool m_hbDomainRelay{true};                    //!< attribute
    uint32_t m_updates{0};                         //!< routing updates
    std::vector<std::string> m_log;                //!< what happened
    TracedCallback<std::string> m_faultTrace;      //!< a fault was applied
    TracedCallback<std::string> m_routesTrace;     //!< routing reacted
};

/**
 * \ingroup gpu-fabric
 * \brief Schedules faults on a Fabric at simulated times.
 *
 * \code
 *   FaultHelper faults(fabric);
 *   faults.SetDetectionDelay(MicroSeconds(50));
 *   faults.LinkDown(cable, MilliSeconds(1));
 *   faults.SwitchDown(railSwitch, MilliSeconds(2));
 * \endcode
 * Times are absolute simulated times (not before now). Bad cables, vertices,
 * ranks, fractions or rates are rejected with FabricConfigError.
 */
class FaultHelper
{
  public:
    /// \param fabric the fabric; its FaultInjector is created on first use
    explicit FaultHelper(Ptr<Fabric> fabric);

    /// \param delay time from a fault to the routing reaction
    void SetDetectionDelay(Time delay);
    /// \param relay relay traffic that lost its network path through HB domains
    void SetHbDomainRelay(bool relay);

    /// Take a cable down at \p at.
    void LinkDown(uint32_t cable, Time at) const;
    /// Bring a cable up at \p at.
    void LinkUp(uint32_t cable, Time at) const;
    /// Take a switch (all its cables) down at \p at.
    void SwitchDown(uint32_t vertex, Time at) const;
    /// Bring a switch up at \p at.
    void SwitchUp(uint32_t vertex, Time at) const;
    /// A GPU dies at \p at (its cables and its transport endpoint).
    void GpuDown(uint32_t rank, Time at) const;
    /// A cable runs at \p fraction of its rate from \p at on.
    void DegradeLink(uint32_t cable, double fraction, Time at) const;
    /// A cable corrupts bits at rate \p ber from \p at on.
    void SetBitErrorRate(uint32_t cable, double ber, Time at = Seconds(0)) const;

    /// \return the injector
    Ptr<FaultInjector> GetInjector() const;

    /**
     * The cable between two vertices.
     * \param topo the topology \param a one end \param b the other end
     * \return its index; throws FabricConfigError if they are not linked
     */
    static uint32_t FindCable(const FabricTopology& topo, uint32_t a, uint32_t b);
    /**
     * Switch vertices with a role.
     * \param topo the topology \param role e.g. "rail", "leaf", "spine", "nvswitch"
     * \return their vertices in order
     */
    static std::vector<uint32_t> FindSwitches(const FabricTopology& topo, const std::string& role);
    /**
     * The cables of a vertex.
     * \param topo the topology \param vertex the vertex
     * \return the cables that end at it
     */
    static std::vector<uint32_t> CablesOf(const FabricTopology& topo, uint32_t vertex);

  private:
    Time When(Time at) const;

    /**
     * Apply \p fault to the injector at \p at; one due after the fabric was
     * disposed does nothing (its devices are gone).
     */
    template <typename... Args>
    void At(Time at, void (FaultInjector::*fault)(Args...), Args... args) const;

    Ptr<Fabric> m_fabric;
    Ptr<FaultInjector> m_injector;
};

} // namespace ns3

#endif // GPU_FABRIC_FAULT_HELPER_H
