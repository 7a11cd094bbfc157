/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * TransportHelper: "packet" installs the packet-level fabric, "flow" the
 * flow-level backend, on the same topology; another name is refused naming
 * the parameter, when installing; a collective run alone depends on nothing
 * run before it.
 */
#include "rail-only-16.h"

#include "ns3/collective-helper.h"
#include "ns3/fabric-error.h"
#include "ns3/simulator.h"
#include "ns3/topology-builders.h"
#include "ns3/transport-helper.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

using gpu_fabric_test::RailOnly16;

TEST(TransportHelper, NamesTheTwoBackends)
{
    EXPECT_EQ(TransportHelper::GetNames(), (std::vector<std::string>{"packet", "flow"}));
    EXPECT_EQ(TransportHelper().GetBackend(), "packet");
}

TEST(TransportHelper, PacketInstallsTheFabricFlowTheFlowBackend)
{
    const FabricTopology topo = RailOnly16();
    InstalledTransport packet = TransportHelper("packet").Install(topo);
    ASSERT_TRUE(packet.fabric);
    EXPECT_FALSE(packet.flow);
    EXPECT_EQ(packet.transport, packet.fabric->GetTransport());
    packet.Dispose();
    Simulator::Destroy();

    InstalledTransport flow = TransportHelper("flow").Install(topo);
    EXPECT_FALSE(flow.fabric);
    ASSERT_TRUE(flow.flow);
    EXPECT_EQ(flow.transport, Ptr<Transport>(flow.flow));
    flow.Dispose();
    Simulator::Destroy();
}

TEST(TransportHelper, OneProcessSimulatesEveryGpu)
{
    // outside a distributed run every GPU is this process's (process 0),
    // on both backends; a GPU that does not exist is refused by name
    for (const char* backend : {"packet", "flow"})
    {
        SCOPED_TRACE(backend);
        InstalledTransport t = TransportHelper(backend).Install(RailOnly16());
        const uint32_t n = t.transport->GetNRanks();
        ASSERT_EQ(n, 16u);
        for (uint32_t g = 0; g < n; ++g)
        {
            EXPECT_TRUE(t.transport->IsLocalGpu(g));
            EXPECT_EQ(t.transport->GetGpuProcess(g), 0u);
        }
        EXPECT_THROW(t.transport->GetGpuProcess(n), FabricConfigError);
        t.Dispose();
        Simulator::Destroy();
    }
}

TEST(TransportHelper, AnotherNameIsRefusedWhenInstalling)
{
    TransportHelper helper("fluid"); // not checked yet: the name may be set again
    for (const auto& [parameter, message] : std::vector<std::pair<std::string, std::string>>{
             {"backend", "invalid backend: got 'fluid', allowed: packet or flow"},
             {"--backend", "invalid --backend: got 'fluid', allowed: packet or flow"}})
    {
        helper.SetBackend("fluid", parameter);
        try
        {
            helper.Install(RailOnly16());
            ADD_FAILURE() << "installed 'fluid'";
        }
        catch (const FabricConfigError& e)
        {
            EXPECT_EQ(std::string(e.what()), message);
        }
    }
    helper.SetBackend("flow");
    InstalledTransport t = helper.Install(RailOnly16());
    EXPECT_TRUE(t.flow);
    t.Dispose();
    Simulator::Destroy();
}

TEST(TransportHelper, ACollectiveRunAloneDependsOnNothingBefore)
{
    const FabricTopology topo = RailOnly16();
    for (const std::string backend : {"packet", "flow"})
    {
        const TransportHelper helper(backend);
        const CollectiveResult first =
            helper.RunCollectiveAlone(topo, 0, 1, "allreduce", "ring", 1 << 20);
        EXPECT_TRUE(first.complete) << backend;
        EXPECT_EQ(first.ranks, 16U) << backend;
        EXPECT_EQ(first.bytes, uint64_t{1} << 20) << backend;
        EXPECT_GT(first.timeS, 0) << backend;
        // another size in between, then the same again: the same figure
        helper.RunCollectiveAlone(topo, 0, 1, "alltoall", "direct", 4 << 20);
        const CollectiveResult again =
            helper.RunCollectiveAlone(topo, 0, 1, "allreduce", "ring", 1 << 20);
        EXPECT_EQ(again.timeS, first.timeS) << backend;
        EXPECT_EQ(again.bytesSent, first.bytesSent) << backend;
        // the simulation was destroyed: the clock starts again
        EXPECT_EQ(Simulator::Now(), Seconds(0)) << backend;
    }
}

} // namespace
