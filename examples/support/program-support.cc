/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "program-support.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/congestion-control.h"
#include "ns3/dc-schedules.h"
#include "ns3/double.h"
#include "ns3/fabric-distributed.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-switch.h"
#include "ns3/fabric-work.h"
#include "ns3/fabric.h"
#include "ns3/flow-transport.h"
#include "ns3/iteration-program.h"
#include "ns3/program-flags.h"
#include "ns3/run-progress.h"
#include "ns3/string.h"
#include "ns3/training-iteration.h"
#include "ns3/uinteger.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <spawn.h>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ns3
{

uint64_t
PeakRssBytes()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<uint64_t>(u.ru_maxrss) * 1024;
}

double
WallSeconds()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void
WriteTextFile(const std::string& flag, const std::string& path, const std::string& text)
{
    WriteTextFile(flag, path, "a writable file path", path, text);
}

void
WriteTextFile(const std::string& flag,
              const std::string& value,
              const std::string& allowed,
              const std::string& path,
              const std::string& text)
{
    if (FabricDistributed::GetSystemId() != 0)
    {
        return; // a distributed run's files are rank 0's
    }
    std::ofstream f(path);
    FabricRequire(f.good(), flag, value, allowed);
    f << text;
    // a text smaller than the stream's buffer reaches the file only here
    f.close();
    FabricRequire(!f.fail(), flag, path, "a path with room to write");
}

