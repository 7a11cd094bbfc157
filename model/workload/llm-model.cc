/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "llm-model.h"

#include "ns3/fabric-error.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ns3
{

namespace
{

/// The per-head dimension: headDim, or d_model / heads when 0
double
HeadDim(const LlmModel& m)
{
    return m.headDim != 0 ? m.headDim : static_cast<double>(m.hiddenSize) / m.heads;
}

/// Forward FLOPs per token of the attention scores and context (Kaplan et al.: 2 s a)
double
AttentionScoreFlopsPerToken(const LlmModel& m)
{
    return 2.0 * m.seqLength * m.heads * HeadDim(m);
}

LlmModel
Dense(std::string name,
      uint32_t layers,
      uint32_t d,
      uint32_t heads,
      uint32_t seq,
      uint32_t vocab,
      uint64_t batchSequences,
      uint32_t mcc,
      std::string source)
{
    LlmModel m;
    m.name = std::move(name);
    m.layers = layers;
    m.hiddenSize = d;
    m.heads = heads;
    m.seqLength = seq;
    m.vocabSize = vocab;
    m.globalBatchTokens = batchSequences * seq;
    m.tpRoundsPerBlock = mcc;
    m.source = std::move(source);
    return m;
}

} // namespace

const std::vector<LlmModel>&
LlmModel::All()
{
    static const std::vector<LlmModel> models = [] {
        std::vector<LlmModel> v;
        // Batches are whole sequences, so the decimal "32M"/"2M" figures are
        // taken as 2^k sequences of 2048 tokens.
        v.push_back(Dense("gpt3-175b",
                          96,
                          12288,
                          96,
                          2048,
                          50257,
                          16384,
                          8,
                          "Brown et al. 2020 (GPT-3) Table 2.1: 96 layers, d_model 12288, 96 "
                          "heads, context 2048, GPT-2 BPE vocabulary 50257. Batch: 32M tokens "
                          "(16384 x 2048) as the rail-only paper uses it; the GPT-3 paper "
                          "itself trained with 3.2M tokens. M_cc = 8 (rail-only paper)"));
        v.push_back(Dense("opt-175b",
                          96,
                          12288,
                          96,
                          2048,
                          50272,
                          1024,
                          8,
                          "Zhang et al. 2022 (OPT) Table 1: 96 layers, 96 heads, d_model 12288, "
                          "batch 2M tokens (1024 x 2048), context 2048; vocabulary 50272 "
                          "(OPT's GPT-2 BPE). M_cc = 8 (rail-only paper)"));
        {
            LlmModel m = Dense("palm-540b",
                               118,
                               18432,
                               48,
                               2048,
                               256000,
                               2048,
                               12,
                               "Chowdhery et al. 2022 (PaLM) Table 1 and Sec. 2: 118 layers, "
                               "d_model 18432, 48 heads of 256, multi-query attention, SwiGLU "
                               "with d_ff = 4 d_model, vocabulary 256k, context 2048; batch "
                               "1M-2M-4M tokens during training (preset: the final 4M = 2048 x "
                               "2048). M_cc = 12 (rail-only paper)");
            m.kvHeads = 1;
            m.headDim = 256;
            m.ffnMatrices = 3;
            v.push_back(m);
        }
        {
            LlmModel m = Dense("gpt-1t",
                               128,
                               25600,
                               160,
                               2048,
                               51200,
                               3072,
                               8,
                               "Narayanan et al. 2021 (Megatron-LM, SC'21) Table 1, the 1T "
                               "model: 128 layers, hidden 25600, 160 heads, sequence 2048, "
                               "vocabulary 51200, batch 3072 sequences; trained there with TP 8, "
                               "PP 64 on 3072 GPUs. M_cc = 8 as for GPT-3");
            m.tiedEmbeddings = true;
            v.push_back(m);
        }
        {
            LlmModel m = Dense("mixtral-8x7b",
                               32,
                               4096,
                               32,
                               32768,
                               32000,
                               128,
                               8,
                               "Jiang et al. 2024 (Mixtral of Experts) Table 1: 32 layers, dim "
                               "4096, 32 heads of 128, 8 KV heads, SwiGLU hidden 14336, 8 experts "
                               "top-2 in every layer, context length 32768 (pretrained with a "
                               "32k-token context), vocabulary 32000, untied embeddings (46.7B "
                               "total, 12.9B active). ASSUMPTIONS (not published): batch 4M "
                               "tokens (128 x 32768), M_cc = 8");
            m.kvHeads = 8;
            m.headDim = 128;
            m.ffnMultiplier = 3.5;
            m.ffnMatrices = 3;
            m.tiedEmbeddings = false;
            m.experts = 8;
            m.topK = 2;
            m.moeLayerInterval = 1;
            v.push_back(m);
        }
        return v;
    }();
    return models;
}

std::vector<std::string>
LlmModel::Names()
{
    std::vector<std::string> names;
    for (const auto& m : All())
    {
        names.push_back(m.name);
    }
    return names;
}

LlmModel
LlmModel::Get(const std::string& name)
{
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) {
        return c == '_' ? '-' : std::tolower(c);
    });
    for (const auto& m : All())
    {
        if (m.name == lower)
        {
            return m;
        }
    }
    throw FabricConfigError("model", name, fmt::format("one of {}", fmt::join(Names(), ", ")));
}

