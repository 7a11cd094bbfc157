/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_LLM_MODEL_H
#define GPU_FABRIC_LLM_MODEL_H

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Shape of a decoder-only transformer LLM (dense or mixture-of-experts)
 *        and the quantities the workload and the analytical model derive from it.
 *
 * Parameter counts ignore biases and layer norms (under 0.1% of a large
 * model), as the rail-only papers do with their S_T = 12 d^2 per block:
 * - attention: Q and O are d x (heads * headDim), K and V are d x (kvHeads * headDim):
 *   2 d a + 2 d a_kv, with a = heads * headDim and a_kv = kvHeads * headDim;
 *   for plain multi-head attention with headDim = d / heads this is 4 d^2;
 * - FFN: ffnMatrices matrices of d x d_ff (2 for a GELU MLP, 3 for SwiGLU),
 *   d_ff = ffnMultiplier * d; with 2 matrices and d_ff = 4d this is 8 d^2;
 * - an MoE block replaces its FFN by \c experts FFNs of the same shape, of
 *   which each token uses \c topK (router weights ignored); every
 *   \c moeLayerInterval-th block is an MoE block (1: all, 2: every other);
 * - embeddings: V x d, doubled when input and output embeddings are not tied.
 * So a GPT-3/OPT block has 12 d^2 parameters: S_T = 12 d^2 * bytesPerParam bytes.
 */
struct LlmModel
{
    std::string name;               //!< preset name, e.g. "gpt3-175b"
    uint32_t layers{0};             //!< l, transformer blocks
    uint32_t hiddenSize{0};         //!< d_model
    uint32_t heads{0};              //!< attention heads
    uint32_t kvHeads{0};            //!< key/value heads (0: = heads; fewer: GQA / MQA)
    uint32_t headDim{0};            //!< per-head dimension (0: d_model / heads)
    uint32_t seqLength{0};          //!< training sequence length, tokens
    uint32_t vocabSize{0};          //!< V
    double ffnMultiplier{4.0};      //!< d_ff / d_model
    uint32_t ffnMatrices{2};        //!< 2 (GELU MLP) or 3 (SwiGLU)
    bool tiedEmbeddings{true};      //!< output layer shares the input embedding
    uint32_t experts{0};            //!< experts per MoE block (0 or 1: dense model)
    uint32_t topK{0};               //!< experts used per token (MoE only)
    uint32_t moeLayerInterval{1};   //!< every n-th block is an MoE block
    uint64_t globalBatchTokens{0};  //!< b, tokens per iteration (a multiple of seqLength)
    uint32_t tpRoundsPerBlock{8};   //!< M_cc: TP collective rounds per block (see below)
    uint32_t bytesPerParam{2};      //!< 2 for BF16 weights and gradients
    uint32_t bytesPerActivation{2}; //!< 2 for BF16 activations
    std::string source;             //!< where the figures come from

    /*
     * M_cc, as the rail-only paper uses it: the number of "rounds" of
     * activation-sized TP traffic per block, each ring AllReduce counting 2
     * (reduce-scatter + allgather). Megatron-style TP has 2 AllReduces in the
     * forward and 2 in the backward pass per block: M_cc = 8 (GPT, OPT); the
     * paper uses 12 for PaLM. The workload issues M_cc / 2 AllReduces per block
     * and micro-batch, half of them in the forward pass.
     */

    /**
     * \brief Look up a preset by name (case-insensitive, '_' = '-').
     * \param name one of Names()
     * \return the preset
     * \throws FabricConfigError naming "model" for an unknown name
     */
    static LlmModel Get(const std::string& name);

    /// \return the names of all presets
    static std::vector<std::string> Names();

    /// \return all presets
    static const std::vector<LlmModel>& All();

