/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_LOOKAHEAD_SCHEDULER_H
#define GPU_FABRIC_FABRIC_LOOKAHEAD_SCHEDULER_H

#include "ns3/scheduler.h"

#include <array>
#include <cstdint>
#include <map>
#include <vector>

namespace ns3
{

class FabricRecurringEventBase;

/**
 * \ingroup gpu-fabric
 * \brief A scheduler for packet-level fabrics: events kept in FIFO lanes by
 * delay, and the next few data plane events asked to prefetch what they
 * will read.
 *
 * Lanes: a fabric schedules almost every event a fixed delay ahead (a
 * cable's propagation, a frame's serialization at a port's rate), and the
 * events scheduled the same delay ahead come out in the order they went in
 * (the time now only grows, and so does the uid). Each such delay gets a
 * lane, a ring that is sorted by construction; the next event is the least
 * of the lanes' heads, kept in a small heap. An insertion is an append, a
 * removal a pop and a sift among a few dozen heads, both on memory that stays
 * in cache, where a tree's are a walk down thousands of cold nodes. An event
 * that does not sort at the back of its delay's lane (it cannot, in ns-3's
 * default simulator), or whose delay finds no free lane (at most 64),
 * goes to a map like ns-3's MapScheduler, itself one of the heads.
 *
 * Look-ahead: a large fabric's event finds its port, cable, packet and
 * routing entry cold and waits on memory for each in turn. The next Depth
 * events are kept in a window in order; each removal moves every one of them
 * a place forward, and the event at place k (0: the next to run) is asked for
 * its stage Depth - 1 - k prefetch (stage 1: its owner's fields; later stages
 * follow the pointers loaded by the earlier ones, now in cache), so that the
 * loads of one event overlap with the work of the events before it. Events
 * other than FabricRecurringEvent occurrences are only prefetched themselves.
 * With fewer than MinPending events queued the window asks for nothing: a
 * small run's data stays in cache, where the prefetches cost more than they
 * hide.
 *
 * The order of events, and so every result, is the map scheduler's (the same
 * key and comparison: time, then uid); only the time to run them changes.
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

    /// Where insertions went (a run's counts; for tests and benchmarks).
    struct Counts
    {
        uint64_t window{0};   //!< into the look-ahead window (or displacing its last)
        uint64_t lanes{0};    //!< appended to a delay's lane
        uint64_t overflow{0}; //!< into the map (out of order, or no free lane)
    };

    /// \return where this scheduler's insertions went
    Counts GetCounts() const;

    /// \return events held (ns-3 keeps a cancelled event queued until its time)
    uint64_t GetPending() const;

    /// \return lanes made so far, up to kMaxLanes (each serves one delay at a
    /// time; an empty one is given to the next new delay once all are made)
    uint32_t GetLaneCount() const;

    static constexpr uint32_t kMaxDepth = 16; //!< the Depth attribute's bound
    static constexpr uint32_t kMaxLanes = 64; //!< lanes at most (then the map)

  private:
    /// What the scheduler keeps of an event.
    struct Entry
    {
        Scheduler::EventKey key;          //!< time, uid, context
        EventImpl* impl;                  //!< the event
        FabricRecurringEventBase* fabric; //!< the same, if a data plane event
    };

    /// The events of one delay, in key order: a ring that grows by doubling.
    class Lane
    {
      public:
        /// \return true if the lane holds no event
        bool Empty() const
        {
            return m_size == 0;
        }

        /// \param i a place (0: the front) \return the event there
        const Entry& At(uint32_t i) const
        {
            return m_ring[(m_head + i) & m_mask];
        }

        /// \return the least event
        const Entry& Front() const
        {
            return At(0);
        }

        /// \return the greatest event
        const Entry& Back() const
        {
            return At(m_size - 1);
        }

        /// \param e an event not less than Back()
        void PushBack(const Entry& e);
        /// \param e an event not greater than Front()
        void PushFront(const Entry& e);
        /// Drop the front event.
        void PopFront();
        /// \param key an event's key \return true if it was here (and is now gone)
        bool Erase(const Scheduler::EventKey& key);

        uint64_t delay{0}; //!< the delay whose events it holds

      private:
        /// Double the ring, keeping the order.
        void Grow();

        std::vector<Entry> m_ring; //!< capacity a power of two (or none)
        uint32_t m_mask{0};        //!< capacity - 1
        uint32_t m_head{0};        //!< the front's slot
        uint32_t m_size{0};        //!< events held
    };

    /// An unsigned 128-bit integer (a GCC and Clang extension, marked so
    /// that -Wpedantic does not warn of it where this header is included).
    __extension__ typedef unsigned __int128 Order128;

    /// A lane's head in the heap of heads.
    struct Head
    {
        /// an event key's order (time, then uid) as one integer: the
        /// sifts compare and choose without branches, whose outcome the
        /// processor could not predict
        Order128 key;
        uint32_t lane; //!< the lane (kMaxLanes: the map)

        /// \param k an event key \return its order as one integer
        static Order128 Order(const Scheduler::EventKey& k)
        {
            return (static_cast<Order128>(k.m_ts) << 32) | k.m_uid;
        }
    };

    static constexpr uint32_t kMap = kMaxLanes;        //!< the map's place among the lanes
    static constexpr uint32_t kNotInHeap = UINT32_MAX; //!< a lane without events
    static constexpr uint32_t kNoLane = UINT32_MAX;    //!< an empty slot of m_laneCache
    static constexpr uint32_t kLaneCacheBits = 7;      //!< m_laneCache has 2^this slots

    /// \param e an event that sorts after the window
    /// \return true if it went to a lane, false if to the map
    bool Queue(const Entry& e);
    /// \param delay an event's delay \return its lane, or kMap if none is free
    uint32_t LaneFor(uint64_t delay);
    /// \param e an event not greater than any queued one: it becomes the least
    void QueueFirst(const Entry& e);
    /// \return the least queued event, taken out of its lane or the map
    Entry TakeLeast();
    /// \param lane a lane (or kMap) whose least event changed, or that emptied or filled
    void Reheap(uint32_t lane);
    /// \param i a place in the heap whose key decreased
    void SiftUp(uint32_t i);
    /// \param i a place in the heap whose key increased
    void SiftDown(uint32_t i);
    /// \param i a place in the heap \param h the head to put there
    void Place(uint32_t i, const Head& h);

    /// \param k a place (0: the head of the queue) \return the window's slot for it
    Entry& Window(uint32_t k)
    {
        return m_window[(m_windowFirst + k) % kMaxDepth];
    }

    /// \param e an event less than the window's last, or with the window short of Depth
    void InsertInWindow(const Entry& e);
    /// Fill the window up to Depth from the lanes and the map.
    void Fill();
    /// \param depth the Depth attribute's new value
    void SetDepth(uint32_t depth);
    /// \return the Depth attribute
    uint32_t GetDepth() const;
    /// Ask the window's events for their prefetch stages.
    void LookAhead();

    uint32_t m_depth{5};                   //!< places looked ahead (1: none)
    std::array<Entry, kMaxDepth> m_window; //!< the next events, a ring
    uint32_t m_windowFirst{0};             //!< place 0's slot in m_window
    uint32_t m_windowSize{0};              //!< places held (short of Depth: nothing queued)
    uint64_t m_now{0};                     //!< the time of the last event removed
    std::vector<Lane> m_lanes;             //!< the lanes, made as delays come
    std::array<uint32_t, kMaxLanes + 1> m_heapPlace; //!< each lane's place in m_heap
    std::vector<Head> m_heap;                        //!< the non-empty lanes' heads, least first
    std::map<Scheduler::EventKey, Entry> m_map;      //!< events no lane takes
    /// Recent delays' lanes, by a hash of the delay (checked against the lane's delay).
    std::array<uint32_t, 1U << kLaneCacheBits> m_laneCache;
    Counts m_counts;          //!< where insertions went
    uint32_t m_minPending{0}; //!< the MinPending attribute
    uint64_t m_pending{0};    //!< events held (window, lanes and map)
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_LOOKAHEAD_SCHEDULER_H
