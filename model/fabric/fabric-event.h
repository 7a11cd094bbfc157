/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_EVENT_H
#define GPU_FABRIC_FABRIC_EVENT_H

#include "ns3/event-impl.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/simulator.h"
#include "ns3/traced-callback.h"

#include <algorithm>
#include <atomic>
#include <boost/circular_buffer.hpp>
#include <cstdint>
#include <string>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief An ns-3 event that one object schedules again and again, allocated
 * once instead of once per occurrence.
 *
 * Simulator::Schedule(member function, ...) allocates an EventImpl per call;
 * the data plane schedules one per packet and hop, so its own events (end of
 * serialization, arrival at the end of a cable) reuse one EventImpl each. The
 * same instance may be pending several times at once: the scheduler holds a
 * reference per occurrence, and each occurrence runs once. Detach() (from the
 * owner's DoDispose) makes pending occurrences do nothing, so the owner may
 * die before the scheduler.
 */
class FabricRecurringEventBase : public EventImpl
{
  public:
    /**
     * Schedule one occurrence.
     * \param context the ns-3 context (node id) the occurrence runs in
     * \param delay from now
     */
    void Schedule(uint32_t context, const Time& delay)
    {
        Ref(); // the scheduler's reference, released after the occurrence runs
        // tells a FabricLookaheadScheduler what it is inserting (it checks
        // the pointer, so an insert of anything else is never mistaken)
        s_scheduling.store(this, std::memory_order_relaxed);
        Simulator::ScheduleWithContext(context, delay, this);
        s_scheduling.store(nullptr, std::memory_order_relaxed);
    }

    /**
     * \return the event whose Schedule() is inserting an occurrence now, if
     * any (FabricLookaheadScheduler tags it so)
     */
    static FabricRecurringEventBase* Scheduling()
    {
        return s_scheduling.load(std::memory_order_relaxed);
    }

    /**
     * Prefetch what the next occurrence will read (FabricLookaheadScheduler).
     * Stage 1 may read only this event; stage k may read what stages below k
     * prefetched. Nothing here may change state.
     * \param stage the stage, from 1
     */
    void Prefetch(uint32_t stage) const
    {
        if (!m_detached)
        {
            DoPrefetch(stage);
        }
    }

    /// Pending occurrences no longer call the owner.
    void Detach()
    {
        m_detached = true;
    }

  protected:
    /// \copydoc Prefetch
    virtual void DoPrefetch(uint32_t stage) const = 0;

    bool m_detached{false}; //!< the owner is gone

  private:
    // atomic only so that a schedule from another thread (the real-time
    // simulator's) is no data race: the scheduler compares it with the
    // event it inserts, so another thread's value is never mistaken
    static inline std::atomic<FabricRecurringEventBase*> s_scheduling{
        nullptr}; //!< see Scheduling()
};

/**
 * Prefetch the cache lines of [p, p + bytes) for reading.
 * \param p the first byte
 * \param bytes how many
 */
inline void
FabricPrefetch(const void* p, std::size_t bytes = 1)
{
    const auto* c = static_cast<const char*>(p);
    for (std::size_t i = 0; i < bytes; i += 64)
    {
        __builtin_prefetch(c + i);
    }
    __builtin_prefetch(c + bytes - 1);
}

/**
 * \ingroup gpu-fabric
 * \brief A FabricRecurringEventBase that calls one member function.
 * \tparam T the owner
 * \tparam F the member function each occurrence calls
 */
template <typename T, void (T::*F)()>
class FabricRecurringEvent : public FabricRecurringEventBase
{
  public:
    /// \param owner the object whose member function the event calls
    explicit FabricRecurringEvent(T* owner)
        : m_owner(owner)
    {
    }

  protected:
    void Notify() override
    {
        if (!m_detached)
        {
            (m_owner->*F)();
        }
    }

    /// Stage 1 brings the owner's first line in; it knows no more.
    void DoPrefetch(uint32_t stage) const override
    {
        if (stage == 1)
        {
            __builtin_prefetch(m_owner);
        }
    }

    T* m_owner; //!< the owner
};

/**
 * \ingroup gpu-fabric
 * \brief A FabricRecurringEvent whose owner says what each occurrence will
 * read (FabricLookaheadScheduler).
 * \tparam T the owner
 * \tparam F the member function each occurrence calls
 * \tparam P the owner's member that prefetches stage k of what F reads
 */
template <typename T, void (T::*F)(), void (T::*P)(uint32_t) const>
class FabricPrefetchingEvent : public FabricRecurringEvent<T, F>
{
  public:
    /// \param owner the object whose member functions the event calls
    explicit FabricPrefetchingEvent(T* owner)
        : FabricRecurringEvent<T, F>(owner)
    {
    }

  protected:
    void DoPrefetch(uint32_t stage) const override
    {
        (this->m_owner->*P)(stage);
    }
};

/**
 * Append to a FIFO ring, doubling its capacity when full: the data plane's
 * per-port and per-cable FIFOs live in one contiguous block each instead of
 * a node per packet.
 * \param ring the FIFO
 * \param item what to append
 */
template <typename T>
void
FabricRingPush(boost::circular_buffer<T>& ring, T&& item)
{
    if (ring.full())
    {
        ring.set_capacity(std::max<std::size_t>(8, 2 * ring.capacity()));
    }
    ring.push_back(std::move(item));
}

/**
 * \ingroup gpu-fabric
 * A TracedCallback that keeps one bit of its owner's mask set while a sink
 * is connected, so that a hot path tests one byte of its owner instead of
 * each trace's list (a cache line apart, in a run that keeps thousands of
 * ports cold). Connecting and disconnecting work as for a TracedCallback:
 * the trace source accessors call the methods of the member's own type.
 */
template <typename... Ts>
class FabricTracedCallback : public TracedCallback<Ts...>
{
  public:
    FabricTracedCallback() = default;
    // a copy would point into its original's owner
    FabricTracedCallback(const FabricTracedCallback&) = delete;
    FabricTracedCallback& operator=(const FabricTracedCallback&) = delete;

    /**
     * Mirror the connection state in \p mask.
     * \param mask the owner's byte
     * \param bit the bit of this trace
     */
    void BindMask(uint8_t* mask, uint8_t bit)
    {
        m_mask = mask;
        m_bit = bit;
        Update();
    }

    /// \copydoc TracedCallback::ConnectWithoutContext
    void ConnectWithoutContext(const CallbackBase& callback)
    {
        TracedCallback<Ts...>::ConnectWithoutContext(callback);
        Update();
    }

    /// \copydoc TracedCallback::Connect
    void Connect(const CallbackBase& callback, std::string path)
    {
        TracedCallback<Ts...>::Connect(callback, path);
        Update();
    }

    /// \copydoc TracedCallback::DisconnectWithoutContext
    void DisconnectWithoutContext(const CallbackBase& callback)
    {
        TracedCallback<Ts...>::DisconnectWithoutContext(callback);
        Update();
    }

    /// \copydoc TracedCallback::Disconnect
    void Disconnect(const CallbackBase& callback, std::string path)
    {
        TracedCallback<Ts...>::Disconnect(callback, path);
        Update();
    }

  private:
    void Update()
    {
        if (m_mask != nullptr)
        {
            *m_mask = this->IsEmpty() ? (*m_mask & ~m_bit) : (*m_mask | m_bit);
        }
    }

    uint8_t* m_mask{nullptr}; //!< the owner's mask
    uint8_t m_bit{0};         //!< this trace's bit in it
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_EVENT_H
