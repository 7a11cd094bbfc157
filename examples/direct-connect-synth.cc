/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * direct-connect-synth: the topology finder and BFB schedules of the
 * synthesis layer from the command line.
 *
 *   direct-connect-synth --nodes=128 --degree=4 --alpha=1e-5 --bandwidth=1e11 --size=1e6
 *       prints the Pareto frontier of (T_L, T_B) and the topology chosen for the workload
 *       (bases searched: see --help and doc/gpu-fabric.rst, "Topology finder")
 *   direct-connect-synth --graph='L(L(K(4,4)))'   (or --edges=FILE)
 *       prints that graph's BFB allgather: T_L, T_B and per-step loads
 *   --simulate (with --size, --bandwidth; --chunks, --delay-ns) also runs the BFB
 *       allgather and allreduce of the given graph (or of the finder's chosen
 *       topology) on the packet-level direct-connect fabric and prints the
 *       simulated time beside the alpha-beta prediction; --alpha is not used
 *       there: the prediction's alpha is one hop (link delay plus one packet at B/d)
 *   --compare runs the BFB allreduce and the baselines (ring, shifted-ring, tree,
 *       halving-doubling; DcBaseline) as schedules on the graph (--graph/--edges; by
 *       default the finder's 12-host degree-4 graph and C(1024,{21,23})) at --sizes and
 *       prints simulated and formula times; --algorithms, --max-message-hops, --quick
 *   --json=PATH writes the same results as one JSON object.
 *   Under mpirun -np N (a build with MPI: scripts/build.sh --mpi) --simulate and
 *   --compare run each packet-level simulation on ns-3's distributed engine, the
 *   fabric cut by --partition (default domain: blocks of hosts), and print what
 *   one process prints, once.
 *
 * Work is estimated before it starts (EstimateBfbWork, EstimateFinderWork): a run
 * estimated beyond --GpuFabricMaxRunSeconds (default 12 h; 0 lifts the limit) is
 * refused naming --graph's hosts, --depth or --nodes; one beyond
 * --GpuFabricWarnRunSeconds (default 60 s) is announced on stderr with its
 * estimate and reports its progress there at most every 10 s (--progress=0:
 * neither). --timeline and --link-util record the simulated runs (--simulate,
 * --compare), and a sweep of them prints "progress: sweep" lines on a long one.
 *
 * JSON for one graph: {"nodes", "degree", "steps", "tb", "tb_optimal", "step_loads"}
 * plus "name", "tb_exact" and "step_loads_exact" (fractions as "p/q" strings), and
 * "paper": {"steps", "tb_exact"} for the paper's worked examples (BiRing(4),
 * K(4,4), L(L(K(4,4)))).
 * JSON for the finder: {"nodes", "degree", "alpha_s", "bandwidth_bps", "size_bytes",
 * "depth", "product_bfb_nodes", "collective": "allgather", "considered", "frontier": [candidate..],
 * "chosen": candidate, "baselines": [..]} with candidate = {"name", "steps", "tb",
 * "tb_exact", "tb_optimal", "time_s", "from_bfb"}; baselines are allreduce costs
 * {"name", "collective", "steps", "tb", "exact", "time_s"} of BFB on the chosen
 * topology (BFB reduce-scatter + allgather up to 4096 hosts; above, twice the
 * allgather, "exact": false unless the graph equals its reverse), ShiftedRing
 * and double binary tree; "allreduce_speedup": {"shifted_ring",
 * "double_binary_tree"} is the BFB allreduce's speedup over each (null: no
 * tree below d = 3).
 * With --simulate both objects also get "simulated_allgather_s",
 * "predicted_allgather_s", "simulated_allreduce_s", "predicted_allreduce_s"
 * and "simulation": {"graph", "size_bytes", "bandwidth_bps", "link_delay_ns",
 * "chunks_per_shard", "chunks_per_shard_allreduce", "alpha_s"}.
 * JSON for --compare: {"bandwidth_bps", "link_delay_ns", "backend", "compare": [{"graph",
 * "size_bytes", "algorithm", "simulated_s", "formula_s", "ratio", "backend", "level"}]}, one
 * row per (graph, size, algorithm); "level" is the level simulated_s comes from ("packet" or
 * "flow"), or "formula" where it was not simulated (simulated_s and ratio null).
 */
#include "program-support.h"

#include "ns3/bfb-collective.h"
#include "ns3/bfb-schedule.h"
#include "ns3/collective-baselines.h"
#include "ns3/collective-helper.h"
#include "ns3/core-module.h"
#include "ns3/dc-baselines.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-work.h"
#include "ns3/msccl-xml.h"
#include "ns3/program-flags.h"
#include "ns3/schedule-checker.h"
#include "ns3/topology-builders.h"
#include "ns3/topology-finder.h"
#include "ns3/transport-helper.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <set>

using namespace ns3;

namespace
{

/**
 * A long run's announcement and progress on stderr: the estimate once, when
 * it exceeds GpuFabricWarnRunSeconds, then a line at most every 10 s.
 */
class LongRun
{
  public:
    /// \param what the work, for the lines ("BFB allgather on K(64)")
    explicit LongRun(std::string what)
        : m_what(std::move(what)),
          m_start(std::chrono::steady_clock::now()),
          m_last(m_start)
    {
    }

    /// false after --progress=0: no announcement, no progress lines
    static inline bool s_enabled = true;

    /// Announce the run if its estimate is long; progress lines follow only then.
    void Start(double seconds, const std::string& detail)
    {
        if (m_shown || !s_enabled || seconds <= FabricWarnRunSeconds())
        {
            return;
        }
        m_shown = true;
        std::cerr << fmt::format("direct-connect-synth: {} is estimated to take {} ({}); "
                                 "progress every 10 s (GpuFabricWarnRunSeconds={:g})\n",
                                 m_what,
                                 FabricDurationText(seconds),
                                 detail,
                                 FabricWarnRunSeconds());
    }

