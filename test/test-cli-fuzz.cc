/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The command line fuzzed: generated flag values over every program, each
 * run with no shell between (one argv element per flag), under a time and a
 * memory limit, in a directory of its own. Every run must exit 0, or 2 with
 * a message naming the program; never a signal, never another status, never
 * a hang. A run that is valid but would take long must be refused by its
 * up-front estimate (the runs get a GpuFabricMaxRunSeconds of 20 s).
 */
#include "program-run.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace
{

using gpu_fabric_test::RunArgv;

#ifdef GPU_FABRIC_SANITIZE
// instrumented programs run 5-20 times slower than the estimates assume
// (the small base runs take 0.4-36 s there): only short runs are accepted
constexpr const char* kWorkLimit = "GpuFabricMaxRunSeconds=2";
constexpr unsigned kSeconds = 300;
#else
constexpr const char* kWorkLimit = "GpuFabricMaxRunSeconds=20";
constexpr unsigned kSeconds = 120;
#endif

/// A flag a program lists in --help, with its default ("" if none shown).
struct Flag
{
    std::string name;
    std::string byDefault;
};

/// \return the flags \p program lists under "Program Options" in --help
std::vector<Flag>
FlagsOf(const std::string& program, const std::string& dir)
{
    const auto help = RunArgv(program, {"--help"}, "cli-fuzz-help-" + program, dir, "", 60);
    EXPECT_EQ(help.first, 0) << program << " --help:\n" << help.second;
    std::vector<Flag> flags;
    std::istringstream lines(help.second);
    const std::regex option(R"(^\s+--([a-z0-9-]+):.*?(\[(.*)\])?\s*$)");
    bool inProgram = false;
    for (std::string line; std::getline(lines, line);)
    {
        if (line.rfind("Program Options", 0) == 0)
        {
            inProgram = true;
        }
        else if (line.rfind("General Arguments", 0) == 0)
        {
            inProgram = false;
        }
        std::smatch m;
        if (inProgram && std::regex_match(line, m, option))
        {
            flags.push_back({m[1], m[3]});
        }
    }
    return flags;
}

/// Values a hostile or careless caller passes: out of range, overflowing,
/// malformed, with blanks, paths that cannot be written, shell text.
const std::vector<std::string>&
HostileValues()
{
    static const std::vector<std::string> values{
        "",
        " ",
        "0",
        "1",
        "-1",
        "-5",
        "3",
        "7",
        "4294967312",
        "18446744073709551617",
        "1e30",
        "-1e30",
        "1e-30",
        "nan",
        "inf",
        "0x10",
        "16 junk",
        "1.5",
        "true",
        "nope",
        "K(",
        "K( 5 )",
        "L(L(L(L(K(3)))))",
        "Hypercube(20)",
        "$(touch PWNED)",
        "x';touch PWNED;'",
        "/nonexistent/dir/out.json",
        "/dev/full",
        ".",
        "with blank/out.json",
        std::string(5000, '9'),
        std::string(100000, 'a'),
    };
    return values;
}

/// \return a value near a flag's default: its neighbours, a multiple, a half
std::vector<std::string>
NearDefault(const std::string& text)
{
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end == text.c_str() || *end != '\0')
    {
        return {text};
    }
    const bool integer = text.find_first_of(".eE") == std::string::npos;
    auto show = [integer](double x) {
        return integer ? fmt::format("{:.0f}", x) : fmt::format("{:g}", x);
    };
    return {show(v + 1), show(v * 2), show(v * 64), show(std::max(v - 1, 0.0)), show(v / 2)};
}

/// Small-run flags per program, so that valid generated values finish fast.
const std::map<std::string, std::vector<std::string>>&
BaseArgs()
{
    static const std::map<std::string, std::vector<std::string>> base{
        {"collective-bench", {"--max-bytes=65536"}},
        {"direct-connect-synth", {"--nodes=16", "--depth=1"}},
        {"fabric-cost", {}},
        {"fabric-ip-incast", {}},
        {"fabric-routes", {}},
        {"failure-study", {"--layers=1", "--hidden=256", "--seq=128", "--micro-batches=1"}},
        {"hb-domain-messages", {}},
        {"hb-domain-sweep", {}},
        {"moe-alltoall", {}},
        {"chakra-replay", {}},
        {"multi-job", {"--topologies=rail-only", "--placements=packed"}},
        {"serving-study", {"--quick", "--topology=rail-only"}},
        {"cc-study", {"--quick", "--png=none", "--cc=hpcc"}},
        {"rail-only-vs-fat-tree", {"--quick", "--topologies=rail-only", "--png=none"}},
        {"traffic-sparsity", {}},
        // the paper's graphs (Hypercube(10), Torus(50,50)) are the default: a
        // generated --json value made each a full run (minutes instrumented);
        // the Release suite still runs them (--graphs near its default)
        {"bfb-scale", {"--graphs=Hypercube(4);Torus(4,4)"}},
        {"fabric-throughput", {"--hosts=16", "--radix=4"}},
        {"flow-scale", {"--gpus=1024"}},
        {"flow-vs-packet", {"--quick", "--max-bytes=16384"}},
    };
    return base;
}

