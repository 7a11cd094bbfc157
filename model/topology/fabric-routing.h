/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_ROUTING_H
#define GPU_FABRIC_FABRIC_ROUTING_H

#include "fabric-routing-table.h"
#include "fabric-topology.h"

#include <set>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Forwarding tables of every vertex of a topology.
 *
 * Shortest paths (hop count) with every equal-cost next hop kept for ECMP.
 * GPUs are endpoints only, unless the topology allows GPU transit
 * (direct-connect). Traffic between GPUs of one HB domain always stays on
 * the domain's NVLink/NVSwitch (a path through a shared leaf switch can tie
 * with it in hops but is far slower).  With railRelay (rail-only), a destination that a GPU
 * cannot reach without crossing rails is reached through the sender's HB
 * domain: NVLink to the GPU of the same domain on the destination's rail,
 * which relays it over its rail.
 * \param topo the topology
 * \return one table per vertex, indexed by vertex
 */
std::vector<FabricRoutingTable> ComputeRoutingTables(const FabricTopology& topo);

/**
 * \ingroup gpu-fabric
 * \brief Refuse, before anything is allocated, a topology whose routing
 * tables cannot fit in memory: every vertex has a 2-byte entry per GPU (at
 * 4194304 GPUs, tens of TB). ComputeRoutingTables checks it; an installer
 * calls it before building nodes and devices.
 * \param topo the topology
 * \throws FabricConfigError naming gpus and the estimate (FabricRequireMemory)
 */
void RequireRoutingTablesFit(const FabricTopology& topo);

/**
 * \ingroup gpu-fabric
 * \brief Failed elements of a topology, as routing sees them once a failure
 * has been detected.
 */
struct FaultState
{
    std::set<uint32_t> vertices; //!< failed vertices (switches, NVSwitch planes, GPUs)
    std::set<uint32_t> cables;   //!< failed cables (indices into FabricTopology::Cables())
    /// A GPU that lost its network path to a destination reaches it through
    /// its HB domain: NVLink to a GPU of its domain that still has a path
    /// (a healthy rail), which relays; at the far end a GPU of the
    /// destination's domain relays over NVLink. Needs GPUs that forward.
    bool hbDomainRelay{true};

    /// \return true if nothing has failed
    bool Empty() const
    {
        return vertices.empty() && cables.empty();
    }
};

/**
 * \ingroup gpu-fabric
 * \brief Forwarding tables without the failed elements: shortest paths over
 * what is left (ECMP groups shrink), and, with FaultState::hbDomainRelay,
 * relays through HB domains for GPUs whose own network path is gone.
 * With an empty FaultState the tables equal ComputeRoutingTables(topo).
 * \param topo the topology
 * \param faults the failed elements
 * \param keep per vertex: nonzero to keep its table (empty: every vertex's).
 *        What a process of a distributed run needs: its own nodes forward.
 *        Every route is computed as for all vertices, so a kept table equals
 *        the full computation's.
 * \return one table per vertex, indexed by vertex; a vertex not kept has an
 *         empty table (no route anywhere)
 */
std::vector<FabricRoutingTable> ComputeRoutingTables(const FabricTopology& topo,
                                                     const FaultState& faults,
                                                     const std::vector<char>& keep = {});

/**
 * \ingroup gpu-fabric
 * \brief ECMP salt of a vertex; FabricHelper gives it to the node so that a
 * path traced here is the path the packets take.
 * \param vertex the vertex \return the salt
 */
uint32_t VertexSalt(uint32_t vertex);

/**
 * \ingroup gpu-fabric
 * \brief The path a flow takes, vertex by vertex (source and destination
 * included); empty if it has no route or loops.
 */
std::vector<uint32_t> TracePath(const FabricTopology& topo,
                                const std::vector<FabricRoutingTable>& tables,
                                uint32_t srcRank,
                                uint32_t dstRank,
                                uint16_t flowLabel);

/// \ingroup gpu-fabric
/// Result of CheckRouting.
struct RoutingReport
{
    uint64_t pairs{0};                  //!< ordered GPU pairs checked
    uint64_t unreachable{0};            //!< pairs without a path
    uint32_t maxHops{0};                //!< longest path (links)
    double meanHops{0};                 //!< mean path length (links)
    std::vector<uint64_t> hopHistogram; //!< pairs by hop count
    std::string firstFailure;           //!< description of the first unreachable pair
};

/**
 * \ingroup gpu-fabric
 * \brief Check that every ordered GPU pair is reachable (flow label 0) and
 * collect hop counts.
 */
RoutingReport CheckRouting(const FabricTopology& topo,
                           const std::vector<FabricRoutingTable>& tables);

/**
 * \ingroup gpu-fabric
 * \brief Maximum flow, in bits per second, from a set of GPUs to another over
 * the topology's link capacities (GPUs may relay only where the topology
 * lets them). With the two halves of a cluster this is its bisection
 * bandwidth in one direction.
 * \param topo the topology
 * \param srcRanks sending GPUs
 * \param dstRanks receiving GPUs (disjoint from srcRanks)
 * \param includeNvlink count NVLink/NVSwitch paths too (default: the
 *        scale-out network only, as bisection bandwidth is usually meant)
 * \return the max flow in bits per second
 */
double MaxFlowBps(const FabricTopology& topo,
                  const std::vector<uint32_t>& srcRanks,
                  const std::vector<uint32_t>& dstRanks,
                  bool includeNvlink = false);

/// \return the path as text, e.g. "gpu0 -> nvswitch(v8) -> gpu3 -> rail(v20) -> gpu11"
std::string PathToString(const FabricTopology& topo, const std::vector<uint32_t>& path);

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_ROUTING_H
