/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Running the module's programs from a test (test-determinism,
 * test-programs-*, test-benches): GPU_FABRIC_BIN_DIR names the directory of
 * the built programs (test/CMakeLists.txt defines it for these binaries).
 */
#ifndef GPU_FABRIC_TEST_PROGRAM_RUN_H
#define GPU_FABRIC_TEST_PROGRAM_RUN_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace gpu_fabric_test
{

/// \return the whole file at \p path (empty if it cannot be read)
inline std::string
Slurp(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Run `program args --json=<TempDir()/tag.json>` once (it must exit 0);
/// return the file's text (empty if it wrote none).
inline std::string
RunJsonText(const std::string& programAndArgs, const std::string& tag)
{
    const std::string json = ::testing::TempDir() + tag + ".json";
    std::remove(json.c_str());
    const std::string cmd =
        std::string(GPU_FABRIC_BIN_DIR) + "/" + programAndArgs + " --json=" + json + " > /dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return Slurp(json);
}

/// RunJsonText() parsed (a discarded value if the program wrote no JSON).
inline nlohmann::json
RunJson(const std::string& programAndArgs, const std::string& tag)
{
    return nlohmann::json::parse(RunJsonText(programAndArgs, tag), nullptr, false);
}

/// Run `program args` (stdout and stderr to <TempDir()/tag.txt>: ctest runs
/// tests in parallel, each names its own file); return its exit status (-1
/// if it did not exit) and what it printed.
inline std::pair<int, std::string>
RunCapture(const std::string& programAndArgs, const std::string& tag)
{
    const std::string log = ::testing::TempDir() + tag + ".txt";
    const std::string cmd =
        std::string(GPU_FABRIC_BIN_DIR) + "/" + programAndArgs + " > " + log + " 2>&1";
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(log)};
}

/// Run \p program with exactly \p args, each one argv element with no shell
/// between (as a job runner passes generated names), in directory \p dir
/// (if not empty), with PATH set to \p path (if not empty), killed after
/// \p limitSeconds (if not 0: a case that hangs fails instead of stalling the
/// suite), its address space limited to \p memoryBytes (if not 0, as ulimit -v
/// does); stdout and stderr to <TempDir()/tag.txt>. \return its exit status
/// (-1 if it did not exit) and what it printed.
inline std::pair<int, std::string>
RunArgv(const std::string& program,
        std::vector<std::string> args,
        const std::string& tag,
        const std::string& dir = "",
        const std::string& path = "",
        unsigned limitSeconds = 0,
        uint64_t memoryBytes = 0)
{
    const std::string log = ::testing::TempDir() + tag + ".txt";
    std::string exe = std::string(GPU_FABRIC_BIN_DIR) + "/" + program;
    std::vector<char*> argv{exe.data()};
    for (auto& a : args)
    {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0)
    {
        const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0 ||
            (!dir.empty() && chdir(dir.c_str()) != 0) ||
            (!path.empty() && setenv("PATH", path.c_str(), 1) != 0))
        {
            _exit(127);
        }
        const rlimit memory{memoryBytes, memoryBytes};
        if (memoryBytes != 0 && setrlimit(RLIMIT_AS, &memory) != 0)
        {
            _exit(127);
        }
        alarm(limitSeconds); // SIGALRM ends it; the alarm survives execv
        execv(exe.c_str(), argv.data());
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
    {
        return {-1, "fork or wait failed"};
    }
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(log)};
}

/// \return an empty directory <TempDir()/tag>/ of its own
inline std::string
FreshDir(const std::string& tag)
{
    const std::string dir = ::testing::TempDir() + tag + "/";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

} // namespace gpu_fabric_test

#endif // GPU_FABRIC_TEST_PROGRAM_RUN_H
