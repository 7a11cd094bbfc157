/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// bench/fabric-throughput: a random permutation of one flow per host on a
// three-tier fat-tree (by default 1024 hosts, radix 16, 100 Gb/s, 1 us per
// hop, ECMP), packet level. Prints wall time, events, packets, events per
// wall second, the rate of a bare ns-3 scheduler event loop measured in the
// same run, their ratio (cost of one simulated event in bare events), and
// peak memory. Figures are printed, never asserted. The run's scheduler is
// the module's FabricLookaheadScheduler, as in every program of the module
// (--SchedulerType=ns3::MapScheduler: ns-3's default). The ratio's bare
// event is always ns-3's default scheduler's, a fixed yardstick that no
// choice of scheduler moves; on another scheduler the bare loop also runs on
// it, and that ratio is printed beside.
#include "program-support.h"

#include "ns3/congestion-control.h"
#include "ns3/core-module.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-helper.h"
#include "ns3/fabric-switch.h"
#include "ns3/program-flags.h"
#include "ns3/topology-builders.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <sys/resource.h>

using namespace ns3;

namespace
{

/// One chain of the bare loop: reschedules itself until the budget is spent.
struct BareLoop
{
    uint64_t left{0};

    void Tick(uint32_t delayNs)
    {
        if (left == 0)
        {
            return;
        }
        --left;
        Simulator::Schedule(NanoSeconds(delayNs), &BareLoop::Tick, this, delayNs);
    }
};

/**
 * Samples how many events wait in the scheduler during the fabric run, so
 * that the bare loop is measured with a queue of the same size (a scheduler
 * event costs more in a bigger, colder queue). ns-3 has no getter for the
 * queue size; every scheduled event takes the next uid, so the pending count
 * is (uid of a new event - events executed) up to a constant, which is read
 * off once the run has drained the queue.
 */
struct PendingSampler
{
    Ptr<PacketTransport> transport;
    Time period;
    std::vector<std::pair<uint64_t, uint64_t>> samples; //!< (uid, executed)
    uint64_t ticks{0};                                  //!< sampler events executed
    Time lastCompletion;                                //!< when the last message completed

    void Completed(uint32_t, uint32_t, uint64_t, Time)
    {
        lastCompletion = Simulator::Now();
    }

    void Tick()
    {
        ++ticks;
        if (transport->GetPendingMessages() == 0)
        {
            return; // the workload is done: stop, or the run never ends
        }
        const EventId next = Simulator::Schedule(period, &PendingSampler::Tick, this);
        samples.emplace_back(next.GetUid(), Simulator::GetEventCount());
    }

