/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Congestion control, control packets, RED marking and load balancing at
// the packet level: each figure against a closed form, a fluid model or the
// published behaviour of the algorithm, as stated beside it.
#include "star-topology.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/congestion-control.h"
#include "ns3/double.h"
#include "ns3/error-model.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-helper.h"
#include "ns3/fabric-switch.h"
#include "ns3/fault-helper.h"
#include "ns3/hb-domain-preset.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/topology-builders.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <tuple>
#include <vector>

using gpu_fabric_test::Star;
using namespace ns3;

namespace
{

class CongestionControlTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        Config::Reset();
    }
};

constexpr uint64_t kRate = 100'000'000'000ULL; //!< 100 Gb/s
constexpr uint32_t kFrame = 4096 + FabricHeader::kSerializedSize;

/// Payload bytes of a data packet (its INT records, if any, are not payload).
uint32_t
PayloadBytes(Ptr<const Packet> p, const FabricHeader& h)
{
    uint32_t bytes = p->GetSize() - FabricHeader::kSerializedSize;
    if ((h.flags & FabricHeader::kFlagInt) != 0)
    {
        bytes -= FabricIntHeader::Of(*p).GetSerializedSize();
    }
    return bytes;
}

/// What an incast into rank 0 did while it was measured.
struct IncastRun
{
    std::map<uint32_t, uint64_t> bytesBySrc; //!< payload delivered in the window
    double meanQueue{0};                     //!< bottleneck queue, time-weighted, bytes
    double seconds{0};                       //!< the window's length
    uint64_t pauses{0};                      //!< pause frames sent by every port, whole run
    uint64_t acks{0};                        //!< ACKs sent
    uint64_t cnps{0};                        //!< CNPs sent
    uint64_t controlDelivered{0};            //!< ACKs and CNPs delivered
    uint64_t controlSerialized{0};           //!< control frames serialized, every port
    uint64_t dataPackets{0};                 //!< data packets delivered
    uint64_t windowPackets{0};               //!< data packets delivered in the window
    uint64_t windowMarked{0};                //!< of which marked CE
    Ptr<PacketTransport> transport;          //!< for the flows' state
};

/// Time-weighted mean of a port's queue in a window.
struct QueueMeter
{
    Time from;
    Time until;
    Time last;
    uint32_t bytes{0};
    double integral{0}; //!< byte-seconds

    void Change(uint32_t /* old */, uint32_t now)
    {
        Advance();
        bytes = now;
    }

    void Advance()
    {
        const Time t = std::min(Simulator::Now(), until);
        if (t > from)
        {
            const Time start = std::max(last, from);
            if (t > start)
            {
                integral += bytes * (t - start).GetSeconds();
            }
        }
        last = Simulator::Now();
    }
};

/**
 * \p senders GPUs send to rank 0 through one switch port for \p until; the
 * window [from, until] is measured.
 */
IncastRun
RunIncast(const std::string& cc,
          uint32_t senders,
          Time from,
          Time until,
          const std::function<void(FabricHelper&)>& configure)
{
    Config::SetDefault("ns3::PacketTransport::CongestionControl", StringValue(cc));
    FabricHelper helper;
    configure(helper);
    Ptr<Fabric> fabric = helper.Install(Star(senders + 1, kRate, 1000));
    IncastRun r;
    r.transport = fabric->GetTransport();
    auto [gpuEnd, switchEnd] = fabric->GetCableDevices(0); // the receiver's cable
    QueueMeter meter{from, until, Time(0), 0, 0};
    switchEnd->TraceConnectWithoutContext("QueueBytes", MakeCallback(&QueueMeter::Change, &meter));

    struct Window
    {
        bool open{false};
        std::map<uint32_t, uint64_t>* bySrc;
        uint64_t* packets;
        uint64_t* marked;
    } window{false, &r.bytesBySrc, &r.windowPackets, &r.windowMarked};

    gpuEnd->TraceConnectWithoutContext(
        "MacRx",
        MakeBoundCallback(
            +[](Window* w, Ptr<const Packet> p) {
                FabricHeader h;
                p->PeekHeader(h);
                if (w->open && (h.flags & FabricHeader::kControlFlags) == 0)
                {
                    (*w->bySrc)[h.src] += PayloadBytes(p, h);
                    ++*w->packets;
                    *w->marked += (h.flags & FabricHeader::kFlagCe) != 0;
                }
            },
            &window));
    Simulator::Schedule(from, [&window] { window.open = true; });
    Simulator::Schedule(until, [&window] { window.open = false; });
    // messages longer than the run: the senders never run dry
    const auto bytes = static_cast<uint64_t>(kRate / 8 * until.GetSeconds() * 2);
    for (uint32_t s = 1; s <= senders; ++s)
    {
        r.transport->Send(s, 0, bytes, Transport::DoneCallback());
    }
    Simulator::Stop(until);
    Simulator::Run();
    meter.Advance();
    r.seconds = (until - from).GetSeconds();
    r.meanQueue = meter.integral / r.seconds;
    r.acks = r.transport->GetAcksSent();
    r.cnps = r.transport->GetCnpsSent();
    r.controlDelivered = r.transport->GetControlPacketsDelivered();
    r.dataPackets = r.transport->GetPacketsDelivered();
    for (uint32_t c = 0; c < fabric->GetTopology().Cables().size(); ++c)
    {
        auto [a, b] = fabric->GetCableDevices(c);
        r.pauses += a->GetStats().pausesSent + b->GetStats().pausesSent;
        r.controlSerialized += a->GetStats().controlPackets + b->GetStats().controlPackets;
    }
    Simulator::Destroy();
    Config::Reset();
    return r;
}

