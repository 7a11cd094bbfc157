/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "serving-workload.h"

#include "iteration-program.h"

#include "ns3/double.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-work.h"
#include "ns3/log.h"
#include "ns3/nstime.h"
#include "ns3/random-variable-stream.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>
#include <fmt/ranges.h>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ServingSimulation");
NS_OBJECT_ENSURE_REGISTERED(ServingSimulation);

namespace
{

uint64_t
CeilDiv(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/// Longest run simulated (the clock's limit is about 9.2e9 s).
constexpr double kMaxServingSeconds = 1e9;

bool
IsMoeBlock(const LlmModel& m, uint32_t block)
{
    // as LlmModel::BlockForwardFlopsPerToken: every interval-th block
    return m.IsMoe() && (block + 1) % m.moeLayerInterval == 0;
}

} // namespace

std::vector<std::string>
ServingConfig::GranularityNames()
{
    return {"layer", "pass"};
}

uint32_t
ServingConfig::InstanceGpus() const
{
    return tp * ep;
}

std::vector<std::string>
ServingConfig::LengthDistributionNames()
{
    return {"fixed", "uniform", "exponential", "lognormal"};
}

std::vector<std::string>
ServingConfig::DispatchNames()
{
    return {"round-robin", "least-loaded"};
}

uint32_t
ServingConfig::SlotGpus() const
{
    return static_cast<uint32_t>(CeilDiv(InstanceGpus(), gpusPerDomain) * gpusPerDomain);
}

uint64_t
ServingConfig::MaxInstances() const
{
    const uint64_t g = InstanceGpus();
    if (gpus < g)
    {
        return 0;
    }
    // the last group needs only its G GPUs, the others a whole slot each
    const uint64_t groups = (gpus - g) / SlotGpus() + 1;
    return disaggregated ? groups / 2 : groups;
}

std::vector<uint32_t>
ServingConfig::PrefillGpus(uint32_t instance) const
{
    const uint32_t first = (disaggregated ? 2 * instance : instance) * SlotGpus();
    std::vector<uint32_t> g(InstanceGpus());
    for (uint32_t i = 0; i < g.size(); ++i)
    {
        g[i] = first + i;
    }
    return g;
}

std::vector<uint32_t>
ServingConfig::DecodeGpus(uint32_t instance) const
{
    std::vector<uint32_t> g = PrefillGpus(instance);
    if (disaggregated)
    {
        for (uint32_t& x : g)
        {
            x += SlotGpus();
        }
    }
    return g;
}

void
ServingConfig::Validate() const
{
    model.Validate();
    FabricRequire(gpusPerDomain >= 1, "gpus-per-domain", gpusPerDomain, "at least 1");
    FabricRequire(tp >= 1 && gpusPerDomain % tp == 0 && model.heads % tp == 0,
                  "tp",
                  tp,
                  fmt::format("a divisor of K = {} (TP inside an HB domain) and of the "
                              "model's {} heads",
                              gpusPerDomain,
                              model.heads));
    FabricRequire(ep >= 1 && (ep == 1 || (model.IsMoe() && model.experts % ep == 0)),
                  "ep",
                  ep,
                  model.IsMoe() ? fmt::format("a divisor of the model's {} experts", model.experts)
                                : std::string("1 (the model has no experts)"));
    const uint64_t g = uint64_t{tp} * ep;
    const uint64_t need = disaggregated ? CeilDiv(g, gpusPerDomain) * gpusPerDomain + g : g;
    FabricRequire(instances >= 1, "instances", instances, "at least 1 serving instance (replica)");
    FabricRequire(gpus >= need && gpus <= std::numeric_limits<uint32_t>::max(),
                  "gpus",
                  gpus,
                  disaggregated
                      ? fmt::format("at least {}: a prefill and a decode group of tp x ep = {} "
                                    "GPUs each, the decode group from the HB-domain boundary "
                                    "{}",
                                    need,
                                    g,
                                    need - g)
                      : fmt::format("at least tp x ep = {}", g));
    FabricRequire(instances <= MaxInstances(),
                  "instances",
                  instances,
                  fmt::format("at most {} on {} GPUs: each instance takes {} slot(s) of {} "
                              "GPUs (whole HB domains of {} for its tp x ep = {} GPUs)",
                              MaxInstances(),
                              gpus,
                              disaggregated ? 2 : 1,
                              SlotGpus(),
                              gpusPerDomain,
                              g));
    // lower bounds keep every time well inside the simulator's clock
    FabricRequire(std::isfinite(gpuFlops) && gpuFlops >= 1e9,
                  "gpu-flops",
                  gpuFlops,
                  "FLOP/s >= 1e9");
    FabricRequire(computeEfficiency >= 1e-3 && computeEfficiency <= 1,
                  "compute-efficiency",
                  computeEfficiency,
                  "in [0.001, 1]");
    FabricRequire(std::isfinite(memoryBandwidth) &&
                      (memoryBandwidth == 0 || memoryBandwidth >= 1e9),
                  "memory-bandwidth",
                  memoryBandwidth,
                  "0 (compute time only) or bytes/s >= 1e9");
    FabricRequire(std::isfinite(rate) && rate > 0 && rate <= 1e9,
                  "rate",
                  rate,
                  "requests per second in (0, 1e9]");
    FabricRequire(requests >= 1, "requests", requests, "at least 1");
    FabricRequire(promptTokens >= 1, "prompt-tokens", promptTokens, "at least 1");
    FabricRequire(outputTokens >= 2,
                  "output-tokens",
                  outputTokens,
                  "at least 2 (TPOT needs a second token)");
    FabricRequire(maxBatch >= 1, "batch", maxBatch, "at least 1");
    // a name among the allowed ones
    const auto requireName =
        [](const char* field, const std::string& value, const std::vector<std::string>& names) {
            FabricRequire(std::find(names.begin(), names.end(), value) != names.end(),
                          field,
                          value,
                          fmt::format("{}", fmt::join(names, ", ")));
        };
    requireName("prompt-dist", promptDistribution, LengthDistributionNames());
    requireName("output-dist", outputDistribution, LengthDistributionNames());
    // the cut at 64 M keeps the mean within 14 % up to sigma = 2
    FabricRequire(std::isfinite(promptSigma) && promptSigma > 0 && promptSigma <= 2,
                  "prompt-sigma",
                  promptSigma,
                  "in (0, 2], the sigma of the lognormal prompt lengths' log");
    FabricRequire(std::isfinite(outputSigma) && outputSigma > 0 && outputSigma <= 2,
                  "output-sigma",
                  outputSigma,
                  "in (0, 2], the sigma of the lognormal output lengths' log");
    requireName("dispatch", dispatch, DispatchNames());
    FabricRequire(seed <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
                  "seed",
                  seed,
                  "an RNG stream 0..2^63-1");
    requireName("granularity", granularity, GranularityNames());
}

uint64_t
ServingConfig::KvCacheBytes(uint64_t tokens) const
{
    const uint64_t kvHeads = model.kvHeads ? model.kvHeads : model.heads;
    const uint64_t headDim = model.headDim ? model.headDim : model.hiddenSize / model.heads;
    return 2 * uint64_t{model.layers} * kvHeads * headDim * tokens * model.bytesPerActivation;
}

namespace
{

/// Seconds of a piece of work: FLOPs at C x efficiency or its weights at
/// the memory bandwidth, whichever is longer.
double
Roofline(const ServingConfig& c, double flops, double weightBytes)
{
    const double compute = flops / (c.gpuFlops * c.computeEfficiency);
    return c.memoryBandwidth > 0 ? std::max(compute, weightBytes / c.memoryBandwidth) : compute;
}

/// Compute seconds of each block on one GPU, then the output layer's.
std::vector<double>
PassSeconds(const ServingConfig& c, uint64_t tokens, uint32_t sequences, uint64_t contextTokens)
{
    const LlmModel& m = c.model;
    const double t = static_cast<double>(CeilDiv(tokens, c.ep));
    const double g = c.InstanceGpus();
    const double bpp = m.bytesPerParam;
    // the KV cache a block reads, spread over the instance's GPUs
    const double kv = static_cast<double>(c.KvCacheBytes(contextTokens)) / (m.layers * g);
    std::vector<double> s;
    for (uint32_t b = 0; b < m.layers; ++b)
    {
        double flops = 2 * m.AttentionParams() * t / c.tp;
        double weights = m.AttentionParams() / c.tp;
        if (IsMoeBlock(m, b))
        {
            flops += 2 * m.FfnParams() * m.topK * static_cast<double>(tokens) / g;
            weights += m.experts * m.FfnParams() / g;
        }
        else
        {
            flops += 2 * m.FfnParams() * t / c.tp;
            weights += m.FfnParams() / c.tp;
        }
        s.push_back(Roofline(c, flops, weights * bpp + kv));
    }
    const double vd = static_cast<double>(m.vocabSize) * m.hiddenSize;
    s.push_back(Roofline(c,
                         2 * vd * static_cast<double>(CeilDiv(sequences, c.ep)) / c.tp,
                         vd / c.tp * bpp));
    return s;
}

} // namespace

double
ServingConfig::PassComputeSeconds(uint64_t tokens, uint32_t sequences, uint64_t contextTokens) const
{
    double sum = 0;
    for (double x : PassSeconds(*this, tokens, sequences, contextTokens))
    {
        sum += x;
    }
    return sum;
}

ParallelProgram
BuildServingPass(const ServingConfig& c,
                 const std::vector<uint32_t>& gpus,
                 uint64_t tokens,
                 uint32_t sequences,
                 uint64_t contextTokens)
{
    const LlmModel& m = c.model;
    NS_ABORT_MSG_IF(gpus.size() != c.InstanceGpus(), "instance of the wrong size");
    const uint64_t t = CeilDiv(tokens, c.ep);
    const uint64_t arBytes = static_cast<uint64_t>(m.ActivationBytes(t));
    const uint64_t a2aBytes = CeilDiv(t * m.topK * m.hiddenSize * m.bytesPerActivation, c.tp);
    const uint32_t allReduces = c.tp > 1 ? m.tpRoundsPerBlock / 4 : 0;
    const std::vector<double> seconds = PassSeconds(c, tokens, sequences, contextTokens);
    const bool layer = c.granularity == "layer";

    ParallelProgram p;
    p.ranks = c.gpus;
    p.tasks.resize(c.gpus);
    // the comms of one step: an AllReduce per TP group (byTpIndex false) or
    // an AllToAll per TP index over the ep groups (true); each GPU's task
    // follows its last one
    auto addComms = [&](bool byTpIndex, uint64_t bytes, const std::string& label) {
        const uint32_t first = static_cast<uint32_t>(p.comms.size());
        const uint32_t count = byTpIndex ? c.tp : c.ep;
        const uint32_t size = byTpIndex ? c.ep : c.tp;
        for (uint32_t g = 0; g < count; ++g)
        {
            ProgramComm comm{byTpIndex ? "alltoall" : "allreduce",
                             byTpIndex ? "direct" : "ring",
                             {},
                             bytes,
                             0,
                             0,
                             label};
            for (uint32_t k = 0; k < size; ++k)
            {
                comm.members.push_back(byTpIndex ? gpus[k * c.tp + g] : gpus[g * c.tp + k]);
            }
            p.comms.push_back(std::move(comm));
        }
        for (uint32_t r = 0; r < gpus.size(); ++r)
        {
            auto& tasks = p.tasks[gpus[r]];
            tasks.push_back({ProgramTask::Kind::Comm,
                             0,
                             first + (byTpIndex ? r % c.tp : r / c.tp),
                             {static_cast<uint32_t>(tasks.size() - 1)}});
        }
    };
    auto addAllReduces = [&](uint64_t bytes, const std::string& label) {
        addComms(false, bytes, label);
    };
    auto addAllToAll = [&](uint64_t bytes, const std::string& label) {
        addComms(true, bytes, label);
    };
    auto addCompute = [&](double s) {
        for (uint32_t g : gpus)
        {
            auto& tasks = p.tasks[g];
            ProgramTask task{ProgramTask::Kind::Compute, s, 0, {}};
            if (!tasks.empty())
            {
                task.deps.push_back(static_cast<uint32_t>(tasks.size() - 1));
            }
            tasks.push_back(std::move(task));
        }
    };

    if (!layer)
    {
        double total = 0;
        uint32_t moeBlocks = 0;
        for (uint32_t b = 0; b < m.layers; ++b)
        {
            total += seconds[b];
            moeBlocks += IsMoeBlock(m, b) && c.ep > 1;
        }
        addCompute(total + seconds.back());
        if (allReduces > 0)
        {
            addAllReduces(arBytes * allReduces * m.layers, "tp-allreduce pass");
        }
        if (moeBlocks > 0)
        {
            addAllToAll(a2aBytes * 2 * moeBlocks, "ep-alltoall pass");
        }
        p.Validate();
        return p;
    }
    for (uint32_t b = 0; b < m.layers; ++b)
    {
        const bool a2a = IsMoeBlock(m, b) && c.ep > 1;
        const uint32_t pieces = std::max(allReduces, a2a ? 2U : 1U);
        for (uint32_t k = 0; k < pieces; ++k)
        {
            const bool expert = a2a && k == pieces - 1;
            if (expert)
            {
                addAllToAll(a2aBytes, fmt::format("ep-dispatch layer {}", b));
            }
            addCompute(seconds[b] / pieces);
            if (expert)
            {
                addAllToAll(a2aBytes, fmt::format("ep-combine layer {}", b));
            }
            if (k < allReduces)
            {
                addAllReduces(arBytes, fmt::format("tp-allreduce layer {} #{}", b, k));
            }
        }
    }
    addCompute(seconds.back());
    p.Validate();
    return p;
}

ParallelProgram
BuildKvTransfer(const ServingConfig& c, uint32_t instance, uint32_t promptTokens)
{
    const std::vector<uint32_t> from = c.PrefillGpus(instance);
    const std::vector<uint32_t> to = c.DecodeGpus(instance);
    const uint64_t bytes = CeilDiv(c.KvCacheBytes(promptTokens), from.size());
    ParallelProgram p;
    p.ranks = c.gpus;
    p.tasks.resize(c.gpus);
    for (uint32_t i = 0; i < from.size(); ++i)
    {
        p.comms.push_back({"sendrecv", "", {from[i], to[i]}, bytes, 0, 0, "kv-cache"});
        p.tasks[from[i]].push_back({ProgramTask::Kind::Comm, 0, i, {}});
        p.tasks[to[i]].push_back({ProgramTask::Kind::Comm, 0, i, {}});
    }
    p.Validate();
    return p;
}

ParallelProgram
BuildKvTransfer(const ServingConfig& c)
{
    return BuildKvTransfer(c, 0, c.promptTokens);
}

namespace
{

/// Lengths of \p n requests of mean \p mean, at least \p least, from
/// \p distribution (lognormal: of log sigma \p sigma) on RNG stream
/// \p stream (see ServingLengths).
std::vector<uint32_t>
DrawLengths(const std::string& distribution,
            uint32_t mean,
            uint32_t least,
            double sigma,
            uint32_t n,
            int64_t stream)
{
    std::vector<uint32_t> v(n, mean);
    if (distribution == "uniform")
    {
        const uint32_t lo = std::max<uint32_t>(least, static_cast<uint32_t>(CeilDiv(mean, 2)));
        const uint64_t hi = 2 * uint64_t{mean} - lo;
        Ptr<UniformRandomVariable> u = CreateObject<UniformRandomVariable>();
        u->SetStream(stream);
        for (uint32_t& x : v)
        {
            x = static_cast<uint32_t>(u->GetInteger(lo, static_cast<uint32_t>(hi)));
        }
    }
    else if (distribution == "exponential" && mean > least)
    {
        Ptr<ExponentialRandomVariable> e = CreateObject<ExponentialRandomVariable>();
        e->SetAttribute("Mean", DoubleValue(mean - least));
        e->SetAttribute("Bound", DoubleValue(0.0));
        e->SetStream(stream);
        const double most = 16.0 * mean;
        for (uint32_t& x : v)
        {
            x = static_cast<uint32_t>(std::min(most, least + std::round(e->GetValue())));
        }
    }
    else if (distribution == "lognormal" && mean > least)
    {
        // mu such that the mean exp(mu + sigma^2 / 2) is mean - least
        Ptr<LogNormalRandomVariable> l = CreateObject<LogNormalRandomVariable>();
        l->SetAttribute("Mu", DoubleValue(std::log(mean - least) - sigma * sigma / 2));
        l->SetAttribute("Sigma", DoubleValue(sigma));
        l->SetStream(stream);
        const double most = 64.0 * mean;
        for (uint32_t& x : v)
        {
            x = static_cast<uint32_t>(std::min(most, least + std::round(l->GetValue())));
        }
    }
    return v;
}

} // namespace

ServingLengths
DrawServingLengths(const ServingConfig& c)
{
    constexpr uint64_t kStreams = uint64_t{1} << 63;
    const auto stream = [&](uint64_t offset) {
        return static_cast<int64_t>((c.seed + offset) % kStreams);
    };
    ServingLengths l;
    l.prompt = DrawLengths(c.promptDistribution,
                           c.promptTokens,
                           1,
                           c.promptSigma,
                           c.requests,
                           stream(uint64_t{1} << 62));
    l.output = DrawLengths(c.outputDistribution,
                           c.outputTokens,
                           2,
                           c.outputSigma,
                           c.requests,
                           stream((uint64_t{1} << 62) + (uint64_t{1} << 61)));
    return l;
}

std::vector<double>
ServingArrivals(const ServingConfig& c)
{
    Ptr<ExponentialRandomVariable> gap = CreateObject<ExponentialRandomVariable>();
    gap->SetAttribute("Mean", DoubleValue(1.0 / c.rate));
    gap->SetAttribute("Bound", DoubleValue(0.0));
    gap->SetStream(static_cast<int64_t>(c.seed));
    std::vector<double> t;
    double now = 0;
    for (uint32_t i = 0; i < c.requests; ++i)
    {
        now += gap->GetValue();
        t.push_back(now);
    }
    return t;
}

double
ServingRequestResult::Ttft() const
{
    return firstToken - arrival;
}

double
ServingRequestResult::Tpot() const
{
    return tokens > 1 ? (lastToken - firstToken) / (tokens - 1) : 0.0;
}

double
ServingPercentile(std::vector<double> values, double q)
{
    NS_ABORT_MSG_IF(values.empty() || !(q > 0 && q <= 100), "percentile of nothing");
    std::sort(values.begin(), values.end());
    const auto rank = static_cast<size_t>(std::ceil(q / 100.0 * values.size()));
    return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

TypeId
ServingSimulation::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::ServingSimulation")
            .SetParent<Object>()
            .SetGroupName("GpuFabric")
            .AddConstructor<ServingSimulation>()
            .AddAttribute("ControlDelay",
                          "How long after a pass's (or KV transfer's) last GPU finished the "
                          "engine acts on it (0: at once). A distributed run needs more than "
                          "the delay of a note between its processes; the same value on one "
                          "process gives the same times.",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&ServingSimulation::m_controlDelay),
                          MakeTimeChecker(Time(0)));
    return tid;
}

