/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_PARALLELISM_H
#define GPU_FABRIC_PARALLELISM_H

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

struct LlmModel;

/**
 * \ingroup gpu-fabric
 * \brief Coordinates of one GPU in the parallelization.
 */
struct RankCoord
{
    uint32_t tp{0};      //!< index in its TP group, 0..TP-1
    uint32_t pp{0};      //!< pipeline stage, 0..PP-1
    uint32_t dp{0};      //!< data-parallel replica, 0..DP-1
    uint32_t dpInner{0}; //!< DP index inside the HB domain, 0..N_Ds-1
    uint32_t dpOuter{0}; //!< DP index across domains (on the rail), 0..N_Df-1
    uint32_t ep{0};      //!< index in its EP group, 0..EP-1 (= dp % EP)
    uint32_t epGroup{0}; //!< which EP group of the replica set (= dp / EP)
};

/**
 * \ingroup gpu-fabric
 * \brief TP, PP, DP and EP sizes of a training job and their placement on
 *        GPUs grouped in HB domains, as the rail-only paper places them.
 *
 * GPU numbering is domain-major: global rank g is GPU g % K of HB domain g / K
 * (its rail is g % K).  N = TP * PP * DP; expert parallelism (EP) splits each
 * data-parallel replica set: EP consecutive DP replicas hold different experts
 * and exchange tokens by AllToAll (GShard / DeepSpeed-MoE / Megatron style), so
 * EP divides DP.
 *
 * Placement (Megatron's order TP fastest, then DP, then PP):
 *     g = tp + TP * (dp + DP * slot(pp)),
 * where slot(pp) = pp when a stage fills whole domains (TP * DP >= K).  When
 * q = K / (TP * DP) > 1 stages share a domain, they are laid out in snake
 * order (stages of every second domain reversed) so that the boundary between
 * two domains still joins GPUs of the same rail.
 * With TP dividing K this puts
 * - each TP group inside one HB domain (K / TP groups per domain);
 * - N_Ds = min(DP, K / TP) replicas of a stage inside a domain (second-level
 *   DP, over NVLink), and N_Df = DP / N_Ds of them in different domains on the
 *   same rail (first-level DP, over the rail network);
 * - pipeline stages TP * DP ranks apart: when TP * DP >= K, in different
 *   domains on the same rail (the paper's placement); otherwise q stages
 *   share a domain (NVLink) and the stage pairs that cross domains are on
 *   the same rail (snake order);
 * - each EP group on EP consecutive replicas: inside a domain when EP <= N_Ds,
 *   else spread over EP / N_Ds domains, N_Ds per domain, each member on the
 *   rail of its TP index and replica.
 * Batch: the global batch (sequences) splits into DP replicas and each
 * replica's share into \c microBatches micro-batches.
 */
class Parallelism
{
  public:
    /**
     * \brief The job's sizes, by name. The fields without a usable default
     *        (gpus, gpusPerDomain, dp, globalBatchSequences) start at 0, which
     *        the constructor refuses by name.
     */
    struct Shape
    {
        uint32_t gpus{0};                 //!< N
        uint32_t gpusPerDomain{0};        //!< K, GPUs per HB domain (a divisor of N)
        uint32_t tp{1};                   //!< TP size (a divisor of K)
        uint32_t pp{1};                   //!< PP size
        uint32_t dp{0};                   //!< DP size (TP * PP * DP = N)
        uint32_t ep{1};                   //!< EP size (1: no expert parallelism; a divisor of DP)
        uint32_t microBatches{1};         //!< micro-batches per replica and iteration (>= 1)
        uint64_t globalBatchSequences{0}; //!< global batch in sequences (a multiple of
                                          //!< DP * microBatches)
    };

    /**
     * \param shape the sizes
     * \throws FabricConfigError naming the first field that is wrong
     */
    explicit Parallelism(const Shape& shape);

    /**
     * \brief Check the job against a model: layers divisible by PP, heads by TP,
     *        experts by EP (MoE), EP = 1 for a dense model, global batch equal
     *        to the model's (in sequences).
     * \param model the model
     * \throws FabricConfigError naming the parameter
     */
    void ValidateFor(const LlmModel& model) const;

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

    /// \return number of HB domains, N / K
    uint32_t Domains() const
    {
        return m_gpus / m_k;
    }

    /// \return TP size (N_M of the paper)
    uint32_t Tp() const
    {
        return m_tp;
    }

    /// \return PP size
    uint32_t Pp() const
    {
        return m_pp;
    }