class CliFuzz : public ::testing::TestWithParam<std::string>
{
};

TEST_P(CliFuzz, EveryGeneratedCommandLineExitsZeroOrTwoInTime)
{
    const std::string program = GetParam();
    const std::string root = ::testing::TempDir() + "cli-fuzz-" + program;
    std::filesystem::remove_all(root);
    std::filesystem::create_directories(root);
    const std::vector<Flag> flags = FlagsOf(program, root);
    ASSERT_FALSE(flags.empty()) << program;
    std::seed_seq seed(program.begin(), program.end());
    std::mt19937_64 rng(seed);
#ifdef GPU_FABRIC_SANITIZE
    // a sanitizer's shadow memory does not run under ulimit -v; a few hostile
    // cases per program (valid near-default runs take up to minutes
    // instrumented: the Release suite runs those) check the error paths for
    // memory errors and undefined behaviour
    const uint64_t memory = 0;
    const int cases = 3;
    const bool nearDefaults = false;
#else
    const uint64_t memory = 4ULL << 30;
    const int cases = 20;
    const bool nearDefaults = true;
#endif
    const auto& hostile = HostileValues();
    setenv("NS_GLOBAL_VALUE", kWorkLimit, 1); // inherited by the runs
    int exitedZero = 0;
    for (int c = 0; c < cases; ++c)
    {
        std::vector<std::string> args = BaseArgs().at(program);
        const int mutated = 1 + static_cast<int>(rng() % 2);
        for (int k = 0; k < mutated; ++k)
        {
            const Flag& f = flags[rng() % flags.size()];
            std::string value;
            if (rng() % 3 == 0 && nearDefaults)
            {
                const auto near = NearDefault(f.byDefault);
                value = near[rng() % near.size()];
            }
            else
            {
                value = hostile[rng() % hostile.size()];
            }
            args.push_back("--" + f.name + "=" + value);
        }
        const std::string dir = fmt::format("{}/case-{}", root, c);
        std::filesystem::create_directories(dir);
        const auto [status, output] = RunArgv(program,
                                              args,
                                              fmt::format("cli-fuzz-{}-{}", program, c),
                                              dir,
                                              "",
                                              kSeconds,
                                              memory);
        std::string shown;
        for (const auto& a : args)
        {
            shown += " '" + a.substr(0, 80) + (a.size() > 80 ? "...'" : "'");
        }
        // RunArgv gives -1 for a run a signal ended (the time limit's SIGALRM too)
        EXPECT_TRUE(status == 0 || status == 2)
            << program << shown << "\nexit " << status << " (-1: a signal, or the time limit):\n"
            << output.substr(0, 2000);
        if (status == 2)
        {
            EXPECT_NE(output.find(program + ": "), std::string::npos) << program << shown << "\n"
                                                                      << output.substr(0, 2000);
            EXPECT_LT(output.size(), 20000u) << program << shown << ": a message echoes too much";
        }
        exitedZero += status == 0;
        EXPECT_FALSE(std::filesystem::exists(dir + "/PWNED")) << program << shown;
        std::filesystem::remove_all(dir);
    }
    unsetenv("NS_GLOBAL_VALUE");
    RecordProperty("exited_zero", exitedZero);
}

std::vector<std::string>
Programs()
{
    std::vector<std::string> names;
    for (const auto& [name, args] : BaseArgs())
    {
        names.push_back(name);
    }
    return names;
}

INSTANTIATE_TEST_SUITE_P(Programs,
                         CliFuzz,
                         ::testing::ValuesIn(Programs()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                             std::string name = info.param;
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });

} // namespace