ServingSimulation::ServingSimulation() = default;

ServingSimulation::~ServingSimulation() = default;

void
ServingSimulation::DoDispose()
{
    for (auto& r : m_live)
    {
        r->Dispose();
    }
    m_live.clear();
    m_pending.clear();
    m_transport = nullptr;
    Object::DoDispose();
}

void
ServingSimulation::MessageDelivered(uint64_t /* cookie */)
{
    NS_FATAL_ERROR("ServingSimulation: a message was delivered to it, which sends none");
}

void
ServingSimulation::Setup(const ServingConfig& config, Ptr<Transport> transport)
{
    config.Validate();
    m_config = config;
    m_transport = transport;
    m_arrivals = ServingArrivals(config);
    m_lengths = DrawServingLengths(config);
    // the simulator's clock (64-bit nanoseconds) must hold the whole run
    // (every prefill and every decode step one after another: a bound)
    double prefillSeconds = 0;
    double promptTokens = 0;
    double outputSteps = 0;
    uint64_t longest = 0; // a request's largest context
    for (uint32_t i = 0; i < config.requests; ++i)
    {
        prefillSeconds += config.PassComputeSeconds(m_lengths.prompt[i], 1);
        promptTokens += m_lengths.prompt[i];
        outputSteps += m_lengths.output[i] - 1;
        longest = std::max<uint64_t>(longest, uint64_t{m_lengths.prompt[i]} + m_lengths.output[i]);
    }
    const double steps = std::ceil(outputSteps / config.maxBatch);
    const double busy =
        prefillSeconds + steps * config.PassComputeSeconds(config.maxBatch,
                                                           config.maxBatch,
                                                           config.maxBatch * longest);
    FabricRequire(m_arrivals.back() + busy <= kMaxServingSeconds,
                  "requests",
                  config.requests,
                  fmt::format("a run within {:g} simulated seconds (arrivals until {:g} s at "
                              "rate {:g}, compute {:g} s)",
                              kMaxServingSeconds,
                              m_arrivals.back(),
                              config.rate,
                              busy));
    // the processes that simulate GPUs, each named by its first GPU: each
    // tells all of them when its part of a pass ended
    m_processGpus.clear();
    std::map<uint32_t, uint32_t> firstGpu;
    for (uint32_t g = 0; g < config.gpus; ++g)
    {
        firstGpu.emplace(transport->GetGpuProcess(g), g);
    }
    for (const auto& [process, gpu] : firstGpu)
    {
        m_processGpus.push_back(gpu);
        if (transport->IsLocalGpu(gpu))
        {
            m_hereGpu = gpu;
        }
    }
    for (uint32_t gpu : m_processGpus)
    {
        const Time need = transport->GetNoteDelay(m_hereGpu, gpu);
        FabricRequire(!need.IsStrictlyPositive() || m_controlDelay > need,
                      "ns3::ServingSimulation::ControlDelay",
                      fmt::format("{} ns", m_controlDelay.GetNanoSeconds()),
                      fmt::format("more than {} ns in this distributed run: the delay of a note "
                                  "between its processes",
                                  need.GetNanoSeconds()));
    }
    m_pending.clear();
    m_launches = 0;
    m_results.assign(config.requests, {});
    m_engines.assign(config.instances, {});
    for (uint32_t i = 0; i < config.instances; ++i)
    {
        Engine& e = m_engines[i];
        e.prefillGpus = config.PrefillGpus(i);
        e.decodeGpus = config.DecodeGpus(i);
        e.decodePasses.assign(config.maxBatch + 1, {});
    }
    // refused up front if it cannot finish in reasonable time: every prompt,
    // KV cache and output token, in full decode batches (the fewest steps);
    // a pass's messages do not depend on its tokens, its bytes about in
    // proportion
    const ParallelProgram prefillPass =
        BuildServingPass(config, m_engines[0].prefillGpus, config.promptTokens, 1);
    const ParallelProgram kvTransfer =
        config.disaggregated ? BuildKvTransfer(config) : ParallelProgram{};
    const ParallelProgram decodePass =
        BuildServingPass(config, m_engines[0].decodeGpus, config.maxBatch, config.maxBatch);
    const double requests = config.requests;
    const double scale = promptTokens / (requests * config.promptTokens);
    const auto prefill = prefillPass.Work();
    const auto kv = kvTransfer.Work();
    const auto decode = decodePass.Work();
    const double messages = requests * (prefill.first + kv.first) + steps * decode.first;
    const double bytes = requests * scale * (prefill.second + kv.second) + steps * decode.second;
    auto count = [](double x) {
        return x >= 1.8e19 ? std::numeric_limits<uint64_t>::max() : static_cast<uint64_t>(x);
    };
    FabricRequireWork(transport->EstimateRunSeconds(count(messages), count(bytes)),
                      "requests",
                      config.requests,
                      fmt::format("{} prefills and {} decode steps, {:g} messages",
                                  config.requests,
                                  steps,
                                  messages));
}