LlmModel
LlmModel::Custom(uint32_t layers,
                 uint32_t hiddenSize,
                 uint32_t heads,
                 uint32_t seqLength,
                 uint32_t vocabSize,
                 uint64_t globalBatchTokens,
                 double ffnMultiplier,
                 uint32_t experts,
                 uint32_t topK)
{
    LlmModel m;
    m.name = "custom";
    m.layers = layers;
    m.hiddenSize = hiddenSize;
    m.heads = heads;
    m.seqLength = seqLength;
    m.vocabSize = vocabSize;
    m.globalBatchTokens = globalBatchTokens;
    m.ffnMultiplier = ffnMultiplier;
    m.experts = experts;
    m.topK = topK;
    m.source = "user-defined";
    m.Validate();
    return m;
}

void
LlmModel::Validate() const
{
    FabricRequire(layers >= 1, "model layers", layers, "an integer >= 1");
    FabricRequire(hiddenSize >= 1, "model hidden size (d_model)", hiddenSize, "an integer >= 1");
    FabricRequire(heads >= 1, "model heads", heads, "an integer >= 1");
    FabricRequire(headDim != 0 || hiddenSize % heads == 0,
                  "model heads",
                  heads,
                  fmt::format("a divisor of d_model {} (or set the head dimension)", hiddenSize));
    FabricRequire(kvHeads <= heads && (kvHeads == 0 || heads % kvHeads == 0),
                  "model KV heads",
                  kvHeads,
                  fmt::format("0 (= heads) or a divisor of heads {}", heads));
    FabricRequire(seqLength >= 1, "model sequence length", seqLength, "an integer >= 1");
    FabricRequire(vocabSize >= 1, "model vocabulary", vocabSize, "an integer >= 1");
    FabricRequire(std::isfinite(ffnMultiplier) && ffnMultiplier > 0,
                  "model FFN multiplier",
                  ffnMultiplier,
                  "a positive number (d_ff / d_model)");
    FabricRequire(ffnMatrices == 2 || ffnMatrices == 3,
                  "model FFN matrices",
                  ffnMatrices,
                  "2 (GELU MLP) or 3 (SwiGLU)");
    FabricRequire(experts == 0 || experts == 1 || (topK >= 1 && topK <= experts),
                  "model top-k",
                  topK,
                  fmt::format("between 1 and the number of experts {}", experts));
    FabricRequire(moeLayerInterval >= 1 && moeLayerInterval <= layers,
                  "model MoE layer interval",
                  moeLayerInterval,
                  fmt::format("between 1 and the number of layers {}", layers));
    FabricRequire(globalBatchTokens >= seqLength && globalBatchTokens % seqLength == 0,
                  "model global batch (tokens)",
                  globalBatchTokens,
                  fmt::format("a positive multiple of the sequence length {}", seqLength));
    FabricRequire(tpRoundsPerBlock >= 2 && tpRoundsPerBlock % 4 == 0,
                  "model M_cc (TP rounds per block)",
                  tpRoundsPerBlock,
                  "a positive multiple of 4 (2 rounds per AllReduce, as many AllReduces in the "
                  "backward as in the forward pass)");
    FabricRequire(bytesPerParam >= 1, "model bytes per parameter", bytesPerParam, ">= 1");
    FabricRequire(bytesPerActivation >= 1,
                  "model bytes per activation",
                  bytesPerActivation,
                  ">= 1");
}

