/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// examples/failure-study: one training iteration on a rail-only network and
// on a rail-optimized fat-tree, healthy and with one broken component:
//  - a failed rail switch (both designs: its GPUs reach the network only
//    through their HB domain, relayed by GPUs of healthy rails);
//  - a failed spine switch (fat-tree only: rail-only has no spine);
//  - a failed GPU, without remedy (the iteration fails, with the report),
//    and with the two remedies of the rail-only paper: move the failed GPU's
//    whole HB domain's work to a spare domain, or patch in a spare GPU (on
//    rail-only through an optical switch, so the spare takes the failed GPU's
//    NVLink and rail ports; on the fat-tree any spare GPU can be used: the
//    one on the same rail in the spare server, outside the failed GPU's HB
//    domain). Remedies are modelled as re-mapping ranks onto GPUs;
//  - one NVLink of one GPU degraded to a fraction of its rate.
// Every cluster has one spare HB domain (idle unless a remedy uses it), so
// all rows of a design run on the same hardware. The broken component is
// broken from the start and routing has already reacted (DetectNow).
// Prints the iteration time, its slowdown over the healthy run of the same
// design, and the capacity lost: network and NVLink bandwidth down, GPUs idle.
// Under mpirun -np N (MPI build) each run is cut over the ranks (--partition)
// and the results are gathered and printed once, as one process prints them.
#include "program-support.h"

#include "ns3/core-module.h"
#include "ns3/gpu-fabric-module.h"
#include "ns3/program-flags.h"
#include "ns3/topology-helper.h"

#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

using namespace ns3;

