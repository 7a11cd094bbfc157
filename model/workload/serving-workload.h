/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_SERVING_WORKLOAD_H
#define GPU_FABRIC_SERVING_WORKLOAD_H

#include "llm-model.h"
#include "program-runner.h"

#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"
#include "ns3/transport.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief An LLM inference-serving job: the model, where it runs, and the
 *        requests (see ServingSimulation for how they are served).
 *
 * An instance is \c ep tensor-parallel groups of \c tp GPUs (G = tp x ep
 * GPUs, domain-major: group j is GPUs j*tp .. j*tp+tp-1 of the instance).
 * The cluster is cut into slots of ceil(G / K) K GPUs (whole HB domains).
 * Co-located: instance i on the first G GPUs of slot i does prefill and
 * decode. Disaggregated: instance i prefills on slot 2i and decodes on slot
 * 2i + 1, so that GPU j of one and GPU j of the other are on the same rail in
 * different domains. With one instance: GPUs 0..G-1 (and the decode group
 * from the next HB-domain boundary).
 * Requests arrive as a Poisson process of \c rate requests per second and
 * go to an instance by \c dispatch; each has its prompt and output lengths
 * drawn from \c promptDistribution and \c outputDistribution (ServingLengths)
 * with means \c promptTokens and \c outputTokens.
 */
struct ServingConfig
{
    LlmModel model;                //!< the model (a preset or LlmModel::Custom)
    uint32_t gpus{0};              //!< GPUs of the cluster (the transport's ranks)
    uint32_t gpusPerDomain{0};     //!< K, GPUs per HB domain
    uint32_t tp{1};                //!< TP size (divides K and the model's heads)
    uint32_t ep{1};                //!< EP size: TP groups an instance's experts spread over
    bool disaggregated{false};     //!< prefill and decode on different GPU groups
    double gpuFlops{989e12};       //!< C, peak dense FLOP/s per GPU
    double computeEfficiency{1.0}; //!< fraction of C reached, (0, 1]
    double memoryBandwidth{0};     //!< HBM bytes/s per GPU (0: compute time only)
    double rate{1.0};              //!< request arrival rate, requests per second
    uint32_t requests{1};          //!< number of requests
    uint32_t promptTokens{512};    //!< prompt tokens per request (the mean)
    uint32_t outputTokens{64};     //!< output tokens per request (the mean, >= 2)
    std::string promptDistribution{"fixed"}; //!< of the prompt lengths (LengthDistributionNames)
    std::string outputDistribution{"fixed"}; //!< of the output lengths
    double promptSigma{1.0};                 //!< lognormal prompts: sigma of the log, (0, 2]
    double outputSigma{1.0};                 //!< lognormal outputs: sigma of the log, (0, 2]
    uint32_t instances{1};                   //!< serving instances (replicas)
    std::string dispatch{"round-robin"};     //!< request to instance (DispatchNames)
    uint32_t maxBatch{8};                    //!< most requests in a decode step
    uint64_t seed{1};                        //!< the arrivals' RNG stream
    std::string granularity{"layer"};        //!< "layer" or "pass" (see BuildServingPass)

    /// Throws FabricConfigError naming the first field out of range, the
    /// value and what is allowed (including placements that do not fit).
    void Validate() const;

    /// \return G = tp x ep, GPUs per instance
    uint32_t InstanceGpus() const;
    /// \return GPUs per slot: ceil(G / K) x K
    uint32_t SlotGpus() const;
    /// \return the most instances that fit on \c gpus GPUs (0: not one)
    uint64_t MaxInstances() const;
    /// \param instance an instance \return its prefill GPUs
    std::vector<uint32_t> PrefillGpus(uint32_t instance = 0) const;
    /// \param instance an instance
    /// \return its decode GPUs (the prefill GPUs when co-located)
    std::vector<uint32_t> DecodeGpus(uint32_t instance = 0) const;

    /**
     * \brief KV-cache bytes of \p tokens tokens:
     *        2 (K and V) x layers x kvHeads x headDim x tokens x bytesPerActivation.
     * \param tokens tokens \return bytes
     */
    uint64_t KvCacheBytes(uint64_t tokens) const;