    /// Report the progress \p text makes, at most every 10 s (made only then).
    template <typename Text>
    void Progress(Text text)
    {
        const auto now = std::chrono::steady_clock::now();
        if (!m_shown || now - m_last < std::chrono::seconds(10))
        {
            return;
        }
        m_last = now;
        std::cerr << fmt::format(
            "direct-connect-synth: {}: {}, {} so far\n",
            m_what,
            text(),
            FabricDurationText(std::chrono::duration<double>(now - m_start).count()));
    }

  private:
    std::string m_what;                            //!< the work
    std::chrono::steady_clock::time_point m_start; //!< when it began
    std::chrono::steady_clock::time_point m_last;  //!< last line
    bool m_shown{false};                           //!< announced
};

/**
 * \return BFB options that announce a long run of \p runs allgathers'
 * worth (an allreduce is two) on \p g and report its progress
 */
BfbOptions
LongBfbOptions(const DirectConnectGraph& g, const std::string& what, double runs, bool keep = true)
{
    auto line = std::make_shared<LongRun>(fmt::format("BFB {} on {}", what, g.Name()));
    BfbOptions o;
    o.keepSchedule = keep;
    o.onStart = [line, runs](const BfbWork& w) {
        line->Start(runs * w.seconds, fmt::format("{:.2g} steps", runs * w.steps));
    };
    // an allreduce is two allgathers, each counting from 0: numbered passes
    auto pass = std::make_shared<std::pair<uint64_t, uint64_t>>(1, 0); // (pass, last done)
    o.progress = [line, pass, runs](uint64_t done, uint64_t total) {
        if (done < pass->second)
        {
            ++pass->first;
        }
        pass->second = done;
        line->Progress([&] {
            const uint64_t n = total / 2;
            const std::string of =
                runs > 1 ? fmt::format("pass {} of {}: ", pass->first, runs) : "";
            return done <= n ? fmt::format("{}distance table, {} of {} rows", of, done, n)
                             : fmt::format("{}{} of {} hosts solved", of, done - n, n);
        });
    };
    return o;
}

/// \return whether \p g has the same arcs as its reverse (counted with multiplicity)
bool
EqualsItsReverse(const DirectConnectGraph& g)
{
    std::vector<std::pair<uint32_t, uint32_t>> forward;
    std::vector<std::pair<uint32_t, uint32_t>> backward;
    for (const auto& arc : g.Arcs())
    {
        forward.emplace_back(arc.from, arc.to);
        backward.emplace_back(arc.to, arc.from);
    }
    std::sort(forward.begin(), forward.end());
    std::sort(backward.begin(), backward.end());
    return forward == backward;
}

nlohmann::json
FractionList(const std::vector<Fraction>& v, bool exact)
{
    auto j = nlohmann::json::array();
    for (const auto& f : v)
    {
        if (exact)
        {
            j.push_back(ToString(f));
        }
        else
        {
            j.push_back(ToDouble(f));
        }
    }
    return j;
}

/// Write \p j to \p path, the value of --json (checked: opened and written in full).
void
WriteJson(const std::string& path, const nlohmann::json& j)
{
    WriteTextFile("--json", path, j.dump(2) + "\n");
}

/// What --simulate runs.
struct SimSettings
{
    bool enabled{false};                           //!< --simulate
    uint64_t bytes{0};                             //!< M
    double bandwidthBps{0};                        //!< B per host
    int64_t delayNs{100};                          //!< link delay
    uint32_t chunksPerShard{0};                    //!< 0: exact (capped at kMaxAutoChunks)
    std::string backend{"packet"};                 //!< packet or flow
    std::string msccl;                             //!< --msccl: write the allgather here
    std::string partition{"domain"};               //!< --partition (distributed runs)
    static constexpr uint32_t kMaxAutoChunks = 64; //!< cap of the automatic choice
};

/// Goodput share of a full packet: 4096 payload bytes in 4122 on the wire.
constexpr double kPayloadShare = 4096.0 / 4122.0;

/// One collective of one graph on the packet-level fabric.
struct SimOutcome
{
    double simulatedS{0}; //!< executor's time
    double predictedS{0}; //!< alpha * T_L + T_B * M / (B * payload share)
    uint32_t chunks{0};   //!< chunks per shard used
    double alphaS{0};     //!< one hop: link delay + one packet at B/d
};

/// \return the chunks per shard --simulate cuts \p s into
uint32_t
ChunksPerShard(const BfbSchedule& s, const SimSettings& sim)
{
    return sim.chunksPerShard != 0 ? sim.chunksPerShard
                                   : BfbAutoChunksPerShard(s, SimSettings::kMaxAutoChunks);
}

/// --msccl: the allgather --simulate runs (without it: the same chunks of M = N * chunks KiB)
void
WriteMsccl(const BfbSchedule& s, const SimSettings& sim)
{
    const uint32_t cps = ChunksPerShard(s, sim);
    const uint64_t bytes = sim.enabled ? sim.bytes : uint64_t{s.nodes} * cps * 1024;
    WriteTextFile("--msccl", sim.msccl, MscclXml::Export(BfbToCollectiveSchedule(s, bytes, cps)));
}

/// \return one hop: the link delay plus one full packet at B/d
double
HopSeconds(const SimSettings& sim, uint32_t degree)
{
    return sim.delayNs * 1e-9 + 4122.0 * 8 / (sim.bandwidthBps / degree);
}

/// Run \p cs (checked first) on \p g's fabric at sim's level. \return its time, seconds
double
RunOnFabric(const DirectConnectGraph& g, const CollectiveSchedule& cs, const SimSettings& sim)
{
    ScheduleChecker::Require(cs);
    ClusterParams p;
    const auto rate = static_cast<uint64_t>(sim.bandwidthBps);
    p.platform = HbDomainPreset::Custom(1, DataRate(rate), DataRate(rate));
    p.linkDelayNs = sim.delayNs;
    TransportHelper transports(sim.backend, "--backend");
    transports.SetPartition(sim.partition);
    const CollectiveResult r = transports.RunScheduleAlone(BuildDirectConnect(g, rate, p), cs);
    FabricRequire(r.complete, "--simulate", g.Name(), "a schedule that completes");
    return r.timeS;
}

SimOutcome
Simulate(const DirectConnectGraph& g, const BfbSchedule& s, const SimSettings& sim)
{
    const uint32_t cps = ChunksPerShard(s, sim);
    SimOutcome o;
    o.simulatedS = RunOnFabric(g, BfbToCollectiveSchedule(s, sim.bytes, cps), sim);
    o.chunks = cps;
    o.alphaS = HopSeconds(sim, s.degree);
    o.predictedS = BfbPredictedTime(s,
                                    static_cast<double>(sim.bytes),
                                    sim.bandwidthBps,
                                    static_cast<double>(sim.delayNs) * 1e-9);
    return o;
}

/// Run --simulate for \p g, print the table and add the keys to \p j.
void
SimulateGraph(const DirectConnectGraph& g,
              const BfbSchedule& ag,
              const SimSettings& sim,
              nlohmann::json& j)
{
    const BfbSchedule ar = BfbAllReduce(g, LongBfbOptions(g, "allreduce", 2));
    const SimOutcome a = Simulate(g, ag, sim);
    const SimOutcome b = Simulate(g, ar, sim);
    fmt::print("{}-level simulation of {}: M = {} bytes, B = {} bit/s, link delay {} ns, "
               "alpha (one hop) = {:.6g} s\n",
               sim.backend,
               g.Name(),
               sim.bytes,
               sim.bandwidthBps,
               sim.delayNs,
               a.alphaS);
    fmt::print("{:>10}  {:>5}  {:>10}  {:>8}  {:>14}  {:>14}  {:>8}\n",
               "collective",
               "T_L",
               "T_B (M/B)",
               "chunks",
               "simulated_s",
               "predicted_s",
               "diff");
    auto row = [](const char* name, const BfbSchedule& s, const SimOutcome& o) {
        fmt::print("{:>10}  {:>5}  {:>10.6f}  {:>8}  {:>14.6e}  {:>14.6e}  {:>+7.3f}%\n",
                   name,
                   s.Steps(),
                   ToDouble(s.Tb()),
                   o.chunks,
                   o.simulatedS,
                   o.predictedS,
                   100 * (o.simulatedS / o.predictedS - 1));
    };
    row("allgather", ag, a);
    row("allreduce", ar, b);
    j["simulated_allgather_s"] = a.simulatedS;
    j["predicted_allgather_s"] = a.predictedS;
    j["simulated_allreduce_s"] = b.simulatedS;
    j["predicted_allreduce_s"] = b.predictedS;
    j["simulation"] = {{"graph", g.Name()},
                       {"size_bytes", sim.bytes},
                       {"bandwidth_bps", sim.bandwidthBps},
                       {"link_delay_ns", sim.delayNs},
                       {"chunks_per_shard", a.chunks},
                       {"chunks_per_shard_allreduce", b.chunks},
                       {"alpha_s", a.alphaS}};
}

/// --compare's default large graph (about 1,000 hosts of degree 4).
/// A circulant of the paper's kind whose offsets are coprime to N, so that
/// ShiftedRing's four rings are its own arcs (x -> x +- 21, x -> x +- 23).
constexpr const char* kCompareLargeGraph = "C(1024,{21,23})";

/// What --compare runs.
struct CompareSettings
{
    std::vector<uint64_t> sizes;         //!< message sizes M
    std::vector<std::string> algorithms; //!< bfb and DcBaselineNames()
    uint64_t maxMessages{0};             //!< --max-message-hops: larger schedules are not simulated
};

/// A graph --compare runs, and the sizes it simulates (the formula covers all).
struct CompareGraphSpec
{
    DirectConnectGraph graph;     //!< the graph
    std::set<uint64_t> simulated; //!< sizes to simulate (empty: every size)
    std::string backend;          //!< backend for this graph ("": --backend)
    /// (algorithm, size) given by formula only, and why
    std::map<std::pair<std::string, uint64_t>, std::string> formulaOnly;
};

/// The algorithms --compare knows, in table order.
std::vector<std::string>
CompareAlgorithms()
{
    std::vector<std::string> all{"bfb"};
    const auto& names = DcBaselineNames();
    all.insert(all.end(), names.begin(), names.end());
    return all;
}

/**
 * --compare for one graph: the BFB allreduce and every baseline at every size,
 * simulated and by formula; prints a table per size and appends the rows to \p rows.
 */
void
CompareGraph(const CompareGraphSpec& spec,
             const CompareSettings& c,
             SimSettings sim,
             nlohmann::json& rows)
{
    const DirectConnectGraph& g = spec.graph;
    if (!spec.backend.empty())
    {
        sim.backend = spec.backend;
    }
    const BfbSchedule ar = BfbAllReduce(g, LongBfbOptions(g, "allreduce", 2));
    const uint64_t n = g.NumNodes();
    // the formula's alpha: one hop of an empty packet (link delay and a
    // header at B/d); every byte of payload is in the beta term
    const double alpha =
        sim.delayNs * 1e-9 + (4122.0 - 4096.0) * 8 / (sim.bandwidthBps / ar.degree);
    fmt::print("compare on {} (N = {}, d = {}): allreduce, {}-level simulation, B = {} bit/s, "
               "link delay {} ns; formula: alpha-beta, alpha = one hop of an empty packet = "
               "{:.6g} s per step, beta at B/d on the busiest arc (routes: shortest paths)\n",
               g.Name(),
               n,
               ar.degree,
               sim.backend,
               sim.bandwidthBps,
               sim.delayNs,
               alpha);
    for (uint64_t bytes : c.sizes)
    {
        sim.bytes = bytes;
        // BFB's chunks: as --simulate's allreduce, but none below a packet's
        // payload (4096 bytes) and at most about 2^21 chunk transfers (N^2
        // per chunk per shard), so that ~1,000 hosts stay quick; --chunks
        // given is taken as it is
        SimSettings simAr = sim;
        const uint64_t most =
            std::max<uint64_t>(1,
                               std::min<uint64_t>((uint64_t{1} << 21) / (n * n), bytes / n / 4096));
        if (sim.chunksPerShard == 0 && ChunksPerShard(ar, simAr) > most)
        {
            simAr.chunksPerShard = static_cast<uint32_t>(most);
        }
        fmt::print("\nM = {} bytes\n{:<18}  {:>7}  {:>14}  {:>14}  {:>8}  {}\n",
                   bytes,
                   "algorithm",
                   "level",
                   "simulated_s",
                   "formula_s",
                   "ratio",
                   "schedule");
        const bool simulateThisSize = spec.simulated.empty() || spec.simulated.count(bytes) > 0;
        for (const std::string& algo : c.algorithms)
        {
            const auto skip = spec.formulaOnly.find({algo, bytes});
            const bool simulateSize = simulateThisSize && skip == spec.formulaOnly.end();
            std::optional<double> simulated;
            double formula = 0;
            std::optional<double> planFormula; // BFB: its whole-chunk plan's
            std::string detail;
            uint64_t messages = 0;
            if (algo == "bfb")
            {
                const uint32_t cps = ChunksPerShard(ar, simAr);
                formula = AlphaBetaTime(ar.Steps(),
                                        ar.Tb(),
                                        alpha,
                                        static_cast<double>(bytes),
                                        sim.bandwidthBps * kPayloadShare);
                // the plan of whole chunks: each step as long as its busiest
                // arc's bytes at B/d (the LP's fractions rounded to cps chunks)
                const BfbChunkPlan plan = PlanBfbChunks(ar, bytes, cps);
                double busiest = 0;
                for (uint64_t b : plan.stepMaxArcBytes)
                {
                    busiest += static_cast<double>(b);
                }
                planFormula = alpha * ar.Steps() +
                              busiest * 8.0 * ar.degree / (sim.bandwidthBps * kPayloadShare);
                detail = fmt::format("T_L = {}, T_B = {}, {} chunks per shard, their plan {:.6e} s",
                                     ar.Steps(),
                                     ToString(ar.Tb()),
                                     cps,
                                     *planFormula);
                // every chunk crosses N - 1 arcs in each half
                messages = 2 * (n - 1) * n * cps;
                if (simulateSize && messages <= c.maxMessages)
                {
                    simulated = Simulate(g, ar, simAr).simulatedS;
                }
            }
            else
            {
                DcBaseline b = BuildDcBaseline(g, algo, bytes, false);
                formula = DcBaselineFormula(g, b, alpha, sim.bandwidthBps * kPayloadShare);
                detail = b.routing;
                // the simulation's work: messages times their mean route length
                DcRouter router(g);
                double hops = 0;
                double count = 0;
                for (size_t i = 0; i < b.steps.size(); ++i)
                {
                    for (const DcMessage& m : b.steps[i])
                    {
                        hops += b.repeats[i] * router.Hops(m.src, m.dst);
                        count += b.repeats[i];
                    }
                }
                messages = static_cast<uint64_t>(
                    std::ceil(static_cast<double>(b.messages) * hops / std::max(1.0, count)));
                if (simulateSize && messages <= c.maxMessages)
                {
                    simulated = RunOnFabric(g, BuildDcBaseline(g, algo, bytes).schedule, sim);
                }
            }
            if (skip != spec.formulaOnly.end())
            {
                detail += "; not simulated: " + skip->second;
            }
            if (simulateSize && messages > c.maxMessages)
            {
                detail +=
                    fmt::format("; not simulated: {} message hops > --max-message-hops", messages);
            }
            // the level the simulated time comes from; "formula": not simulated
            const std::string level = simulated ? sim.backend : "formula";
            fmt::print("{:<18}  {:>7}  {:>14}  {:>14.6e}  {:>8}  {}\n",
                       algo,
                       level,
                       simulated ? fmt::format("{:.6e}", *simulated) : "-",
                       formula,
                       simulated ? fmt::format("{:.4f}", *simulated / formula) : "-",
                       detail);
            nlohmann::json row = {{"graph", g.Name()},
                                  {"size_bytes", bytes},
                                  {"algorithm", algo},
                                  {"simulated_s", nullptr},
                                  {"formula_s", formula},
                                  {"ratio", nullptr},
                                  {"backend", sim.backend},
                                  {"level", level}};
            if (simulated)
            {
                row["simulated_s"] = *simulated;
                row["ratio"] = *simulated / formula;
            }
            if (planFormula)
            {
                row["plan_formula_s"] = *planFormula;
            }
            rows.push_back(row);
        }
    }
    fmt::print("\n");
}

/// --compare: every graph, then the JSON.
int
RunCompare(const std::vector<CompareGraphSpec>& graphs,
           const CompareSettings& c,
           const SimSettings& sim,
           const std::string& json)
{
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& g : graphs)
    {
        CompareGraph(g, c, sim, rows);
    }
    fmt::print("paper (12-node testbed, d = 4, allreduce): BFB about 75% / 20% faster than "
               "ShiftedRing / double binary tree at 1 KB, 50% / 45% at 1 MB, on par / 50% at "
               "1 GB\n");
    if (!json.empty())
    {
        nlohmann::json j;
        j["bandwidth_bps"] = sim.bandwidthBps;
        j["link_delay_ns"] = sim.delayNs;
        j["backend"] = sim.backend;
        j["compare"] = rows;
        WriteJson(json, j);
    }
    return 0;
}