    /// \return the mean number of pending events, the sampler's own excluded
    double MeanPending() const
    {
        // after the run nothing is pending: the probe's uid fixes the offset
        const EventId probe = Simulator::Schedule(Seconds(0), [] {});
        const double offset =
            static_cast<double>(probe.GetUid()) - static_cast<double>(Simulator::GetEventCount());
        Simulator::Cancel(probe);
        if (samples.empty())
        {
            return 0;
        }
        double sum = 0;
        for (const auto& [uid, executed] : samples)
        {
            // minus one: the sampler's own next tick
            sum += static_cast<double>(uid) - static_cast<double>(executed) - offset - 1;
        }
        return sum / samples.size();
    }
};

/// Events per wall second of a bare self-rescheduling loop with `pending`
/// events in the queue, the same build as the fabric run, on the scheduler
/// of SchedulerType or, if given, on \p scheduler.
double
BareSchedulerRate(uint32_t pending, uint64_t events, const std::string& scheduler = "")
{
    if (!scheduler.empty())
    {
        Simulator::SetScheduler(ObjectFactory(scheduler));
    }
    BareLoop loop;
    loop.left = events;
    for (uint32_t i = 0; i < pending; ++i)
    {
        // co-prime-ish delays spread the chains over time like packet events
        Simulator::Schedule(NanoSeconds(1 + i % 997), &BareLoop::Tick, &loop, 300 + i % 61);
    }
    const double t0 = WallSeconds();
    Simulator::Run();
    const double wall = WallSeconds() - t0;
    const uint64_t executed = Simulator::GetEventCount();
    Simulator::Destroy();
    return executed / wall;
}

/// ns-3's default scheduler, whose bare event is the ratio's yardstick.
const std::string kMapScheduler = "ns3::MapScheduler";

/// The bare loop's rates: on ns-3's map (the ratio's yardstick) and on the
/// run's scheduler (the map's rate again when the run is on the map).
struct BareRates
{
    double map; //!< events per wall second on ns3::MapScheduler
    double own; //!< the same on the run's scheduler
};

/// \param pending events in the queue \param events events to run
/// \param other whether the run's scheduler is another than the map
/// \return the bare loop's rates (one loop on the map, two otherwise)
BareRates
MeasureBareRates(uint32_t pending, uint64_t events, bool other)
{
    const double own = other ? BareSchedulerRate(pending, events) : 0.0;
    const double map = BareSchedulerRate(pending, events, kMapScheduler);
    return {map, other ? own : map};
}

/// Print \p r, and the ratios to \p eventsPerS if it is positive.
/// \param r the rates \param scheduler the run's scheduler
/// \param eventsPerS the fabric's events per wall second (0: no fabric run)
void
PrintBareRates(const BareRates& r, const std::string& scheduler, double eventsPerS)
{
    fmt::print("  bare scheduler events per second  {:>10.0f}  (ns3::MapScheduler)\n", r.map);
    if (eventsPerS > 0)
    {
        fmt::print("  event cost ratio (bare / fabric)  {:>10.2f}\n", r.map / eventsPerS);
    }
    if (scheduler != kMapScheduler)
    {
        fmt::print("  bare events per second, own       {:>10.0f}  ({})\n", r.own, scheduler);
        if (eventsPerS > 0)
        {
            fmt::print("  event cost ratio, own bare event  {:>10.2f}\n", r.own / eventsPerS);
        }
    }
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t hosts = 1024;
    uint32_t radix = 16;
    uint64_t flowBytes = 2'000'000;
    std::string rate = "100Gbps";
    uint32_t delayNs = 1000;
    uint32_t seed = 1;
    std::string json;
    std::string loop = "both";
    uint32_t barePending = 0;
    uint64_t bareEvents = 0;
    std::string cc = "none";
    std::string lb = "ecmp";
    uint32_t ecnKmin = 0;
    uint32_t ecnKmax = 0;
    double ecnPmax = 0;

    ProgramFlags cmd("fabric-throughput", __FILE__);
    cmd.Usage("Permutation traffic on a three-tier fat-tree at packet level; prints speed and "
              "memory figures.");
    cmd.AddValue("hosts", "number of hosts (fills a radix-k Clos evenly)", hosts);
    cmd.AddValue("radix", "switch radix k", radix);
    cmd.AddValue("flow-bytes", "bytes per flow", flowBytes);
    cmd.AddValue("rate", "link rate", rate);
    cmd.AddValue("delay-ns", "propagation delay per link, ns", delayNs);
    cmd.AddValue("seed", "seed of the permutation", seed);
    cmd.AddValue("json", "write the figures as JSON to this path", json);
    cmd.AddValue("cc",
                 "congestion control: none, dcqcn, dctcp, or a FabricCongestionControl TypeId name",
                 cc);
    cmd.AddValue("lb", "switch load balancing: ecmp, spray, flowlet or adaptive", lb);
    cmd.AddValue("ecn-kmin",
                 "switch ECN marking (RED) lower threshold, bytes (default with --cc: DCQCN's "
                 "5000; DCTCP's step at 100000)",
                 ecnKmin);
    cmd.AddValue("ecn-kmax", "switch ECN marking upper threshold, bytes (dcqcn: 200000)", ecnKmax);
    cmd.AddValue("ecn-pmax", "switch ECN marking probability at ecn-kmax (dcqcn: 0.01)", ecnPmax);
    cmd.AddValue("loop",
                 "event loops to run: both (and their ratio), fabric, or bare (one loop per "
                 "process, e.g. to profile each under valgrind: bench/event-cost-valgrind.py)",
                 loop);
    cmd.AddValue("bare-pending",
                 "with --loop=bare: events pending in the bare loop (a fabric run prints its mean)",
                 barePending);
    cmd.AddValue("bare-events", "with --loop=bare: events the bare loop runs", bareEvents);
    cmd.UseFabricScheduler();
    cmd.Parse(argc, argv);
    // the run's scheduler (--SchedulerType): the bare loop runs on ns-3's
    // default map, and on it too when it is another one
    TypeIdValue schedulerType;
    GlobalValue::GetValueByName("SchedulerType", schedulerType);
    const std::string scheduler = schedulerType.Get().GetName();

    try
    {
        FabricRequire(loop == "both" || loop == "fabric" || loop == "bare",
                      "--loop",
                      loop,
                      "both, fabric or bare");
        // a flag the chosen loop would ignore is refused, not dropped
        cmd.OnlyWith("bare-pending", loop == "bare", "with --loop=bare");
        cmd.OnlyWith("bare-events", loop == "bare", "with --loop=bare");
        for (const char* fabricFlag : {"hosts",
                                       "radix",
                                       "flow-bytes",
                                       "rate",
                                       "delay-ns",
                                       "seed",
                                       "cc",
                                       "lb",
                                       "ecn-kmin",
                                       "ecn-kmax",
                                       "ecn-pmax"})
        {
            cmd.OnlyWith(fabricFlag, loop != "bare", "with --loop=both or fabric");
        }
        if (loop == "bare")
        {
            FabricRequire(barePending > 0, "--bare-pending", barePending, "a positive count");
            FabricRequire(bareEvents > 0, "--bare-events", bareEvents, "a positive count");
            // as in a combined run: on ns-3's map (the yardstick), and on the
            // run's scheduler too when it is another
            const BareRates bare =
                MeasureBareRates(barePending, bareEvents, scheduler != kMapScheduler);
            fmt::print("fabric-throughput: bare loop only, {} events, {} pending\n",
                       bareEvents,
                       barePending);
            PrintBareRates(bare, scheduler, 0.0);
            if (!json.empty())
            {
                const nlohmann::json j = {{"loop", loop},
                                          {"scheduler", scheduler},
                                          {"bare_scheduler_events_per_s", bare.map},
                                          {"bare_own_scheduler_events_per_s", bare.own},
                                          {"bare_pending", barePending},
                                          {"bare_events", bareEvents}};
                WriteTextFile("--json", json, j.dump(2) + "\n");
            }
            return 0;
        }
        FabricRequire(flowBytes > 0, "--flow-bytes", flowBytes, "a positive byte count");
        FabricRequire(hosts >= 2, "--hosts", hosts, "at least 2");
        const DataRate lineRate = ParseRate("--rate", rate);
        ClusterParams p;
        p.gpus = hosts;
        p.platform = HbDomainPreset::Custom(1, lineRate, lineRate);
        p.radix = radix;
        p.linkDelayNs = delayNs;

        const std::string ccType = ResolveCongestionControl(cc, "--cc");
        FabricSwitch::CheckLoadBalancingName(lb, "--lb");
        FabricRequire(ecnPmax >= 0 && ecnPmax <= 1,
                      "--ecn-pmax",
                      ecnPmax,
                      "a probability in [0, 1]");
        if (!ccType.empty() && !cmd.WasGiven("ecn-kmin") && !cmd.WasGiven("ecn-kmax"))
        {
            // marking as each algorithm's paper sets it
            const EcnMarking marking = PublishedEcnMarking(ccType);
            ecnKmin = marking.kmin;
            ecnKmax = marking.kmax;
            ecnPmax = cmd.WasGiven("ecn-pmax") ? ecnPmax : marking.pmax;
        }
        FabricRequire(ecnKmin <= ecnKmax,
                      "--ecn-kmin",
                      ecnKmin,
                      fmt::format("at most --ecn-kmax ({})", ecnKmax));
        Config::SetDefault("ns3::PacketTransport::CongestionControl", StringValue(cc));
        FabricHelper helper;
        helper.SetSwitchAttribute("LoadBalancing", StringValue(lb));
        helper.SetSwitchAttribute("EcnKmin", UintegerValue(ecnKmin));
        helper.SetSwitchAttribute("EcnKmax", UintegerValue(ecnKmax));
        helper.SetSwitchAttribute("EcnPmax", DoubleValue(ecnPmax));

        const double tBuild = WallSeconds();
        Ptr<Fabric> fabric = helper.Install(BuildFatTree(p));
        const double buildWall = WallSeconds() - tBuild;

        // A permutation without fixed points (derangement by rotation of a shuffle).
        std::mt19937_64 rng(seed);
        std::vector<uint32_t> order(hosts);
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), rng);
        Ptr<PacketTransport> transport = fabric->GetTransport();
        for (uint32_t i = 0; i < hosts; ++i)
        {
            transport->Send(order[i], order[(i + 1) % hosts], flowBytes, Transport::DoneCallback());
        }
        // one sample per 64 packet times of a link: few events, many samples
        PendingSampler sampler{transport,
                               Seconds(64.0 * 4122 * 8 / lineRate.GetBitRate()),
                               {},
                               0,
                               Time()};
        transport->TraceConnectWithoutContext("MessageComplete",
                                              MakeCallback(&PendingSampler::Completed, &sampler));
        Simulator::Schedule(sampler.period, &PendingSampler::Tick, &sampler);
        const double t0 = WallSeconds();
        Simulator::Run();
        const double wall = WallSeconds() - t0;
        const uint64_t events = Simulator::GetEventCount() - sampler.ticks;
        const double meanPending = sampler.MeanPending();
        const Time simTime = sampler.lastCompletion; // not the sampler's last tick
        const uint64_t packets = transport->GetPacketsDelivered();
        const uint64_t controlPackets = transport->GetAcksSent() + transport->GetCnpsSent();
        const auto totals = transport->GetTotals();
        const uint64_t drops = fabric->GetTotalDrops();
        // every event of the run has a kind: ns-3 initializes each node and
        // device at time 0 (one event each); the rest is the data plane's,
        // or the transport's (this workload schedules none) or a bug
        const Fabric::EventCounts kinds = fabric->GetEventCounts();
        uint64_t initEvents = 0;
        const NodeContainer nodes = fabric->GetNodes();
        for (uint32_t i = 0; i < nodes.GetN(); ++i)
        {
            initEvents += 1 + nodes.Get(i)->GetNDevices();
        }
        const uint64_t knownEvents =
            initEvents + kinds.arrivals + kinds.serializationEnds + kinds.flowControlFrames;
        const uint64_t otherEvents = events - std::min(events, knownEvents);
        fabric->Dispose();
        fabric = nullptr;
        Simulator::Destroy();