void
ServingSimulation::Start()
{
    m_start = Simulator::Now().GetSeconds();
    for (uint32_t i = 0; i < m_arrivals.size(); ++i)
    {
        Simulator::Schedule(Seconds(m_arrivals[i]), &ServingSimulation::Arrive, this, i);
    }
}

void
ServingSimulation::Arrive(uint32_t request)
{
    NS_LOG_FUNCTION(this << request);
    uint32_t instance = request % m_config.instances;
    if (m_config.dispatch == "least-loaded")
    {
        instance = 0;
        for (uint32_t i = 1; i < m_engines.size(); ++i)
        {
            if (m_engines[i].outstanding < m_engines[instance].outstanding)
            {
                instance = i;
            }
        }
    }
    ServingRequestResult& r = m_results[request];
    // the simulator's time of it (ServingArrivals' rounded to its resolution)
    r.arrival = Simulator::Now().GetSeconds() - m_start;
    r.promptTokens = m_lengths.prompt[request];
    r.outputTokens = m_lengths.output[request];
    r.instance = instance;
    Engine& e = m_engines[instance];
    ++e.outstanding;
    ++e.dispatched;
    e.prefillQueue.push_back(request);
    Kick(instance);
}

void
ServingSimulation::Kick(uint32_t instance)
{
    if (!m_failure.empty())
    {
        return;
    }
    Engine& e = m_engines[instance];
    if (m_config.disaggregated)
    {
        if (!e.prefillBusy && !e.prefillQueue.empty())
        {
            const uint32_t r = e.prefillQueue.front();
            e.prefillQueue.pop_front();
            StartPrefill(instance, r);
        }
        if (!e.decodeBusy)
        {
            while (!e.decodeQueue.empty() && e.running.size() < m_config.maxBatch)
            {
                e.running.push_back(e.decodeQueue.front());
                e.decodeQueue.pop_front();
            }
            if (!e.running.empty())
            {
                StartDecodeStep(instance);
            }
        }
        return;
    }
    if (e.prefillBusy)
    {
        return;
    }
    if (!e.prefillQueue.empty() && e.running.size() < m_config.maxBatch)
    {
        const uint32_t r = e.prefillQueue.front();
        e.prefillQueue.pop_front();
        StartPrefill(instance, r);
    }
    else if (!e.running.empty())
    {
        StartDecodeStep(instance);
    }
}

