/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-lookahead-scheduler.h"

#include "fabric-internal.h"

#include "ns3/event-impl.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FabricLookaheadScheduler");
NS_OBJECT_ENSURE_REGISTERED(FabricLookaheadScheduler);

namespace
{

/// \return true if \p a and \p b are the same event's key
bool
SameKey(const Scheduler::EventKey& a, const Scheduler::EventKey& b)
{
    return a.m_uid == b.m_uid && a.m_ts == b.m_ts;
}

} // namespace

TypeId
FabricLookaheadScheduler::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FabricLookaheadScheduler")
            .SetParent<Scheduler>()
            .SetGroupName("GpuFabric")
            .AddConstructor<FabricLookaheadScheduler>()
            .AddAttribute("Depth",
                          "Events held in order at the head of the queue, the next one included; "
                          "at each removal those that are data plane events are asked to "
                          "prefetch (1: no stages, only the next event itself is brought in).",
                          UintegerValue(5),
                          MakeUintegerAccessor(&FabricLookaheadScheduler::SetDepth,
                                               &FabricLookaheadScheduler::GetDepth),
                          MakeUintegerChecker<uint32_t>(1, kMaxDepth))
            .AddAttribute("MinPending",
                          "Events held (the look-ahead's included) below which no event is asked "
                          "to prefetch (a run that holds few events is small enough for the "
                          "caches; 0: always).",
                          UintegerValue(1000),
                          MakeUintegerAccessor(&FabricLookaheadScheduler::m_minPending),
                          MakeUintegerChecker<uint32_t>());
    return tid;
}

namespace
{
/// the scheduler made last: the running simulation's (it makes its scheduler
/// when set up, and replaces it only by making another)
const FabricLookaheadScheduler* g_inUse = nullptr;
} // namespace

const FabricLookaheadScheduler*
FabricSchedulerInUse()
{
    return g_inUse;
}

FabricLookaheadScheduler::FabricLookaheadScheduler()
{
    NS_LOG_FUNCTION(this);
    g_inUse = this;
    m_heapPlace.fill(kNotInHeap);
    m_laneCache.fill(kNoLane);
    m_lanes.reserve(kMaxLanes);
    m_heap.reserve(kMaxLanes + 1);
}

FabricLookaheadScheduler::~FabricLookaheadScheduler()
{
    if (g_inUse == this)
    {
        g_inUse = nullptr;
    }
}

uint64_t
FabricLookaheadScheduler::GetPending() const
{
    return m_pending;
}

void
FabricLookaheadScheduler::SetDepth(uint32_t depth)
{
    NS_LOG_FUNCTION(this << depth);
    m_depth = depth;
    // a shallower window gives its last events back (each the least queued
    // then), a deeper one takes more
    while (m_windowSize > m_depth)
    {
        const Entry last = Window(--m_windowSize);
        QueueFirst(last);
    }
    Fill();
}

uint32_t
FabricLookaheadScheduler::GetDepth() const
{
    return m_depth;
}

FabricLookaheadScheduler::Counts
FabricLookaheadScheduler::GetCounts() const
{
    return m_counts;
}

uint32_t
FabricLookaheadScheduler::GetLaneCount() const
{
    return static_cast<uint32_t>(m_lanes.size());
}

void
FabricLookaheadScheduler::Lane::Grow()
{
    const std::size_t capacity = std::max<std::size_t>(16, 2 * m_ring.size());
    std::vector<Entry> ring(capacity);
    for (uint32_t i = 0; i < m_size; ++i)
    {
        ring[i] = At(i);
    }
    m_ring.swap(ring);
    m_mask = static_cast<uint32_t>(capacity - 1);
    m_head = 0;
}

void
FabricLookaheadScheduler::Lane::PushBack(const Entry& e)
{
    if (m_size == m_ring.size())
    {
        Grow();
    }
    m_ring[(m_head + m_size) & m_mask] = e;
    ++m_size;
}

void
FabricLookaheadScheduler::Lane::PushFront(const Entry& e)
{
    if (m_size == m_ring.size())
    {
        Grow();
    }
    m_head = (m_head - 1) & m_mask;
    m_ring[m_head] = e;
    ++m_size;
}

void
FabricLookaheadScheduler::Lane::PopFront()
{
    m_head = (m_head + 1) & m_mask;
    --m_size;
}

bool
FabricLookaheadScheduler::Lane::Erase(const Scheduler::EventKey& key)
{
    // the lane is sorted: find the key by halves, close the gap behind it
    uint32_t lo = 0;
    uint32_t hi = m_size;
    while (lo < hi)
    {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (At(mid).key < key)
        {
            lo = mid + 1;
        }
        else
        {
            hi = mid;
        }
    }
    if (lo == m_size || !SameKey(At(lo).key, key))
    {
        return false;
    }
    for (uint32_t i = lo; i + 1 < m_size; ++i)
    {
        m_ring[(m_head + i) & m_mask] = At(i + 1);
    }
    --m_size;
    return true;
}

