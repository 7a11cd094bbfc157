/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * ProgramFlags on well-formed command lines, and on bad ones in death tests
 * (a bad flag exits the process with status 2; test-programs-cli runs the
 * programs themselves).
 */
#include "ns3/fabric-error.h"
#include "ns3/global-value.h"
#include "ns3/program-flags.h"
#include "ns3/type-id.h"

#include <gtest/gtest.h>
#include <limits>
#include <string>
#include <unistd.h>
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
    std::string path{"two words.json"};
    uint32_t gpus{128};             //!< AddInteger, 1 to 2^31 - 1
    uint64_t total{0};              //!< AddInteger, >= 0
    double scale{1};                //!< AddValue with a check, > 0
    double size{1048576};           //!< more digits than a stream shows
    float weight{0.1F};             //!< a float, shown as a float reads back
    std::vector<std::string> given; //!< the flags WasGiven reports

    explicit Parsed(std::vector<std::string> args, bool fabricScheduler = false)
    {
        ProgramFlags flags("test-program", __FILE__);
        flags.AddValue("keep", "a bool that defaults to true", keep);
        flags.AddValue("quick", "a bool that defaults to false", quick);
        flags.AddValue("count", "an unsigned", count);
        flags.AddValue("offset", "a signed", offset);
        flags.AddValue("fraction", "a double", fraction);
        flags.AddValue("name", "a string", name);
        flags.AddValue("path", "a string whose default has a blank", path);
        flags.AddInteger("gpus", "an integer in a range", gpus);
        flags.AddInteger("total",
                         "an integer without a maximum",
                         total,
                         0,
                         std::numeric_limits<uint64_t>::max());
        flags.AddValue<double>("scale",
                               "a checked double",
                               scale,
                               "a positive number",
                               [](double v) { return v > 0; });
        flags.AddValue("size", "a double with seven digits", size);
        flags.AddValue("weight", "a float", weight);
        if (fabricScheduler)
        {
            flags.UseFabricScheduler();
        }
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
    EXPECT_EQ(Parsed({"p", "--size=123456789.5"}).size, 123456789.5);
    EXPECT_EQ(Parsed({"p", "--weight=-2.5e-3"}).weight, -2.5e-3F);
    EXPECT_EQ(Parsed({"p"}).size, 1048576); // the default stays
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

/// \return \p text as a regular expression that matches it literally
std::string
Literal(const std::string& text)
{
    std::string out;
    for (const char c : text)
    {
        if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos)
        {
            out += '\\';
        }
        out += c;
    }
    return out;
}

/// Parse \p args in a child process: it must exit with status 2 and print
/// \p said (literally) on standard error.
void
ExpectRefused(const std::vector<std::string>& args, const std::string& said)
{
    EXPECT_EXIT(Parsed{args}, ::testing::ExitedWithCode(2), Literal(said))
        << ShownValue(args.back());
}

TEST(ProgramFlags, ARangedFlagIsTypedAndRefusedByItsRange)
{
    const Parsed p({"p", "--gpus=+64", "--total=18446744073709551615", "--scale=2.5"});
    EXPECT_EQ(p.gpus, 64u);
    EXPECT_EQ(p.total, 18446744073709551615ull);
    EXPECT_DOUBLE_EQ(p.scale, 2.5);
    EXPECT_EQ(Parsed({"p"}).gpus, 128u); // the default is not checked, nor changed
    // as ParseInteger words it: what is not a number of the type and what is
    // out of the range are refused alike
    for (const std::string bad : {"0", "2147483648", "abc", "-5", "12abc", "1.5", "99999999999"})
    {
        ExpectRefused({"p", "--gpus=" + bad},
                      "invalid --gpus: got '" + bad +
                          "', allowed: an integer from 1 to 2147483647");
    }
    ExpectRefused({"p", "--total=-1"}, "invalid --total: got '-1', allowed: an integer >= 0");
    for (const std::string bad : {"0", "-1", "x", "1e999", "nan"})
    {
        ExpectRefused({"p", "--scale=" + bad},
                      "invalid --scale: got '" + bad + "', allowed: a positive number");
    }
}