void
ServingSimulation::Launch(const ParallelProgram& program, const std::function<void()>& done)
{
    Ptr<ProgramRunner> runner = CreateObject<ProgramRunner>();
    runner->Setup(program, m_transport);
    const uint64_t launch = m_launches++;
    m_pending.emplace(launch, std::make_pair(done, 0));
    runner->SetCompletionCallback(
        ProgramRunner::CompletionCallback([this, launch](Ptr<ProgramRunner> r) {
            // disposed once this callback has returned
            Simulator::ScheduleNow(&ServingSimulation::Retire, this, r);
            LocalPartDone(launch);
        }));
    runner->SetFailureCallback(
        ProgramRunner::FailureCallback([this](Ptr<ProgramRunner>, const std::string& report) {
            m_failure += report;
            Simulator::Stop();
        }));
    m_live.push_back(runner);
    // started from the event loop, not from inside the runner that called us
    Simulator::ScheduleNow(&ProgramRunner::Start, runner);
}

void
ServingSimulation::LocalPartDone(uint64_t launch)
{
    if (m_controlDelay.IsZero() && !m_transport->IsDistributed())
    {
        NoteReceived(launch); // at once, the only process
        return;
    }
    if (!m_transport->IsLocalGpu(m_hereGpu))
    {
        return; // a process of switches only: it takes no part in passes
    }
    for (uint32_t gpu : m_processGpus)
    {
        m_transport->SendNote(m_hereGpu, gpu, *this, launch, Simulator::Now() + m_controlDelay);
    }
}

