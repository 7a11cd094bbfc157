/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_INTERNAL_H
#define GPU_FABRIC_FABRIC_INTERNAL_H

// The packet-level data plane's internals, for the module's own sources and
// tests only: not installed (CMakeLists.txt installs no *-internal.h) and
// included by a relative path. It holds what ties ports, cables and nodes to
// FabricLookaheadScheduler (recurring events that tell the scheduler what it
// is inserting and say what their next occurrence will read), the prefetch
// hooks of ports, cables, nodes and traffic sources, and the FIFO helper of
// the data plane's rings. No public header includes it.

#include "fabric-channel.h"
#include "fabric-header.h"
#include "fabric-net-device.h"
#include "fabric-node.h"

#include "ns3/event-impl.h"
#include "ns3/header.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/simulator.h"
#include "ns3/tag.h"

#include <algorithm>
#include <atomic>
#include <boost/circular_buffer.hpp>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * What the receiving rank must know of a message whose frames cross ranks (a
 * distributed run); a FabricMessageTag carries it.
 */
struct FabricMessageInfo
{
    uint64_t bytes{0};      //!< the message's size
    int64_t start{0};       //!< when it was sent (time steps)
    uint64_t sink{0};       //!< its MessageSink's serial
    uint64_t cookie{0};     //!< for the sink
    bool hasSink{false};    //!< a sink is to be told
    uint64_t serial{0};     //!< the sender's serial of it (tells a reused id's stragglers apart)
    bool mayReorder{false}; //!< its path may reorder (the receiver's NACKs wait for a gap)

    /// bytes, start, sink, cookie, serial, then hasSink and mayReorder as bits
    static constexpr uint32_t kSerializedSize = 5 * 8 + 1;

    /**
     * Write the fields at \p at (kSerializedSize bytes, host byte order: the
     * ranks of a run share one machine type, as ns-3's packet tag lists
     * assume), as a FabricMessageTag and a frame's record both carry them.
     * \param at where they go; advanced past them
     */
    void Write(uint8_t*& at) const;
    /**
     * \param at fields Write wrote; advanced past them
     * \return them
     */
    static FabricMessageInfo Read(const uint8_t*& at);
};

/**
 * What a fabric frame carries across ranks beside its own bytes (a
 * distributed run's envelope, never on the simulated wire): what it is, the
 * receiving end's link epoch when it was sent and, for a frame, the header
 * fields that travel beside it on one process (so the receiver need not
 * parse them from its bytes again).
 */
struct FabricRemoteEnvelope
{
    /// What the envelope holds.
    enum Kind : uint8_t
    {
        kFrame = 0,     //!< a frame on the cable
        kPause = 1,     //!< a PFC pause for the receiving transmitter
        kResume = 2,    //!< a PFC resume
        kTransport = 3, //!< a transport's own word to its end on the receiving rank
    };

    uint8_t kind{kFrame}; //!< Kind
    uint32_t epoch{0};    //!< the receiving end's link epoch when sent
    FabricFrameMeta meta; //!< kFrame: as FabricChannel::Transmit was given it
};

/// Receives what FabricSendRemote sent to a device: the envelope and the packet.
using FabricRemoteReceiver = Callback<void, const FabricRemoteEnvelope&, Ptr<Packet>>;

/**
 * FabricDistributed::SendPacket for the fabric's own frames, PFC frames and
 * transport words: \p envelope and \p p (null: none) join the batch for the
 * receiving rank as they are, without a copy of the packet with the
 * envelope as its header. \p p crosses whole, packet tags included (a
 * FabricMessageTag), as FabricAppendRecord writes it when the batch leaves:
 * until then it is held, not copied, so the caller must not change it.
 * \param envelope what it is \param p the packet, or null
 * \param rxTime arrival time \param node the receiving node's id
 * \param ifIndex the receiving device's interface index
 */
