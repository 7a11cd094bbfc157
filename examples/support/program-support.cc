/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "program-support.h"

#include "ns3/fabric-error.h"
#include "ns3/iteration-program.h"
#include "ns3/program-flags.h"
#include "ns3/training-iteration.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <spawn.h>
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

} // namespace ns3
