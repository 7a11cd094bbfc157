/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// examples/hb-domain-sweep: iteration time against the HB domain size K from
// the rail-only paper's analytical model (HotNets 2023, Eq. 1), for GPT-3 and
// OPT-175B on 32768 GPUs, beside the paper's reported gains.
//
// Parameters (our reading of the paper; none tuned to its numbers):
// - platform "gh200-256-hotnets": B_F = 7.68 Tb/s HB bandwidth per GPU (the
//   HotNets figure), B_S = 400 Gb/s NIC, C = 989 TFLOP/s dense BF16, no
//   efficiency factor; K replaced by each swept value;
// - N = 32768 GPUs (the paper's cluster size);
// - S_T = 12 d_model^2 * 2 bytes (--grad-bytes: BF16 gradients, what the
//   paper's K-sweep gains support on 32768 GPUs); M_flop = 6 * parameters * b; M_cc = 8;
//   b = 32M tokens (GPT-3, the reference's figure) and 2M tokens (OPT);
// - N_M = the paper's N_M* = sqrt(N S_T) / (2 sqrt(b M_cc d_model)), not
//   rounded, clamped to [1, K]; b d_model enters as printed (no bytes factor).
// --tp-mode and --activation-bytes show how the trends move under the other
// readings.
//
// --hfu-batches adds the later paper's 3D-parallel study (ThreeDParallelTime):
// hardware FLOPs utilization per global batch (in sequences) at each K, with
// --tp, --pp, --micro-batch and --recompute (default: GPT-1T as Megatron-LM
// lays it out, TP 8, PP 64, micro-batch 1, full recomputation).
#include "program-support.h"
#include "results-table.h"

#include "ns3/core-module.h"
#include "ns3/gpu-fabric-module.h"
#include "ns3/program-flags.h"
#include "ns3/topology-helper.h"

#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

using namespace ns3;