void FabricSendRemote(const FabricRemoteEnvelope& envelope,
                      const Packet* p,
                      Time rxTime,
                      uint32_t node,
                      uint32_t ifIndex);

/**
 * The granted time window's lookahead (the least delay of a cable between
 * ranks), set by FabricHelper for a partitioned fabric. A frame for another
 * rank then waits for the others this rank sends there until one lookahead
 * (and a nanosecond) before its arrival, and they travel in one MPI
 * message. 0 (the default, and with null messages): the frames of one
 * instant travel together, sent at its end.
 * \param lookahead the lookahead
 */
void FabricSetBatchLookahead(Time lookahead);

class FabricLookaheadScheduler;

/**
 * \return the FabricLookaheadScheduler made last, which is the running
 * simulation's when SchedulerType names it (null: none lives)
 */
const FabricLookaheadScheduler* FabricSchedulerInUse();

/**
 * What FabricSendRemote sends to \p device goes to \p cb (the packet is an
 * empty one when none was sent).
 * \param device a device of this rank \param cb the receiver
 */
void FabricAttachRemote(Ptr<NetDevice> device, FabricRemoteReceiver cb);

/**
 * A frame, PFC frame or transport word as it crosses ranks, one record of a
 * batch (FabricSendRemote, FabricDistributed::SendPacket): where and when it
 * arrives, its envelope and its packet.
 */
struct FabricRecord
{
    Time rxTime;                   //!< its arrival
    uint32_t node{0};              //!< the receiving node's id
    uint32_t ifIndex{0};           //!< the receiving device's interface index
    bool hasEnvelope{false};       //!< sent by FabricSendRemote (else SendPacket)
    FabricRemoteEnvelope envelope; //!< if hasEnvelope
    Ptr<Packet> packet;            //!< an empty one when none was sent
    bool asFields{false};          //!< it crossed as fields (FabricAppendRecord)
};

/**
 * Append a frame's record to \p out, unless it would take \p out past
 * \p limit bytes. A plain fabric frame (its bytes its FabricHeader, the one
 * in the envelope, and zero-filled payload; no tag but a FabricMessageTag)
 * crosses as fields: the header's, the payload's size and the tag's. The
 * other side builds the same packet again, which costs less than ns-3's
 * Packet::Serialize and its inverse, and the record is about half as long.
 * Any other packet crosses as Packet::Serialize writes it.
 * \param out the batch \param limit its largest size
 * \param envelope FabricSendRemote's (null: FabricDistributed::SendPacket's)
 * \param p the packet (null: none) \param rxTime its arrival
 * \param node the receiving node's id \param ifIndex its device's index
 * \return the record's size in bytes; it was appended if out.size() grew
 */
uint32_t FabricAppendRecord(std::vector<uint8_t>& out,
                            uint32_t limit,
                            const FabricRemoteEnvelope* envelope,
                            const Packet* p,
                            Time rxTime,
                            uint32_t node,
                            uint32_t ifIndex);

/**
 * Read the record at \p at (FabricAppendRecord) and move \p at past it;
 * aborts on a record that does not end by \p end.
 * \param at where it starts \param end where the batch ends
 * \return the record, its packet made
 */
FabricRecord FabricReadRecord(const uint8_t*& at, const uint8_t* end);

/**
 * A message's FabricMessageInfo as a packet tag on each of its data packets
 * (a distributed run); it crosses ranks with the packet (ns-3.37's
 * Packet::Serialize writes packet tags).
 */
class FabricMessageTag : public Tag
{
  public:
    FabricMessageInfo info; //!< what it carries

    /// \return the TypeId
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(TagBuffer i) const override;
    void Deserialize(TagBuffer i) override;
    void Print(std::ostream& os) const override;
};

/**
 * The ns-3 system id (MPI rank) the next FabricNode is made with: a Node's
 * system id is fixed by its constructor, and nodes are made by ObjectFactory
 * (which passes none), so FabricHelper sets this around the nodes of a
 * partitioned fabric (FabricHelper::SetPartition) and puts it back to 0.
 * \return the value, to read or set
 */
