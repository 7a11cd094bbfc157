/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_ANALYTICAL_MODEL_H
#define GPU_FABRIC_ANALYTICAL_MODEL_H

#include <cstdint>
#include <string>

namespace ns3
{

struct LlmModel;
struct HbDomainPreset;

/**
 * \ingroup gpu-fabric
 * \brief The variables of the rail-only paper's iteration-time model (HotNets
 *        2023, Eq. 1), named as in the paper.
 *
 * Units: bytes, bytes per second (B_F, B_S: convert a rate in bits per
 * second with FromRateBps or divide by 8), FLOP and FLOP/s.  b is in tokens
 * and b * d_model enters the TP term as printed in the paper (no bytes per
 * activation factor, see \c activationBytes).
 */
struct AnalyticalParams
{
    double N{0};       //!< GPUs
    double K{0};       //!< GPUs per HB domain
    double l{0};       //!< transformer blocks
    double d_model{0}; //!< hidden size
    double S_T{0};     //!< bytes of one block's parameters (12 d_model^2 * 2 for BF16 GPT)
    double b{0};       //!< global batch, tokens
    double M_cc{8};    //!< TP collective rounds per block (8 GPT/OPT, 12 PaLM)
    double M_flop{0};  //!< FLOPs per iteration
    double C{0};       //!< GPU FLOP/s
    double B_F{0};     //!< HB (NVLink) bandwidth per GPU, bytes/s
    double B_S{0};     //!< NIC (scale-out) bandwidth per GPU, bytes/s
    /// Factor on b * d_model in the TP term: 1 reproduces the paper's formula as
    /// printed; bytesPerActivation (2 for BF16) makes it bytes.  Not in the paper.
    double activationBytes{1};

    /// \param bps bits per second \return bytes per second
    static double FromRateBps(double bps)
    {
        return bps / 8.0;
    }

    /**
     * \brief The variables for a model on a platform: l, d_model, S_T =
     *        BlockParamBytes(), b = globalBatchTokens, M_cc = tpRoundsPerBlock,
     *        M_flop = FlopsPerIteration(), C, B_F, B_S from the preset.
     * \param model the model \param platform K, NVLink and NIC rates, FLOP/s
     * \param gpus N \param attentionFlops include the attention term in M_flop
     * \return the parameters
     */
    static AnalyticalParams From(const LlmModel& model,
                                 const HbDomainPreset& platform,
                                 uint32_t gpus,
                                 bool attentionFlops = false);

    /// Throws FabricConfigError naming the first variable out of range.
    void Validate() const;

    /**
     * \brief The variables of one stage of a pipeline of \p pp stages: a
     *        stage is a DP x TP job of N / PP GPUs over l / PP blocks doing
     *        1 / PP of the FLOPs, so Eq. 1's compute and TP terms are those
     *        of the whole job and its DP terms count the stage's gradients
     *        over its DP domains.  Not validated (a stage smaller than one
     *        HB domain has N < K).
     * \param pp PP size (>= 1)
     * \return N / pp, l / pp and M_flop / pp, the rest unchanged
     */
    AnalyticalParams PipelineStage(uint32_t pp) const;
};

/// Terms of Eq. 1, seconds.
struct IterationTimeBreakdown
{
    double N_M{0};      //!< TP size used
    double N_Ds{0};     //!< K / N_M
    double N_Df{0};     //!< N / K
    double compute{0};  //!< M_flop / (N C)
    double dpRail{0};   //!< l * 2 S_T (N_Df - 1) / (N B_S): first-level DP on rails
    double dpDomain{0}; //!< l * 2 S_T (N_Ds - 1) / (K B_F): second-level DP in domains
    double tp{0};       //!< l * M_cc b d_model (N_M - 1) / (N B_F)
    double total{0};    //!< sum of the above

    /// \return communication time (total - compute)
    double Communication() const
    {
        return total - compute;
    }
};

/**
 * \ingroup gpu-fabric
 * \brief The rail-only paper's analytical model of one iteration under data
 *        and tensor parallelism (no pipeline), bandwidth terms only:
 *
 *     T_iter = M_flop/(N C) + l ( 2 S_T (N_Df - 1)/(N B_S)
 *                               + (1/B_F)(2 S_T (N_Ds - 1)/K + M_cc b d_model (N_M - 1)/N) )
 *
 * with N_Df = N/K across domains on rails, N_Ds = K/N_M inside a domain, and
 * N_M the TP size.  DP uses the hierarchical AllReduce (one stage inside the
 * domain over B_F, one across domains on the rail over B_S), and TP stays in
 * the domain, so the same formula holds for rail-only and for any network
 * with full bandwidth B_S per GPU between domains.  N_M may be fractional (the
 * formula is continuous); callers that want a real TP size round it.
 */
class AnalyticalModel
{
  public:
    /// \param params the variables (validated)
    explicit AnalyticalModel(const AnalyticalParams& params);

