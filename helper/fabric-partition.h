/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_PARTITION_H
#define GPU_FABRIC_FABRIC_PARTITION_H

#include "ns3/fabric-topology.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Which MPI rank simulates each vertex of a fabric (ns-3's system id
 * of its node), and the lookahead that leaves.
 *
 * A distributed run cuts the cables whose ends are on different ranks; each
 * rank can run ahead of the others by the least propagation delay of those
 * cables (the lookahead), so the partition that cuts only long cables runs
 * in the largest steps. A cut cable of zero delay gives no lookahead at all
 * and is refused.
 */
struct FabricPartition
{
    uint32_t ranks{1};                    //!< MPI ranks (system ids 0..ranks-1)
    std::vector<uint32_t> rankOf;         //!< per vertex: its rank
    std::vector<uint32_t> verticesOnRank; //!< per rank: how many vertices
    std::vector<uint32_t> gpusOnRank;     //!< per rank: how many GPUs
    uint32_t cutCables{0};                //!< cables whose ends are on different ranks
    Time lookahead{Time::Max()};          //!< least delay of a cut cable (Max: none cut)

    /// \return one line: ranks, vertices and GPUs per rank, cut cables, lookahead
    std::string ToString() const;
};

/**
 * \ingroup gpu-fabric
 * \brief Partitions a FabricTopology over MPI ranks.
 *
 * Policies (Make's spec):
 * - "domain": whole HB domains (their GPUs and NVSwitches) per rank, in
 *   contiguous blocks of domains; a topology without domains splits its GPUs
 *   in contiguous blocks of ranks. NVLink traffic then never crosses ranks.
 * - "domain:B": the same in B blocks per rank, block k of ranks x B on rank
 *   k % ranks ("domain:1" is "domain"). A job whose pipeline stages are
 *   contiguous stretches of domains keeps every rank busy in every phase
 *   with B = its stages.
 * - "pipeline:P": "domain:B" for a job of P pipeline stages, B = min(P,
 *   domains per rank) ("domain" where that is 0 or 1; GPUs count where there
 *   are no domains), so that every stage is spread over every rank.
 * - "pod": whole pods of a fat-tree per rank (a pod: what stays connected
 *   once the top tier is taken away), in contiguous blocks; needs at least as
 *   many pods as ranks.
 * - "file:PATH": a JSON object naming vertices (FabricVertexNames: "gpu-3",
 *   "leaf-0", ...) with their rank, e.g. {"gpu-0": 0, "leaf-1": 1}.
 *
 * A vertex a policy does not place (switches, vertices a file leaves out)
 * goes to the rank most of its cables lead to (ties: the rank with fewest
 * vertices, then the lowest), tier by tier upward, so a leaf follows its
 * GPUs and a spine the pods it serves. Refused, naming the parameter: zero
 * ranks, more ranks than vertices, a rank left empty, a file naming an
 * unknown vertex or a rank out of range, a cut cable of zero delay.
 */
class FabricPartitioner
{
  public:
    /**
     * \param topo the fabric
     * \param ranks MPI ranks (1: everything on rank 0)
     * \param spec "domain", "domain:B", "pipeline:P", "pod" or "file:PATH"
     * \return the partition
     */
    static FabricPartition Make(const FabricTopology& topo,
                                uint32_t ranks,
                                const std::string& spec);

    /**
     * Complete and check a partial assignment.
     * \param topo the fabric
     * \param ranks MPI ranks
     * \param fixed per vertex: its rank, or -1 to place it by its cables
     * \param what the policy, for messages
     * \return the partition
     */
    static FabricPartition Complete(const FabricTopology& topo,
                                    uint32_t ranks,
                                    std::vector<int64_t> fixed,
                                    const std::string& what);
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_PARTITION_H
