/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * ProgramFlags on well-formed command lines (the bad ones exit the process:
 * test-determinism runs the programs for those).
 */
#include "ns3/fabric-error.h"
#include "ns3/program-support.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

/// Parse \p args (program name first) with a fresh set of flags.
struct Parsed
{
    bool keep{true};
    bool quick{false};
    uint32_t count{7};
    int32_t offset{0};
    double fraction{0};
    std::string name{"x"};
    std::vector<std::string> given; //!< the flags WasGiven reports

    explicit Parsed(std::vector<std::string> args)
    {
        ProgramFlags flags("test-program", __FILE__);
        flags.AddValue("keep", "a bool that defaults to true", keep);
        flags.AddValue("quick", "a bool that defaults to false", quick);
        flags.AddValue("count", "an unsigned", count);
        flags.AddValue("offset", "a signed", offset);
        flags.AddValue("fraction", "a double", fraction);
        flags.AddValue("name", "a string", name);
        std::vector<char*> argv;
        for (auto& a : args)
        {
            argv.push_back(a.data());
        }
        flags.Parse(static_cast<int>(argv.size()), argv.data());
        for (const char* f : {"keep", "quick", "count", "offset", "fraction", "name"})
        {
            if (flags.WasGiven(f))
            {
                given.emplace_back(f);
            }
        }
    }
};

TEST(ProgramFlags, ABareBoolFlagSetsItTrue)
{
    // CommandLine alone toggles a bare bool: --keep would turn keep off
    EXPECT_TRUE(Parsed({"p", "--keep"}).keep);
    EXPECT_TRUE(Parsed({"p", "--quick"}).quick);
    EXPECT_FALSE(Parsed({"p", "--keep=0"}).keep);
    EXPECT_FALSE(Parsed({"p", "--keep=False"}).keep);
    EXPECT_TRUE(Parsed({"p", "--quick=T"}).quick);
    EXPECT_TRUE(Parsed({"p"}).keep); // the default stays
}

TEST(ProgramFlags, NumbersAsNs3ReadsThem)
{
    const Parsed p({"p", "--count=+5", "--offset=-3", "--fraction=.5"});
    EXPECT_EQ(p.count, 5u);
    EXPECT_EQ(p.offset, -3);
    EXPECT_DOUBLE_EQ(p.fraction, 0.5);
    EXPECT_EQ(Parsed({"p", "--count=4294967295"}).count, 4294967295u);
    EXPECT_DOUBLE_EQ(Parsed({"p", "--fraction=1e-6"}).fraction, 1e-6);
}

TEST(ProgramFlags, WasGivenTellsAGivenDefaultFromNone)
{
    // a flag given with its default value was still given (a direct-connect
    // program refuses a --gpus that disagrees with its graph, not its default)
    EXPECT_EQ(Parsed({"p", "--count=7", "--quick"}).given,
              (std::vector<std::string>{"quick", "count"}));
    EXPECT_TRUE(Parsed({"p"}).given.empty());
}

TEST(ProgramFlags, ListsRefuseEmptyItemsIncludingATrailingComma)
{
    EXPECT_EQ(SplitList("--gpus", "8,16"), (std::vector<std::string>{"8", "16"}));
    for (const char* bad : {"8,16,", "8,,16", ",8", ""})
    {
        try
        {
            SplitList("--gpus", bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        }
        catch (const FabricConfigError& e)
        {
            EXPECT_NE(std::string(e.what()).find(std::string("invalid --gpus: got '") + bad + "'"),
                      std::string::npos)
                << e.what();
        }
    }
}

TEST(ProgramFlags, FlagIsTrueReadsTheLastOneGiven)
{
    const auto is = [](std::vector<std::string> args) {
        std::vector<char*> argv;
        for (auto& a : args)
        {
            argv.push_back(a.data());
        }
        return FlagIsTrue(static_cast<int>(argv.size()), argv.data(), "quick");
    };
    EXPECT_TRUE(is({"p", "--quick"}));
    EXPECT_TRUE(is({"p", "--quick=T"}));
    EXPECT_TRUE(is({"p", "--quick=TRUE"}));
    EXPECT_FALSE(is({"p", "--quick", "--quick=0"}));
    EXPECT_TRUE(is({"p", "--quick=false", "--quick"}));
    EXPECT_FALSE(is({"p", "--quicker"}));
    EXPECT_FALSE(is({"p"}));
}

} // namespace
