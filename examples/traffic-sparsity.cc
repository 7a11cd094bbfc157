/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// examples/traffic-sparsity: the traffic matrix of one training iteration of a
// GPT-style model under TP/PP/DP (and EP) placed on HB domains as the
// rail-only paper places it, computed without simulation; its sparsity at the
// paper's scale (32768 GPUs) beside the paper's statements, and a heatmap of a
// small cluster drawn with gnuplot.
#include "program-support.h"

#include "ns3/core-module.h"
#include "ns3/gpu-fabric-module.h"
#include "ns3/program-flags.h"
#include "ns3/topology-helper.h"

#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

using namespace ns3;

namespace
{

struct JobSpec
{
    uint32_t gpus;
    uint32_t hbSize;
    uint32_t tp;
    uint32_t pp;
    uint32_t dp; // 0: N / (TP PP)
    uint32_t ep;
    uint32_t microBatches; // 0: one sequence per micro-batch
};

TrainingIteration
MakeIteration(const LlmModel& model,
              const JobSpec& j,
              const WorkloadOptions& opt,
              const std::string& prefix)
{
    // the heatmap's job takes its TP from --tp, its PP and GPUs from --heatmap-*
    const std::string gpusFlag = prefix + "gpus";
    const std::string ppFlag = prefix + "pp";
    uint32_t dp = j.dp;
    if (dp == 0)
    {
        const uint64_t tpp = static_cast<uint64_t>(j.tp) * j.pp;
        FabricRequire(tpp > 0 && j.gpus % tpp == 0,
                      "--tp * " + ppFlag,
                      tpp,
                      fmt::format("a divisor of {} = {}", gpusFlag, j.gpus));
        dp = static_cast<uint32_t>(j.gpus / tpp);
    }
    uint32_t m = j.microBatches;
    if (m == 0)
    {
        FabricRequire(model.GlobalBatchSequences() % dp == 0,
                      "model batch",
                      model.GlobalBatchSequences(),
                      fmt::format("a multiple of DP = {}", dp));
        m = static_cast<uint32_t>(model.GlobalBatchSequences() / dp);
    }
    Parallelism::Shape shape;
    shape.gpus = j.gpus;
    shape.gpusPerDomain = j.hbSize;
    shape.tp = j.tp;
    shape.pp = j.pp;
    shape.dp = dp;
    shape.ep = j.ep;
    shape.microBatches = m;
    shape.globalBatchSequences = model.GlobalBatchSequences();
    return TrainingIteration(model, Parallelism(shape), opt);
}

/**
 * The iteration's traffic matrix. With \p dpPattern "alltoall" every DP
 * AllReduce is counted as an all-to-all among its members moving the same
 * bytes per rank (2 (G-1)/G of the gradients, spread evenly over the G-1
 * peers), as the paper's pair-share figure (Fig. 3a) counts DP pairs; "ring"
 * keeps the collective's own algorithm.
 */
IterationTrafficMatrix
TrafficOf(const TrainingIteration& it, const std::string& dpPattern)
{
    if (dpPattern == "ring")
    {
        return IterationTrafficMatrix::FromIteration(it);
    }
    const Parallelism& p = it.GetParallelism();
    IterationTrafficMatrix tm(p.Gpus(), p.GpusPerDomain());
    for (const CollectiveCall& call : it.Collectives())
    {
        if (call.dim != ParallelDim::DP || call.type != CollectiveType::AllReduce)
        {
            tm.AddCall(call);
            continue;
        }
        CollectiveCall a2a = call;
        a2a.type = CollectiveType::AllToAll;
        a2a.algorithm = "direct";
        // an AllToAll of S sends S (G-1)/G per rank; the AllReduce sends 2 B (G-1)/G
        a2a.bytes = 2 * call.bytes;
        tm.AddCall(a2a);
    }
    return tm;
}

/// Ordered GPU pairs that carry each dimension's traffic (Fig. 3a's pair shares).
nlohmann::json
PairSharesJson(const IterationTrafficMatrix& tm, const TrafficStats& st)
{
    std::array<uint64_t, kParallelDims> pairs{};
    for (const TrafficEntry& e : tm.Entries())
    {
        for (size_t d = 0; d < kParallelDims; ++d)
        {
            pairs[d] += e.bytes[d] > 0 ? 1 : 0;
        }
    }
    nlohmann::json j = nlohmann::json::object();
    for (size_t d = 0; d < kParallelDims; ++d)
    {
        j[std::string(ParallelDimName(static_cast<ParallelDim>(d)))] = {
            {"pairs", pairs[d]},
            {"fraction_of_pairs", static_cast<double>(pairs[d]) / st.orderedPairs},
            {"fraction_of_pairs_with_traffic",
             st.pairsWithTraffic == 0 ? 0.0 : static_cast<double>(pairs[d]) / st.pairsWithTraffic}};
    }
    return j;
}

nlohmann::json
SplitJson(const TrafficSplit& s)
{
    return {{"bytes", s.Total()},
            {"intra_domain_bytes", s.intraDomain},
            {"same_rail_inter_domain_bytes", s.sameRailInter},
            {"other_inter_domain_bytes", s.otherInter}};
}

nlohmann::json
StatsJson(const TrainingIteration& it, const TrafficStats& st)
{
    const Parallelism& p = it.GetParallelism();
    nlohmann::json byDim = nlohmann::json::object();
    for (size_t d = 0; d < kParallelDims; ++d)
    {
        byDim[std::string(ParallelDimName(static_cast<ParallelDim>(d)))] = SplitJson(st.byDim[d]);
    }
    return {{"model", it.Model().name},
            {"gpus", p.Gpus()},
            {"hb_size", p.GpusPerDomain()},
            {"tp", p.Tp()},
            {"pp", p.Pp()},
            {"dp", p.Dp()},
            {"dp_inner", p.DpInner()},
            {"dp_outer", p.DpOuter()},
            {"ep", p.Ep()},
            {"micro_batches", p.MicroBatches()},
            {"dp_algorithm", it.Options().dpAlgorithm},
            {"ep_algorithm", it.Options().epAlgorithm},
            {"ordered_pairs", st.orderedPairs},
            {"pairs_with_traffic", st.pairsWithTraffic},
            {"inter_domain_pairs_with_traffic", st.interDomainPairsWithTraffic},
            {"other_pairs_with_traffic", st.otherPairsWithTraffic},
            {"idle_pair_fraction", st.IdlePairFraction()},
            {"intra_domain_bytes_fraction", st.IntraDomainFraction()},
            {"same_rail_bytes_fraction", st.SameRailFraction()},
            {"other_bytes_fraction", st.OtherFraction()},
            {"total_bytes", st.all.Total()},
            {"by_dim", byDim}};
}

void
PrintStats(const TrainingIteration& it, const TrafficStats& st)
{
    fmt::print("{}: {}\n", it.Model().name, it.GetParallelism().ToString());
    fmt::print("  {:<44} {:>12}   {}\n", "", "ours", "paper");
    fmt::print("  {:<44} {:>11.4f}%   more than 99% (32768 GPUs)\n",
               "GPU pairs that exchange nothing",
               100 * st.IdlePairFraction());
    fmt::print("  {:<44} {:>12}\n",
               "ordered pairs with traffic",
               fmt::format("{} / {}", st.pairsWithTraffic, st.orderedPairs));
    fmt::print("  {:<44} {:>11.2f}%   most bytes (TP and in-domain DP)\n",
               "bytes inside HB domains",
               100 * st.IntraDomainFraction());
    fmt::print("  {:<44} {:>11.2f}%   all inter-domain traffic\n",
               "bytes between domains, same rail",
               100 * st.SameRailFraction());
    fmt::print("  {:<44} {:>11.2f}%   none\n",
               "bytes between domains, other rails",
               100 * st.OtherFraction());
    fmt::print("  {:>4} {:>14} {:>12} {:>12} {:>12}\n",
               "dim",
               "GB/iteration",
               "in-domain",
               "same-rail",
               "other");
    for (size_t d = 0; d < kParallelDims; ++d)
    {
        const TrafficSplit& s = st.byDim[d];
        auto pct = [&s](uint64_t part) {
            return s.Total() == 0 ? std::string("-")
                                  : fmt::format("{:.2f}%", 100.0 * part / s.Total());
        };
        fmt::print("  {:>4} {:>14.3f} {:>12} {:>12} {:>12}\n",
                   ParallelDimName(static_cast<ParallelDim>(d)),
                   s.Total() / 1e9,
                   pct(s.intraDomain),
                   pct(s.sameRailInter),
                   pct(s.otherInter));
    }
}

/// A square matrix of GB per iteration to plot: cell (row, column) is the
/// traffic from source block row to destination block column.
struct HeatmapCells
{
    uint32_t side{0};       //!< cells per side
    uint32_t block{1};      //!< GPUs per cell
    std::vector<double> gb; //!< side x side, row-major
    std::string flag;       //!< the flag that named the PNG
};

/// A cluster in blocks of \p block consecutive GPUs (sums over the block
/// pair's GPU pairs, traffic inside a block on the diagonal), so that 32768
/// GPUs fit one plot; block 1 is one cell per GPU pair (no pair is a GPU
/// with itself). Works from the non-zero pairs only.
/// \param flag the flag that names the PNG, for errors
HeatmapCells
BlockCells(const IterationTrafficMatrix& tm, uint32_t block, const std::string& flag)
{
    HeatmapCells c;
    c.block = block;
    c.side = tm.Gpus() / block;
    c.flag = flag;
    c.gb.assign(static_cast<size_t>(c.side) * c.side, 0.0);
    for (const TrafficEntry& e : tm.Entries())
    {
        c.gb[static_cast<size_t>(e.src / block) * c.side + e.dst / block] += e.Total() / 1e9;
    }
    return c;
}

/// The smallest block of GPUs (a divisor of N) that puts at most 512 cells
/// on a side.
uint32_t
DefaultBlock(uint32_t gpus)
{
    for (uint32_t b = 1; b <= gpus; ++b)
    {
        if (gpus % b == 0 && gpus / b <= 512)
        {
            return b;
        }
    }
    return gpus;
}

/// Write the cells and a gnuplot script; run gnuplot if present.
void
Heatmap(const HeatmapCells& c, const std::string& png, const std::string& title)
{
    const std::string& flag = c.flag;
    const std::string dat = png + ".dat";
    const std::string gp = png + ".gp";
    {
        std::string text;
        std::vector<double> row(c.side);
        for (uint32_t s = 0; s < c.side; ++s)
        {
            std::copy_n(c.gb.begin() + static_cast<ptrdiff_t>(s) * c.side, c.side, row.begin());
            fmt::format_to(std::back_inserter(text), "{}\n", fmt::join(row, " "));
        }
        WriteTextFile(flag, png, "a path whose .dat next to it is writable", dat, text);
    }
    {
        const std::string unit = c.block == 1 ? "GPU" : fmt::format("block of {} GPUs", c.block);
        // about four tics a side, each a whole number of cells
        const uint32_t tics = std::max<uint32_t>(1, c.side / 4);
        const std::string text =
            "set terminal pngcairo size 900,800\n" +
            fmt::format("set output {}\n", GnuplotPath(flag, png)) +
            fmt::format("set title \"{}\" noenhanced\n", title) +
            fmt::format("set xlabel 'destination {}'\nset ylabel 'source {}'\n", unit, unit) +
            fmt::format("set xrange [-0.5:{}]\nset yrange [{}:-0.5]\n",
                        c.side - 0.5,
                        c.side - 0.5) +
            "set cblabel 'GB per iteration (log scale, white = none)'\n"
            "set logscale cb\nset palette defined (0 '#440154', 1 '#31688e', 2 '#35b779', 3 "
            "'#fde725')\n" +
            fmt::format("set xtics out {}\nset ytics out {}\nset size ratio -1\n", tics, tics) +
            fmt::format("plot {} matrix using 1:2:($3 > 0 ? $3 : 1/0) with image notitle\n",
                        GnuplotPath(flag, dat));
        WriteTextFile(flag, png, "a path whose .gp next to it is writable", gp, text);
    }
    RenderPlot(gp, dat, png);
}

/// What a heatmap shows, for --json.
nlohmann::json
CellsJson(const HeatmapCells& c, const std::string& png)
{
    uint64_t nonZero = 0;
    double total = 0;
    for (double v : c.gb)
    {
        nonZero += v > 0 ? 1 : 0;
        total += v;
    }
    return {{"png", png},
            {"block_gpus", c.block},
            {"cells_per_side", c.side},
            {"cells_with_traffic", nonZero},
            {"gb_per_iteration", total}};
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string model = "gpt-1t";
    std::string platform = "dgx-h100";
    uint32_t hbSize = 0;
    uint32_t gpus = 32768;
    uint32_t tp = 8;
    uint32_t pp = 64;
    uint32_t dp = 0;
    uint32_t ep = 1;
    uint32_t microBatches = 0;
    std::string dpAlgorithm = "hierarchical";
    std::string epAlgorithm = "pxn";
    std::string dpPattern = "ring";
    uint32_t heatmapGpus = 128;
    uint32_t heatmapPp = 4;
    std::string png = "traffic-sparsity.png";
    std::string clusterPng = "none";
    uint32_t clusterBlock = 0;
    std::string json;
    std::string csv;

    ProgramFlags cmd("traffic-sparsity", __FILE__);
    cmd.Usage("Traffic matrix of one LLM training iteration (TP/PP/DP/EP placed on HB domains "
              "as the rail-only paper places them), its sparsity at scale, and a heatmap of a "
              "small cluster. No simulation.");
    cmd.AddValue("model",
                 fmt::format("model preset: {}", fmt::join(LlmModel::Names(), "|")),
                 model);
    cmd.AddValue("platform",
                 fmt::format("platform preset: {}", fmt::join(HbDomainPreset::Names(), "|")),
                 platform);
    cmd.AddInteger("hb-size", "GPUs per HB domain K (0: the platform's)", hbSize, 0);
    cmd.AddInteger("gpus", "GPUs N of the large cluster", gpus, 1);
    cmd.AddInteger("tp", "tensor-parallel size (both clusters)", tp, 1);
    cmd.AddInteger("pp", "pipeline-parallel size of the large cluster", pp, 1);
    cmd.AddInteger("dp", "data-parallel size (0: N / (TP PP))", dp, 0);
    cmd.AddInteger("ep", "expert-parallel size (MoE models; divides DP)", ep, 1);
    cmd.AddInteger("micro-batches",
                   "micro-batches per replica (0: one sequence each)",
                   microBatches,
                   0);
    cmd.AddValue("dp-algorithm", "DP AllReduce: hierarchical|ring", dpAlgorithm);
    cmd.AddValue("dp-pattern",
                 "DP AllReduce pairs: ring (its algorithm's pairs) | alltoall (every pair of a DP "
                 "group, the same bytes per rank; the paper's Fig. 3a)",
                 dpPattern);
    cmd.AddValue("ep-algorithm", "EP AllToAll: pxn|direct (with --ep > 1)", epAlgorithm);
    cmd.AddInteger("heatmap-gpus",
                   "GPUs of the heatmap cluster (<= 1024; 0: no heatmap)",
                   heatmapGpus,
                   0);
    cmd.AddInteger("heatmap-pp",
                   "pipeline-parallel size of the heatmap cluster (with --heatmap-gpus > 0)",
                   heatmapPp,
                   1);
    cmd.AddValue("png", "heatmap PNG path (none: no heatmap file; with --heatmap-gpus > 0)", png);
    cmd.AddValue("cluster-png",
                 "heatmap PNG of the large cluster, GPUs in blocks (none: no plot)",
                 clusterPng);
    cmd.AddInteger("cluster-block",
                   "GPUs per cell of --cluster-png, a divisor of --gpus (0: the smallest that "
                   "puts at most 512 cells on a side)",
                   clusterBlock,
                   0);
    cmd.AddValue("json", "write results as JSON to this path", json);
    cmd.AddValue("csv", "write the per-dimension table as CSV to this path", csv);
    cmd.UseFabricScheduler();
    cmd.Parse(argc, argv);

    try
    {
        // a plot path a gnuplot script cannot name is refused before any work
        if (!png.empty() && png != "none")
        {
            GnuplotPath("--png", png);
        }
        const bool clusterPlot = !clusterPng.empty() && clusterPng != "none";
        if (clusterPlot)
        {
            GnuplotPath("--cluster-png", clusterPng);
        }
        cmd.OnlyWith("cluster-block", clusterPlot, "with --cluster-png (a plot to draw)");
        const uint32_t block = clusterBlock == 0 ? DefaultBlock(gpus) : clusterBlock;
        FabricRequire(gpus % block == 0,
                      "--cluster-block",
                      block,
                      fmt::format("a divisor of --gpus ({})", gpus));
        FabricRequire(gpus / block <= 1024,
                      "--cluster-block",
                      block,
                      fmt::format("at least --gpus / 1024 = {} (at most 1024 cells a side)",
                                  (gpus + 1023) / 1024));
        const LlmModel m = LlmModel::Get(model);
        const HbDomainPreset hw = TopologyHelper::GetPlatform(platform);
        WorkloadOptions opt;
        opt.dpAlgorithm = dpAlgorithm;
        opt.epAlgorithm = epAlgorithm;
        opt.gpuFlops = hw.gpuFlops;
        opt.Validate();
        FabricRequire(dpPattern == "ring" || dpPattern == "alltoall",
                      "--dp-pattern",
                      dpPattern,
                      "ring or alltoall");
        const uint32_t k = hbSize == 0 ? hw.gpusPerDomain : hbSize;
        const JobSpec big{gpus, k, tp, pp, dp, ep, microBatches};
        const uint32_t hGpus = heatmapGpus;
        const uint32_t hPp = heatmapPp;
        FabricRequire(hGpus <= 1024, "--heatmap-gpus", hGpus, "at most 1024 (a dense plot)");
        // flags of the heatmap cluster and of expert parallelism mean nothing without them
        cmd.OnlyWith("heatmap-pp", hGpus > 0, "with --heatmap-gpus above 0 (a heatmap cluster)");
        cmd.OnlyWith("png",
                     hGpus > 0 || png == "none",
                     "with --heatmap-gpus above 0 (a heatmap to plot), or none");
        cmd.OnlyWith("ep-algorithm", ep > 1, "with --ep above 1 (a MoE model's EP AllToAll)");

        const TrainingIteration it = MakeIteration(m, big, opt, "--");
        const IterationTrafficMatrix tm = TrafficOf(it, dpPattern);
        const TrafficStats st = tm.Stats();
        fmt::print("Traffic of one training iteration (no simulation), platform {}\n", hw.name);
        PrintStats(it, st);
        nlohmann::json out = {{"platform", hw.name},
                              {"dp_pattern", dpPattern},
                              {"cluster", StatsJson(it, st)},
                              {"paper",
                               {{"idle_pair_fraction_min", 0.99},
                                {"gpus", 32768},
                                {"statement",
                                 "more than 99% of GPU pairs carry no traffic on 32768 GPUs; "
                                 "traffic between HB domains flows only between same-rail GPUs"}}}};
        std::string csvText = "cluster,dim,bytes,intra_domain_bytes,same_rail_inter_domain_bytes,"
                              "other_inter_domain_bytes\n";
        auto addCsv = [&csvText](const std::string& name, const TrafficStats& s) {
            for (size_t d = 0; d < kParallelDims; ++d)
            {
                const TrafficSplit& x = s.byDim[d];
                csvText += fmt::format("{},{},{},{},{},{}\n",
                                       name,
                                       ParallelDimName(static_cast<ParallelDim>(d)),
                                       x.Total(),
                                       x.intraDomain,
                                       x.sameRailInter,
                                       x.otherInter);
            }
        };
        addCsv("cluster", st);
        out["cluster"]["pairs_by_dim"] = PairSharesJson(tm, st);
        if (clusterPlot)
        {
            const HeatmapCells cells = BlockCells(tm, block, "--cluster-png");
            Heatmap(cells,
                    clusterPng,
                    fmt::format("{}: bytes per block pair ({} GPUs each)\\n{}",
                                m.name,
                                block,
                                it.GetParallelism().ToString()));
            out["cluster"]["heatmap"] = CellsJson(cells, clusterPng);
        }

        if (hGpus > 0)
        {
            const JobSpec small{hGpus, k, big.tp, hPp, 0, big.ep, 0};
            const TrainingIteration hit = MakeIteration(m, small, opt, "--heatmap-");
            const IterationTrafficMatrix htm = TrafficOf(hit, dpPattern);
            const TrafficStats hst = htm.Stats();
            fmt::print("\nHeatmap cluster\n");
            PrintStats(hit, hst);
            out["heatmap"] = StatsJson(hit, hst);
            out["heatmap"]["pairs_by_dim"] = PairSharesJson(htm, hst);
            addCsv("heatmap", hst);
            if (!png.empty() && png != "none")
            {
                Heatmap(BlockCells(htm, 1, "--png"),
                        png,
                        fmt::format("{}: bytes per GPU pair, {}",
                                    m.name,
                                    hit.GetParallelism().ToString()));
                out["heatmap"]["png"] = png;
            }
        }
        if (!json.empty())
        {
            WriteTextFile("--json", json, out.dump(2) + "\n");
        }
        if (!csv.empty())
        {
            WriteTextFile("--csv", csv, csvText);
        }
    }
    catch (const FabricConfigError& e)
    {
        fmt::print(stderr, "traffic-sparsity: {}\n", e.what());
        return 2;
    }
    return 0;
}
