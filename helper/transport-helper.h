/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_TRANSPORT_HELPER_H
#define GPU_FABRIC_TRANSPORT_HELPER_H

#include "fabric-helper.h"
#include "flow-helper.h"

#include "ns3/collective-run.h"
#include "ns3/fabric-topology.h"
#include "ns3/flow-transport.h"
#include "ns3/ptr.h"
#include "ns3/transport.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ns3
{

class CollectiveHelper;

/**
 * \ingroup gpu-fabric
 * \brief The message layer TransportHelper installed: the packet-level
 * fabric (with its Fabric, for drops and traces) or the flow-level backend,
 * and the Transport both give.
 */
struct InstalledTransport
{
    Ptr<Fabric> fabric;       //!< packet level only
    Ptr<FlowTransport> flow;  //!< flow level only
    Ptr<Transport> transport; //!< either

    /// Dispose of what was installed (call before Simulator::Destroy).
    void Dispose();
};

/**
 * \ingroup gpu-fabric
 * \brief The estimated work of one collective run alone on a backend
 * (TransportHelper::EstimateCollectives), as the backend's check before the
 * run counts it (Transport::ExpectWork).
 */
struct CollectiveWork
{
    uint64_t bytes{0};     //!< the collective's nccl-tests size
    uint64_t messages{0};  //!< messages its schedule sends (TotalOps() / 2)
    uint64_t bytesSent{0}; //!< payload bytes they carry (TotalBytesSent())
    double seconds{0};     //!< estimated wall time (Transport::EstimateRunSeconds)
};

class CollectiveHelper;

/**
 * \ingroup gpu-fabric
 * \brief Install the backend a name chooses on a topology, as the module's
 * programs do for their --backend flag:
 *
 * - "packet": FabricHelper, every packet through devices, switches and
 *   PacketTransport (the default);
 * - "flow": FlowHelper, fluid max-min fair flows (FlowTransport).
 *
 * The same FabricTopology feeds either, and code written against the
 * Transport (CollectiveHelper, RunProgram) runs on both.
 *
 * \code
 *   TransportHelper transports("flow");
 *   InstalledTransport t = transports.Install(topology);
 *   Ptr<ProgramRunner> runner = RunProgram(program, t.transport);
 *   t.Dispose();
 *   Simulator::Destroy();
 * \endcode
 *
 * The name is checked when installing: a name other than those of
 * GetNames() raises FabricConfigError naming the parameter ("backend" by
 * default; a program gives "--backend").
 */
class TransportHelper
{
  public:
    /**
     * \param backend one of GetNames()
     * \param parameter what gave the name (for an error)
     */
    explicit TransportHelper(const std::string& backend = "packet",
                             const std::string& parameter = "backend");

    /// \return the names the helper takes: "packet", "flow"
    static std::vector<std::string> GetNames();

    /**
     * \param backend one of GetNames()
     * \param parameter what gave the name (for an error)
     */
    void SetBackend(const std::string& backend, const std::string& parameter = "backend");

    /// \return the backend's name
    const std::string& GetBackend() const;

    /// \return the helper "packet" installs with (set device and node
    ///         attributes on it); "flow" takes its devices' Mtu as framing
    FabricHelper& GetFabricHelper();

    /// \return the helper "flow" installs with (set transport attributes on
    ///         it); Install gives it the FabricHelper's device Mtu
    ///         (FlowHelper::SetFrameMtu), so both backends cut messages alike
    FlowHelper& GetFlowHelper();

    /**
     * How a distributed run (FabricDistributed::IsEnabled(), more than one
     * rank) cuts the fabrics Install makes over the ranks: a
     * FabricPartitioner spec ("domain", the default; "domain:B";
     * "pipeline:P" for a job of P pipeline stages; "pod"; "file:PATH"). On
     * one process it is not used.
     * \param spec the policy (refused by Install, as "partition", if unknown)
     */
    void SetPartition(const std::string& spec);

    /**
     * \param topology the topology
     * \return the installed backend
     * \throws FabricConfigError for a name other than GetNames()
     */
    InstalledTransport Install(const FabricTopology& topology) const;

    /**
     * Run one collective alone, on a fresh backend in a fresh simulation:
     * its figure depends on nothing run before it (transport state, message
     * ids and so ECMP paths would otherwise carry over), so a row of a sweep
     * equals the same size run alone. Calls Simulator::Run and
     * Simulator::Destroy.
     * \param topology the topology
     * \param chunkBytes pipelining chunk (0: none) \param channels rings / trees
     * \param collective name \param algorithm name \param bytes the size
     * \return the result
     * \throws FabricConfigError for bad names or sizes
     */
    CollectiveResult RunCollectiveAlone(const FabricTopology& topology,
                                        uint64_t chunkBytes,
                                        uint32_t channels,
                                        const std::string& collective,
                                        const std::string& algorithm,
                                        uint64_t bytes) const;

    /**
     * The work RunCollectiveAlone would do at each of \p sizes, estimated
     * before any runs, so that a sweep can be refused or announced as a
     * whole (each run checks only itself). Builds each size's schedule
     * (refused as MakeSchedule refuses it) and installs the backend once for
     * its estimate; calls Simulator::Destroy.
     * \param topology the topology
     * \param chunkBytes pipelining chunk (0: none) \param channels channels
     * \param collective name \param algorithm name \param sizes the sizes
     * \return the work of each size, in the order of \p sizes
     * \throws FabricConfigError for bad names or sizes
     */
    std::vector<CollectiveWork> EstimateCollectives(const FabricTopology& topology,
                                                    uint64_t chunkBytes,
                                                    uint32_t channels,
                                                    const std::string& collective,
                                                    const std::string& algorithm,
                                                    const std::vector<uint64_t>& sizes) const;

    /**
     * The work of running each of \p sizes' schedules alone, as
     * EstimateCollectives estimates it, for schedules a caller builds (BFB,
     * say). Installs the backend once; calls Simulator::Destroy.
     * \param topology the topology \param sizes the sizes
     * \param schedule the schedule of a size
     * \return the work of each size, in the order of \p sizes
     */
    std::vector<CollectiveWork> EstimateSchedules(
        const FabricTopology& topology,
        const std::vector<uint64_t>& sizes,
        const std::function<CollectiveSchedule(uint64_t)>& schedule) const;

    /**
     * Run one schedule alone, as RunCollectiveAlone does (e.g. one imported
     * from MSCCL XML).
     * \param topology the topology \param schedule the schedule (its
     *        communicator names the topology's GPUs)
     * \return the result
     */
    CollectiveResult RunScheduleAlone(const FabricTopology& topology,
                                      const CollectiveSchedule& schedule) const;

  private:
    /// \return a CollectiveHelper on \p installed, set up as RunCollectiveAlone's
    static CollectiveHelper CollectivesOn(const InstalledTransport& installed,
                                          const FabricTopology& topology,
                                          uint64_t chunkBytes,
                                          uint32_t channels);
    /// Installs the backend, lets \p install start the run, simulates and tears down.
    CollectiveResult RunAlone(
        const FabricTopology& topology,
        const std::function<Ptr<CollectiveRun>(const CollectiveHelper&)>& install) const;

    std::string m_backend;             //!< "packet" or "flow" (checked by Install)
    std::string m_parameter;           //!< what gave m_backend
    std::string m_partition{"domain"}; //!< SetPartition
    FabricHelper m_fabric;             //!< installs "packet"
    FlowHelper m_flow;                 //!< installs "flow"
};

} // namespace ns3

#endif // GPU_FABRIC_TRANSPORT_HELPER_H
