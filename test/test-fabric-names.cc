/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// A fabric's ns-3 Names (FabricHelper::Install): which node each name
// resolves to, for every kind of topology; Config paths through the names
// (devices, the transport, the fault injector, collectives); pcap file names;
// and the rule for several fabrics in one process (a prefix per fabric of a
// simulation, names released at Simulator::Destroy).
#include "rail-only-16.h"

#include "ns3/collective-helper.h"
#include "ns3/config.h"
#include "ns3/direct-connect-graph.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-helper.h"
#include "ns3/fault-helper.h"
#include "ns3/hb-domain-preset.h"
#include "ns3/names.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/topology-builders.h"

#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

/// Each test starts and ends with a fresh simulation (and so with no names).
class FabricNamesTest : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        Simulator::Destroy();
    }

    void TearDown() override
    {
        Simulator::Destroy();
    }
};

/// 16 GPUs of DGX H100 (K = 8, 4 NVSwitch planes) on a rail-only network.
FabricTopology
RailOnly16()
{
    return gpu_fabric_test::RailOnly16(64);
}

/// 32 GPUs of DGX H100 on a two-tier fat-tree of radix 8 (8 leaves, 4 spines).
FabricTopology
FatTree32()
{
    ClusterParams p;
    p.gpus = 32;
    p.platform = HbDomainPreset::Get("dgx-h100");
    p.radix = 8;
    return BuildFatTree(p);
}

/// The vertices of a switch role, in vertex order.
std::vector<uint32_t>
Role(const FabricTopology& topo, const std::string& role)
{
    std::vector<uint32_t> out;
    for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
    {
        if (topo.Node(v).kind == TopoNodeKind::Switch && topo.Node(v).role == role)
        {
            out.push_back(v);
        }
    }
    return out;
}

/// Every vertex's name resolves to its node, and no two vertices share one.
void
ExpectEveryNodeNamed(Ptr<Fabric> fabric)
{
    std::set<std::string> names;
    for (uint32_t v = 0; v < fabric->GetTopology().GetNVertices(); ++v)
    {
        const std::string name = fabric->GetNodeName(v);
        ASSERT_FALSE(name.empty()) << "vertex " << v;
        EXPECT_EQ(Names::Find<Node>(name), fabric->GetNodeOfVertex(v)) << name;
        EXPECT_TRUE(names.insert(name).second) << name;
    }
}

TEST_F(FabricNamesTest, RailOnlyNodesAreNamedByKind)
{
    const FabricTopology topo = RailOnly16();
    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    EXPECT_EQ(fabric->GetNamePrefix(), "");
    ExpectEveryNodeNamed(fabric);
    for (uint32_t r = 0; r < 16; ++r)
    {
        // the rank -> node lookup and the name agree
        const std::string name = "gpu-" + std::to_string(r);
        EXPECT_EQ(Names::Find<FabricGpu>(name), fabric->GetGpu(r)) << name;
        EXPECT_EQ(fabric->GetNodeName(topo.GpuVertex(r)), name);
        EXPECT_EQ(fabric->GetGpu(r)->GetRank(), r);
    }
    uint32_t nvswitches = 0;
    for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
    {
        const TopoNode& n = topo.Node(v);
        if (n.kind == TopoNodeKind::NvSwitch)
        {
            ++nvswitches;
            const std::string name = fmt::format("nvswitch-{}-{}", n.domain, n.local);
            EXPECT_EQ(Names::Find<Node>(name), fabric->GetNodeOfVertex(v)) << name;
        }
    }
    EXPECT_EQ(nvswitches, 2u * 4u); // 2 domains, 4 planes each
    EXPECT_TRUE(Names::Find<Node>("nvswitch-1-3"));
    EXPECT_FALSE(Names::Find<Node>("nvswitch-2-0"));
    const std::vector<uint32_t> rails = Role(topo, "rail");
    ASSERT_EQ(rails.size(), 8u); // one switch per rail at this size
    for (uint32_t i = 0; i < rails.size(); ++i)
    {
        const std::string name = "rail-" + std::to_string(i);
        EXPECT_EQ(Names::Find<Node>(name), fabric->GetNodeOfVertex(rails[i])) << name;
        // rail i's switch holds the GPUs of local index i
        const auto& g = topo.GetGraph();
        for (auto [it, end] = boost::out_edges(rails[i], g); it != end; ++it)
        {
            EXPECT_EQ(topo.Node(boost::target(*it, g)).local, i) << name;
        }
    }
    // the fabric and its transport
    EXPECT_EQ(Names::Find<Fabric>("fabric"), fabric);
    EXPECT_EQ(Names::Find<PacketTransport>("transport"), fabric->GetTransport());
}

