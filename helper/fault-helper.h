/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FAULT_HELPER_H
#define GPU_FABRIC_FAULT_HELPER_H

#include "ns3/fabric-helper.h"
#include "ns3/fault-injector.h"
#include "ns3/nstime.h"

#include <string>
#include <vector>

namespace ns3
{

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
