/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_ROUTING_TABLE_H
#define GPU_FABRIC_FABRIC_ROUTING_TABLE_H

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Forwarding table of one fabric node: for every destination rank,
 * the set of equal-cost output ports.
 *
 * Destinations point to shared port groups (a Clos switch has a few: its
 * uplinks, and one group per downlink). Where ranks are numbered along the
 * tree, a node's destinations fall into a few runs of consecutive ranks with
 * one group each (a GPU's NIC takes every rank but its own; a leaf, its
 * hosts one by one and the rest up), and the table keeps only the runs: a
 * packet-level run reads one route per hop, and a dense table (two bytes per
 * destination) would hold most of a 16k-GPU fabric's memory. A table with
 * more runs than GetMaxRuns (a rail switch's ranks are strided) is dense.
 */
class FabricRoutingTable
{
  public:
    /**
     * Start a table for \p numRanks destinations, all without a route.
     * \param numRanks number of GPU ranks in the fabric
     */
    explicit FabricRoutingTable(uint32_t numRanks = 0);

    /**
     * Set the equal-cost ports toward \p dst. Destinations must be added in
     * increasing order, each once.
     * \param dst destination rank
     * \param ports port indices
     */
    void Append(uint32_t dst, const std::vector<uint16_t>& ports);

    /**
     * Replace the ports of the destination appended last.
     * \param dst that destination
     * \param ports the new port indices
     */
    void Replace(uint32_t dst, const std::vector<uint16_t>& ports);

    /// \return number of destinations covered
    uint32_t GetNRanks() const;

    /// \return number of distinct port groups
    uint32_t GetNGroups() const;

    /// \return whether the table holds a group per destination (else runs)
    bool IsDense() const;

    /// \return the runs a table of \p numRanks destinations keeps before it
    /// turns dense \param numRanks its destinations
    static uint32_t GetMaxRuns(uint32_t numRanks);

    /// \param dst destination \return number of ports toward it (0: no route)
    uint32_t GetNPorts(uint32_t dst) const
    {
        if (dst >= m_nRanks)
        {
            return 0;
        }
        const uint16_t g = GroupOf(dst);
        return m_groupOffset[g + 1] - m_groupOffset[g];
    }

    /// Prefetch the route to \p dst (FabricLookaheadScheduler).
    /// \param dst destination
    void PrefetchRoute(uint32_t dst) const
    {
        if (dst < m_nRanks)
        {
            if (m_dense)
            {
                __builtin_prefetch(&m_group[dst]);
            }
            else
            {
                __builtin_prefetch(m_runStart.data());
            }
            __builtin_prefetch(m_groupOffset.data());
        }
    }

    /// \param dst destination \param i index among its ports \return port index
    uint16_t GetPort(uint32_t dst, uint32_t i) const
    {
        return m_ports[m_groupOffset[GroupOf(dst)] + i];
    }

  private:
    /// \return the group holding exactly these ports (created if new)
    uint16_t Group(const std::vector<uint16_t>& ports);

    /// \param dst a destination below m_nRanks \return its group
    uint16_t GroupOf(uint32_t dst) const
    {
        if (m_dense)
        {
            return m_group[dst];
        }
        // the last run starting at or before dst (the first starts at 0)
        const auto after = std::upper_bound(m_runStart.begin(), m_runStart.end(), dst);
        return m_runGroup[after - m_runStart.begin() - 1];
    }

    /// Set \p dst (the next destination, or the last one again) to group \p g.
    void Set(uint32_t dst, uint16_t g);
    /// Turn the runs into a group per destination.
    void MakeDense();

    uint32_t m_nRanks{0};                //!< destinations appended (the rest: no route)
    uint32_t m_maxRuns;                  //!< runs before the table turns dense
    bool m_dense{false};                 //!< m_group holds the routes (else the runs)
    std::vector<uint16_t> m_group;       //!< dense: destination -> port group (0: no route)
    std::vector<uint32_t> m_runStart;    //!< runs: first destination of each, ascending
    std::vector<uint16_t> m_runGroup;    //!< runs: the group of each
    std::vector<uint32_t> m_groupOffset; //!< first port of each group, size groups+1
    std::vector<uint16_t> m_ports;       //!< concatenated groups
    std::map<std::vector<uint16_t>, uint16_t> m_groupIndex; //!< ports -> group
    uint16_t m_lastGroup{0}; //!< the group Group returned last (0: no route)
};

/**
 * \ingroup gpu-fabric
 * \brief Explicit routes of a fabric (direct-connect schedules that name
 * their path): route id -> the output port taken at each hop, the source
 * GPU's port first. Shared by all nodes of one fabric.
 */
struct FabricSourceRoutes
{
    std::vector<std::vector<uint16_t>> ports; //!< per route, per hop
};

/**
 * \ingroup gpu-fabric
 * \brief The ECMP hash of every node, at packet and at flow level: a
 * deterministic mix of (source, destination, flow label) salted per node, so
 * that a flow keeps one path and successive tiers do not make correlated
 * choices. Inline: the data plane computes it once per hop.
 * \param src source rank \param dst destination rank
 * \param flowLabel flow label \param salt per-node salt
 * \return a well-mixed 32-bit value
 */
inline uint32_t
FabricEcmpHash(uint32_t src, uint32_t dst, uint16_t flowLabel, uint32_t salt)
{
    // 64-bit finalizer mix (splitmix-style): cheap, deterministic, and every
    // input bit affects every output bit.
    uint64_t x = (static_cast<uint64_t>(src) << 32) ^ dst;
    x ^= (static_cast<uint64_t>(flowLabel) << 16) ^ (static_cast<uint64_t>(salt) << 40) ^ salt;
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return static_cast<uint32_t>(x ^ (x >> 32));
}

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_ROUTING_TABLE_H
