/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The programs' support library (examples/support, not module API): checked
 * file output, gnuplot path literals, process metrics.
 */
#include "program-support.h"

#include "ns3/fabric-error.h"
#include "ns3/program-flags.h"

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <unistd.h>

using namespace ns3;

namespace
{

TEST(ProgramSupport, WriteTextFileWritesAndNamesTheFlagOfABadPath)
{
    const std::string path = "/tmp/test-program-support-" + std::to_string(getpid()) + ".txt";
    WriteTextFile("--json", path, "{\"a\": 1}\n");
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), "{\"a\": 1}\n");
    std::remove(path.c_str());
    try
    {
        WriteTextFile("--json", "/no-such-folder/x.json", "{}");
        ADD_FAILURE() << "wrote into a folder that does not exist";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_EQ(std::string(e.what()),
                  "invalid --json: got '/no-such-folder/x.json', allowed: a writable file path");
    }
    // a file derived from a flag's value names the value and what it must allow
    try
    {
        WriteTextFile("--png",
                      "/no-such-folder/p.png",
                      "a path whose .dat next to it is writable",
                      "/no-such-folder/p.png.dat",
                      "1 2\n");
        ADD_FAILURE() << "wrote into a folder that does not exist";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_EQ(std::string(e.what()),
                  "invalid --png: got '/no-such-folder/p.png', allowed: a path whose .dat next to "
                  "it is writable");
    }
}

TEST(ProgramSupport, ProcessMetrics)
{
    EXPECT_GT(PeakRssBytes(), 1U << 20); // a process with ns-3 loaded holds more than 1 MB
    // monotonic: never goes back (no time is asserted)
    double last = WallSeconds();
    for (int i = 0; i < 1000; ++i)
    {
        const double now = WallSeconds();
        EXPECT_GE(now, last);
        last = now;
    }
}

TEST(ProgramSupport, GnuplotPathIsOneLiteralNamingExactlyThePath)
{
    // gnuplot's single quotes: '' is a quote, nothing else is special
    EXPECT_EQ(GnuplotPath("--png", "plot.png"), "'./plot.png'");
    EXPECT_EQ(GnuplotPath("--png", "/tmp/a b.png"), "'/tmp/a b.png'");
    EXPECT_EQ(GnuplotPath("--png", "x';touch${IFS}PWNED;'"), "'./x'';touch${IFS}PWNED;'''");
    EXPECT_EQ(GnuplotPath("--png", "it's $HOME\\x.png"), "'./it''s $HOME\\x.png'");
    EXPECT_EQ(GnuplotPath("--png", "''"), "'./'''''");
    EXPECT_EQ(GnuplotPath("--png", "a\"b\".png"), "'./a\"b\".png'");
    // a leading | or < would be a shell command to gnuplot, ~ its home
    EXPECT_EQ(GnuplotPath("--png", "|touch PWNED"), "'./|touch PWNED'");
    EXPECT_EQ(GnuplotPath("--png", "<touch PWNED"), "'./<touch PWNED'");
    EXPECT_EQ(GnuplotPath("--png", "~/x.png"), "'./~/x.png'");
    EXPECT_EQ(GnuplotPath("--png", "-"), "'./-'");
    // what a script cannot name is refused, naming the flag and the value
    for (const std::string bad : {std::string("a\nb.png"), std::string("a\0b", 3), std::string()})
    {
        try
        {
            GnuplotPath("--png", bad);
            ADD_FAILURE() << "accepted " << ::testing::PrintToString(bad);
        }
        catch (const FabricConfigError& e)
        {
            EXPECT_NE(std::string(e.what()).find("invalid --png: got '" + ShownValue(bad) +
                                                 "', allowed: a file path without a newline"),
                      std::string::npos)
                << e.what();
        }
    }
}

} // namespace