/// DCQCN's marking as deployed (Zhu et al. 2015): RED 5 KB / 200 KB / 1 %.
void
DcqcnMarking(FabricHelper& helper)
{
    helper.SetSwitchAttribute("EcnKmin", UintegerValue(5'000));
    helper.SetSwitchAttribute("EcnKmax", UintegerValue(200'000));
    helper.SetSwitchAttribute("EcnPmax", DoubleValue(0.01));
}

/**
 * The fixed point of the DCQCN fluid model (Zhu et al., "ECN or Delay:
 * Lessons Learnt from Analysis of DCQCN and TIMELY", CoNEXT 2016, eqs. 1-5):
 * N flows sharing a link of C packets/s each send RC = C/N; alpha, RT and
 * RC stand still when
 *   alpha = 1 - (1-p)^(tau' RC),
 *   RT - RC = RC alpha a / (tau (b + c)),
 *   (RT - RC) a / tau = R_AI (b (1-p)^(F B) + c (1-p)^(F T RC)),
 * with a = 1 - (1-p)^(tau RC) (a CNP per tau), b = RC p / ((1-p)^-B - 1)
 * and c = RC p / ((1-p)^(-T RC) - 1) (byte-counter and timer increases).
 * \return the marking probability p there (bisection on the last equation)
 */
double
DcqcnFixedPointP(uint32_t flows, double rateBps, double frameBytes)
{
    const double c = rateBps / (8 * frameBytes);
    const double rc = c / flows;
    const double tau = 50e-6;   // CNP interval
    const double tauA = 55e-6;  // alpha timer
    const double timer = 55e-6; // rate increase timer
    const double b = 10.0 * 1024 * 1024 / frameBytes;
    const double f = 5;
    const double rai = 40e6 / (8 * frameBytes);
    const auto residual = [&](double p) {
        const double q = 1 - p;
        const double a = 1 - std::pow(q, tau * rc);
        const double alpha = 1 - std::pow(q, tauA * rc);
        const double byteEvents = rc * p / (std::pow(q, -b) - 1);
        const double timerEvents = rc * p / (std::pow(q, -timer * rc) - 1);
        return rc * alpha * a * a / (tau * tau * (byteEvents + timerEvents)) -
               rai * (byteEvents * std::pow(q, f * b) + timerEvents * std::pow(q, f * timer * rc));
    };
    double lo = 1e-12;
    double hi = 0.5;
    for (int i = 0; i < 200; ++i)
    {
        const double mid = std::sqrt(lo * hi);
        (residual(mid) < 0 ? lo : hi) = mid;
    }
    return lo;
}

/// The largest relative deviation of a sender's throughput from C / n.
double
WorstShareError(const IncastRun& r, uint32_t senders)
{
    double worst = 0;
    const double fair = kRate / 8.0 * r.seconds / senders;
    for (uint32_t s = 1; s <= senders; ++s)
    {
        const auto it = r.bytesBySrc.find(s);
        const double got = it == r.bytesBySrc.end() ? 0.0 : static_cast<double>(it->second);
        worst = std::max(worst, std::abs(got - fair) / fair);
    }
    return worst;
}

double
Utilization(const IncastRun& r)
{
    uint64_t total = 0;
    for (const auto& [src, bytes] : r.bytesBySrc)
    {
        total += bytes;
    }
    return total / (kRate / 8.0 * r.seconds);
}

TEST_F(CongestionControlTest, DcqcnSendersConvergeToTheFluidModelsFixedPoint)
{
    for (uint32_t senders : {2u, 8u})
    {
        // measured once alpha has settled: it starts at 1 and moves with a
        // time constant of AlphaTimer / g = 14 ms, so that the fluid model
        // itself is within 1 % of its fixed point from 50 ms on (6 % below
        // it over 20-100 ms); 250 ms, because the queue's mean over 50 ms
        // still wanders by +-8 % from run to run (RngRun 1-4, 2 senders)
        const IncastRun r =
            RunIncast("dcqcn", senders, MilliSeconds(50), MilliSeconds(300), DcqcnMarking);
        const double p = DcqcnFixedPointP(senders, kRate, kFrame);
        const double queue = 5'000 + p / 0.01 * (200'000 - 5'000);
        RecordProperty("senders" + std::to_string(senders) + "_queue", std::to_string(r.meanQueue));
        // what the packets of the window met: the fixed point's p is per packet
        const double marked = static_cast<double>(r.windowMarked) / r.windowPackets;
        double sum = 0;
        double squares = 0;
        for (const auto& [src, bytes] : r.bytesBySrc)
        {
            sum += static_cast<double>(bytes);
            squares += static_cast<double>(bytes) * static_cast<double>(bytes);
        }
        const double jain = sum * sum / (senders * squares);
        std::printf("dcqcn, %u senders: queue %.0f B against the fluid model's %.0f B (p* %.5f), "
                    "Jain %.5f, worst share error %.3f, utilization %.3f, %lu CNPs, marked "
                    "fraction %.5f (RED's queue for it: %.0f B)\n",
                    senders,
                    r.meanQueue,
                    queue,
                    p,
                    jain,
                    WorstShareError(r, senders),
                    Utilization(r),
                    r.cnps,
                    marked,
                    5'000 + marked / 0.01 * (200'000 - 5'000));
        EXPECT_GT(jain, 0.99) << senders << " senders";
        EXPECT_LT(WorstShareError(r, senders), 0.1) << senders << " senders";
        EXPECT_GT(Utilization(r), 0.95) << senders << " senders";
        // 8 senders: +6 to +10 % over RngRun 1-5, within the 15 %;
        // 2 senders: +21 to +29 %, so 30 % is asserted there (the doc's
        // deviation list). The fluid model's parameters are the attributes'
        // (checked: CnpInterval, AlphaTimer, RateTimer, ByteCounter in frame
        // bytes, F, RateAi; g drops out of the fixed point). The model,
        // integrated with them, settles at its fixed point (queue sd under
        // 0.6 KB, 4-80 us of feedback delay); the packets' queue has an sd of
        // 25 KB (2) and 41 KB (8), each cut being alpha/2 of a flow's rate,
        // about every 0.6 ms: with 2 flows a cut drains about as much as the
        // mean queue. The model is mean-field: a CNP takes the target rate
        // back by RT - RC at its time average (0.40 Gb/s, 2 senders), but no
        // CNP comes within CnpInterval of the last one, when that gap is
        // widest, so CNPs find 0.26 Gb/s and the loop needs more of them
        // (1,660 CNPs/s a flow over 50-100 ms against 1,437 at p*): with
        // CnpInterval 25 us 2 senders are within 7 %. But that, or the authors'
        // NP (a CNP at the end of each interval with a mark; 2 senders -5 %),
        // puts 8 into a relaxation cycle 39 to 54 % below; other rates and
        // packet sizes trade one count for the other (the doc's table)
        EXPECT_NEAR(r.meanQueue, queue, (senders == 2 ? 0.30 : 0.15) * queue)
            << senders << " senders";
        EXPECT_GT(r.cnps, 0u);
    }
}

TEST_F(CongestionControlTest, DctcpHoldsTheQueueAroundKAtFullThroughput)
{
    const uint32_t k = 100'000;
    const IncastRun r =
        RunIncast("dctcp", 8, MilliSeconds(2), MilliSeconds(6), [k](FabricHelper& helper) {
            helper.SetSwitchAttribute("EcnThreshold", UintegerValue(k));
        });
    std::printf("dctcp: queue %.0f B (K %u), utilization %.3f, share error %.3f, pauses %lu\n",
                r.meanQueue,
                k,
                Utilization(r),
                WorstShareError(r, 8),
                r.pauses);
    EXPECT_GT(Utilization(r), 0.95);
    EXPECT_GT(r.meanQueue, 0.5 * k);
    EXPECT_LT(r.meanQueue, 1.5 * k);
}

TEST_F(CongestionControlTest, HpccKeepsTheQueueNearZeroAndTheLinkNearEta)
{
    const IncastRun r =
        RunIncast("hpcc", 8, MicroSeconds(200), MilliSeconds(2), [](FabricHelper&) {});
    std::printf("hpcc: queue %.0f B, utilization %.3f, share error %.3f, pauses %lu\n",
                r.meanQueue,
                Utilization(r),
                WorstShareError(r, 8),
                r.pauses);
    // Li et al.: the queue near zero, the link at eta (0.95), here 5 % slack
    EXPECT_GT(Utilization(r), 0.95 - 0.05);
    EXPECT_LT(r.meanQueue, 2.0 * kFrame);
    EXPECT_EQ(r.pauses, 0u);
}

TEST_F(CongestionControlTest, SwiftHoldsTheRoundTripAtItsTarget)
{
    const IncastRun r =
        RunIncast("swift", 8, MicroSeconds(200), MilliSeconds(2), [](FabricHelper&) {});
    // the empty path's round trip: a data packet over two links and a
    // 64-byte ACK back over two, each link 1 us
    const double base = 2 * (1e-6 + kFrame * 8.0 / kRate) + 2 * (1e-6 + 64 * 8.0 / kRate);
    const double target = 15e-6; // SwiftCongestionControl::TargetDelay
    const double queueing = r.meanQueue * 8 / kRate;
    std::printf("swift: queue %.0f B (%.2f us; target %.2f us over a base of %.2f us), "
                "utilization %.3f, share error %.3f, pauses %lu\n",
                r.meanQueue,
                queueing * 1e6,
                target * 1e6,
                base * 1e6,
                Utilization(r),
                WorstShareError(r, 8),
                r.pauses);
    // the round trip held at the target: its queueing part within 25 %
    EXPECT_NEAR(queueing, target - base, 0.25 * (target - base));
    EXPECT_GT(Utilization(r), 0.95);
    EXPECT_EQ(r.pauses, 0u);
}

TEST_F(CongestionControlTest, CongestionControlPausesFarLessThanLineRateSenders)
{
    const auto run = [](const std::string& cc) {
        return RunIncast(cc, 8, MilliSeconds(1), MilliSeconds(10), DcqcnMarking);
    };
    const IncastRun none = run("none");
    const IncastRun dcqcn = run("dcqcn");
    std::printf("pauses: none %lu, dcqcn %lu\n", none.pauses, dcqcn.pauses);
    ASSERT_GT(none.pauses, 0u); // the incast pauses today
    EXPECT_LE(dcqcn.pauses * 10, none.pauses);
    EXPECT_EQ(none.acks + none.cnps + none.controlSerialized, 0u); // none: no control packets
}

TEST_F(CongestionControlTest, ControlPacketsAreRealPacketsOnTheReversePath)
{
    const IncastRun r =
        RunIncast("dctcp", 2, MicroSeconds(10), MicroSeconds(200), [](FabricHelper& h) {
            h.SetSwitchAttribute("EcnThreshold", UintegerValue(50'000));
        });
    // AckEvery = 1: one ACK per data packet delivered
    EXPECT_EQ(r.acks, r.dataPackets);
    EXPECT_GT(r.controlDelivered, 0u);
    EXPECT_LE(r.controlDelivered, r.acks + r.cnps);
    // each ACK crosses two links (receiver -> switch -> sender)
    EXPECT_GE(r.controlSerialized, 2 * r.controlDelivered);
    EXPECT_LE(r.controlSerialized, 2 * (r.acks + r.cnps));
}

TEST_F(CongestionControlTest, BadNamesAndThresholdsAreRefusedNamingTheParameter)
{
    EXPECT_THROW(ResolveCongestionControl("ns3::FabricSwitch", "--cc"), FabricConfigError);
    EXPECT_THROW(ResolveCongestionControl("ns3::FabricCongestionControl", "--cc"),
                 FabricConfigError);
    EXPECT_EQ(ResolveCongestionControl("none", "--cc"), "");
    EXPECT_EQ(ResolveCongestionControl("dcqcn", "--cc"), "ns3::DcqcnCongestionControl");
    EXPECT_EQ(ResolveCongestionControl("hpcc", "--cc"), "ns3::HpccCongestionControl");
    EXPECT_EQ(ResolveCongestionControl("swift", "--cc"), "ns3::SwiftCongestionControl");

    const auto build = [](const std::string& name, const AttributeValue& v) {
        FabricHelper helper;
        helper.SetSwitchAttribute("EcnKmax", UintegerValue(1000));
        helper.SetSwitchAttribute(name, v);
        helper.Install(Star(2, kRate, 1000));
    };

    struct Case
    {
        std::string what;            //!< what is refused
        std::function<void()> setUp; //!< does it (throws)
        std::string parameter;       //!< the message names it
        std::string value;           //!< and the value
    };

    const Case cases[] = {
        {"an unknown algorithm",
         [] {
             Config::SetDefault("ns3::PacketTransport::CongestionControl", StringValue("cubic"));
             CreateObject<PacketTransport>();
         },
         "CongestionControl",
         "cubic"},
        // HPCC's eta outside (0, 1] is refused when a flow starts
        {"eta 1.2",
         [] {
             Config::SetDefault("ns3::HpccCongestionControl::Eta", DoubleValue(1.2));
             RunIncast("hpcc", 1, MicroSeconds(1), MicroSeconds(10), [](FabricHelper&) {});
         },
         "Eta",
         "1.2"},
        {"Kmin > Kmax", [&build] { build("EcnKmin", UintegerValue(2000)); }, "EcnKmin", "2000"},
        {"an unknown balancer",
         [&build] { build("LoadBalancing", StringValue("random")); },
         "LoadBalancing",
         "random"},
        {"Pmax 1.5", [&build] { build("EcnPmax", DoubleValue(1.5)); }, "EcnPmax", "1.5"},
    };
    for (const Case& c : cases)
    {
        SCOPED_TRACE(c.what);
        try
        {
            c.setUp();
            ADD_FAILURE() << c.what << " was taken";
        }
        catch (const FabricConfigError& e)
        {
            EXPECT_NE(std::string(e.what()).find(c.parameter), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(c.value), std::string::npos) << e.what();
        }
        Simulator::Destroy();
        Config::Reset();
    }
}

/// A permutation on a 1:1 three-tier fat-tree of 16 hosts (radix 4).
struct PermutationRun
{
    double makespan{0};          //!< last completion, seconds
    uint64_t flowBytes{0};       //!< per flow
    uint32_t hosts{0};           //!< flows
    uint32_t maxFlowsPerLink{0}; //!< flows sharing the busiest link (ECMP paths)
};

PermutationRun
RunPermutation(const std::string& lb, uint32_t seed, const std::string& cc = "none")
{
    Config::SetDefault("ns3::PacketTransport::CongestionControl", StringValue(cc));
    ClusterParams p;
    p.gpus = 16;
    p.radix = 4;
    p.platform = HbDomainPreset::Custom(1, DataRate(kRate), DataRate(kRate));
    p.linkDelayNs = 1000;
    FabricHelper helper;
    helper.SetSwitchAttribute("LoadBalancing", StringValue(lb));
    Ptr<Fabric> fabric = helper.Install(BuildFatTree(p));
    PermutationRun r;
    r.hosts = p.gpus;
    r.flowBytes = 8'000'000;
    std::mt19937_64 rng(seed);
    std::vector<uint32_t> order(r.hosts);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    // which flows cross each directed link: every port's sniffer sees the
    // flows whose packets it serializes
    std::map<const FabricNetDevice*, std::set<uint64_t>> flowsByPort;
    const auto& cables = fabric->GetTopology().Cables();
    for (uint32_t c = 0; c < cables.size(); ++c)
    {
        auto [a, b] = fabric->GetCableDevices(c);
        for (const Ptr<FabricNetDevice>& d : {a, b})
        {
            auto* set = &flowsByPort[PeekPointer(d)];
            d->TraceConnectWithoutContext("PhyTxBegin",
                                          MakeBoundCallback(
                                              +[](std::set<uint64_t>* s, Ptr<const Packet> pk) {
                                                  FabricHeader h;
                                                  pk->PeekHeader(h);
                                                  if ((h.flags & FabricHeader::kControlFlags) == 0)
                                                  {
                                                      s->insert((uint64_t{h.src} << 32) | h.dst);
                                                  }
                                              },
                                              set));
        }
    }
    Ptr<PacketTransport> transport = fabric->GetTransport();
    Time last;
    transport->TraceConnectWithoutContext(
        "MessageComplete",
        MakeBoundCallback(
            +[](Time* t, uint32_t, uint32_t, uint64_t, Time) { *t = Simulator::Now(); },
            &last));
    for (uint32_t i = 0; i < r.hosts; ++i)
    {
        transport->Send(order[i], order[(i + 1) % r.hosts], r.flowBytes, Transport::DoneCallback());
    }
    Simulator::Run();
    EXPECT_EQ(transport->GetTotals().messagesDelivered, r.hosts);
    r.makespan = last.GetSeconds();
    for (const auto& [port, flows] : flowsByPort)
    {
        r.maxFlowsPerLink = std::max<uint32_t>(r.maxFlowsPerLink, flows.size());
    }
    Simulator::Destroy();
    Config::Reset();
    return r;
}

/// A flow's time alone on the longest path of the fat-tree (six links):
/// its wire bytes at line rate, a packet's store and forward per further
/// hop, and the delays.
double
AloneOnSixHops(uint64_t bytes)
{
    const double wire = bytes * static_cast<double>(kFrame) / 4096;
    return (wire + 5 * kFrame) * 8 / static_cast<double>(kRate) + 6 * 1e-6;
}

TEST_F(CongestionControlTest, SprayingAndAdaptiveRoutingReachLineRateOnAOneToOneFatTree)
{
    for (const std::string lb : {"spray", "adaptive"})
    {
        const PermutationRun r = RunPermutation(lb, 3);
        const double alone = AloneOnSixHops(r.flowBytes);
        std::printf("%s: makespan %.1f us, alone %.1f us, %.3f of line rate\n",
                    lb.c_str(),
                    r.makespan * 1e6,
                    alone * 1e6,
                    alone / r.makespan);
        EXPECT_GT(alone / r.makespan, 0.95) << lb;
    }
}

TEST_F(CongestionControlTest, PerFlowEcmpTakesWhatItsCollisionsPredict)
{
    // with one path per flow, the flows of the busiest link share it: the
    // permutation ends when they have, maxFlowsPerLink x one flow's time
    for (const std::string cc : {"none", "dctcp"})
    {
        const PermutationRun r = RunPermutation("ecmp", 3, cc);
        const double alone = AloneOnSixHops(r.flowBytes);
        std::printf("%s ", cc.c_str());
        std::printf("ecmp: makespan %.1f us, busiest link %u flows, predicted %.1f us\n",
                    r.makespan * 1e6,
                    r.maxFlowsPerLink,
                    r.maxFlowsPerLink * alone * 1e6);
        ASSERT_GT(r.maxFlowsPerLink, 1u); // this seed collides
        const double predicted = r.maxFlowsPerLink * alone;
        if (cc == "none")
        {
            // line-rate senders: PFC's head-of-line blocking slows flows that
            // do not share the busiest link too; nothing beats the share
            EXPECT_GT(r.makespan, 0.99 * predicted);
        }
        else
        {
            EXPECT_NEAR(r.makespan, predicted, 0.1 * predicted);
        }
    }
}

} // namespace

namespace
{

/// Corrupts the first copy of one packet of a message (by sequence number).
class DropOnePacket : public ErrorModel
{
  public:
    uint32_t sequence{0}; //!< the packet to drop
    bool done{false};     //!< it was dropped

  private:
    bool DoCorrupt(Ptr<Packet> p) override
    {
        FabricHeader h;
        p->PeekHeader(h);
        if (done || (h.flags & FabricHeader::kControlFlags) != 0 || h.sequence != sequence)
        {
            return false;
        }
        done = true;
        return true;
    }

    void DoReset() override
    {
        done = false;
    }
};

/// What one message 0 -> 1 over a star did with one packet dropped.
struct NackRun
{
    Time done;              //!< its completion
    uint64_t nacks{0};      //!< NACKs sent
    uint64_t resent{0};     //!< packets resent
    uint64_t discarded{0};  //!< packets the receiver discarded
    uint64_t lost{0};       //!< losses the fabric reported
    uint64_t nackFrames{0}; //!< NACK frames serialized, every port
};

/**
 * One message of \p packets full packets from GPU 0 to GPU 1 of a two-GPU
 * star (16 Gb/s: a 4,122-byte frame takes 2,061 ns and a 64-byte one 32 ns,
 * 1 us links), GPU 1's port dropping the first copy of packet \p drop
 * (none if \p drop >= packets), each packet picked as the wire frees
 * (TxFifoPackets 0).
 */
NackRun
RunNack(uint32_t packets, uint32_t drop, const std::string& lb)
{
    Config::SetDefault("ns3::PacketTransport::Nack", BooleanValue(true));
    Config::SetDefault("ns3::PacketTransport::TxFifoPackets", UintegerValue(0));
    FabricHelper helper;
    helper.SetSwitchAttribute("LoadBalancing", StringValue(lb));
    Ptr<Fabric> fabric = helper.Install(Star(2, 16'000'000'000ULL, 1000));
    Ptr<PacketTransport> t = fabric->GetTransport();
    Ptr<DropOnePacket> em = CreateObject<DropOnePacket>();
    em->sequence = drop;
    fabric->GetCableDevices(1).first->SetReceiveErrorModel(em);
    NackRun r;
    uint64_t nackFrames = 0;
    for (uint32_t c = 0; c < 2; ++c)
    {
        auto [a, b] = fabric->GetCableDevices(c);
        for (const Ptr<FabricNetDevice>& d : {a, b})
        {
            d->TraceConnectWithoutContext("PhyTxBegin",
                                          MakeBoundCallback(
                                              +[](uint64_t* n, Ptr<const Packet> p) {
                                                  FabricHeader h;
                                                  p->PeekHeader(h);
                                                  *n += (h.flags & FabricHeader::kFlagNack) != 0;
                                              },
                                              &nackFrames));
        }
    }
    const uint64_t bytes = uint64_t{packets} * t->GetPayloadPerPacket();
    t->Send(0, 1, bytes, Transport::DoneCallback([&r] { r.done = Simulator::Now(); }));
    Simulator::Run();
    EXPECT_EQ(t->GetTotals().bytesDelivered, bytes);
    r.nacks = t->GetNacksSent();
    r.resent = t->GetRetransmissions();
    r.discarded = t->GetDiscardedPackets();
    r.lost = t->GetLostPackets();
    r.nackFrames = nackFrames;
    Simulator::Destroy();
    Config::Reset();
    return r;
}

constexpr int64_t kNackFrameNs = 2061; //!< a 4,122-byte frame at 16 Gb/s
constexpr int64_t kNackCtlNs = 32;     //!< a 64-byte control frame
constexpr int64_t kNackDelayNs = 1000;

/// Completion of n back-to-back packets over the star: the last one's two
/// serializations and two delays.
Time
BackToBack(uint64_t n)
{
    return NanoSeconds((n + 1) * kNackFrameNs + 2 * kNackDelayNs);
}

TEST_F(CongestionControlTest, ANackMakesTheSenderGoBackNFromTheLostPacket)
{
    const uint32_t m = 64;
    const uint32_t k = 10;
    // without a loss: M packets back to back, nothing resent, no NACK
    const NackRun clean = RunNack(m, m, "ecmp");
    EXPECT_EQ(clean.done, BackToBack(m));
    EXPECT_EQ(clean.nacks + clean.resent + clean.discarded, 0u);
    // Packet k is lost at GPU 1; packet k + 1 arrives at (k + 3) s + 2 d,
    // is discarded (in-order path) and the NACK reaches GPU 0 2 (c + d)
    // later, at T. GPU 0 has then picked the packets j s <= T and goes back
    // to k: R = floor(T / s) + 1 - k = 4 + floor((4 d + 2 c) / s) resends,
    // the wire busy throughout (M + R packets back to back), the R - 1
    // packets after k discarded once each; the timer finds k resent.
    const NackRun r = RunNack(m, k, "ecmp");
    const uint64_t resends = 4 + (4 * kNackDelayNs + 2 * kNackCtlNs) / kNackFrameNs;
    EXPECT_EQ(resends, 5u);
    EXPECT_EQ(r.nacks, 1u);
    EXPECT_EQ(r.nackFrames, 2u); // serialized by GPU 1 and by the switch
    EXPECT_EQ(r.lost, 1u);
    EXPECT_EQ(r.resent, resends);
    EXPECT_EQ(r.discarded, resends - 1);
    EXPECT_EQ(r.done, BackToBack(m + resends));
}

TEST_F(CongestionControlTest, ATailLossWaitsForTheRetransmissionTimer)
{
    // the last packet lost: nothing follows it to show the gap, so no NACK;
    // it is resent RetransmitTimeout (100 us) after its loss, at (M + 1) s + 2 d
    const uint32_t m = 16;
    const NackRun r = RunNack(m, m - 1, "ecmp");
    EXPECT_EQ(r.nacks, 0u);
    EXPECT_EQ(r.resent, 1u);
    EXPECT_EQ(r.discarded, 0u);
    EXPECT_EQ(r.done, BackToBack(m) + MicroSeconds(100) + BackToBack(1));
}

TEST_F(CongestionControlTest, WhereThePathMayReorderANackWaitsForTheGapToPersist)
{
    // A spraying switch: the receiver keeps what follows the gap and sends
    // the NACK only NackReorderDelay (20 us) after the gap opened, T = (k +
    // 3) s + 2 d + 20 us + 2 (c + d); going back N from k then resends what
    // arrived already (discarded as duplicates).
    const uint32_t m = 64;
    const uint32_t k = 10;
    const NackRun r = RunNack(m, k, "spray");
    const int64_t nackAt = (k + 3) * kNackFrameNs + 4 * kNackDelayNs + 20'000 + 2 * kNackCtlNs;
    const uint64_t resends = nackAt / kNackFrameNs + 1 - k;
    EXPECT_EQ(resends, 15u);
    EXPECT_EQ(r.nacks, 1u);
    EXPECT_EQ(r.resent, resends);
    EXPECT_EQ(r.discarded, resends - 1);
    EXPECT_EQ(r.done, BackToBack(m + resends));
}

} // namespace

namespace
{

TEST_F(CongestionControlTest, TheFlowletTableIsBoundedAndForgetsTheLeastRecentFlow)
{
    // a flowlet switch with four equal-cost ports to rank 0 and room for two
    // flows: a third flow evicts the one seen least recently, not the oldest
    // added; every flow keeps its port while it stays in the table
    Config::SetDefault("ns3::FabricSwitch::LoadBalancing", StringValue("flowlet"));
    Config::SetDefault("ns3::FabricSwitch::FlowletTableSize", UintegerValue(2));
    Ptr<FabricSwitch> sw = CreateObject<FabricSwitch>();
    for (int i = 0; i < 4; ++i)
    {
        sw->AddPort(CreateObject<FabricNetDevice>());
    }
    FabricRoutingTable table(1);
    table.Append(0, {0, 1, 2, 3});
    sw->SetRoutingTable(table);
    std::array<FabricHeaderData, 3> flow{};
    for (uint32_t i = 0; i < flow.size(); ++i)
    {
        flow[i].src = i + 1;
        flow[i].flowLabel = static_cast<uint16_t>(7 * i);
    }
    const auto at = [&sw](const FabricHeaderData& h, Time t) {
        uint32_t port = 0;
        Simulator::Schedule(t, [&sw, &port, h] { port = sw->SelectPort(h)->GetPortIndex(); });
        Simulator::Run();
        return port;
    };
    const uint32_t a = at(flow[0], NanoSeconds(10));
    at(flow[1], NanoSeconds(20));
    EXPECT_EQ(at(flow[0], NanoSeconds(30)), a); // within the gap: the same port
    EXPECT_EQ(sw->GetFlowletCount(), 2u);
    at(flow[2], NanoSeconds(40)); // full: flow 1 (seen at 20 ns) goes
    EXPECT_EQ(sw->GetFlowletCount(), 2u);
    EXPECT_TRUE(sw->HasFlowlet(flow[0]));
    EXPECT_FALSE(sw->HasFlowlet(flow[1]));
    EXPECT_TRUE(sw->HasFlowlet(flow[2]));
    EXPECT_EQ(at(flow[0], NanoSeconds(50)), a);
    // the default holds 64 K flows
    Config::Reset();
    UintegerValue size;
    CreateObject<FabricSwitch>()->GetAttribute("FlowletTableSize", size);
    EXPECT_EQ(size.Get(), 65536u);
}

} // namespace

namespace
{

TEST_F(CongestionControlTest, HpccTakesItsAdditiveIncreaseFromThePapersRule)
{
    // W_AI = W_init (1 - eta) / N, W_init = line rate x T: 100 Gb/s x 8 us =
    // 100 kB, eta 0.95, N = 100 -> 50 B
    const auto ai = [](const char* rate) {
        Ptr<HpccCongestionControl> cc = CreateObject<HpccCongestionControl>();
        cc->Start(DataRate(rate), 4000);
        return cc->GetAdditiveIncrease();
    };
    EXPECT_NEAR(ai("100Gbps"), 50.0, 1e-9);
    EXPECT_NEAR(ai("400Gbps"), 200.0, 1e-9); // it scales with the window
    // N = 125: the paper's simulations, RATE_AI = 40 Mb/s at 100 Gb/s in
    // HPCC's simulator (run.py), 40 Mb/s x 8 us = 40 B
    Config::SetDefault("ns3::HpccCongestionControl::ExpectedFlows", UintegerValue(125));
    EXPECT_NEAR(ai("100Gbps"), 40e6 / 8 * 8e-6, 1e-9);
    Config::SetDefault("ns3::HpccCongestionControl::ExpectedFlows", UintegerValue(8));
    Config::SetDefault("ns3::HpccCongestionControl::Eta", DoubleValue(0.9));
    EXPECT_NEAR(ai("100Gbps"), 100'000 * 0.1 / 8, 1e-9);
    // RateAi, when set, is W_AI / T instead
    Config::SetDefault("ns3::HpccCongestionControl::RateAi", DataRateValue(DataRate("1Gbps")));
    EXPECT_NEAR(ai("100Gbps"), 1e9 / 8 * 8e-6, 1e-9);
}

} // namespace

namespace
{

/// Rail-only with 4 HB domains of 4 GPUs and 100 Gb/s NICs: GPU g sits in
/// domain g / 4 on rail g % 4.
constexpr uint32_t kRelayK = 4;
/// The incast's destination: domain 3, rail 0.
constexpr uint32_t kRelayDst = 12;

/// What an incast of relayed cross-rail flows into kRelayDst did.
struct RelayedIncast
{
    double meanQueue{0};              //!< the destination's rail-switch egress, time-weighted
    uint64_t maxQueue{0};             //!< its largest backlog, bytes
    uint64_t railPauses{0};           //!< pause frames sent on NIC cables (the rail network)
    std::vector<uint64_t> relayRates; //!< each relay's pacing rate mid-run (0: no flow)
    bool sourceFlows{false};          //!< a source runs a flow of its own to the destination
    Transport::Totals totals;         //!< messages and bytes sent and delivered
    uint64_t packets{0};              //!< data packets delivered
    uint64_t acks{0};                 //!< ACKs sent
    uint64_t cnps{0};                 //!< CNPs sent
    uint64_t controlDelivered{0};     //!< ACKs and CNPs delivered
    uint64_t relayedCc{0};            //!< relayed packets sent under a relay's flow
    uint64_t relayControl{0};         //!< ACKs and CNPs that reached a relay's flow
    uint32_t payload{0};              //!< payload bytes per packet
    uint64_t dropped{0};              //!< data packets the destination's port dropped
    uint64_t resent{0};               //!< packets resent
};

/// Drops every n-th data packet a port receives (retransmissions count too).
class DropEveryNth : public ErrorModel
{
  public:
    uint32_t n{0};       //!< 0: none
    uint64_t seen{0};    //!< data packets seen
    uint64_t dropped{0}; //!< of which dropped

  private:
    bool DoCorrupt(Ptr<Packet> p) override
    {
        FabricHeader h;
        p->PeekHeader(h);
        if (n == 0 || (h.flags & FabricHeader::kControlFlags) != 0 || ++seen % n != 0)
        {
            return false;
        }
        ++dropped;
        return true;
    }

    void DoReset() override
    {
    }
};

/// The relays: rail 0 of domains 0-2 (the destination's rail).
const std::vector<uint32_t> kRelays{0, kRelayK, 2 * kRelayK};

/// The relayed-traffic fabric: rail-only, 4 HB domains of kRelayK GPUs
/// (3600 Gb/s NVLink, kRate NICs, 2 planes), 1 us cables.
FabricTopology
BuildRelayRailOnly()
{
    ClusterParams p;
    p.gpus = 4 * kRelayK;
    p.platform = HbDomainPreset::Custom(kRelayK, DataRate("3600Gbps"), DataRate(kRate), 2);
    p.linkDelayNs = 1000;
    return BuildRailOnly(p);
}

/// \p topo with congestion control \p cc and DCQCN's RED marking.
Ptr<Fabric>
InstallRelayFabric(const std::string& cc, const FabricTopology& topo)
{
    Config::SetDefault("ns3::PacketTransport::CongestionControl", StringValue(cc));
    FabricHelper helper;
    DcqcnMarking(helper);
    return helper.Install(topo);
}

/**
 * Every GPU of domains 0-2 off rail 0 (9 sources) sends \p bytes to
 * kRelayDst: each message crosses NVLink to its domain's GPU on rail 0,
 * which relays it over the rail; three relays meet at the destination's rail
 * switch port. The queue there is measured over [from, until]; the run goes
 * on until every message is delivered. \p dropEvery > 0: the destination's
 * NIC loses every that many data packets it receives.
 */
RelayedIncast
RunRelayedIncast(const std::string& cc,
                 uint64_t bytes,
                 Time from,
                 Time until,
                 uint32_t dropEvery = 0)
{
    Ptr<Fabric> fabric = InstallRelayFabric(cc, BuildRelayRailOnly());
    RelayedIncast r;
    Ptr<DropEveryNth> loss = CreateObject<DropEveryNth>();
    loss->n = dropEvery;
    Ptr<PacketTransport> transport = fabric->GetTransport();
    r.payload = transport->GetPayloadPerPacket();
    const FabricTopology& topo = fabric->GetTopology();
    const auto& cables = topo.Cables();
    Ptr<FabricNetDevice> bottleneck;
    for (uint32_t c = 0; c < cables.size(); ++c)
    {
        if (cables[c].kind == TopoLinkKind::Nic &&
            (cables[c].a == topo.GpuVertex(kRelayDst) || cables[c].b == topo.GpuVertex(kRelayDst)))
        {
            auto [a, b] = fabric->GetCableDevices(c);
            bottleneck = cables[c].a == topo.GpuVertex(kRelayDst) ? b : a; // the switch's end
            (cables[c].a == topo.GpuVertex(kRelayDst) ? a : b)->SetReceiveErrorModel(loss);
        }
    }
    EXPECT_TRUE(bottleneck);
    QueueMeter meter{from, until, Time(0), 0, 0};
    bottleneck->TraceConnectWithoutContext("QueueBytes", MakeCallback(&QueueMeter::Change, &meter));
    std::vector<uint32_t> sources;
    for (uint32_t g = 0; g < 3 * kRelayK; ++g)
    {
        if (g % kRelayK != 0)
        {
            sources.push_back(g);
            transport->Send(g, kRelayDst, bytes, Transport::DoneCallback());
        }
    }
    Simulator::Schedule(NanoSeconds((from + until).GetNanoSeconds() / 2),
                        [&r, &transport, &sources] {
                            for (uint32_t relay : kRelays)
                            {
                                const Ptr<FabricCongestionControl> f =
                                    transport->GetFlowControl(relay, kRelayDst);
                                r.relayRates.push_back(f ? f->GetRate() : 0);
                            }
                            for (uint32_t s : sources)
                            {
                                r.sourceFlows |= transport->GetFlowControl(s, kRelayDst) != nullptr;
                            }
                        });
    Simulator::Run();
    meter.Advance();
    r.meanQueue = meter.integral / (until - from).GetSeconds();
    r.maxQueue = bottleneck->GetStats().maxQueueBytes;
    for (uint32_t c = 0; c < cables.size(); ++c)
    {
        if (cables[c].kind != TopoLinkKind::NvLink)
        {
            auto [a, b] = fabric->GetCableDevices(c);
            r.railPauses += a->GetStats().pausesSent + b->GetStats().pausesSent;
        }
    }
    r.totals = transport->GetTotals();
    r.packets = transport->GetPacketsDelivered();
    r.acks = transport->GetAcksSent();
    r.cnps = transport->GetCnpsSent();
    r.controlDelivered = transport->GetControlPacketsDelivered();
    r.relayedCc = transport->GetRelayedCcPackets();
    r.relayControl = transport->GetRelayControlPackets();
    r.dropped = loss->dropped;
    r.resent = transport->GetRetransmissions();
    Simulator::Destroy();
    Config::Reset();
    return r;
}

TEST_F(CongestionControlTest, RelaysRunTheCongestionControlOfRailOnlysCrossRailTraffic)
{
    // 9 sources x 12 MB through 3 relays into one 100 Gb/s port: 8.6 ms at
    // line rate; the queue is measured over 1-8 ms
    const uint64_t bytes = 12'000'000;
    const auto run = [bytes](const std::string& cc) {
        return RunRelayedIncast(cc, bytes, MilliSeconds(1), MilliSeconds(8));
    };
    const RelayedIncast none = run("none");
    const RelayedIncast dcqcn = run("dcqcn");
    for (const RelayedIncast* r : {&none, &dcqcn})
    {
        std::printf("relayed incast, %s: queue %.0f B (max %lu B), rail pauses %lu, relay rates "
                    "%lu %lu %lu b/s, %lu relayed packets under a relay's flow, %lu ACKs, %lu "
                    "CNPs, %lu control packets at relays\n",
                    r == &none ? "none" : "dcqcn",
                    r->meanQueue,
                    r->maxQueue,
                    r->railPauses,
                    r->relayRates[0],
                    r->relayRates[1],
                    r->relayRates[2],
                    r->relayedCc,
                    r->acks,
                    r->cnps,
                    r->relayControl);
    }
    // every byte arrives, in packets of the payload (no loss: PFC is on)
    const uint64_t perMessage = (bytes + dcqcn.payload - 1) / dcqcn.payload;
    for (const RelayedIncast* r : {&none, &dcqcn})
    {
        EXPECT_EQ(r->totals.messagesSent, 9u);
        EXPECT_EQ(r->totals.messagesDelivered, 9u);
        EXPECT_EQ(r->totals.bytesDelivered, r->totals.bytesSent);
        EXPECT_EQ(r->totals.bytesSent, 9 * bytes);
        EXPECT_EQ(r->packets, 9 * perMessage);
        EXPECT_FALSE(r->sourceFlows); // the first hop is NVLink: not the source's
    }
    // none: line-rate relays, no control packets, no flow anywhere
    EXPECT_EQ(none.acks + none.cnps + none.controlDelivered + none.relayedCc, 0u);
    EXPECT_EQ(none.relayRates, std::vector<uint64_t>(3, 0));
    // dcqcn: every data packet left its relay under the relay's flow, and
    // every control packet went back to a relay (no other flow exists)
    EXPECT_EQ(dcqcn.relayedCc, dcqcn.packets);
    EXPECT_EQ(dcqcn.acks, dcqcn.packets); // AckEvery 1
    EXPECT_GT(dcqcn.cnps, 0u);
    EXPECT_EQ(dcqcn.relayControl, dcqcn.controlDelivered);
    EXPECT_EQ(dcqcn.controlDelivered, dcqcn.acks + dcqcn.cnps); // lossless: all arrive
    // the relays were cut: each well under line rate mid-run (a third of the
    // port is the fair share)
    for (uint64_t rate : dcqcn.relayRates)
    {
        EXPECT_GT(rate, 0u);
        EXPECT_LT(rate, kRate / 2);
    }
    // Line-rate relays fill the bottleneck until PFC holds each of its 3
    // ingress ports between PfcXon and PfcXoff (96-128 KiB): the egress
    // queue stays above 3 x 96 KiB all run. DCQCN's relays are cut by the
    // CNPs of the start (at line rate, when the only pauses happen) and
    // climb back toward the fluid model's fixed point for 3 flows (the star
    // incast's test) from below: the queue stays under that point's RED
    // queue, itself a quarter of PFC's, and the pauses are the start's.
    const double p = DcqcnFixedPointP(3, kRate, kFrame);
    const double fixedPointQueue = 5'000 + p / 0.01 * (200'000 - 5'000);
    std::printf("dcqcn's fixed point for 3 flows: p* %.5f, queue %.0f B\n", p, fixedPointQueue);
    EXPECT_GT(none.meanQueue, 3 * 96 * 1024);
    EXPECT_LT(fixedPointQueue * 4, 3 * 96 * 1024);
    EXPECT_LT(dcqcn.meanQueue, fixedPointQueue);
    ASSERT_GT(none.railPauses, 0u);
    EXPECT_LE(dcqcn.railPauses * 10, none.railPauses);
}

TEST_F(CongestionControlTest, HpccRelaysStampTheirOwnTelemetry)
{
    // HPCC's window needs INT from the relay's leg: with the relays' own
    // send times and records the queue stays near zero, no pause
    const uint64_t bytes = 2'000'000;
    const RelayedIncast r = RunRelayedIncast("hpcc", bytes, MicroSeconds(300), MilliSeconds(1));
    std::printf("relayed incast, hpcc: queue %.0f B (max %lu B), rail pauses %lu, relay rates "
                "%lu %lu %lu b/s\n",
                r.meanQueue,
                r.maxQueue,
                r.railPauses,
                r.relayRates[0],
                r.relayRates[1],
                r.relayRates[2]);
    EXPECT_EQ(r.totals.messagesDelivered, 9u);
    EXPECT_EQ(r.totals.bytesDelivered, 9 * bytes);
    EXPECT_EQ(r.relayedCc, r.packets);
    EXPECT_EQ(r.relayControl, r.controlDelivered);
    EXPECT_GT(r.relayControl, 0u);
    EXPECT_LT(r.meanQueue, 2.0 * kFrame);
    EXPECT_EQ(r.railPauses, 0u);
}

TEST_F(CongestionControlTest, ARelayedPacketLostOnTheRailLeavesTheRelaysWindow)
{
    // every 50th packet lost at the destination (about 30 per relay, 120 kB,
    // more than HPCC's window of a third of the 100 kB path): the bytes of
    // each loss must leave its relay's flow, or the window would stay full
    // and the run hang; the sources resend them (not controlled at the
    // source), and every byte arrives
    const uint64_t bytes = 2'000'000;
    const RelayedIncast r = RunRelayedIncast("hpcc", bytes, MicroSeconds(300), MilliSeconds(1), 50);
    std::printf("relayed incast, hpcc, 1 in 50 lost: %lu dropped, %lu resent, %lu relayed packets "
                "under a relay's flow\n",
                r.dropped,
                r.resent,
                r.relayedCc);
    EXPECT_EQ(r.totals.messagesDelivered, 9u);
    EXPECT_EQ(r.totals.bytesDelivered, 9 * bytes);
    EXPECT_GT(r.dropped, 3 * 8u);
    EXPECT_EQ(r.resent, r.dropped);
    // every first send and every resend left a relay under its flow
    EXPECT_EQ(r.relayedCc, r.packets + r.dropped);
}

/// What a relayed incast did when a relay's NIC cable went down mid-run.
struct RelayFailure
{
    Transport::Totals totals;                   //!< messages and bytes sent and delivered
    std::vector<TransportMessageReport> failed; //!< the MessageFailed reports, in order
    uint64_t failedTraced{0};                   //!< MessageFailed trace calls
    uint64_t packets{0};                        //!< data packets the transport delivered
    uint64_t arrivals{0};  //!< data packets of the messages that reached the destination
    uint64_t distinct{0};  //!< of which distinct (source, message, sequence)
    uint64_t lost{0};      //!< packets the transport heard were lost
    uint64_t resent{0};    //!< packets resent
    uint64_t relayedCc{0}; //!< relayed packets sent under a relay's flow
    uint32_t payload{0};   //!< payload bytes per packet
    Time end;              //!< when the last message was delivered or failed
    bool drained{false};   //!< no event was left at the guard
    /// packets dropped for lack of a route: (vertex, time) of each
    std::vector<std::pair<uint32_t, Time>> noRoute;
    uint64_t keptRoutes{0}; //!< withdrawn switch routes the last routing update kept
};

/**
 * The relayed incast of RunRelayedIncast (9 sources of domains 0-2 into
 * kRelayDst through the relays on rail 0) with \p cc, and relay 0's NIC
 * cable down at \p at (detected 50 us later) and, if \p repairAt is later,
 * up again then; \p hbDomainRelay: whether traffic that lost its network
 * path is relayed through the HB domains.
 */
RelayFailure
RunRelayFailure(const std::string& cc,
                uint64_t bytes,
                Time at,
                bool hbDomainRelay,
                Time repairAt = Time(0))
{
    const FabricTopology topo = BuildRelayRailOnly();
    Ptr<Fabric> fabric = InstallRelayFabric(cc, topo);
    FaultHelper faults(fabric);
    faults.SetHbDomainRelay(hbDomainRelay);
    uint32_t relayNic = UINT32_MAX;
    for (uint32_t c : FaultHelper::CablesOf(topo, topo.GpuVertex(kRelays[0])))
    {
        if (topo.Cables()[c].kind == TopoLinkKind::Nic)
        {
            relayNic = c;
        }
    }
    EXPECT_NE(relayNic, UINT32_MAX);
    faults.LinkDown(relayNic, at);
    if (repairAt > at)
    {
        faults.LinkUp(relayNic, repairAt);
    }
    Ptr<PacketTransport> transport = fabric->GetTransport();
    RelayFailure r;
    r.payload = transport->GetPayloadPerPacket();
    // every data packet of the incast that reaches the destination GPU, by
    // any of its ports (the rail, or NVLink from a GPU that relayed it)
    using Key = std::tuple<uint32_t, uint32_t, uint32_t>;
    std::map<Key, uint32_t> arrivals;
    for (uint32_t c : FaultHelper::CablesOf(topo, topo.GpuVertex(kRelayDst)))
    {
        auto [a, b] = fabric->GetCableDevices(c);
        (topo.Cables()[c].a == topo.GpuVertex(kRelayDst) ? a : b)
            ->TraceConnectWithoutContext(
                "MacRx",
                MakeBoundCallback(
                    +[](std::map<Key, uint32_t>* seen, Ptr<const Packet> packet) {
                        FabricHeader h;
                        packet->PeekHeader(h);
                        if (h.dst == kRelayDst && (h.flags & FabricHeader::kControlFlags) == 0)
                        {
                            ++(*seen)[Key{h.src, h.messageId, h.sequence}];
                        }
                    },
                    &arrivals));
    }
    // every packet a node dropped for lack of a route, where and when
    for (uint32_t v = 0; v < topo.GetNVertices(); ++v)
    {
        using Drops = std::vector<std::pair<uint32_t, Time>>;
        fabric->GetNodeOfVertex(v)->TraceConnectWithoutContext(
            "NoRouteDrop",
            MakeBoundCallback(
                +[](Drops* drops, uint32_t vertex, Ptr<const Packet>) {
                    drops->emplace_back(vertex, Simulator::Now());
                },
                &r.noRoute,
                v));
    }
    // when the last message was delivered or given up
    transport->TraceConnectWithoutContext(
        "MessageFailed",
        MakeBoundCallback(
            +[](RelayFailure* out, const Transport::MessageReport&) {
                ++out->failedTraced;
                out->end = Simulator::Now();
            },
            &r));
    for (uint32_t g = 0; g < 3 * kRelayK; ++g)
    {
        if (g % kRelayK != 0)
        {
            transport->Send(g,
                            kRelayDst,
                            bytes,
                            MakeBoundCallback(
                                +[](Time* end) { *end = Simulator::Now(); },
                                &r.end));
        }
    }
    // a guard far beyond the run: a hang would reach it with messages pending
    Simulator::Stop(Seconds(1));
    Simulator::Run();
    r.drained = Simulator::IsFinished();
    r.totals = transport->GetTotals();
    r.failed = transport->GetFailureReports();
    r.packets = transport->GetPacketsDelivered();
    r.lost = transport->GetLostPackets();
    r.resent = transport->GetRetransmissions();
    r.relayedCc = transport->GetRelayedCcPackets();
    r.keptRoutes = faults.GetInjector()->GetKeptRoutes();
    for (const auto& [key, n] : arrivals)
    {
        r.arrivals += n;
        ++r.distinct;
    }
    fabric->Dispose();
    Simulator::Destroy();
    Config::Reset();
    return r;
}

TEST_F(CongestionControlTest, ARelaysNicFailingMidRunMovesOrFailsItsMessagesWithEveryByteCounted)
{
    // 9 sources x 2 MB, 1.44 ms at the port's line rate. Relay 0 (domain 0,
    // rail 0) loses its NIC at 300 us: what it holds for its flow (NVLink
    // fills it far faster than its rate drains it) and what is on the wire
    // is lost, and leaves its flow; the routes change 50 us later. With
    // HB-domain relay, domain 0's sources resend every lost packet by a path
    // through another rail and every byte arrives once; without it their
    // three messages have no path left and fail with a report saying so,
    // while the 6 others arrive. Repaired 150 us later, the routes go back
    // through relay 0 and its flow carries the resends that follow, while
    // the packets already sent through other rails still arrive through
    // them. No hang, no byte counted twice: bytes sent = delivered + those
    // of failed messages.
    const uint64_t bytes = 2'000'000;
    for (const std::string cc : {"dcqcn", "hpcc"})
    {
        for (const auto& [hbDomainRelay, repairAt] : {std::pair{true, Time(0)},
                                                      std::pair{false, Time(0)},
                                                      std::pair{true, MicroSeconds(450)}})
        {
            const RelayFailure r =
                RunRelayFailure(cc, bytes, MicroSeconds(300), hbDomainRelay, repairAt);
            std::printf(
                "relayed incast, %s, relay 0's NIC down at 300 us%s, HB-domain relay %s: "
                "%lu of %lu messages delivered, %zu failed%s%s, %lu packets lost, %lu "
                "resent, %lu relayed under a relay's flow, the last message done at %.3f ms, "
                "%zu dropped for lack of a route, %lu withdrawn routes kept\n",
                cc.c_str(),
                repairAt.IsZero() ? "" : ", up at 450 us",
                hbDomainRelay ? "on" : "off",
                r.totals.messagesDelivered,
                r.totals.messagesSent,
                r.failed.size(),
                r.failed.empty() ? "" : ": ",
                r.failed.empty() ? "" : r.failed.front().reason.c_str(),
                r.lost,
                r.resent,
                r.relayedCc,
                r.end.GetSeconds() * 1e3,
                r.noRoute.size(),
                r.keptRoutes);
            for (const auto& [v, t] : r.noRoute)
            {
                std::printf("  no route at vertex %u at %.3f us\n", v, t.GetSeconds() * 1e6);
            }
            const std::string what = cc + (hbDomainRelay ? ", relay on" : ", relay off") +
                                     (repairAt.IsZero() ? "" : ", repaired");
            // no hang: every message is delivered or given up, and nothing
            // (a timer, a blocked flow's wake-up) runs on to the guard
            EXPECT_TRUE(r.drained) << what;
            EXPECT_LT(r.end, MilliSeconds(10)) << what;
            EXPECT_EQ(r.totals.messagesSent, 9u) << what;
            EXPECT_EQ(r.totals.messagesDelivered + r.failed.size(), 9u) << what;
            EXPECT_EQ(r.failedTraced, r.failed.size()) << what;
            uint64_t failedBytes = 0;
            for (const TransportMessageReport& f : r.failed)
            {
                failedBytes += f.bytes;
                EXPECT_LT(f.delivered, f.bytes) << what;
                EXPECT_EQ(f.dst, kRelayDst) << what;
                EXPECT_LT(f.src, kRelayK) << what << ": only domain 0 lost its relay";
                EXPECT_NE(f.reason.find("no path left"), std::string::npos)
                    << what << ": " << f.reason;
            }
            EXPECT_EQ(r.totals.bytesSent, r.totals.bytesDelivered + failedBytes) << what;
            EXPECT_EQ(r.totals.bytesDelivered, r.totals.messagesDelivered * bytes) << what;
            // each packet reached the destination once: a lost one was resent
            // once, and none that arrived was sent again
            EXPECT_EQ(r.arrivals, r.distinct) << what;
            EXPECT_GE(r.distinct, r.packets)
                << what;                   // stragglers of failed messages are not delivered
            EXPECT_GT(r.lost, 0u) << what; // the relay's queue and wire went down with it
            // No packet is dropped for lack of a route. The failure's update
            // withdraws only routes that lead nowhere now (over the dead
            // cable, or to relay 0, which has no way out): none is kept.
            // The repair's withdraws the relay routes of rail switches 1-3
            // to the 4 GPUs of rail 0 (relay 0 and the 3 others, which
            // domain 0 reached only through it) via the destination
            // domain's GPU on their rail, which still lead there: those 3 x
            // 4 are kept for the packets the sources had already queued on
            // them (345 with DCQCN, 333 with HPCC, all dropped on arrival
            // at the rail switches in the 45 us after the update before
            // routes were kept).
            EXPECT_TRUE(r.noRoute.empty()) << what;
            EXPECT_EQ(r.keptRoutes, repairAt.IsZero() ? 0u : (kRelayK - 1) * 4u) << what;
            if (hbDomainRelay)
            {
                EXPECT_TRUE(r.failed.empty()) << what << ": " << r.failed.front().ToString();
                const uint64_t perMessage = (bytes + r.payload - 1) / r.payload;
                EXPECT_EQ(r.packets, 9 * perMessage) << what;
                EXPECT_EQ(r.resent, r.lost) << what;
            }
            else
            {
                EXPECT_EQ(r.failed.size(), kRelayK - 1) << what;
            }
        }
    }
}

} // namespace
