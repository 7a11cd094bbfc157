/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// examples/cc-study: flow-completion-time (FCT) slowdown by flow size under
// congestion control and load balancing on a packet-level fat-tree, as the
// HPCC paper (Li et al., SIGCOMM 2019, Sec. 5, Fig. 11) and the DCQCN and
// DCTCP studies measure it.
//
// Every host starts flows by a Poisson process at --load of its link rate
// (arrival rate load x rate / mean flow size), to a destination uniform among
// the other hosts, with sizes drawn from a published flow-size distribution
// (WebSearch, DCTCP paper; FB Hadoop, Roy et al. SIGCOMM 2015: CDF points in
// examples/data, installed to share/gpu-fabric). Arrivals last --duration-ms;
// the run then goes on until every flow finished (or --drain-ms more, and
// the flows still running are counted and reported). Each flow's slowdown is
// its FCT over its ideal FCT alone on the idle fabric (closed form,
// IdealFct in examples/support/fct-study.h, checked against packet-level
// runs of single flows in test-cc-study). Per size bucket (decades, merged
// to hold at least 5 % of the flows) the program prints the 50th, 95th and
// 99th percentile slowdown of every combination of --cc, --lb, --workload
// and --load, each on a fresh fabric, with the HPCC paper's findings beside.
#include "fct-study.h"
#include "program-support.h"

#include "ns3/congestion-control.h"
#include "ns3/core-module.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-header.h"
#include "ns3/fabric-helper.h"
#include "ns3/fabric-switch.h"
#include "ns3/packet-transport.h"
#include "ns3/program-flags.h"
#include "ns3/topology-builders.h"

#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

/// The workloads: name -> data file.
const std::map<std::string, std::string> kWorkloads = {{"websearch", "websearch-cdf.txt"},
                                                       {"hadoop", "hadoop-cdf.txt"}};

/**
 * What the HPCC paper and its authors published on FCT slowdown by flow size:
 * the values are in plots only (Fig. 11 of the paper; the authors' results
 * page), so no number is printed as theirs; these are their statements.
 */
const char* const kPaperFindings[][2] = {
    {"Li et al., HPCC, SIGCOMM 2019, abstract",
     "compared to DCQCN and TIMELY, HPCC shortens flow completion times by up to 95%"},
    {"Li et al., HPCC, SIGCOMM 2019, Fig. 11 (FCT slowdown by size, WebSearch and FB_Hadoop, "
     "30% and 50% load; per the README of alibaba-edu/High-Precision-Congestion-Control)",
     "percentiles are plotted only; no values were read off (not available as text here)"},
    {"HPCC authors' results page (hpcc-group.github.io/results.html, eta 99%, maxStage 0), "
     "WebSearch 30%",
     "HPCC significantly improves the FCT for flows < 200KB, especially at the tail"},
    {"same page, Hadoop 30%",
     "the trend is similar; with more short flows, HPCC's advantage is more evident"},
    {"same page, WebSearch 50%", "the trend is similar to the 30% load case"}};

/// One combination's run.
struct RunResult
{
    std::string cc;
    std::string lb;
    std::string workload;
    double load{0};
    std::vector<double> slowdown; //!< per flow, finished ones
    std::vector<uint64_t> bytes;  //!< per finished flow
    uint64_t flows{0};
    uint64_t unfinished{0};
    std::vector<uint64_t> unfinishedBytes;
    uint64_t belowIdeal{0};
    uint64_t overlapSamePair{0};  //!< flows started while one of their pair ran
    uint64_t behindSamePair{0};   //!< of which waited behind it (--connections=pair)
    uint64_t overtookSamePair{0}; //!< flows done before an earlier one of their pair
    double minSlowdown{1e300};    //!< smallest slowdown of a finished flow
    uint64_t bytesSent{0};
    uint64_t bytesDelivered{0};
    double offeredLoad{0};
    double simSeconds{0};
    double wallSeconds{0};
};

/// What the flows of a run share with their callbacks.
struct RunState
{
    Ptr<PacketTransport> transport;
    std::vector<Time> start;
    std::vector<Time> end;
    uint64_t left{0};
};

