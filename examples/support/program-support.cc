/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "program-support.h"

#include "ns3/fabric-error.h"

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

} // namespace ns3
