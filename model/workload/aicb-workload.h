/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_AICB_WORKLOAD_H
#define GPU_FABRIC_AICB_WORKLOAD_H

#include "program-runner.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief How ReadAicbWorkload maps an AICB workload file onto the module.
 */
struct AicbReplayOptions
{
    /// Algorithm of every collective that has one by this name
    /// (AlgorithmsFor); "auto": ring, and direct for all-to-all.
    std::string algorithm{"auto"};
    /// HB-domain size K given to hierarchical and pxn (0: none).
    uint32_t domainSize{0};
    /// Pipelining chunk of every collective (0: none).
    uint64_t chunkBytes{0};
    /// Number of GPUs (ranks). 0: the header's all_gpus, which is then
    /// required; otherwise it must equal all_gpus when the header has it
    /// (files of older AICB versions and MICRO files have none: SimAI takes
    /// the count from its command line).
    uint32_t gpus{0};
    /// Seconds per unit of the compute and update times. SimAI's workload
    /// layer counts them in ticks of its ns-3 front end, nanoseconds.
    double timeUnitSeconds{1e-9};
    /// Model chunks per pipeline stage (interleaved 1F1B when > 1); 0: the
    /// header's vpp. 1 by default because AICB writes its layer count as
    /// vpp, not an interleaving.
    uint32_t virtualStages{1};
};

/**
 * \ingroup gpu-fabric
 * \brief An AICB workload file turned into a ParallelProgram.
 */
struct AicbReplay
{
    ParallelProgram program;  //!< every rank's tasks
    std::string policy;       //!< first header token
    uint32_t layers{0};       //!< layer lines read
    uint32_t tp{1};           //!< model_parallel_NPU_group
    uint32_t ep{1};           //!< ep (expert-parallel group size)
    uint32_t pp{1};           //!< pp
    uint32_t dp{1};           //!< all_gpus / (tp * pp)
    uint32_t broadcasts{0};   //!< BROADCAST columns, not replayed (as in SimAI)
    uint32_t microBatches{1}; //!< pp > 1: ga, the micro-batches of the pipeline
    /// pp > 1: layer lines of one micro-batch (the file's last
    /// microBatches x microBatchLayers lines; the ones before run once)
    uint32_t microBatchLayers{0};
    uint64_t ppCommBytes{0};      //!< pp > 1: pp_comm, bytes of one pipeline transfer
    uint64_t pipelineMessages{0}; //!< pipeline transfers (activations and gradients)
    uint64_t pipelineBytes{0};    //!< their bytes
    uint32_t virtualStages{1};    //!< model chunks per stage (> 1: interleaved 1F1B)
    uint32_t recomputedLayers{0}; //!< layer forwards each rank runs again in its backward
    std::vector<double>
        computeSeconds; //!< per rank: its forward, input- and weight-gradient compute
    std::vector<double> recomputeSeconds; //!< per rank: of that, forward compute run again
};