void
FabricLookaheadScheduler::Place(uint32_t i, const Head& h)
{
    m_heap[i] = h;
    m_heapPlace[h.lane] = i;
}

void
FabricLookaheadScheduler::SiftUp(uint32_t i)
{
    const Head h = m_heap[i];
    while (i > 0)
    {
        const uint32_t parent = (i - 1) / 2;
        if (h.key >= m_heap[parent].key)
        {
            break;
        }
        Place(i, m_heap[parent]);
        i = parent;
    }
    Place(i, h);
}

void
FabricLookaheadScheduler::SiftDown(uint32_t i)
{
    const Head h = m_heap[i];
    const auto n = static_cast<uint32_t>(m_heap.size());
    while (true)
    {
        uint32_t child = 2 * i + 1;
        if (child >= n)
        {
            break;
        }
        if (child + 1 < n)
        {
            child += static_cast<uint32_t>(m_heap[child + 1].key < m_heap[child].key);
        }
        if (m_heap[child].key >= h.key)
        {
            break;
        }
        Place(i, m_heap[child]);
        i = child;
    }
    Place(i, h);
}

void
FabricLookaheadScheduler::Reheap(uint32_t lane)
{
    const bool empty = lane == kMap ? m_map.empty() : m_lanes[lane].Empty();
    const uint32_t i = m_heapPlace[lane];
    if (empty)
    {
        if (i == kNotInHeap)
        {
            return;
        }
        m_heapPlace[lane] = kNotInHeap;
        const Head last = m_heap.back();
        m_heap.pop_back();
        if (i < m_heap.size())
        {
            // the last head fills the hole, and moves whichever way it sorts
            Place(i, last);
            SiftUp(i);
            SiftDown(m_heapPlace[last.lane]);
        }
        return;
    }
    const Order128 key =
        Head::Order(lane == kMap ? m_map.begin()->first : m_lanes[lane].Front().key);
    if (i == kNotInHeap)
    {
        m_heap.push_back(Head{key, lane});
        SiftUp(static_cast<uint32_t>(m_heap.size() - 1));
        return;
    }
    const bool less = key < m_heap[i].key;
    m_heap[i].key = key;
    if (less)
    {
        SiftUp(i);
    }
    else
    {
        SiftDown(i);
    }
}

uint32_t
FabricLookaheadScheduler::LaneFor(uint64_t delay)
{
    // Fibonacci hashing: the top bits of delay * 2^64 / phi
    uint32_t& cached = m_laneCache[(delay * 0x9E3779B97F4A7C15ULL) >> (64 - kLaneCacheBits)];
    if (cached < m_lanes.size() && m_lanes[cached].delay == delay)
    {
        return cached;
    }
    // the delay's lane if it has one; else a new lane, or an empty one whose
    // delay has not come for a while
    uint32_t empty = kNoLane;
    for (uint32_t i = 0; i < m_lanes.size(); ++i)
    {
        if (m_lanes[i].delay == delay)
        {
            return cached = i;
        }
        if (empty == kNoLane && m_lanes[i].Empty())
        {
            empty = i;
        }
    }
    if (m_lanes.size() < kMaxLanes)
    {
        m_lanes.emplace_back();
        m_lanes.back().delay = delay;
        return cached = static_cast<uint32_t>(m_lanes.size() - 1);
    }
    if (empty != kNoLane)
    {
        m_lanes[empty].delay = delay;
        return cached = empty;
    }
    return kMap;
}

bool
FabricLookaheadScheduler::Queue(const Entry& e)
{
    // an event in the past of the last removal has no delay (ns-3's default
    // simulator never schedules one): the map takes it
    const uint32_t lane = e.key.m_ts >= m_now ? LaneFor(e.key.m_ts - m_now) : kMap;
    if (lane != kMap)
    {
        Lane& l = m_lanes[lane];
        if (l.Empty())
        {
            l.PushBack(e);
            Reheap(lane);
            return true;
        }
        if (l.Back().key < e.key)
        {
            l.PushBack(e); // the common case: the lane's head is unchanged
            return true;
        }
    }
    const bool first = m_map.empty() || e.key < m_map.begin()->first;
    const bool inserted = m_map.emplace(e.key, e).second;
    NS_ASSERT_MSG(inserted, "two events with one key");
    (void)inserted;
    if (first)
    {
        Reheap(kMap);
    }
    return false;
}

void
FabricLookaheadScheduler::QueueFirst(const Entry& e)
{
    if (m_heap.empty())
    {
        Queue(e);
        return;
    }
    // less than every queued event: the front of the least head's lane keeps
    // that lane sorted and the heap's order
    const uint32_t lane = m_heap[0].lane;
    if (lane == kMap)
    {
        m_map.emplace_hint(m_map.begin(), e.key, e);
    }
    else
    {
        m_lanes[lane].PushFront(e);
    }
    m_heap[0].key = Head::Order(e.key);
}

