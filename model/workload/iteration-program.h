/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_ITERATION_PROGRAM_H
#define GPU_FABRIC_ITERATION_PROGRAM_H

#include "program-runner.h"
#include "traffic-matrix.h"

#include "ns3/ptr.h"
#include "ns3/transport.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief How a TrainingIteration is turned into per-rank programs.
 */
struct IterationProgramOptions
{
    /**
     * Granularity of the TP AllReduces (and EP AllToAlls):
     * - "layer" (default): every block's compute is cut into pieces with each
     *   of the block's M_cc / 4 TP AllReduces per pass after its piece (2 per
     *   block and pass for GPT: after attention and after the MLP, as
     *   Megatron-LM), and an MoE block's expert FFN piece between its dispatch
     *   and combine AllToAlls;
     * - "micro-batch": one compute phase per pass of a micro-batch, then one
     *   TP AllReduce of all that pass's bytes and one EP AllToAll of all its
     *   tokens (same bytes, far fewer messages and events: for speed).
     */
    std::string tpGranularity{"layer"};
    /// Start the DP gradient AllReduce during the last backward pass, bucket
    /// by bucket as the blocks' backward passes finish (PyTorch DDP, Megatron
    /// overlap-grad-reduce); false: one AllReduce after the last backward.
    bool overlapDp{false};
    /// Gradient buckets per stage when overlapDp (0: one per block); the
    /// buckets of a rank run one after the other (one NCCL stream).
    uint32_t dpBuckets{0};
    /// Pipelining chunk of every communication (0: one chunk, the generators' default).
    uint64_t chunkBytes{0};

    /// Throws FabricConfigError naming the bad field.
    void Validate() const;
};

/**
 * \ingroup gpu-fabric
 * \brief What one comm of an iteration program is (for traces and tests).
 */
struct IterationCommInfo
{
    ParallelDim dim{ParallelDim::TP};              //!< parallel dimension
    IterationPhase phase{IterationPhase::Forward}; //!< forward, backward or gradient
    uint32_t call{0};       //!< index into TrainingIteration::Collectives() it belongs to
    uint32_t stage{0};      //!< pipeline stage (PP: the sender's)
    uint32_t microBatch{0}; //!< micro-batch (kNoRank for gradients)
    uint32_t layer{0};      //!< block index in the model (kNoRank when aggregated or none)
};

/**
 * \ingroup gpu-fabric
 * \brief One 1F1B step in a rank's program: the tasks of one pass of one
 *        micro-batch, first and last (inclusive, program order).
 */
struct IterationStepTasks
{
    PipelineStep step;     //!< forward or backward, which micro-batch
    uint32_t firstTask{0}; //!< first task of the pass (a PP receive when there is one)
    uint32_t lastTask{0};  //!< last task of the pass's chain (before a PP send)
};

/**
 * \ingroup gpu-fabric
 * \brief A training iteration as a ParallelProgram, with what each comm is.
 *
 * Per rank (stage s, L = l / PP blocks, a = M_cc / 4 TP AllReduces per block
 * and pass when TP > 1), the tasks follow TrainingIteration::OneFOneBOrder(s)
 * as one chain (each task waits for the one before it):
 * - forward pass of micro-batch i: (s > 0) wait for the activations of stage
 *   s-1 (a "sendrecv" comm whose receive is posted at the start of the
 *   iteration, so the sender never waits for the receiver); then per block in
 *   order max(a, 1) compute pieces (max(a, 2) for an MoE block with EP > 1)
 *   of equal length (the block's BlockForwardFlopsPerToken x tokens / TP /
 *   effective FLOP/s, split evenly), piece k followed by TP AllReduce k (k < a);
 *   an MoE block's last piece sits between its dispatch and combine AllToAlls;
 *   the last stage ends the pass with the output layer's compute; then (s <
 *   PP-1) send the activations to stage s+1 (not in the chain: the rank
 *   goes on computing while they travel);
 * - backward pass: the same in reverse block order with 2x the compute
 *   (the output layer first), waiting for the gradient from stage s+1 and
 *   sending its own to stage s-1;
 * - after the last backward: the DP AllReduce of the stage's dense gradients
 *   over the DP group, and of the expert gradients over the expert-DP group
 *   (MoE), with the TrainingIteration's algorithms; or, with overlapDp, the
 *   dense gradients in buckets issued during the last backward pass.
 * Compute per pass adds up to ForwardSeconds(s) / BackwardSeconds(s); every
 * comm's collective, algorithm, communicator and size come from the
 * iteration's CollectiveCall, so the program's bytes are the traffic matrix's
 * (exactly at "layer" granularity without buckets; to rounding otherwise).
 * Deterministic: comms are numbered in rank and program order.
 */
struct IterationProgram
{
    ParallelProgram program;                            //!< the per-rank programs
    std::vector<IterationCommInfo> info;                //!< per comm of program
    std::vector<std::vector<IterationStepTasks>> steps; //!< per rank, in program order
};

/**
 * \ingroup gpu-fabric
 * \brief Build the programs of one training iteration (see IterationProgram).
 * \param iteration the iteration
 * \param options granularity, DP overlap, chunking
 * \return the program (validated)
 * \throws FabricConfigError for bad options
 */
IterationProgram BuildIterationProgram(const TrainingIteration& iteration,
                                       const IterationProgramOptions& options = {});

/**
 * \ingroup gpu-fabric
 * \brief Start a program: sets up a ProgramRunner over \p transport and
 *        schedules its start at the current simulation time (the caller runs
 *        the simulator).
 * \param program the program \param transport the message layer
 * \param source a fabric's own schedules (ProgramRunner::SetScheduleSource)
 * \return the runner
 */
Ptr<ProgramRunner> StartProgram(const ParallelProgram& program,
                                Ptr<Transport> transport,
                                const ProgramRunner::ScheduleSource& source = {});

/**
 * \ingroup gpu-fabric
 * \brief Run a program to completion: StartProgram, then Simulator::Run(), then
 * ProgramRunner::GatherResults (a distributed run: the whole program on rank 0).
 * \param program the program \param transport the message layer
 * \param source a fabric's own schedules (ProgramRunner::SetScheduleSource)
 * \return the runner (check IsComplete(); GetFinishTime() is absolute time)
 */
Ptr<ProgramRunner> RunProgram(const ParallelProgram& program,
                              Ptr<Transport> transport,
                              const ProgramRunner::ScheduleSource& source = {});

} // namespace ns3

#endif // GPU_FABRIC_ITERATION_PROGRAM_H
