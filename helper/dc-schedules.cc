/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "dc-schedules.h"

#include "ns3/bfb-collective.h"
#include "ns3/dc-baselines.h"
#include "ns3/fabric-error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ns3
{

DirectConnectSchedules::DirectConnectSchedules(DirectConnectGraph graph, uint32_t gpusPerNode)
    : m_state(std::make_shared<State>())
{
    FabricRequire(gpusPerNode >= 1, "gpus-per-node", gpusPerNode, "at least 1");
    m_state->graph = std::move(graph);
    m_state->gpusPerNode = gpusPerNode;
}

std::optional<std::vector<uint32_t>>
DirectConnectSchedules::BfbHosts(const std::vector<uint32_t>& members) const
{
    const uint32_t n = m_state->graph.NumNodes();
    const uint32_t k = m_state->gpusPerNode;
    if (members.size() < 2)
    {
        return std::nullopt;
    }
    std::vector<uint32_t> hosts;
    hosts.reserve(members.size());
    for (const uint32_t r : members)
    {
        const uint32_t h = r / k;
        if (h >= n || (!hosts.empty() && h <= hosts.back()))
        {
            return std::nullopt;
        }
        hosts.push_back(h);
    }
    if (hosts.size() < n && !Induced(hosts).IsStronglyConnected())
    {
        return std::nullopt;
    }
    return hosts;
}

DirectConnectGraph
DirectConnectSchedules::Induced(const std::vector<uint32_t>& hosts) const
{
    const DirectConnectGraph& g = m_state->graph;
    if (hosts.size() == g.NumNodes())
    {
        return g; // hosts in increasing order: all of them, in order
    }
    std::vector<uint32_t> node(g.NumNodes(), DirectConnectGraph::UNREACHABLE);
    for (uint32_t i = 0; i < hosts.size(); ++i)
    {
        node[hosts[i]] = i;
    }
    DirectConnectGraph sub(static_cast<uint32_t>(hosts.size()),
                           fmt::format("{} on hosts {}", g.Name(), fmt::join(hosts, ",")));
    for (const auto& arc : g.Arcs())
    {
        if (node[arc.from] != DirectConnectGraph::UNREACHABLE &&
            node[arc.to] != DirectConnectGraph::UNREACHABLE)
        {
            sub.AddArc(node[arc.from], node[arc.to]);
        }
    }
    return sub;
}

std::string
DirectConnectSchedules::AlgorithmFor(const std::string& collective,
                                     const std::vector<uint32_t>& members) const
{
    const uint32_t n = m_state->graph.NumNodes();
    const uint32_t k = m_state->gpusPerNode;
    if (collective == "allreduce" || collective == "allgather" || collective == "reducescatter")
    {
        // one member per host, hosts in increasing order, connected among themselves
        return BfbHosts(members) ? "bfb" : "";
    }
    if (collective == "alltoall")
    {
        // every GPU, rank order
        if (members.size() != uint64_t{n} * k || members.size() < 2)
        {
            return "";
        }
        for (uint32_t i = 0; i < members.size(); ++i)
        {
            if (members[i] != i)
            {
                return "";
            }
        }
        return "dc-shortest-path";
    }
    return "";
}

const BfbSchedule&
DirectConnectSchedules::Bfb(SynthCollective kind, const std::vector<uint32_t>& hosts)
{
    auto it = m_state->bfb.find({kind, hosts});
    if (it == m_state->bfb.end())
    {
        const DirectConnectGraph g = Induced(hosts);
        BfbSchedule s = kind == SynthCollective::ALLGATHER        ? BfbAllGather(g)
                        : kind == SynthCollective::REDUCE_SCATTER ? BfbReduceScatter(g)
                                                                  : BfbAllReduce(g);
        it = m_state->bfb.emplace(std::make_pair(kind, hosts), std::move(s)).first;
    }
    return it->second;
}

const BfbSchedule*
DirectConnectSchedules::GetBfb(const std::string& collective, const std::vector<uint32_t>& members)
{
    if (AlgorithmFor(collective, members) != "bfb")
    {
        return nullptr;
    }
    const SynthCollective kind = collective == "allgather"       ? SynthCollective::ALLGATHER
                                 : collective == "reducescatter" ? SynthCollective::REDUCE_SCATTER
                                                                 : SynthCollective::ALLREDUCE;
    return &Bfb(kind, *BfbHosts(members));
}

std::optional<CollectiveSchedule>
DirectConnectSchedules::Make(const ProgramComm& comm)
{
    const std::string algorithm = AlgorithmFor(comm.collective, comm.members);
    if (algorithm.empty())
    {
        return std::nullopt;
    }
    CollectiveSchedule s;
    if (algorithm == "dc-shortest-path")
    {
        s = DcShortestPathAllToAll(m_state->graph, m_state->gpusPerNode, comm.bytes);
    }
    else
    {
        const BfbSchedule& b = *GetBfb(comm.collective, comm.members);
        s = BfbToCollectiveSchedule(b, comm.bytes, BfbAutoChunksPerShard(b, kMaxChunksPerShard));
    }
    s.SetCommunicator(comm.members);
    return s;
}

ProgramRunner::ScheduleSource
DirectConnectSchedules::Source()
{
    DirectConnectSchedules shared = *this;
    return [shared](const ProgramComm& comm) mutable { return shared.Make(comm); };
}

} // namespace ns3