/// The paper's exact worked examples (../shared/reference/direct-connect.md):
/// graph name -> (T_L, T_B as "p/q").
const std::map<std::string, std::pair<uint32_t, std::string>> kPaperExamples = {
    {"BiRing(4)", {2, "3/4"}},
    {"K(4,4)", {2, "7/8"}},
    {"L(L(K(4,4)))", {4, "33/32"}},
};

int
RunGraph(const DirectConnectGraph& g, const std::string& json, const SimSettings& sim)
{
    auto s = BfbAllGather(g, LongBfbOptions(g, "allgather", 1));
    if (!sim.msccl.empty())
    {
        WriteMsccl(s, sim);
    }
    fmt::print("graph {}: N = {}, d = {}{}\n",
               g.Name(),
               g.NumNodes(),
               s.degree,
               g.IsRegular() ? "" : " (irregular: d = max degree)");
    fmt::print("BFB allgather: T_L = {} steps, T_B = {} = {:.6f} M/B, lower bound {} ({})\n",
               s.Steps(),
               ToString(s.Tb()),
               ToDouble(s.Tb()),
               ToString(s.TbLowerBound()),
               s.TbOptimal() ? "bandwidth-optimal" : "not bandwidth-optimal");
    const auto paper = kPaperExamples.find(g.Name());
    if (paper != kPaperExamples.end())
    {
        fmt::print("paper: T_L = {}, T_B = {} ({})\n",
                   paper->second.first,
                   paper->second.second,
                   paper->second.first == s.Steps() && paper->second.second == ToString(s.Tb())
                       ? "the same"
                       : "DIFFERENT");
    }
    fmt::print("{:>6}  {:>12}  {:>12}\n", "step", "load", "load (exact)");
    auto loads = s.StepLoads();
    for (size_t t = 0; t < loads.size(); ++t)
    {
        fmt::print("{:>6}  {:>12.6f}  {:>12}\n", t + 1, ToDouble(loads[t]), ToString(loads[t]));
    }
    nlohmann::json j;
    if (sim.enabled)
    {
        SimulateGraph(g, s, sim, j);
    }
    if (!json.empty())
    {
        j["name"] = g.Name();
        j["nodes"] = g.NumNodes();
        j["degree"] = s.degree;
        j["steps"] = s.Steps();
        j["tb"] = ToDouble(s.Tb());
        j["tb_exact"] = ToString(s.Tb());
        j["tb_optimal"] = s.TbOptimal();
        j["step_loads"] = FractionList(loads, false);
        j["step_loads_exact"] = FractionList(loads, true);
        if (paper != kPaperExamples.end())
        {
            j["paper"] = {{"steps", paper->second.first}, {"tb_exact", paper->second.second}};
        }
        WriteJson(json, j);
    }
    return 0;
}

