/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// MSCCL algorithm XML: schedules exported and imported again are the same
// operations and simulate to the same time; a hand-written ring allgather
// simulates to its alpha-beta formula; malformed files are refused naming
// the element, the attribute, the value and what is allowed; a file that
// does not implement its collective names the first wrong rank and chunk.
#include "program-run.h"

#include "ns3/bfb-collective.h"
#include "ns3/collective-algorithms.h"
#include "ns3/collective-helper.h"
#include "ns3/collective-metrics.h"
#include "ns3/fabric-error.h"
#include "ns3/msccl-xml.h"
#include "ns3/schedule-checker.h"
#include "ns3/simulator.h"
#include "ns3/topology-builders.h"
#include "ns3/topology-finder.h"

#include <algorithm>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <tuple>

using namespace ns3;

namespace
{

constexpr double kPayloadShare = 4096.0 / 4122.0;       // goodput of a full packet
constexpr uint64_t kNodeBandwidth = 100'000'000'000ULL; // bit/s per node
constexpr int64_t kDelayNs = 100;

/// Simulates \p s alone on the packet-level direct-connect fabric of \p graph.
double
Simulate(const CollectiveSchedule& s, const std::string& graph)
{
    ClusterParams p;
    p.platform = HbDomainPreset::Custom(1, DataRate(kNodeBandwidth), DataRate(kNodeBandwidth));
    p.linkDelayNs = kDelayNs;
    Ptr<Fabric> fabric =
        FabricHelper().Install(BuildDirectConnect(BuildFromName(graph), kNodeBandwidth, p));
    Ptr<CollectiveRun> run = CollectiveHelper(fabric).Install(s, Seconds(0));
    Simulator::Run();
    const CollectiveResult r = run->GetResult();
    Simulator::Destroy();
    EXPECT_TRUE(r.complete);
    return r.timeS;
}

using OpTuple = std::tuple<int, uint32_t, uint32_t, uint32_t, int, uint16_t, uint64_t>;

/// Each rank's operations as sorted tuples, chunks renamed by \p offset.
std::vector<std::vector<OpTuple>>
Operations(const CollectiveSchedule& s, const std::vector<uint32_t>& offset)
{
    std::vector<std::vector<OpTuple>> out(s.NumRanks());
    for (uint32_t r = 0; r < s.NumRanks(); ++r)
    {
        for (const CollectiveOp& op : s.Ops(r))
        {
            out[r].emplace_back(static_cast<int>(op.kind),
                                op.peer,
                                offset[op.chunk],
                                op.count,
                                static_cast<int>(op.mode),
                                op.channel,
                                op.bytes);
        }
        std::sort(out[r].begin(), out[r].end());
    }
    return out;
}

/// MSCCL's layout: allgather / reduce-scatter chunks ordered by their rank, stably.
std::vector<uint32_t>
MscclOffsets(const CollectiveSchedule& s)
{
    std::vector<uint32_t> order(s.NumChunks());
    for (uint32_t c = 0; c < s.NumChunks(); ++c)
    {
        order[c] = c;
    }
    auto owner = [&](uint32_t c) {
        const ChunkInfo& k = s.Chunk(c);
        return s.Type() == CollectiveType::AllGather       ? k.src
               : s.Type() == CollectiveType::ReduceScatter ? k.dst
                                                           : 0;
    };
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return owner(a) < owner(b);
    });
    std::vector<uint32_t> offset(s.NumChunks());
    for (uint32_t i = 0; i < order.size(); ++i)
    {
        offset[order[i]] = i;
    }
    return offset;
}

std::vector<uint32_t>
Identity(uint32_t n)
{
    std::vector<uint32_t> v(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        v[i] = i;
    }
    return v;
}

