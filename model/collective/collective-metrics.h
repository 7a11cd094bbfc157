/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_COLLECTIVE_METRICS_H
#define GPU_FABRIC_COLLECTIVE_METRICS_H

#include "collective-schedule.h"

#include <cstdint>
#include <string_view>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \defgroup gpu-fabric-metrics Collective metrics
 * nccl-tests' bandwidth definitions and alpha-beta predictions.
 *
 * Units: bytes, seconds, bandwidths of results in bytes per second (divide by
 * 1e9 for the GB/s nccl-tests prints, see ToGBps), link rates in bits per
 * second as everywhere in gpu-fabric.
 */

/**
 * \ingroup gpu-fabric-metrics
 * \brief nccl-tests' algorithm bandwidth: bytes / time.
 * \param bytes the collective's size (CollectiveType documents which size)
 * \param seconds completion time (> 0)
 * \return bytes per second
 */
double AlgorithmBandwidth(uint64_t bytes, double seconds);

/**
 * \ingroup gpu-fabric-metrics
 * \brief nccl-tests' bus bandwidth factor: 2(n-1)/n for AllReduce; (n-1)/n for
 *        AllGather, ReduceScatter, AllToAll; 1 for Broadcast, Reduce, SendRecv.
 * \param type the collective
 * \param ranks n >= 1
 * \return the factor
 */
double BusBandwidthFactor(CollectiveType type, uint32_t ranks);

/**
 * \ingroup gpu-fabric-metrics
 * \brief nccl-tests' bus bandwidth: AlgorithmBandwidth * BusBandwidthFactor.
 * \param type the collective \param ranks n \param bytes size \param seconds time
 * \return bytes per second
 */
double BusBandwidth(CollectiveType type, uint32_t ranks, uint64_t bytes, double seconds);

/// \param bytesPerSecond a bandwidth \return the same in GB/s (1e9 bytes/s, as nccl-tests)
inline double
ToGBps(double bytesPerSecond)
{
    return bytesPerSecond / 1e9;
}

/**
 * \ingroup gpu-fabric-metrics
 * \brief Parameters of the alpha-beta model.
 *
 * Every rank has one full-duplex port of \c linkRateBps into a non-blocking
 * fabric (an NVSwitch, a full-bisection Clos, or the ring's own links); for
 * the two-level algorithms each GPU has \c nvlinkRateBps into its HB domain
 * and \c nicRateBps into the rail network.  A message of c bytes over a link
 * of rate B takes alpha + 8c/B; messages of one connection are sent back to
 * back, so a stream of them takes alpha + 8 * (sum of bytes) / B.
 */
struct AlphaBetaParams
{
    double alpha{0};         //!< per-step (per-message) latency, seconds
    double linkRateBps{0};   //!< per-rank port rate (flat algorithms), bits/s
    double nvlinkRateBps{0}; //!< per-GPU HB-domain rate (hierarchical, pxn, direct with K > 1)
    double nicRateBps{0};    //!< per-GPU NIC rate (hierarchical, pxn, direct with K > 1)
    uint32_t domainSize{1};  //!< K, GPUs per HB domain (hierarchical, pxn, direct)
    uint64_t chunkBytes{0};  //!< pipelining chunk as given to the generator (0: none)
    uint32_t channels{1};    //!< channels as given to the generator (they share the ports)
};

/**
 * \ingroup gpu-fabric-metrics
 * \brief Time of a pipeline of \p steps steps, each moving \p stepBytes over a
 *        link in chunks of \p chunkBytes.
 *
 * Step k+1 can start a chunk once that chunk arrived from step k (alpha +
 * 8c/B after it started); if all steps use the same link (a ring) it must
 * also wait for the link to finish step k (8 stepBytes / B).  So steps start
 * a period tau apart, tau = alpha + 8c/B (different links) or max(alpha +
 * 8c/B, 8 stepBytes / B) (same link), and the last step ends alpha + 8
 * stepBytes / B after it started:
 *     T = (steps - 1) * tau + alpha + 8 * stepBytes / B.
 * With one chunk per step (c = stepBytes) this is steps * (alpha + 8 stepBytes / B).
 * \param steps number of steps (0 gives 0)
 * \param stepBytes bytes one link moves per step
 * \param chunkBytes bytes per message (<= stepBytes)
 * \param alpha per-message latency, seconds
 * \param rateBps link rate, bits/s
 * \param sameLink whether consecutive steps share the link
 * \return seconds
 */