void
FlowDone(RunState* s, uint32_t i)
{
    s->end[i] = Simulator::Now();
    if (--s->left == 0)
    {
        Simulator::Stop(); // nothing else to measure (timers may still run)
    }
}

void
StartFlow(RunState* s, uint32_t i, uint32_t src, uint32_t dst, uint64_t bytes)
{
    s->start[i] = Simulator::Now();
    s->transport->Send(src, dst, bytes, MakeBoundCallback(&FlowDone, s, i));
}

/// The fabric settings of the program.
struct FabricSpec
{
    ClusterParams cluster;
    double durationS{0};
    double drainS{0};
};

RunResult
RunOne(const FabricSpec& spec,
       const FabricTopology& topo,
       const IdealFct& ideal,
       const std::vector<FlowSpec>& flows,
       const std::string& cc,
       const std::string& lb,
       double load,
       bool ecnFromCommandLine,
       bool connectionPerMessage)
{
    RunResult r;
    r.cc = cc;
    r.lb = lb;
    const std::string type = ResolveCongestionControl(cc, "--cc");
    Config::SetDefault("ns3::PacketTransport::CongestionControl", StringValue(cc));
    Config::SetDefault("ns3::PacketTransport::ConnectionPerMessage",
                       BooleanValue(connectionPerMessage));
    FabricHelper helper;
    helper.SetSwitchAttribute("LoadBalancing", StringValue(lb));
    if (!type.empty() && !ecnFromCommandLine)
    {
        // marking as each algorithm's paper sets it
        const EcnMarking marking = PublishedEcnMarking(type);
        helper.SetSwitchAttribute("EcnKmin", UintegerValue(marking.kmin));
        helper.SetSwitchAttribute("EcnKmax", UintegerValue(marking.kmax));
        helper.SetSwitchAttribute("EcnPmax", DoubleValue(marking.pmax));
    }
    Ptr<Fabric> fabric = helper.Install(topo);
    RunState s;
    s.transport = fabric->GetTransport();
    // the ideal of each flow: alone, in this transport's packets
    const PacketFraming framing = TransportFraming(*s.transport, helper.GetDeviceFrameMtu());
    s.start.assign(flows.size(), Time());
    s.end.assign(flows.size(), Time(-1));
    s.left = flows.size();
    double offeredBytes = 0;
    for (uint32_t i = 0; i < flows.size(); ++i)
    {
        const FlowSpec& f = flows[i];
        Simulator::Schedule(Seconds(f.startS), &StartFlow, &s, i, f.src, f.dst, f.bytes);
        offeredBytes += f.bytes;
    }
    // a run past GpuFabricMaxRunSeconds is refused before it starts (exit 2)
    s.transport->ExpectWork(flows.size(),
                            static_cast<uint64_t>(offeredBytes),
                            "--duration-ms",
                            fmt::format("{} (with --hosts={}, --load={})",
                                        spec.durationS * 1e3,
                                        spec.cluster.gpus,
                                        load));
    r.offeredLoad =
        offeredBytes * 8 /
        (spec.cluster.gpus * static_cast<double>(spec.cluster.NetworkRate()) * spec.durationS);
    Simulator::Stop(Seconds(spec.durationS + spec.drainS));
    const double t0 = WallSeconds();
    if (!flows.empty())
    {
        Simulator::Run();
    }
    r.wallSeconds = WallSeconds() - t0;
    r.simSeconds = Simulator::Now().GetSeconds();
    r.flows = flows.size();
    for (uint32_t i = 0; i < flows.size(); ++i)
    {
        const FlowSpec& f = flows[i];
        if (s.end[i].IsNegative())
        {
            ++r.unfinished;
            r.unfinishedBytes.push_back(f.bytes);
            continue;
        }
        const double fct = (s.end[i] - s.start[i]).GetSeconds();
        const double idealS = ideal.Seconds(f.src, f.dst, f.bytes, framing);
        // serialization times are whole time steps, the remainder carried
        // per port: on a loaded port a packet may end one step sooner
        // than alone, so one step per hop is rounding, not a faster flow
        const double rounding = ideal.Hops(f.src, f.dst) * TimeStep(1).GetSeconds();
        r.belowIdeal += fct < idealS - rounding - 1e-12 ? 1 : 0;
        r.slowdown.push_back(fct / idealS);
        r.minSlowdown = std::min(r.minSlowdown, fct / idealS);
        r.bytes.push_back(f.bytes);
    }
    // flows that started while an earlier flow of the same source and
    // destination was still running: with one connection per pair of hosts
    // (served in order) they wait behind it; with one per flow they run
    // beside it, and may finish before it (overtake)
    std::map<std::pair<uint32_t, uint32_t>, Time> busyUntil;
    for (uint32_t i = 0; i < flows.size(); ++i)
    {
        const auto pair = std::make_pair(flows[i].src, flows[i].dst);
        const Time end = s.end[i].IsNegative() ? Time::Max() : s.end[i];
        auto [it, fresh] = busyUntil.emplace(pair, end);
        if (!fresh)
        {
            const bool overlaps = s.start[i] < it->second;
            r.overlapSamePair += overlaps ? 1 : 0;
            r.overtookSamePair += overlaps && end < it->second ? 1 : 0;
            it->second = std::max(it->second, end);
        }
    }
    r.behindSamePair = connectionPerMessage ? 0 : r.overlapSamePair;
    const auto totals = s.transport->GetTotals();
    r.bytesSent = totals.bytesSent;
    r.bytesDelivered = totals.bytesDelivered;
    fabric->Dispose();
    fabric = nullptr;
    Simulator::Destroy();
    return r;
}

