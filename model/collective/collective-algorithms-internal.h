/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_COLLECTIVE_ALGORITHMS_INTERNAL_H
#define GPU_FABRIC_COLLECTIVE_ALGORITHMS_INTERNAL_H

// The schedule generators' size estimates, for the module's own sources and
// tests only: not installed (CMakeLists.txt installs no *-internal.h) and
// included by a relative path. No public header includes it.

#include "collective-algorithms.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief The size of a schedule, computed in closed form before it is built:
 * every generator checks it against the memory budget (FabricRequireMemory)
 * before it allocates anything that grows with it.
 * Doubles: the counts of a hostile request may exceed 2^64.
 */
struct ScheduleSizeEstimate
{
    uint64_t depth{1}; //!< pipelining chunks per piece
    double chunks{0};  //!< chunks of the schedule (exact)
    double ops{0};     //!< operations of all ranks together (exact: TotalOps())
    double bytes{0};   //!< the memory estimate of chunks and operations, bytes
};

/**
 * \ingroup gpu-fabric
 * \brief The size of the schedule MakeSchedule(\p request) builds, without
 * building it.
 * \param request a request MakeSchedule accepts (its names, ranks, channels
 *        and domain size are checked as MakeSchedule checks them)
 * \return depth, chunks, operations and their memory estimate
 * \throws FabricConfigError for what MakeSchedule refuses before its memory check
 */
ScheduleSizeEstimate EstimateScheduleSize(const ScheduleRequest& request);

} // namespace ns3

#endif // GPU_FABRIC_COLLECTIVE_ALGORITHMS_INTERNAL_H