void
ExpectRoundTrip(const CollectiveSchedule& s, const std::string& graph)
{
    ASSERT_TRUE(ScheduleChecker::Check(s).Ok());
    const std::string xml = MscclXml::Export(s);
    const CollectiveSchedule back = MscclXml::Import(xml, s.TotalBytes());
    EXPECT_EQ(back.Type(), s.Type());
    ASSERT_EQ(back.NumRanks(), s.NumRanks());
    ASSERT_EQ(back.NumChunks(), s.NumChunks());
    EXPECT_EQ(back.TotalOps(), s.TotalOps());
    EXPECT_EQ(Operations(back, Identity(back.NumChunks())), Operations(s, MscclOffsets(s)));
    // exporting the import again gives the same text
    EXPECT_EQ(MscclXml::Export(back, {s.Algorithm(), "Simple"}), xml);
    const double before = Simulate(s, graph);
    const double after = Simulate(back, graph);
    fmt::print("{} on {}: {:.9e} s, imported {:.9e} s\n", s.Algorithm(), graph, before, after);
    EXPECT_DOUBLE_EQ(after, before);
}

TEST(MscclRoundTrip, RingAllGather)
{
    ExpectRoundTrip(RingAllGather(8, 8 << 20, 256 << 10), "BiRing(8)");
}

TEST(MscclRoundTrip, RingAllGatherOnTwoChannelsIsLaidOutByRank)
{
    // chunk index (channel * n + piece) * P + sub: MSCCL wants rank r's at r*k ..
    const CollectiveSchedule s = RingAllGather(4, 4 << 20, 512 << 10, 2);
    ASSERT_NE(MscclOffsets(s), Identity(s.NumChunks()));
    ExpectRoundTrip(s, "BiRing(4)");
}

TEST(MscclRoundTrip, BfbAllGather)
{
    const BfbSchedule b = BfbAllGather(BuildFromName("Hypercube(3)"));
    // 8 hosts x 3 chunks per shard: 6 MiB cuts into equal chunks
    ExpectRoundTrip(BfbToCollectiveSchedule(b, 6 << 20, 3), "Hypercube(3)");
}

TEST(MscclRoundTrip, BfbAllReduce)
{
    const BfbSchedule b = BfbAllReduce(BuildFromName("BiRing(4)"));
    ExpectRoundTrip(BfbToCollectiveSchedule(b, 4 << 20, 2), "BiRing(4)");
}

TEST(MscclRoundTrip, DoubleBinaryTreeAllReduce)
{
    ExpectRoundTrip(DoubleBinaryTreeAllReduce(8, 8 << 20, 1 << 20), "K(8)");
}