TEST(ProgramFlags, ParsingChangesTheSchedulerOnlyWhenAsked)
{
    const auto scheduler = [] {
        TypeIdValue v;
        GlobalValue::GetValueByName("SchedulerType", v);
        return v.Get().GetName();
    };
    GlobalValue::Bind("SchedulerType", TypeIdValue(TypeId::LookupByName("ns3::MapScheduler")));
    Parsed({"p", "--count=3"});
    EXPECT_EQ(scheduler(), "ns3::MapScheduler");
    Parsed({"p", "--count=3"}, true);
    EXPECT_EQ(scheduler(), "ns3::FabricLookaheadScheduler");
    // --SchedulerType still decides
    Parsed({"p", "--SchedulerType=ns3::HeapScheduler"}, true);
    EXPECT_EQ(scheduler(), "ns3::HeapScheduler");
    // the free function, for a scenario of one's own
    UseFabricScheduler();
    EXPECT_EQ(scheduler(), "ns3::FabricLookaheadScheduler");
    GlobalValue::Bind("SchedulerType", TypeIdValue(TypeId::LookupByName("ns3::MapScheduler")));
}

TEST(ProgramFlags, AStringFlagTakesItsWholeValue)
{
    // CommandLine reads a string with >>: "my results.json" was "my",
    // "K( 5 )" was "K("
    EXPECT_EQ(Parsed({"p", "--name=my results.json"}).name, "my results.json");
    EXPECT_EQ(Parsed({"p", "--name=K( 5 )"}).name, "K( 5 )");
    EXPECT_EQ(Parsed({"p", "--name= lead and trail "}).name, " lead and trail ");
    EXPECT_EQ(Parsed({"p", "--name=a\nb=c"}).name, "a\nb=c");
    EXPECT_EQ(Parsed({"p"}).path, "two words.json");
    EXPECT_EQ(Parsed({"p", "--name=a b", "--name=c d"}).name, "c d"); // the last one wins
}

TEST(ProgramFlags, HelpShowsAStringDefaultWhole)
{
    // --help prints on standard output: sent to standard error to be matched
    EXPECT_EXIT(
        {
            dup2(STDERR_FILENO, STDOUT_FILENO);
            Parsed({"p", "--help"});
        },
        ::testing::ExitedWithCode(0),
        Literal("--path:") + ".*" + Literal("[two words.json]"));
}

TEST(ProgramFlags, HelpShowsARealDefaultAsItReadsBack)
{
    // a stream's six digits showed 1048576 as 1.04858e+06, which is not it
    EXPECT_EXIT(
        {
            dup2(STDERR_FILENO, STDOUT_FILENO);
            Parsed({"p", "--help"});
        },
        ::testing::ExitedWithCode(0),
        Literal("--size:") + ".*" + Literal("[1048576]") + ".*" + Literal("--weight:") + ".*" +
            Literal("[0.1]"));
}

TEST(ProgramFlags, ANumberWithTrailingTextIsRefused)
{
    // one argv element "16 junk" (a job runner's quoting) is not 16
    ExpectRefused({"p", "--count=16 junk"}, "invalid --count: got '16 junk', allowed: a whole");
    ExpectRefused({"p", "--count=16 "}, "invalid --count: got '16 ', allowed: a whole");
    ExpectRefused({"p", "--offset=-3 4"}, "invalid --offset: got '-3 4', allowed: a whole");
    ExpectRefused({"p", "--fraction=0.5 x"}, "invalid --fraction: got '0.5 x', allowed: a finite");
    ExpectRefused({"p", "--keep=true x"}, "invalid --keep: got 'true x', allowed: true, false");
}

TEST(ProgramFlags, ThreeDashesAreAnUnknownFlag)
{
    // CommandLine strips two dashes: "---count" was the unknown "-count"
    // (exit 1) while its value went unchecked
    ExpectRefused({"p", "---count=-5"}, "invalid flag: got '---count=-5', allowed: --count");
    ExpectRefused({"p", "-count=5"}, "invalid flag: got '-count=5'");
    ExpectRefused({"p", "--"}, "invalid flag: got '--'");
}