        const double eventsPerS = events / wall;
        const bool both = loop == "both";
        // the bare loop of this run: as many pending events, as many events
        // (at least a million); written to the JSON, so that --loop=bare can
        // run the same loop alone (bench/event-cost-valgrind.py)
        const auto runPending = static_cast<uint32_t>(std::max(1.0, std::round(meanPending)));
        const uint64_t runBareEvents = std::max<uint64_t>(events, 1'000'000);
        // The ratio is against a bare event of ns-3's scheduler, its
        // default map: a fixed yardstick (a scheduler that slows bare events
        // cannot flatter the fabric). On another scheduler the bare loop also
        // runs on it: the fabric's cost in that scheduler's own bare events.
        const BareRates bare =
            both ? MeasureBareRates(runPending, runBareEvents, scheduler != kMapScheduler)
                 : BareRates{0.0, 0.0};
        const uint64_t rss = PeakRssBytes();

        fmt::print("fabric-throughput: {} hosts, radix {}, {} links, {} flows of {} bytes\n",
                   hosts,
                   radix,
                   rate,
                   hosts,
                   flowBytes);
        fmt::print("  build (topology, routing, nodes) {:>10.3f} s\n", buildWall);
        fmt::print("  wall time (Simulator::Run)        {:>10.3f} s\n", wall);
        fmt::print("  simulated time                    {:>10.6f} s\n", simTime.GetSeconds());
        fmt::print("  events                            {:>10}\n", events);
        fmt::print("    packet arrivals                 {:>10}\n", kinds.arrivals);
        fmt::print("    serialization ends              {:>10}\n", kinds.serializationEnds);
        fmt::print("    pause/resume frames             {:>10}\n", kinds.flowControlFrames);
        fmt::print("    node/device initialization      {:>10}\n", initEvents);
        fmt::print("    other                           {:>10}\n", otherEvents);
        fmt::print("  congestion control, balancing     {:>10}  {}\n", cc, lb);
        fmt::print("  packets delivered                 {:>10}\n", packets);
        fmt::print("  control packets (ACK, CNP) sent   {:>10}\n", controlPackets);
        fmt::print("  messages delivered                {:>10} / {}\n",
                   totals.messagesDelivered,
                   hosts);
        fmt::print("  drops                             {:>10}\n", drops);
        fmt::print("  events per wall second            {:>10.0f}\n", eventsPerS);
        fmt::print("  mean pending events (fabric run)  {:>10.0f}\n", meanPending);
        fmt::print("  scheduler                         {:>10}\n", scheduler);
        if (both)
        {
            PrintBareRates(bare, scheduler, eventsPerS);
        }
        fmt::print("  simulated bytes per wall second   {:>10.3e}\n", totals.bytesDelivered / wall);
        fmt::print("  peak RSS                          {:>10.1f} MiB\n", rss / 1048576.0);