    /**
     * \brief Compute seconds of one forward pass on each GPU of an instance:
     *        per block, max(FLOPs / (C x efficiency), (weight bytes + KV bytes
     *        read) / memoryBandwidth) (the second term only when
     *        memoryBandwidth > 0), plus the output layer the same way (see
     *        BuildServingPass).
     * \param tokens tokens of the pass \param sequences requests in the pass
     * \param contextTokens tokens whose KV cache the pass reads, summed over
     *        its requests (a decode step; 0 for a prefill)
     * \return seconds
     */
    double PassComputeSeconds(uint64_t tokens,
                              uint32_t sequences,
                              uint64_t contextTokens = 0) const;

    /// \return the names of the granularities
    static std::vector<std::string> GranularityNames();
    /// \return the names of the length distributions: fixed, uniform,
    /// exponential, lognormal
    static std::vector<std::string> LengthDistributionNames();
    /// \return the names of the dispatch policies: round-robin, least-loaded
    static std::vector<std::string> DispatchNames();
};

/**
 * \ingroup gpu-fabric
 * \brief Prompt and output lengths of every request.
 *
 * For a mean M and a least length m (1 for prompts, 2 for outputs, as an
 * output needs a second token for its TPOT):
 * - fixed: M;
 * - uniform: an integer uniform on [lo, 2M - lo], lo = max(m, ceil(M / 2)),
 *   so the mean is M exactly;
 * - exponential: m + round(X), X exponential of mean M - m, at most 16 M
 *   (the mean is M to within the rounding and the cut, under 1 % for M >= 10);
 * - lognormal: m + round(X), X = exp(N(mu, sigma^2)) with sigma the config's
 *   promptSigma or outputSigma and mu = ln(M - m) - sigma^2 / 2 (so X has
 *   mean M - m and median (M - m) exp(-sigma^2 / 2)), at most 64 M (the cut
 *   removes Phi((sigma^2 / 2 - ln 64) / sigma) of the mean: 0.01 % at
 *   sigma = 1, 2 % at 1.5, 14 % at 2).
 * Prompts are drawn from ns-3 random variables on RNG stream (seed + 2^62)
 * mod 2^63, outputs on (seed + 2^62 + 2^61) mod 2^63 (arrivals use stream
 * seed): same seed and ns-3 RngSeed/RngRun, same lengths, bit for bit.
 */
struct ServingLengths
{
    std::vector<uint32_t> prompt; //!< per request, in arrival order
    std::vector<uint32_t> output; //!< per request
};

/**
 * \ingroup gpu-fabric
 * \brief Draw the lengths of config.requests requests (see ServingLengths).
 * \param config the job \return the lengths
 */
ServingLengths DrawServingLengths(const ServingConfig& config);

/**
 * \ingroup gpu-fabric
 * \brief One forward pass of \p tokens tokens of \p sequences requests on
 *        the instance \p gpus (prefill: a prompt, sequences 1; decode step:
 *        one token per request, tokens = sequences = batch).
 *
 * Tokens are spread evenly over the ep TP groups (each group's share is
 * t = ceil(tokens / ep)); per block of the model, each GPU computes
 * - attention: 2 x AttentionParams() x t / tp FLOPs, reading AttentionParams() / tp weights;
 * - FFN (dense): 2 x FfnParams() x t / tp FLOPs, FfnParams() / tp weights;
 *   MoE block: 2 x FfnParams() x topK x tokens / G FLOPs (routing balanced),
 *   experts x FfnParams() / G weights (every local expert read);
 * and after the last block the output layer, 2 V d ceil(sequences / ep) / tp
 * FLOPs (logits of one token per request), V d / tp weights; weights are
 * bytesPerParam bytes each. A decode step also reads the KV cache of its
 * requests' contexts in every block: KvCacheBytes(contextTokens) / (layers x
 * G) bytes per GPU per block (the cache is spread over the instance's GPUs
 * as BuildKvTransfer sends it), added to the block's weight bytes.  Communication, at granularity
 * "layer": per block a = M_cc / 4 ring AllReduces (tp > 1) over each TP group of ActivationBytes(t)
 * bytes, after equal compute pieces (max(a, 1) pieces; max(a, 2) for an MoE block with ep > 1,
 * whose last piece sits between a dispatch and a combine "direct" AllToAll over the ep GPUs of each
 * TP index, each of t x topK x d x bytesPerActivation / tp bytes per GPU, as in TrainingIteration).
 * At granularity "pass": one compute task of the whole pass, then one AllReduce of all the pass's
 * AllReduce bytes and one AllToAll of all its AllToAll bytes (fewer events, fewer latencies).
 * \param config the job \param gpus the instance's GPUs (G of them)
 * \param tokens tokens \param sequences requests
 * \param contextTokens tokens whose KV cache a decode step reads (the sum of
 *        its requests' prompt and generated tokens; 0: none)
 * \return the program (ranks: config.gpus; GPUs outside the instance idle)
 */
