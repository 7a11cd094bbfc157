/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// examples/rail-only-vs-fat-tree: one training iteration of the same job
// simulated on a rail-only network, a rail-optimized fat-tree, a classic
// fat-tree and a direct-connect graph of the HB domains (a hypercube when
// they are a power of two: each PP stage's DP groups then sit on a subcube
// and run BFB), with the network cost of each beside its time; plus the
// paper's analytical model (Eq. 1) and the equipment cost at its 32768-GPU
// scale.
//
// The simulated job (defaults; a scaled-down GPT so that it runs in minutes on
// two cores): 128 DGX-H100 GPUs, a GPT-like model of 8 blocks, d_model 2048,
// sequences of 1024 tokens; TP 8 inside each HB domain, PP 2 and DP 8 across
// domains on the rails, as the rail-only paper places them; 1F1B with 4
// micro-batches per replica; every block's 2 + 2 TP AllReduces, the pipeline
// transfers and the hierarchical DP AllReduce simulated packet by packet.
// Radix auto (2 x GPUs per rail, 32 here): each rail fills half a leaf of the
// rail-optimized fat-tree (its rail switch, as in a DGX SuperPOD) and one
// logical switch of the rail-only network (two such rails share a 32-port
// chassis, so 8 rails take 4 switches); a classic fat-tree puts whole servers
// under a leaf, so there all traffic between domains crosses the spine.
// A smaller --radix spreads a rail over several leaves: ECMP collisions on
// the fat-tree's uplinks then show up (rail-only keeps a rail on one switch
// as long as it fits).
// --quick runs 64 GPUs and a smaller model in seconds; --backend=flow runs the
// same programs on the flow-level backend (fluid max-min fair flows).
// Under mpirun -np N (a build with MPI) the packet-level iterations run on
// ns-3's distributed engine, each fabric cut over the ranks (--partition);
// rank 0 prints and writes the results.
#include "program-support.h"
#include "results-table.h"

#include "ns3/core-module.h"
#include "ns3/gpu-fabric-module.h"
#include "ns3/program-flags.h"
#include "ns3/topology-helper.h"
#include "ns3/transport-helper.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

using namespace ns3;