nlohmann::json
CandidateJson(const SynthCandidate& c, const FinderWorkload& w)
{
    return {{"name", c.name},
            {"steps", c.steps},
            {"tb", ToDouble(c.tb)},
            {"tb_exact", ToString(c.tb)},
            {"tb_optimal", c.tb == Fraction(c.nodes - 1, c.nodes)},
            {"time_s", CandidateTime(c, w)},
            {"from_bfb", c.fromBfb}};
}

int
RunFinder(uint32_t nodes,
          uint32_t degree,
          const FinderWorkload& w,
          FinderOptions o,
          const std::string& json,
          const SimSettings& sim)
{
    // the search's work up front: refused by --nodes if its bases alone are
    // too long, else by --depth; announced, with progress, if long
    const FinderWork plan = EstimateFinderWork(nodes, degree, o);
    FinderOptions bases = o;
    bases.maxDepth = 0;
    const bool byNodes = o.maxDepth == 0 || !(EstimateFinderWork(nodes, degree, bases).seconds <=
                                              FabricMaxRunSeconds());
    const std::string planText = FinderWorkText(plan, nodes, degree, o);
    if (byNodes)
    {
        FabricRequireWork(plan.seconds, "--nodes", nodes, planText);
    }
    else
    {
        FabricRequireWork(plan.seconds, "--depth", o.maxDepth, planText);
    }
    auto line = std::make_shared<LongRun>(
        fmt::format("the finder for N = {}, d = {} at depth {}", nodes, degree, o.maxDepth));
    line->Start(
        plan.seconds,
        fmt::format("about {:.0f} BFB evaluations, {:.2g} steps", plan.bfbRuns, plan.steps));
    o.progress = [line](uint64_t done, uint64_t total) {
        line->Progress([&] { return fmt::format("{} of about {} BFB evaluations", done, total); });
    };
    auto r = FindTopology(nodes, degree, w, o);
    fmt::print("N = {}, d = {}: {} candidates, {} on the (T_L, T_B) frontier (allgather)\n",
               nodes,
               degree,
               r.considered,
               r.frontier.size());
    fmt::print("workload: alpha = {} s, B = {} bit/s, M = {} bytes\n",
               w.alphaSeconds,
               w.bandwidthBps,
               w.messageBytes);
    // "bfb": BFB run on the graph itself; "expanded": the cost of the schedule
    // the expansions build from their parts (closed form), which BFB on that
    // graph may beat
    fmt::print("{:>5}  {:>10}  {:>12}  {:>8}  {:>12}  {}\n",
               "T_L",
               "T_B (M/B)",
               "T_B exact",
               "from",
               "time_s",
               "construction");
    for (const auto& c : r.frontier)
    {
        fmt::print("{:>5}  {:>10.6f}  {:>12}  {:>8}  {:>12.6g}  {}{}\n",
                   c.steps,
                   ToDouble(c.tb),
                   ToString(c.tb),
                   c.fromBfb ? "bfb" : "expanded",
                   CandidateTime(c, w),
                   c.name,
                   c.name == r.best.name ? "   <= chosen" : "");
    }
    fmt::print("from: bfb = BFB on the graph itself; expanded = the cost of the schedule the "
               "expansion builds from its parts' schedules (BFB on the graph may do better)\n");
    fmt::print("chosen: {} (allgather {:.6g} s)\n", r.best.name, r.bestTimeSeconds);

    nlohmann::json baselines = nlohmann::json::array();
    auto seconds = [&](const BaselineCost& b) {
        return AlphaBetaTime(b.steps, b.tb, w.alphaSeconds, w.messageBytes, w.bandwidthBps);
    };
    auto addBaseline = [&](const BaselineCost& b, bool exact = true) {
        const double t = seconds(b);
        fmt::print("allreduce {:<18} T_L = {:>5}  T_B = {:>9.6f}  time_s = {:.6g}\n",
                   b.name,
                   b.steps,
                   ToDouble(b.tb),
                   t);
        baselines.push_back({{"name", b.name},
                             {"collective", "allreduce"},
                             {"steps", b.steps},
                             {"tb", ToDouble(b.tb)},
                             {"exact", exact},
                             {"time_s", t}});
    };
    // allreduce of the chosen topology: BFB reduce-scatter (an allgather on the
    // reverse graph) + allgather, up to 4096 hosts (a few seconds); above,
    // twice the allgather, which is exact only for a graph equal to its
    // reverse (generalized Kautz graphs are not)
    const DirectConnectGraph chosenGraph = BuildFromName(r.best.name);
    BaselineCost chosen{"BFB " + r.best.name, 2 * r.best.steps, 2 * r.best.tb};
    bool chosenExact = true;
    if (nodes <= 4096)
    {
        auto ar = BfbAllReduce(chosenGraph, LongBfbOptions(chosenGraph, "allreduce", 2, false));
        chosen.steps = ar.Steps();
        chosen.tb = ar.Tb();
    }
    else if (!EqualsItsReverse(chosenGraph))
    {
        chosenExact = false;
        chosen.name += " (2x allgather: estimate)";
    }
    addBaseline(chosen, chosenExact);
    const BaselineCost ring = ShiftedRingAllReduce(nodes, degree);
    addBaseline(ring);
    // the BFB allreduce's speedup over each baseline, printed and written
    auto speedupOver = [&](const BaselineCost& b) { return seconds(b) / seconds(chosen); };
    nlohmann::json speedup = {{"shifted_ring", speedupOver(ring)}, {"double_binary_tree", nullptr}};
    std::string speedups = fmt::format("{:.2f}x ShiftedRing", speedupOver(ring));
    if (degree >= 3)
    {
        const BaselineCost tree = DoubleBinaryTreeAllReduce(nodes, degree);
        addBaseline(tree);
        speedup["double_binary_tree"] = speedupOver(tree);
        speedups += fmt::format(", {:.2f}x double binary tree", speedupOver(tree));
    }
    fmt::print("BFB allreduce on the chosen topology, speedup over: {}\n", speedups);
    fmt::print("paper (about 1000 nodes, alpha-beta, over message sizes): up to 56x ShiftedRing, "
               "10x double binary tree\n");
    nlohmann::json j;
    if (sim.enabled)
    {
        SimulateGraph(chosenGraph,
                      BfbAllGather(chosenGraph, LongBfbOptions(chosenGraph, "allgather", 1)),
                      sim,
                      j);
    }
    if (!json.empty())
    {
        j["nodes"] = nodes;
        j["degree"] = degree;
        j["alpha_s"] = w.alphaSeconds;
        j["bandwidth_bps"] = w.bandwidthBps;
        j["size_bytes"] = w.messageBytes;
        j["depth"] = o.maxDepth;
        j["product_bfb_nodes"] = o.maxProductBfbNodes;
        j["collective"] = "allgather";
        j["considered"] = r.considered;
        j["frontier"] = nlohmann::json::array();
        for (const auto& c : r.frontier)
        {
            j["frontier"].push_back(CandidateJson(c, w));
        }
        j["chosen"] = CandidateJson(r.best, w);
        j["baselines"] = baselines;
        j["allreduce_speedup"] = speedup;
        WriteJson(json, j);
    }
    return 0;
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t nodes = 128;
    uint32_t degree = 4;
    double alpha = 1e-5;
    double bandwidth = 1e11;
    double size = 1048576;
    uint32_t depth = 2;
    uint32_t productBfbNodes = FinderOptions().maxProductBfbNodes;
    std::string graph;
    std::string edges;
    std::string json;
    bool simulate = false;
    uint32_t chunks = 0;
    uint32_t delayNs = 100;
    ProgramFlags cmd("direct-connect-synth", __FILE__);
    const RunOutputs outputs(cmd); // --timeline, --link-util, --progress
    cmd.Usage(
        "Direct-connect topology finder and BFB schedules (Zhao et al., NSDI 2025).\n"
        "The finder's bases for N hosts of degree d (where they exist): K(N), K(d,d), Ring(N),\n"
        "BiRing(N), tori, Hypercube(d), Hamming, Kautz, GenKautz, Petersen, and at every d >= 2\n"
        "the circulants C(N,S) (x -> x+-s; every one up to isomorphism when at most 128, else\n"
        "C(N,{a,...,a+d/2-1}) near a = sqrt(N(d/2-1)/2)) and DC(N,{a,...,a+d-1}) (x -> x+s)\n"
        "near a = sqrt(N(d-1)); then line graphs, degree expansions and products of them up\n"
        "to --depth.");
    // counts of at most nine digits, as before they were typed
    const auto count = [](uint32_t most) { return [most](uint32_t v) { return v <= most; }; };
    const auto any = [](double) { return true; };
    cmd.AddValue<uint32_t>("nodes",
                           "number of hosts N for the finder",
                           nodes,
                           "an integer N >= 2",
                           [](uint32_t v) { return v >= 2 && v <= 999999999; });
    cmd.AddValue<uint32_t>("degree",
                           "ports per host d for the finder",
                           degree,
                           "an integer 1 <= d < N",
                           count(999999999)); // 1 <= d < N checked once N is known
    cmd.AddValue<double>("alpha",
                         "per-step latency alpha, seconds",
                         alpha,
                         "a finite number of seconds >= 0",
                         [](double v) { return v >= 0; });
    // ranges that depend on --simulate are checked after parsing
    cmd.AddValue<double>("bandwidth",
                         "per-host bandwidth B, bits per second",
                         bandwidth,
                         "a finite rate > 0 in bit/s",
                         any);
    cmd.AddValue<double>("size",
                         "allgather message size M, bytes",
                         size,
                         FlagIsTrue(argc, argv, "simulate") ? "a whole number of bytes >= 1"
                                                            : "a finite number of bytes >= 0",
                         any);
    cmd.AddValue<uint32_t>("depth",
                           "expansion depth of the finder (0..4)",
                           depth,
                           "an integer 0..4",
                           count(4));
    cmd.AddValue<uint32_t>(
        "product-bfb-nodes",
        "finder: products up to this many hosts are evaluated with BFB on the product "
        "(exact), larger ones with the dimension-ordered schedule (an upper bound)",
        productBfbNodes,
        "an integer number of hosts, 0 to 999999999",
        count(999999999));
    cmd.AddValue("graph", "construction name, e.g. L(L(K(4,4))): print its BFB instead", graph);
    cmd.AddValue("edges", "edge-list file ('u v' per line): print its BFB instead", edges);
    cmd.AddValue("json", "write the results as JSON to this path", json);
    cmd.AddValue("simulate",
                 "also run BFB allgather and allreduce on the packet-level fabric "
                 "(--size bytes, --bandwidth bit/s per host; --alpha is not used)",
                 simulate);
    cmd.AddValue<uint32_t>(
        "chunks",
        "with --simulate or --compare: chunks per shard (0: the exact count, at most 64; for "
        "allreduce also a multiple of 2..d when that stays <= 64; --compare then caps it at "
        "about 2^21 chunk transfers and 4096-byte chunks, a count given is taken as it is)",
        chunks,
        "an integer >= 0 (0: exact)",
        count(999999999));
    cmd.AddValue<uint32_t>("delay-ns",
                           "with --simulate: link delay in nanoseconds",
                           delayNs,
                           "an integer number of ns >= 0",
                           count(999999999));
    std::string backend = "packet";
    cmd.AddValue("backend", "with --simulate: packet | flow (flow-level backend)", backend);
    std::string msccl;
    cmd.AddValue("msccl",
                 "with --graph or --edges: write the BFB allgather (as --simulate runs it) as "
                 "MSCCL algorithm XML to this path",
                 msccl);
    bool compare = false;
    cmd.AddValue("compare",
                 "run the BFB allreduce and the baselines (ring, ShiftedRing, double binary "
                 "tree, halving-doubling) as schedules on the graph (--graph/--edges, else the "
                 "12-node degree-4 testbed shape and C(1024,{21,23})) and print simulated "
                 "and formula times per --sizes",
                 compare);
    std::string sizes = "1024,1048576,1073741824";
    cmd.AddValue("sizes", "with --compare: message sizes M in bytes, comma-separated", sizes);
    std::string algorithms = "bfb,ring,shifted-ring,tree,halving-doubling";
    cmd.AddValue("algorithms",
                 "with --compare: algorithms, comma-separated, of bfb, ring, shifted-ring, "
                 "tree, halving-doubling",
                 algorithms);
    uint64_t maxMessages = uint64_t{1} << 24;
    cmd.AddInteger("max-message-hops",
                   "with --compare: a schedule whose messages times their mean route length "
                   "exceed this is not simulated (formula only; the simulation's work grows "
                   "with it)",
                   maxMessages,
                   1,
                   uint64_t{1} << 32);
    bool quick = false;
    cmd.AddValue("quick",
                 "with --compare: the 12-node graph only (without --graph/--edges), sizes 1 KiB "
                 "and 1 MiB unless --sizes is given",
                 quick);
    std::string partition = "domain";
    cmd.AddPartition(partition, "with --simulate or --compare at packet level");
    cmd.UseFabricScheduler();
    cmd.Parse(argc, argv);
    const bool distributed =
        cmd.Distribute(argc, argv, simulate || compare, "only --simulate and --compare simulate");
    LongRun::s_enabled = outputs.Progress();
    try
    {
        FabricRequire(graph.empty() || edges.empty(),
                      "--graph/--edges",
                      graph + " / " + edges,
                      "at most one of --graph and --edges");
        // a flag that would be ignored is refused: the user meant something by it
        const bool finder = graph.empty() && edges.empty();
        for (const char* f : {"chunks", "delay-ns", "backend"})
        {
            cmd.OnlyWith(f, simulate || compare, "with --simulate or --compare");
        }
        cmd.OnlyWith("simulate", !compare, "without --compare (which simulates anyway)");
        cmd.OnlyWith("partition",
                     distributed,
                     "under mpirun -np N (N > 1), with --simulate or --compare, in a build "
                     "with MPI");
        for (const char* f : {"nodes", "degree", "depth", "alpha", "product-bfb-nodes"})
        {
            cmd.OnlyWith(f,
                         finder && !compare,
                         "for the finder (without --graph, --edges or --compare)");
        }
        cmd.OnlyWith("size",
                     (finder || simulate) && !compare,
                     "for the finder, or with --simulate");
        cmd.OnlyWith("bandwidth",
                     finder || simulate || compare,
                     "for the finder, or with --simulate");
        for (const char* f : {"sizes", "algorithms", "quick", "max-message-hops"})
        {
            cmd.OnlyWith(f, compare, "with --compare");
        }
        cmd.OnlyWith("msccl", !finder && !compare, "with --graph or --edges, without --compare");
        // the fabric flags of --simulate and --compare
        auto fabricSettings = [&](const char* with) {
            SimSettings f;
            f.bandwidthBps = bandwidth;
            FabricRequire(f.bandwidthBps >= 1e3 && f.bandwidthBps <= 1e15,
                          "--bandwidth",
                          cmd.ValueText("bandwidth"),
                          fmt::format("a rate of 1e3 .. 1e15 bit/s with {}", with));
            f.chunksPerShard = chunks;
            f.delayNs = delayNs;
            f.backend = backend;
            f.partition = partition;
            return f;
        };
        if (compare)
        {
            CompareSettings c;
            for (const std::string& item : SplitList("--sizes", sizes))
            {
                c.sizes.push_back(ParseInteger("--sizes", item, 1, uint64_t{1} << 40));
            }
            if (quick && !cmd.WasGiven("sizes"))
            {
                c.sizes = {1024, 1048576};
            }
            const auto known = CompareAlgorithms();
            for (const std::string& item : SplitList("--algorithms", algorithms))
            {
                FabricRequire(std::find(known.begin(), known.end(), item) != known.end(),
                              "--algorithms",
                              item,
                              "bfb, ring, shifted-ring, tree or halving-doubling");
                c.algorithms.push_back(item);
            }
            SimSettings sim = fabricSettings("--compare");
            c.maxMessages = maxMessages;
            std::vector<CompareGraphSpec> graphs;
            if (!graph.empty())
            {
                graphs.push_back({BuildFromName(graph), {}, "", {}});
            }
            else if (!edges.empty())
            {
                graphs.push_back({LoadEdgeList(edges), {}, "", {}});
            }
            else
            {
                // the testbed shape: the finder's choice for 12 hosts of degree 4
                graphs.push_back(
                    {BuildFromName(FindTopology(12, 4, FinderWorkload()).best.name), {}, "", {}});
                if (!quick)
                {
                    // ~1,000 hosts: every size, at flow level unless --backend
                    // says otherwise (the packet level takes hours there)
                    CompareGraphSpec big{BuildFromName(kCompareLargeGraph),
                                         {},
                                         cmd.WasGiven("backend") ? "" : "flow",
                                         {}};
                    // but the tree at 1 GiB: 64 chunks per tree over
                    // multi-hop routes keep ~2,400 links in one max-min
                    // component, recomputed at every instant a chunk moves
                    big.formulaOnly[{"tree", uint64_t{1} << 30}] =
                        fmt::format("the tree at 1 GiB on {0} takes about 17 minutes at flow "
                                    "level (--graph='{0}' --algorithms=tree --sizes=1073741824 "
                                    "simulates it)",
                                    kCompareLargeGraph);
                    graphs.push_back(std::move(big));
                }
            }
            return RunCompare(graphs, c, sim, json);
        }
        SimSettings sim;
        sim.enabled = simulate;
        sim.msccl = msccl;
        if (simulate)
        {
            FabricRequire(size >= 1 && size <= 1e15 && std::floor(size) == size,
                          "--size",
                          cmd.ValueText("size"),
                          "a whole number of bytes, 1 .. 1e15, with --simulate");
            const SimSettings fabric = fabricSettings("--simulate");
            sim.bandwidthBps = fabric.bandwidthBps;
            sim.chunksPerShard = fabric.chunksPerShard;
            sim.delayNs = fabric.delayNs;
            sim.backend = fabric.backend;
            sim.bytes = static_cast<uint64_t>(size);
        }
        if (!graph.empty())
        {
            return RunGraph(BuildFromName(graph), json, sim);
        }
        if (!edges.empty())
        {
            return RunGraph(LoadEdgeList(edges), json, sim);
        }
        FinderWorkload w;
        w.alphaSeconds = alpha;
        w.bandwidthBps = bandwidth;
        w.messageBytes = size;
        FabricRequire(degree >= 1 && degree < nodes,
                      "--degree",
                      cmd.ValueText("degree"),
                      fmt::format("an integer 1 <= d < N = {}", nodes));
        FinderOptions o;
        o.maxDepth = depth;
        o.maxProductBfbNodes = productBfbNodes;
        FabricRequire(w.bandwidthBps > 0,
                      "--bandwidth",
                      cmd.ValueText("bandwidth"),
                      "a finite rate > 0 in bit/s");
        FabricRequire(w.messageBytes >= 0,
                      "--size",
                      cmd.ValueText("size"),
                      "a finite number of bytes >= 0");
        return RunFinder(nodes, degree, w, o, json, sim);
    }
    catch (const FabricConfigError& e)
    {
        std::cerr << "direct-connect-synth: " << e.what() << "\n";
        return 2;
    }
    catch (const std::exception& e)
    {
        std::cerr << "direct-connect-synth: error: " << e.what() << "\n";
        return 2;
    }
}
