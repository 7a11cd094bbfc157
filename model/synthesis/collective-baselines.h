/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_COLLECTIVE_BASELINES_H
#define GPU_FABRIC_COLLECTIVE_BASELINES_H

#include "bfb-schedule.h"

#include <cstdint>
#include <string>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief (T_L, T_B) of a baseline collective in the alpha-beta model.
 *
 * T_L in steps (each costs alpha), T_B in units of M/B (M message bytes, B
 * per-host bandwidth split over the host's d ports).
 */
struct BaselineCost
{
    std::string name;  //!< e.g. "ShiftedRing"
    uint32_t steps{0}; //!< T_L
    Fraction tb;       //!< T_B in units of M/B
};

/**
 * \brief ShiftedRing allreduce: d edge-disjoint rings, one per port; each ring
 * runs ring reduce-scatter + allgather on M/d bytes: 2(N-1) steps, T_B = 2(N-1)/N.
 */
BaselineCost ShiftedRingAllReduce(uint32_t nodes, uint32_t degree);

/// \brief ShiftedRing allgather: N-1 steps, T_B = (N-1)/N.
BaselineCost ShiftedRingAllGather(uint32_t nodes, uint32_t degree);

/**
 * \brief Double binary tree allreduce (NCCL style), pipelined.
 *
 * Model: two complementary binary trees each carry M/2; reduce up and broadcast
 * down run pipelined on the two directions of each tree cable. A host has four
 * tree cables (inner node of one tree, leaf of the other): with d >= 4 each
 * has its own port, the busiest arc carries M/2 at rate B/d and T_B = d/2
 * (units of M/B); with d = 3 two share a port, which carries M: T_B = d.
 * Either is at least the allreduce bound 2(N-1)/N. Latency is the depth of
 * both passes: T_L = 2 ceil(log2 N) steps.
 */
BaselineCost DoubleBinaryTreeAllReduce(uint32_t nodes, uint32_t degree);

/**
 * \brief alpha * steps + tb * (bytes * 8 / bandwidthBps)
 * \param steps T_L
 * \param tb T_B in units of M/B
 * \param alphaSeconds per-step latency
 * \param bytes message size M
 * \param bandwidthBps per-host bandwidth B in bits per second
 * \return seconds
 */
double AlphaBetaTime(uint32_t steps,
                     const Fraction& tb,
                     double alphaSeconds,
                     double bytes,
                     double bandwidthBps);

} // namespace ns3

#endif // GPU_FABRIC_COLLECTIVE_BASELINES_H