namespace
{

/**
 * The direct-connect graph of a run that names none: a hypercube when the
 * graph nodes are a power of two (a pipeline stage's DP group, a block of
 * consecutive domains of a power-of-two size, is then a subcube, and a
 * domain's next stage is a neighbour along one dimension), else a
 * bidirectional ring; none below 2 nodes.
 * \param nodes graph nodes (HB domains, or GPUs with --dc-nodes=gpu)
 * \return the construction name ("" for none)
 */
std::string
DefaultGraph(uint32_t nodes)
{
    if (nodes < 2)
    {
        return "";
    }
    if ((nodes & (nodes - 1)) == 0)
    {
        uint32_t k = 0;
        while ((1U << k) < nodes)
        {
            ++k;
        }
        return fmt::format("Hypercube({})", k);
    }
    return fmt::format("BiRing({})", nodes); // at least 3 nodes here
}

/// One of the topologies by name; direct-connect over \p dc's graph.
FabricTopology
Build(const std::string& topology, const ClusterParams& p, const DirectConnectFlags& dc)
{
    FabricRequire(topology == "rail-only" || topology == "rail-optimized" ||
                      topology == "fat-tree" || topology == "direct-connect",
                  "--topologies",
                  topology,
                  "rail-only, rail-optimized, fat-tree or direct-connect");
    return dc.Topologies(p).Create(topology);
}

/// One result row.
struct Row
{
    std::string topology;
    uint32_t gpus{0};
    std::string model;
    bool simulated{false};
    double time{0};       //!< simulated (or formula) iteration time
    double analytical{0}; //!< Eq. 1
    double bubble{0};     //!< 1F1B bubble, (PP - 1)(F + B) of the slowest stage
    uint32_t pp{1};       //!< PP size (simulated rows)
    FabricCounts counts;
    double cost{0};
    double power{0};
    std::string dpAlgorithm;     //!< the slowest DP allreduce's algorithm (simulated rows)
    double dpSeconds{0};         //!< its time
    uint64_t dpBytes{0};         //!< its size
    double dpFormula{0};         //!< BFB: its alpha-beta formula on the arcs' share
    uint32_t dpGroupsSharing{0}; //!< BFB: DP allreduces on the same hosts at once
};

/**
 * BFB's alpha-beta time for a DP allreduce of a direct-connect fabric: the
 * schedule on the graph its hosts induce, each arc shared evenly by the DP
 * allreduces on the same hosts (a job's DP groups, one per TP rank, run at
 * once on the same arcs: the same bucket of every group on those hosts).
 * \param dc the fabric's schedules \param comm the allreduce
 * \param program the job \param topo the fabric \param k GPUs per graph node
 * \param sharing set to the DP allreduces on comm's hosts
 * \return seconds
 */
double
DpBfbFormula(DirectConnectSchedules& dc,
             const ProgramComm& comm,
             const ParallelProgram& program,
             const FabricTopology& topo,
             uint32_t k,
             uint32_t& sharing)
{
    const auto hosts = [k](const ProgramComm& c) {
        std::vector<uint32_t> h;
        for (const uint32_t r : c.members)
        {
            h.push_back(r / k);
        }
        return h;
    };
    // the same bucket of the other groups ("... group G" differs)
    const auto bucket = [](const ProgramComm& c) {
        return c.label.substr(0, c.label.rfind(" group "));
    };
    sharing = 0;
    for (const ProgramComm& c : program.comms)
    {
        if (bucket(c) == bucket(comm) && hosts(c) == hosts(comm))
        {
            ++sharing;
        }
    }
    uint64_t arcBps = 0;
    int64_t delayNs = 0;
    for (const TopoCable& cable : topo.Cables())
    {
        if (cable.kind == TopoLinkKind::Direct)
        {
            arcBps = cable.rateBps;
            delayNs = cable.delayNs;
            break;
        }
    }
    const BfbSchedule& s = *dc.GetBfb(comm.collective, comm.members);
    return BfbPredictedTime(s,
                            static_cast<double>(comm.bytes),
                            static_cast<double>(arcBps) * s.degree / sharing,
                            static_cast<double>(delayNs) * 1e-9);
}

void
Plot(const std::vector<Row>& rows, const std::string& png)
{
    const std::string dat = png + ".dat";
    const std::string gp = png + ".gp";
    double refTime = 0;
    double refCost = 0;
    for (const Row& r : rows)
    {
        if (r.simulated && r.topology == "rail-optimized")
        {
            refTime = r.time;
            refCost = r.cost;
        }
    }
    {
        std::string text = "# topology time_rel cost_rel time_s cost_usd\n";
        for (const Row& r : rows)
        {
            if (r.simulated)
            {
                text += fmt::format("{} {} {} {} {}\n",
                                    r.topology,
                                    refTime > 0 ? r.time / refTime : 1.0,
                                    refCost > 0 ? r.cost / refCost : 1.0,
                                    r.time,
                                    r.cost);
            }
        }
        WriteTextFile("--png", png, "a path whose .dat next to it is writable", dat, text);
    }
    {
        const std::string text =
            "set terminal pngcairo size 800,500\n" +
            fmt::format("set output {}\n", GnuplotPath("--png", png)) +
            "set title 'Same job: simulated iteration time and network cost (rail-optimized = "
            "1)'\n"
            "set style data histograms\nset style histogram clustered gap 1\n"
            "set style fill solid 0.8 border -1\nset boxwidth 0.9\nset yrange [0:*]\n"
            "set ylabel 'relative to rail-optimized fat-tree'\nset grid ytics\nset key top left\n" +
            fmt::format("plot {} using 2:xtic(1) title 'iteration time', '' using 3 title "
                        "'network cost'\n",
                        GnuplotPath("--png", dat));
        WriteTextFile("--png", png, "a path whose .gp next to it is writable", gp, text);
    }
    RenderPlot(gp, dat, png);
}

} // namespace

