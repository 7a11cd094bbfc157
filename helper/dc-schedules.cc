/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "dc-schedules.h"

#include "ns3/bfb-collective.h"
#include "ns3/dc-baselines.h"
#include "ns3/fabric-error.h"

namespace ns3
{

DirectConnectSchedules::DirectConnectSchedules(DirectConnectGraph graph, uint32_t gpusPerNode)
    : m_state(std::make_shared<State>())
{
    FabricRequire(gpusPerNode >= 1, "gpus-per-node", gpusPerNode, "at least 1");
    m_state->graph = std::move(graph);
    m_state->gpusPerNode = gpusPerNode;
}

std::string
DirectConnectSchedules::AlgorithmFor(const std::string& collective,
                                     const std::vector<uint32_t>& members) const
{
    const uint32_t n = m_state->graph.NumNodes();
    const uint32_t k = m_state->gpusPerNode;
    auto inOrder = [&](uint32_t size, uint32_t perMember) {
        if (members.size() != size || size < 2)
        {
            return false;
        }
        for (uint32_t i = 0; i < size; ++i)
        {
            if (members[i] / perMember != i)
            {
                return false;
            }
        }
        return true;
    };
    if (collective == "allreduce" || collective == "allgather" || collective == "reducescatter")
    {
        // member i on host i (any GPU of it)
        return inOrder(n, k) ? "bfb" : "";
    }
    if (collective == "alltoall")
    {
        // every GPU, rank order
        return inOrder(n * k, 1) ? "dc-shortest-path" : "";
    }
    return "";
}

const BfbSchedule&
DirectConnectSchedules::Bfb(SynthCollective kind)
{
    auto it = m_state->bfb.find(kind);
    if (it == m_state->bfb.end())
    {
        const DirectConnectGraph& g = m_state->graph;
        BfbSchedule s = kind == SynthCollective::ALLGATHER        ? BfbAllGather(g)
                        : kind == SynthCollective::REDUCE_SCATTER ? BfbReduceScatter(g)
                                                                  : BfbAllReduce(g);
        it = m_state->bfb.emplace(kind, std::move(s)).first;
    }
    return it->second;
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
        const SynthCollective kind = comm.collective == "allgather" ? SynthCollective::ALLGATHER
                                     : comm.collective == "reducescatter"
                                         ? SynthCollective::REDUCE_SCATTER
                                         : SynthCollective::ALLREDUCE;
        const BfbSchedule& b = Bfb(kind);
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