/// One row of the results: a run's bucket.
struct BucketRow
{
    double p50{0};
    double p95{0};
    double p99{0};
    uint64_t flows{0};
    uint64_t unfinished{0};
};

std::vector<BucketRow>
Bucketize(const RunResult& r, const std::vector<SizeBucket>& buckets)
{
    std::vector<BucketRow> rows(buckets.size());
    std::vector<std::vector<double>> values(buckets.size());
    auto which = [&buckets](uint64_t bytes) {
        for (size_t b = 0; b < buckets.size(); ++b)
        {
            if (bytes <= buckets[b].maxBytes)
            {
                return b;
            }
        }
        return buckets.size() - 1;
    };
    for (size_t i = 0; i < r.slowdown.size(); ++i)
    {
        values[which(r.bytes[i])].push_back(r.slowdown[i]);
    }
    for (uint64_t bytes : r.unfinishedBytes)
    {
        ++rows[which(bytes)].unfinished;
    }
    for (size_t b = 0; b < buckets.size(); ++b)
    {
        rows[b].flows = values[b].size();
        rows[b].p50 = NearestRankPercentile(values[b], 0.50);
        rows[b].p95 = NearestRankPercentile(values[b], 0.95);
        rows[b].p99 = NearestRankPercentile(values[b], 0.99);
    }
    return rows;
}

/// \return the loads of --load: each a number in (0, 1)
std::vector<double>
ParseLoads(const std::string& text)
{
    std::vector<double> loads;
    for (const std::string& item : SplitList("--load", text))
    {
        char* end = nullptr;
        const double v = std::strtod(item.c_str(), &end);
        FabricRequire(end != item.c_str() && *end == '\0' && v > 0 && v < 1,
                      "--load",
                      item,
                      "comma-separated fractions of the host link rate, each in (0, 1)");
        loads.push_back(v);
    }
    return loads;
}

