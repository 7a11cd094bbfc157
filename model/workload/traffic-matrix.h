/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_TRAFFIC_MATRIX_H
#define GPU_FABRIC_TRAFFIC_MATRIX_H

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
};

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

/// Bytes of one ordered GPU pair, per parallel dimension.
struct TrafficEntry
{
    uint32_t src{0};                             //!< sender (global rank)
    uint32_t dst{0};                             //!< receiver (global rank)
    std::array<uint64_t, kParallelDims> bytes{}; //!< bytes per ParallelDim

    /// \return bytes over all dimensions
    uint64_t Total() const;
};

/// Where bytes go: inside an HB domain, between domains on one rail, or neither.
struct TrafficSplit
{
    uint64_t intraDomain{0};   //!< same HB domain (NVLink)
    uint64_t sameRailInter{0}; //!< different domains, same rail (rail network)
    uint64_t otherInter{0};    //!< different domains and rails (needs a spine or forwarding)

    /// \return all bytes
    uint64_t Total() const
    {
        return intraDomain + sameRailInter + otherInter;
    }
};

/**
 * \ingroup gpu-fabric
 * \brief Sparsity statistics of a traffic matrix.
 */
struct TrafficStats
{
    uint32_t gpus{0};                              //!< N
    uint32_t gpusPerDomain{0};                     //!< K
    uint64_t orderedPairs{0};                      //!< N (N - 1)
    uint64_t pairsWithTraffic{0};                  //!< ordered pairs with at least one byte
    uint64_t interDomainPairsWithTraffic{0};       //!< of those, pairs in different domains
    uint64_t otherPairsWithTraffic{0};             //!< of those, different domains and rails
    TrafficSplit all;                              //!< bytes over all dimensions
    std::array<TrafficSplit, kParallelDims> byDim; //!< bytes per ParallelDim

    /// \return fraction of ordered GPU pairs that exchange nothing
    double IdlePairFraction() const;
    /// \return fraction of bytes inside HB domains
    double IntraDomainFraction() const;
    /// \return fraction of bytes between same-rail GPUs of different domains
    double SameRailFraction() const;
    /// \return fraction of bytes between GPUs of different domains and rails
    double OtherFraction() const;
};

/**
 * \ingroup gpu-fabric
 * \brief Bytes per ordered GPU pair of one training iteration, stored sparse
 *        (only pairs that exchange something), split by parallel dimension.
 *
 * A byte counts once on every GPU-to-GPU transfer: a byte PXN relays through
 * a GPU of the sender's domain appears on both hops.  Per call the local
 * traffic comes from the collective generators' TrafficMatrix() when the
 * communicator has at most \c exactGroupLimit ranks (computed once per shape
 * and reused for every communicator), otherwise from the closed forms below,
 * which equal the generators' to within rounding (a few bytes per pair):
 * - ring AllReduce of S over n: rank i sends 2 (n-1) S / n to i+1 mod n;
 * - hierarchical AllReduce, k members per domain, D = n / k domains: each
 *   member sends 2 (k-1) S / k to the next member of its domain (ring) and
 *   2 (D-1) S / (k D) to the member with the same index in the next domain;
 * - direct AllToAll of S per rank: S / n to every other rank;
 * - PXN AllToAll: S / n * D to each other member of its domain (its own piece
 *   plus the D - 1 it relays onto that member's rail) and S / n * k to each
 *   member with the same index in another domain;
 * - SendRecv: the bytes on each pair.
 */
class IterationTrafficMatrix
{
  public:
    /**
     * \param gpus N \param gpusPerDomain K (a divisor of N)
     * \param exactGroupLimit largest communicator whose traffic is taken from the
     *        generated schedule (0: closed forms only)
     */
    IterationTrafficMatrix(uint32_t gpus, uint32_t gpusPerDomain, uint32_t exactGroupLimit = 64);

    /**
     * \brief The traffic of one iteration.
     * \param iteration the iteration \param exactGroupLimit see the constructor
     * \return the matrix
     */
    static IterationTrafficMatrix FromIteration(const TrainingIteration& iteration,
                                                uint32_t exactGroupLimit = 64);

    /**
     * \brief The traffic of one execution of a call's collective, local indices.
     * \param call the call (count ignored)
     * \param exact from the generated schedule (true) or the closed form (false)
     * \return (src, dst, bytes) per local pair, sorted, bytes > 0
     */
    static std::vector<PairBytes> LocalTraffic(const CollectiveCall& call, bool exact);

    /// Add \p bytes from \p src to \p dst in dimension \p dim.
    void Add(uint32_t src, uint32_t dst, ParallelDim dim, uint64_t bytes);

    /// Add \p call.count executions of \p call.
    void AddCall(const CollectiveCall& call);

    /// \return N
    uint32_t Gpus() const
    {
        return m_gpus;
    }

    /// \return K
    uint32_t GpusPerDomain() const
    {
        return m_k;
    }

    /// \return number of ordered pairs with traffic
    size_t NonZeroPairs() const
    {
        return m_map.size();
    }

    /// \param src sender \param dst receiver \return bytes over all dimensions
    uint64_t Bytes(uint32_t src, uint32_t dst) const;

    /// \param src sender \param dst receiver \param dim dimension \return bytes
    uint64_t Bytes(uint32_t src, uint32_t dst, ParallelDim dim) const;

    /// \return all non-zero pairs, sorted by (src, dst)
    std::vector<TrafficEntry> Entries() const;

    /// \return sparsity statistics
    TrafficStats Stats() const;

    /// \param dim dimension \return all bytes of that dimension
    uint64_t TotalBytes(ParallelDim dim) const;

    /// \return all bytes
    uint64_t TotalBytes() const;

  private:
    /// Local traffic of a call, from the cache or computed.
    const std::vector<PairBytes>& CachedLocalTraffic(const CollectiveCall& call);

    uint32_t m_gpus;                                                         //!< N
    uint32_t m_k;                                                            //!< K
    uint32_t m_exactGroupLimit;                                              //!< see constructor
    std::unordered_map<uint64_t, std::array<uint64_t, kParallelDims>> m_map; //!< (src<<32|dst)
    /// local traffic per (algorithm, type, ranks, domain size, bytes, pair list)
    std::map<std::tuple<std::string, int, uint32_t, uint32_t, uint64_t, std::vector<uint64_t>>,
             std::vector<PairBytes>>
        m_cache;
};

} // namespace ns3

#endif // GPU_FABRIC_TRAFFIC_MATRIX_H