ParallelProgram BuildServingPass(const ServingConfig& config,
                                 const std::vector<uint32_t>& gpus,
                                 uint64_t tokens,
                                 uint32_t sequences,
                                 uint64_t contextTokens = 0);

/**
 * \ingroup gpu-fabric
 * \brief The KV-cache transfer of one request from an instance's prefill
 *        GPUs to its decode GPUs: GPU i of the one sends
 *        ceil(KvCacheBytes(promptTokens) / G) bytes to GPU i of the other
 *        (its heads and tokens of the cache), all G transfers at once.
 * \param config the job (disaggregated) \param instance the instance
 * \param promptTokens the request's prompt tokens
 * \return the program
 */
ParallelProgram BuildKvTransfer(const ServingConfig& config,
                                uint32_t instance,
                                uint32_t promptTokens);

/// \param config the job \return BuildKvTransfer(config, 0, config.promptTokens)
ParallelProgram BuildKvTransfer(const ServingConfig& config);

/**
 * \ingroup gpu-fabric
 * \brief Arrival times of the requests: a Poisson process of config.rate,
 *        the first request at the first exponential gap; drawn from an ns-3
 *        ExponentialRandomVariable on stream config.seed (same seed and
 *        ns-3 RngSeed/RngRun: same times, bit for bit).
 * \param config the job \return seconds, increasing
 */
std::vector<double> ServingArrivals(const ServingConfig& config);

/**
 * \ingroup gpu-fabric
 * \brief What happened to one request.
 */
struct ServingRequestResult
{
    double arrival{0};        //!< arrival, seconds (on the simulator clock)
    double firstToken{0};     //!< end of its prefill (first output token), seconds
    double kvReady{0};        //!< its KV cache on the decode instance, seconds
    double lastToken{0};      //!< end of the decode step of its last token, seconds
    uint32_t tokens{0};       //!< output tokens produced
    uint32_t promptTokens{0}; //!< its prompt's tokens
    uint32_t outputTokens{0}; //!< output tokens it asks for
    uint32_t instance{0};     //!< the instance that served it
    /// \return TTFT: firstToken - arrival
    double Ttft() const;
    /// \return TPOT: (lastToken - firstToken) / (tokens - 1)
    double Tpot() const;
};

/**
 * \ingroup gpu-fabric
 * \brief Nearest-rank percentile: the smallest value with at least q % of
 *        the values at or below it (the value at rank ceil(q / 100 x n)).
 * \param values the values (any order; not empty) \param q percent in (0, 100]
 * \return the percentile
 */
double ServingPercentile(std::vector<double> values, double q);

/**
 * \ingroup gpu-fabric
 * \brief Serves the requests of a ServingConfig over a Transport, driven by
 *        the simulator's clock: each prefill, decode step and KV transfer is
 *        a program (BuildServingPass, BuildKvTransfer) started when the
 *        engine that runs it decides to.
 *
 * - Dispatch: an arriving request goes to one instance: round-robin
 *   (request i, in arrival order, to instance i mod N) or least-loaded (the
 *   instance with the fewest requests dispatched and not finished; the
 *   lowest index on a tie). Every instance then serves its own requests as
 *   follows, on its own GPUs.
 * - Prefill: requests are prefilled one at a time in arrival order (FIFO),
 *   a pass of the request's prompt tokens; the end of a request's prefill is
 *   its first token.
 * - Disaggregated: the prefill GPUs start the next prefill at once and
 *   send the KV cache (BuildKvTransfer) meanwhile; the request joins the
 *   decode queue when its cache has arrived.
 * - Decode: continuous batching at a fixed maximum batch: before every
 *   step, requests waiting (in order) join the running batch up to
 *   maxBatch; a step of B requests is one pass of B tokens that reads the
 *   KV cache of their contexts (each request's prompt tokens plus the tokens
 *   it has produced, the one fed in among them), and gives each of them its
 *   next token; a request leaves after its last token (its own output
 *   length).
 * - Co-located: one engine, prefill first: at every step boundary it
 *   prefills the next waiting request if the batch has room, else runs a
 *   decode step; a prefilled request joins the batch at once (its KV cache
 *   is local).
 * - Control: the engine learns that a pass (or KV transfer) ended
 *   ControlDelay after its last GPU finished (0, the default: at once). In
 *   a distributed run every process runs the same engine over its own GPUs:
 *   each tells every process (by a note) when its part of a pass ended, so
 *   all of them decide the same at the same instant; that needs a
 *   ControlDelay above the delay of a note between processes, and the same
 *   value on one process gives the same times.
 * Deterministic: the same config and transport give the same times.
 */