    /**
     * \brief A custom model from its shape, validated (other fields keep their defaults).
     * \param layers l \param hiddenSize d_model \param heads attention heads
     * \param seqLength sequence length \param vocabSize V
     * \param globalBatchTokens b (a multiple of seqLength)
     * \param ffnMultiplier d_ff / d_model \param experts experts per MoE block (0: dense)
     * \param topK experts per token (MoE)
     * \return the model named "custom"
     */
    static LlmModel Custom(uint32_t layers,
                           uint32_t hiddenSize,
                           uint32_t heads,
                           uint32_t seqLength,
                           uint32_t vocabSize,
                           uint64_t globalBatchTokens,
                           double ffnMultiplier = 4.0,
                           uint32_t experts = 0,
                           uint32_t topK = 0);

    /// Throws FabricConfigError naming the first field out of range.
    void Validate() const;

    /// \return true for a mixture-of-experts model (experts > 1)
    bool IsMoe() const;
    /// \return d_ff = round(ffnMultiplier * d_model)
    uint64_t FfnSize() const;
    /// \return number of MoE blocks (l / moeLayerInterval, rounded down)
    uint32_t MoeLayers() const;
    /// \return global batch in sequences: b / seqLength
    uint64_t GlobalBatchSequences() const;

    /// \return attention parameters of one block: 2 d a + 2 d a_kv
    double AttentionParams() const;
    /// \return parameters of one FFN (one expert): ffnMatrices * d * d_ff
    double FfnParams() const;
    /// \return parameters of a dense block: attention + one FFN (12 d^2 for GPT-3)
    double DenseBlockParams() const;
    /// \return parameters of an MoE block: attention + experts FFNs
    double MoeBlockParams() const;
    /// \return parameters of an MoE block a token uses: attention + topK FFNs
    double MoeBlockActiveParams() const;
    /// \return embedding parameters: V d (2 V d when untied)
    double EmbeddingParams() const;
    /// \return all parameters: blocks + embeddings
    double TotalParams() const;
    /// \return parameters each token uses (equal to TotalParams() for a dense model)
    double ActiveParams() const;

    /**
     * \brief S_T of the paper: bytes of one dense transformer block's parameters,
     *        DenseBlockParams() * bytesPerParam (12 d^2 * 2 for GPT-3 in BF16).
     * \return bytes
     */
    double BlockParamBytes() const;

    /**
     * \brief Forward FLOPs of one token through one block (dense or MoE as the
     *        block index says): 2 * (parameters the token uses), plus, when
     *        \p attention, 2 * seqLength * a for the score and context products
     *        (Kaplan et al. 2020, "Scaling laws", Table 1).
     * \param block block index 0..l-1 \param attention include the attention term
     * \return FLOPs
     */
    double BlockForwardFlopsPerToken(uint32_t block, bool attention = false) const;

    /**
     * \brief The attention part of BlockForwardFlopsPerToken: 2 x
     *        AttentionParams(), plus the score and context products when
     *        \p attention; the rest is the FFN (or the experts a token uses).
     * \param attention include the attention-score term
     * \return FLOPs per token
     */
    double AttentionForwardFlopsPerToken(bool attention = false) const;

    /**
     * \brief M_flop: FLOPs of one training iteration,
     *        6 * ActiveParams() * b (forward 2, backward 4 per parameter and token;
     *        Kaplan et al. 2020, Hoffmann et al. 2022), plus 6 * l * seqLength * a * b
     *        when \p attention (the attention term of Kaplan et al.).
     *        No activation recomputation.
     * \param attention include the attention term
     * \return FLOPs
     */
    double FlopsPerIteration(bool attention = false) const;

    /**
     * \brief Bytes of the activation tensor of \p tokens tokens at a block
     *        boundary: tokens * d_model * bytesPerActivation. This is what a
     *        pipeline stage sends to the next per micro-batch (and the gradient
     *        sent back), and the size of each TP AllReduce.
     * \param tokens tokens in the micro-batch
     * \return bytes
     */
    double ActivationBytes(uint64_t tokens) const;
};

} // namespace ns3

#endif // GPU_FABRIC_LLM_MODEL_H
