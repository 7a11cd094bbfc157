/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_LOOKAHEAD_SCHEDULER_H
#define GPU_FABRIC_FABRIC_LOOKAHEAD_SCHEDULER_H

#include "ns3/scheduler.h"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace ns3
{

class FabricRecurringEventBase;

/**
 * \ingroup gpu-fabric
 * \brief ns-3's map scheduler that, on each removal, asks the next few data
 * plane events to prefetch what they will read.
 *
 * A packet event of a large fabric finds its port, cable, packet and routing
 * entry cold (last touched thousands of events earlier) and waits on memory
 * for each in turn. The events a few places from the head of the queue are
 * known in advance: each removal moves every one of them a place forward,
 * and an event at place k (0: the next to run) is asked for its stage
 * Depth - 1 - k prefetch (stage 1: its owner's fields; later stages follow
 * the pointers loaded by the earlier ones, now in cache), so that the loads of one event overlap
 * with the work of the events before it. The order of events, and so every result, is the map
 * scheduler's (same key, same comparison); only the time to run them changes. Events other than
 * FabricRecurringEvent occurrences are only prefetched themselves.
 */
class FabricLookaheadScheduler : public Scheduler
{
  public:
    /**
     * Register this type with the TypeId system.
     * \return the object TypeId
     */
    static TypeId GetTypeId();

    FabricLookaheadScheduler();
    ~FabricLookaheadScheduler() override;

    // Inherited
    void Insert(const Scheduler::Event& ev) override;
    bool IsEmpty() const override;
    Scheduler::Event PeekNext() const override;
    Scheduler::Event RemoveNext() override;
    void Remove(const Scheduler::Event& ev) override;

  private:
    /**
     * The map's nodes, one cache line each, reused last freed first: the
     * node an insertion takes is the one the last removal freed, still in
     * cache (a general allocator hands out nodes spread over its pages).
     */
    class NodePool
    {
      public:
        static constexpr std::size_t kBlock = 64; //!< bytes per node

        NodePool() = default;
        ~NodePool();
        NodePool(const NodePool&) = delete;
        NodePool& operator=(const NodePool&) = delete;

        /// \return a free block
        void* Get();

        /// \param p a block from Get(), free again
        void Put(void* p);

      private:
        /// A node's storage, or a link of the free list.
        union alignas(kBlock) Block {
            Block* next;
            unsigned char bytes[kBlock];
        };

        /// Add a chunk of blocks to the free list.
        void Grow();

        Block* m_free{nullptr}; //!< free blocks, last freed first
        std::vector<std::pair<std::unique_ptr<Block[]>, std::size_t>> m_chunks; //!< all blocks
    };

    /// std::map's allocator over a NodePool (nodes only; anything else from the heap).
    template <typename T>
    struct PoolAllocator
    {
        using value_type = T; //!< what it allocates

        /// \param pool the scheduler's pool
        explicit PoolAllocator(NodePool* pool)
            : pool(pool)
        {
        }

        /// The same pool, for another type (std::map rebinds to its node).
        template <typename U>
        PoolAllocator(const PoolAllocator<U>& other)
            : pool(other.pool)
        {
        }

        /// \param n objects \return storage for them (a pool block for one node)
        T* allocate(std::size_t n)
        {
            if (n == 1 && sizeof(T) <= NodePool::kBlock)
            {
                return static_cast<T*>(pool->Get());
            }
            return std::allocator<T>().allocate(n);
        }

        /// \param p storage from allocate() \param n its object count
        void deallocate(T* p, std::size_t n)
        {
            if (n == 1 && sizeof(T) <= NodePool::kBlock)
            {
                pool->Put(p);
                return;
            }
            std::allocator<T>().deallocate(p, n);
        }

        /// \return true if both draw from the same pool
        template <typename U>
        bool operator==(const PoolAllocator<U>& other) const
        {
            return pool == other.pool;
        }

        /// \return true unless both draw from the same pool
        template <typename U>
        bool operator!=(const PoolAllocator<U>& other) const
        {
            return pool != other.pool;
        }

        NodePool* pool; //!< where nodes come from
    };

    /// What the map keeps of an event.
    struct Entry
    {
        EventImpl* impl;                  //!< the event
        FabricRecurringEventBase* fabric; //!< the same, if a data plane event
    };

    using EventMap = std::map<Scheduler::EventKey,
                              Entry,
                              std::less<Scheduler::EventKey>,
                              PoolAllocator<std::pair<const Scheduler::EventKey, Entry>>>;
    static constexpr uint32_t kMaxDepth = 16; //!< the Depth attribute's bound

    /// \param k a place (0: the head of the queue) \return the window's slot for it
    EventMap::iterator& Place(uint32_t k)
    {
        return m_window[(m_windowFirst + k) % kMaxDepth];
    }

    /// \param key an event's key \return true if an event of that key would be
    /// in the window (inserted or removed there, it makes the window stale)
    bool InWindowReach(const Scheduler::EventKey& key);
    /// Drop the hints that point at an event about to be erased.
    /// \param it the event
    void Forget(EventMap::iterator it);
    /// \param depth the Depth attribute's new value (the window is rebuilt)
    void SetDepth(uint32_t depth);
    /// \return the Depth attribute
    uint32_t GetDepth() const;
    /// Refill the window from the head of the queue.
    void Rebuild();
    /// Ask the window's events for their prefetch stages.
    void LookAhead();

    NodePool m_pool; //!< the map's nodes (outlives it)
    EventMap m_list; //!< the events, by time and uid

    /// Where an insertion went: after `after`, before `before`.
    struct Hint
    {
        Scheduler::EventKey after; //!< the key inserted
        EventMap::iterator before; //!< its successor then (end: none)
        bool valid{false};         //!< `before` still in the map
    };

    std::array<Hint, 2> m_hints;                        //!< where the two most recent streams went
    uint32_t m_lastHint{0};                             //!< the more recent of them
    uint32_t m_depth{5};                                //!< places looked ahead (1: none)
    std::array<EventMap::iterator, kMaxDepth> m_window; //!< the first events of m_list, a ring
    uint32_t m_windowFirst{0};                          //!< place 0's slot in m_window
    uint32_t m_windowSize{0};                           //!< places held
    bool m_windowValid{false};                          //!< else Rebuild() before use
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_LOOKAHEAD_SCHEDULER_H