FabricLookaheadScheduler::Entry
FabricLookaheadScheduler::TakeLeast()
{
    const uint32_t lane = m_heap[0].lane;
    Entry e;
    if (lane == kMap)
    {
        const auto it = m_map.begin();
        e = it->second;
        m_map.erase(it);
    }
    else
    {
        Lane& l = m_lanes[lane];
        e = l.Front();
        l.PopFront();
    }
    Reheap(lane);
    return e;
}

void
FabricLookaheadScheduler::InsertInWindow(const Entry& e)
{
    uint32_t i = m_windowSize++;
    while (i > 0 && e.key < Window(i - 1).key)
    {
        Window(i) = Window(i - 1);
        --i;
    }
    Window(i) = e;
}

void
FabricLookaheadScheduler::Fill()
{
    while (m_windowSize < m_depth && !m_heap.empty())
    {
        const Entry e = TakeLeast();
        Window(m_windowSize++) = e;
    }
}

void
FabricLookaheadScheduler::Insert(const Event& ev)
{
    FabricRecurringEventBase* fabric = FabricRecurringEventBase::Scheduling();
    if (fabric != nullptr && static_cast<EventImpl*>(fabric) != ev.impl)
    {
        fabric = nullptr;
    }
    const Entry e{ev.key, ev.impl, fabric};
    ++m_pending;
    if (m_windowSize < m_depth)
    {
        InsertInWindow(e); // nothing is queued behind a window short of Depth
        ++m_counts.window;
        return;
    }
    if (e.key < Window(m_windowSize - 1).key)
    {
        // lands inside the window (rare: most land thousands of places back);
        // the window's last is then the least queued event
        const Entry last = Window(--m_windowSize);
        InsertInWindow(e);
        QueueFirst(last);
        ++m_counts.window;
        return;
    }
    ++(Queue(e) ? m_counts.lanes : m_counts.overflow);
}

bool
FabricLookaheadScheduler::IsEmpty() const
{
    return m_windowSize == 0;
}

Scheduler::Event
FabricLookaheadScheduler::PeekNext() const
{
    if (m_windowSize == 0)
    {
        // ns-3.37's NullMessageSimulatorImpl asks for the next event's time
        // when a rank's last event sends to another rank (Next() in
        // CalculateGuaranteeTime): no event is due, ever
        Scheduler::Event none;
        none.impl = nullptr;
        none.key.m_ts = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
        none.key.m_uid = std::numeric_limits<uint32_t>::max();
        none.key.m_context = 0;
        return none;
    }
    const Entry& e = m_window[m_windowFirst];
    return Event{e.impl, e.key};
}

Scheduler::Event
FabricLookaheadScheduler::RemoveNext()
{
    NS_ASSERT(m_windowSize > 0);
    const Entry e = Window(0);
    m_windowFirst = (m_windowFirst + 1) % kMaxDepth;
    --m_windowSize;
    m_now = e.key.m_ts;
    --m_pending;
    Fill(); // one place, if anything is queued
    if (m_pending >= m_minPending)
    {
        LookAhead();
    }
    return Event{e.impl, e.key};
}

void
FabricLookaheadScheduler::Remove(const Event& ev)
{
    NS_LOG_FUNCTION(this << ev.key.m_ts << ev.key.m_uid);
    for (uint32_t k = 0; k < m_windowSize; ++k)
    {
        if (SameKey(Window(k).key, ev.key))
        {
            NS_ASSERT(Window(k).impl == ev.impl);
            for (; k + 1 < m_windowSize; ++k)
            {
                Window(k) = Window(k + 1);
            }
            --m_windowSize;
            --m_pending;
            Fill();
            return;
        }
    }
    const auto it = m_map.find(ev.key);
    if (it != m_map.end())
    {
        NS_ASSERT(it->second.impl == ev.impl);
        const bool first = it == m_map.begin();
        m_map.erase(it);
        --m_pending;
        if (first)
        {
            Reheap(kMap);
        }
        return;
    }
    for (uint32_t lane = 0; lane < m_lanes.size(); ++lane)
    {
        Lane& l = m_lanes[lane];
        if (!l.Empty() && !(ev.key < l.Front().key) && !(l.Back().key < ev.key) && l.Erase(ev.key))
        {
            --m_pending;
            Reheap(lane);
            return;
        }
    }
    NS_FATAL_ERROR("FabricLookaheadScheduler: removing an event it does not hold (time "
                   << ev.key.m_ts << ", uid " << ev.key.m_uid << ")");
}

void
FabricLookaheadScheduler::LookAhead()
{
    // the event at place k (0: next) takes stage depth - 1 - k; the last
    // place only brings the event itself in; the fields are copied
    // because a stage's call could, for all the compiler knows, change them
    const uint32_t depth = m_depth;
    const uint32_t first = m_windowFirst;
    const uint32_t n = std::min(m_windowSize, depth);
    for (uint32_t k = 0; k < n; ++k)
    {
        const Entry& e = m_window[(first + k) % kMaxDepth];
        if (k + 1 == depth)
        {
            __builtin_prefetch(e.impl);
        }
        else if (e.fabric != nullptr)
        {
            e.fabric->Prefetch(depth - 1 - k);
        }
    }
}

} // namespace ns3
