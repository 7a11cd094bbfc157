/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_TOPOLOGY_BUILDERS_H
#define GPU_FABRIC_TOPOLOGY_BUILDERS_H

#include "fabric-topology.h"

#include "ns3/hb-domain-preset.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Parameters shared by the cluster builders.
 */
struct ClusterParams
{
    uint32_t gpus{16};                                        //!< N
    HbDomainPreset platform{HbDomainPreset::Get("dgx-h100")}; //!< K, rates
    uint32_t radix{64};                                       //!< ports per network switch
    int64_t linkDelayNs{500};                                 //!< per network cable
    uint64_t fabricRateBps{0}; //!< network link rate; 0: the platform's NIC rate
    /// Leaf oversubscription (host ports : uplinks) of the fat-tree builders; 1 = full bisection.
    double oversubscription{1.0};

    /// Throws FabricConfigError naming the bad field.
    void Validate() const;
    /// \return the network link rate in bits per second
    uint64_t NetworkRate() const;
};

/**
 * \ingroup gpu-fabric
 * \brief Add N GPUs in HB domains of K, each domain with its NVSwitch
 * planes (none when K = 1); GPU rank g sits in domain g / K at local index
 * (rail) g % K.
 * \param topo the topology
 * \param gpus N (a multiple of K)
 * \param platform the platform preset
 * \return the GPU vertices in rank order
 */
std::vector<uint32_t> AddHbDomains(FabricTopology& topo,
                                   uint32_t gpus,
                                   const HbDomainPreset& platform);

/**
 * \ingroup gpu-fabric
 * \brief Add a full-bisection folded Clos of radix-k switches over the given
 * hosts, with the fewest tiers t whose capacity k (k/2)^(t-1) covers them:
 * (2t-1) n / k switches when the hosts fill the tiers exactly. Hosts attach
 * in the given order, k/2 per leaf (k per switch when t = 1).
 * \param topo the topology
 * \param hosts host vertices (GPUs)
 * \param radix k (even, >= 2)
 * \param rateBps rate of every link
 * \param delayNs delay of every link
 * \param leafRole role label of the first tier ("leaf" or "rail")
 * With oversubscription o > 1, each leaf has k o / (1 + o) host ports and
 * k / (1 + o) uplinks (both must be integers), and the leaves' uplinks are
 * joined by a full-bisection Clos above them.
 * \param chassis chassis of the single switch when t = 1 (-1: new)
 * \param oversubscription leaf host ports : uplinks (>= 1)
 * \param tierOffset added to the tiers of the switches created here
 * \return the number of switch tiers
 */
uint32_t AddClos(FabricTopology& topo,
                 const std::vector<uint32_t>& hosts,
                 uint32_t radix,
                 uint64_t rateBps,
                 int64_t delayNs,
                 const std::string& leafRole,
                 int64_t chassis = -1,
                 double oversubscription = 1.0,
                 uint32_t tierOffset = 0);

/**
 * \ingroup gpu-fabric
 * \brief Classic fat-tree: one full-bisection Clos over all GPUs, leaves
 * filled server by server, radix/2 GPUs per leaf, so leaves are not
 * rail-aligned; a server stays under one leaf when radix/2 is a multiple of
 * K (else one straddles two leaves, e.g. K = 8 at radix 24).
 * \param p parameters \return the topology
 */
FabricTopology BuildFatTree(const ClusterParams& p);

/**
 * \ingroup gpu-fabric
 * \brief Rail-optimized fat-tree: leaves are rail switches (each holds GPUs
 * of one rail from several domains); the upper tiers join all rails into one
 * full-bisection Clos. Leaves are filled in rail-major order: a rail smaller
 * than a leaf's radix/2 host ports shares the leaf with the next rail(s),
 * whose cross-rail traffic then turns at the leaf.
 * \param p parameters \return the topology
 */
FabricTopology BuildRailOptimized(const ClusterParams& p);

/**
 * \ingroup gpu-fabric
 * \brief Rail-only: one full-bisection network per rail and no spine;
 * cross-rail traffic is relayed through the sender's HB domain. A rail that
 * fits one switch uses one; several such rails share a switch chassis when
 * the radix allows (logically separate, so no traffic crosses rails there).
 * \param p parameters \return the topology
 */
FabricTopology BuildRailOnly(const ClusterParams& p);

class DirectConnectGraph;

/**
 * \ingroup gpu-fabric
 * \brief Direct-connect: hosts wired by a directed d-regular graph, no
 * switches; every arc is a one-way link of rate nodeBandwidth / d, and hosts
 * relay traffic for multi-hop paths (shortest paths, ECMP).
 *
 * With an HB domain size K > 1 (p.platform), each graph node is an HB domain
 * of K GPUs behind NVSwitch: the out-arcs of a node leave from its GPUs in
 * turn (arc i of node u from GPU i mod K), and in-arcs arrive likewise, so
 * the node's bandwidth is spread over its GPUs. Self-loops (generalized
 * Kautz graphs) count in d but get no link. p.gpus and p.radix are ignored;
 * arcToCable in the result maps arc ids to cable ids (-1 for a self-loop).
 * \param graph the graph (strongly connected)
 * \param nodeBandwidthBps bandwidth of one node, split evenly over its d arcs
 * \param p platform (K, NVLink) and link delay
 * \return the topology
 */
FabricTopology BuildDirectConnect(const DirectConnectGraph& graph,
                                  uint64_t nodeBandwidthBps,
                                  const ClusterParams& p);

} // namespace ns3

#endif // GPU_FABRIC_TOPOLOGY_BUILDERS_H