void
ServingSimulation::NoteReceived(uint64_t cookie)
{
    const auto it = m_pending.find(cookie);
    NS_ABORT_MSG_IF(it == m_pending.end(),
                    "ServingSimulation: a note about launch " << cookie
                                                              << ", which is not running");
    if (++it->second.second < m_processGpus.size())
    {
        return; // other processes' parts still run
    }
    const std::function<void()> done = std::move(it->second.first);
    m_pending.erase(it);
    done();
}

void
ServingSimulation::Retire(Ptr<ProgramRunner> runner)
{
    auto it = std::find(m_live.begin(), m_live.end(), runner);
    if (it != m_live.end())
    {
        m_live.erase(it);
    }
    runner->Dispose();
}

void
ServingSimulation::StartPrefill(uint32_t instance, uint32_t request)
{
    NS_LOG_FUNCTION(this << instance << request);
    Engine& e = m_engines[instance];
    e.prefillBusy = true;
    ++m_prefills;
    const uint32_t tokens = m_lengths.prompt[request];
    if (e.prefillPass.ranks == 0 || e.prefillTokens != tokens)
    {
        // one pass kept per instance: fixed lengths build it once
        e.prefillPass = BuildServingPass(m_config, e.prefillGpus, tokens, 1);
        e.prefillTokens = tokens;
    }
    Launch(e.prefillPass, [this, instance, request]() { PrefillDone(instance, request); });
}