    /// \return DP size (N_Df * N_Ds)
    uint32_t Dp() const
    {
        return m_dp;
    }

    /// \return EP size
    uint32_t Ep() const
    {
        return m_ep;
    }

    /// \return N_Ds: DP replicas of a stage inside one HB domain
    uint32_t DpInner() const
    {
        return m_dpInner;
    }

    /// \return N_Df: DP replicas of a stage across domains (on a rail)
    uint32_t DpOuter() const
    {
        return m_dp / m_dpInner;
    }

    /// \return micro-batches per replica and iteration
    uint32_t MicroBatches() const
    {
        return m_microBatches;
    }

    /// \return global batch, sequences
    uint64_t GlobalBatchSequences() const
    {
        return m_globalBatch;
    }

    /// \return sequences per micro-batch: global batch / (DP * micro-batches)
    uint64_t MicroBatchSequences() const
    {
        return m_globalBatch / (static_cast<uint64_t>(m_dp) * m_microBatches);
    }

    /// \param rank global rank \return its HB domain, rank / K
    uint32_t DomainOf(uint32_t rank) const
    {
        return rank / m_k;
    }

    /// \param rank global rank \return its rail (index in its domain), rank % K
    uint32_t RailOf(uint32_t rank) const
    {
        return rank % m_k;
    }

    /**
     * \param rank global rank 0..N-1
     * \return its coordinates
     */
    RankCoord Coord(uint32_t rank) const;

    /**
     * \param tp TP index \param pp stage \param dp replica
     * \return the global rank
     */
    uint32_t Rank(uint32_t tp, uint32_t pp, uint32_t dp) const;

    /// \param rank global rank \return its TP group (global ranks, by TP index)
    std::vector<uint32_t> TpGroup(uint32_t rank) const;
    /// \param rank global rank \return its pipeline (global ranks, by stage)
    std::vector<uint32_t> PpPipeline(uint32_t rank) const;
    /// \param rank global rank \return its DP group (global ranks, by replica;
    ///        domain-major with DpInner() members per domain)
    std::vector<uint32_t> DpGroup(uint32_t rank) const;
    /// \param rank global rank \return its EP group (global ranks, by EP index;
    ///        domain-major with min(EP, DpInner()) members per domain)
    std::vector<uint32_t> EpGroup(uint32_t rank) const;
    /// \param rank global rank \return the expert-data-parallel group: replicas of
    ///        the same experts (same TP index, stage and EP index), DP / EP members
    std::vector<uint32_t> ExpertDpGroup(uint32_t rank) const;

    /// \return every TP group once
    std::vector<std::vector<uint32_t>> AllTpGroups() const;
    /// \return every pipeline once
    std::vector<std::vector<uint32_t>> AllPpPipelines() const;
    /// \return every DP group once
    std::vector<std::vector<uint32_t>> AllDpGroups() const;
    /// \return every EP group once (none when EP = 1)
    std::vector<std::vector<uint32_t>> AllEpGroups() const;
    /// \return every expert-DP group once
    std::vector<std::vector<uint32_t>> AllExpertDpGroups() const;

    /**
     * \brief Members per HB domain of a communicator whose members are
     *        domain-major and spread evenly (the hierarchical and PXN
     *        algorithms' domain size).
     * \param communicator global ranks
     * \return members per domain, or 0 if the members are not domain-major
     *         with the same count in every domain they touch
     */
    uint32_t MembersPerDomain(const std::vector<uint32_t>& communicator) const;

    /// \return q: pipeline stages per HB domain (1 when TP * DP >= K)
    uint32_t StagesPerDomain() const;

    /// \return e.g. "N=128 K=8 TP=8 PP=4 DP=4 (N_Ds=1 N_Df=4) EP=1 m=8"
    std::string ToString() const;

  private:
    /// \param stage pipeline stage \return its slot (position in rank order)
    uint32_t SlotOfStage(uint32_t stage) const;
    /// \param slot position in rank order \return the stage there
    uint32_t StageOfSlot(uint32_t slot) const;

    uint32_t m_gpus;         //!< N
    uint32_t m_k;            //!< K
    uint32_t m_tp;           //!< TP
    uint32_t m_pp;           //!< PP
    uint32_t m_dp;           //!< DP
    uint32_t m_ep;           //!< EP
    uint32_t m_dpInner;      //!< N_Ds
    uint32_t m_microBatches; //!< micro-batches
    uint64_t m_globalBatch;  //!< sequences
};

} // namespace ns3

#endif // GPU_FABRIC_PARALLELISM_H
