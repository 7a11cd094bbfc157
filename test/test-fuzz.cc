/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Randomized robustness tests with fixed seeds: thousands of malformed
// schedules, edge lists, construction names and parameter sets. Every case
// must end in a FabricConfigError (naming what is wrong) or a valid result:
// never a crash, a hang or another exception type.
#include "ns3/bfb-schedule.h"
#include "ns3/collective-algorithms.h"
#include "ns3/collective-schedule.h"
#include "ns3/direct-connect-graph.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-routing.h"
#include "ns3/schedule-checker.h"
#include "ns3/topology-builders.h"
#include "ns3/topology-finder.h"

#include <gtest/gtest.h>
#include <random>
#include <sstream>

using namespace ns3;

namespace
{

/// Runs f; passes when it returns or throws FabricConfigError with a message.
template <typename F>
void
ErrorOrResult(F&& f, const std::string& input, uint64_t* errors)
{
    try
    {
        f();
    }
    catch (const FabricConfigError& e)
    {
        ++*errors;
        EXPECT_NE(std::string(e.what()).find("invalid"), std::string::npos) << input;
        EXPECT_FALSE(e.Parameter().empty()) << input;
    }
    catch (const std::exception& e)
    {
        ADD_FAILURE() << "unexpected " << typeid(e).name() << ": " << e.what()
                      << "\ninput: " << input;
    }
}

/// Mutate a text: delete, insert or replace a few random characters.
std::string
Mutate(std::string s, std::mt19937_64& rng)
{
    static const std::string alphabet = "{}[]\":,0123456789-.eE abcdefghijklmnopqrstuvwxyz\n#()";
    const int edits = 1 + rng() % 4;
    for (int k = 0; k < edits; ++k)
    {
        const size_t pos = s.empty() ? 0 : rng() % s.size();
        switch (rng() % 3)
        {
        case 0:
            if (!s.empty())
            {
                s.erase(pos, 1 + rng() % 3);
            }
            break;
        case 1:
            s.insert(pos, 1, alphabet[rng() % alphabet.size()]);
            break;
        default:
            if (!s.empty())
            {
                s[pos] = alphabet[rng() % alphabet.size()];
            }
        }
    }
    return s;
}

TEST(Fuzz, MalformedScheduleJsonIsRejectedOrValid)
{
    std::mt19937_64 rng(2026);
    const std::vector<std::string> seeds = {
        RingAllReduce(4, 1000, 0, 1).ToJsonString(),
        DirectAllToAll(3, 900, 0, 1).ToJsonString(),
        DoubleBinaryTreeAllReduce(5, 777, 100, 1).ToJsonString()};
    uint64_t errors = 0;
    uint64_t valid = 0;
    for (int i = 0; i < 3000; ++i)
    {
        const std::string text = Mutate(seeds[i % seeds.size()], rng);
        ErrorOrResult(
            [&] {
                CollectiveSchedule s = CollectiveSchedule::FromJsonString(text);
                // a schedule that loads is structurally sound: the checker
                // gives a verdict (correct or not) without crashing
                ScheduleChecker::Check(s);
                ++valid;
            },
            text,
            &errors);
    }
    EXPECT_GT(errors, 1000u); // most mutations break something
    EXPECT_EQ(errors + valid, 3000u);
}

TEST(Fuzz, MalformedEdgeListsAreRejectedOrValid)
{
    std::mt19937_64 rng(7);
    uint64_t errors = 0;
    for (int i = 0; i < 3000; ++i)
    {
        std::ostringstream text;
        const int lines = rng() % 8;
        for (int l = 0; l < lines; ++l)
        {
            text << static_cast<int64_t>(rng() % 12) - 2 << " " << rng() % 12 << "\n";
        }
        const std::string edges = Mutate(text.str(), rng);
        ErrorOrResult(
            [&] {
                std::istringstream in(edges);
                DirectConnectGraph g = ParseEdgeList(in, "fuzz");
                if (g.NumNodes() >= 2 && g.IsRegular() && g.Degree() >= 1 &&
                    g.IsStronglyConnected())
                {
                    const BfbSchedule s = BfbAllGather(g);
                    EXPECT_EQ(s.Steps(), g.Diameter()) << edges;
                }
            },
            edges,
            &errors);
    }
    EXPECT_GT(errors, 100u);
}

TEST(Fuzz, MalformedConstructionNamesAreRejectedOrValid)
{
    std::mt19937_64 rng(11);
    const std::vector<std::string> seeds = {"L(K(4,4))",
                                            "Deg(BiRing(4),2)",
                                            "Prod(Ring(3),K(3))",
                                            "C(12,{1,5})",
                                            "Torus(3,4)",
                                            "GenKautz(2,7)",
                                            "Hamming(2,3)"};
    uint64_t errors = 0;
    for (int i = 0; i < 3000; ++i)
    {
        const std::string name = Mutate(seeds[i % seeds.size()], rng);
        ErrorOrResult(
            [&] {
                const DirectConnectGraph g = BuildFromName(name);
                EXPECT_LE(g.NumNodes(), 1u << 20) << name;
            },
            name,
            &errors);
    }
    EXPECT_GT(errors, 500u);
}

TEST(Fuzz, RandomClusterParametersBuildOrAreRejected)
{
    std::mt19937_64 rng(5);
    const std::vector<std::string> presets = {"dgx-a100", "dgx-h100", "gb200-nvl72"};
    uint64_t errors = 0;
    uint64_t built = 0;
    for (int i = 0; i < 1500; ++i)
    {
        ClusterParams p;
        p.platform = HbDomainPreset::Get(presets[rng() % presets.size()]);
        p.gpus = rng() % 300;
        p.radix = rng() % 70;
        // half full bisection: an oversubscription needs a multi-switch
        // fat-tree, so most other values are (rightly) rejected
        p.oversubscription = rng() % 2 == 0 ? 1.0 : 0.5 + (rng() % 8) * 0.5;
        p.linkDelayNs = static_cast<int64_t>(rng() % 3000) - 100;
        const std::string input = fmt::format("gpus {} radix {} K {} over {} delay {}",
                                              p.gpus,
                                              p.radix,
                                              p.platform.gpusPerDomain,
                                              p.oversubscription,
                                              p.linkDelayNs);
        ErrorOrResult(
            [&] {
                const int kind = rng() % 3;
                const FabricTopology t = kind == 0   ? BuildRailOnly(p)
                                         : kind == 1 ? BuildRailOptimized(p)
                                                     : BuildFatTree(p);
                EXPECT_EQ(t.GetNGpus(), p.gpus) << input;
                if (t.GetNGpus() <= 64)
                {
                    const RoutingReport r = CheckRouting(t, ComputeRoutingTables(t));
                    EXPECT_EQ(r.unreachable, 0u) << input << ": " << r.firstFailure;
                }
                ++built;
            },
            input,
            &errors);
    }
    EXPECT_GT(errors, 100u);
    EXPECT_GT(built, 10u);
}

TEST(Fuzz, RandomScheduleRequestsBuildCorrectSchedulesOrAreRejected)
{
    std::mt19937_64 rng(3);
    const std::vector<std::string> collectives = {"allreduce",
                                                  "allgather",
                                                  "reducescatter",
                                                  "alltoall",
                                                  "broadcast",
                                                  "reduce",
                                                  "sendrecv",
                                                  "gather"};
    const std::vector<std::string> algorithms =
        {"ring", "tree", "halving-doubling", "hierarchical", "direct", "pxn", "bogus"};
    uint64_t errors = 0;
    uint64_t checked = 0;
    for (int i = 0; i < 2000; ++i)
    {
        ScheduleRequest q;
        q.collective = collectives[rng() % collectives.size()];
        q.algorithm = algorithms[rng() % algorithms.size()];
        q.ranks = rng() % 20;
        q.bytes = rng() % 5000;
        q.chunkBytes = rng() % 3 == 0 ? rng() % 700 : 0;
        q.channels = rng() % 4;
        q.root = rng() % 22;
        q.domainSize = rng() % 6;
        const std::string input = fmt::format("{} {} n {} bytes {} chunk {} ch {} root {} K {}",
                                              q.collective,
                                              q.algorithm,
                                              q.ranks,
                                              q.bytes,
                                              q.chunkBytes,
                                              q.channels,
                                              q.root,
                                              q.domainSize);
        ErrorOrResult(
            [&] {
                const CollectiveSchedule s = MakeSchedule(q);
                const ScheduleCheckResult r = ScheduleChecker::Check(s);
                EXPECT_TRUE(r.Ok()) << input << ": " << r.message;
                ++checked;
            },
            input,
            &errors);
    }
    EXPECT_GT(errors, 100u);
    EXPECT_GT(checked, 100u);
}

} // namespace
