/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// The programs' --png: any path renders there, none reaches a shell, and
// without gnuplot the data and script stay.
#include "program-run.h"

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace
{

using namespace gpu_fabric_test;

/// \return whether gnuplot runs here (the render assertions need it)
bool
HaveGnuplot()
{
    return std::system("gnuplot --version > /dev/null 2>&1") == 0;
}

/// The programs that write a gnuplot script next to --png, with cheap arguments.
const std::vector<std::pair<std::string, std::vector<std::string>>> kPlotPrograms = {
    {"hb-domain-sweep", {"--models=gpt3-175b"}},
    {"rail-only-vs-fat-tree", {"--quick", "--backend=flow"}},
    {"traffic-sparsity", {"--heatmap-gpus=64"}},
};

TEST(Programs, NoPlotPathReachesAShell)
{
    // --png went to std::system("gnuplot '<png>.gp'"), and unescaped into the
    // script, where gnuplot runs a leading | or < as a shell command
    for (const auto& [program, args] : kPlotPrograms)
    {
        for (const std::string png :
             {"x';touch${IFS}PWNED;'", "|touch PWNED", "<touch PWNED;echo "})
        {
            const std::string dir = FreshDir("no-shell");
            auto argv = args;
            argv.push_back("--png=" + png);
            const auto [status, text] = RunArgv(program, argv, "no-shell", dir);
            EXPECT_EQ(status, 0) << program << " --png=" << png << ":\n" << text;
            EXPECT_FALSE(std::filesystem::exists(dir + "PWNED")) << program << " --png=" << png;
            if (HaveGnuplot())
            {
                // the plot is rendered, to exactly that name
                EXPECT_TRUE(std::filesystem::exists(dir + png)) << program << " --png=" << png;
            }
        }
    }
}

TEST(Programs, APlotPathWithQuotesAndBlanksRendersThere)
{
    // the path was cut at its first blank (CommandLine) and written into the
    // script unescaped (a quote ended gnuplot's string)
    for (const auto& [program, args] : kPlotPrograms)
    {
        const std::string dir = FreshDir("plot-path");
        for (const std::string png : {dir + "it's a plot.png", std::string("a $b\\c \"d\".png")})
        {
            auto argv = args;
            argv.push_back("--png=" + png);
            const auto [status, text] = RunArgv(program, argv, "plot-path", dir);
            EXPECT_EQ(status, 0) << program << " --png=" << png << ":\n" << text;
            const std::string at = png[0] == '/' ? png : dir + png;
            EXPECT_TRUE(std::filesystem::exists(at + ".dat")) << program << " --png=" << png;
            EXPECT_TRUE(std::filesystem::exists(at + ".gp")) << program << " --png=" << png;
            if (!HaveGnuplot())
            {
                GTEST_SKIP() << "no gnuplot: the render is not checked";
            }
            EXPECT_NE(text.find("plot: " + png), std::string::npos) << text;
            EXPECT_EQ(Slurp(at).substr(0, 4), "\x89PNG") << program << " --png=" << png;
        }
    }
}

TEST(Programs, APlotPathAScriptCannotNameIsRefusedBeforeAnyWork)
{
    for (const auto& [program, args] : kPlotPrograms)
    {
        const std::string dir = FreshDir("plot-newline");
        auto argv = args;
        argv.push_back("--png=a\nb.png");
        const auto [status, text] = RunArgv(program, argv, "plot-newline", dir);
        EXPECT_EQ(status, 2) << program << ":\n" << text;
        EXPECT_NE(text.find("invalid --png: got 'a\\nb.png', allowed: a file path without a "
                            "newline or NUL character"),
                  std::string::npos)
            << program << ":\n"
            << text;
        EXPECT_TRUE(std::filesystem::is_empty(dir)) << program; // nothing written
    }
}

TEST(Programs, WithoutGnuplotTheDataAndScriptStay)
{
    // "gnuplot not found" is told without a shell too
    const std::string dir = FreshDir("no-gnuplot");
    const auto [status, text] = RunArgv("hb-domain-sweep",
                                        {"--models=gpt3-175b", "--png=x';touch${IFS}PWNED;'"},
                                        "no-gnuplot",
                                        dir,
                                        dir + "empty-path");
    EXPECT_EQ(status, 0) << text;
    EXPECT_NE(text.find("note: gnuplot not found; data in x';touch${IFS}PWNED;'.dat and script "
                        "in x';touch${IFS}PWNED;'.gp (no PNG)"),
              std::string::npos)
        << text;
    EXPECT_FALSE(std::filesystem::exists(dir + "PWNED"));
}

} // namespace