TEST(MscclExport, ThreadBlocksHaveOnePeerPerDirectionAndChannel)
{
    const std::string xml = MscclXml::Export(RingAllReduce(4, 1 << 20, 0, 2));
    // per GPU: send to r+1 and receive from r-1 on channels 0 and 1
    EXPECT_NE(xml.find("<algo name=\"ring\" proto=\"Simple\" nchannels=\"2\" "
                       "nchunksperloop=\"8\" ngpus=\"4\" coll=\"allreduce\" inplace=\"1\">"),
              std::string::npos)
        << xml;
    EXPECT_NE(xml.find("<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">"), std::string::npos);
    EXPECT_NE(xml.find("<tb id=\"3\" send=\"-1\" recv=\"3\" chan=\"1\">"), std::string::npos);
    // 4 GPUs x 4 thread blocks
    size_t tbs = 0;
    for (size_t at = xml.find("<tb "); at != std::string::npos; at = xml.find("<tb ", at + 1))
    {
        ++tbs;
    }
    EXPECT_EQ(tbs, 16u);
    try
    {
        MscclXml::Export(MakeSchedule({"alltoall", "direct", 4, 1024, 0, 1, 0, 0, {}}));
        FAIL() << "alltoall exported";
    }
    catch (const FabricConfigError& e)
    {
        EXPECT_EQ(e.Parameter(), "collective");
    }
}

// Ring allgather on 4 GPUs as MSCCL writes it: one thread block per GPU,
// sending to the next and receiving from the previous; each GPU sends its
// own chunk, forwards two (rcs) and keeps the last.
const char* const kRing4 =
    R"(<algo name="ring4" proto="Simple" nchannels="1" nchunksperloop="4" ngpus="4" coll="allgather" inplace="1">
  <gpu id="0" i_chunks="1" o_chunks="4" s_chunks="0">
    <tb id="0" send="1" recv="3" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rcs" srcbuf="o" srcoff="3" dstbuf="o" dstoff="3" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="rcs" srcbuf="o" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="3" type="r" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="1" o_chunks="4" s_chunks="0">
    <tb id="0" send="2" recv="0" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rcs" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="rcs" srcbuf="o" srcoff="3" dstbuf="o" dstoff="3" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="3" type="r" srcbuf="o" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="2" i_chunks="1" o_chunks="4" s_chunks="0">
    <tb id="0" send="3" recv="1" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rcs" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="rcs" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="3" type="r" srcbuf="o" srcoff="3" dstbuf="o" dstoff="3" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="3" i_chunks="1" o_chunks="4" s_chunks="0">
    <tb id="0" send="0" recv="2" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="3" dstbuf="o" dstoff="3" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rcs" srcbuf="o" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="rcs" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="3" type="r" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
)";

TEST(MscclImport, HandWrittenRingAllGatherSimulatesToItsFormula)
{
    const uint64_t bytes = 4 << 20;
    const CollectiveSchedule s = MscclXml::Import(kRing4, bytes);
    EXPECT_EQ(s.Type(), CollectiveType::AllGather);
    EXPECT_EQ(s.Algorithm(), "msccl:ring4");
    ASSERT_EQ(s.NumChunks(), 4u);
    for (uint32_t r = 0; r < 4; ++r)
    {
        EXPECT_EQ(s.Chunk(r).src, r);
        EXPECT_EQ(s.Chunk(r).bytes, bytes / 4);
        EXPECT_EQ(s.BytesSent(r), 3 * bytes / 4); // n-1 pieces
        EXPECT_EQ(s.NumOps(r), 6u);               // 3 sends, 3 receives
    }
    // each ring arc is one of a node's two links: B/2, at the packet goodput
    AlphaBetaParams p;
    p.alpha = kDelayNs * 1e-9;
    p.linkRateBps = kNodeBandwidth / 2.0 * kPayloadShare;
    const double formula = RingAllGatherTime(4, bytes, p); // 3 (alpha + S/4 / B)
    const double simulated = Simulate(s, "BiRing(4)");
    fmt::print("hand-written ring allgather: simulated {:.9e} s, formula {:.9e} s\n",
               simulated,
               formula);
    EXPECT_NEAR(simulated, formula, 0.01 * formula);
    // and exactly what the generator's ring simulates to
    EXPECT_DOUBLE_EQ(simulated, Simulate(RingAllGather(4, bytes), "BiRing(4)"));
}

/// \return the error importing \p text refuses with
FabricConfigError
Refusal(const std::string& text)
{
    try
    {
        MscclXml::Import(text, 1 << 20, "bad.xml");
    }
    catch (const FabricConfigError& e)
    {
        return e;
    }
    ADD_FAILURE() << "accepted:\n" << text;
    return FabricConfigError("", "", "");
}

/// kRing4 with the first \p from replaced by \p to
std::string
Edit(const std::string& from, const std::string& to)
{
    std::string s = kRing4;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
}

TEST(MscclImport, MalformedFilesAreRefusedNamingTheElement)
{
    // a missing attribute: line 4 is gpu 0's first step
    FabricConfigError e = Refusal(Edit(" cnt=\"1\" depid", " depid"));
    EXPECT_EQ(e.Parameter(), "bad.xml:4: <step s=\"0\"> of gpu 0 tb 0 attribute cnt");
    EXPECT_NE(std::string(e.what()).find("got '(missing)'"), std::string::npos) << e.what();

    // a dependency on a step that does not exist
    e = Refusal(Edit("cnt=\"1\" depid=\"-1\" deps=\"-1\"", "cnt=\"1\" depid=\"0\" deps=\"9\""));
    EXPECT_EQ(e.Parameter(), "bad.xml:4: <step s=\"0\"> of gpu 0 tb 0 attribute deps");
    EXPECT_NE(std::string(e.what()).find("got '9', allowed: an integer in [0, 3]"),
              std::string::npos)
        << e.what();
    // ... and on a thread block that does not exist
    e = Refusal(Edit("cnt=\"1\" depid=\"-1\" deps=\"-1\"", "cnt=\"1\" depid=\"4\" deps=\"0\""));
    EXPECT_EQ(e.Parameter(), "bad.xml:4: <step s=\"0\"> of gpu 0 tb 0 attribute depid");

    // a cycle: gpu 0's first step waits for its last (which waits for it)
    e = Refusal(Edit("cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>",
                     "cnt=\"1\" depid=\"0\" deps=\"3\" hasdep=\"0\"/>"));
    EXPECT_NE(std::string(e.what()).find("hasdep"), std::string::npos) << e.what();
    std::string cyclic = Edit("cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>",
                              "cnt=\"1\" depid=\"0\" deps=\"3\" hasdep=\"0\"/>");
    // gpu 0's step 3 is the fourth step element: mark it waited for
    const size_t s3 = cyclic.find("<step s=\"3\" type=\"r\" srcbuf=\"o\" srcoff=\"1\"");
    cyclic.replace(cyclic.find("hasdep=\"0\"", s3), 10, "hasdep=\"1\"");
    e = Refusal(cyclic);
    EXPECT_EQ(e.Parameter(), "bad.xml:4: <step s=\"0\"> of gpu 0 tb 0 attribute depid");
    EXPECT_NE(std::string(e.what()).find("without a cycle"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gpu 0 tb 0 step 3 -> gpu 0 tb 0 step 0"),
              std::string::npos)
        << e.what();

    // not MSCCL: another root element, and text that is not XML
    e = Refusal("<schedule ranks=\"4\"/>");
    EXPECT_EQ(e.Parameter(), "bad.xml:1: root element");
    EXPECT_NE(std::string(e.what()).find("got '<schedule>'"), std::string::npos) << e.what();
    e = Refusal("<algo name=\"x\">\n<gpu id=\"0\">\n</algo>");
    EXPECT_EQ(e.Parameter(), "bad.xml:3");

    // values outside what is allowed
    e = Refusal(Edit("type=\"rcs\"", "type=\"cpy\""));
    EXPECT_EQ(e.Parameter(), "bad.xml:5: <step s=\"1\"> of gpu 0 tb 0 attribute type");
    e = Refusal(Edit("ngpus=\"4\"", "ngpus=\"5\""));
    EXPECT_EQ(e.Parameter(), "bad.xml:1: <algo> attribute ngpus");
    e = Refusal(Edit("coll=\"allgather\"", "coll=\"alltoall\""));
    EXPECT_EQ(e.Parameter(), "bad.xml:1: <algo> attribute coll");
    e = Refusal(Edit("srcbuf=\"o\" srcoff=\"0\"", "srcbuf=\"s\" srcoff=\"0\""));
    EXPECT_EQ(e.Parameter(), "bad.xml:4: <step s=\"0\"> of gpu 0 tb 0 attribute srcbuf");
    e = Refusal(Edit("<tb id=\"0\" send=\"1\"", "<tb id=\"0\" send=\"0\""));
    EXPECT_EQ(e.Parameter(), "bad.xml:3: <tb id=\"0\"> of gpu 0 attribute send");
    e = Refusal(Edit("<step s=\"1\"", "<stp s=\"1\""));
    EXPECT_NE(e.Parameter().find("element <stp>"), std::string::npos) << e.Parameter();
    // a receive at an offset other than the one its send sends
    e = Refusal(Edit("type=\"r\" srcbuf=\"o\" srcoff=\"1\" dstbuf=\"o\" dstoff=\"1\"",
                     "type=\"r\" srcbuf=\"o\" srcoff=\"2\" dstbuf=\"o\" dstoff=\"2\""));
    EXPECT_EQ(e.Parameter(), "bad.xml:7: <step s=\"3\"> of gpu 0 tb 0 attribute dstoff");
}

TEST(MscclImport, AWrongAlgorithmNamesTheFirstWrongRankAndChunk)
{
    // gpu 0 reduces the last chunk it receives into a chunk it holds nothing of
    const FabricConfigError e = Refusal(
        Edit("type=\"r\" srcbuf=\"o\" srcoff=\"1\"", "type=\"rrc\" srcbuf=\"o\" srcoff=\"1\""));
    EXPECT_EQ(e.Parameter(), "bad.xml");
    const std::string what = e.what();
    EXPECT_NE(what.find("got 'reduce-into-empty'"), std::string::npos) << what;
    EXPECT_NE(what.find("first wrong rank 0 (<gpu id=\"0\">), chunk 1"), std::string::npos) << what;
}

TEST(MscclPrograms, CollectiveBenchRunsWhatItWrites)
{
    const std::string xml = ::testing::TempDir() + "msccl-ring.xml";
    const auto [rc, out] = gpu_fabric_test::RunCapture(
        "collective-bench --topology=direct-connect '--graph=BiRing(4)' --collective=allgather "
        "--min-bytes=1048576 --max-bytes=1048576 --msccl=" +
            xml,
        "msccl-bench-write");
    ASSERT_EQ(rc, 0) << out;
    const auto [rc2, out2] = gpu_fabric_test::RunCapture(
        "collective-bench --topology=direct-connect '--graph=BiRing(4)' --min-bytes=1048576 "
        "--max-bytes=1048576 --schedule=" +
            xml,
        "msccl-bench-read");
    ASSERT_EQ(rc2, 0) << out2;
    // the same row: size, count, time, algbw, busbw
    const auto row = [](const std::string& text) {
        const size_t at = text.find("\n     1048576");
        return at == std::string::npos ? std::string()
                                       : text.substr(at, text.find('\n', at + 1) - at);
    };
    EXPECT_FALSE(row(out).empty()) << out;
    EXPECT_EQ(row(out2), row(out)) << out << out2;
}

TEST(MscclPrograms, CollectiveBenchRefusesABadScheduleFile)
{
    const std::string bad = ::testing::TempDir() + "msccl-bad.xml";
    {
        std::ofstream f(bad);
        f << Edit("ngpus=\"4\"", "ngpus=\"5\"");
    }
    const auto [rc, out] = gpu_fabric_test::RunCapture(
        "collective-bench --topology=direct-connect '--graph=BiRing(4)' --schedule=" + bad,
        "msccl-bench-bad");
    EXPECT_EQ(rc, 2) << out;
    EXPECT_NE(out.find("attribute ngpus"), std::string::npos) << out;
    // a good file for another number of GPUs: both counts named
    const std::string ring = ::testing::TempDir() + "msccl-ring4.xml";
    {
        std::ofstream f(ring);
        f << kRing4;
    }
    const auto [rc2, out2] = gpu_fabric_test::RunCapture(
        "collective-bench --topology=direct-connect '--graph=BiRing(6)' --schedule=" + ring,
        "msccl-bench-ngpus");
    EXPECT_EQ(rc2, 2) << out2;
    EXPECT_NE(out2.find("--schedule"), std::string::npos) << out2;
    EXPECT_NE(out2.find("ngpus 4"), std::string::npos) << out2;
    EXPECT_NE(out2.find("6 GPUs"), std::string::npos) << out2;
}

} // namespace
