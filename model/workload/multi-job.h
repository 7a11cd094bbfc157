/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_MULTI_JOB_H
#define GPU_FABRIC_MULTI_JOB_H

#include "program-runner.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief One job of a multi-job run: its program (ranks 0..n-1 of the job)
 * and when it starts.
 */
struct ClusterJob
{
    std::string name;        //!< for reports
    ParallelProgram program; //!< the job's own program
    double startSeconds{0};  //!< start time (simulated seconds)
};

/**
 * \ingroup gpu-fabric
 * \brief Where jobs run: for each job, the GPU of each of its ranks.
 *
 * Policies (\p policy):
 * - "packed": jobs in order on consecutive GPUs, so a job fills whole HB
 *   domains before it starts another;
 * - "fragmented": a fraction \p busyFraction of every domain is taken by
 *   other work (its first GPUs), and jobs are packed on the rest, so a job
 *   of K GPUs spans several domains;
 * - "random": the GPUs of all jobs drawn at random (seeded by \p seed)
 *   from all GPUs;
 * - "rail-aligned": rank r of a job on rail r mod K, in the first domain
 *   with that rail free, so that a job's ranks of one rail share a rail
 *   switch and its TP groups need no cross-rail forwarding.
 * \param jobGpus GPUs of each job
 * \param totalGpus GPUs of the cluster \param gpusPerDomain K
 * \param policy a policy above \param busyFraction for "fragmented", in [0, 1)
 * \param seed for "random"
 * \return per job, per rank, its GPU (disjoint across jobs)
 * \throw FabricConfigError for an unknown policy or jobs that do not fit
 */
std::vector<std::vector<uint32_t>> PlaceJobs(const std::vector<uint32_t>& jobGpus,
                                             uint32_t totalGpus,
                                             uint32_t gpusPerDomain,
                                             const std::string& policy,
                                             double busyFraction = 0,
                                             uint64_t seed = 1);

/// \return the names PlaceJobs takes
std::vector<std::string> JobPlacementNames();

/**
 * \ingroup gpu-fabric
 * \brief Several jobs as one program over the cluster's GPUs: each job's
 * ranks renamed to its GPUs, each rank's first tasks held until the job's
 * start time.
 * \param jobs the jobs \param placement per job, per rank, its GPU
 *        (PlaceJobs; a GPU in at most one job)
 * \param totalGpus GPUs of the cluster
 * \return the combined program (GPUs of no job have no tasks)
 * \throw FabricConfigError for overlapping or out-of-range placements
 */
ParallelProgram CombineJobs(const std::vector<ClusterJob>& jobs,
                            const std::vector<std::vector<uint32_t>>& placement,
                            uint32_t totalGpus);

/**
 * \ingroup gpu-fabric
 * \brief Each job's completion time in a combined run: the last finish of
 * its GPUs, minus its start.
 * \param runner a finished run of CombineJobs(jobs, placement, ...)
 * \param jobs the jobs \param placement the placement
 * \return per job, seconds from its start to its end
 */
std::vector<double> JobTimes(const ProgramRunner& runner,
                             const std::vector<ClusterJob>& jobs,
                             const std::vector<std::vector<uint32_t>>& placement);

} // namespace ns3

#endif // GPU_FABRIC_MULTI_JOB_H
