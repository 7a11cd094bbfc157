/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "transport-helper.h"

#include "collective-helper.h"
#include "fabric-partition.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/fabric-distributed.h"
#include "ns3/fabric-error.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <fmt/format.h>

namespace ns3
{

void
InstalledTransport::Dispose()
{
    if (fabric)
    {
        fabric->Dispose();
    }
    if (transport)
    {
        transport->Dispose();
    }
}

TransportHelper::TransportHelper(const std::string& backend, const std::string& parameter)
    : m_backend(backend),
      m_parameter(parameter)
{
}

std::vector<std::string>
TransportHelper::GetNames()
{
    return {"packet", "flow"};
}

void
TransportHelper::SetBackend(const std::string& backend, const std::string& parameter)
{
    m_backend = backend;
    m_parameter = parameter;
}

const std::string&
TransportHelper::GetBackend() const
{
    return m_backend;
}

FabricHelper&
TransportHelper::GetFabricHelper()
{
    return m_fabric;
}

FlowHelper&
TransportHelper::GetFlowHelper()
{
    return m_flow;
}

void
TransportHelper::SetPartition(const std::string& spec)
{
    m_partition = spec;
}

namespace
{

/**
 * Where \p type's ControlDelay defaults to no more than \p lookahead, set it
 * to twice that. \return the note's word for it ("" if unchanged, or if no
 * such type or attribute is registered)
 */
std::string
RaiseControlDelay(const std::string& type, Time lookahead)
{
    TypeId tid;
    TypeId::AttributeInformation info;
    if (!TypeId::LookupByNameFailSafe(type, &tid) ||
        !tid.LookupAttributeByName("ControlDelay", &info))
    {
        return "";
    }
    const auto delay = DynamicCast<const TimeValue>(info.initialValue);
    if (!delay || delay->Get() > lookahead)
    {
        return "";
    }
    const Time chosen = 2 * lookahead;
    Config::SetDefault(type + "::ControlDelay", TimeValue(chosen));
    return fmt::format(" --{}::ControlDelay={}ns", type, chosen.GetNanoSeconds());
}

/**
 * A distributed run's ranks learn of each other's deliveries by notes, which
 * must take longer than a cable between ranks (CollectiveRun refuses less),
 * label flows by each sender's own count (message ids are each rank's), and
 * handle the frames of one instant in a canonical order.
 * Where the defaults would not do, set them, once, and say so: a one-process
 * run given the same values gives the same results.
 */
void
ConfigureDistributedDefaults(const FabricPartition& partition)
{
    static bool said = false;
    std::string changed;
    TypeId::AttributeInformation info;
    if (partition.cutCables > 0)
    {
        // a collective's ranks, and a serving engine's processes, hear of
        // each other's progress by notes
        const std::string collective = RaiseControlDelay("ns3::CollectiveRun", partition.lookahead);
        if (!collective.empty())
        {
            changed += fmt::format("{} (more than the lookahead, {} ns)",
                                   collective,
                                   partition.lookahead.GetNanoSeconds());
        }
        changed += RaiseControlDelay("ns3::ServingSimulation", partition.lookahead);
    }
    if (TypeId::LookupByName("ns3::Transport").LookupAttributeByName("FlowLabels", &info))
    {
        if (info.initialValue->SerializeToString(info.checker) != "source-sequence")
        {
            Config::SetDefault("ns3::Transport::FlowLabels", StringValue("source-sequence"));
            changed += " --ns3::Transport::FlowLabels=source-sequence";
        }
    }
    // the same instant's arrivals in port order: a partitioned fabric's
    // nodes do so anyway (FabricHelper::SetPartition); the default makes a
    // one-process run given it comparable
    if (TypeId::LookupByName("ns3::FabricNode").LookupAttributeByName("CanonicalTies", &info))
    {
        if (info.initialValue->SerializeToString(info.checker) != "true")
        {
            Config::SetDefault("ns3::FabricNode::CanonicalTies", BooleanValue(true));
            changed += " --ns3::FabricNode::CanonicalTies=true";
        }
    }
    if (!changed.empty() && !said && FabricDistributed::GetSystemId() == 0)
    {
        said = true;
        fmt::print(stderr,
                   "note: a run over {} MPI ranks sets{}; a one-process run given the same "
                   "values gives the same results\n",
                   FabricDistributed::GetSize(),
                   changed);
    }
}

} // namespace

InstalledTransport
TransportHelper::Install(const FabricTopology& topology) const
{
    FabricRequire(m_backend == "packet" || m_backend == "flow",
                  m_parameter,
                  m_backend,
                  "packet or flow");
    InstalledTransport b;
    if (m_backend == "flow")
    {
        // framed as the packet level's devices would be: both backends cut
        // messages alike
        FabricHelper::RequireTopologyAttributesUnset();
        FlowHelper flow = m_flow;
        flow.SetFrameMtu(m_fabric.GetDeviceFrameMtu());
        b.flow = flow.Install(topology);
        b.transport = b.flow;
    }
    else if (FabricDistributed::IsEnabled() && FabricDistributed::GetSize() > 1)
    {
        const FabricPartition partition =
            FabricPartitioner::Make(topology, FabricDistributed::GetSize(), m_partition);
        ConfigureDistributedDefaults(partition);
        FabricHelper fabric = m_fabric;
        fabric.SetPartition(partition);
        b.fabric = fabric.Install(topology);
        b.transport = b.fabric->GetTransport();
    }
    else
    {
        b.fabric = m_fabric.Install(topology);
        b.transport = b.fabric->GetTransport();
    }
    return b;
}

CollectiveResult
TransportHelper::RunCollectiveAlone(const FabricTopology& topology,
                                    uint64_t chunkBytes,
                                    uint32_t channels,
                                    const std::string& collective,
                                    const std::string& algorithm,
                                    uint64_t bytes) const
{
    return RunAlone(topology, [&](CollectiveHelper helper) {
        helper.SetChunkBytes(chunkBytes);
        helper.SetChannels(channels);
        return helper.Install(CollectiveHelper::AllRanks(topology.GetNGpus()),
                              collective,
                              algorithm,
                              bytes,
                              Seconds(0));
    });
}

CollectiveResult
TransportHelper::RunScheduleAlone(const FabricTopology& topology,
                                  const CollectiveSchedule& schedule) const
{
    return RunAlone(topology, [&](const CollectiveHelper& helper) {
        return helper.Install(schedule, Seconds(0));
    });
}

CollectiveResult
TransportHelper::RunAlone(
    const FabricTopology& topology,
    const std::function<Ptr<CollectiveRun>(const CollectiveHelper&)>& install) const
{
    InstalledTransport installed = Install(topology);
    // the defaults (no chunking, one channel); a run sets its own
    const CollectiveHelper helper = CollectivesOn(installed, topology, 0, 1);
    // held here: without ns-3 nodes (flow backend) no application holds it
    Ptr<CollectiveRun> run = install(helper);
    Simulator::Run();
    // distributed: each rank ran its own GPUs' part; rank 0 gets the whole
    const CollectiveResult result =
        FabricDistributed::IsEnabled() ? run->GatherResult() : run->GetResult();
    run = nullptr;
    installed.Dispose();
    FabricDistributed::DestroySimulation();
    return result;
}

CollectiveHelper
TransportHelper::CollectivesOn(const InstalledTransport& installed,
                               const FabricTopology& topology,
                               uint64_t chunkBytes,
                               uint32_t channels)
{
    CollectiveHelper helper = installed.fabric ? CollectiveHelper(installed.fabric)
                                               : CollectiveHelper(installed.transport);
    if (installed.flow)
    {
        helper.SetDomainSize(topology.gpusPerDomain);
    }
    helper.SetChunkBytes(chunkBytes);
    helper.SetChannels(channels);
    return helper;
}

std::vector<CollectiveWork>
TransportHelper::EstimateCollectives(const FabricTopology& topology,
                                     uint64_t chunkBytes,
                                     uint32_t channels,
                                     const std::string& collective,
                                     const std::string& algorithm,
                                     const std::vector<uint64_t>& sizes) const
{
    // the request as a run would make it (CollectivesOn's chunking and
    // channels; either backend's domain size is the topology's)
    CollectiveHelper requests{Ptr<Transport>()};
    requests.SetChunkBytes(chunkBytes);
    requests.SetChannels(channels);
    requests.SetDomainSize(topology.gpusPerDomain);
    const std::vector<uint32_t> ranks = CollectiveHelper::AllRanks(topology.GetNGpus());
    return EstimateSchedules(topology, sizes, [&](uint64_t bytes) {
        return MakeSchedule(requests.GetRequest(ranks, collective, algorithm, bytes));
    });
}

std::vector<CollectiveWork>
TransportHelper::EstimateSchedules(
    const FabricTopology& topology,
    const std::vector<uint64_t>& sizes,
    const std::function<CollectiveSchedule(uint64_t)>& schedule) const
{
    InstalledTransport installed = Install(topology);
    std::vector<CollectiveWork> work(sizes.size());
    try
    {
        // largest first: the schedule MakeSchedule refuses (by its memory) is
        // refused before the others are built
        for (size_t i = sizes.size(); i-- > 0;)
        {
            const CollectiveSchedule s = schedule(sizes[i]);
            CollectiveWork& w = work[i];
            w.bytes = sizes[i];
            w.messages = s.TotalOps() / 2; // as CollectiveHelper::Install declares it
            w.bytesSent = s.TotalBytesSent();
            w.seconds = installed.transport->EstimateRunSeconds(w.messages, w.bytesSent);
        }
    }
    catch (...)
    {
        installed.Dispose();
        FabricDistributed::DestroySimulation();
        throw;
    }
    installed.Dispose();
    FabricDistributed::DestroySimulation();
    return work;
}

} // namespace ns3