TEST(ProgramFlags, GlobalAndAttributeFlagsNeedAValue)
{
    ExpectRefused({"p", "--SchedulerType"},
                  "invalid --SchedulerType: got no value, allowed: --SchedulerType=<value>");
    ExpectRefused({"p", "--ns3::FabricSwitch::PfcXoff"},
                  "invalid --ns3::FabricSwitch::PfcXoff: got no value");
}

TEST(ProgramFlags, PrintFlagsNameWhatTheyTake)
{
    // ns-3 aborts on an unknown TypeId (a bare flag looks up "")
    ExpectRefused({"p", "--PrintAttributesX"}, "invalid flag: got '--PrintAttributesX'");
    ExpectRefused({"p", "--PrintAttributes"},
                  "invalid --PrintAttributes: got no value, allowed: --PrintAttributes=<TypeId>");
    ExpectRefused({"p", "--PrintAttributes=ns3::Nope"},
                  "invalid --PrintAttributes: got 'ns3::Nope', allowed: a registered TypeId");
    ExpectRefused({"p", "--PrintGroup=Nope"},
                  "invalid --PrintGroup: got 'Nope', allowed: the name of a group");
    ExpectRefused({"p", "--PrintGroupX"}, "invalid flag: got '--PrintGroupX'");
    // a good one still prints and exits 0
    EXPECT_EXIT(Parsed({"p", "--PrintAttributes=ns3::FabricSwitch"}),
                ::testing::ExitedWithCode(0),
                "");
}

TEST(ProgramFlags, SchedulerTypeMustNameAScheduler)
{
    // a registered type that is no scheduler passed the global's checker;
    // the simulator then crashed creating it (ns3::FabricSwitch segfaulted,
    // ns3::Object aborted)
    for (const std::string type : {"ns3::FabricSwitch", "ns3::Object", "ns3::Scheduler"})
    {
        ExpectRefused({"p", "--SchedulerType=" + type},
                      "invalid --SchedulerType: got '" + type +
                          "', allowed: the TypeId name of an ns-3 scheduler: ");
    }
    ExpectRefused({"p", "--SimulatorImplementationType=ns3::MapScheduler"},
                  "invalid --SimulatorImplementationType: got 'ns3::MapScheduler'");
    EXPECT_NO_FATAL_FAILURE(Parsed({"p", "--SchedulerType=ns3::HeapScheduler"}));
}

TEST(ProgramFlags, RngSeedZeroIsRefused)
{
    // ns-3's generator needs a non-zero seed
    for (const std::string zero : {"0", "00", "+0"})
    {
        ExpectRefused({"p", "--RngSeed=" + zero},
                      "invalid --RngSeed: got '" + zero + "', allowed: a whole number from 1");
    }
    EXPECT_NO_FATAL_FAILURE(Parsed({"p", "--RngSeed=7"}));
}

TEST(ProgramFlags, AHugeValueIsShownCut)
{
    // a message quotes the value, but 100 kB of it would bury the reason
    const std::string huge(100000, '7');
    ExpectRefused({"p", "--count=" + huge},
                  "invalid --count: got '" + huge.substr(0, 60) +
                      "... (100000 bytes)', allowed: a whole number");
    ExpectRefused({"p", "--SchedulerType=" + huge},
                  "got '" + huge.substr(0, 60) + "... (100000 bytes)'");
}

TEST(ProgramFlags, ShownValueCutsAndEscapes)
{
    EXPECT_EQ(ShownValue("16 junk"), "16 junk");
    EXPECT_EQ(ShownValue(std::string(60, 'a')), std::string(60, 'a'));
    EXPECT_EQ(ShownValue(std::string(61, 'a')), std::string(60, 'a') + "... (61 bytes)");
    EXPECT_EQ(ShownValue("a\nb\tc"), "a\\nb\\x09c"); // one line
    EXPECT_EQ(ShownValue(std::string("a\0b", 3)), "a\\x00b");
}

} // namespace