/**
 * \ingroup gpu-fabric
 * \brief Read a workload file in the text format AICB writes for SimAI (and
 * ASTRA-sim reads) into a program that runs on any Transport (RunProgram),
 * so that SimAI workloads replay here unchanged.
 *
 * Format. Line 1: the parallelism policy, then "key: value" pairs:
 * model_parallel_NPU_group (TP size), ep (alias
 * expert_parallel_npu_group), pp, vpp, ga, all_gpus, pp_comm, and
 * checkpoints and checkpoint_initiates, each a count followed by that many
 * layer indices (0-based line numbers after line 2). Line 2: the number
 * of layers. Then one line per layer of 12 whitespace-separated fields:
 * name, a reserved integer (-1), forward compute time, forward comm type,
 * forward comm size, input-gradient compute time, comm type, size,
 * weight-gradient compute time, comm type, size, update time. Blank lines
 * are skipped.
 *
 * Comm types: NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL, each
 * optionally suffixed _TP, _DP, _EP or _DP_EP naming its group; without a
 * suffix forward and input-gradient comms run over the TP group,
 * weight-gradient comms over the DP group (as SimAI's workload layer
 * decodes them). BROADCAST, which SimAI parses as no communication, is not
 * replayed either (counted in AicbReplay::broadcasts). Groups, with rank =
 * (d * pp + p) * tp + t: TP, consecutive ranks; DP, ranks of the same (p,
 * t); EP, consecutive blocks of ep in a DP group; DP_EP, the ranks of a DP
 * group at the same place in their EP blocks (SimAI's MockNccl groups for
 * pp = 1). Sizes are bytes as SimAI reads them: an all-gather's is each
 * rank's contribution (the module's size, counted as nccl-tests does, is
 * that times the group size); the others' are each rank's buffer.
 *
 * Schedule (SimAI's HYBRID_TRANSFORMER and HYBRID_TRANSFORMER_FWD_IN_BCKWD):
 * every rank runs the layers in order, forward compute then the forward
 * comm, waiting for it; then in reverse order input-gradient compute, its
 * comm (waited for), weight-gradient compute and its comm, not waited for:
 * it overlaps the layers below. The update time is a delay after each comm
 * that runs. Activation recomputation (HYBRID_TRANSFORMER_FWD_IN_BCKWD, as
 * SimAI reads checkpoints): before the input-gradient compute of a layer i
 * of checkpoint_initiates, the rank runs the forward (compute, then the
 * forward comm, waited for) of layers c .. i - 1 again, c the nearest
 * checkpoint layer at or below i; c must exist, be below i and (pp > 1) lie
 * in i's pass. The iteration ends when every comm has. MICRO:
 * each line's weight-gradient comm, one after another, no compute. A comm
 * whose group is one rank or whose size is 0 is skipped (as SimAI skips it).
 *
 * Pipeline parallelism (pp > 1; SimAI itself only estimates it
 * analytically): every stage runs the file's lines, in 1F1B order
 * (PipeDream-Flush, as Megatron's non-interleaved schedule) over ga
 * micro-batches. AICB writes the lines run once (its gradient
 * all-gathers/reduce-scatters) first, then the stage's layers once per
 * micro-batch: the last ga x S lines, S the largest for which they are ga
 * copies of one sequence of names, are micro-batch lines, the others run
 * once, their forward before the first pass and their backward after the
 * last. A forward pass of micro-batch i on stage p waits for its activations
 * from stage p - 1 and sends its own to stage p + 1 when done; a backward
 * pass waits for the gradient from stage p + 1 and sends one to stage p - 1;
 * each transfer is pp_comm bytes between the ranks of the same (d, t), its
 * receive posted at the start (the sender never waits) and the sender going
 * on with its next pass while it travels. Interleaved (virtualStages v > 1,
 * ga a multiple of pp): each pass's lines are cut into v equal model
 * chunks, chunk j of stage p being virtual stage j pp + p; passes run in
 * InterleavedOneFOneBSchedule order, the last stage sending chunk j's
 * activations to stage 0's chunk j + 1 and stage 0 chunk j's gradients to
 * the last stage's chunk j - 1; 2 (pp v - 1) transfers per micro-batch and
 * (d, t).
 *
 * \param path the workload file
 * \param options collective mapping, GPU count and time unit
 * \return the program, with what was read
 * \throw FabricConfigError naming the file, line and field, the value and
 *        what is allowed, for a file that is missing or does not parse: an
 *        unknown policy or header key, a layer line without 12 fields, a
 *        non-numeric time or size, an unknown comm type or group, fewer or
 *        more layer lines than line 2 says, all_gpus not divisible by tp * pp,
 *        a DP size not divisible by ep; with pp > 1, ga 0, pp_comm 0 or
 *        missing, or layer lines that do not end with ga copies of one
 *        sequence of names; checkpoint indices beyond the layers, an
 *        initiating layer without a checkpoint below it (or in another
 *        pass); interleaving without a pipeline, a v that does not divide a
 *        micro-batch's lines or a ga that is not a multiple of pp
 */
AicbReplay ReadAicbWorkload(const std::string& path, const AicbReplayOptions& options = {});

} // namespace ns3

#endif // GPU_FABRIC_AICB_WORKLOAD_H