TEST_F(FabricNamesTest, FatTreeSwitchesAreNamedByRoleInVertexOrder)
{
    const FabricTopology topo = FatTree32();
    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    ExpectEveryNodeNamed(fabric);
    const std::vector<uint32_t> leaves = Role(topo, "leaf");
    const std::vector<uint32_t> spines = Role(topo, "spine");
    ASSERT_EQ(leaves.size(), 8u);
    ASSERT_EQ(spines.size(), 4u);
    for (uint32_t i = 0; i < leaves.size(); ++i)
    {
        EXPECT_EQ(fabric->GetNodeName(leaves[i]), "leaf-" + std::to_string(i));
    }
    for (uint32_t i = 0; i < spines.size(); ++i)
    {
        EXPECT_EQ(fabric->GetNodeName(spines[i]), "spine-" + std::to_string(i));
        EXPECT_EQ(Names::Find<Node>("spine-" + std::to_string(i)),
                  fabric->GetNodeOfVertex(spines[i]));
    }
    EXPECT_FALSE(Names::Find<Node>("spine-4"));
}

TEST_F(FabricNamesTest, DirectConnectHasGpusAndNvSwitchesOnly)
{
    ClusterParams p;
    p.platform = HbDomainPreset::Get("dgx-h100");
    const FabricTopology topo = BuildDirectConnect(MakeRing(4), 400'000'000'000ULL, p);
    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    ExpectEveryNodeNamed(fabric);
    for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
    {
        const std::string name = fabric->GetNodeName(v);
        EXPECT_TRUE(name.rfind("gpu-", 0) == 0 || name.rfind("nvswitch-", 0) == 0) << name;
    }
    EXPECT_EQ(Names::Find<FabricGpu>("gpu-31"), fabric->GetGpu(31));
    EXPECT_TRUE(Names::Find<Node>("nvswitch-3-3"));
}

TEST_F(FabricNamesTest, HandBuiltRolesMakeValidUniqueNames)
{
    // roles are free text: a '/' would split a Config path, an empty role
    // names nothing, and a role may repeat another kind's name
    FabricTopology topo("odd");
    // a switch named like rank 0, before it: the GPU keeps "gpu-0"
    const uint32_t gpuRole = topo.AddSwitch(TopoNodeKind::Switch, "gpu", 2);
    const uint32_t g0 = topo.AddGpu(-1, 0);
    const uint32_t g1 = topo.AddGpu(-1, 0);
    const uint32_t slash = topo.AddSwitch(TopoNodeKind::Switch, "top/of/rack", 1);
    const uint32_t empty = topo.AddSwitch(TopoNodeKind::Switch, "", 1);
    const uint32_t loose = topo.AddSwitch(TopoNodeKind::NvSwitch, "nvswitch", 0);
    topo.AddCable(g0, slash, 1'000'000'000, 100, TopoLinkKind::Nic);
    topo.AddCable(g1, empty, 1'000'000'000, 100, TopoLinkKind::Nic);
    topo.AddCable(slash, gpuRole, 1'000'000'000, 100, TopoLinkKind::SwitchToSwitch);
    topo.AddCable(empty, gpuRole, 1'000'000'000, 100, TopoLinkKind::SwitchToSwitch);
    topo.AddCable(g0, loose, 1'000'000'000, 100, TopoLinkKind::NvLink);
    topo.AddCable(g1, loose, 1'000'000'000, 100, TopoLinkKind::NvLink);
    Ptr<Fabric> fabric = FabricHelper().Install(topo);
    ExpectEveryNodeNamed(fabric);
    EXPECT_EQ(fabric->GetNodeName(slash), "top-of-rack-0");
    EXPECT_EQ(fabric->GetNodeName(empty), "switch-0");
    EXPECT_EQ(fabric->GetNodeName(gpuRole), fmt::format("gpu-0-v{}", gpuRole));
    EXPECT_EQ(fabric->GetNodeName(loose), "nvswitch-0"); // no domain
    EXPECT_EQ(fabric->GetNodeName(g0), "gpu-0");
    EXPECT_EQ(Names::Find<FabricGpu>("gpu-1"), fabric->GetGpu(1));
}

TEST_F(FabricNamesTest, ConfigConnectThroughANodeNameFires)
{
    Ptr<Fabric> fabric = FabricHelper().Install(RailOnly16());
    std::map<std::string, uint32_t> sentBy; // context -> packets
    Config::Connect("/Names/gpu-3/DeviceList/*/$ns3::FabricNetDevice/MacTx",
                    MakeCallback(+[](std::map<std::string, uint32_t>* seen,
                                     std::string context,
                                     Ptr<const Packet>) {
                        ++(*seen)[context];
                    }).Bind(&sentBy));
    // the same node by number: both paths reach the same devices
    uint32_t byNumber = 0;
    Config::ConnectWithoutContext(
        fmt::format("/NodeList/{}/DeviceList/*/$ns3::FabricNetDevice/MacTx",
                    fabric->GetGpu(3)->GetId()),
        MakeCallback(+[](uint32_t* n, Ptr<const Packet>) { ++*n; }).Bind(&byNumber));
    fabric->GetTransport()->Send(3, 11, 64 << 10, Transport::DoneCallback()); // rail 3, rail
    fabric->GetTransport()->Send(5, 13, 64 << 10, Transport::DoneCallback()); // not via gpu-3
    Simulator::Run();
    uint32_t total = 0;
    for (const auto& [context, packets] : sentBy)
    {
        EXPECT_EQ(context.rfind("/Names/gpu-3/DeviceList/", 0), 0u) << context;
        total += packets;
    }
    EXPECT_GE(total, 16u); // 64 KiB in 4 KiB packets, at least
    EXPECT_EQ(total, byNumber);
}

TEST_F(FabricNamesTest, TransportAndFaultTraceSourcesByConfigPath)
{
    Ptr<Fabric> fabric = FabricHelper().Install(RailOnly16());

    struct Done
    {
        uint32_t src;
        uint32_t dst;
        uint64_t bytes;
    };

    std::vector<Done> done;
    Config::ConnectWithoutContext(
        "/Names/transport/MessageComplete",
        MakeCallback(+[](std::vector<Done>* d, uint32_t s, uint32_t t, uint64_t b, Time) {
            d->push_back({s, t, b});
        }).Bind(&done));
    std::vector<std::string> failed;
    Config::Connect("/Names/transport/MessageFailed",
                    MakeCallback(+[](std::vector<std::string>* f,
                                     std::string context,
                                     const TransportMessageReport& r) {
                        f->push_back(context + " " + r.ToString());
                    }).Bind(&failed));
    FaultHelper faultHelper(fabric); // makes the injector (aggregated to the fabric)
    std::vector<std::string> faults;
    Config::ConnectWithoutContext("/Names/fabric/$ns3::FaultInjector/Fault",
                                  MakeCallback(+[](std::vector<std::string>* f, std::string what) {
                                      f->push_back(what);
                                  }).Bind(&faults));
    faultHelper.GpuDown(9, Seconds(0));
    fabric->GetTransport()->Send(1, 14, 10'000, Transport::DoneCallback());
    Simulator::Schedule(MicroSeconds(1), [fabric] {
        fabric->GetTransport()->Send(2, 9, 10'000, Transport::DoneCallback());
    });
    Simulator::Run();
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].src, 1u);
    EXPECT_EQ(done[0].dst, 14u);
    EXPECT_EQ(done[0].bytes, 10'000u);
    ASSERT_EQ(failed.size(), 1u);
    EXPECT_EQ(failed[0].rfind("/Names/transport/MessageFailed ", 0), 0u) << failed[0];
    ASSERT_EQ(faults.size(), 1u);
    EXPECT_EQ(faults[0], "GPU 9 down");
}

TEST_F(FabricNamesTest, CollectiveTraceSourcesByConfigPath)
{
    Ptr<Fabric> fabric = FabricHelper().Install(RailOnly16());
    Ptr<CollectiveRun> run = CollectiveHelper(fabric).Install(CollectiveHelper::AllRanks(16),
                                                              "allreduce",
                                                              "ring",
                                                              1 << 20,
                                                              Seconds(0));
    uint32_t complete = 0;
    Config::ConnectWithoutContext(
        "/Names/gpu-0/ApplicationList/*/$ns3::CollectiveApplication/Run/Complete",
        MakeCallback(+[](uint32_t* n, Ptr<const CollectiveRun>) { ++*n; }).Bind(&complete));
    std::vector<uint32_t> ranks;
    Config::ConnectWithoutContext(
        "/Names/gpu-0/ApplicationList/*/$ns3::CollectiveApplication/Run/RankComplete",
        MakeCallback(+[](std::vector<uint32_t>* r, uint32_t rank, Time) {
            r->push_back(rank);
        }).Bind(&ranks));
    // through every GPU's application: one connection per GPU, as documented
    uint32_t everyGpu = 0;
    Config::ConnectWithoutContext(
        "/NodeList/*/ApplicationList/*/$ns3::CollectiveApplication/Run/Complete",
        MakeCallback(+[](uint32_t* n, Ptr<const CollectiveRun>) { ++*n; }).Bind(&everyGpu));
    Simulator::Run();
    ASSERT_TRUE(run->IsComplete());
    EXPECT_EQ(complete, 1u);
    std::sort(ranks.begin(), ranks.end());
    EXPECT_EQ(ranks, CollectiveHelper::AllRanks(16));
    EXPECT_EQ(everyGpu, 16u);
}

TEST_F(FabricNamesTest, TwoFabricsInOneSimulationTakeTwoPrefixes)
{
    Ptr<Fabric> first = FabricHelper().Install(RailOnly16());
    Ptr<Fabric> second = FabricHelper().Install(RailOnly16());
    FabricHelper racked;
    racked.SetNamePrefix("rack-");
    Ptr<Fabric> third = racked.Install(RailOnly16());
    EXPECT_EQ(first->GetNamePrefix(), "");
    EXPECT_EQ(second->GetNamePrefix(), "fabric1-");
    EXPECT_EQ(third->GetNamePrefix(), "rack-");
    for (uint32_t r : {0u, 7u, 15u})
    {
        EXPECT_EQ(Names::Find<Node>(fmt::format("gpu-{}", r)), first->GetGpu(r));
        EXPECT_EQ(Names::Find<Node>(fmt::format("fabric1-gpu-{}", r)), second->GetGpu(r));
        EXPECT_EQ(Names::Find<Node>(fmt::format("rack-gpu-{}", r)), third->GetGpu(r));
    }
    EXPECT_EQ(second->GetNodeName(second->GetTopology().GpuVertex(2)), "fabric1-gpu-2");
    EXPECT_EQ(Names::Find<PacketTransport>("fabric1-transport"), second->GetTransport());
    EXPECT_EQ(Names::Find<Fabric>("rack-fabric"), third);
    // a fourth without a prefix takes the next free one
    EXPECT_EQ(FabricHelper().Install(RailOnly16())->GetNamePrefix(), "fabric2-");

    // each fabric's transport by its own name
    uint32_t secondsMessages = 0;
    Config::ConnectWithoutContext(
        "/Names/fabric1-transport/MessageComplete",
        MakeCallback(+[](uint32_t* n, uint32_t, uint32_t, uint64_t, Time) {
            ++*n;
        }).Bind(&secondsMessages));
    first->GetTransport()->Send(0, 8, 4096, Transport::DoneCallback());
    second->GetTransport()->Send(0, 8, 4096, Transport::DoneCallback());
    second->GetTransport()->Send(1, 9, 4096, Transport::DoneCallback());
    Simulator::Run();
    EXPECT_EQ(secondsMessages, 2u);

    // a prefix asked for is that prefix or an error naming it
    try
    {
        racked.Install(RailOnly16());
        FAIL() << "a prefix taken twice accepted";
    }
    catch (const FabricConfigError& e)
    {
        const std::string what = e.what();
        EXPECT_EQ(e.Parameter(), "name prefix");
        EXPECT_NE(what.find("'rack-'"), std::string::npos) << what;
        EXPECT_NE(what.find("Simulator::Destroy"), std::string::npos) << what;
    }
    FabricHelper plain;
    plain.SetNamePrefix("");
    EXPECT_THROW(plain.Install(RailOnly16()), FabricConfigError);
    try
    {
        FabricHelper().SetNamePrefix("rack/2-");
        FAIL() << "a prefix with '/' accepted";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_EQ(e.Parameter(), "name prefix");
        EXPECT_NE(std::string(e.what()).find("rack/2-"), std::string::npos) << e.what();
    }
    // unnamed: nothing taken, nothing named
    FabricHelper unnamed;
    unnamed.DisableNames();
    Ptr<Fabric> quiet = unnamed.Install(RailOnly16());
    EXPECT_EQ(quiet->GetNamePrefix(), "");
    EXPECT_EQ(quiet->GetNodeName(0), "");
    EXPECT_EQ(Names::FindName(quiet->GetTransport()), "");
}

TEST_F(FabricNamesTest, NamesAreReleasedAtSimulatorDestroy)
{
    Ptr<Fabric> before = FabricHelper().Install(RailOnly16());
    Ptr<Node> mine = CreateObject<Node>();
    Names::Add("my-node", mine);
    ASSERT_EQ(Names::Find<Node>("gpu-0"), before->GetGpu(0));
    Simulator::Destroy();
    EXPECT_FALSE(Names::Find<Node>("gpu-0"));
    EXPECT_FALSE(Names::Find<Node>("my-node")); // Names::Clear: one's own names too
    EXPECT_EQ(before->GetNodeName(0), "");
    // the next simulation's fabric has the plain names again
    Ptr<Fabric> after = FabricHelper().Install(RailOnly16());
    EXPECT_EQ(after->GetNamePrefix(), "");
    EXPECT_EQ(Names::Find<Node>("gpu-0"), after->GetGpu(0));
    EXPECT_NE(after->GetGpu(0), before->GetGpu(0));
}

TEST_F(FabricNamesTest, PcapFilesAreNamedAfterTheNodes)
{
    const std::string prefix = ::testing::TempDir() + "gpu-fabric-names";
    FabricHelper helper;
    Ptr<Fabric> first = helper.Install(RailOnly16());
    Ptr<Fabric> second = helper.Install(RailOnly16());
    helper.EnablePcap(prefix, first->GetGpu(2)->GetDevice(0));
    helper.EnablePcap(prefix, second->GetGpu(2)->GetDevice(0));
    first = nullptr;
    second = nullptr;
    Simulator::Destroy(); // closes the files
    for (const std::string& node : {"gpu-2", "fabric1-gpu-2"})
    {
        const std::string file = prefix + "-" + node + "-0.pcap";
        EXPECT_TRUE(std::ifstream(file).good()) << file;
    }
}

} // namespace