class ServingSimulation : public Object, public MessageSink
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    ServingSimulation();
    ~ServingSimulation() override;

    /**
     * \param config the job (validated here)
     * \param transport the message layer over config.gpus GPUs
     */
    void Setup(const ServingConfig& config, Ptr<Transport> transport);

    /// Schedule the arrivals, from now.
    void Start();

    /// \return true when every request has its last token
    bool IsComplete() const;
    /// \return one line per failed program (empty if none failed)
    const std::string& GetFailureReport() const;
    /// \return per request, in arrival order (times relative to Start)
    const std::vector<ServingRequestResult>& GetResults() const;
    /// \return prefills run
    uint64_t GetPrefills() const;
    /// \return decode steps run
    uint64_t GetDecodeSteps() const;
    /// \return the largest decode batch run
    uint32_t GetMaxBatchRun() const;
    /// \return requests dispatched to each instance
    std::vector<uint32_t> GetInstanceRequests() const;

    /// Never called: a serving run sends no message of its own.
    void MessageDelivered(uint64_t cookie) override;
    /// A process's part of launch \p cookie ended (LocalPartDone).
    void NoteReceived(uint64_t cookie) override;

  protected:
    void DoDispose() override;

  private:
    /// This process's part of launch \p launch ended: every process hears
    /// of it ControlDelay from now.
    void LocalPartDone(uint64_t launch);

    /// One instance's GPUs, queues and passes.
    struct Engine
    {
        std::vector<uint32_t> prefillGpus;
        std::vector<uint32_t> decodeGpus;
        std::deque<uint32_t> prefillQueue; //!< arrived, not prefilled
        std::deque<uint32_t> decodeQueue;  //!< KV cache ready, not in the batch
        std::vector<uint32_t> running;     //!< the decode batch
        bool prefillBusy{false};           //!< (co-located: the one engine)
        bool decodeBusy{false};
        uint32_t outstanding{0}; //!< dispatched, not finished
        uint32_t dispatched{0};
        std::vector<ParallelProgram> decodePasses; //!< by batch size (cache)
        uint32_t prefillTokens{0};                 //!< of prefillPass
        ParallelProgram prefillPass;               //!< the last one built
    };

    void Arrive(uint32_t request);
    void Kick(uint32_t instance);
    void StartPrefill(uint32_t instance, uint32_t request);
    void PrefillDone(uint32_t instance, uint32_t request);
    void KvDone(uint32_t instance, uint32_t request);
    void StartDecodeStep(uint32_t instance);
    void DecodeStepDone(uint32_t instance);
    /// Run \p program now; \p done when it completes.
    void Launch(const ParallelProgram& program, const std::function<void()>& done);
    void Retire(Ptr<ProgramRunner> runner);

    ServingConfig m_config;
    Ptr<Transport> m_transport;
    double m_start{0};
    std::vector<double> m_arrivals;
    ServingLengths m_lengths;
    std::vector<ServingRequestResult> m_results;
    std::vector<Engine> m_engines;
    uint32_t m_finished{0};
    uint64_t m_prefills{0};
    uint64_t m_decodeSteps{0};
    uint32_t m_maxBatchRun{0};
    std::vector<Ptr<ProgramRunner>> m_live;
    std::string m_failure;
    Time m_controlDelay; //!< ControlDelay
    /// Launches whose end is not known yet: id -> (what follows, processes heard from)
    std::map<uint64_t, std::pair<std::function<void()>, uint32_t>> m_pending;
    uint64_t m_launches{0};              //!< launches so far (the next id)
    std::vector<uint32_t> m_processGpus; //!< per process with GPUs: its first GPU
    uint32_t m_hereGpu{0};               //!< this process's first GPU (it sends the notes)
};

/**
 * \ingroup gpu-fabric
 * \brief Serve a config to the end: Setup, Start, Simulator::Run().
 * \param config the job \param transport the message layer
 * \return the simulation (check IsComplete())
 */
Ptr<ServingSimulation> RunServing(const ServingConfig& config, Ptr<Transport> transport);

} // namespace ns3

#endif // GPU_FABRIC_SERVING_WORKLOAD_H