double PipelineTime(uint64_t steps,
                    double stepBytes,
                    double chunkBytes,
                    double alpha,
                    double rateBps,
                    bool sameLink);

/**
 * \ingroup gpu-fabric-metrics
 * \brief Ring AllReduce: 2(n-1) steps of S/n bytes per link on the same link;
 *        unpipelined T = 2(n-1) (alpha + 8S/(nB)).  See PipelineTime.
 * \param n ranks \param bytes S \param p model parameters (linkRateBps, alpha, chunkBytes)
 * \return seconds
 */
double RingAllReduceTime(uint32_t n, uint64_t bytes, const AlphaBetaParams& p);

/**
 * \ingroup gpu-fabric-metrics
 * \brief Ring AllGather or ReduceScatter: n-1 steps of S/n bytes per link;
 *        unpipelined T = (n-1) (alpha + 8S/(nB)).
 * \param n ranks \param bytes S (output of AllGather, input of ReduceScatter)
 * \param p model parameters \return seconds
 */
double RingAllGatherTime(uint32_t n, uint64_t bytes, const AlphaBetaParams& p);

/**
 * \ingroup gpu-fabric-metrics
 * \brief Double binary tree AllReduce.  Each rank is inner node of one tree
 *        (receives 2 x S/2 going up, sends 2 x S/2 going down) and leaf of
 *        the other (sends S/2 up, receives S/2 down): its port moves 2S each
 *        way, so the pipelined bandwidth term is 8 * 2S / B.  The last chunk
 *        goes up and down the tree, 2h hops (h = tree height), each taking
 *        alpha + 8 * 2c / B since an inner node moves two chunks per hop.
 *        T = (2h - 1) (alpha + 16c/B) + alpha + 16S/B, c = chunk bytes of a
 *        tree's half; exact for many chunks, an estimate for few. Needs
 *        n >= 4 (FabricConfigError below: with 2 or 3 ranks no rank has two
 *        children and the ports move S or 1.5S).
 * \param n ranks \param bytes S \param p model parameters \return seconds
 */
double DoubleBinaryTreeAllReduceTime(uint32_t n, uint64_t bytes, const AlphaBetaParams& p);

/**
 * \ingroup gpu-fabric-metrics
 * \brief Recursive halving-doubling AllReduce with p = largest power of two
 *        <= n: log2(p) halving steps moving S/2, S/4, ..., S/p and log2(p)
 *        doubling steps moving S/p, ..., S/2, each alpha + 8 bytes / B:
 *        T = 2 log2(p) alpha + 2 (p-1)/p * 8S/B; if n > p, fold and unfold
 *        add 2 (alpha + 8S/B).  The generator runs the steps in sequence
 *        (ScheduleBuilder::EndStep), as MPI does, and a step's chunks go
 *        back to back on one connection, so chunking changes nothing.
 * \param n ranks \param bytes S \param p model parameters \return seconds
 */
double HalvingDoublingAllReduceTime(uint32_t n, uint64_t bytes, const AlphaBetaParams& p);

/**
 * \ingroup gpu-fabric-metrics
 * \brief Hierarchical AllReduce with K GPUs per domain and D = n/K domains:
 *        ring reduce-scatter in the domain (K-1 steps of S/K over NVLink),
 *        ring allreduce on the rail (2(D-1) steps of S/(KD) over the NIC),
 *        ring allgather in the domain (K-1 steps of S/K over NVLink), phases
 *        in sequence, each a PipelineTime on one link.  A domain step moves
 *        a piece's D sub-pieces as one message per pipelining chunk, so
 *        unchunked T = 2(K-1)(alpha + 8S/(K B_nv)) + 2(D-1)(alpha +
 *        8S/(K D B_nic)); with chunks the steps pipeline as in a chunked
 *        ring (messages of D chunks in the domain). A chunked run also
 *        overlaps the three phases, which this sum does not: an upper bound.
 * \param n ranks \param bytes S \param p model parameters (domainSize, nvlinkRateBps,
 *        nicRateBps) \return seconds
 */
double HierarchicalAllReduceTime(uint32_t n, uint64_t bytes, const AlphaBetaParams& p);