namespace
{

/// The paper's reported gains (percent cut of iteration time), read off its figures.
const std::map<std::pair<std::string, std::pair<uint32_t, uint32_t>>, double> kPaperGains = {
    {{"gpt3-175b", {32, 64}}, 12.0},
    {{"opt-175b", {32, 64}}, 37.0},
    {{"gpt3-175b", {512, 1024}}, 0.95},
    {{"opt-175b", {512, 1024}}, 7.5},
};

/// One row of the sweep: one model at one K.
struct SweepRow
{
    std::string model;
    uint32_t gpus{0};
    uint32_t hbSize{0};
    IterationTimeBreakdown analytical; //!< Eq. 1 term by term
    double idealTime{0};               //!< all N GPUs in one HB domain
    // a simulated column will be added here by the simulation examples
};

/**
 * \brief The analytical row of the sweep.
 * \param model the model \param platform platform (its K is replaced by \p k)
 * \param gpus N \param k HB domain size \param tpMode how N_M is chosen
 * \param activationBytes factor on b d_model (1: the paper's formula)
 * \param gradBytes bytes per parameter of the DP gradient AllReduce (S_T)
 * \return the row
 */
SweepRow
AnalyticalRow(const LlmModel& model,
              HbDomainPreset platform,
              uint32_t gpus,
              uint32_t k,
              TpMode tpMode,
              double activationBytes,
              double gradBytes)
{
    platform.gpusPerDomain = k;
    AnalyticalParams p = AnalyticalParams::From(model, platform, gpus);
    p.activationBytes = activationBytes;
    // S_T is what the DP AllReduce moves per block: the gradients, at --grad-bytes per parameter
    p.S_T = model.DenseBlockParams() * gradBytes;
    const AnalyticalModel am(p);
    SweepRow row;
    row.model = model.name;
    row.gpus = gpus;
    row.hbSize = k;
    row.analytical = am.Breakdown(ChooseTp(am, tpMode));
    // the ideal network's TP by the same rule (--tp-mode), unclamped by K
    row.idealTime = am.IdealTimeAt(IdealTp(am, tpMode));
    return row;
}

void
Plot(const std::map<std::string, std::vector<SweepRow>>& rows, const std::string& png)
{
    const std::string dat = png + ".dat";
    const std::string gp = png + ".gp";
    {
        std::string text;
        for (const auto& [model, list] : rows)
        {
            text += "# " + model + "\n";
            for (const auto& r : list)
            {
                text += fmt::format("{} {} {}\n", r.hbSize, r.analytical.total, r.idealTime);
            }
            text += "\n\n";
        }
        WriteTextFile("--png", png, "a path whose .dat next to it is writable", dat, text);
    }
    {
        std::string text =
            "set terminal pngcairo size 900,600\n" +
            fmt::format("set output {}\n", GnuplotPath("--png", png)) +
            "set title 'Iteration time vs HB domain size (rail-only analytical model, Eq. 1)'\n"
            "set xlabel 'HB domain size K (GPUs)'\nset ylabel 'iteration time (s)'\n"
            "set logscale x 2\nset logscale y\nset key top right\nset grid\n"
            "plot ";
        size_t i = 0;
        for (const auto& [model, list] : rows)
        {
            text += fmt::format("{}{} index {} using 1:2 with linespoints lw 2 title '{}'",
                                i == 0 ? "" : ", ",
                                GnuplotPath("--png", dat),
                                i,
                                model);
            text += fmt::format(", {} index {} using 1:3 with lines dt 2 title '{} ideal'",
                                GnuplotPath("--png", dat),
                                i,
                                model);
            ++i;
        }
        text += "\n";
        WriteTextFile("--png", png, "a path whose .gp next to it is writable", gp, text);
    }
    RenderPlot(gp, dat, png);
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string models = "gpt3-175b,opt-175b";
    std::string platform = "gh200-256-hotnets";
    uint32_t n = 32768;
    std::string hbSizes = "8,16,32,64,128,256,512,1024";
    std::string tpMode = "paper";
    double activationBytes = 1;
    uint32_t gradBytes = 2;
    uint64_t batch = 0;
    std::string hfuBatches;
    uint32_t tp = 8;
    uint32_t pp = 64;
    uint32_t microBatch = 1;
    bool recompute = true;
    std::string png = "hb-domain-sweep.png";
    std::string json;
    std::string csv;

    ProgramFlags cmd("hb-domain-sweep", __FILE__);
    cmd.Usage("Iteration time vs HB domain size K from the rail-only paper's analytical model "
              "(Eq. 1), beside the paper's reported gains.");
    cmd.AddValue(
        "models",
        fmt::format("comma-separated model presets: {}", fmt::join(LlmModel::Names(), "|")),
        models);
    cmd.AddValue(
        "platform",
        fmt::format("platform preset (B_F, B_S, C): {}", fmt::join(HbDomainPreset::Names(), "|")),
        platform);
    cmd.AddInteger("gpus", "GPUs N", n);
    cmd.AddValue("hb-sizes", "comma-separated HB domain sizes K (divisors of N)", hbSizes);
    cmd.AddValue("tp-mode",
                 "TP size: paper (N_M* as printed) | eq1 (minimiser of Eq. 1) | domain (TP = K)",
                 tpMode);
    cmd.AddValue<double>(
        "activation-bytes",
        "factor on b*d_model in the TP term (1: the paper's formula; 2: BF16 bytes)",
        activationBytes,
        "a positive number (1: the paper's formula; 2: BF16 bytes)",
        [](double v) { return v > 0; });
    cmd.AddInteger("grad-bytes",
                   "bytes per parameter of the DP gradient AllReduce (S_T): 2 (BF16) or 4 (FP32)",
                   gradBytes,
                   1,
                   8);
    cmd.AddInteger("batch",
                   "global batch b in tokens for every model (0: each model's preset)",
                   batch,
                   0,
                   uint64_t{1} << 40);
    cmd.AddValue("hfu-batches",
                 "comma-separated global batches in sequences: add the 3D-parallel (TP x PP x "
                 "DP) iteration time and hardware FLOPs utilization of each (empty: none)",
                 hfuBatches);
    cmd.AddInteger("tp", "3D model: TP size (a divisor of each K)", tp);
    cmd.AddInteger("pp", "3D model: PP size (stages of N / PP GPUs in whole domains)", pp);
    cmd.AddInteger("micro-batch", "3D model: sequences per micro-batch", microBatch);
    cmd.AddValue("recompute",
                 "3D model: full activation recomputation (a second forward pass, counted by "
                 "HFU)",
                 recompute);
    cmd.AddValue("png", "plot PNG path (none: no plot)", png);
    cmd.AddValue("json", "write results as JSON to this path", json);
    cmd.AddValue("csv", "write the table as CSV to this path", csv);
    cmd.UseFabricScheduler();
    cmd.Parse(argc, argv);

    try
    {
        // a plot path a gnuplot script cannot name is refused before any work
        if (!png.empty() && png != "none")
        {
            GnuplotPath("--png", png);
        }
        for (const std::string f : {"tp", "pp", "micro-batch", "recompute"})
        {
            cmd.OnlyWith(f, !hfuBatches.empty(), "with --hfu-batches");
        }
        std::vector<uint64_t> hfuList;
        if (!hfuBatches.empty())
        {
            for (const auto& s : SplitList("--hfu-batches", hfuBatches))
            {
                hfuList.push_back(ParseInteger("--hfu-batches", s));
            }
        }
        const TpMode mode = TpModeFromName("--tp-mode", tpMode);
        const HbDomainPreset hw = TopologyHelper::GetPlatform(platform);
        std::vector<uint32_t> ks;
        for (const auto& s : SplitList("--hb-sizes", hbSizes))
        {
            const uint32_t k = static_cast<uint32_t>(ParseInteger("--hb-sizes", s));
            FabricRequire(n % k == 0,
                          "--hb-sizes",
                          k,
                          fmt::format("a divisor of the GPU count {}", n));
            ks.push_back(k);
        }
        std::vector<LlmModel> modelList = TopologyHelper::GetModels("--models", models);
        for (LlmModel& m : modelList)
        {
            FabricRequire(
                batch % m.seqLength == 0,
                "--batch",
                batch,
                fmt::format("0 or a multiple of {}'s sequence length {}", m.name, m.seqLength));
            m.globalBatchTokens = batch > 0 ? batch : m.globalBatchTokens;
        }
        std::map<std::string, std::vector<SweepRow>> rows;
        // one column list for the table (one per model), the CSV and the
        // JSON rows; the CSV's names of the terms are shorter than the JSON's
        ResultsTable table(
            {ResultsColumn{"model", "", "", "{}"}.In(ResultsColumn::kCsv | ResultsColumn::kJson),
             ResultsColumn{"gpus", "", "", "{}"}.In(ResultsColumn::kCsv | ResultsColumn::kJson),
             {"hb_size", "K", "", "{:>6}"},
             {"tp", "N_M", "", "{:>7.2f}"},
             ResultsColumn{"dp_inner", "", "", "{}"}.In(ResultsColumn::kCsv | ResultsColumn::kJson),
             {"dp_outer", "N_Df", "", "{:>7.0f}"},
             ResultsColumn{"compute_time_s", "compute", "s", "{:>9.4f}"}.CsvAs("compute_s"),
             ResultsColumn{"dp_rail_time_s", "DP rail", "s", "{:>10.4f}"}.CsvAs("dp_rail_s"),
             ResultsColumn{"dp_domain_time_s", "DP domain", "s", "{:>10.4f}"}.CsvAs("dp_domain_s"),
             ResultsColumn{"tp_time_s", "TP", "s", "{:>10.4f}"}.CsvAs("tp_s"),
             {"iteration_time_s", "T_iter s", "s", "{:>10.4f}"},
             ResultsColumn{"analytical_time_s", "", "s", "{}"}.In(ResultsColumn::kJson),
             {"ideal_time_s", "T_ideal s", "s", "{:>10.4f}"},
             ResultsColumn{"vs_ideal", "T/T_ideal", "", "{:>9.3f}"}.In(ResultsColumn::kTable)});
        fmt::print("Rail-only analytical model, N = {}, platform {} (B_F = {} Gb/s, B_S = {} "
                   "Gb/s, C = {} TFLOP/s), TP mode {}, activation bytes {}, gradient bytes {}\n",
                   n,
                   hw.name,
                   hw.nvlinkRate.GetBitRate() / 1e9,
                   hw.nicRate.GetBitRate() / 1e9,
                   hw.gpuFlops / 1e12,
                   tpMode,
                   activationBytes,
                   gradBytes);
        for (const LlmModel& m : modelList)
        {
            fmt::print("\n{} (l = {}, d_model = {}, b = {} tokens, M_cc = {})\n",
                       m.name,
                       m.layers,
                       m.hiddenSize,
                       m.globalBatchTokens,
                       m.tpRoundsPerBlock);
            fmt::print("{}", table.Heading());
            for (uint32_t k : ks)
            {
                const SweepRow r = AnalyticalRow(m, hw, n, k, mode, activationBytes, gradBytes);
                const auto& a = r.analytical;
                table.AddRow({m.name,
                              n,
                              k,
                              a.N_M,
                              a.N_Ds,
                              a.N_Df,
                              a.compute,
                              a.dpRail,
                              a.dpDomain,
                              a.tp,
                              a.total,
                              a.total,
                              r.idealTime,
                              a.total / r.idealTime});
                fmt::print("{}", table.Line(table.Rows() - 1));
                rows[m.name].push_back(r);
            }
        }

        fmt::print("\nGain of doubling K (cut of iteration time), ours vs the paper:\n");
        nlohmann::json jtrends = nlohmann::json::array();
        for (const auto& [model, list] : rows)
        {
            for (size_t i = 0; i + 1 < list.size(); ++i)
            {
                const SweepRow& a = list[i];
                const SweepRow& b = list[i + 1];
                if (b.hbSize != 2 * a.hbSize)
                {
                    continue;
                }
                const double ours = 100.0 * (1.0 - b.analytical.total / a.analytical.total);
                auto it = kPaperGains.find({model, {a.hbSize, b.hbSize}});
                nlohmann::json t = {{"model", model},
                                    {"from_hb_size", a.hbSize},
                                    {"to_hb_size", b.hbSize},
                                    {"gain_pct", ours}};
                std::string paper = "";
                if (it != kPaperGains.end())
                {
                    t["paper_gain_pct"] = it->second;
                    paper = fmt::format("   paper {:>5.2f}%  (diff {:+.2f} pp)",
                                        it->second,
                                        ours - it->second);
                }
                fmt::print("  {:<10} K {:>4} -> {:>4}: {:>6.2f}%{}\n",
                           model,
                           a.hbSize,
                           b.hbSize,
                           ours,
                           paper);
                jtrends.push_back(t);
            }
        }
        fmt::print("paper: on 32768 GPUs an ideal all-HB network is only 1.06x-1.88x faster "
                   "(T/T_ideal column above)\n");
        // ours at the platform's own K, for the same comparison
        double lo = std::numeric_limits<double>::infinity();
        double hi = 0;
        for (const auto& [name, modelRows] : rows)
        {
            for (const SweepRow& r : modelRows)
            {
                if (r.hbSize == hw.gpusPerDomain)
                {
                    lo = std::min(lo, r.analytical.total / r.idealTime);
                    hi = std::max(hi, r.analytical.total / r.idealTime);
                }
            }
        }
        if (hi > 0)
        {
            fmt::print("here: {:.2f}x-{:.2f}x at the platform's K = {} over the models above\n",
                       lo,
                       hi,
                       hw.gpusPerDomain);
        }
        nlohmann::json jhfu = nlohmann::json::array();
        if (!hfuList.empty())
        {
            fmt::print("\n3D parallelism (TP {}, PP {}, micro-batch {} sequence(s), recompute "
                       "{}): iteration time and hardware FLOPs utilization per global batch\n",
                       tp,
                       pp,
                       microBatch,
                       recompute ? "on" : "off");
            fmt::print("{:<10} {:>6} {:>7} {:>6} {:>6} {:>10} {:>9} {:>9} {:>9} {:>7} {:>7}\n",
                       "model",
                       "K",
                       "batch",
                       "DP",
                       "m",
                       "T_iter s",
                       "bubble s",
                       "DP s",
                       "TP+PP s",
                       "HFU %",
                       "MFU %");
        }
        for (const LlmModel& m : hfuList.empty() ? std::vector<LlmModel>{} : modelList)
        {
            for (uint32_t k : ks)
            {
                for (uint64_t sequences : hfuList)
                {
                    HbDomainPreset platformK = hw;
                    platformK.gpusPerDomain = k;
                    LlmModel batchModel = m;
                    batchModel.globalBatchTokens = sequences * m.seqLength;
                    AnalyticalParams p = AnalyticalParams::From(batchModel, platformK, n);
                    p.activationBytes = activationBytes;
                    p.S_T = m.DenseBlockParams() * gradBytes;
                    ThreeDParallelBreakdown t;
                    try
                    {
                        t = ThreeDParallelTime(p,
                                               tp,
                                               pp,
                                               static_cast<double>(microBatch) * m.seqLength,
                                               recompute,
                                               m.bytesPerActivation);
                    }
                    catch (const FabricConfigError& e)
                    {
                        // name the flags this program takes them from
                        throw FabricConfigError(
                            "--tp, --pp, --micro-batch or --hfu-batches",
                            fmt::format("{},{},{},{}", tp, pp, microBatch, sequences),
                            fmt::format("a layout of {} on {} GPUs in domains of {}: {}",
                                        m.name,
                                        n,
                                        k,
                                        e.what()));
                    }
                    fmt::print("{:<10} {:>6} {:>7} {:>6} {:>6} {:>10.4f} {:>9.4f} {:>9.4f} "
                               "{:>9.4f} {:>7.2f} {:>7.2f}\n",
                               m.name,
                               k,
                               sequences,
                               t.dp,
                               t.microBatches,
                               t.total,
                               t.bubble,
                               t.dpRail + t.dpDomain,
                               t.tpComm + t.ppComm,
                               100 * t.hfu,
                               100 * t.mfu);
                    jhfu.push_back({{"model", m.name},
                                    {"hb_size", k},
                                    {"batch_sequences", sequences},
                                    {"tp", t.tp},
                                    {"pp", t.pp},
                                    {"dp", t.dp},
                                    {"micro_batches", t.microBatches},
                                    {"compute_time_s", t.compute},
                                    {"tp_time_s", t.tpComm},
                                    {"bubble_time_s", t.bubble},
                                    {"pp_time_s", t.ppComm},
                                    {"dp_rail_time_s", t.dpRail},
                                    {"dp_domain_time_s", t.dpDomain},
                                    {"iteration_time_s", t.total},
                                    {"hfu", t.hfu},
                                    {"mfu", t.mfu}});
                }
            }
        }
        if (!png.empty() && png != "none")
        {
            Plot(rows, png);
        }
        if (!json.empty())
        {
            const nlohmann::json j = {{"gpus", n},
                                      {"platform", hw.name},
                                      {"tp_mode", tpMode},
                                      {"activation_bytes", activationBytes},
                                      {"grad_bytes", gradBytes},
                                      {"batch_tokens", batch},
                                      {"results", table.Json()},
                                      {"trends", jtrends},
                                      {"hfu", jhfu}};
            WriteTextFile("--json", json, j.dump(2) + "\n");
        }
        if (!csv.empty())
        {
            WriteTextFile("--csv", csv, table.Csv());
        }
    }
    catch (const FabricConfigError& e)
    {
        fmt::print(stderr, "hb-domain-sweep: {}\n", e.what());
        return 2;
    }
    return 0;
}