uint32_t& FabricNextSystemId();

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
 * Prefetch the cache lines of one object.
 * \param object the object
 */
template <typename T>
void
FabricPrefetchObject(const T& object)
{
    FabricPrefetch(&object, sizeof(T));
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
 * \tparam P prefetches stage k of what F reads, given the owner
 */
template <typename T, void (T::*F)(), void (*P)(const T&, uint32_t)>
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
        P(*this->m_owner, stage);
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
 * \brief A FabricTxSource that can say what its next pull will read.
 *
 * A pull runs once per packet a GPU sends, and a large run finds the
 * source's state for that port cold. A port whose source is one of these
 * (FabricNetDevice::SetTxSource) asks it, stage by stage before each end of
 * serialization, to prefetch what its pull will read (FabricLookaheadScheduler's
 * look-ahead). PacketTransport's source is one.
 */
class FabricPrefetchingTxSource : public FabricTxSource
{
  public:
    /**
     * Prefetch stage \p stage of what the next TxReady for \p cookie reads:
     * stage 1 may only prefetch the cookie's object (it is not in cache
     * yet), stage k may read what stages below k prefetched. Nothing here
     * may change state.
     * \param cookie what the source gave SetTxSource for the port
     * \param stage the stage, from 1
     */
    virtual void PrefetchTxReady(const void* cookie, uint32_t stage) const = 0;
};

/**
 * \ingroup gpu-fabric
 * \brief The data plane's prefetch hooks: stage k of what the next step of
 * a port, a cable or a node will read, asked by the recurring events during
 * FabricLookaheadScheduler's look-ahead (stage 1 reads only the object
 * itself, stage k what stages below k brought in). Nothing here changes
 * state. The classes name it their friend; the hooks live in their .cc files.
 */
class FabricDataPlane
{
  public:
    /**
     * What receiving a frame on \p port reads, then forwarding it (stage
     * 1: the port's fields).
     * \param port the receiving port
     * \param stage the stage
     * \param meta the frame's header data
     */
    static void PrefetchReceive(const FabricNetDevice& port,
                                uint32_t stage,
                                const FabricFrameMeta& meta);

    /**
     * What queueing a frame on \p port reads (stage 1: the port's fields,
     * 2: its cable and queue, 3: the cable's slot and event).
     * \param port the output port
     * \param stage the stage
     */
    static void PrefetchEnqueue(const FabricNetDevice& port, uint32_t stage);

    /**
     * What the next end of serialization on \p port reads.
     * \param port the port
     * \param stage the stage
     */
    static void PrefetchTransmitComplete(const FabricNetDevice& port, uint32_t stage);

    /**
     * What dequeuing from \p port's queue reads (1: the queue, 2: its head,
     * 3: the packet).
     * \param port the port
     * \param stage the stage
     */
    static void PrefetchQueue(const FabricNetDevice& port, uint32_t stage);

    /**
     * What a transmission from end \p end of \p cable reads.
     * \param cable the cable
     * \param end the sending end (the device's channel end)
     * \param stage 1: the cable's fields, 2: the wire's next slot and event
     */
    static void PrefetchTransmit(const FabricChannel& cable, uint32_t end, uint32_t stage);

    /**
     * What the next arrival in direction \p d of \p cable reads.
     * \tparam d the direction (its sending end)
     * \param cable the cable
     * \param stage the stage
     */
    template <uint32_t d>
    static void PrefetchArrive(const FabricChannel& cable, uint32_t stage);

    /**
     * What forwarding \p h at \p node reads (stage 1: the node's fields and
     * the route, 2 and 3: the output port's).
     * \param node the node
     * \param stage the stage
     * \param h the packet's header data
     */
    static void PrefetchForward(const FabricNode& node, uint32_t stage, const FabricHeaderData& h);
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_INTERNAL_H