    /// \return the variables
    const AnalyticalParams& Params() const
    {
        return m_p;
    }

    /**
     * \brief The paper's optimal TP size,
     *        N_M* = sqrt(N S_T) / (2 sqrt(b M_cc d_model)), as printed (with
     *        activationBytes multiplying b d_model).  Not clamped.
     * \return N_M*
     */
    double OptimalTp() const;

    /**
     * \brief The TP size that minimises Eq. 1 itself: setting the derivative
     *        of 2 S_T/N_M + M_cc b d_model N_M / N to zero gives
     *        sqrt(2 N S_T / (M_cc b d_model)), 2 sqrt(2) times the paper's
     *        N_M*.  Not clamped.  Informative: we could not reconcile the two.
     * \return argmin of Eq. 1 over N_M
     */
    double Eq1MinimizingTp() const;

    /// \return OptimalTp() clamped to [1, K] (what the K sweep uses)
    double ClampedOptimalTp() const;

    /**
     * \brief Eq. 1 with TP size \p N_M.
     * \param N_M TP size, in [1, K]
     * \return seconds
     */
    double IterationTime(double N_M) const;

    /**
     * \brief Eq. 1 term by term.
     * \param N_M TP size, in [1, K]
     * \return the terms
     */
    IterationTimeBreakdown Breakdown(double N_M) const;

    /**
     * \brief The ideal network: all N GPUs in one HB domain (every GPU reaches
     *        every other at B_F), with the paper's N_M* (clamped to [1, N]):
     *        T_ideal = M_flop/(N C) + l/(B_F N) (2 S_T (N/N_M* - 1) + M_cc b d_model (N_M* - 1)).
     * \return seconds
     */
    double IdealTime() const;

    /**
     * \brief The ideal network with TP size \p N_M: Eq. 1 with K = N,
     *        T = M_flop/(N C) + l/(B_F N) (2 S_T (N/N_M - 1) + M_cc b d_model (N_M - 1)).
     * \param N_M TP size, in [1, N]
     * \return seconds
     */
    double IdealTimeAt(double N_M) const;

