/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Inference serving: the pass programs have the model's compute and comms;
// one request on an idle fabric takes its compute plus its collectives
// (each as long as alone, and as the alpha-beta formulas), its KV cache
// bytes / NIC rate + latency; requests far apart all take that; requests
// arriving faster than prefills queue exactly as Lindley's recursion says;
// continuous batching runs the counted steps; same seed, same results; bad
// configs and flags are refused by name (the program exits 2).
#include "program-run.h"

#include "ns3/collective-metrics.h"
#include "ns3/core-module.h"
#include "ns3/gpu-fabric-module.h"
#include "ns3/serving-workload.h"
#include "ns3/transport-helper.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <gtest/gtest.h>

using namespace ns3;

namespace
{

constexpr double kPayloadShare = 4096.0 / 4122.0; // goodput of a full packet

/// A small dense GPT: 2 blocks of d_model 2048, 16 heads.
LlmModel
SmallGpt()
{
    return LlmModel::Custom(2, 2048, 16, 2048, 8192, 2048);
}

/// A small MoE: 2 blocks of d_model 1024, 8 experts, top-2.
LlmModel
SmallMoe()
{
    return LlmModel::Custom(2, 1024, 16, 2048, 8192, 2048, 4.0, 8, 2);
}

/// A 32-GPU DGX-H100 serving job of SmallGpt on TP 8.
ServingConfig
Config()
{
    ServingConfig c;
    c.model = SmallGpt();
    c.gpus = 32;
    c.gpusPerDomain = 8;
    c.tp = 8;
    c.gpuFlops = HbDomainPreset::Get("dgx-h100").gpuFlops;
    c.requests = 1;
    c.promptTokens = 2048;
    c.outputTokens = 5;
    c.rate = 10;
    return c;
}

/// The 32-GPU DGX-H100 cluster.
ClusterParams
Cluster()
{
    ClusterParams cp;
    cp.gpus = 32;
    cp.platform = HbDomainPreset::Get("dgx-h100");
    return cp;
}

/// Serve \p c on \p topology (flow level unless \p backend says).
std::vector<ServingRequestResult>
Serve(const ServingConfig& c,
      const std::string& topology = "rail-only",
      const std::string& backend = "flow",
      uint64_t* decodeSteps = nullptr,
      uint32_t* maxBatch = nullptr)
{
    InstalledTransport t =
        TransportHelper(backend, "backend").Install(TopologyHelper(Cluster()).Create(topology));
    Ptr<ServingSimulation> sim = RunServing(c, t.transport);
    EXPECT_TRUE(sim->IsComplete()) << sim->GetFailureReport();
    EXPECT_EQ(sim->GetPrefills(), c.requests);
    auto results = sim->GetResults();
    if (decodeSteps)
    {
        *decodeSteps = sim->GetDecodeSteps();
    }
    if (maxBatch)
    {
        *maxBatch = sim->GetMaxBatchRun();
    }
    sim->Dispose();
    t.Dispose();
    Simulator::Destroy();
    return results;
}

/// Seconds one comm takes alone on an idle rail-only fabric (flow level).
double
Alone(const ProgramComm& comm)
{
    ParallelProgram p;
    p.ranks = 32;
    p.tasks.resize(32);
    p.comms.push_back(comm);
    for (uint32_t m : comm.members)
    {
        p.tasks[m].push_back({ProgramTask::Kind::Comm, 0, 0, {}});
    }
    InstalledTransport t = TransportHelper("flow", "backend").Install(BuildRailOnly(Cluster()));
    Ptr<ProgramRunner> r = RunProgram(p, t.transport);
    EXPECT_TRUE(r->IsComplete());
    const double s = r->GetFinishTime().GetSeconds();
    t.Dispose();
    Simulator::Destroy();
    return s;
}

/// TP AllReduce of \p bytes over GPUs 0..7, alone.
double
AllReduceAlone(uint64_t bytes)
{
    return Alone({"allreduce", "ring", {0, 1, 2, 3, 4, 5, 6, 7}, bytes, 0, 0, "ar"});
}

/// Alpha of one message: two cables and one store-and-forward packet.
double
Alpha(double cableDelayS, double hopRateBps)
{
    return 2 * cableDelayS + 4122 * 8.0 / hopRateBps;
}

TEST(Serving, KvCacheBytesAndPassPrograms)
{
    // Mixtral: 2 x 32 layers x 8 KV heads x 128 x tokens x 2 bytes
    ServingConfig m = Config();
    m.model = LlmModel::Get("mixtral-8x7b");
    EXPECT_EQ(m.KvCacheBytes(1000), 2ULL * 32 * 8 * 128 * 1000 * 2);
    // GPT (no GQA): 2 x layers x d x tokens x 2
    EXPECT_EQ(Config().KvCacheBytes(10), 2ULL * 2 * 2048 * 10 * 2);

    // dense, TP 8, layer granularity: 2 AllReduces per block of A(tokens)
    const ServingConfig c = Config();
    const ParallelProgram p = BuildServingPass(c, c.PrefillGpus(), 100, 1);
    ASSERT_EQ(p.comms.size(), 4U);
    for (const auto& comm : p.comms)
    {
        EXPECT_EQ(comm.collective, "allreduce");
        EXPECT_EQ(comm.bytes, 100ULL * 2048 * 2);
        EXPECT_EQ(comm.members.size(), 8U);
    }
    double compute = 0;
    for (const auto& task : p.tasks[3])
    {
        compute += task.kind == ProgramTask::Kind::Compute ? task.seconds : 0;
    }
    // 2 d^2-blocks of 12 d^2 params, 2 FLOPs each per token, over 8 GPUs;
    // the output layer 2 V d for the one sequence
    const double d = 2048;
    const double want = (2 * 12 * d * d * 100 * 2 + 2 * 8192 * d) / 8 / c.gpuFlops;
    EXPECT_NEAR(compute, want, 1e-12 * want);
    EXPECT_NEAR(c.PassComputeSeconds(100, 1), want, 1e-12 * want);
    EXPECT_TRUE(p.tasks[8].empty()); // outside the instance

    // the memory roofline: a decode step of 1 token reads every weight
    ServingConfig hbm = c;
    hbm.memoryBandwidth = 3e12;
    const double weights = (2 * 12 * d * d + 8192 * d) * 2 / 8;
    EXPECT_NEAR(hbm.PassComputeSeconds(1, 1), weights / 3e12, 1e-12);

    // MoE, TP 4 x EP 2: per block 2 AllReduces per TP group (2) and a
    // dispatch and a combine AllToAll per TP index (4), t x topK x d x 2 / TP
    ServingConfig e = Config();
    e.model = SmallMoe();
    e.tp = 4;
    e.ep = 2;
    const ParallelProgram q = BuildServingPass(e, e.PrefillGpus(), 16, 16);
    uint32_t ar = 0;
    uint32_t a2a = 0;
    for (const auto& comm : q.comms)
    {
        if (comm.collective == "alltoall")
        {
            ++a2a;
            EXPECT_EQ(comm.bytes, 8ULL * 2 * 1024 * 2 / 4);
            ASSERT_EQ(comm.members.size(), 2U);
            EXPECT_EQ(comm.members[1] - comm.members[0], 4U); // same TP index
        }
        else
        {
            ++ar;
            EXPECT_EQ(comm.bytes, 8ULL * 1024 * 2);
            EXPECT_EQ(comm.members.size(), 4U);
        }
    }
    EXPECT_EQ(ar, 2U * 2 * 2);
    EXPECT_EQ(a2a, 2U * 2 * 4);
    // "pass": one AllReduce per group and one AllToAll per TP index, same bytes
    e.granularity = "pass";
    const ParallelProgram r = BuildServingPass(e, e.PrefillGpus(), 16, 16);
    uint64_t arBytes = 0;
    uint64_t a2aBytes = 0;
    for (const auto& comm : r.comms)
    {
        (comm.collective == "alltoall" ? a2aBytes : arBytes) += comm.bytes;
    }
    EXPECT_EQ(r.comms.size(), 2U + 4U);
    EXPECT_EQ(arBytes, 2ULL * 2 * 2 * 8 * 1024 * 2);
    EXPECT_EQ(a2aBytes, 4ULL * 2 * 2 * (8 * 2 * 1024 * 2 / 4));
}

TEST(Serving, OneRequestTakesComputePlusCollectives)
{
    ServingConfig c = Config();
    const double arPrompt = AllReduceAlone(c.model.ActivationBytes(c.promptTokens));
    const double arToken = AllReduceAlone(c.model.ActivationBytes(1));
    const uint32_t allReduces = 2 * c.model.layers;
    const double prefill = c.PassComputeSeconds(c.promptTokens, 1) + allReduces * arPrompt;
    const double step = c.PassComputeSeconds(1, 1) + allReduces * arToken;

    // the AllReduce of the prompt as the alpha-beta formula (NVLink)
    const HbDomainPreset h100 = HbDomainPreset::Get("dgx-h100");
    AlphaBetaParams nv;
    nv.alpha =
        Alpha(h100.nvlinkLatency.GetSeconds(), h100.nvlinkRate.GetBitRate() / h100.nvswitchPlanes);
    nv.linkRateBps = h100.nvlinkRate.GetBitRate() * kPayloadShare;
    const double formula =
        PredictedTime("allreduce", "ring", 8, c.model.ActivationBytes(c.promptTokens), nv);
    EXPECT_NEAR(arPrompt / formula, 1.0, 0.03) << arPrompt << " vs " << formula;

    for (const char* topology : {"rail-only", "fat-tree"})
    {
        const auto r = Serve(c, topology)[0];
        EXPECT_NEAR(r.Ttft(), prefill, 1e-8) << topology;
        EXPECT_NEAR(r.Tpot(), step, 1e-8) << topology;
        EXPECT_EQ(r.tokens, c.outputTokens);
    }

    // disaggregated: the same first token; then the KV cache, GPU i to GPU
    // 8 + i on its rail, bytes / NIC rate + latency, then the decode steps
    c.disaggregated = true;
    const uint64_t kvBytes = c.KvCacheBytes(c.promptTokens) / 8;
    const double kv = Alone({"sendrecv", "", {0, 8}, kvBytes, 0, 0, "kv"});
    AlphaBetaParams nic;
    nic.alpha = Alpha(Cluster().linkDelayNs * 1e-9, h100.nicRate.GetBitRate());
    nic.linkRateBps = h100.nicRate.GetBitRate() * kPayloadShare;
    EXPECT_NEAR(kv / SendRecvTime(kvBytes, nic), 1.0, 0.01);
    EXPECT_EQ(c.DecodeGpus().front(), 8U);
    const auto r = Serve(c)[0];
    EXPECT_NEAR(r.Ttft(), prefill, 1e-8);
    EXPECT_NEAR(r.kvReady - r.firstToken, kv, 1e-8);
    EXPECT_NEAR(r.lastToken - r.firstToken, kv + (c.outputTokens - 1) * step, 1e-8);
}

TEST(Serving, RequestsFarApartAllTakeTheSameTime)
{
    ServingConfig c = Config();
    c.requests = 6;
    c.rate = 20; // 50 ms apart on average; a request takes about 2 ms
    const auto one = Serve([&] {
        ServingConfig s = c;
        s.requests = 1;
        return s;
    }())[0];
    const double service = one.lastToken - one.arrival;
    const auto all = Serve(c);
    for (size_t i = 0; i < all.size(); ++i)
    {
        if (i > 0)
        {
            ASSERT_GT(all[i].arrival - all[i - 1].arrival, service) << "not far apart: " << i;
        }
        EXPECT_NEAR(all[i].Ttft(), one.Ttft(), 2e-9) << i;
        EXPECT_NEAR(all[i].Tpot(), one.Tpot(), 2e-9) << i;
    }
}

TEST(Serving, PrefillQueueFollowsLindleysRecursion)
{
    // disaggregated: the prefill group serves one request at a time, FIFO,
    // and nothing else runs on its NVLink; requests 1 us apart on average
    // queue: first token i = max(arrival i, first token i-1) + prefill
    ServingConfig c = Config();
    c.disaggregated = true;
    c.requests = 6;
    c.rate = 1e6;
    const double prefill = Serve([&] {
                               ServingConfig s = c;
                               s.requests = 1;
                               return s;
                           }())[0]
                               .Ttft();
    const auto all = Serve(c);
    double done = 0;
    for (size_t i = 0; i < all.size(); ++i)
    {
        done = std::max(all[i].arrival, done) + prefill;
        EXPECT_NEAR(all[i].firstToken, done, 1e-8 * (i + 1)) << i;
        if (i > 0)
        {
            EXPECT_GT(all[i].Ttft(), all[i - 1].Ttft()) << i;
        }
    }
    // all arrived before the first prefill ended: the last waited for 5
    EXPECT_LT(all.back().arrival, prefill);
    EXPECT_NEAR(all.back().Ttft(), 6 * prefill - (all.back().arrival - all[0].arrival), 1e-7);
}

TEST(Serving, ContinuousBatchingRunsTheCountedSteps)
{
    // co-located, all 6 requests there at once: prefill first while the
    // batch has room, then decode steps until the batch empties
    ServingConfig c = Config();
    c.requests = 6;
    c.rate = 1e7;
    for (uint32_t batch : {6U, 2U, 4U})
    {
        c.maxBatch = batch;
        uint64_t steps = 0;
        uint32_t largest = 0;
        const auto all = Serve(c, "rail-only", "flow", &steps, &largest);
        // batches of `batch` (the last may be smaller), outputTokens - 1 steps each
        EXPECT_EQ(steps, (6 + batch - 1) / batch * (c.outputTokens - 1)) << batch;
        EXPECT_EQ(largest, batch) << batch;
        for (const auto& r : all)
        {
            EXPECT_EQ(r.tokens, c.outputTokens);
            EXPECT_GT(r.lastToken, r.firstToken);
        }
    }
}

TEST(Serving, SameSeedSameResults)
{
    ServingConfig c = Config();
    c.model = SmallMoe();
    c.tp = 4;
    c.ep = 4;
    c.requests = 8;
    c.rate = 2000;
    c.outputTokens = 4;
    c.promptTokens = 256;
    c.maxBatch = 4;
    c.disaggregated = true;
    for (const char* backend : {"flow", "packet"})
    {
        const auto a = Serve(c, "rail-only", backend);
        const auto b = Serve(c, "rail-only", backend);
        ASSERT_EQ(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i)
        {
            EXPECT_EQ(a[i].arrival, b[i].arrival) << backend << i;
            EXPECT_EQ(a[i].firstToken, b[i].firstToken) << backend << i;
            EXPECT_EQ(a[i].lastToken, b[i].lastToken) << backend << i;
        }
    }
    EXPECT_EQ(ServingArrivals(c), ServingArrivals(c));
    ServingConfig other = c;
    other.seed = 2;
    EXPECT_NE(ServingArrivals(c), ServingArrivals(other));
    // the mean gap is 1 / rate (200 draws: within 30 %)
    other.requests = 200;
    EXPECT_NEAR(ServingArrivals(other).back() / 200, 1 / c.rate, 0.3 / c.rate);
}

TEST(Serving, PercentileIsNearestRank)
{
    const std::vector<double> v = {5, 1, 4, 2, 3, 10, 9, 8, 7, 6};
    EXPECT_EQ(ServingPercentile(v, 50), 5);
    EXPECT_EQ(ServingPercentile(v, 90), 9);
    EXPECT_EQ(ServingPercentile(v, 99), 10);
    EXPECT_EQ(ServingPercentile(v, 10), 1);
    EXPECT_EQ(ServingPercentile({3}, 99), 3);
}

TEST(Serving, BadConfigsAreRefusedByName)
{
    auto refused = [](const ServingConfig& c, const std::string& parameter) {
        try
        {
            c.Validate();
            ADD_FAILURE() << "accepted, wanted " << parameter;
        }
        catch (const FabricConfigError& e)
        {
            EXPECT_EQ(e.Parameter(), parameter) << e.what();
        }
    };
    ServingConfig c = Config();
    c.tp = 3;
    refused(c, "tp");
    c = Config();
    c.ep = 2; // a dense model
    refused(c, "ep");
    c = Config();
    c.disaggregated = true;
    c.gpus = 15; // prefill 0..7, decode 8..15
    refused(c, "gpus");
    c.gpus = 16;
    EXPECT_NO_THROW(c.Validate());
    c = Config();
    c.outputTokens = 1;
    refused(c, "output-tokens");
    c = Config();
    c.rate = 0;
    refused(c, "rate");
    c = Config();
    c.granularity = "block";
    refused(c, "granularity");
    c = Config();
    c.maxBatch = 0;
    refused(c, "batch");
    c = Config();
    c.instances = 0;
    refused(c, "instances");
    c.instances = 5; // four domains of 8 for TP 8
    refused(c, "instances");
    c.instances = 4;
    EXPECT_NO_THROW(c.Validate());
    c.disaggregated = true;
    refused(c, "instances"); // two slots each
    c.instances = 2;
    EXPECT_NO_THROW(c.Validate());
    // one field wrong at a time
    const std::vector<std::pair<std::function<void(ServingConfig&)>, std::string>> wrong = {
        {[](ServingConfig& x) { x.promptDistribution = "normal"; }, "prompt-dist"},
        {[](ServingConfig& x) { x.outputDistribution = ""; }, "output-dist"},
        {[](ServingConfig& x) { x.dispatch = "random"; }, "dispatch"},
        {[](ServingConfig& x) { x.promptTokens = 0; }, "prompt-tokens"},
        {[](ServingConfig& x) { x.promptSigma = 0; }, "prompt-sigma"},
        {[](ServingConfig& x) { x.promptSigma = 2.01; }, "prompt-sigma"},
        {[](ServingConfig& x) { x.outputSigma = -1; }, "output-sigma"},
        {[](ServingConfig& x) { x.outputSigma = std::nan(""); }, "output-sigma"},
    };
    for (const auto& [change, field] : wrong)
    {
        c = Config();
        change(c);
        refused(c, field);
    }
}

// Four co-located instances (one DGX-H100 domain each) with one request
// each, arriving together and dispatched round robin: each request takes
// its own prompt's prefill (compute plus its TP AllReduces, alone: the
// instances' NVLink domains share nothing) and its own output length of
// decode steps. Two disaggregated instances (prefill on domains 0 and 2,
// decode on 1 and 3): the KV caches cross on different rails' ports.
TEST(Serving, InstancesServeOneRequestEachInTheClosedForm)
{
    // the default run's drawn lengths: with RngRun 6's (7 output tokens), a
    // disaggregated request's decode ends 10 ns before its closed form
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(1);
    ServingConfig c = Config();
    c.instances = 4;
    c.requests = 4;
    c.rate = 1e6; // all four within microseconds
    c.promptDistribution = "uniform";
    c.outputDistribution = "uniform";
    c.promptTokens = 1024;
    c.outputTokens = 5;
    const ServingLengths lengths = DrawServingLengths(c);
    const uint32_t allReduces = 2 * c.model.layers;
    const double arToken = AllReduceAlone(c.model.ActivationBytes(1));
    const double step = c.PassComputeSeconds(1, 1) + allReduces * arToken;
    std::vector<double> prefill;
    for (uint32_t i = 0; i < c.requests; ++i)
    {
        // the lengths are drawn: [512, 1536] and [3, 7]
        EXPECT_GE(lengths.prompt[i], 512U);
        EXPECT_LE(lengths.prompt[i], 1536U);
        EXPECT_GE(lengths.output[i], 3U);
        EXPECT_LE(lengths.output[i], 7U);
        prefill.push_back(c.PassComputeSeconds(lengths.prompt[i], 1) +
                          allReduces * AllReduceAlone(c.model.ActivationBytes(lengths.prompt[i])));
    }
    EXPECT_NE(lengths.prompt[0], lengths.prompt[1]); // (this seed's draws differ)
    EXPECT_EQ(c.PrefillGpus(3).front(), 24U);
    EXPECT_EQ(c.DecodeGpus(3), c.PrefillGpus(3));
    for (const char* topology : {"rail-only", "fat-tree"})
    {
        const auto results = Serve(c, topology);
        for (uint32_t i = 0; i < c.requests; ++i)
        {
            const auto& r = results[i];
            EXPECT_EQ(r.instance, i) << topology;
            EXPECT_EQ(r.promptTokens, lengths.prompt[i]);
            EXPECT_EQ(r.outputTokens, lengths.output[i]);
            EXPECT_EQ(r.tokens, lengths.output[i]);
            EXPECT_NEAR(r.Ttft(), prefill[i], 1e-8) << topology << " request " << i;
            EXPECT_NEAR(r.Tpot(), step, 1e-8) << topology << " request " << i;
        }
    }

    c.disaggregated = true;
    c.instances = 2;
    c.requests = 2;
    EXPECT_EQ(c.MaxInstances(), 2U);
    EXPECT_EQ(c.PrefillGpus(1).front(), 16U);
    EXPECT_EQ(c.DecodeGpus(1).front(), 24U);
    const auto results = Serve(c);
    for (uint32_t i = 0; i < c.requests; ++i)
    {
        const auto& r = results[i];
        const uint64_t kvBytes = c.KvCacheBytes(lengths.prompt[i]) / 8;
        const double kv = Alone({"sendrecv", "", {8 * 2 * i, 8 * 2 * i + 8}, kvBytes, 0, 0, "kv"});
        EXPECT_EQ(r.instance, i);
        EXPECT_NEAR(r.Ttft(), prefill[i], 1e-8) << i;
        EXPECT_NEAR(r.kvReady - r.firstToken, kv, 1e-8) << i;
        EXPECT_NEAR(r.lastToken - r.firstToken, kv + (lengths.output[i] - 1) * step, 1e-8) << i;
    }
}

TEST(Serving, LengthDistributionsAreSeededWithTheirMeans)
{
    ServingConfig c = Config();
    c.requests = 4000;
    c.promptTokens = 1000;
    c.outputTokens = 100;
    auto mean = [](const std::vector<uint32_t>& v) {
        double s = 0;
        for (uint32_t x : v)
        {
            s += x;
        }
        return s / v.size();
    };
    const ServingLengths fixed = DrawServingLengths(c);
    EXPECT_EQ(fixed.prompt, std::vector<uint32_t>(4000, 1000));
    EXPECT_EQ(fixed.output, std::vector<uint32_t>(4000, 100));

    c.promptDistribution = "uniform";
    c.outputDistribution = "uniform";
    const ServingLengths u = DrawServingLengths(c);
    EXPECT_EQ(*std::min_element(u.prompt.begin(), u.prompt.end()), 500U);
    EXPECT_EQ(*std::max_element(u.prompt.begin(), u.prompt.end()), 1500U);
    EXPECT_EQ(*std::min_element(u.output.begin(), u.output.end()), 50U);
    EXPECT_EQ(*std::max_element(u.output.begin(), u.output.end()), 150U);
    // 4000 draws: the standard error is 289 / 63 = 4.6 tokens
    EXPECT_NEAR(mean(u.prompt), 1000, 20);
    EXPECT_NEAR(mean(u.output), 100, 2);
    EXPECT_EQ(DrawServingLengths(c).prompt, u.prompt); // same seed, same draws
    ServingConfig same = c;
    same.outputTokens = same.promptTokens;
    const ServingLengths s = DrawServingLengths(same);
    EXPECT_NE(s.prompt, s.output); // their own streams

    c.promptDistribution = "exponential";
    c.outputDistribution = "exponential";
    const ServingLengths e = DrawServingLengths(c);
    EXPECT_GE(*std::min_element(e.prompt.begin(), e.prompt.end()), 1U);
    EXPECT_GE(*std::min_element(e.output.begin(), e.output.end()), 2U);
    EXPECT_LE(*std::max_element(e.prompt.begin(), e.prompt.end()), 16000U);
    // standard error 999 / 63 = 16 tokens
    EXPECT_NEAR(mean(e.prompt), 1000, 60);
    EXPECT_NEAR(mean(e.output), 100, 6);
    ServingConfig other = c;
    other.seed = 2;
    EXPECT_NE(DrawServingLengths(other).prompt, e.prompt);
    EXPECT_EQ(DrawServingLengths(c).output, e.output);
    // an output mean of 2 can only be 2
    c.outputTokens = 2;
    EXPECT_EQ(DrawServingLengths(c).output, std::vector<uint32_t>(4000, 2));

    // a whole run: same seed, bit-identical results; least-loaded sends a
    // request to the instance with the fewest unfinished ones
    ServingConfig run = Config();
    run.model = SmallMoe();
    run.tp = 4;
    run.ep = 2;
    run.instances = 3;
    run.dispatch = "least-loaded";
    run.requests = 12;
    run.rate = 1e5; // 10 us apart: they overlap
    run.promptTokens = 256;
    run.outputTokens = 6;
    run.maxBatch = 4;
    run.promptDistribution = "exponential";
    run.outputDistribution = "uniform";
    const auto a = Serve(run);
    const auto b = Serve(run);
    ASSERT_EQ(a.size(), b.size());
    std::vector<uint32_t> served(3, 0);
    for (size_t i = 0; i < a.size(); ++i)
    {
        EXPECT_EQ(a[i].arrival, b[i].arrival) << i;
        EXPECT_EQ(a[i].firstToken, b[i].firstToken) << i;
        EXPECT_EQ(a[i].lastToken, b[i].lastToken) << i;
        EXPECT_EQ(a[i].instance, b[i].instance) << i;
        EXPECT_EQ(a[i].tokens, a[i].outputTokens) << i;
        ++served.at(a[i].instance);
    }
    for (uint32_t n : served)
    {
        EXPECT_GE(n, 1U); // every instance got work
    }
    run.dispatch = "round-robin";
    const auto rr = Serve(run);
    for (size_t i = 0; i < rr.size(); ++i)
    {
        EXPECT_EQ(rr[i].instance, i % 3);
    }
}

// Lognormal lengths: m + round(X), X lognormal of mean M - m and log sigma:
// the sample mean is M and the sample median m + (M - m) exp(-sigma^2 / 2)
// (the exponential's median would be m + (M - m) ln 2: 86 tokens more here).
TEST(Serving, LognormalLengthsHaveTheirMeanAndMedian)
{
    ServingConfig c = Config();
    c.requests = 4000;
    c.promptTokens = 1000;
    c.outputTokens = 100;
    c.promptDistribution = "lognormal";
    c.outputDistribution = "lognormal";
    auto mean = [](const std::vector<uint32_t>& v) {
        double s = 0;
        for (uint32_t x : v)
        {
            s += x;
        }
        return s / v.size();
    };
    auto median = [](std::vector<uint32_t> v) {
        std::sort(v.begin(), v.end());
        return 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
    };
    for (double sigma : {1.0, 0.5})
    {
        SCOPED_TRACE(sigma);
        c.promptSigma = sigma;
        c.outputSigma = sigma;
        const ServingLengths l = DrawServingLengths(c);
        // the standard deviation of X is (M - m) sqrt(exp(sigma^2) - 1):
        // 1310 tokens at sigma 1, over sqrt(4000) = 63: a standard error of
        // 21 tokens (prompts), 2 (outputs); 4 standard errors allowed
        const double spread = std::sqrt(std::exp(sigma * sigma) - 1) / std::sqrt(4000.0);
        EXPECT_NEAR(mean(l.prompt), 1000, 4 * 999 * spread);
        EXPECT_NEAR(mean(l.output), 100, 4 * 98 * spread);
        // the median's standard error: median sigma sqrt(2 pi) / (2 sqrt(n))
        const double promptMedian = 1 + 999 * std::exp(-sigma * sigma / 2);
        const double outputMedian = 2 + 98 * std::exp(-sigma * sigma / 2);
        const double medianError = sigma * std::sqrt(2 * M_PI) / (2 * std::sqrt(4000.0));
        EXPECT_NEAR(median(l.prompt), promptMedian, 4 * promptMedian * medianError + 1);
        EXPECT_NEAR(median(l.output), outputMedian, 4 * outputMedian * medianError + 1);
        EXPECT_GE(*std::min_element(l.prompt.begin(), l.prompt.end()), 1U);
        EXPECT_GE(*std::min_element(l.output.begin(), l.output.end()), 2U);
        EXPECT_LE(*std::max_element(l.prompt.begin(), l.prompt.end()), 64000U);
        EXPECT_EQ(DrawServingLengths(c).prompt, l.prompt); // same seed, same draws
        ServingConfig other = c;
        other.seed = 9;
        EXPECT_NE(DrawServingLengths(other).output, l.output);
    }
    // the arrivals do not change with the distribution
    ServingConfig fixed = c;
    fixed.promptDistribution = "fixed";
    EXPECT_EQ(ServingArrivals(fixed), ServingArrivals(c));
    // an output mean of 2 can only be 2
    c.outputTokens = 2;
    EXPECT_EQ(DrawServingLengths(c).output, std::vector<uint32_t>(4000, 2));
}

// A decode step reads the weights and the KV cache of its requests'
// contexts from HBM: with a memory bandwidth B and a memory-bound step of
// B requests, step = (W + KV(sum of contexts) / G) / B + its AllReduces,
// W the weight bytes a GPU holds; a request's context at its j-th step is
// its prompt plus j tokens. One request of P + N tokens alone: TPOT = W / B
// + KV(P + N / 2) / (G B) + 4 AllReduces (the mean context of its N - 1
// steps is P + N / 2). Two requests prefilled back to back decode together:
// each step j reads 2 (P + j) tokens.
TEST(Serving, DecodeStepsReadTheKvCacheOfTheirContext)
{
    ServingConfig c = Config();
    // a slow HBM, so that one token's KV read (0.68 us here) is well above
    // the simulator's rounding of the step's tasks to nanoseconds
    const double bw = 3e9;
    c.memoryBandwidth = bw;
    c.outputTokens = 9;
    const double d = 2048;
    const double weights = (2 * 12 * d * d + 8192 * d) * 2 / 8; // bytes per GPU
    const double kvPerToken = 2.0 * 2 * d * 2;                  // K and V, 2 layers, 2 bytes
    EXPECT_EQ(c.KvCacheBytes(1), kvPerToken);
    // the pass's compute: memory bound, weights plus the context's KV over G
    EXPECT_NEAR(c.PassComputeSeconds(1, 1, 3000), (weights + 3000 * kvPerToken / 8) / bw, 1e-12);
    EXPECT_NEAR(c.PassComputeSeconds(1, 1, 0), weights / bw, 1e-15);
    const uint32_t allReduces = 2 * c.model.layers;
    const double ar1 = AllReduceAlone(c.model.ActivationBytes(1));
    const double prefill = c.PassComputeSeconds(c.promptTokens, 1) +
                           allReduces * AllReduceAlone(c.model.ActivationBytes(c.promptTokens));
    const double n = c.outputTokens;
    const double p = c.promptTokens;
    const double tpot = (weights + (p + n / 2) * kvPerToken / 8) / bw + allReduces * ar1;
    for (const char* topology : {"rail-only", "fat-tree"})
    {
        const auto r = Serve(c, topology)[0];
        EXPECT_NEAR(r.Ttft(), prefill, 1e-7) << topology;
        EXPECT_NEAR(r.Tpot(), tpot, 1e-7) << topology;
        // longer than a step that reads no KV cache by KV(P + N / 2) / (G B)
        EXPECT_GT(r.Tpot() - (weights / bw + allReduces * ar1),
                  0.99 * (p + n / 2) * kvPerToken / 8 / bw);
    }

    c.requests = 2;
    c.rate = 1e7; // both there before the first prefill ends
    const double ar2 = AllReduceAlone(c.model.ActivationBytes(2));
    double steps = 0;
    for (uint32_t j = 1; j < c.outputTokens; ++j)
    {
        steps += (weights + 2 * (p + j) * kvPerToken / 8) / bw + allReduces * ar2;
    }
    const auto both = Serve(c);
    // the first waits for the second's prefill, then both decode together
    EXPECT_NEAR(both[0].lastToken - both[0].firstToken, prefill + steps, 1e-7);
    EXPECT_NEAR(both[1].lastToken - both[1].firstToken, steps, 1e-7);
    EXPECT_NEAR(both[1].firstToken - both[0].firstToken, prefill, 1e-7);
}

TEST(ServingStudy, BadFlagsExitTwoNamingTheFlag)
{
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"--model=llama-9", "--model"},
        {"--preset=dgx-z", "--preset"},
        {"--tp=3", "--tp"},
        {"--model=gpt3-175b --tp=8", "--ep"},
        {"--disaggregated --gpus=16", "--gpus"},
        {"--topology=torus", "--topology"},
        {"--backend=fluid", "--backend"},
        {"--rate=0", "--rate"},
        {"--output-tokens=1", "--output-tokens"},
        {"--granularity=block", "--granularity"},
        {"--gpus=20", "--gpus"},
        {"--compute-efficiency=1e-300", "--compute-efficiency"},
        {"--requests=100000 --GpuFabricMaxRunSeconds=1", "--requests"},
        {"--rate=1e-9", "--requests"},
        {"--instances=0", "--instances"},
        {"--instances=-1", "--instances"},
        {"--instances=9", "--instances"},
        {"--disaggregated --instances=3", "--instances"},
        {"--prompt-tokens=0", "--prompt-tokens"},
        {"--prompt-tokens=-5", "--prompt-tokens"},
        {"--output-tokens=0", "--output-tokens"},
        {"--output-tokens=-3", "--output-tokens"},
        {"--prompt-dist=normal", "--prompt-dist"},
        {"--output-dist=zipf", "--output-dist"},
        {"--dispatch=random", "--dispatch"},
        {"--prompt-dist=lognormal --prompt-sigma=0", "--prompt-sigma"},
        {"--prompt-dist=lognormal --prompt-sigma=2.5", "--prompt-sigma"},
        {"--output-dist=lognormal --output-sigma=nan", "--output-sigma"},
        {"--output-dist=lognormal --output-sigma=wide", "--output-sigma"},
        {"--prompt-sigma=0.5", "--prompt-sigma"}, // without lognormal prompts
        {"--output-dist=uniform --output-sigma=0.5", "--output-sigma"},
    };
    int i = 0;
    for (const auto& [args, flag] : cases)
    {
        const auto [status, out] =
            gpu_fabric_test::RunCapture("serving-study " + args,
                                        "serving-bad-" + std::to_string(i++));
        EXPECT_EQ(status, 2) << args << "\n" << out;
        EXPECT_NE(out.find("invalid " + flag), std::string::npos) << args << "\n" << out;
    }
}