void
ServingSimulation::PrefillDone(uint32_t instance, uint32_t request)
{
    const double now = Simulator::Now().GetSeconds() - m_start;
    ServingRequestResult& r = m_results[request];
    r.firstToken = now;
    r.tokens = 1;
    Engine& e = m_engines[instance];
    e.prefillBusy = false;
    if (m_config.disaggregated)
    {
        Launch(BuildKvTransfer(m_config, instance, m_lengths.prompt[request]),
               [this, instance, request]() { KvDone(instance, request); });
    }
    else
    {
        r.kvReady = now;
        e.running.push_back(request);
    }
    Kick(instance);
}

void
ServingSimulation::KvDone(uint32_t instance, uint32_t request)
{
    m_results[request].kvReady = Simulator::Now().GetSeconds() - m_start;
    m_engines[instance].decodeQueue.push_back(request);
    Kick(instance);
}

void
ServingSimulation::StartDecodeStep(uint32_t instance)
{
    Engine& e = m_engines[instance];
    const auto batch = static_cast<uint32_t>(e.running.size());
    NS_LOG_FUNCTION(this << instance << batch);
    (m_config.disaggregated ? e.decodeBusy : e.prefillBusy) = true;
    ++m_decodeSteps;
    m_maxBatchRun = std::max(m_maxBatchRun, batch);
    if (m_config.memoryBandwidth > 0)
    {
        // the step reads its requests' KV caches: its time grows with them
        uint64_t context = 0;
        for (uint32_t id : e.running)
        {
            context += uint64_t{m_lengths.prompt[id]} + m_results[id].tokens;
        }
        Launch(BuildServingPass(m_config, e.decodeGpus, batch, batch, context),
               [this, instance]() { DecodeStepDone(instance); });
        return;
    }
    ParallelProgram& pass = e.decodePasses[batch];
    if (pass.ranks == 0)
    {
        pass = BuildServingPass(m_config, e.decodeGpus, batch, batch);
    }
    Launch(pass, [this, instance]() { DecodeStepDone(instance); });
}

