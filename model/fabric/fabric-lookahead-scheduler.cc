/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-lookahead-scheduler.h"

#include "fabric-event.h"

#include "ns3/event-impl.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#endif

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
                          UintegerValue(5),
                          MakeUintegerAccessor(&FabricLookaheadScheduler::SetDepth,
                                               &FabricLookaheadScheduler::GetDepth),
                          MakeUintegerChecker<uint32_t>(1, kMaxDepth));
    return tid;
}

FabricLookaheadScheduler::FabricLookaheadScheduler()
    : m_list(PoolAllocator<std::pair<const Scheduler::EventKey, Entry>>(&m_pool))
{
    NS_LOG_FUNCTION(this);
#ifdef __GLIBCXX__
    // the map's node must fit a block, or every insertion falls back to the heap
    using Node = std::_Rb_tree_node<EventMap::value_type>;
    static_assert(sizeof(Node) <= NodePool::kBlock && alignof(Node) <= NodePool::kBlock,
                  "a map node no longer fits the pool's block");
#endif
}

void
FabricLookaheadScheduler::SetDepth(uint32_t depth)
{
    NS_LOG_FUNCTION(this << depth);
    m_depth = depth;
    m_windowValid = false; // a deeper window must be filled again
}

uint32_t
FabricLookaheadScheduler::GetDepth() const
{
    return m_depth;
}

void*
FabricLookaheadScheduler::NodePool::Get()
{
    if (m_free == nullptr)
    {
        Grow();
    }
    Block* b = m_free;
    ASAN_UNPOISON_MEMORY_REGION(b, kBlock);
    m_free = b->next;
    return b;
}

void
FabricLookaheadScheduler::NodePool::Put(void* p)
{
    auto* b = static_cast<Block*>(p);
    b->next = m_free;
    m_free = b;
    // under AddressSanitizer a read of a freed node is an error, as it would
    // be with the heap's allocator
    ASAN_POISON_MEMORY_REGION(b, kBlock);
}

void
FabricLookaheadScheduler::NodePool::Grow()
{
    // chunks double from 64 nodes up to 4096 (256 KiB): a small run stays small
    const std::size_t n = std::size_t{64} << std::min<std::size_t>(6, m_chunks.size());
    m_chunks.emplace_back(std::unique_ptr<Block[]>(new Block[n]), n);
    for (std::size_t i = n; i-- > 0;)
    {
        Put(&m_chunks.back().first[i]);
    }
}

FabricLookaheadScheduler::NodePool::~NodePool()
{
    for (auto& [chunk, n] : m_chunks)
    {
        ASAN_UNPOISON_MEMORY_REGION(chunk.get(), n * kBlock);
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
    // Events come in streams whose times grow (a cable's arrivals, a port's
    // ends of serialization): the next event of a stream lands just after
    // its previous one. Two hints remember where the two most recent streams
    // inserted (a hint that holds is renewed in place, else the older one is
    // replaced); one that holds makes the insertion O(1) and spares the walk down
    // the tree, whose lower levels a large run keeps cold.
    const Scheduler::EventKey& k = ev.key;
    uint32_t slot = 1 - m_lastHint; // replaced when no hint holds
    EventMap::iterator it;
    bool hinted = false;
    for (uint32_t i = 0; i < m_hints.size() && !hinted; ++i)
    {
        const Hint& h = m_hints[m_lastHint ^ i];
        if (h.valid && h.after < k && (h.before == m_list.end() || k < h.before->first))
        {
            slot = m_lastHint ^ i;
            it = m_list.emplace_hint(h.before, k, Entry{ev.impl, fabric});
            hinted = true;
        }
    }
    if (!hinted)
    {
        it = m_list.emplace(k, Entry{ev.impl, fabric}).first;
    }
    NS_ASSERT_MSG(it->second.impl == ev.impl, "duplicate event key");
    m_hints[slot] = Hint{k, std::next(it), true};
    m_lastHint = slot;
    // an event that lands inside the window (rare: most land thousands of
    // places back) makes it stale
    if (m_windowValid && InWindowReach(ev.key))
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
    if (!m_windowValid || m_windowSize == 0)
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
    Forget(head);
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
    NS_LOG_FUNCTION(this << ev.key.m_ts << ev.key.m_uid);
    const auto it = m_list.find(ev.key);
    NS_ASSERT(it != m_list.end() && it->second.impl == ev.impl);
    if (m_windowValid && InWindowReach(ev.key))
    {
        m_windowValid = false; // it may be in the window
    }
    Forget(it);
    m_list.erase(it);
}

bool
FabricLookaheadScheduler::InWindowReach(const Scheduler::EventKey& key)
{
    // a window short of Depth holds every event: any key reaches it
    return m_windowSize < m_depth || !(Place(m_windowSize - 1)->first < key);
}

void
FabricLookaheadScheduler::Forget(EventMap::iterator it)
{
    for (Hint& h : m_hints)
    {
        if (h.valid && h.before == it)
        {
            h.valid = false;
        }
    }
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
    // the event at place k (0: next) takes stage depth - 1 - k; the last
    // place only brings the event itself in; the fields are copied
    // because a stage's call could, for all the compiler knows, change them
    const uint32_t depth = m_depth;
    const uint32_t first = m_windowFirst;
    const uint32_t n = std::min(m_windowSize, depth);
    for (uint32_t k = 0; k < n; ++k)
    {
        const Entry& e = m_window[(first + k) % kMaxDepth]->second;
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