bool
LlmModel::IsMoe() const
{
    return experts > 1;
}

uint64_t
LlmModel::FfnSize() const
{
    return static_cast<uint64_t>(std::llround(ffnMultiplier * hiddenSize));
}

uint32_t
LlmModel::MoeLayers() const
{
    return IsMoe() ? layers / moeLayerInterval : 0;
}

uint64_t
LlmModel::GlobalBatchSequences() const
{
    return globalBatchTokens / seqLength;
}

double
LlmModel::AttentionParams() const
{
    const double d = hiddenSize;
    const double hd = HeadDim(*this);
    const double a = heads * hd;
    const double akv = (kvHeads != 0 ? kvHeads : heads) * hd;
    return 2.0 * d * a + 2.0 * d * akv;
}

double
LlmModel::FfnParams() const
{
    return static_cast<double>(ffnMatrices) * hiddenSize * static_cast<double>(FfnSize());
}

double
LlmModel::DenseBlockParams() const
{
    return AttentionParams() + FfnParams();
}

double
LlmModel::MoeBlockParams() const
{
    return AttentionParams() + std::max<uint32_t>(experts, 1) * FfnParams();
}

double
LlmModel::MoeBlockActiveParams() const
{
    return AttentionParams() + (IsMoe() ? topK : 1) * FfnParams();
}

double
LlmModel::EmbeddingParams() const
{
    return (tiedEmbeddings ? 1.0 : 2.0) * vocabSize * static_cast<double>(hiddenSize);
}

double
LlmModel::TotalParams() const
{
    const uint32_t moe = MoeLayers();
    return (layers - moe) * DenseBlockParams() + moe * MoeBlockParams() + EmbeddingParams();
}

double
LlmModel::ActiveParams() const
{
    const uint32_t moe = MoeLayers();
    return (layers - moe) * DenseBlockParams() + moe * MoeBlockActiveParams() + EmbeddingParams();
}

double
LlmModel::BlockParamBytes() const
{
    return DenseBlockParams() * bytesPerParam;
}

double
LlmModel::BlockForwardFlopsPerToken(uint32_t block, bool attention) const
{
    // block k is an MoE block when (k + 1) is a multiple of the interval, so
    // that an interval of 2 puts experts in every second block
    const bool moe = IsMoe() && (block + 1) % moeLayerInterval == 0;
    double flops = 2.0 * (moe ? MoeBlockActiveParams() : DenseBlockParams());
    if (attention)
    {
        flops += AttentionScoreFlopsPerToken(*this);
    }
    return flops;
}

double
LlmModel::AttentionForwardFlopsPerToken(bool attention) const
{
    return 2.0 * AttentionParams() + (attention ? AttentionScoreFlopsPerToken(*this) : 0.0);
}

double
LlmModel::FlopsPerIteration(bool attention) const
{
    double perToken = 6.0 * ActiveParams();
    if (attention)
    {
        perToken += 6.0 * layers * static_cast<double>(seqLength) * heads * HeadDim(*this);
    }
    return perToken * static_cast<double>(globalBatchTokens);
}

double
LlmModel::ActivationBytes(uint64_t tokens) const
{
    return static_cast<double>(tokens) * hiddenSize * bytesPerActivation;
}

} // namespace ns3