namespace
{

struct Row
{
    std::string design;
    std::string scenario;
    bool complete{false};
    double timeS{0};
    double slowdown{0};
    double lostNetwork{0}; //!< fraction of scale-out link capacity down
    double lostNvlink{0};  //!< fraction of NVLink capacity lost
    uint32_t idleGpus{0};  //!< GPUs of the job's hardware left idle
    uint64_t relayedPackets{0};
    uint64_t retransmissions{0};
    std::string failure;
    std::vector<std::string> failedComms;  //!< the runner's report, a line per failed comm
    std::vector<uint32_t> unfinishedRanks; //!< ranks a failure held
};

/// The job's ranks placed on physical GPUs: rank r on GPU map[r].
ParallelProgram
Remap(const ParallelProgram& p, const std::vector<uint32_t>& map, uint32_t physical)
{
    ParallelProgram out;
    out.ranks = physical;
    out.comms = p.comms;
    for (auto& c : out.comms)
    {
        for (auto& m : c.members)
        {
            m = map.at(m);
        }
    }
    out.tasks.assign(physical, {});
    for (uint32_t r = 0; r < p.ranks; ++r)
    {
        out.tasks[map[r]] = p.tasks[r];
    }
    return out;
}

/// The first of \p reports in a canonical order (failure time, send time,
/// ranks): on one process and on any number of MPI ranks alike.
const TransportMessageReport*
FirstFailure(const std::vector<TransportMessageReport>& reports)
{
    const auto key = [](const TransportMessageReport& r) {
        return std::make_tuple(r.failedAt, r.sent, r.src, r.dst, r.bytes, r.delivered);
    };
    const TransportMessageReport* first = nullptr;
    for (const TransportMessageReport& r : reports)
    {
        if (first == nullptr || key(r) < key(*first))
        {
            first = &r;
        }
    }
    return first;
}

/// One run: the fault is applied through `fault` before the iteration starts
/// (on every MPI rank of a distributed run, to its copy of the fabric).
Row
RunOne(const TransportHelper& transports,
       const FabricTopology& topo,
       const ParallelProgram& program,
       const std::function<void(Ptr<Fabric>, FaultHelper&)>& fault)
{
    InstalledTransport installed = transports.Install(topo);
    Ptr<Fabric> fabric = installed.fabric;
    FaultHelper faults(fabric);
    faults.SetDetectionDelay(Seconds(0));
    if (fault)
    {
        fault(fabric, faults);
        faults.GetInjector()->DetectNow();
    }
    Ptr<ProgramRunner> runner = RunProgram(program, fabric->GetTransport());
    Row r;
    r.complete = runner->IsComplete();
    r.timeS = r.complete ? runner->GetFinishTime().GetSeconds() : 0;
    Ptr<PacketTransport> t = fabric->GetTransport();
    // each rank counts what its own nodes did: the sums, on rank 0
    uint64_t relayed = 0;
    for (uint32_t g = 0; g < fabric->GetNGpus(); ++g)
    {
        relayed += fabric->GetGpu(g)->GetForwardedPackets();
    }
    nlohmann::json mine = {{"retransmissions", t->GetRetransmissions()},
                           {"relayed", relayed},
                           {"failures", nlohmann::json::array()}};
    for (const TransportMessageReport& f : t->GetFailureReports())
    {
        mine["failures"].push_back({f.src,
                                    f.dst,
                                    f.bytes,
                                    f.delivered,
                                    f.sent.GetTimeStep(),
                                    f.since.GetTimeStep(),
                                    f.failedAt.GetTimeStep(),
                                    f.reason});
    }
    std::vector<TransportMessageReport> failures;
    for (const std::string& part : FabricDistributed::GatherToRoot(mine.dump()))
    {
        const nlohmann::json j = nlohmann::json::parse(part);
        r.retransmissions += j["retransmissions"].get<uint64_t>();
        r.relayedPackets += j["relayed"].get<uint64_t>();
        for (const auto& f : j["failures"])
        {
            TransportMessageReport report;
            report.src = f[0].get<uint32_t>();
            report.dst = f[1].get<uint32_t>();
            report.bytes = f[2].get<uint64_t>();
            report.delivered = f[3].get<uint64_t>();
            report.sent = TimeStep(f[4].get<int64_t>());
            report.since = TimeStep(f[5].get<int64_t>());
            report.failedAt = TimeStep(f[6].get<int64_t>());
            report.reason = f[7].get<std::string>();
            failures.push_back(report);
        }
    }
    if (const TransportMessageReport* first = FirstFailure(failures))
    {
        r.failure =
            fmt::format("{} message(s) failed; first: {}", failures.size(), first->ToString());
    }
    std::istringstream lines(runner->GetFailureReport());
    for (std::string line; std::getline(lines, line);)
    {
        r.failedComms.push_back(line);
    }
    r.unfinishedRanks = runner->GetUnfinishedRanks();
    // capacity lost
    const FaultState& f = faults.GetInjector()->GetFaultState();
    double net = 0;
    double netDown = 0;
    double nv = 0;
    double nvLost = 0;
    const auto& cables = topo.Cables();
    for (uint32_t c = 0; c < cables.size(); ++c)
    {
        const double rate = static_cast<double>(cables[c].rateBps);
        const bool down =
            f.cables.count(c) || f.vertices.count(cables[c].a) || f.vertices.count(cables[c].b);
        const double now = static_cast<double>(faults.GetInjector()->GetCableRate(c));
        if (cables[c].kind == TopoLinkKind::NvLink)
        {
            nv += rate;
            nvLost += down ? rate : rate - now;
        }
        else
        {
            net += rate;
            netDown += down ? rate : 0;
        }
    }
    r.lostNetwork = net > 0 ? netDown / net : 0;
    r.lostNvlink = nv > 0 ? nvLost / nv : 0;
    installed.Dispose();
    FabricDistributed::DestroySimulation();
    return r;
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string platform = "dgx-h100";
    uint32_t domains = 3;
    uint32_t layers = 4;
    uint32_t hidden = 2048;
    uint32_t seq = 1024;
    uint32_t microBatches = 2;
    double nvlinkFraction = 0.5;
    std::string json;
    ProgramFlags cmd("failure-study", __FILE__);
    const RunOutputs outputs(cmd); // --timeline, --link-util, --progress
    cmd.AddValue("platform", "HB domain preset (dgx-a100, dgx-h100, ...)", platform);
    cmd.AddValue("domains", "HB domains of the job (one more is the spare)", domains);
    cmd.AddValue("layers", "transformer blocks", layers);
    cmd.AddValue("hidden", "model width d_model", hidden);
    cmd.AddValue("seq", "sequence length (tokens)", seq);
    cmd.AddValue("micro-batches", "micro-batches per replica", microBatches);
    cmd.AddValue("nvlink-fraction",
                 "rate of the degraded NVLink, fraction of nominal",
                 nvlinkFraction);
    cmd.AddValue("json", "write the results as JSON to this file", json);
    std::string partition = "domain";
    cmd.AddPartition(partition);
    cmd.UseFabricScheduler();
    cmd.Parse(argc, argv);
    cmd.Distribute(argc, argv, true, "");
    try
    {
        TransportHelper transports("packet", "backend");
        transports.SetPartition(partition);
        const HbDomainPreset hw = TopologyHelper::GetPlatform(platform);
        const uint32_t k = hw.gpusPerDomain;
        // with the spare, (domains + 1) x K GPUs must fill a fat-tree whose
        // leaves are rail switches (radix 2 (domains + 1))
        FabricRequire(domains >= 3 && domains <= 63 && (domains + 1) % 4 == 0,
                      "--domains",
                      domains,
                      "3, 7, 11, ... 63 (domains + 1 a multiple of 4)");
        FabricRequire(k >= 2 && k <= 8,
                      "--platform",
                      platform,
                      "a preset with 2 to 8 GPUs per domain");
        FabricRequire(nvlinkFraction > 0 && nvlinkFraction <= 1,
                      "--nvlink-fraction",
                      nvlinkFraction,
                      "a fraction in (0, 1]");
        // before the model's batch (domains x micro-batches x seq) would take
        // the blame for a zero
        FabricRequire(microBatches >= 1, "--micro-batches", microBatches, "an integer >= 1");
        const uint32_t n = domains * k;
        const uint32_t physical = n + k; // one spare domain
        const ParallelProgram job = TpDpGptProgram(hw, domains, layers, hidden, seq, microBatches);
        std::vector<uint32_t> identity(n);
        std::iota(identity.begin(), identity.end(), 0);
        const ParallelProgram healthy = Remap(job, identity, physical);

        ClusterParams cp;
        cp.gpus = physical;
        cp.platform = hw;
        cp.radix = std::max<uint32_t>(8, 2 * (domains + 1)); // one rail per leaf
        const uint32_t failedGpu = k + 1;                    // domain 1, rail 1
        std::vector<Row> rows;
        for (const std::string design : {"rail-only", "rail-optimized"})
        {
            const FabricTopology topo =
                design == "rail-only" ? BuildRailOnly(cp) : BuildRailOptimized(cp);
            const auto rails = FaultHelper::FindSwitches(topo, "rail");
            const auto spines = FaultHelper::FindSwitches(topo, "spine");
            std::vector<std::pair<
                std::string,
                std::pair<ParallelProgram, std::function<void(Ptr<Fabric>, FaultHelper&)>>>>
                cases;
            cases.push_back({"healthy", {healthy, nullptr}});
            cases.push_back(
                {"failed rail switch (rail 1)", {healthy, [&](Ptr<Fabric>, FaultHelper& f) {
                                                     f.GetInjector()->SwitchDown(rails.at(1));
                                                 }}});
            if (!spines.empty())
            {
                cases.push_back({"failed spine switch", {healthy, [&](Ptr<Fabric>, FaultHelper& f) {
                                                             f.GetInjector()->SwitchDown(
                                                                 spines.at(0));
                                                         }}});
            }
            cases.push_back({fmt::format("failed GPU {}, no remedy", failedGpu),
                             {healthy, [&](Ptr<Fabric>, FaultHelper& f) {
                                  f.GetInjector()->GpuDown(failedGpu);
                              }}});
            // remedy 1: the failed GPU's domain moves to the spare domain
            std::vector<uint32_t> moved = identity;
            const uint32_t dom = failedGpu / k;
            for (uint32_t i = 0; i < k; ++i)
            {
                moved[dom * k + i] = n + i;
            }
            cases.push_back({"failed GPU, domain moved to spare domain",
                             {Remap(job, moved, physical), [&](Ptr<Fabric>, FaultHelper& f) {
                                  f.GetInjector()->GpuDown(failedGpu);
                              }}});
            // remedy 2: a spare GPU takes the failed GPU's work
            std::vector<uint32_t> patched = identity;
            if (design != "rail-only")
            {
                patched[failedGpu] = n + failedGpu % k; // same rail, spare server
            }
            cases.push_back(
                {design == "rail-only" ? "failed GPU, spare patched in (optical switch)"
                                       : "failed GPU, spare GPU swapped in",
                 {Remap(job, patched, physical), [&, design](Ptr<Fabric>, FaultHelper& f) {
                      // rail-only: the spare is patched into the failed GPU's
                      // NVLink and rail ports, so that position works again
                      // (the spare domain loses a GPU); fat-tree: the failed
                      // GPU stays dead
                      f.GetInjector()->GpuDown(design == "rail-only" ? n + failedGpu % k
                                                                     : failedGpu);
                  }}});
            cases.push_back(
                {fmt::format("NVLink plane 0 of GPU 0 at {:.0f}%", 100 * nvlinkFraction),
                 {healthy, [&](Ptr<Fabric> fabric, FaultHelper& f) {
                      const auto c = FaultHelper::CablesOf(fabric->GetTopology(),
                                                           fabric->GetTopology().GpuVertex(0));
                      f.GetInjector()->DegradeLink(c.at(0), nvlinkFraction);
                  }}});
            double base = 0;
            for (auto& [name, pc] : cases)
            {
                Row r = RunOne(transports, topo, pc.first, pc.second);
                r.design = design;
                r.scenario = name;
                if (name == "healthy")
                {
                    base = r.timeS;
                }
                r.slowdown = r.complete && base > 0 ? r.timeS / base : 0;
                if (name.find("domain moved") != std::string::npos)
                {
                    r.idleGpus = k; // the failed GPU and its k-1 healthy domain-mates
                }
                else if (name.find("failed GPU") != std::string::npos)
                {
                    r.idleGpus = 1;
                }
                rows.push_back(r);
            }
        }

        fmt::print("Failure study: {} domains of {} x {} GPUs (+1 spare domain), {} blocks, "
                   "d_model {}, TP {} DP {}, {} micro-batches\n",
                   domains,
                   k,
                   hw.name,
                   layers,
                   hidden,
                   k,
                   domains,
                   microBatches);
        fmt::print("{:<15} {:<46} {:>12} {:>9} {:>9} {:>9} {:>5} {:>9}\n",
                   "design",
                   "scenario",
                   "iteration_s",
                   "slowdown",
                   "net_lost",
                   "nvl_lost",
                   "idle",
                   "relayed");
        for (const Row& r : rows)
        {
            fmt::print("{:<15} {:<46} {:>12} {:>9} {:>8.2f}% {:>8.3f}% {:>5} {:>9}\n",
                       r.design,
                       r.scenario,
                       r.complete ? fmt::format("{:.6f}", r.timeS) : "FAILED",
                       r.complete ? fmt::format("{:.3f}", r.slowdown) : "-",
                       100 * r.lostNetwork,
                       100 * r.lostNvlink,
                       r.idleGpus,
                       r.relayedPackets);
            if (!r.complete && !r.failure.empty())
            {
                fmt::print("{:<15}   {}\n", "", r.failure);
                for (const std::string& comm : r.failedComms)
                {
                    fmt::print("{:<15}   {}\n", "", comm);
                }
                fmt::print("{:<15}   {} rank(s) held\n", "", r.unfinishedRanks.size());
            }
        }
        if (!json.empty())
        {
            nlohmann::ordered_json j;
            j["platform"] = platform;
            j["domains"] = domains;
            j["gpus_per_domain"] = k;
            j["spare_domains"] = 1;
            j["layers"] = layers;
            j["hidden"] = hidden;
            j["seq"] = seq;
            j["micro_batches"] = microBatches;
            j["rows"] = nlohmann::ordered_json::array();
            for (const Row& r : rows)
            {
                nlohmann::ordered_json o;
                o["design"] = r.design;
                o["scenario"] = r.scenario;
                o["complete"] = r.complete;
                o["iteration_time_s"] = r.timeS;
                o["slowdown"] = r.slowdown;
                o["lost_network_capacity"] = r.lostNetwork;
                o["lost_nvlink_capacity"] = r.lostNvlink;
                o["idle_gpus"] = r.idleGpus;
                o["relayed_packets"] = r.relayedPackets;
                o["retransmissions"] = r.retransmissions;
                o["failure"] = r.failure;
                o["failed_comms"] = r.failedComms;
                o["unfinished_ranks"] = r.unfinishedRanks;
                j["rows"].push_back(o);
            }
            WriteTextFile("--json", json, j.dump(2) + "\n");
        }
    }
    catch (const FabricConfigError& e)
    {
        std::cerr << "failure-study: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