  private:
    AnalyticalParams m_p; //!< variables
};

/**
 * \ingroup gpu-fabric
 * \brief Eq. 1 for one stage of a pipelined job (AnalyticalParams::PipelineStage):
 *        what a PP job's iteration takes by the paper's bandwidth terms,
 *        without the pipeline bubble (TrainingIteration::PipelineBubbleSeconds),
 *        the PP transfers and latencies.
 * \param job the whole job's variables (N, l, M_flop of all its stages)
 * \param pp PP size (>= 1)
 * \param N_M TP size, in [1, K]
 * \return seconds; NaN when a stage is smaller than one HB domain
 *         (N / PP < K), which Eq. 1 does not cover: it places whole domains
 * \throws FabricConfigError for pp = 0 or a bad variable or TP size
 */
double PipelineStageIterationTime(const AnalyticalParams& job, uint32_t pp, double N_M);

/// Terms of the 3D-parallel (TP x PP x DP) iteration time, seconds.
struct ThreeDParallelBreakdown
{
    uint32_t tp{0};         //!< TP size (inside an HB domain)
    uint32_t pp{0};         //!< PP size (stages across domains, on rails)
    double dp{0};           //!< DP size N / (TP PP)
    double microBatches{0}; //!< m = b / (DP x micro-batch tokens), per pipeline
    double compute{0};      //!< M_flop r / (N C); r = 4/3 with activation recomputation
    double tpComm{0};       //!< Eq. 1's TP term, x 3/2 with recomputation (a third forward)
    double bubble{0};       //!< (PP - 1) / m x (compute + tpComm): the 1F1B fill and drain
    double ppComm{0};       //!< 2 (m + PP - 1) micro-batch activations / (TP B_S), PP > 1
    double dpRail{0};       //!< Eq. 1's DP term on rails, for one stage's gradients
    double dpDomain{0};     //!< Eq. 1's DP term in domains, for one stage's gradients
    double total{0};        //!< sum of the terms above
    double hfu{0};          //!< hardware FLOPs utilization: M_flop r / (N C total)
    double mfu{0};          //!< model FLOPs utilization: M_flop / (N C total)
};

/**
 * \ingroup gpu-fabric
 * \brief Eq. 1 extended to pipeline parallelism, as the later rail-only
 *        paper (arXiv 2307.12169) does for its hardware FLOPs utilization
 *        (HFU) study; our formulation, bandwidth terms only:
 *
 *     T = (1 + (PP - 1)/m) (r M_flop/(N C) + s T_TP) + T_PP + T_DP,stage
 *
 * with TP inside the domain (Eq. 1's TP term T_TP), PP stages of N / PP GPUs
 * in whole domains, m = b / (DP x micro-batch tokens) micro-batches per
 * pipeline (1F1B: PP - 1 micro-batch times of fill and drain), T_PP = 2 (m +
 * PP - 1) x (micro-batch tokens d_model activation bytes / TP) / B_S (each
 * TP rank sends its slice of the activation forward and the gradient back,
 * not overlapped), T_DP,stage = Eq. 1's DP terms of one stage
 * (PipelineStage). With activation recomputation (Megatron-LM's full
 * recompute) r = 4/3 and s = 3/2: a second forward pass, with its TP
 * AllReduces; HFU counts those FLOPs, MFU does not.
 * \param job the whole job (N, K, l, M_flop, b, ...)
 * \param tp TP size, a divisor of K
 * \param pp PP size, with N / PP a multiple of K and of TP
 * \param microBatchTokens tokens of one micro-batch
 * \param recompute activation recomputation
 * \param activationBytes bytes per activation value of the PP transfers (2: BF16)
 * \return the terms
 * \throws FabricConfigError naming the TP or PP size, the micro-batch or the
 *         batch when the job cannot be laid out so (m must be a whole number >= 1)
 */
ThreeDParallelBreakdown ThreeDParallelTime(const AnalyticalParams& job,
                                           uint32_t tp,
                                           uint32_t pp,
                                           double microBatchTokens,
                                           bool recompute,
                                           double activationBytes = 2);

/**
 * \ingroup gpu-fabric
 * \brief How ChooseTp picks Eq. 1's TP size N_M.
 */
enum class TpMode
{
    Paper,  //!< "paper": the paper's N_M* as printed, clamped to [1, K] (ClampedOptimalTp)
    Eq1,    //!< "eq1": the minimiser of Eq. 1 itself, clamped to [1, K]
    Domain, //!< "domain": TP fills the HB domain, N_M = K
};

/**
 * \ingroup gpu-fabric
 * \param parameter what gave the name (for an error)
 * \param name "paper", "eq1" or "domain"
 * \return the mode
 * \throws FabricConfigError naming \p parameter for another name
 */
TpMode TpModeFromName(const std::string& parameter, const std::string& name);

/**
 * \ingroup gpu-fabric
 * \brief The TP size N_M a mode gives for Eq. 1 (continuous: Eq. 1 takes a
 *        fractional N_M; BestFeasibleTp picks a size a job can run).
 * \param eq1 the model \param mode see TpMode
 * \return N_M, in [1, K]
 */
double ChooseTp(const AnalyticalModel& eq1, TpMode mode);

/**
 * \ingroup gpu-fabric
 * \brief The TP size of the ideal network (all N GPUs in one HB domain) that
 *        \p mode picks, so that T / T_ideal compares the same rule on both:
 *        paper: N_M* clamped to [1, N] (what IdealTime() uses); eq1: the
 *        minimiser of Eq. 1 clamped to [1, N], which is the ideal network's
 *        own minimiser; domain: K, the TP size of the rail network (TP = N
 *        would leave the ideal network no DP).
 * \param eq1 the model (its N and K) \param mode the rule
 * \return N_M, in [1, N]
 */
double IdealTp(const AnalyticalModel& eq1, TpMode mode);

/**
 * \ingroup gpu-fabric
 * \brief The TP size a simulated job of \p model on Eq. 1's N GPUs in
 *        domains of K can run with the shortest Eq. 1 iteration time: among
 *        the sizes that divide K, the model's heads and N, with DP = N / TP
 *        dividing the global batch (globalBatchTokens / seqLength sequences);
 *        ties go to the smaller.
 * \param eq1 the model (its N and K) \param model heads and batch
 * \return the TP size, or 0 when no size is feasible
 */
uint32_t BestFeasibleTp(const AnalyticalModel& eq1, const LlmModel& model);

} // namespace ns3

#endif // GPU_FABRIC_ANALYTICAL_MODEL_H