bool
RenderPlot(const std::string& gp, const std::string& dat, const std::string& png)
{
    if (FabricDistributed::GetSystemId() != 0)
    {
        return true; // rank 0 renders it
    }
    // an argument vector, no shell: the path is the user's text. "./" before
    // a relative one, or gnuplot would read "-e..." as an option, "-" as stdin
    std::string program = "gnuplot";
    std::string script = gp.rfind('/', 0) == 0 ? gp : "./" + gp;
    char* args[] = {program.data(), script.data(), nullptr};
    std::fflush(stdout); // this program's lines before gnuplot's
    pid_t pid = 0;
    const int spawned = posix_spawnp(&pid, program.c_str(), nullptr, nullptr, args, environ);
    if (spawned != 0)
    {
        fmt::print("note: {}; data in {} and script in {} (no PNG)\n",
                   spawned == ENOENT
                       ? std::string("gnuplot not found")
                       : fmt::format("could not run gnuplot: {}", std::strerror(spawned)),
                   dat,
                   gp);
        return false;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
    {
        if (errno != EINTR)
        {
            status = -1; // not an exit status: reported as a failure
            break;
        }
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    {
        fmt::print("note: gnuplot failed on {}; no PNG written\n", gp);
        return false;
    }
    fmt::print("plot: {}\n", png);
    return true;
}

std::string
GnuplotPath(const std::string& flag, const std::string& path)
{
    FabricRequire(!path.empty() && path.find_first_of(std::string("\n\0", 2)) == std::string::npos,
                  flag,
                  path,
                  "a file path without a newline or NUL character (a gnuplot script cannot "
                  "name it)");
    std::string literal = path[0] == '/' ? "'" : "'./";
    for (const char c : path)
    {
        literal += c;
        if (c == '\'')
        {
            literal += c; // '' is a quote inside gnuplot's single quotes
        }
    }
    return literal + "'";
}

void
RequireTopologyFlags(const ProgramFlags& cmd, const std::string& topology, double nodeBandwidthGbps)
{
    FabricRequire(nodeBandwidthGbps * 1e9 >= 1 && nodeBandwidthGbps * 1e9 < 0x1p64,
                  "--node-bandwidth-gbps",
                  cmd.ValueText("node-bandwidth-gbps"),
                  "a positive rate of at least 1e-9 and below 1.8e10 Gb/s");
    for (const char* f : {"graph", "node-bandwidth-gbps"})
    {
        cmd.OnlyWith(f, topology == "direct-connect", "with --topology=direct-connect");
    }
    // a direct-connect topology is its graph: one GPU per node, no switches
    for (const char* f : {"preset", "radix"})
    {
        cmd.OnlyWith(f, topology != "direct-connect", "without --topology=direct-connect");
    }
}

void
DirectConnectFlags::Add(ProgramFlags& cmd)
{
    cmd.AddValue("graph",
                 "also run on a direct-connect fabric of this graph (construction name, e.g. "
                 "Hypercube(4); its nodes x GPUs per node = the GPU count)",
                 graph);
    cmd.AddValue("dc-nodes",
                 "with --graph: domain (a graph node is an HB domain of K GPUs) | gpu (one GPU "
                 "per node)",
                 nodes);
    cmd.AddValue("node-bandwidth-gbps",
                 "with --graph: bandwidth per graph node, Gb/s (0: the NICs of its GPUs)",
                 nodeBandwidthGbps);
}

void
DirectConnectFlags::Require(const ProgramFlags& cmd) const
{
    FabricRequire(nodes == "domain" || nodes == "gpu", "--dc-nodes", nodes, "domain or gpu");
    FabricRequire(nodeBandwidthGbps == 0 ||
                      (nodeBandwidthGbps * 1e9 >= 1 && nodeBandwidthGbps * 1e9 < 0x1p64),
                  "--node-bandwidth-gbps",
                  cmd.ValueText("node-bandwidth-gbps"),
                  "0 (the NICs of the node's GPUs) or a rate of at least 1e-9 and below "
                  "1.8e10 Gb/s");
    for (const char* f : {"dc-nodes", "node-bandwidth-gbps"})
    {
        cmd.OnlyWith(f, !graph.empty(), "with --graph");
    }
}

TopologyHelper
DirectConnectFlags::Topologies(const ClusterParams& cluster, const std::string& topologyFlag) const
{
    TopologyHelper topologies(cluster);
    topologies.SetGraph(graph, static_cast<uint64_t>(nodeBandwidthGbps * 1e9));
    topologies.SetDomainsAsNodes(nodes == "domain");
    topologies.SetGpusRequired(true);
    topologies.SetParameterNames(topologyFlag, "--gpus", "--graph");
    if (!graph.empty())
    {
        const uint32_t k = topologies.GetGpusPerNode();
        const uint32_t hosts = topologies.GetGraph().NumNodes();
        FabricRequire(
            uint64_t{hosts} * k == cluster.gpus,
            "--graph",
            graph,
            fmt::format("a graph of {} nodes ({} GPUs{}); this one has {}",
                        cluster.gpus / k,
                        cluster.gpus,
                        k == 1 ? ", one per node (--dc-nodes=gpu)"
                               : fmt::format(" in HB domains of K = {} (--dc-nodes=domain)", k),
                        hosts));
    }
    return topologies;
}

ProgramRunner::ScheduleSource
ScheduleSourceFor(const TopologyHelper& topologies, const std::string& topology)
{
    if (topology != "direct-connect")
    {
        return {};
    }
    return DirectConnectSchedules(topologies.GetGraph(), topologies.GetGpusPerNode()).Source();
}

ParallelProgram
TpDpGptProgram(const HbDomainPreset& hw,
               uint32_t domains,
               uint32_t layers,
               uint32_t hidden,
               uint32_t seq,
               uint32_t microBatches)
{
    const uint32_t k = hw.gpusPerDomain;
    const LlmModel model =
        LlmModel::Custom(layers, hidden, 16, seq, 8192, uint64_t{domains} * microBatches * seq);
    Parallelism::Shape shape;
    shape.gpus = domains * k;
    shape.gpusPerDomain = k;
    shape.tp = k;
    shape.dp = domains;
    shape.microBatches = microBatches;
    shape.globalBatchSequences = uint64_t{domains} * microBatches;
    WorkloadOptions wo;
    wo.gpuFlops = hw.gpuFlops;
    const TrainingIteration it(model, Parallelism(shape), wo);
    IterationProgramOptions po;
    po.tpGranularity = "micro-batch";
    return BuildIterationProgram(it, po).program;
}

/// What RunOutputs installs: the recorders its flags ask for, and
/// --progress on every backend, from the first one made on (after Parse).
class RunOutputs::Observer : public RunObserver
{
  public:
    /// \param outputs the flags' values (read when the first backend comes)
    explicit Observer(const RunOutputs* outputs)
        : m_outputs(outputs)
    {
    }

    void Observe(Ptr<Object> object) override
    {
        if (!m_ready)
        {
            m_ready = true;
            Start();
        }
        // before the run declares its work, which starts its progress lines
        Ptr<Transport> transport;
        if (auto fabric = DynamicCast<Fabric>(object))
        {
            transport = fabric->GetTransport();
        }
        else
        {
            transport = DynamicCast<FlowTransport>(object);
        }
        if (transport && !m_outputs->m_progress)
        {
            transport->SetAttribute("ShowProgress", BooleanValue(false));
        }
        if (transport)
        {
            RunStarts();
        }
        if (timeline)
        {
            timeline->Observe(object);
        }
        if (util)
        {
            util->Observe(object);
        }
    }

    /// \param runs runs the sweep makes (0: unknown)
    void ExpectRuns(uint64_t runs)
    {
        // counted from here: a run made before the sweep is not one of its runs
        m_expectedRuns = runs;
        m_base = m_runs;
        m_sweepStart = std::chrono::steady_clock::now();
        m_lastLine = m_sweepStart;
    }

    /// The recorders, once the flags ask for them (null otherwise).
    Ptr<TimelineRecorder> timeline;
    Ptr<LinkUtilizationRecorder> util; //!< --link-util

  private:
    /// Check the paths before anything runs, and make the recorders.
    void Start()
    {
        try
        {
            for (const auto& [flag, path] :
                 {std::pair<std::string, std::string>{"--timeline", m_outputs->m_timeline},
                  {"--link-util", m_outputs->m_linkUtil}})
            {
                if (!path.empty())
                {
                    WriteTextFile(flag, path, ""); // written for real at the end
                }
            }
        }
        catch (const FabricConfigError& e)
        {
            fmt::print(stderr, "{}: {}\n", program_invocation_short_name, e.what());
            std::exit(2);
        }
        if (!m_outputs->m_timeline.empty())
        {
            timeline = CreateObject<TimelineRecorder>();
        }
        if (!m_outputs->m_linkUtil.empty())
        {
            util = CreateObject<LinkUtilizationRecorder>();
        }
    }

    /// A backend is made: the runs before it are done; a sweep line when due.
    void RunStarts()
    {
        const auto now = std::chrono::steady_clock::now();
        if (m_runs++ == 0)
        {
            TimeValue interval;
            CreateObject<RunProgress>()->GetAttribute("Interval", interval);
            m_interval = interval.Get().GetSeconds();
            if (m_expectedRuns == 0)
            {
                m_sweepStart = now;
                m_lastLine = now;
            }
        }
        const uint64_t done = m_runs - 1 - m_base;
        const auto seconds = [](auto d) { return std::chrono::duration<double>(d).count(); };
        if (done == 0 || !m_outputs->m_progress || seconds(now - m_lastLine) < m_interval)
        {
            return;
        }
        m_lastLine = now;
        const double elapsed = seconds(now - m_sweepStart);
        std::string line = fmt::format("gpu-fabric: progress: sweep, {} ", done);
        if (m_expectedRuns > done)
        {
            line += fmt::format("of {} runs done, {} elapsed, about {} left",
                                m_expectedRuns,
                                FabricDurationText(elapsed),
                                FabricDurationText(elapsed / done * (m_expectedRuns - done)));
        }
        else
        {
            line += fmt::format("{} done, {} elapsed",
                                done == 1 ? "run" : "runs",
                                FabricDurationText(elapsed));
        }
        fmt::print(stderr, "{}\n", line);
    }

    const RunOutputs* m_outputs;
    bool m_ready{false};
    uint64_t m_runs{0};         //!< backends made so far
    uint64_t m_expectedRuns{0}; //!< ExpectRuns (0: unknown)
    uint64_t m_base{0};         //!< runs made before ExpectRuns
    double m_interval{10};      //!< seconds between sweep lines
    std::chrono::steady_clock::time_point m_sweepStart;
    std::chrono::steady_clock::time_point m_lastLine;
};

void
RunOutputs::ExpectRuns(uint64_t runs) const
{
    m_observer->ExpectRuns(runs);
}

RunOutputs::RunOutputs(ProgramFlags& cmd)
{
    cmd.AddValue("timeline",
                 "write every task, collective and message of the run(s) to this path as a "
                 "Chrome / Perfetto trace (JSON: ui.perfetto.dev, chrome://tracing)",
                 m_timeline);
    cmd.AddValue("link-util",
                 "write every link's utilization over time to this path (JSON, or CSV for a "
                 "path ending in .csv) and a heatmap of the last run beside it (.png)",
                 m_linkUtil);
    cmd.AddValue("progress", "print progress lines on stderr on long runs (0: never)", m_progress);
    m_observer = CreateObject<Observer>(this);
    RunObserver::Add(m_observer);
}

RunOutputs::~RunOutputs()
{
    RunObserver::Remove(m_observer);
    try
    {
        // a distributed run's ranks each recorded their own GPUs and links:
        // rank 0 gathers them and alone writes the files
        if (m_observer->timeline)
        {
            m_observer->timeline->GatherToRoot();
        }
        if (m_observer->util)
        {
            m_observer->util->GatherToRoot();
        }
        if (m_observer->timeline)
        {
            std::ostringstream text;
            m_observer->timeline->WriteJson(text);
            WriteTextFile("--timeline", m_timeline, text.str());
            if (const uint64_t dropped = m_observer->timeline->GetDropped())
            {
                fmt::print(stderr,
                           "note: --timeline kept the first {} spans and left out {} "
                           "(--ns3::TimelineRecorder::MaxSpans, RecordMessages=false)\n",
                           m_observer->timeline->GetSpans().size(),
                           dropped);
            }
        }
        if (m_observer->util)
        {
            const nlohmann::json j = m_observer->util->ToJson();
            const bool csv =
                m_linkUtil.size() > 4 && m_linkUtil.compare(m_linkUtil.size() - 4, 4, ".csv") == 0;
            WriteTextFile("--link-util",
                          m_linkUtil,
                          csv ? m_observer->util->ToCsv() : j.dump(1) + "\n");
            if (const uint64_t dropped = m_observer->util->GetDropped())
            {
                fmt::print(stderr,
                           "note: --link-util left out {} busy intervals past "
                           "--ns3::LinkUtilizationRecorder::MaxIntervals: the series miss "
                           "their bytes\n",
                           dropped);
            }
            if (!j["runs"].empty())
            {
                const auto dot = m_linkUtil.find_last_of('.');
                const auto slash = m_linkUtil.find_last_of('/');
                const std::string stem =
                    dot != std::string::npos && (slash == std::string::npos || dot > slash)
                        ? m_linkUtil.substr(0, dot)
                        : m_linkUtil;
                WriteLinkHeatmap("--link-util", j["runs"].back(), stem + ".png");
            }
        }
    }
    catch (const FabricConfigError& e)
    {
        fmt::print(stderr, "{}: {}\n", program_invocation_short_name, e.what());
        std::exit(2);
    }
}

bool
WriteLinkHeatmap(const std::string& flag, const nlohmann::json& r, const std::string& png)
{
    // the busiest links of each class (in name order), after the classes' averages
    constexpr size_t kPerClass = 12;
    std::map<std::string, std::vector<const nlohmann::json*>> byClass;
    for (const auto& l : r.at("links"))
    {
        byClass[l["class"].get<std::string>()].push_back(&l);
    }
    std::vector<std::pair<std::string, const nlohmann::json*>> rows; // (label, series)
    for (const auto& c : r.at("classes"))
    {
        if (c["bytes"].get<double>() > 0)
        {
            rows.emplace_back(fmt::format("all {} ({})",
                                          c["class"].get<std::string>(),
                                          c["links"].get<uint32_t>()),
                              &c);
        }
    }
    for (auto& [name, links] : byClass)
    {
        std::stable_sort(links.begin(), links.end(), [](const auto* a, const auto* b) {
            return (*a)["bytes"].template get<double>() > (*b)["bytes"].template get<double>();
        });
        links.resize(std::min(links.size(), kPerClass));
        std::stable_sort(links.begin(), links.end(), [](const auto* a, const auto* b) {
            return (*a)["link"].template get<std::string>() <
                   (*b)["link"].template get<std::string>();
        });
        for (const auto* l : links)
        {
            rows.emplace_back(name + " " + (*l)["link"].get<std::string>(), l);
        }
    }
    if (rows.empty())
    {
        return false;
    }
    const double binUs = r.at("bin_s").get<double>() * 1e6;
    std::string dat;
    std::string ytics;
    // top to bottom as listed
    for (size_t i = 0; i < rows.size(); ++i)
    {
        const size_t y = rows.size() - 1 - i;
        const auto& u = (*rows[i].second)["utilization"];
        for (size_t x = 0; x < u.size(); ++x)
        {
            dat += fmt::format("{:.6g} {} {:.6g}\n", (x + 0.5) * binUs, y, u[x].get<double>());
        }
        dat += "\n";
        ytics += fmt::format("{}\"{}\" {}", i == 0 ? "" : ", ", rows[i].first, y);
    }
    const std::string datPath = png + ".dat";
    const std::string gpPath = png + ".gp";
    WriteTextFile(flag, datPath, dat);
    WriteTextFile(flag,
                  gpPath,
                  fmt::format("set terminal pngcairo size 1100,{} font ',9'\n"
                              "set output {}\n"
                              "set title 'link utilization, run {} ({} backend)'\n"
                              "set xlabel 'simulated time (us)'\n"
                              "set ytics ({}) font ',7'\n"
                              "set yrange [-0.5:{}]\n"
                              "set xrange [0:{}]\n"
                              "set cbrange [0:1]\n"
                              "set cblabel 'utilization'\n"
                              "set palette defined (0 'white', 0.5 'orange', 1 'dark-red')\n"
                              "plot {} using 1:2:3 with image notitle\n",
                              std::max<size_t>(300, 120 + 14 * rows.size()),
                              GnuplotPath(flag, png),
                              r.at("run").get<uint32_t>(),
                              r.at("backend").get<std::string>(),
                              ytics,
                              rows.size() - 0.5,
                              r.at("end_s").get<double>() * 1e6,
                              GnuplotPath(flag, datPath)));
    return RenderPlot(gpPath, datPath, png);
}

PacketControlFlags::PacketControlFlags(ProgramFlags& cmd)
{
    cmd.AddValue("cc",
                 "packet level: congestion control, none, dcqcn, dctcp, hpcc, swift or a "
                 "FabricCongestionControl TypeId name (ns3::PacketTransport::CongestionControl)",
                 m_cc);
    cmd.AddValue("lb",
                 "packet level: switch load balancing, ecmp, spray, flowlet or adaptive "
                 "(ns3::FabricSwitch::LoadBalancing)",
                 m_lb);
}

void
PacketControlFlags::Apply(ProgramFlags& cmd, bool packetLevel) const
{
    cmd.OnlyWith("cc", packetLevel, "at packet level (the flow level is the max-min share)");
    cmd.OnlyWith("lb", packetLevel, "at packet level (the flow level spreads by ECMP)");
    const std::string type = ResolveCongestionControl(m_cc, "--cc");
    FabricSwitch::CheckLoadBalancingName(m_lb, "--lb");
    // only what the flags say: --ns3::... on the command line stays otherwise
    if (cmd.WasGiven("lb"))
    {
        Config::SetDefault("ns3::FabricSwitch::LoadBalancing", StringValue(m_lb));
    }
    if (!cmd.WasGiven("cc"))
    {
        return;
    }
    Config::SetDefault("ns3::PacketTransport::CongestionControl", StringValue(m_cc));
    if (type.empty())
    {
        return;
    }
    // marking as each algorithm's paper sets it, unless the command line did
    TypeId::AttributeInformation kmax;
    TypeId::LookupByName("ns3::FabricSwitch").LookupAttributeByName("EcnKmax", &kmax);
    if (DynamicCast<const UintegerValue>(kmax.initialValue)->Get() != 0)
    {
        return;
    }
    const EcnMarking marking = PublishedEcnMarking(type);
    Config::SetDefault("ns3::FabricSwitch::EcnKmin", UintegerValue(marking.kmin));
    Config::SetDefault("ns3::FabricSwitch::EcnKmax", UintegerValue(marking.kmax));
    Config::SetDefault("ns3::FabricSwitch::EcnPmax", DoubleValue(marking.pmax));
}

} // namespace ns3