void
ServingSimulation::DecodeStepDone(uint32_t instance)
{
    const double now = Simulator::Now().GetSeconds() - m_start;
    Engine& e = m_engines[instance];
    std::vector<uint32_t> still;
    for (uint32_t id : e.running)
    {
        ServingRequestResult& r = m_results[id];
        ++r.tokens;
        if (r.tokens == r.outputTokens)
        {
            r.lastToken = now;
            ++m_finished;
            --e.outstanding;
        }
        else
        {
            still.push_back(id);
        }
    }
    e.running = std::move(still);
    (m_config.disaggregated ? e.decodeBusy : e.prefillBusy) = false;
    Kick(instance);
}

bool
ServingSimulation::IsComplete() const
{
    return m_failure.empty() && m_finished == m_config.requests;
}

const std::string&
ServingSimulation::GetFailureReport() const
{
    return m_failure;
}

const std::vector<ServingRequestResult>&
ServingSimulation::GetResults() const
{
    return m_results;
}

uint64_t
ServingSimulation::GetPrefills() const
{
    return m_prefills;
}

uint64_t
ServingSimulation::GetDecodeSteps() const
{
    return m_decodeSteps;
}

uint32_t
ServingSimulation::GetMaxBatchRun() const
{
    return m_maxBatchRun;
}

std::vector<uint32_t>
ServingSimulation::GetInstanceRequests() const
{
    std::vector<uint32_t> n;
    for (const Engine& e : m_engines)
    {
        n.push_back(e.dispatched);
    }
    return n;
}

Ptr<ServingSimulation>
RunServing(const ServingConfig& config, Ptr<Transport> transport)
{
    Ptr<ServingSimulation> s = CreateObject<ServingSimulation>();
    s->Setup(config, transport);
    s->Start();
    Simulator::Run();
    return s;
}

} // namespace ns3