/**
 * \ingroup gpu-fabric-metrics
 * \brief Direct AllToAll: all messages at once, each rank's ports fully used.
 *        With K = 1 (flat): T = alpha + (n-1)/n * 8S/B (linkRateBps).  With
 *        K > 1 (HB domains on a full-bisection network), the K-1 in-domain
 *        pieces use NVLink and the n-K others the NIC, in parallel:
 *        T = alpha + max((K-1) 8S/(n B_nv), (n-K) 8S/(n B_nic)).
 * \param n ranks \param bytes S per rank \param p model parameters \return seconds
 */
double DirectAllToAllTime(uint32_t n, uint64_t bytes, const AlphaBetaParams& p);

/**
 * \ingroup gpu-fabric-metrics
 * \brief Rail-aware (PXN) AllToAll on rail-only: a GPU sends (K-1)/K of its
 *        buffer over NVLink (in-domain pieces, plus first hops of the
 *        cross-rail ones) and forwards (D-1)/D * S over its NIC (the pieces of
 *        all K GPUs of its domain bound for its rail in other domains).
 *        One chunk per piece (chunkBytes 0 or >= S/n): the NVLink step and
 *        the rail step do not overlap, T = 2 alpha + (K-1)/K * 8S/B_nv + (D-1)/D
 *        * 8S/B_nic.  Chunked: they overlap, T = 2 alpha + 8c/B_nv + max(
 *        (K-1)/K * 8S/B_nv, (D-1)/D * 8S/B_nic).  Against DirectAllToAllTime
 *        on a rail-optimized fat-tree, the unoverlapped overhead is about
 *        B_nic / B_nv, as the rail-only paper says.
 * \param n ranks \param bytes S per rank \param p model parameters \return seconds
 */
double PxnAllToAllTime(uint32_t n, uint64_t bytes, const AlphaBetaParams& p);

/**
 * \ingroup gpu-fabric-metrics
 * \brief Pipelined chain Broadcast or Reduce: n-1 hops on different links,
 *        each moving S: T = (n-2)(alpha + 8c/B) + alpha + 8S/B (PipelineTime).
 * \param n ranks \param bytes S \param p model parameters \return seconds
 */
double ChainBroadcastTime(uint32_t n, uint64_t bytes, const AlphaBetaParams& p);

/**
 * \ingroup gpu-fabric-metrics
 * \brief Pipelined binary tree Broadcast or Reduce on InOrderBinaryTree(n):
 *        a node with k children moves kS through its port. The first chunk
 *        reaches each leaf after the hops of its path, a hop from a node with
 *        k children taking alpha + 8kc/B (the root has one child); later
 *        chunks are paced by the busiest port (k = 2 from 4 ranks on):
 *        T = max over leaves of the path's hops + 8 k_max (S - c)/B. For a
 *        full tree of height h (n >= 4): alpha + 8c/B + (h-2)(alpha + 16c/B)
 *        + alpha + 16S/B; for n = 2, 3 a chain. Exact when the schedule
 *        serves the deeper subtree last (every level of a power-of-two tree),
 *        an upper estimate of the fill otherwise.
 * \param n ranks \param bytes S \param p model parameters \return seconds
 */
double TreeBroadcastTime(uint32_t n, uint64_t bytes, const AlphaBetaParams& p);

/**
 * \ingroup gpu-fabric-metrics
 * \brief SendRecv: every pair on its own link, T = alpha + 8S/B.
 * \param bytes S \param p model parameters \return seconds
 */
double SendRecvTime(uint64_t bytes, const AlphaBetaParams& p);

/**
 * \ingroup gpu-fabric-metrics
 * \brief The prediction of the factory's (collective, algorithm) pair.
 * \param collective collective name (as MakeSchedule)
 * \param algorithm algorithm name (as MakeSchedule)
 * \param ranks n
 * \param bytes size
 * \param p model parameters
 * \return seconds (FabricConfigError for unknown names or combinations)
 */
double PredictedTime(std::string_view collective,
                     std::string_view algorithm,
                     uint32_t ranks,
                     uint64_t bytes,
                     const AlphaBetaParams& p);

} // namespace ns3

#endif // GPU_FABRIC_COLLECTIVE_METRICS_H
