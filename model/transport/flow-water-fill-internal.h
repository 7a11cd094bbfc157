/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FLOW_WATER_FILL_INTERNAL_H
#define GPU_FABRIC_FLOW_WATER_FILL_INTERNAL_H

// The module's own (not installed): FlowTransport's max-min water-filling.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Max-min fair rates of flows over links by progressive filling, as
 * FlowTransport computes them for one connected component.
 *
 * All unfrozen flows grow at the same pace; the link whose fair share
 * (capacity left / unfrozen flows) is smallest saturates first (ties: the
 * lower link index) and freezes its flows at that share; their rates are
 * taken from their other links; repeat.
 *
 * The links wait in a binary heap keyed by (share, link). A link's share
 * never falls while flows freeze (a flow leaves at a rate no higher than the
 * share of each of its links), so the heap is lazy: a link keeps the entry
 * it has, a lower bound of its share, and is re-entered with its current
 * share only when that entry reaches the top. A link gets a new entry
 * at once only where rounding makes its share fall below its entry. The
 * links thus saturate in exactly the order, and at exactly the shares, of
 * a heap re-keyed after every change, with a heap operation per link
 * saturated or re-entered instead of one per (flow, link) frozen.
 */
class FlowWaterFill
{
  public:
    /**
     * Fill one component.
     * \param links the component's links (every link of every flow of them)
     * \param nLinks how many
     * \param capacity link -> capacity (any unit; rates come out in it)
     * \param linkFlows link -> the flows on it (a container of flow ids)
     * \param flowLinks flow id -> the links it crosses
     * \param rate flow id -> its max-min rate (written for the component's
     *   flows; sized beyond the largest flow id)
     */
    template <typename LinkFlows, typename FlowLinks>
    void Fill(const uint32_t* links,
              size_t nLinks,
              const std::vector<double>& capacity,
              LinkFlows&& linkFlows,
              FlowLinks&& flowLinks,
              std::vector<double>& rate)
    {
        if (m_capLeft.size() < capacity.size())
        {
            m_capLeft.resize(capacity.size(), 0);
            m_unfrozen.resize(capacity.size(), 0);
            m_key.resize(capacity.size(), 0);
        }
        if (m_frozen.size() < rate.size())
        {
            m_frozen.resize(rate.size(), 0);
        }
        const uint32_t epoch = ++m_epoch;
        const auto later = std::greater<std::pair<double, uint32_t>>(); // min-heap
        m_heap.clear();
        for (size_t i = 0; i < nLinks; ++i)
        {
            const uint32_t l = links[i];
            m_capLeft[l] = capacity[l];
            m_unfrozen[l] = static_cast<uint32_t>(linkFlows(l).size());
            if (m_unfrozen[l] > 0)
            {
                m_key[l] = m_capLeft[l] / m_unfrozen[l];
                m_heap.emplace_back(m_key[l], l);
            }
        }
        std::make_heap(m_heap.begin(), m_heap.end(), later);
        double level = 0;
        while (!m_heap.empty())
        {
            std::pop_heap(m_heap.begin(), m_heap.end(), later);
            const auto [share, l] = m_heap.back();
            m_heap.pop_back();
            if (m_unfrozen[l] == 0)
            {
                continue;
            }
            const double current = Share(l);
            if (current != share)
            {
                // a lower bound: back in with the share it has now
                m_key[l] = current;
                m_heap.emplace_back(current, l);
                std::push_heap(m_heap.begin(), m_heap.end(), later);
                continue;
            }
            level = std::max(level, share);
            for (uint32_t id : linkFlows(l))
            {
                if (m_frozen[id] == epoch)
                {
                    continue;
                }
                m_frozen[id] = epoch;
                rate[id] = level;
                for (uint32_t l2 : flowLinks(id))
                {
                    m_capLeft[l2] -= level;
                    --m_unfrozen[l2];
                    if (l2 != l && m_unfrozen[l2] > 0)
                    {
                        const double s = Share(l2);
                        if (s < m_key[l2])
                        {
                            // rounding made it fall below its entry
                            m_key[l2] = s;
                            m_heap.emplace_back(s, l2);
                            std::push_heap(m_heap.begin(), m_heap.end(), later);
                        }
                    }
                }
            }
        }
    }

  private:
    /// \return the fair share of link \p l now (it has unfrozen flows)
    double Share(uint32_t l) const
    {
        return std::max(0.0, m_capLeft[l]) / m_unfrozen[l];
    }

    std::vector<double> m_capLeft;                   //!< link -> capacity not yet given
    std::vector<uint32_t> m_unfrozen;                //!< link -> flows not yet frozen
    std::vector<double> m_key;                       //!< link -> its lowest heap entry, at most
    std::vector<uint32_t> m_frozen;                  //!< flow -> epoch it was frozen in
    std::vector<std::pair<double, uint32_t>> m_heap; //!< (share, link)
    uint32_t m_epoch{0};                             //!< Fill calls
};

} // namespace ns3

#endif // GPU_FABRIC_FLOW_WATER_FILL_INTERNAL_H
