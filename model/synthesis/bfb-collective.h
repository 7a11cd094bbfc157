/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_BFB_COLLECTIVE_H
#define GPU_FABRIC_BFB_COLLECTIVE_H

#include "bfb-schedule.h"

#include "ns3/collective-schedule.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * \brief One whole chunk crossing one arc in one BFB step.
 */
struct BfbChunkTransfer
{
    uint32_t step;         //!< 1-based step of the BFB schedule
    SynthCollective phase; //!< ALLGATHER or REDUCE_SCATTER
    uint32_t arc;          //!< arc id in the BFB schedule's graph
    uint32_t from;         //!< sending host
    uint32_t to;           //!< receiving host
    uint32_t chunk;        //!< chunk index (see BfbChunkPlan)
};

/**
 * \ingroup gpu-fabric
 * \brief A BFB schedule realised with whole chunks: the chunk layout and the
 *        ordered list of chunk transfers that BfbToCollectiveSchedule turns
 *        into a CollectiveSchedule.
 *
 * Layout: the M bytes are split into N shards with SplitBytes(M, N) (shard v
 * belongs to host v); shard v is split into \c chunksPerShard chunks with
 * SplitBytes(shard, chunksPerShard); chunk v * chunksPerShard + k is the
 * k-th chunk of shard v.  When the schedule has several pieces per shard,
 * piece p of every shard owns a consecutive run of its chunks whose length is
 * the largest-remainder rounding of chunksPerShard * pieceWeights[p].
 */
struct BfbChunkPlan
{
    uint32_t nodes{0};                       //!< N
    uint32_t chunksPerShard{0};              //!< chunks of every shard
    std::vector<uint64_t> chunkBytes;        //!< bytes of every chunk (N * chunksPerShard)
    std::vector<BfbChunkTransfer> transfers; //!< in step order (a valid sequential program)
    /// For every step, the bytes on its busiest arc (compare with U_t * M / N).
    std::vector<uint64_t> stepMaxArcBytes;
    /// For every step, the largest |chunks on an arc - exact BFB load of that arc| over
    /// all arcs, in shards (0 when the rounding is exact).
    std::vector<Fraction> stepRoundingError;
};

/**
 * \brief The smallest chunks-per-shard that realises \p s exactly: the least
 *        common multiple of the denominators of every piece weight and every
 *        transfer's shard fraction.
 * \param s a BFB schedule (with its groups: BfbOptions::keepSchedule)
 * \return the lcm (saturates at 2^32 - 1 when larger)
 */
uint64_t BfbExactChunksPerShard(const BfbSchedule& s);

/**
 * \brief The chunks per shard a simulation cuts \p s into unless told:
 *        for a schedule with reduce-scatter steps, the least common multiple
 *        of BfbExactChunksPerShard() and every in-degree 2..d (so that a
 *        host's in-arcs can share every reduce step's chunks evenly) when it
 *        is at most \p cap; otherwise (and for an allgather)
 *        BfbExactChunksPerShard() capped at \p cap.
 * \param s a BFB schedule (with its groups) \param cap the most (>= 1)
 * \return chunks per shard, 1 .. cap
 */
uint32_t BfbAutoChunksPerShard(const BfbSchedule& s, uint32_t cap);

/**
 * \brief The alpha-beta time of \p s run on a fabric whose hosts send
 *        \p nodeBandwidthBps over s.degree arcs (B/d each):
 *        alpha T_L + T_B M / (B x 4096/4122), with alpha one hop (the link
 *        delay plus one full 4122-byte packet at B/d) and the beta term at
 *        the payload's share of a full packet. The prediction the BFB
 *        simulations are checked against.
 * \param s a BFB schedule \param bytes M
 * \param nodeBandwidthBps B, bit/s \param linkDelaySeconds per arc
 * \return seconds
 */
double BfbPredictedTime(const BfbSchedule& s,
                        double bytes,
                        double nodeBandwidthBps,
                        double linkDelaySeconds);

/**
 * \ingroup gpu-fabric
 * \brief Round a BFB schedule's fractional splits to whole chunks.
 *
 * Rounding, per (step, host) problem of BFB (the receiver's in-arcs for
 * allgather steps, the sender's out-arcs for reduce-scatter steps): the pieces
 * of the host's groups are taken in order; a piece of k chunks split with
 * fractions f_a over arcs a gives every arc floor(k f_a) chunks, and the
 * k - sum floor(k f_a) remaining chunks go one each to arcs with a
 * non-zero remainder, those whose running total lags furthest behind their
 * exact running load sum(k f_a) first (ties: larger remainder, then lower
 * arc).  So every chunk crosses exactly one arc, each arc carries floor or
 * ceil of its exact share of every piece, and the per-arc load of a
 * (step, host) stays within about one chunk of BFB's; when chunksPerShard is
 * a multiple of BfbExactChunksPerShard() every k f_a is an integer and the
 * split is exact.  Chunks are handed out in order: the arc listed first in a
 * split gets the piece's first chunks.
 *
 * Allgather steps additionally require that a sender holds every chunk it
 * sends from an earlier step (always true for BFB and its expansions).
 *
 * \param s the schedule (ALLGATHER, REDUCE_SCATTER or ALLREDUCE, with groups)
 * \param totalBytes M (nccl-tests size: the gathered buffer for allgather, the
 *        input buffer for reduce-scatter, the buffer for allreduce)
 * \param chunksPerShard chunks each shard is cut into (>= 1)
 * \return the plan
 * \throws FabricConfigError if chunksPerShard is 0, the product N * chunksPerShard
 * exceeds 2^32 - 1, the schedule has no groups (keepSchedule = false) or a
 * transfer is not realisable (a sender lacks the chunk, a self-loop is used)
 */
BfbChunkPlan PlanBfbChunks(const BfbSchedule& s, uint64_t totalBytes, uint32_t chunksPerShard);

/**
 * \ingroup gpu-fabric
 * \brief Convert a BFB schedule into a CollectiveSchedule that the executor
 *        runs and ScheduleChecker proves.
 *
 * The chunk transfers of PlanBfbChunks() are fed in step order to a
 * ScheduleBuilder, so a chunk is forwarded only after it arrived and the
 * dependencies are exactly the data's (there are no step barriers: a host
 * forwards a chunk as soon as it has it, so steps pipeline).  The reductions
 * a host receives into one chunk commute (ScheduleBuilder::
 * SetCommutingReduces), so its in-arcs bring them at once, and each host
 * sends on each arc in step order (CollectiveSchedule::
 * SetInOrderConnections): a later step's chunk whose data came early does
 * not go ahead of an earlier step's on the same arc.  Allgather
 * receives copy; reduce-scatter receives reduce; allreduce is the
 * reduce-scatter steps then the allgather steps on the same chunks.
 * Chunk src (allgather) or dst (reduce-scatter) is the shard's host; the
 * schedule's ranks are the graph's hosts 0..N-1 and its algorithm name is
 * "bfb:" followed by the graph's construction name.
 *
 * \param s the schedule
 * \param totalBytes M, as for PlanBfbChunks
 * \param chunksPerShard chunks each shard is cut into
 * \param[out] plan if not null, receives the plan the schedule was built from
 * \return the schedule (type AllGather, ReduceScatter or AllReduce)
 */
CollectiveSchedule BfbToCollectiveSchedule(const BfbSchedule& s,
                                           uint64_t totalBytes,
                                           uint32_t chunksPerShard,
                                           BfbChunkPlan* plan = nullptr);

} // namespace ns3

#endif // GPU_FABRIC_BFB_COLLECTIVE_H
