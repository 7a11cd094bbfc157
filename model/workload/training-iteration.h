/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_TRAINING_ITERATION_H
#define GPU_FABRIC_TRAINING_ITERATION_H

#include "llm-model.h"
#include "parallelism.h"

#include "ns3/collective-schedule.h"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ns3
{

/// The parallel dimension a transfer belongs to.
enum class ParallelDim : uint8_t
{
    TP = 0, //!< tensor parallel AllReduce of activations
    PP = 1, //!< pipeline send/recv of activations and their gradients
    DP = 2, //!< data parallel AllReduce of gradients (expert gradients included)
    EP = 3, //!< expert parallel AllToAll of tokens
};

/// Number of ParallelDim values.
constexpr size_t kParallelDims = 4;

/// \param dim a dimension \return "tp", "pp", "dp" or "ep"
std::string_view ParallelDimName(ParallelDim dim);

/// When in the iteration a collective runs.
enum class IterationPhase : uint8_t
{
    Forward,  //!< during the forward pass of a micro-batch
    Backward, //!< during the backward pass of a micro-batch
    Gradient, //!< once per iteration, gradient synchronisation after (or overlapped with) backward
};

/// \param phase a phase \return "forward", "backward" or "gradient"
std::string_view IterationPhaseName(IterationPhase phase);

/**
 * \ingroup gpu-fabric
 * \brief One collective of a training iteration on one communicator, issued
 *        \c count times with the same size.
 *
 * Algorithms: AllReduce "ring" or "hierarchical" (domainSize members per HB
 * domain, see HierarchicalAllReduce); AllToAll "direct" or "pxn" (domainSize as
 * for PxnAllToAll); SendRecv "pairs" (SendRecvPairs over \c pairs).
 */
struct CollectiveCall
{
    ParallelDim dim{ParallelDim::TP};                 //!< parallel dimension
    IterationPhase phase{IterationPhase::Forward};    //!< when it runs
    CollectiveType type{CollectiveType::AllReduce};   //!< the collective
    std::string algorithm;                            //!< see above
    std::vector<uint32_t> communicator;               //!< global ranks; local index = position
    uint32_t domainSize{1};                           //!< members per HB domain (domain-major)
    std::vector<std::pair<uint32_t, uint32_t>> pairs; //!< SendRecv: (src, dst) local indices
    uint64_t bytes{0}; //!< size as CollectiveType documents (per pair for SendRecv)
    uint64_t count{1}; //!< how many times per iteration
    uint32_t stage{0}; //!< pipeline stage of the communicator (kNoRank for a pipeline)
    std::string what;  //!< e.g. "tp-allreduce", "pp-activation", "dp-gradient"

    /**
     * \brief Build this call's schedule with the collective layer's generators
     *        (communicator set to the global ranks).
     * \param chunkBytes pipelining chunk (0: none) \param channels channels
     * \return the schedule
     */
    CollectiveSchedule BuildSchedule(uint64_t chunkBytes = 0, uint32_t channels = 1) const;
};

/**
 * \ingroup gpu-fabric
 * \brief Choices of how an iteration is run.
 */
struct WorkloadOptions
{
    std::string dpAlgorithm{"hierarchical"}; //!< DP AllReduce: "hierarchical" (paper) or "ring"
    std::string epAlgorithm{"pxn"}; //!< EP AllToAll: "pxn" (rail-only forwarding) or "direct"
    double gpuFlops{989e12};        //!< C, peak dense FLOP/s per GPU
    double computeEfficiency{1.0};  //!< fraction of peak reached, (0, 1]
    bool attentionFlops{false};     //!< add the attention term to the compute

    /// Throws FabricConfigError naming the bad field.
    void Validate() const;
};

/// One step of a pipeline stage's 1F1B schedule.
struct PipelineStep
{
    bool forward{true};     //!< forward (true) or backward (false) pass
    uint32_t microBatch{0}; //!< which micro-batch
    uint32_t chunk{0};      //!< interleaved: which of the stage's model chunks
};

/**
 * \ingroup gpu-fabric
 * \brief The 1F1B order of one pipeline stage (PipeDream-Flush, Megatron's
 *        non-interleaved schedule): pp - 1 - stage warm-up forwards (at most
 *        \p microBatches), then one forward and one backward in turn, then the
 *        remaining backwards.
 * \param stage the stage, below \p pp \param pp stages
 * \param microBatches micro-batches
 * \return the steps in order (2 x microBatches of them)
 */
std::vector<PipelineStep> OneFOneBSchedule(uint32_t stage, uint32_t pp, uint32_t microBatches);

/**
 * \ingroup gpu-fabric
 * \brief The interleaved 1F1B order of one pipeline stage (Megatron-LM's
 *        schedule with virtual stages): the stage holds \p chunks model
 *        chunks, chunk j of stage p being virtual stage j pp + p. Its k-th
 *        forward (of the microBatches x chunks) is of chunk (k / pp) mod
 *        chunks and micro-batch (k / (pp chunks)) pp + k mod pp; its k-th
 *        backward the same with chunk chunks - 1 - (k / pp) mod chunks.
 *        Warm-up: every forward when microBatches = pp, else
 *        min(2 (pp - 1 - stage) + (chunks - 1) pp, microBatches x chunks)
 *        forwards; then one forward and one backward in turn, then the
 *        remaining backwards. With equal passes of F + B per micro-batch
 *        and stage, the bubble is (pp - 1) (F + B) / chunks.
 * \param stage the stage, below \p pp \param pp stages (> 1)
 * \param chunks model chunks per stage (> 1)
 * \param microBatches micro-batches, a multiple of \p pp
 * \return the steps in order (2 x microBatches x chunks of them)
 */
std::vector<PipelineStep> InterleavedOneFOneBSchedule(uint32_t stage,
                                                      uint32_t pp,
                                                      uint32_t chunks,
                                                      uint32_t microBatches);

/**
 * \ingroup gpu-fabric
 * \brief One training iteration of a model under a parallelization: the
 *        compute of every GPU and the list of collectives with their
 *        communicators and sizes.  Pure data, no simulation.
 *
 * Per micro-batch of t tokens (t = micro-batch sequences * sequence length)
 * and A = ActivationBytes(t) bytes:
 * - TP (TP > 1): M_cc / 2 ring AllReduces of A bytes per block of the stage,
 *   half in the forward and half in the backward pass (Megatron: 2 + 2);
 * - PP (PP > 1): stage s sends A bytes of activations to stage s+1 in the
 *   forward pass and stage s+1 sends A bytes of gradients back in the
 *   backward pass (no scatter-gather optimisation: every TP rank sends all of A);
 * - EP (EP > 1): per MoE block 2 AllToAlls forward (dispatch, combine) and 2
 *   backward, each rank's send buffer t * topK * d_model * bytesPerActivation / TP
 *   (the TP ranks split the tokens between them);
 * and once per iteration:
 * - DP (DP > 1): AllReduce of each GPU's dense gradients, bytesPerParam *
 *   (dense parameters of its stage) / TP, over its DP group; the expert
 *   gradients, bytesPerParam * (experts / EP) * FfnParams / TP per MoE block,
 *   over its expert-DP group (DP / EP members).  Embeddings are left out, as
 *   in the paper's Eq. 1.
 * Compute: a stage's forward FLOPs per micro-batch are the
 * BlockForwardFlopsPerToken of its blocks times t / TP, plus 2 V d_model t / TP
 * for the output layer on the last stage; backward = 2 x forward; time =
 * FLOPs / (gpuFlops * computeEfficiency).
 */
class TrainingIteration
{
  public:
    /**
     * \param model the model (validated)
     * \param parallelism the parallelization (ValidateFor(model) is called)
     * \param options algorithms and compute rate
     * \throws FabricConfigError for an invalid combination
     */
    TrainingIteration(const LlmModel& model,
                      const Parallelism& parallelism,
                      const WorkloadOptions& options = WorkloadOptions());

    /// \return the model
    const LlmModel& Model() const
    {
        return m_model;
    }

    /// \return the parallelization
    const Parallelism& GetParallelism() const
    {
        return m_par;
    }

    /// \return the options
    const WorkloadOptions& Options() const
    {
        return m_opt;
    }

    /// \return all collectives of one iteration
    const std::vector<CollectiveCall>& Collectives() const
    {
        return m_calls;
    }

    /// \return tokens per micro-batch
    uint64_t MicroBatchTokens() const;

    /// \return A: activation bytes of one micro-batch at a stage boundary
    uint64_t ActivationBytesPerMicroBatch() const;

    /// \param stage pipeline stage \return blocks of the stage (l / PP)
    uint32_t LayersPerStage() const;

    /// \param stage pipeline stage \return MoE blocks in that stage
    uint32_t MoeLayersInStage(uint32_t stage) const;

    /// \param stage pipeline stage \return dense gradient bytes per GPU of that stage
    uint64_t DenseGradientBytes(uint32_t stage) const;

    /// \param stage pipeline stage \return expert gradient bytes per GPU of that stage
    uint64_t ExpertGradientBytes(uint32_t stage) const;

    /// \param stage pipeline stage \return forward FLOPs of one micro-batch on one GPU
    double ForwardFlops(uint32_t stage) const;

    /// \param stage pipeline stage \return forward seconds of one micro-batch on one GPU
    double ForwardSeconds(uint32_t stage) const;

    /// \param stage pipeline stage \return backward seconds of one micro-batch (2 x forward)
    double BackwardSeconds(uint32_t stage) const;

    /// \param rank global rank \return compute seconds of the whole iteration on that GPU
    double ComputeSecondsPerIteration(uint32_t rank) const;

    /**
     * \brief The 1F1B pipeline bubble: (PP - 1) (F + B) of the slowest stage
     *        (the last, which also computes the output layer, unless blocks
     *        differ), the time a stage waits for the pipeline to fill and
     *        drain.  0 without PP.
     * \return seconds
     */
    double PipelineBubbleSeconds() const;

    /**
     * \brief The 1F1B order of one stage (PipeDream-Flush / Megatron): PP - 1 -
     *        stage warm-up forwards (at most the micro-batch count), then
     *        alternating forward and backward, then the remaining backwards.
     * \param stage pipeline stage 0..PP-1
     * \return the steps in order (2 * micro-batches of them)
     */
    std::vector<PipelineStep> OneFOneBOrder(uint32_t stage) const;

  private:
    /// Append the calls of every dimension.
    void BuildCalls();

    LlmModel m_model;                    //!< model
    Parallelism m_par;                   //!< parallelization
    WorkloadOptions m_opt;               //!< options
    std::vector<CollectiveCall> m_calls; //!< the collectives
};

} // namespace ns3

#endif // GPU_FABRIC_TRAINING_ITERATION_H