int
main(int argc, char* argv[])
{
    bool quick = false;
    uint32_t n = 128;
    std::string platform = "dgx-h100";
    uint32_t tp = 8;
    uint32_t pp = 2;
    uint32_t m = 4;
    uint32_t layers = 8;
    uint32_t hidden = 2048;
    uint32_t seq = 1024;
    std::string radixText = "auto";
    std::string topologies = "rail-only,rail-optimized,fat-tree,direct-connect";
    std::string granularity = "layer";
    bool overlapDp = false;
    std::string backend = "packet";
    std::string pricePreset = "hotnets2023";
    uint32_t pn = 32768;
    std::string paperModels = "gpt3-175b,opt-175b";
    std::string paperPlatform = "gh200-256-hotnets";
    uint32_t pradix = 64;
    std::string png = "rail-only-vs-fat-tree.png";
    std::string json;
    std::string csv;

    // --quick changes the defaults only: flags given with it still apply
    if (FlagIsTrue(argc, argv, "quick"))
    {
        n = 64;
        layers = 4;
        hidden = 1024;
        m = 2;
    }
    ProgramFlags cmd("rail-only-vs-fat-tree", __FILE__);
    const RunOutputs outputs(cmd);         // --timeline, --link-util, --progress
    const PacketControlFlags control(cmd); // --cc, --lb
    cmd.Usage("Simulated iteration time and network cost of one training job on rail-only, "
              "rail-optimized fat-tree, fat-tree and a direct-connect graph; the paper's Eq. 1 "
              "and costs at 32768 GPUs.");
    cmd.AddValue("quick",
                 "small defaults (64 GPUs, 4 blocks of d_model 1024, 2 micro-batches); "
                 "--gpus, --layers, --hidden or --micro-batches given with it win",
                 quick);
    cmd.AddInteger("gpus", "simulated GPUs N", n);
    cmd.AddValue("platform",
                 fmt::format("platform preset: {}", fmt::join(HbDomainPreset::Names(), "|")),
                 platform);
    cmd.AddInteger("tp", "TP size (divides K)", tp);
    cmd.AddInteger("pp", "PP size (DP = N / (TP PP))", pp);
    cmd.AddInteger("micro-batches", "micro-batches per replica (one sequence each)", m);
    cmd.AddInteger("layers", "blocks of the scaled-down GPT", layers);
    cmd.AddInteger("hidden", "d_model of the scaled-down GPT (16 heads)", hidden);
    cmd.AddInteger("seq", "sequence length, tokens", seq);
    cmd.AddValue("radix",
                 "ports per network switch (auto: 2 x GPUs per rail, at least 8, so that a rail "
                 "fills half a leaf of the rail-optimized fat-tree)",
                 radixText);
    cmd.AddValue("topologies",
                 "comma-separated: rail-only, rail-optimized, fat-tree, direct-connect (on "
                 "--graph; without it a hypercube of the graph nodes when they are a power of "
                 "two, else a bidirectional ring)",
                 topologies);
    DirectConnectFlags dc;
    dc.Add(cmd);
    cmd.AddValue("granularity",
                 "TP AllReduces per block (layer) or per pass (micro-batch)",
                 granularity);
    cmd.AddValue("overlap-dp", "DP AllReduce in buckets during the last backward pass", overlapDp);
    cmd.AddValue("backend", "packet | flow (flow-level max-min fair backend)", backend);
    cmd.AddValue("price-preset",
                 fmt::format("prices: {}", fmt::join(FabricCostModel::PricePresets(), "|")),
                 pricePreset);
    cmd.AddInteger("paper-gpus", "GPUs of the formula rows (the paper's scale)", pn);
    cmd.AddValue("paper-models", "comma-separated model presets of the formula rows", paperModels);
    cmd.AddValue("paper-platform", "platform of the formula rows (K, B_F, B_S, C)", paperPlatform);
    cmd.AddInteger("paper-radix", "switch radix of the formula rows' cost", pradix);
    cmd.AddValue("png", "plot PNG path (none: no plot)", png);
    cmd.AddValue("json", "write results as JSON to this path", json);
    cmd.AddValue("csv", "write the table as CSV to this path", csv);
    std::string partition; // default: pipeline:PP
    cmd.AddPartition(partition,
                     "packet level (default: pipeline:P with P = --pp, each pipeline stage "
                     "spread over every rank)");
    cmd.UseFabricScheduler();
    cmd.Parse(argc, argv);
    const bool distributed =
        cmd.Distribute(argc, argv, backend == "packet", "the flow level is not distributed");

    try
    {
        cmd.OnlyWith("partition", distributed, ProgramFlags::kDistributedOnly);
        // a plot path a gnuplot script cannot name is refused before any work
        control.Apply(cmd, backend == "packet");
        if (!png.empty() && png != "none")
        {
            GnuplotPath("--png", png);
        }
        FabricRequire(backend == "packet" || backend == "flow",
                      "--backend",
                      backend,
                      "packet or flow");
        FabricRequire(granularity == "layer" || granularity == "micro-batch",
                      "--granularity",
                      granularity,
                      "layer or micro-batch");
        const HbDomainPreset hw = TopologyHelper::GetPlatform(platform);
        FabricRequire(n % hw.gpusPerDomain == 0,
                      "--gpus",
                      n,
                      fmt::format("a multiple of K = {}", hw.gpusPerDomain));
        const uint32_t radix = radixText == "auto"
                                   ? std::max(8U, 2 * (n / hw.gpusPerDomain))
                                   : static_cast<uint32_t>(ParseInteger("--radix", radixText));
        FabricRequire(
            tp >= 1 && hw.gpusPerDomain % tp == 0,
            "--tp",
            tp,
            fmt::format("a divisor of K = {} (TP stays inside an HB domain)", hw.gpusPerDomain));
        FabricRequire(n % (tp * pp) == 0,
                      "--gpus",
                      n,
                      fmt::format("a multiple of TP x PP = {}", tp * pp));
        const uint32_t dp = n / (tp * pp);
        const LlmModel model =
            LlmModel::Custom(layers, hidden, 16, seq, 8192, uint64_t{dp} * m * seq);
        Parallelism::Shape shape;
        shape.gpus = n;
        shape.gpusPerDomain = hw.gpusPerDomain;
        shape.tp = tp;
        shape.pp = pp;
        shape.dp = dp;
        shape.microBatches = m;
        shape.globalBatchSequences = uint64_t{dp} * m;
        const Parallelism par(shape);
        WorkloadOptions wo;
        wo.gpuFlops = hw.gpuFlops;
        const TrainingIteration it(model, par, wo);
        IterationProgramOptions po;
        po.tpGranularity = granularity;
        po.overlapDp = overlapDp;
        const IterationProgram ip = BuildIterationProgram(it, po);
        auto costModel = CreateObject<FabricCostModel>();
        costModel->SetPricePreset(pricePreset);
        const std::string modelName =
            fmt::format("gpt-scaled(l={},d={},seq={})", layers, hidden, seq);

        // Eq. 1 of this job per pipeline stage, its TP term in bytes. A
        // stage smaller than one HB domain is outside Eq. 1, which places
        // whole domains: NaN then ("nan" in the table and CSV, null in the
        // JSON)
        AnalyticalParams ap = AnalyticalParams::From(model, hw, n);
        ap.activationBytes = model.bytesPerActivation;
        const double eq1 = PipelineStageIterationTime(ap, pp, tp);
        const bool eq1Applies = !std::isnan(eq1);
        const double bubble = it.PipelineBubbleSeconds();

        // everything the run needs is checked before any output, the paper's
        // scale too (it would otherwise fail after the simulations)
        ClusterParams cp;
        cp.gpus = n;
        cp.platform = hw;
        cp.radix = radix;
        std::vector<std::string> names = SplitList("--topologies", topologies);
        const auto dcName = std::find(names.begin(), names.end(), "direct-connect");
        FabricRequire(dcName != names.end() || dc.graph.empty(),
                      "--graph",
                      dc.graph,
                      "a graph only with direct-connect in --topologies");
        if (dcName != names.end() && dc.graph.empty())
        {
            // the graph nodes are HB domains, or GPUs with --dc-nodes=gpu
            dc.graph = DefaultGraph(dc.nodes == "gpu" ? n : n / hw.gpusPerDomain);
            // the default run leaves out a fabric of one node; asked for, it is refused
            FabricRequire(!dc.graph.empty() || !cmd.WasGiven("topologies"),
                          "--topologies",
                          topologies,
                          "direct-connect on at least 2 graph nodes (--gpus / K HB domains, "
                          "or --gpus with --dc-nodes=gpu), or with a --graph");
            if (dc.graph.empty())
            {
                names.erase(dcName);
            }
        }
        dc.Require(cmd);
        std::vector<std::pair<std::string, FabricTopology>> simulated;
        for (const auto& topology : names)
        {
            simulated.emplace_back(topology, Build(topology, cp, dc));
        }
        const HbDomainPreset phw = HbDomainPreset::Get(paperPlatform);
        const std::vector<LlmModel> paperModelList =
            TopologyHelper::GetModels("--paper-models", paperModels);
        ClusterParams pcp;
        pcp.gpus = pn;
        pcp.platform = phw;
        pcp.radix = pradix;
        std::vector<std::pair<std::string, FabricCounts>> paperCounts;
        for (const auto& [topology, topo] : simulated)
        {
            // the graph is the simulated job's: no direct-connect row at the paper's scale
            if (topology != "direct-connect")
            {
                paperCounts.emplace_back(
                    topology,
                    CountEquipment(TopologyHelper(pcp).Create(topology), pradix));
            }
        }

        fmt::print("Job: {} on {} x {} (K = {}), TP {} PP {} DP {}, {} micro-batches of {} "
                   "tokens; {} comms, {} granularity{}; radix {}\n",
                   modelName,
                   n,
                   hw.name,
                   hw.gpusPerDomain,
                   tp,
                   pp,
                   dp,
                   m,
                   it.MicroBatchTokens(),
                   ip.program.comms.size(),
                   granularity,
                   overlapDp ? ", DP overlapped" : "",
                   radix);
        std::vector<Row> rows;
        for (const auto& [topology, topo] : simulated)
        {
            // the same topology feeds either backend
            TransportHelper transports(backend, "--backend");
            transports.SetPartition(partition.empty() ? fmt::format("pipeline:{}", pp) : partition);
            const TopologyHelper topologies = dc.Topologies(cp);
            // a direct-connect fabric of HB domains: relays that do not deadlock
            topologies.ConfigureFabric(topology, transports.GetFabricHelper());
            InstalledTransport installed = transports.Install(topo);
            std::optional<DirectConnectSchedules> dcSchedules;
            if (topology == "direct-connect")
            {
                dcSchedules.emplace(topologies.GetGraph(), topologies.GetGpusPerNode());
            }
            Ptr<ProgramRunner> runner =
                RunProgram(ip.program,
                           installed.transport,
                           dcSchedules ? dcSchedules->Source() : ProgramRunner::ScheduleSource());
            NS_ABORT_MSG_IF(!runner->IsComplete(), "iteration did not complete on " << topology);
            Row r;
            r.topology = topology;
            r.gpus = n;
            r.model = modelName;
            r.simulated = true;
            r.time = runner->GetFinishTime().GetSeconds();
            r.analytical = eq1;
            r.bubble = bubble;
            r.pp = pp;
            r.counts = CountEquipment(topo, radix);
            r.cost = costModel->Cost(r.counts);
            r.power = costModel->Power(r.counts);
            // the slowest DP allreduce: BFB on direct-connect where it applies
            const ProgramComm* slowest = nullptr;
            for (uint32_t c = 0; c < ip.program.comms.size(); ++c)
            {
                // gathered from the ranks in a distributed run
                const CollectiveResult cr = runner->GetCommResult(c);
                if (cr.ranks > 0 && ip.program.comms[c].label.rfind("dp-gradient", 0) == 0)
                {
                    if (cr.timeS > r.dpSeconds)
                    {
                        r.dpSeconds = cr.timeS;
                        r.dpBytes = cr.bytes;
                        r.dpAlgorithm = cr.algorithm.substr(0, cr.algorithm.find(':'));
                        slowest = &ip.program.comms[c];
                    }
                }
            }
            if (slowest && r.dpAlgorithm == "bfb")
            {
                r.dpFormula = DpBfbFormula(*dcSchedules,
                                           *slowest,
                                           ip.program,
                                           topo,
                                           topologies.GetGpusPerNode(),
                                           r.dpGroupsSharing);
            }
            rows.push_back(r);
            installed.Dispose();
            FabricDistributed::DestroySimulation();
        }

        // the paper's scale: formula and equipment
        for (const LlmModel& pm : paperModelList)
        {
            const AnalyticalModel am(AnalyticalParams::From(pm, phw, pn));
            const double t = am.IterationTime(am.ClampedOptimalTp());
            for (const auto& [topology, counts] : paperCounts)
            {
                Row r;
                r.topology = topology;
                r.gpus = pn;
                r.model = pm.name;
                r.time = t;
                r.analytical = t;
                r.counts = counts;
                r.cost = costModel->Cost(counts);
                r.power = costModel->Power(counts);
                rows.push_back(r);
            }
        }

        double refTime = 0;
        double refCost = 0;
        for (const Row& r : rows)
        {
            if (r.simulated && r.topology == "rail-optimized")
            {
                refTime = r.time;
                refCost = r.cost;
            }
        }
        std::map<std::pair<uint32_t, std::string>, double> paperRefCost;
        for (const Row& r : rows)
        {
            if (!r.simulated && r.topology == "rail-optimized")
            {
                paperRefCost[{r.gpus, r.model}] = r.cost;
            }
        }
        // one column list for the table, the CSV and the JSON rows; the
        // simulated rows carry the job's parameters in their JSON
        ResultsTable table(
            {{"topology", "topology", "", "{:<15}"},
             {"gpus", "GPUs", "", "{:>6}"},
             {"model", "model", "", "{:<34}"},
             ResultsColumn{"how", "how", "", "{:>5}"}.In(ResultsColumn::kTable),
             ResultsColumn{"simulated", "", "", "{}"}.In(ResultsColumn::kCsv |
                                                         ResultsColumn::kJson),
             {"iteration_time_s", "iteration s", "s", "{:>12.6f}"},
             ResultsColumn{"time_vs_ropt", "vs ropt", "", "{:>9}"}.In(ResultsColumn::kTable),
             ResultsColumn{"time_vs_rail_optimized", "", "", "{}"}.In(ResultsColumn::kJson),
             {"analytical_time_s", "Eq. 1 s", "s", "{:>12.6f}"},
             {"switches", "switches", "", "{:>8}"},
             {"transceivers", "xcvrs", "", "{:>8}"},
             {"cost_usd", "cost $", "USD", "{:>13.0f}"},
             ResultsColumn{"cost_vs_rail_optimized", "vs ropt", "", "{:>9.3f}"}.In(
                 ResultsColumn::kTable | ResultsColumn::kJson),
             ResultsColumn{"power_w", "", "W", "{}"}.In(ResultsColumn::kCsv | ResultsColumn::kJson),
             ResultsColumn{"fibres", "", "", "{}"}.In(ResultsColumn::kCsv | ResultsColumn::kJson),
             ResultsColumn{"patch_panel_ports", "", "", "{}"}.In(ResultsColumn::kCsv |
                                                                 ResultsColumn::kJson),
             ResultsColumn{"ocs_ports", "", "", "{}"}.In(ResultsColumn::kCsv |
                                                         ResultsColumn::kJson),
             ResultsColumn{"graph", "", "", "{}"}.In(ResultsColumn::kCsv | ResultsColumn::kJson),
             ResultsColumn{"dp_algorithm", "", "", "{}"}.In(ResultsColumn::kJson),
             ResultsColumn{"dp_allreduce_s", "", "s", "{}"}.In(ResultsColumn::kJson),
             ResultsColumn{"dp_allreduce_bytes", "", "B", "{}"}.In(ResultsColumn::kJson),
             ResultsColumn{"dp_formula_s", "", "s", "{}"}.In(ResultsColumn::kJson),
             ResultsColumn{"dp_groups_sharing_arcs", "", "", "{}"}.In(ResultsColumn::kJson),
             ResultsColumn{"pipeline_bubble_s", "", "s", "{}"}.In(ResultsColumn::kJson),
             ResultsColumn{"analytical_with_bubble_s", "", "s", "{}"}.In(ResultsColumn::kJson),
             ResultsColumn{"platform", "", "", "{}"}.In(ResultsColumn::kJson),
             ResultsColumn{"tp", "", "", "{}"}.In(ResultsColumn::kJson),
             ResultsColumn{"pp", "", "", "{}"}.In(ResultsColumn::kJson),
             ResultsColumn{"dp", "", "", "{}"}.In(ResultsColumn::kJson),
             ResultsColumn{"micro_batches", "", "", "{}"}.In(ResultsColumn::kJson),
             ResultsColumn{"radix", "", "", "{}"}.In(ResultsColumn::kJson),
             ResultsColumn{"backend", "", "", "{}"}.In(ResultsColumn::kJson)});
        const auto none = ResultsTable::None();
        for (const Row& r : rows)
        {
            const double tRel = r.simulated && refTime > 0 ? r.time / refTime : 1.0;
            double cRef = r.simulated ? refCost : paperRefCost[{r.gpus, r.model}];
            const double cRel = cRef > 0 ? r.cost / cRef : 1.0;
            using Cell = ResultsTable::Cell;
            const auto simulatedOnly = [&](Cell c) { return r.simulated ? c : none; };
            table.AddRow({r.topology,
                          r.gpus,
                          r.model,
                          r.simulated ? "sim" : "Eq.1",
                          r.simulated,
                          r.time,
                          r.simulated ? fmt::format("{:.4f}", tRel) : std::string("same"),
                          simulatedOnly(tRel),
                          r.analytical,
                          r.counts.switches,
                          r.counts.transceivers,
                          r.cost,
                          cRel,
                          r.power,
                          r.counts.directFibres,
                          costModel->PatchPanelPorts(r.counts),
                          costModel->OcsPorts(r.counts),
                          r.topology == "direct-connect" ? Cell(dc.graph) : none,
                          r.dpAlgorithm.empty() ? none : Cell(r.dpAlgorithm),
                          r.dpAlgorithm.empty() ? none : Cell(r.dpSeconds),
                          r.dpAlgorithm.empty() ? none : Cell(r.dpBytes),
                          r.dpFormula > 0 ? Cell(r.dpFormula) : none,
                          r.dpFormula > 0 ? Cell(r.dpGroupsSharing) : none,
                          simulatedOnly(r.bubble),
                          simulatedOnly(r.analytical + r.bubble),
                          r.simulated ? hw.name : phw.name,
                          simulatedOnly(tp),
                          simulatedOnly(pp),
                          simulatedOnly(dp),
                          simulatedOnly(m),
                          r.simulated ? radix : pradix,
                          simulatedOnly(backend)});
        }
        fmt::print("\n{}", table.Table());
        for (const Row& r : rows)
        {
            if (r.topology == "direct-connect")
            {
                // no switches: the cost is optics, fibres and their patching
                const uint64_t ends =
                    costModel->PatchPanelPorts(r.counts) + costModel->OcsPorts(r.counts);
                fmt::print("direct-connect ({}) equipment: {} transceivers, {} fibres, {} {} "
                           "ports, no switches; fibres and {} ${:.0f} of ${:.0f}\n",
                           dc.graph,
                           r.counts.transceivers,
                           r.counts.directFibres,
                           ends,
                           costModel->PatchingName(),
                           costModel->PatchingName(),
                           costModel->DirectConnectCost(r.counts),
                           r.cost);
            }
        }
        if (eq1Applies)
        {
            fmt::print("\nEq. 1 (the paper's model: compute + DP + TP bandwidth terms, here per "
                       "pipeline stage) leaves out the 1F1B bubble ({:.6f} s here; Eq. 1 + "
                       "bubble = {:.6f} s), the PP transfers and latencies. Its TP term counts "
                       "bytes (2 per activation) in the simulated rows, and the paper's formula "
                       "as printed (1) in the {}-GPU rows.\n",
                       bubble,
                       eq1 + bubble,
                       pn);
        }
        else
        {
            fmt::print("\nEq. 1 does not apply to this job: a pipeline stage of --gpus / --pp = "
                       "{} GPUs is smaller than one HB domain (K = {}), and Eq. 1 places whole "
                       "domains.\n",
                       n / pp,
                       hw.gpusPerDomain);
        }
        fmt::print(
            "paper: on 32768 GPUs the any-to-any Clos and rail-only give the same "
            "iteration time (Eq. 1 does not depend on the spine), and rail-only cuts the "
            "network cost 37%-75%.\n"
            "ours: the simulated rail-only iteration is within {:.2f}% of the "
            "rail-optimized fat-tree at {:.0f}% of its network cost.\n",
            [&] {
                for (const Row& r : rows)
                {
                    if (r.simulated && r.topology == "rail-only" && refTime > 0)
                    {
                        return 100.0 * std::abs(r.time / refTime - 1.0);
                    }
                }
                return 0.0;
            }(),
            [&] {
                for (const Row& r : rows)
                {
                    if (r.simulated && r.topology == "rail-only" && refCost > 0)
                    {
                        return 100.0 * r.cost / refCost;
                    }
                }
                return 100.0;
            }());
        for (const Row& r : rows)
        {
            if (r.simulated && r.topology == "direct-connect" && refTime > 0 && refCost > 0)
            {
                fmt::print("direct-connect ({}): the iteration takes {:.2f}% of the "
                           "rail-optimized fat-tree's time at {:.0f}% of its network cost; its "
                           "slowest DP allreduce ({}) {:.6f} s{}.\n",
                           dc.graph,
                           100.0 * r.time / refTime,
                           100.0 * r.cost / refCost,
                           r.dpAlgorithm,
                           r.dpSeconds,
                           r.dpFormula > 0
                               ? fmt::format(", {:.3f} x BFB's alpha-beta formula ({:.6f} s, "
                                             "each arc shared by {} DP groups)",
                                             r.dpSeconds / r.dpFormula,
                                             r.dpFormula,
                                             r.dpGroupsSharing)
                               : "");
            }
        }
        if (!png.empty() && png != "none")
        {
            Plot(rows, png);
        }
        if (!json.empty())
        {
            WriteTextFile("--json",
                          json,
                          nlohmann::json({{"results", table.Json()}}).dump(2) + "\n");
        }
        if (!csv.empty())
        {
            WriteTextFile("--csv", csv, table.Csv());
        }
    }
    catch (const FabricConfigError& e)
    {
        fmt::print(stderr, "rail-only-vs-fat-tree: {}\n", e.what());
        return 2;
    }
    return 0;
}
