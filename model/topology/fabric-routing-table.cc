/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-routing-table.h"

#include "ns3/abort.h"

namespace ns3
{

FabricRoutingTable::FabricRoutingTable(uint32_t numRanks)
    : m_groupOffset{0, 0}
{
    m_group.reserve(numRanks);
    m_groupIndex[{}] = 0; // group 0: no route
}

uint16_t
FabricRoutingTable::Group(const std::vector<uint16_t>& ports)
{
    auto it = m_groupIndex.find(ports);
    if (it != m_groupIndex.end())
    {
        return it->second;
    }
    NS_ABORT_MSG_IF(m_groupIndex.size() >= 65535, "more than 65535 distinct ECMP groups");
    const auto g = static_cast<uint16_t>(m_groupIndex.size());
    m_groupIndex.emplace(ports, g);
    m_ports.insert(m_ports.end(), ports.begin(), ports.end());
    m_groupOffset.push_back(m_ports.size());
    return g;
}

void
FabricRoutingTable::Append(uint32_t dst, const std::vector<uint16_t>& ports)
{
    NS_ABORT_MSG_IF(dst < m_group.size(), "routes must be appended in rank order");
    m_group.resize(dst, 0); // ranks skipped have no route
    m_group.push_back(Group(ports));
}

void
FabricRoutingTable::Replace(uint32_t dst, const std::vector<uint16_t>& ports)
{
    NS_ABORT_MSG_IF(dst + 1 != m_group.size(), "only the last destination can be replaced");
    m_group.back() = Group(ports);
}

uint32_t
FabricRoutingTable::GetNRanks() const
{
    return m_group.size();
}

uint32_t
FabricRoutingTable::GetNGroups() const
{
    return m_groupIndex.size();
}

} // namespace ns3