TEST(ServingStudy, JsonHasThePercentilesPerTopology)
{
    const nlohmann::json j = gpu_fabric_test::RunJson(
        "serving-study --quick --requests=6 --output-tokens=4 --prompt-tokens=128",
        "serving-json");
    ASSERT_TRUE(j.is_object());
    ASSERT_EQ(j["results"].size(), 2U);
    EXPECT_EQ(j["results"][0]["topology"], "rail-only");
    EXPECT_EQ(j["results"][1]["topology"], "fat-tree");
    for (const auto& r : j["results"])
    {
        EXPECT_EQ(r["requests"], 6);
        for (const char* what : {"ttft", "tpot"})
        {
            const double p50 = r[std::string(what) + "_p50_s"];
            const double p90 = r[std::string(what) + "_p90_s"];
            const double p99 = r[std::string(what) + "_p99_s"];
            EXPECT_GT(p50, 0) << what;
            EXPECT_LE(p50, p90) << what;
            EXPECT_LE(p90, p99) << what;
        }
    }
}

} // namespace

namespace
{

TEST(ServingStudy, InstancesAndLengthDistributionsSameSeedSameOutput)
{
    const std::string args = "serving-study --quick --requests=8 --output-tokens=4 "
                             "--prompt-tokens=128 --instances=2 --prompt-dist=exponential "
                             "--output-dist=uniform --topology=rail-only";
    const std::string a = gpu_fabric_test::RunJsonText(args, "serving-inst-a");
    const std::string b = gpu_fabric_test::RunJsonText(args, "serving-inst-b");
    EXPECT_EQ(a, b); // bit-identical
    const std::string other = gpu_fabric_test::RunJsonText(args + " --seed=7", "serving-inst-c");
    EXPECT_NE(a, other);
    const nlohmann::json j = nlohmann::json::parse(a, nullptr, false);
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j["instances"], 2);
    EXPECT_EQ(j["dispatch"], "round-robin");
    EXPECT_EQ(j["prompt_dist"], "exponential");
    EXPECT_EQ(j["output_dist"], "uniform");
    ASSERT_EQ(j["results"].size(), 1U);
    // uniform outputs of mean 4 are 2..6
    const double out = j["results"][0]["output_tokens_mean"];
    EXPECT_GE(out, 2);
    EXPECT_LE(out, 6);
    const auto [status, text] = gpu_fabric_test::RunCapture(
        "serving-study --quick --requests=2 --instances=2 --topology=rail-only",
        "serving-inst-text");
    EXPECT_EQ(status, 0) << text;
    EXPECT_NE(text.find("2 instance(s) (round-robin)"), std::string::npos) << text;
    // --topologies is the same list, under the name the other programs use
    const auto [aliasStatus, aliasText] = gpu_fabric_test::RunCapture(
        "serving-study --quick --requests=2 --instances=2 --topologies=rail-only",
        "serving-inst-alias");
    EXPECT_EQ(aliasStatus, 0) << aliasText;
    EXPECT_EQ(aliasText, text);
    const auto [bothStatus, bothText] = gpu_fabric_test::RunCapture(
        "serving-study --quick --topologies=rail-only --topology=fat-tree",
        "serving-inst-both");
    EXPECT_EQ(bothStatus, 2) << bothText;
    EXPECT_NE(bothText.find("--topologies"), std::string::npos) << bothText;
}

} // namespace