/// The plot: p99 and p50 slowdown by bucket upper bound, one line per run.
void
Plot(const std::vector<RunResult>& runs,
     const std::map<std::string, std::vector<SizeBucket>>& buckets,
     const std::string& png)
{
    const std::string dat = png + ".dat";
    const std::string gp = png + ".gp";
    std::string data;
    for (const RunResult& r : runs)
    {
        const auto& b = buckets.at(r.workload);
        const auto rows = Bucketize(r, b);
        data += fmt::format("# {} {} {} {}\n# bucket_max_bytes p50 p95 p99 flows\n",
                            r.cc,
                            r.lb,
                            r.workload,
                            r.load);
        for (size_t i = 0; i < rows.size(); ++i)
        {
            if (rows[i].flows > 0)
            {
                data += fmt::format("{} {} {} {} {}\n",
                                    b[i].maxBytes,
                                    rows[i].p50,
                                    rows[i].p95,
                                    rows[i].p99,
                                    rows[i].flows);
            }
        }
        data += "\n\n";
    }
    WriteTextFile("--png", png, "a path whose .dat next to it is writable", dat, data);
    std::string text = "set terminal pngcairo size 1200,500\n" +
                       fmt::format("set output {}\n", GnuplotPath("--png", png)) +
                       "set multiplot layout 1,2 title 'FCT slowdown by flow size (cc-study)'\n"
                       "set logscale x\nset logscale y\nset grid\nset key top left font ',8'\n"
                       "set xlabel 'flow size, bucket upper bound (bytes)'\n";
    for (const auto& [col, name] : {std::pair{4, "99th"}, std::pair{2, "50th"}})
    {
        text += fmt::format("set title '{} percentile'\nset ylabel 'FCT slowdown'\nplot ", name);
        for (size_t i = 0; i < runs.size(); ++i)
        {
            text +=
                fmt::format("{}{} index {} using 1:{} with linespoints lw 2 title '{} {} {} {}'",
                            i == 0 ? "" : ", ",
                            GnuplotPath("--png", dat),
                            i,
                            col,
                            runs[i].cc,
                            runs[i].lb,
                            runs[i].workload,
                            runs[i].load);
        }
        text += "\n";
    }
    text += "unset multiplot\n";
    WriteTextFile("--png", png, "a path whose .gp next to it is writable", gp, text);
    RenderPlot(gp, dat, png);
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string cc = "dcqcn,hpcc";
    std::string lb = "ecmp";
    std::string workload = "websearch";
    std::string load = "0.3,0.5";
    uint32_t hosts = 128;
    uint32_t radix = 8;
    std::string rate = "100Gbps";
    uint32_t delayNs = 1000;
    double durationMs = 5;
    double drainMs = 50;
    uint64_t seed = 1;
    bool quick = false;
    std::string connections = "message";
    std::string json;
    std::string png = "cc-study.png";
    std::string dataDir;

    ProgramFlags cmd("cc-study", __FILE__);
    cmd.Usage("FCT slowdown by flow size (p50, p95, p99 per size bucket) under congestion "
              "control and load balancing, WebSearch and FB Hadoop flow sizes at a load, on a "
              "packet-level three-tier fat-tree; every combination of the lists runs.");
    cmd.AddValue("cc", "congestion controls, comma-separated: none, dcqcn, hpcc, dctcp, swift", cc);
    cmd.AddValue("lb",
                 "switch load balancing, comma-separated: ecmp, spray, flowlet, adaptive",
                 lb);
    cmd.AddValue("workload",
                 "flow-size distributions, comma-separated: websearch, hadoop",
                 workload);
    cmd.AddValue("load", "loads, comma-separated fractions of the host link rate in (0, 1)", load);
    cmd.AddInteger("hosts", "hosts (fill a radix-k three-tier fat-tree evenly)", hosts, 2);
    cmd.AddInteger("radix", "switch radix k", radix, 2, 1024);
    cmd.AddValue("rate", "every link's rate", rate);
    cmd.AddValue("delay-ns", "propagation delay per link, ns", delayNs);
    cmd.AddValue("duration-ms",
                 "flows arrive during this much simulated time, ms",
                 durationMs,
                 "a positive number of milliseconds, at most 1000",
                 std::function<bool(double)>([](double v) { return v > 0 && v <= 1000; }));
    cmd.AddValue("drain-ms",
                 "after the arrivals, run at most this long for the flows to finish (the "
                 "unfinished are counted), ms",
                 drainMs,
                 "a number of milliseconds from 0 to 10000",
                 std::function<bool(double)>([](double v) { return v >= 0 && v <= 10000; }));
    cmd.AddValue("seed", "seed of the arrivals, destinations and sizes", seed);
    cmd.AddValue("quick",
                 "a run of under a minute: 64 hosts, 1 ms of arrivals, --load=0.5 (flags given "
                 "keep their values)",
                 quick);
    cmd.AddValue("connections",
                 "message: every flow its own connection (queue pair) with fresh congestion "
                 "state, as the HPCC paper's simulator; pair: the flows of a host pair share "
                 "one, in order (ns3::PacketTransport::ConnectionPerMessage false)",
                 connections);
    cmd.AddValue("json", "write the results as JSON to this path", json);
    cmd.AddValue("png", "plot PNG path (none: no plot)", png);
    cmd.AddValue("data-dir",
                 "directory of the flow-size files (default: GPU_FABRIC_DATA_DIR, the source "
                 "tree's examples/data, the installed share/gpu-fabric)",
                 dataDir);
    cmd.UseFabricScheduler();
    cmd.Parse(argc, argv);

    try
    {
        if (quick)
        {
            hosts = cmd.WasGiven("hosts") ? hosts : 64;
            durationMs = cmd.WasGiven("duration-ms") ? durationMs : 1;
            load = cmd.WasGiven("load") ? load : "0.5";
        }
        // every name and number is checked before the first run
        const std::vector<std::string> ccs = SplitList("--cc", cc);
        for (const auto& c : ccs)
        {
            ResolveCongestionControl(c, "--cc");
        }
        const std::vector<std::string> lbs = SplitList("--lb", lb);
        for (const auto& l : lbs)
        {
            FabricSwitch::CheckLoadBalancingName(l, "--lb");
        }
        const std::vector<std::string> workloads = SplitList("--workload", workload);
        for (const auto& w : workloads)
        {
            FabricRequire(kWorkloads.count(w) == 1, "--workload", w, "websearch or hadoop");
        }
        const std::vector<double> loads = ParseLoads(load);
        FabricRequire(connections == "message" || connections == "pair",
                      "--connections",
                      connections,
                      "message or pair");
        const bool perMessage = connections == "message";
        if (!png.empty() && png != "none")
        {
            GnuplotPath("--png", png);
        }
        std::map<std::string, FlowSizeCdf> cdfs;
        std::map<std::string, std::vector<SizeBucket>> buckets;
        for (const auto& w : workloads)
        {
            const std::string path = FindDataFile("--workload", kWorkloads.at(w), dataDir);
            cdfs.emplace(w, FlowSizeCdf::Load("--workload", path));
            buckets.emplace(w, SizeBuckets(cdfs.at(w)));
        }

        FabricSpec spec;
        spec.cluster.gpus = hosts;
        const DataRate lineRate = ParseRate("--rate", rate);
        spec.cluster.platform = HbDomainPreset::Custom(1, lineRate, lineRate);
        spec.cluster.radix = radix;
        spec.cluster.linkDelayNs = delayNs;
        spec.durationS = durationMs * 1e-3;
        spec.drainS = drainMs * 1e-3;
        const FabricTopology topo = BuildFatTree(spec.cluster);
        const IdealFct ideal(topo);
        // --ns3::FabricSwitch::EcnKmax on the command line keeps its marking
        TypeId::AttributeInformation kmax;
        TypeId::LookupByName("ns3::FabricSwitch").LookupAttributeByName("EcnKmax", &kmax);
        const bool ecnFromCommandLine =
            DynamicCast<const UintegerValue>(kmax.initialValue)->Get() != 0;

        fmt::print("cc-study: {} hosts, radix {}, {} links, {} ns per hop; arrivals for {} ms, "
                   "drain up to {} ms; seed {}; a connection per {}\n",
                   hosts,
                   radix,
                   rate,
                   delayNs,
                   durationMs,
                   drainMs,
                   seed,
                   connections == "message" ? "flow" : "host pair");
        std::vector<RunResult> runs;
        const double wall0 = WallSeconds();
        for (const auto& w : workloads)
        {
            for (double l : loads)
            {
                // the same flows for every cc and lb of a workload and load
                const auto flows = PoissonFlows(hosts,
                                                l,
                                                static_cast<double>(lineRate.GetBitRate()),
                                                cdfs.at(w),
                                                spec.durationS,
                                                seed);
                for (const auto& c : ccs)
                {
                    for (const auto& b : lbs)
                    {
                        RunResult r = RunOne(spec,
                                             topo,
                                             ideal,
                                             flows,
                                             c,
                                             b,
                                             l,
                                             ecnFromCommandLine,
                                             perMessage);
                        r.workload = w;
                        r.load = l;
                        fmt::print(stderr,
                                   "cc-study: {} {} {} load {}: {} flows ({} started while "
                                   "another of their host pair ran: {} waited behind it, {} "
                                   "finished first), {} unfinished, {:.3f} ms simulated, "
                                   "{:.1f} s wall\n",
                                   c,
                                   b,
                                   w,
                                   l,
                                   r.flows,
                                   r.overlapSamePair,
                                   r.behindSamePair,
                                   r.overtookSamePair,
                                   r.unfinished,
                                   r.simSeconds * 1e3,
                                   r.wallSeconds);
                        runs.push_back(std::move(r));
                    }
                }
            }
        }
        Config::SetDefault("ns3::PacketTransport::CongestionControl", StringValue("none"));
        Config::SetDefault("ns3::PacketTransport::ConnectionPerMessage", BooleanValue(false));
        const double wall = WallSeconds() - wall0;

        // the table
        nlohmann::json results = nlohmann::json::array();
        nlohmann::json runsJson = nlohmann::json::array();
        fmt::print("\nFCT slowdown (FCT / the flow's ideal FCT alone on the idle fabric)\n");
        fmt::print("{:<10} {:>5} {:<6} {:<9} {:<12} {:>7} {:>8} {:>8} {:>8} {:>6}\n",
                   "workload",
                   "load",
                   "cc",
                   "lb",
                   "size",
                   "flows",
                   "p50",
                   "p95",
                   "p99",
                   "unfin");
        for (const RunResult& r : runs)
        {
            const auto& b = buckets.at(r.workload);
            const auto rows = Bucketize(r, b);
            for (size_t i = 0; i < rows.size(); ++i)
            {
                fmt::print("{:<10} {:>5} {:<6} {:<9} {:<12} {:>7} {:>8.2f} {:>8.2f} {:>8.2f} "
                           "{:>6}\n",
                           r.workload,
                           r.load,
                           r.cc,
                           r.lb,
                           b[i].label,
                           rows[i].flows,
                           rows[i].p50,
                           rows[i].p95,
                           rows[i].p99,
                           rows[i].unfinished);
                results.push_back({{"cc", r.cc},
                                   {"lb", r.lb},
                                   {"workload", r.workload},
                                   {"load", r.load},
                                   {"size_bucket", b[i].maxBytes},
                                   {"size_bucket_min_bytes", b[i].minBytes},
                                   {"size_bucket_label", b[i].label},
                                   {"p50", rows[i].p50},
                                   {"p95", rows[i].p95},
                                   {"p99", rows[i].p99},
                                   {"flows", rows[i].flows},
                                   {"unfinished_flows", rows[i].unfinished}});
            }
            runsJson.push_back({{"cc", r.cc},
                                {"lb", r.lb},
                                {"workload", r.workload},
                                {"load", r.load},
                                {"flows", r.flows},
                                {"unfinished_flows", r.unfinished},
                                {"flows_below_ideal", r.belowIdeal},
                                {"min_slowdown", r.slowdown.empty() ? 0.0 : r.minSlowdown},
                                {"connections", connections},
                                {"flows_overlapping_same_pair", r.overlapSamePair},
                                {"flows_behind_same_pair", r.behindSamePair},
                                {"flows_overtaking_same_pair", r.overtookSamePair},
                                {"bytes_sent", r.bytesSent},
                                {"bytes_delivered", r.bytesDelivered},
                                {"offered_load", r.offeredLoad},
                                {"simulated_s", r.simSeconds},
                                {"wall_s", r.wallSeconds}});
        }
        uint64_t unfinished = 0;
        uint64_t belowIdeal = 0;
        for (const RunResult& r : runs)
        {
            unfinished += r.unfinished;
            belowIdeal += r.belowIdeal;
        }
        fmt::print("{} runs in {:.1f} s wall; {} flows unfinished after the drain (counted in "
                   "'unfin', not in the percentiles); {} flows faster than their ideal\n",
                   runs.size(),
                   wall,
                   unfinished,
                   belowIdeal);

        // ours beside the paper's: the tail of short flows, DCQCN against HPCC
        fmt::print("\nThe HPCC paper beside ours\n");
        for (const auto& [source, finding] : kPaperFindings)
        {
            fmt::print("  paper: {}\n         \"{}\"\n", source, finding);
        }
        nlohmann::json ordering = nlohmann::json::array();
        for (const RunResult& h : runs)
        {
            if (h.cc != "hpcc")
            {
                continue;
            }
            for (const RunResult& d : runs)
            {
                if (d.cc != "dcqcn" || d.lb != h.lb || d.workload != h.workload || d.load != h.load)
                {
                    continue;
                }
                const auto& b = buckets.at(h.workload);
                const auto hr = Bucketize(h, b);
                const auto dr = Bucketize(d, b);
                for (size_t i = 0; i < b.size() && b[i].maxBytes <= 200'000; ++i)
                {
                    const double reduction = dr[i].p99 > 0 ? 1 - hr[i].p99 / dr[i].p99 : 0;
                    fmt::print("  ours:  {} load {} {} flows {}: p99 slowdown HPCC {:.2f}, DCQCN "
                               "{:.2f} (HPCC {:.0f}% lower)\n",
                               h.workload,
                               h.load,
                               h.lb,
                               b[i].label,
                               hr[i].p99,
                               dr[i].p99,
                               100 * reduction);
                    ordering.push_back({{"workload", h.workload},
                                        {"load", h.load},
                                        {"lb", h.lb},
                                        {"size_bucket", b[i].maxBytes},
                                        {"hpcc_p99", hr[i].p99},
                                        {"dcqcn_p99", dr[i].p99},
                                        {"hpcc_reduction", reduction}});
                }
            }
        }
        if (ordering.empty())
        {
            fmt::print("  ours:  (run --cc with both dcqcn and hpcc for the comparison)\n");
        }

        if (!json.empty())
        {
            nlohmann::json paper = nlohmann::json::array();
            for (const auto& [source, finding] : kPaperFindings)
            {
                paper.push_back({{"source", source}, {"statement", finding}});
            }
            nlohmann::json bucketsJson = nlohmann::json::object();
            for (const auto& [w, list] : buckets)
            {
                for (const auto& b : list)
                {
                    bucketsJson[w].push_back({{"size_bucket", b.maxBytes},
                                              {"min_bytes", b.minBytes},
                                              {"label", b.label}});
                }
            }
            const nlohmann::json j = {
                {"program", "cc-study"},
                {"hosts", hosts},
                {"radix", radix},
                {"rate_bps", lineRate.GetBitRate()},
                {"delay_ns", delayNs},
                {"duration_s", spec.durationS},
                {"drain_s", spec.drainS},
                {"seed", seed},
                {"size_bucket",
                 "upper bound of the bucket in bytes (inclusive); the bucket is "
                 "(size_bucket_min_bytes, size_bucket]"},
                {"buckets", bucketsJson},
                {"results", results},
                {"runs", runsJson},
                {"hpcc_vs_dcqcn", ordering},
                {"paper", paper},
                {"wall_s", wall}};
            WriteTextFile("--json", json, j.dump(2) + "\n");
        }
        if (!png.empty() && png != "none")
        {
            Plot(runs, buckets, png);
        }
    }
    catch (const FabricConfigError& e)
    {
        fmt::print(stderr, "cc-study: {}\n", e.what());
        return 2;
    }
    return 0;
}
