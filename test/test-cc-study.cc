/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * examples/cc-study and its pieces (examples/support/fct-study.h): the
 * closed-form ideal flow completion time against packet-level runs of single
 * flows alone, the flow-size sampler against its file's mean, the offered
 * load of the generated arrivals, and the program's results and bad input.
 */
#include "fct-study.h"
#include "program-run.h"

#include "ns3/core-module.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-header.h"
#include "ns3/fabric-helper.h"
#include "ns3/fabric-switch.h"
#include "ns3/packet-transport.h"
#include "ns3/topology-builders.h"

#include <cmath>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace ns3;
using namespace gpu_fabric_test;

namespace
{

constexpr uint64_t kRateBps = 100'000'000'000;

/// The 16-host three-tier fat-tree (radix 4) of the ideal-FCT checks.
FabricTopology
SmallFatTree()
{
    ClusterParams p;
    p.gpus = 16;
    p.radix = 4;
    p.platform = HbDomainPreset::Custom(1, DataRate(kRateBps), DataRate(kRateBps));
    p.linkDelayNs = 1000;
    return BuildFatTree(p);
}

/// \return the completion time of one flow alone on a fresh fabric,
/// seconds; \p framing (if given) is set to the transport's
double
AloneFct(const FabricTopology& topo,
         uint32_t src,
         uint32_t dst,
         uint64_t bytes,
         const std::string& cc = "none",
         PacketFraming* framing = nullptr)
{
    Config::SetDefault("ns3::PacketTransport::CongestionControl", StringValue(cc));
    FabricHelper helper;
    Ptr<Fabric> fabric = helper.Install(topo);
    if (framing != nullptr)
    {
        *framing = TransportFraming(*fabric->GetTransport(), helper.GetDeviceFrameMtu());
    }
    Time done;
    fabric->GetTransport()->Send(src,
                                 dst,
                                 bytes,
                                 MakeBoundCallback(
                                     +[](Time* t) { *t = Simulator::Now(); },
                                     &done));
    Simulator::Run();
    fabric->Dispose();
    Simulator::Destroy();
    Config::SetDefault("ns3::PacketTransport::CongestionControl", StringValue("none"));
    return done.GetSeconds();
}

// The closed form (FlowTransport's latency formula) is what a flow alone
// takes at packet level: same edge switch (2 hops), same pod (4), another
// pod (6), sizes around the packet payload and large ones. Within 1 ns
// (the simulator's time step); otherwise slowdowns below 1 would appear.
TEST(CcStudy, ClosedFormIdealFctIsAFlowAloneAtPacketLevel)
{
    const FabricTopology topo = SmallFatTree();
    FabricHelper helper;
    const uint32_t mtu = helper.GetDeviceFrameMtu();
    const uint32_t overhead = FabricHeader::kSerializedSize;
    const PacketFraming framing{mtu - overhead, overhead, 0, 0};
    const IdealFct ideal(topo);
    // hosts 0 and 1 share an edge switch; 0 and 2 a pod; 0 and 15 nothing
    EXPECT_EQ(ideal.Hops(0, 1), 2u);
    EXPECT_EQ(ideal.Hops(0, 2), 4u);
    EXPECT_EQ(ideal.Hops(0, 15), 6u);
    for (uint32_t dst : {1u, 2u, 15u})
    {
        for (uint64_t bytes : {uint64_t{1},
                               uint64_t{1000},
                               uint64_t{mtu - overhead},
                               uint64_t{mtu - overhead + 1},
                               uint64_t{100'000},
                               uint64_t{1'000'003}})
        {
            const double measured = AloneFct(topo, 0, dst, bytes);
            EXPECT_NEAR(measured, ideal.Seconds(0, dst, bytes, framing), 1e-9)
                << "0 -> " << dst << ", " << bytes << " bytes";
        }
    }
    // by hand for one: 6 hops of 1 us, a 1026-byte frame at 100 Gb/s
    // (82.08 ns, serialized in 82 whole ns) six times, store-and-forward
    EXPECT_NEAR(ideal.Seconds(0, 15, 1000, framing), 6e-6 + 6 * 82e-9, 1e-15);
    // and a long one: 244 full frames of 4122 bytes (329.76 ns) and one of
    // 579 + 26 bytes, 1006373 bytes at the last hop in 80509.84 -> 80509 ns;
    // on each of the five hops before, the slowest frame (330 ns: the
    // remainders wrap); six delays
    EXPECT_NEAR(ideal.Seconds(0, 15, 1'000'003, framing), 6e-6 + 80509e-9 + 5 * 330e-9, 1e-15);
}

// With congestion control on, a flow alone takes the closed form of its own
// packets (HPCC and Swift carry INT: a 9-byte header and 20 bytes more at
// each switch, so 3901 payload bytes per packet) while it is within the
// first window, and never less: its slowdown is at least 1.
TEST(CcStudy, AFlowAloneUnderCongestionControlTakesItsOwnPacketsClosedForm)
{
    const FabricTopology topo = SmallFatTree();
    const IdealFct ideal(topo);
    for (const char* cc : {"dcqcn", "hpcc", "dctcp", "swift"})
    {
        for (uint32_t dst : {1u, 15u})
        {
            for (uint64_t bytes :
                 {uint64_t{1000}, uint64_t{6000}, uint64_t{20'000}, uint64_t{1'000'000}})
            {
                PacketFraming framing;
                const double measured = AloneFct(topo, 0, dst, bytes, cc, &framing);
                const double closed = ideal.Seconds(0, dst, bytes, framing);
                EXPECT_GE(measured, closed - 1e-9) << cc << " " << dst << " " << bytes;
                if (bytes <= 20'000)
                {
                    EXPECT_NEAR(measured, closed, 1e-9) << cc << " " << dst << " " << bytes;
                }
            }
        }
        PacketFraming framing;
        AloneFct(topo, 0, 1, 1, cc, &framing);
        const bool telemetry = std::string(cc) == "hpcc" || std::string(cc) == "swift";
        EXPECT_EQ(framing.hopBytes, telemetry ? 20u : 0u) << cc;
        EXPECT_EQ(framing.overhead, telemetry ? 35u : 26u) << cc;
    }
}

/// Two messages of one pair sent at once, and what became of them.
struct PairRun
{
    std::vector<double> done; //!< completion time of each, seconds
    Transport::Totals totals; //!< the transport's byte counts
    PacketFraming framing;    //!< the transport's packets
    double sentAt{0};         //!< when the messages went, seconds
    double rateAtSend{0};     //!< the pair's flow rate then (0: no pair flow), bps
};

/// Send \p sizes from host 0 to host \p dst at once, on a
/// fresh fabric with congestion control \p cc and ConnectionPerMessage \p
/// perMessage; \p incast: hosts 0 and 2..7 first send 1 MB each to \p dst
/// at 0, and the messages go the moment all of that is delivered.
PairRun
RunPair(const FabricTopology& topo,
        uint32_t dst,
        const std::vector<uint64_t>& sizes,
        const std::string& cc,
        bool perMessage,
        bool incast = false)
{
    Config::SetDefault("ns3::PacketTransport::CongestionControl", StringValue(cc));
    Config::SetDefault("ns3::PacketTransport::ConnectionPerMessage", BooleanValue(perMessage));
    FabricHelper helper;
    if (cc != "none")
    {
        // marking as the algorithm's paper sets it (as cc-study does)
        const EcnMarking marking = PublishedEcnMarking(ResolveCongestionControl(cc, "cc"));
        helper.SetSwitchAttribute("EcnKmin", UintegerValue(marking.kmin));
        helper.SetSwitchAttribute("EcnKmax", UintegerValue(marking.kmax));
        helper.SetSwitchAttribute("EcnPmax", DoubleValue(marking.pmax));
    }
    Ptr<Fabric> fabric = helper.Install(topo);
    Ptr<PacketTransport> t = fabric->GetTransport();
    PairRun r;
    r.framing = TransportFraming(*t, helper.GetDeviceFrameMtu());
    r.done.assign(sizes.size(), -1);

    struct State
    {
        PairRun* r;
        Ptr<PacketTransport> t;
        uint32_t dst;
        const std::vector<uint64_t>* sizes;
        uint32_t incastLeft{0};
    } st{&r, t, dst, &sizes};

    static State* s; // for the plain callbacks below
    s = &st;
    auto sendAll = +[]() {
        if (Ptr<FabricCongestionControl> f = s->t->GetFlowControl(0, s->dst))
        {
            s->r->rateAtSend = static_cast<double>(f->GetRate());
        }
        s->r->sentAt = Simulator::Now().GetSeconds();
        for (uint32_t i = 0; i < s->sizes->size(); ++i)
        {
            s->t->Send(0,
                       s->dst,
                       (*s->sizes)[i],
                       MakeBoundCallback(
                           +[](uint32_t k) { s->r->done[k] = Simulator::Now().GetSeconds(); },
                           i));
        }
    };
    if (incast)
    {
        for (uint32_t src : {0u, 2u, 3u, 4u, 5u, 6u, 7u})
        {
            ++st.incastLeft;
            t->Send(src,
                    dst,
                    1'000'000,
                    MakeBoundCallback(
                        +[](void (*go)()) {
                            if (--s->incastLeft == 0)
                            {
                                go();
                            }
                        },
                        sendAll));
        }
    }
    else
    {
        sendAll();
    }
    Simulator::Run();
    r.totals = t->GetTotals();
    fabric->Dispose();
    Simulator::Destroy();
    Config::SetDefault("ns3::PacketTransport::CongestionControl", StringValue("none"));
    Config::SetDefault("ns3::PacketTransport::ConnectionPerMessage", BooleanValue(false));
    return r;
}

// Two messages of one pair sent at the same instant, without congestion
// control, hosts 0 and 1 on one edge switch (one path). One connection per
// pair (the default): first in first out, the first takes exactly its time
// alone and the second ends as one message of both sizes would (its packets
// follow back to back). One connection per message: the source port serves
// the two in round robin, packet by packet, so they share the link and both
// end at about twice the time of one: the later exactly as one message of
// both sizes, the other one full frame's serialization before it.
TEST(CcStudy, ConnectionPerMessageRunsTwoMessagesOfAPairSideBySide)
{
    const FabricTopology topo = SmallFatTree();
    const IdealFct ideal(topo);
    for (const bool perMessage : {false, true})
    {
        SCOPED_TRACE(perMessage ? "ConnectionPerMessage" : "a connection per pair");
        const uint64_t bytes = 50 * uint64_t{4096}; // whole packets (checked below)
        const PairRun r = RunPair(topo, 1, {bytes, bytes}, "none", perMessage);
        ASSERT_EQ(bytes % r.framing.payload, 0u) << r.framing.payload;
        const double one = ideal.Seconds(0, 1, bytes, r.framing);
        const double both = ideal.Seconds(0, 1, 2 * bytes, r.framing);
        // one full frame at 100 Gb/s, in whole ns as ports serialize
        const double frame =
            std::floor((r.framing.payload + r.framing.overhead) * 8.0 / kRateBps * 1e9) * 1e-9;
        EXPECT_EQ(r.totals.bytesSent, 2 * bytes);
        EXPECT_EQ(r.totals.bytesDelivered, 2 * bytes);
        if (!perMessage)
        {
            EXPECT_NEAR(r.done[0], one, 1e-9);
            EXPECT_NEAR(r.done[1], both, 1e-9);
        }
        else
        {
            EXPECT_NEAR(std::max(r.done[0], r.done[1]), both, 1e-9);
            // the first ends a few frames before: the port took a few of its
            // packets (TxFifoPackets and the one on the wire) before the
            // second was queued; first in first out it would be 50 frames
            const double gap = std::fabs(r.done[0] - r.done[1]);
            EXPECT_GE(gap, frame);
            EXPECT_LE(gap, 5 * frame);
            // about twice one alone (the propagation is paid once)
            EXPECT_GT(r.done[0], 1.8 * (one - 2e-6));
        }
    }
}

// Congestion state: an incast (7 hosts, 1 MB each, to host 1) makes DCQCN
// cut host 0's rate toward host 1; a 20 KB message sent the moment the incast
// is delivered then runs at the cut rate with one connection per pair (it
// inherits the pair's flow), and exactly as alone (the closed form, within
// DCQCN's first window) with one connection per message.
TEST(CcStudy, ConnectionPerMessageStartsFromTheAlgorithmsInitialState)
{
    const FabricTopology topo = SmallFatTree();
    const IdealFct ideal(topo);
    const PairRun pair = RunPair(topo, 1, {20'000}, "dcqcn", false, true);
    const double alone = ideal.Seconds(0, 1, 20'000, pair.framing);
    ASSERT_GT(pair.rateAtSend, 0);
    ASSERT_LT(pair.rateAtSend, 0.9 * kRateBps) << "the incast did not cut the rate";
    EXPECT_GT(pair.done[0] - pair.sentAt, alone + 1e-9);
    const PairRun own = RunPair(topo, 1, {20'000}, "dcqcn", true, true);
    EXPECT_EQ(own.rateAtSend, 0) << "a pair flow outside the messages";
    // within one time step: the closed form is not rounded to the
    // nanosecond, the simulation is (another RngRun's paths move the send
    // time, and the rounding with it, by a step)
    EXPECT_NEAR(own.done[0] - own.sentAt, alone, 1.001e-9);
    EXPECT_EQ(own.totals.bytesSent, 7 * uint64_t{1'000'000} + 20'000);
    EXPECT_EQ(own.totals.bytesDelivered, own.totals.bytesSent);
}

/// \return the distribution file \p name from the source tree
FlowSizeCdf
DataCdf(const std::string& name)
{
    return FlowSizeCdf::Load("--workload", std::string(GPU_FABRIC_DATA_DIR) + "/" + name);
}

// The piecewise-linear mean by hand for WebSearch (segment midpoints times
// their probability): 1711.25 KB; the sampler's mean over 200000 draws is
// within 4 standard errors of it (the sizes' standard deviation is below
// 4 MB: 4 x 4 MB / sqrt(200000) = 36 KB).
TEST(CcStudy, SamplerReproducesTheDistributionMean)
{
    const FlowSizeCdf web = DataCdf("websearch-cdf.txt");
    EXPECT_NEAR(web.Mean(), 1711250.0, 1e-6);
    const FlowSizeCdf hadoop = DataCdf("hadoop-cdf.txt");
    for (const FlowSizeCdf* cdf : {&web, &hadoop})
    {
        std::mt19937_64 rng(7);
        const uint32_t n = 200'000;
        double sum = 0;
        double sum2 = 0;
        for (uint32_t i = 0; i < n; ++i)
        {
            const double x = cdf->Sample(static_cast<double>(rng() >> 11) * 0x1.0p-53);
            sum += x;
            sum2 += x * x;
        }
        const double mean = sum / n;
        const double sd = std::sqrt(sum2 / n - mean * mean);
        EXPECT_NEAR(mean, cdf->Mean(), 4 * sd / std::sqrt(n) + 1.0);
        // the quantiles are the file's points
        EXPECT_EQ(cdf->Sample(0.0), 1u);
        EXPECT_EQ(cdf->Sample(1.0), static_cast<uint64_t>(cdf->MaxBytes()));
    }
    EXPECT_EQ(web.Sample(0.15), 10000u);
    EXPECT_EQ(web.Sample(0.175), 15000u); // halfway between 10 KB (15 %) and 20 KB (20 %)
}

// Offered load: the bytes of the generated arrivals over hosts x rate x
// duration match --load within 5 % (about 9000 WebSearch flows: the bytes'
// relative standard error is about 1.9/sqrt(9000) = 2 %).
TEST(CcStudy, GeneratedArrivalsOfferTheLoad)
{
    const FlowSizeCdf web = DataCdf("websearch-cdf.txt");
    const uint32_t hosts = 64;
    const double duration = 0.02;
    for (double load : {0.3, 0.5})
    {
        const auto flows = PoissonFlows(hosts, load, kRateBps, web, duration, 1);
        double bytes = 0;
        std::map<uint32_t, uint32_t> bySrc;
        for (const FlowSpec& f : flows)
        {
            bytes += f.bytes;
            ASSERT_NE(f.src, f.dst);
            ASSERT_LT(f.dst, hosts);
            ASSERT_GE(f.startS, 0);
            ASSERT_LT(f.startS, duration);
            ++bySrc[f.src];
        }
        const double offered = bytes * 8 / (hosts * kRateBps * duration);
        EXPECT_NEAR(offered, load, 0.05 * load) << flows.size() << " flows";
        // every host sends: expected load x rate x T / mean = 73 flows at 0.3
        EXPECT_EQ(bySrc.size(), hosts);
    }
    // the same seed gives the same flows, another seed others
    const auto a = PoissonFlows(8, 0.3, kRateBps, web, 0.001, 5);
    const auto b = PoissonFlows(8, 0.3, kRateBps, web, 0.001, 5);
    const auto c = PoissonFlows(8, 0.3, kRateBps, web, 0.001, 6);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
    {
        EXPECT_EQ(a[i].bytes, b[i].bytes);
        EXPECT_EQ(a[i].startS, b[i].startS);
        EXPECT_EQ(a[i].dst, b[i].dst);
    }
    EXPECT_FALSE(a.size() == c.size() && a.front().bytes == c.front().bytes);
}

TEST(CcStudy, BucketsAreAscendingDecadesCoveringTheSizes)
{
    const FlowSizeCdf web = DataCdf("websearch-cdf.txt");
    const auto buckets = SizeBuckets(web);
    ASSERT_GE(buckets.size(), 3u);
    EXPECT_EQ(buckets.front().minBytes, 0);
    EXPECT_EQ(buckets.front().maxBytes, 10000); // 15 % of WebSearch flows, 1.5 % up to 1 KB
    EXPECT_EQ(buckets.back().maxBytes, web.MaxBytes());
    for (size_t i = 1; i < buckets.size(); ++i)
    {
        EXPECT_EQ(buckets[i].minBytes, buckets[i - 1].maxBytes);
        EXPECT_GE(web.Probability(buckets[i].maxBytes) - web.Probability(buckets[i].minBytes),
                  0.05);
    }
    EXPECT_EQ(NearestRankPercentile({3, 1, 2, 4}, 0.5), 2);
    EXPECT_EQ(NearestRankPercentile({3, 1, 2, 4}, 0.99), 4);
    std::vector<double> hundred;
    for (int i = 1; i <= 100; ++i)
    {
        hundred.push_back(i);
    }
    EXPECT_EQ(NearestRankPercentile(hundred, 0.99), 99);
}

TEST(CcStudy, MalformedDistributionFilesAreNamed)
{
    const std::string dir = FreshDir("cc-study-cdf");
    const std::map<std::string, std::string> bad = {{"words.txt", "0 0\nten 50\n100 100\n"},
                                                    {"decreasing.txt", "0 0\n100 60\n50 100\n"},
                                                    {"not-100.txt", "0 0\n100 60\n"},
                                                    {"three.txt", "0 0\n100 60 7\n200 100\n"},
                                                    {"empty.txt", "# nothing\n"}};
    for (const auto& [name, text] : bad)
    {
        std::ofstream(dir + name) << text;
        try
        {
            FlowSizeCdf::Load("--workload", dir + name);
            ADD_FAILURE() << name << " was accepted";
        }
        catch (const FabricConfigError& e)
        {
            EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
        }
    }
}

#ifdef GPU_FABRIC_BIN_DIR

// Bad input exits 2 naming the flag, the value and what is allowed.
TEST(CcStudy, BadInputExitsTwoNamingTheFlag)
{
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"--cc=dcqcn,fast", "--cc"},
        {"--lb=ecmp,random", "--lb"},
        {"--workload=storage", "--workload"},
        {"--load=0.3,1.2", "--load"},
        {"--load=0", "--load"},
        {"--cc=", "--cc"},
        {"--load=", "--load"},
        {"--workload=websearch,", "--workload"},
        {"--data-dir=/no-such-dir", "--workload"},
        {"--connections=queue", "--connections"}};
    int i = 0;
    for (const auto& [arg, flag] : cases)
    {
        const auto [status, out] =
            RunCapture("cc-study --quick " + arg, "cc-study-bad-" + std::to_string(i++));
        EXPECT_EQ(status, 2) << arg << ": " << out;
        EXPECT_NE(out.find(flag), std::string::npos) << arg << ": " << out;
    }
    // a malformed data file is named
    const std::string dir = FreshDir("cc-study-data");
    std::ofstream(dir + "websearch-cdf.txt") << "0 0\n100 fifty\n";
    const auto [status, out] =
        RunCapture("cc-study --quick --data-dir=" + dir, "cc-study-bad-file");
    EXPECT_EQ(status, 2) << out;
    EXPECT_NE(out.find("websearch-cdf.txt"), std::string::npos) << out;
}

// A small run of the study: every combination and bucket in the JSON, every
// byte sent delivered, no flow faster than its ideal, and the HPCC paper's
// ordering: HPCC's short flows well below DCQCN's at the tail.
TEST(CcStudy, SmallRunHasEveryCombinationAndThePapersOrdering)
{
#ifdef GPU_FABRIC_SANITIZE
    GTEST_SKIP() << "results only: run in the Release suite";
#endif
    const nlohmann::json j = RunJson("cc-study --quick --png=none --cc=dcqcn,hpcc "
                                     "--lb=ecmp,spray --load=0.5",
                                     "cc-study-small");
    ASSERT_TRUE(j.is_object());
    const FlowSizeCdf web = DataCdf("websearch-cdf.txt");
    const auto buckets = SizeBuckets(web);
    std::map<std::string, std::vector<nlohmann::json>> byCombo;
    for (const auto& r : j.at("results"))
    {
        byCombo[r.at("cc").get<std::string>() + "/" + r.at("lb").get<std::string>()].push_back(r);
    }
    ASSERT_EQ(byCombo.size(), 4u);
    for (const auto& [combo, rows] : byCombo)
    {
        ASSERT_EQ(rows.size(), buckets.size()) << combo;
        for (size_t b = 0; b < rows.size(); ++b)
        {
            EXPECT_EQ(rows[b].at("size_bucket").get<double>(), buckets[b].maxBytes) << combo;
            EXPECT_GT(rows[b].at("flows").get<uint64_t>(), 0u) << combo;
            EXPECT_GE(rows[b].at("p50").get<double>(), 1.0 - 1e-9) << combo;
            EXPECT_LE(rows[b].at("p50").get<double>(), rows[b].at("p95").get<double>());
            EXPECT_LE(rows[b].at("p95").get<double>(), rows[b].at("p99").get<double>());
        }
    }
    for (const auto& run : j.at("runs"))
    {
        EXPECT_EQ(run.at("bytes_sent"), run.at("bytes_delivered")) << run.dump();
        EXPECT_EQ(run.at("unfinished_flows"), 0) << run.dump();
        // the ideal is a single path's: with per-flow ECMP no flow beats
        // it; sprayed packets take parallel paths, where a short last frame
        // may overtake a full one (a few hundred ns on a few-us flow)
        if (run.at("lb") == "ecmp")
        {
            EXPECT_EQ(run.at("flows_below_ideal"), 0) << run.dump();
        }
        EXPECT_GT(run.at("min_slowdown").get<double>(), 0.9) << run.dump();
        // a connection per flow by default: none waits behind another of its
        // host pair, and a flow that overlaps an earlier one of its pair may
        // finish first (impossible first in, first out on one path)
        EXPECT_EQ(run.at("connections"), "message") << run.dump();
        EXPECT_EQ(run.at("flows_behind_same_pair"), 0) << run.dump();
        EXPECT_LE(run.at("flows_overtaking_same_pair").get<uint64_t>(),
                  run.at("flows_overlapping_same_pair").get<uint64_t>());
    }
    // the smallest bucket's p99 over its 27 flows: HPCC / DCQCN 0.10-0.41
    // with ECMP and 0.27-0.52 with spraying over RngRun 1-8 (0.19 and 0.44
    // in the default run), so 0.6 holds for any of them
    for (const char* lb : {"ecmp", "spray"})
    {
        const double hpcc = byCombo[std::string("hpcc/") + lb].front().at("p99");
        const double dcqcn = byCombo[std::string("dcqcn/") + lb].front().at("p99");
        EXPECT_LT(hpcc, 0.6 * dcqcn) << lb;
    }
}

// --connections=pair: a host pair's flows share a connection, served in
// order: every flow that starts while an earlier one of its pair runs waits
// behind it. With a connection per flow none waits, and a short flow that
// starts while a long one of its pair runs finishes before it.
TEST(CcStudy, ConnectionsPairServesAPairsFlowsInOrder)
{
#ifdef GPU_FABRIC_SANITIZE
    GTEST_SKIP() << "results only: run in the Release suite";
#endif
    // the default run's ECMP paths (cc-study's --seed draws the flows): 2
    // flows start while an earlier one of their pair runs, and with a
    // connection per flow 1 finishes first (another RngRun's paths may let
    // none overtake)
    const std::string study = "cc-study --quick --png=none --cc=dcqcn --lb=ecmp --RngRun=1";
    const nlohmann::json pair = RunJson(study + " --connections=pair", "cc-study-pair");
    const nlohmann::json own = RunJson(study + " --connections=message", "cc-study-message");
    ASSERT_TRUE(pair.is_object());
    ASSERT_TRUE(own.is_object());
    const auto& p = pair.at("runs").at(0);
    const auto& m = own.at("runs").at(0);
    EXPECT_EQ(p.at("connections"), "pair");
    ASSERT_GT(p.at("flows_overlapping_same_pair").get<uint64_t>(), 0u) << p.dump();
    EXPECT_EQ(p.at("flows_behind_same_pair"), p.at("flows_overlapping_same_pair"));
    ASSERT_GT(m.at("flows_overlapping_same_pair").get<uint64_t>(), 0u) << m.dump();
    EXPECT_EQ(m.at("flows_behind_same_pair"), 0);
    EXPECT_GT(m.at("flows_overtaking_same_pair").get<uint64_t>(), 0u) << m.dump();
    for (const auto* run : {&p, &m})
    {
        EXPECT_EQ(run->at("bytes_sent"), run->at("bytes_delivered")) << run->dump();
    }
}

// On FB Hadoop with ECMP (a --quick run), HPCC's tiniest flows are well below
// DCQCN's at the tail, as the HPCC authors state ("with more short flows,
// HPCC's advantage is more evident"). With a connection per host pair they
// were not: a tiny flow inherited the rate and window of a flow of its pair.
TEST(CcStudy, HadoopsTiniestFlowsAreFasterUnderHpccWithAConnectionPerFlow)
{
#ifdef GPU_FABRIC_SANITIZE
    GTEST_SKIP() << "results only: run in the Release suite";
#endif
    const nlohmann::json j =
        RunJson("cc-study --quick --png=none --workload=hadoop --cc=dcqcn,hpcc --lb=ecmp",
                "cc-study-hadoop");
    ASSERT_TRUE(j.is_object());
    std::map<std::string, double> smallest; // cc -> p99 of the smallest bucket
    for (const auto& r : j.at("results"))
    {
        const std::string cc = r.at("cc");
        if (smallest.count(cc) == 0)
        {
            smallest[cc] = r.at("p99"); // buckets ascend per combination
        }
    }
    ASSERT_EQ(smallest.size(), 2u);
    EXPECT_LT(smallest["hpcc"], 0.5 * smallest["dcqcn"]);
    for (const auto& run : j.at("runs"))
    {
        EXPECT_EQ(run.at("bytes_sent"), run.at("bytes_delivered")) << run.dump();
        EXPECT_EQ(run.at("flows_behind_same_pair"), 0) << run.dump();
    }
}

#endif

} // namespace
