/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_PROGRAM_SUPPORT_H
#define GPU_FABRIC_PROGRAM_SUPPORT_H

// What the module's programs (examples/, bench/) share beyond their command
// lines: process metrics, checked file output and plots. A library of the
// programs, not of the module: not installed, not exported (the flags are
// ns3/program-flags.h, the scenarios ns3/topology-helper.h and
// ns3/transport-helper.h).

#include "ns3/hb-domain-preset.h"
#include "ns3/link-utilization-recorder.h"
#include "ns3/program-runner.h"
#include "ns3/timeline-recorder.h"
#include "ns3/topology-helper.h"

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace ns3
{

class ProgramFlags;

/**
 * The flags of a program that builds any topology by name: --graph and
 * --node-bandwidth-gbps only with --topology=direct-connect, --preset and
 * --radix only without it, and the node bandwidth checked where it becomes
 * whole bit/s in 64 bits (1e30 would reach the topology as 0); messages
 * quote the text given.
 * \param cmd the parsed flags \param topology --topology's value
 * \param nodeBandwidthGbps --node-bandwidth-gbps's value
 */
void RequireTopologyFlags(const ProgramFlags& cmd,
                          const std::string& topology,
                          double nodeBandwidthGbps);

/**
 * The direct-connect fabric of a training program (rail-only-vs-fat-tree,
 * moe-alltoall, flow-scale): --graph (a construction name, e.g.
 * Hypercube(4); empty: no direct-connect fabric), --dc-nodes (domain: each
 * graph node is an HB domain of K GPUs sharing its arcs; gpu: one GPU per
 * node) and --node-bandwidth-gbps (0: the NICs of a node's GPUs, K or 1 x
 * B_nic, the scale-out bandwidth they have on the switched fabrics).
 */
struct DirectConnectFlags
{
    std::string graph;           //!< --graph
    std::string nodes{"domain"}; //!< --dc-nodes
    double nodeBandwidthGbps{0}; //!< --node-bandwidth-gbps

    /// \param cmd the program's flags, before Parse
    void Add(ProgramFlags& cmd);

    /**
     * Check the flags after Parse: --dc-nodes names domain or gpu, the
     * bandwidth is 0 or a rate that fits 64 bits, and --dc-nodes and
     * --node-bandwidth-gbps come only with --graph.
     * \param cmd the parsed flags
     */
    void Require(const ProgramFlags& cmd) const;

    /**
     * The topologies of \p cluster with the graph as "direct-connect"; a
     * graph whose nodes do not hold exactly cluster.gpus GPUs is refused
     * naming --graph.
     * \param cluster the job's cluster (N, platform, radix)
     * \param topologyFlag the flag that names topologies (for an unknown name)
     * \return the helper
     */
    TopologyHelper Topologies(const ClusterParams& cluster,
                              const std::string& topologyFlag = "--topologies") const;
};

/**
 * The schedules a program's comms take on \p topology: on "direct-connect",
 * the fabric's own (DirectConnectSchedules over the graph of \p topologies:
 * BFB, the shortest-path all-to-all) where they apply; elsewhere none (each
 * comm's own algorithm). For RunProgram's third argument.
 * \param topologies what builds the topology \param topology its name
 * \return the source (empty off direct-connect)
 */
ProgramRunner::ScheduleSource ScheduleSourceFor(const TopologyHelper& topologies,
                                                const std::string& topology);

/**
 * The programs' small GPT job: tensor parallelism over one HB domain (K of
 * \p hw), data parallelism over \p domains domains, one TP AllReduce group
 * per micro-batch, compute at \p hw's FLOPs.
 * \param hw the platform \param domains DP size \param layers blocks
 * \param hidden d_model \param seq tokens per sequence
 * \param microBatches per replica
 * \return the job's program, ranks 0..domains x K - 1
 */
ParallelProgram TpDpGptProgram(const HbDomainPreset& hw,
                               uint32_t domains,
                               uint32_t layers,
                               uint32_t hidden,
                               uint32_t seq,
                               uint32_t microBatches);

/// \return the process's peak resident set, bytes
uint64_t PeakRssBytes();

/// \return a monotonic wall clock, seconds
double WallSeconds();

/**
 * Write a text file (JSON, CSV, a gnuplot script), closed and checked: a
 * path that cannot be opened is "a writable file path", a write that fails
 * (a full disk) "a path with room to write", both FabricConfigError naming
 * \p flag and \p path.
 * \param flag the flag that named the path (for the error)
 * \param path the path \param text the contents
 */
void WriteTextFile(const std::string& flag, const std::string& path, const std::string& text);

/**
 * Write a text file whose path is derived from a flag's value (a plot's
 * .dat or .gp next to --png). A path that cannot be opened is refused as
 * "invalid <flag>: got '<value>', allowed: <allowed>"; a failed write as
 * with the overload above, naming \p flag and \p path.
 * \param flag the flag \param value its value \param allowed what the value must allow
 * \param path the file \param text the contents
 */
void WriteTextFile(const std::string& flag,
                   const std::string& value,
                   const std::string& allowed,
                   const std::string& path,
                   const std::string& text);

/**
 * Render a plot: run gnuplot on a script already written next to its data.
 * Without gnuplot, or if it fails, print a note saying where the data and
 * script are; a missing plot never fails a program.
 * \param gp the gnuplot script \param dat its data file \param png the image it writes
 * \return true if the PNG was written
 */
bool RenderPlot(const std::string& gp, const std::string& dat, const std::string& png);

/**
 * A file path as a gnuplot string literal, for a generated script's
 * "set output" or "plot": single-quoted, a quote doubled (gnuplot's only
 * escape in single quotes; backslashes, blanks and $ stay literal), and "./"
 * before a relative path (gnuplot would read a leading | or < as a shell
 * command to pipe to or from, and a leading ~ as the home directory).
 * \param flag the flag that gave the path, for the error
 * \param path the path
 * \return the literal, naming exactly \p path
 * \throws FabricConfigError for an empty path or one holding a newline or a
 *         NUL (a gnuplot script cannot name it)
 */
std::string GnuplotPath(const std::string& flag, const std::string& path);

/**
 * What a researcher looks at beside a simulating program's results, the
 * same flags on every such program: --timeline=PATH (every task, collective
 * and message of every run as a Chrome / Perfetto trace, TimelineRecorder),
 * --link-util=PATH (every link's utilization over time, JSON or, for a path
 * ending in .csv, CSV, LinkUtilizationRecorder; and a heatmap of the last
 * run beside it, PATH without its extension + ".png", by gnuplot) and
 * --progress (false: no progress lines on stderr on long runs, nor on sweeps
 * of many runs: ExpectRuns). One line in
 * main, before Parse:
 *
 *   const RunOutputs outputs(cmd);
 *
 * The recorders hear of every backend, collective and program the program
 * makes (RunObserver) and write their files when \p outputs goes out of
 * scope; a path that cannot be written is refused (exit status 2) when the
 * first backend is made, before it runs.
 */
class RunOutputs
{
  public:
    /// \param cmd the program's flags (the three are added)
    explicit RunOutputs(ProgramFlags& cmd);
    /// Writes the files asked for.
    ~RunOutputs();
    RunOutputs(const RunOutputs&) = delete;
    RunOutputs& operator=(const RunOutputs&) = delete;

    /**
     * Declare a sweep of \p runs simulations (one backend each): with
     * --progress, each new run after Interval of wall time
     * (ns3::RunProgress::Interval) since the last line prints "progress:
     * sweep, D of T runs done, ... elapsed, about ... left" on stderr. Without
     * it the lines count the runs and give no estimate.
     * \param runs runs the program will make
     */
    void ExpectRuns(uint64_t runs) const;

    /// \return false after --progress=0 (a program's own progress lines obey it too)
    bool Progress() const
    {
        return m_progress;
    }

    /// The observer the flags install: recorders and --progress.
    class Observer;

  private:
    std::string m_timeline;
    std::string m_linkUtil;
    bool m_progress{true};
    Ptr<Observer> m_observer;
};

/**
 * --cc and --lb, the packet level's congestion control
 * (ns3::PacketTransport::CongestionControl: none, dcqcn, dctcp, hpcc, swift
 * or a TypeId name) and the switches' load balancing
 * (ns3::FabricSwitch::LoadBalancing: ecmp, spray, flowlet, adaptive). Made
 * before Parse (it adds the flags), Apply() after it:
 *
 *   const PacketControlFlags control(cmd);
 *   cmd.Parse(argc, argv);
 *   control.Apply(cmd, backend == "packet");
 */
class PacketControlFlags
{
  public:
    /// \param cmd the program's flags (the two are added)
    explicit PacketControlFlags(ProgramFlags& cmd);

    /**
     * Check the names and set the defaults of every fabric made after it.
     * With a congestion control, switches mark ECN as its paper sets it
     * (DCQCN: Kmin 5 KB, Kmax 200 KB, Pmax 1 %; the others a step at 100 KB)
     * unless --ns3::FabricSwitch::EcnKmax was given.
     * \param cmd the program's flags
     * \param packetLevel whether the run has a packet level (the flags are
     *        refused otherwise)
     * \throws FabricConfigError naming --cc or --lb
     */
    void Apply(ProgramFlags& cmd, bool packetLevel) const;

  private:
    std::string m_cc{"none"};
    std::string m_lb{"ecmp"};
};

/**
 * The heatmap of --link-util: a gnuplot script and its data (utilization of
 * links by time bins) written next to \p png, then rendered (RenderPlot):
 * each link class's average, then the 12 busiest links of each class.
 * \param flag the flag, for errors
 * \param run one run of LinkUtilizationRecorder::ToJson()'s "runs"
 * \param png the image
 * \return true if the PNG was written
 */
bool WriteLinkHeatmap(const std::string& flag, const nlohmann::json& run, const std::string& png);

} // namespace ns3

#endif // GPU_FABRIC_PROGRAM_SUPPORT_H
