/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-routing-table.h"

#include "ns3/abort.h"

#include <algorithm>

namespace ns3
{

FabricRoutingTable::FabricRoutingTable(uint32_t numRanks)
    : m_maxRuns(GetMaxRuns(numRanks)),
      m_groupOffset{0, 0}
{
    m_groupIndex[{}] = 0; // group 0: no route
}

uint32_t
FabricRoutingTable::GetMaxRuns(uint32_t numRanks)
{
    // a run costs 6 bytes and a lookup a binary search over the runs: runs
    // stay while they are few and far smaller than 2 bytes per destination
    return std::max<uint32_t>(16, std::min<uint32_t>(64, numRanks / 16));
}

uint16_t
FabricRoutingTable::Group(const std::vector<uint16_t>& ports)
{
    // destinations come in rank order and neighbours mostly share their ports
    // (a switch sends a whole pod one way): the last group first, no search
    const uint32_t begin = m_groupOffset[m_lastGroup];
    if (m_groupOffset[m_lastGroup + 1] - begin == ports.size())
    {
        // a group has a few ports: compared inline, not through memcmp
        size_t i = 0;
        while (i < ports.size() && ports[i] == m_ports[begin + i])
        {
            ++i;
        }
        if (i == ports.size())
        {
            return m_lastGroup;
        }
    }
    auto it = m_groupIndex.find(ports);
    if (it != m_groupIndex.end())
    {
        m_lastGroup = it->second;
        return m_lastGroup;
    }
    NS_ABORT_MSG_IF(m_groupIndex.size() >= 65535, "more than 65535 distinct ECMP groups");
    const auto g = static_cast<uint16_t>(m_groupIndex.size());
    m_groupIndex.emplace(ports, g);
    m_ports.insert(m_ports.end(), ports.begin(), ports.end());
    m_groupOffset.push_back(m_ports.size());
    m_lastGroup = g;
    return g;
}

void
FabricRoutingTable::Set(uint32_t dst, uint16_t g)
{
    if (m_dense)
    {
        m_group.resize(dst + 1, 0); // ranks skipped have no route
        m_group[dst] = g;
        m_nRanks = dst + 1;
        return;
    }
    if (dst < m_nRanks && m_runStart.back() == dst)
    {
        // the last destination again, alone in its run
        m_runStart.pop_back();
        m_runGroup.pop_back();
    }
    else if (dst > m_nRanks && (m_runGroup.empty() || m_runGroup.back() != 0))
    {
        m_runStart.push_back(m_nRanks); // ranks skipped have no route
        m_runGroup.push_back(0);
    }
    if (m_runGroup.empty() || m_runGroup.back() != g)
    {
        m_runStart.push_back(m_runGroup.empty() ? 0 : dst);
        m_runGroup.push_back(g);
    }
    m_nRanks = dst + 1;
    if (m_runStart.size() > m_maxRuns)
    {
        MakeDense();
    }
}

void
FabricRoutingTable::MakeDense()
{
    m_group.assign(m_nRanks, 0);
    for (uint32_t r = 0; r < m_runStart.size(); ++r)
    {
        const uint32_t end = r + 1 < m_runStart.size() ? m_runStart[r + 1] : m_nRanks;
        std::fill(m_group.begin() + m_runStart[r], m_group.begin() + end, m_runGroup[r]);
    }
    m_dense = true;
    m_runStart = {};
    m_runGroup = {};
}

void
FabricRoutingTable::Append(uint32_t dst, const std::vector<uint16_t>& ports)
{
    NS_ABORT_MSG_IF(dst < m_nRanks, "routes must be appended in rank order");
    Set(dst, Group(ports));
}

void
FabricRoutingTable::Replace(uint32_t dst, const std::vector<uint16_t>& ports)
{
    NS_ABORT_MSG_IF(dst + 1 != m_nRanks, "only the last destination can be replaced");
    Set(dst, Group(ports));
}

uint32_t
FabricRoutingTable::GetNRanks() const
{
    return m_nRanks;
}

uint32_t
FabricRoutingTable::GetNGroups() const
{
    return m_groupIndex.size();
}

bool
FabricRoutingTable::IsDense() const
{
    return m_dense;
}

} // namespace ns3
