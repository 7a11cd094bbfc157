/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// The module's native ns-3 TestSuite: what test.py runs when gpu-fabric is
// built in-tree (contrib/gpu-fabric). It checks one message across a rail
// switch against its closed-form store-and-forward time.
#include "ns3/gpu-fabric-module.h"
#include "ns3/simulator.h"
#include "ns3/test.h"

using namespace ns3;

namespace
{

class MessageTimeTestCase : public TestCase
{
  public:
    MessageTimeTestCase()
        : TestCase("one message through a switch takes wire bytes over rate plus 2 delays plus one "
                   "packet")
    {
    }

  private:
    void DoRun() override
    {
        FabricTopology topo("pair");
        const uint32_t a = topo.AddGpu(-1, 0);
        const uint32_t b = topo.AddGpu(-1, 0);
        const uint32_t sw = topo.AddSwitch(TopoNodeKind::Switch, "rail", 1);
        const uint64_t rate = 100'000'000'000ULL;
        topo.AddCable(a, sw, rate, 1000, TopoLinkKind::Nic);
        topo.AddCable(b, sw, rate, 1000, TopoLinkKind::Nic);
        FabricHelper helper;
        Ptr<Fabric> fabric = helper.Install(topo);
        Ptr<PacketTransport> t = fabric->GetTransport();
        const uint64_t bytes = 1 << 20;
        Time done;
        t->Send(0,
                1,
                bytes,
                MakeBoundCallback(
                    +[](Time* out) { *out = Simulator::Now(); },
                    &done));
        Simulator::Run();
        const uint64_t payload = t->GetPayloadPerPacket();
        const uint64_t packets = (bytes + payload - 1) / payload;
        const double wire = bytes + packets * FabricHeader::kSerializedSize;
        // store-and-forward: the switch adds the largest packet's serialization
        const double largest = std::min<uint64_t>(bytes, payload) + FabricHeader::kSerializedSize;
        const double expected = (wire + largest) * 8 / rate + 2e-6;
        NS_TEST_EXPECT_MSG_EQ_TOL(done.GetSeconds(), expected, 1e-9, "message time");
        NS_TEST_EXPECT_MSG_EQ(fabric->GetTotalDrops(), 0, "no drops");
        Simulator::Destroy();
    }
};

class GpuFabricTestSuite : public TestSuite
{
  public:
    GpuFabricTestSuite()
        : TestSuite("gpu-fabric", UNIT)
    {
        AddTestCase(new MessageTimeTestCase, TestCase::QUICK);
    }
};

GpuFabricTestSuite g_gpuFabricTestSuite;

} // namespace
