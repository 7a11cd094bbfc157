/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_DC_SCHEDULES_H
#define GPU_FABRIC_DC_SCHEDULES_H

#include "ns3/bfb-schedule.h"
#include "ns3/collective-schedule.h"
#include "ns3/direct-connect-graph.h"
#include "ns3/program-runner.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief The collectives of a direct-connect fabric's own, for the comms
 *        they apply to: what the training programs and collective-bench run
 *        on --topology=direct-connect.
 *
 * The fabric is BuildDirectConnect's: K GPUs per graph host, GPU r on host
 * r / K.
 * - allreduce, allgather, reducescatter on a communicator of one GPU per
 *   host, its members' hosts in increasing order (the data-parallel groups
 *   of a job whose HB domains are the hosts, or every GPU with one per
 *   host): BFB (BfbAllReduce, BfbAllGather, BfbReduceScatter, cut into
 *   BfbAutoChunksPerShard(s, 8) chunks per shard) on the graph the members'
 *   hosts induce (their arcs among themselves; the whole graph when every
 *   host takes part), when that graph is strongly connected: a pipeline
 *   stage's DP group on a subcube of a hypercube, say. Each is synthesized
 *   once per host set and kept;
 * - alltoall on every GPU in rank order: DcShortestPathAllToAll;
 * - anything else (a tensor-parallel group inside a host, a sendrecv, a
 *   subset of the hosts): nothing, and the comm's own algorithm runs over the
 *   fabric's shortest-path routing.
 *
 * \code
 *   DirectConnectSchedules dc(topologies.GetGraph(), topologies.GetGpusPerNode());
 *   Ptr<ProgramRunner> runner = RunProgram(program, t.transport, dc.Source());
 * \endcode
 */
class DirectConnectSchedules
{
  public:
    /// Chunks per shard of a BFB schedule at most (BfbAutoChunksPerShard's cap).
    static constexpr uint32_t kMaxChunksPerShard = 8;

    /**
     * \param graph the fabric's graph
     * \param gpusPerNode K, GPUs per graph host (>= 1)
     */
    DirectConnectSchedules(DirectConnectGraph graph, uint32_t gpusPerNode);

    /**
     * \param collective allreduce, allgather, reducescatter, alltoall, ...
     * \param members the communicator, global ranks
     * \return the algorithm Make would use ("bfb", "dc-shortest-path"), or ""
     */
    std::string AlgorithmFor(const std::string& collective,
                             const std::vector<uint32_t>& members) const;

    /**
     * \param comm a comm of a program on the fabric
     * \return its direct-connect schedule (communicator comm.members), or
     *         nothing when none applies
     */
    std::optional<CollectiveSchedule> Make(const ProgramComm& comm);

    /**
     * \param collective allreduce, allgather, reducescatter, ...
     * \param members the communicator, global ranks
     * \return the BFB schedule Make cuts into chunks for them (synthesized
     *         once, kept by this object), or null where BFB does not apply
     */
    const BfbSchedule* GetBfb(const std::string& collective, const std::vector<uint32_t>& members);

    /// \return Make as a ProgramRunner::ScheduleSource (sharing this object's BFB cache)
    ProgramRunner::ScheduleSource Source();

  private:
    /**
     * \param members a communicator
     * \return the hosts of its members, when they are distinct and in
     *         increasing order and induce a strongly connected graph; else
     *         nothing
     */
    std::optional<std::vector<uint32_t>> BfbHosts(const std::vector<uint32_t>& members) const;

    /// \return the graph \p hosts induce, host i as node i
    DirectConnectGraph Induced(const std::vector<uint32_t>& hosts) const;

    /// \return the BFB schedule of \p kind on the graph \p hosts induce (synthesized once)
    const BfbSchedule& Bfb(SynthCollective kind, const std::vector<uint32_t>& hosts);

    /// What the copies Source() hands out share.
    struct State
    {
        DirectConnectGraph graph; //!< the graph
        uint32_t gpusPerNode{1};  //!< K
        /// synthesized so far, by collective and host set
        std::map<std::pair<SynthCollective, std::vector<uint32_t>>, BfbSchedule> bfb;
    };

    std::shared_ptr<State> m_state; //!< shared with Source()'s copies
};

} // namespace ns3

#endif // GPU_FABRIC_DC_SCHEDULES_H
