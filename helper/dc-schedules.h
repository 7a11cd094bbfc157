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
 *   host, member i on host i (the data-parallel groups of a job whose HB
 *   domains are the hosts, or every GPU with one per host): BFB on the graph
 *   (BfbAllReduce, BfbAllGather, BfbReduceScatter, cut into
 *   BfbAutoChunksPerShard(s, 8) chunks per shard); each is synthesized once
 *   and kept;
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

    /// \return Make as a ProgramRunner::ScheduleSource (sharing this object's BFB cache)
    ProgramRunner::ScheduleSource Source();

  private:
    /// \return the BFB schedule of \p kind on the graph (synthesized once)
    const BfbSchedule& Bfb(SynthCollective kind);

    /// What the copies Source() hands out share.
    struct State
    {
        DirectConnectGraph graph;                   //!< the graph
        uint32_t gpusPerNode{1};                    //!< K
        std::map<SynthCollective, BfbSchedule> bfb; //!< synthesized so far
    };

    std::shared_ptr<State> m_state; //!< shared with Source()'s copies
};

} // namespace ns3

#endif // GPU_FABRIC_DC_SCHEDULES_H
