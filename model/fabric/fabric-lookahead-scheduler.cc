/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-lookahead-scheduler.h"

#include "fabric-event.h"

#include "ns3/event-impl.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FabricLookaheadScheduler");
NS_OBJECT_ENSURE_REGISTERED(FabricLookaheadScheduler);

TypeId
FabricLookaheadScheduler::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FabricLookaheadScheduler")
            .SetParent<Scheduler>()
            .SetGroupName("GpuFabric")
            .AddConstructor<FabricLookaheadScheduler>()
            .AddAttribute("Depth",
                          "Events looked ahead at each removal, the next one included "
                          "(1: none, the map scheduler's work alone).",
                          UintegerValue(6),
                          MakeUintegerAccessor(&FabricLookaheadScheduler::m_depth),
                          MakeUintegerChecker<uint32_t>(1, 16));
    return tid;
}

FabricLookaheadScheduler::FabricLookaheadScheduler()
    : m_list(PoolAllocator<std::pair<const Scheduler::EventKey, Entry>>(&m_pool)),
      m_hint(m_list.end())
{
}

void
FabricLookaheadScheduler::NodePool::Grow()
{
    // chunks double up to 4096 nodes (256 KiB), so a small run stays small
    const std::size_t n =
        m_chunks.empty() ? 64 : std::min<std::size_t>(4096, 2 * 64 * m_chunks.size());
    m_chunks.emplace_back(new Block[n]);
    for (std::size_t i = n; i-- > 0;)
    {
        Put(&m_chunks.back()[i]);
    }
}

FabricLookaheadScheduler::~FabricLookaheadScheduler() = default;

void
FabricLookaheadScheduler::Insert(const Event& ev)
{
    FabricRecurringEventBase* fabric = FabricRecurringEventBase::Scheduling();
    if (fabric != nullptr && static_cast<EventImpl*>(fabric) != ev.impl)
    {
        fabric = nullptr;
    }
    // Most events land at the back (a cable's arrivals come in time order)
    // or just after the previous insertion that did not (a port's next end of
    // serialization): a hint that holds makes the insertion O(1) and spares
    // the walk down the tree, whose lower levels a large run keeps cold. A
    // hint that fails costs two key comparisons before the usual walk.
    const bool atBack = m_list.empty() || m_list.rbegin()->first < ev.key;
    const auto it =
        m_list.emplace_hint(atBack ? m_list.end() : m_hint, ev.key, Entry{ev.impl, fabric});
    NS_ASSERT_MSG(it->second.impl == ev.impl, "duplicate event key");
    if (!atBack)
    {
        m_hint = std::next(it);
    }
    // an event that lands inside the window (rare: most land thousands of
    // places back) makes it stale
    if (m_windowValid && (m_windowSize < m_depth || ev.key < Place(m_windowSize - 1)->first))
    {
        m_windowValid = false;
    }
}

bool
FabricLookaheadScheduler::IsEmpty() const
{
    return m_list.empty();
}

Scheduler::Event
FabricLookaheadScheduler::PeekNext() const
{
    NS_ASSERT(!m_list.empty());
    const auto it = m_list.begin();
    return Event{it->second.impl, it->first};
}

Scheduler::Event
FabricLookaheadScheduler::RemoveNext()
{
    NS_ASSERT(!m_list.empty());
    if (!m_windowValid)
    {
        Rebuild();
    }
    // place 0 is the head; the window moves a place on, one step of the map
    const auto head = Place(0);
    const Event ev{head->second.impl, head->first};
    // the event after the window's last, found before the head goes (with
    // Depth 1 the last is the head)
    const auto last = Place(m_windowSize - 1);
    const auto after = m_windowSize == m_depth ? std::next(last) : m_list.end();
    m_windowFirst = (m_windowFirst + 1) % kMaxDepth;
    --m_windowSize;
    if (head == m_hint)
    {
        m_hint = m_list.end();
    }
    m_list.erase(head);
    if (after != m_list.end())
    {
        Place(m_windowSize++) = after;
    }
    LookAhead();
    return ev;
}

void
FabricLookaheadScheduler::Remove(const Event& ev)
{
    const auto it = m_list.find(ev.key);
    NS_ASSERT(it != m_list.end() && it->second.impl == ev.impl);
    if (m_windowValid && (m_windowSize < m_depth || !(Place(m_windowSize - 1)->first < ev.key)))
    {
        m_windowValid = false; // it may be in the window
    }
    if (it == m_hint)
    {
        m_hint = m_list.end();
    }
    m_list.erase(it);
}

void
FabricLookaheadScheduler::Rebuild()
{
    m_windowFirst = 0;
    m_windowSize = 0;
    for (auto it = m_list.begin(); it != m_list.end() && m_windowSize < m_depth; ++it)
    {
        m_window[m_windowSize++] = it;
    }
    m_windowValid = true;
}

void
FabricLookaheadScheduler::LookAhead()
{
    // the event at place k (0: next) takes stage m_depth - 1 - k; the last
    // place only brings the event itself in
    // (a window wider than Depth, after Depth was lowered, shrinks by itself)
    for (uint32_t k = 0; k < m_windowSize && k < m_depth; ++k)
    {
        const Entry& e = Place(k)->second;
        if (k + 1 == m_depth)
        {
            __builtin_prefetch(e.impl);
        }
        else if (e.fabric != nullptr)
        {
            e.fabric->Prefetch(m_depth - 1 - k);
        }
    }
}

} // namespace ns3
