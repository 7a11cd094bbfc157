/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * TopologyHelper: a topology by name equals its builder's, a direct-connect
 * topology takes its GPU count from the graph unless one was required, and
 * every bad name is refused naming the parameter; the platform and model
 * lookups.
 */
#include "ns3/fabric-cost.h"
#include "ns3/fabric-error.h"
#include "ns3/topology-finder.h"
#include "ns3/topology-helper.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

/// \return the message \p f throws as FabricConfigError ("" if none)
template <typename F>
std::string
ErrorOf(F f)
{
    try
    {
        f();
    }
    catch (const FabricConfigError& e)
    {
        return e.what();
    }
    return "";
}

ClusterParams
Cluster(uint32_t gpus)
{
    ClusterParams p;
    p.gpus = gpus;
    p.platform = HbDomainPreset::Get("dgx-h100");
    p.radix = 16;
    return p;
}

TEST(TopologyHelper, NamesTheFourTopologies)
{
    EXPECT_EQ(
        TopologyHelper::GetNames(),
        (std::vector<std::string>{"rail-only", "rail-optimized", "fat-tree", "direct-connect"}));
}

TEST(TopologyHelper, ASwitchedTopologyIsItsBuilders)
{
    const ClusterParams p = Cluster(64);
    const TopologyHelper helper(p);
    const std::vector<std::pair<std::string, FabricTopology>> expected = {
        {"rail-only", BuildRailOnly(p)},
        {"rail-optimized", BuildRailOptimized(p)},
        {"fat-tree", BuildFatTree(p)}};
    for (const auto& [name, topo] : expected)
    {
        const FabricTopology built = helper.Create(name);
        EXPECT_EQ(built.GetName(), topo.GetName()) << name;
        EXPECT_EQ(built.GetNGpus(), 64U) << name;
        EXPECT_EQ(built.GetNVertices(), topo.GetNVertices()) << name;
        EXPECT_EQ(built.Cables().size(), topo.Cables().size()) << name;
        EXPECT_EQ(CountEquipment(built, p.radix).switches, CountEquipment(topo, p.radix).switches)
            << name;
    }
    // the three differ: a name is not ignored
    EXPECT_NE(CountEquipment(helper.Create("rail-only"), p.radix).switches,
              CountEquipment(helper.Create("fat-tree"), p.radix).switches);
}

TEST(TopologyHelper, ADirectConnectGraphSetsTheGpuCount)
{
    const DirectConnectGraph g = BuildFromName("K(5)");
    TopologyHelper helper(Cluster(16)); // a default count the graph replaces
    helper.SetGraph("K(5)", 400'000'000'000ULL);
    const FabricTopology topo = helper.Create("direct-connect");
    EXPECT_EQ(topo.GetNGpus(), g.NumNodes());
    // one GPU per node: 4 arcs of 100 Gb/s each leave every GPU
    uint32_t arcs = 0;
    for (const auto& cable : topo.Cables())
    {
        EXPECT_EQ(cable.rateBps, 100'000'000'000ULL);
        arcs += cable.bidirectional ? 2 : 1;
    }
    EXPECT_EQ(arcs, 5U * 4U);
}

TEST(TopologyHelper, ARequiredGpuCountMustBeTheGraphs)
{
    TopologyHelper helper(Cluster(16));
    helper.SetGraph("K(5)", 400'000'000'000ULL);
    helper.SetGpusRequired(true);
    EXPECT_EQ(ErrorOf([&] { helper.Create("direct-connect"); }),
              "invalid gpus: got '16', allowed: the node count of graph=K(5) (5), or no gpus: a "
              "direct-connect topology has one GPU per node");
    helper.SetParameterNames("--topology", "--gpus", "--graph");
    EXPECT_EQ(ErrorOf([&] { helper.Create("direct-connect"); }),
              "invalid --gpus: got '16', allowed: the node count of --graph=K(5) (5), or no "
              "--gpus: a direct-connect topology has one GPU per node");
    helper.SetCluster(Cluster(5));
    EXPECT_EQ(helper.Create("direct-connect").GetNGpus(), 5U);
}

TEST(TopologyHelper, AnUnknownNameIsRefusedByItsParameter)
{
    TopologyHelper helper(Cluster(16));
    EXPECT_EQ(ErrorOf([&] { helper.Create("torus"); }),
              "invalid topology: got 'torus', allowed: rail-only, rail-optimized, fat-tree or "
              "direct-connect");
    helper.SetParameterNames("--topology", "--gpus", "--graph");
    EXPECT_EQ(ErrorOf([&] { helper.Create("Rail-Only"); }),
              "invalid --topology: got 'Rail-Only', allowed: rail-only, rail-optimized, fat-tree "
              "or direct-connect");
    // a direct-connect topology without a graph names the graph's problem
    EXPECT_NE(ErrorOf([&] { helper.Create("direct-connect"); }), "");
}

TEST(TopologyHelper, PlatformsAndModelsByName)
{
    const HbDomainPreset h100 = TopologyHelper::GetPlatform("dgx-h100");
    EXPECT_EQ(h100.gpusPerDomain, HbDomainPreset::Get("dgx-h100").gpusPerDomain);
    EXPECT_EQ(h100.nicRate, HbDomainPreset::Get("dgx-h100").nicRate);
    EXPECT_THROW(TopologyHelper::GetPlatform("dgx-z9000"), FabricConfigError);

    const std::vector<LlmModel> models =
        TopologyHelper::GetModels("--models", "gpt3-175b,opt-175b");
    ASSERT_EQ(models.size(), 2U);
    EXPECT_EQ(models[0].name, "gpt3-175b");
    EXPECT_EQ(models[1].name, "opt-175b");
    EXPECT_EQ(ErrorOf([] { TopologyHelper::GetModels("--models", "gpt3-175b,"); }),
              "invalid --models: got 'gpt3-175b,', allowed: a comma-separated list without empty "
              "items");
    EXPECT_THROW(TopologyHelper::GetModels("--models", "gpt3-175b,gpt-9"), FabricConfigError);
}

} // namespace