        if (!json.empty())
        {
            nlohmann::json j = {{"wall_s", wall},
                                {"build_wall_s", buildWall},
                                {"events", events},
                                {"events_by_kind",
                                 {{"arrivals", kinds.arrivals},
                                  {"serialization_ends", kinds.serializationEnds},
                                  {"flow_control_frames", kinds.flowControlFrames},
                                  {"initialization", initEvents},
                                  {"other", otherEvents}}},
                                {"packets", packets},
                                {"data_packets", packets},
                                {"control_packets", controlPackets},
                                {"cc", cc},
                                {"lb", lb},
                                {"events_per_s", eventsPerS},
                                {"mean_pending_events", meanPending},
                                {"peak_rss_bytes", rss},
                                {"simulated_time_s", simTime.GetSeconds()},
                                {"bytes_delivered", totals.bytesDelivered},
                                {"drops", drops},
                                {"hosts", hosts},
                                {"flow_bytes", flowBytes},
                                {"loop", loop},
                                {"scheduler", scheduler},
                                {"bare_pending", runPending},
                                {"bare_events", runBareEvents}};
            if (both)
            {
                j["bare_scheduler_events_per_s"] = bare.map;
                j["bare_map_scheduler_events_per_s"] = bare.map; // the same (older key)
                j["event_cost_ratio"] = bare.map / eventsPerS;
                j["bare_own_scheduler_events_per_s"] = bare.own;
                j["event_cost_ratio_own_scheduler"] = bare.own / eventsPerS;
            }
            WriteTextFile("--json", json, j.dump(2) + "\n");
        }
    }
    catch (const FabricConfigError& e)
    {
        fmt::print(stderr, "fabric-throughput: {}\n", e.what());
        return 2;
    }
    return 0;
}
