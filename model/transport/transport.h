/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_TRANSPORT_H
#define GPU_FABRIC_TRANSPORT_H

#include "ns3/callback.h"
#include "ns3/fabric-routing-table.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

class RunProgress;

/**
 * \ingroup gpu-fabric
 * \brief A message that failed (or is pending, for progress reports);
 * Transport::MessageReport.
 */
struct TransportMessageReport
{
    uint64_t messageId{0}; //!< id returned by Send
    uint32_t src{0};       //!< source rank
    uint32_t dst{0};       //!< destination rank
    uint64_t bytes{0};     //!< message size
    uint64_t delivered{0}; //!< bytes delivered
    Time sent;             //!< when Send was called
    Time since;            //!< first loss (zero if none)
    std::string reason;    //!< why it failed (empty for a pending message)
    Time failedAt;         //!< when it failed (zero for a pending message)

    /// \return one line of text naming ranks, bytes and times (not the id:
    /// ids are recycled, and each MPI rank's own in a distributed run)
    std::string ToString() const;
};

/**
 * \ingroup gpu-fabric
 * \brief Receives delivery notices without a Callback object per message
 *        (for sources that send millions of messages, such as CollectiveRun).
 */
class MessageSink
{
  public:
    MessageSink();
    /// a copy is another sink (its own serial)
    MessageSink(const MessageSink&);
    MessageSink& operator=(const MessageSink&) = delete;
    virtual ~MessageSink();

    /**
     * Sinks are numbered in the order they are made (per process). A
     * distributed run tells a sink on another rank by this number: every
     * rank runs the same program, so the same sink has the same number on
     * each, provided sinks are made before the simulation runs, in the same
     * order on every rank.
     * \return this sink's number
     */
    uint64_t GetSinkSerial() const
    {
        return m_sinkSerial;
    }

    /// \param serial a sink's number \return the live sink of that number
    ///        (made now if its serial was reserved, see ReserveSerials), or nullptr
    static MessageSink* FindSink(uint64_t serial);

    /// Makes the sink of a reserved serial (ReserveSerials), or returns nullptr.
    typedef Callback<MessageSink*, uint64_t> SinkMaker;
    /**
     * Reserve \p count serials for sinks made later, when first needed (a
     * ProgramRunner's collectives, made when a rank reaches them): every
     * rank of a distributed run reserves them at the same point, so each
     * later sink has the same serial on every rank, and a message or note
     * for one that this rank has not made yet has \p make make it.
     * \param count serials \param make makes the sink of a serial (with
     *        ReservedSerial) \return the first serial
     */
    static uint64_t ReserveSerials(uint64_t count, SinkMaker make);
    /// Forget the reservation that starts at \p first (its maker is going).
    static void ReleaseSerials(uint64_t first);

    /// While one lives, the next sink made takes this reserved serial.
    class ReservedSerial
    {
      public:
        /// \param serial a serial of ReserveSerials, not live
        explicit ReservedSerial(uint64_t serial);
        ~ReservedSerial();
        ReservedSerial(const ReservedSerial&) = delete;
        ReservedSerial& operator=(const ReservedSerial&) = delete;
    };

    /**
     * The last byte of a message sent with this sink arrived.
     * \param cookie the value given to Transport::Send
     */
    virtual void MessageDelivered(uint64_t cookie) = 0;

    /**
     * A message sent with this sink was given up instead (no route left, a
     * dead end, too many losses): it will never be delivered. The default
     * does nothing (the transport's MessageFailed trace reports it too).
     * \param cookie the value given to Transport::Send
     * \param report the message, with its reason and time of failure
     */
    virtual void MessageFailed(uint64_t cookie, const struct TransportMessageReport& report);

    /**
     * A note sent to this sink with Transport::SendNote arrived (possibly
     * from another rank of a distributed run). The default refuses it: only
     * sinks that send notes take them.
     * \param cookie the value given to SendNote
     */
    virtual void NoteReceived(uint64_t cookie);

  private:
    uint64_t m_sinkSerial; //!< GetSinkSerial
};

/**
 * \ingroup gpu-fabric
 * \brief Message ids, recycled last in, first out. Both backends allocate
 *        through one, so that a message gets the same id, hence the same flow
 *        label and ECMP path, at packet and at flow level.
 */
class MessageIdPool
{
  public:
    /**
     * \param slots ids in use or free so far (the caller's table size)
     * \return the most recently released id, or \p slots (a new slot) if none
     */
    uint32_t Take(size_t slots)
    {
        if (m_free.empty())
        {
            return static_cast<uint32_t>(slots);
        }
        const uint32_t id = m_free.back();
        m_free.pop_back();
        return id;
    }

    /// \param id an id that may be reused
    void Release(uint32_t id)
    {
        m_free.push_back(id);
    }

  private:
    std::vector<uint32_t> m_free; //!< released ids, most recent last
};

/**
 * \ingroup gpu-fabric
 * \brief Payload bytes per packet of a message, the same rule in both backends.
 *
 * Messages are cut into packets of \p maxPayload bytes (the last shorter).
 * A message striped over \p planes NVLink planes to a GPU of the domain
 * that has fewer bytes than one full packet per plane is cut into one packet
 * per plane instead, of at least \p minStripe bytes, so that it uses every
 * plane it can, as NVLink sprays a transfer over all its links in small
 * requests: 4 KiB on 4 planes is 4 packets of 1,024 bytes, 12,340 bytes 4 of
 * 3,085, 1,000 bytes 4 of 256 (the last 232), 100 bytes one packet. The time
 * of such a message grows with its size; larger messages already have a
 * packet for every plane (the transport deals them by bytes queued).
 *
 * \param bytes message size \param maxPayload payload of a full packet
 * \param planes planes it is striped over to its destination (0 or 1: not)
 * \param minStripe least payload of a cut packet
 * \return payload bytes per packet (the last one: the rest of \p bytes)
 */
inline uint32_t
PacketPayload(uint64_t bytes, uint32_t maxPayload, uint32_t planes, uint32_t minStripe)
{
    if (planes <= 1 || bytes >= static_cast<uint64_t>(planes) * maxPayload)
    {
        return maxPayload;
    }
    const uint64_t share = (bytes + planes - 1) / planes; // <= maxPayload here
    return static_cast<uint32_t>(
        std::min<uint64_t>(maxPayload, std::max<uint64_t>(share, minStripe)));
}

/**
 * \ingroup gpu-fabric
 * \brief The message layer every traffic source talks to.
 *
 * A backend moves `bytes` from one rank to another and tells whoever waits
 * (a callback, or a MessageSink) when the last byte has been delivered at the
 * destination. A message it gives up instead (no route left, a dead end, too
 * many losses) is never delivered: it is reported, once, through the
 * MessageFailed trace source and GetFailureReports(). Collectives and
 * workloads only see this interface, so the packet-level and flow-level
 * backends are interchangeable.
 */
class Transport : public Object
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();

    /// Invoked once, at the simulated time the last byte arrives.
    typedef Callback<void> DoneCallback;

    /// Whom a message's delivery is told: a callback or a sink and cookie.
    struct Delivery
    {
        DoneCallback done;          //!< called when set
        MessageSink* sink{nullptr}; //!< told when set
        uint64_t cookie{0};         //!< for the sink
        Ptr<Object> keepAlive;      //!< held until delivery or failure (the sink's owner)

        /// Tell whoever is waiting (once; the delivery is then empty).
        void Notify();

        /**
         * Tell a waiting sink that the message failed (once; the delivery is
         * then empty). A callback is not called: it means delivery.
         * \param report the failed message
         */
        void NotifyFailure(const TransportMessageReport& report);

        /// \param done the callback \return a delivery that calls it
        static Delivery To(DoneCallback done)
        {
            return Delivery{done, nullptr, 0, nullptr};
        }
    };

    /**
     * Send a message.
     * \param srcRank sender \param dstRank receiver
     * \param bytes payload bytes (0 completes at once)
     * \param done called on delivery of the last byte (may be null)
     * \return a message id, unique among messages in flight
     */
    uint64_t Send(uint32_t srcRank, uint32_t dstRank, uint64_t bytes, DoneCallback done)
    {
        return DoSend(srcRank, dstRank, bytes, Delivery::To(done));
    }

    /**
     * Send a message; its delivery calls sink->MessageDelivered(cookie). No
     * object is made per message.
     * \param srcRank sender \param dstRank receiver
     * \param bytes payload bytes (0 completes at once)
     * \param sink told on delivery of the last byte \param cookie passed back
     * \param keepAlive held by the transport until the message is delivered or
     *        fails (the object the sink belongs to, so that it outlives the message)
     * \return a message id, unique among messages in flight
     */
    uint64_t Send(uint32_t srcRank,
                  uint32_t dstRank,
                  uint64_t bytes,
                  MessageSink* sink,
                  uint64_t cookie,
                  Ptr<Object> keepAlive = nullptr)
    {
        return DoSend(srcRank, dstRank, bytes, Delivery{DoneCallback(), sink, cookie, keepAlive});
    }

    /// \return number of ranks served
    virtual uint32_t GetNRanks() const = 0;

    /// \return true if this transport serves one rank of a distributed run
    ///         (only some GPUs are simulated by this process)
    virtual bool IsDistributed() const;
    /// \param rank a GPU \return whether this process simulates it (every
    ///         GPU, except in a distributed run)
    virtual bool IsLocalGpu(uint32_t rank) const;
    /// \param rank a GPU \return the process (MPI rank) that simulates it (0
    ///         except in a distributed run)
    virtual uint32_t GetGpuProcess(uint32_t rank) const;
    /**
     * \param from a GPU \param to another
     * \return the delay a note from \p from to \p to (SendNote) takes to
     *         cross: zero within one process (a note may be due now), a
     *         cable's delay between the ranks of a distributed run (a note
     *         must be due later than that)
     */
    virtual Time GetNoteDelay(uint32_t from, uint32_t to) const;

    /**
     * Tell \p sink, on the process that simulates GPU \p to, NoteReceived(\p
     * cookie) at time \p at: how the parts of a sender (a CollectiveRun) on
     * different ranks of a distributed run tell each other what happened
     * (a receive posted, a message delivered). The note is not a packet: it
     * takes no bandwidth and the time the caller chooses. Notes to one GPU
     * at one instant are taken in (sink, cookie) order on a fabric with
     * canonical ties (FabricNode::CanonicalTies), whatever rank sent them.
     * \param from the GPU on whose behalf it is sent (simulated here)
     * \param to the GPU whose process takes it
     * \param sink the sink (the same sink serial on every rank)
     * \param cookie passed back
     * \param at when it is taken: not before now, and later than now + GetNoteDelay
     *        when that is not zero
     */
    virtual void SendNote(uint32_t from,
                          uint32_t to,
                          const MessageSink& sink,
                          uint64_t cookie,
                          Time at);

    /// Totals of a backend.
    struct Totals
    {
        uint64_t messagesSent{0};      //!< Send() calls
        uint64_t messagesDelivered{0}; //!< messages whose last byte arrived
        uint64_t bytesSent{0};         //!< payload bytes accepted by Send()
        uint64_t bytesDelivered{0};    //!< payload bytes delivered
    };

    /// \return the totals so far
    virtual Totals GetTotals() const = 0;

    /**
     * An up-front estimate of the wall time this backend needs to move a
     * workload, for refusing or warning before a long run starts
     * (FabricRequireWork). It errs long: it uses FabricWorkRates, a little
     * below what bench/ measures. The default counts messages at the flow
     * level's rate (FabricWorkRates::kFlowMessagesPerSecond).
     * \param messages messages the workload sends
     * \param bytes payload bytes they carry
     * \return estimated seconds of wall time
     */
    virtual double EstimateRunSeconds(uint64_t messages, uint64_t bytes) const;

    /**
     * The RunProgress that looks at the clock from this transport's events
     * (RunProgress::Install calls it; null: none).
     * \param progress the watcher, or nullptr
     */
    void WatchProgress(RunProgress* progress);

    /**
     * Declare work about to be given to this transport (a collective or a
     * program installed on it), before it runs. Estimates add up over the
     * transport's life. When the total exceeds GpuFabricWarnRunSeconds and
     * attribute ShowProgress is true, a warning with the estimate goes to
     * stderr once, and a RunProgress prints a progress line there every 10 s
     * of wall time while the run goes on.
     * \param messages messages the work sends
     * \param bytes payload bytes they carry
     * \param parameter what sets the work, for a refusal ("collective bytes")
     * \param value its value, for a refusal
     * \throws FabricConfigError (FabricRequireWork) when the total estimate
     *         exceeds GpuFabricMaxRunSeconds; nothing is added then
     */
    void ExpectWork(uint64_t messages,
                    uint64_t bytes,
                    const std::string& parameter,
                    const std::string& value);

    /// \return the estimated wall time of the work declared by ExpectWork so far
    double GetExpectedSeconds() const;

    /// A message that failed (or is pending, for progress reports).
    using MessageReport = TransportMessageReport;

    /// Signature of the MessageFailed trace.
    typedef void (*MessageFailedTracedCallback)(const MessageReport&);

    /// \return messages given up so far
    uint64_t GetFailedMessages() const;
    /// \return reports of every failed message, in order of failure
    const std::vector<MessageReport>& GetFailureReports() const;

    /**
     * The flow label (ECMP entropy) of a message: every backend derives it
     * the same way, so that a message takes the same path on each. The run's
     * seed chooses the labels (see GetFlowLabelSalt): another RngRun or
     * RngSeed gives other ECMP paths, the same one the same paths.
     * \param srcRank sender \param dstRank receiver \param id message id
     * \return the flow label
     */
    uint16_t FlowLabelOf(uint32_t srcRank, uint32_t dstRank, uint32_t id) const
    {
        return static_cast<uint16_t>(FabricEcmpHash(srcRank, dstRank, id, m_flowLabelSalt));
    }

    /// How a new message's flow label is chosen (attribute FlowLabels).
    enum FlowLabels
    {
        FLOW_LABEL_MESSAGE_ID,      //!< from its message id (ids are shared by all senders)
        FLOW_LABEL_SOURCE_SEQUENCE, //!< from how many messages its sender sent before it
    };

    /**
     * The salt of a run's flow labels: 0x6d for ns-3's default seed and run
     * (1, 1), the labels of earlier versions, and a mix of the two otherwise.
     * \param seed RngSeed \param run RngRun
     * \return the salt
     */
    static uint32_t FlowLabelSalt(uint32_t seed, uint64_t run);

    /// \return the salt of this transport's flow labels: FlowLabelSalt of
    ///         the seed and run set when it was created
    uint32_t GetFlowLabelSalt() const
    {
        return m_flowLabelSalt;
    }

    /// \return the least payload of a striped message's packets (attribute
    ///         StripeMinPayload, shared by both backends: PacketPayload())
    uint32_t GetStripeMinPayload() const
    {
        return m_minStripe;
    }

  protected:
    Transport();

    /**
     * What a backend implements behind both Send overloads.
     * \param srcRank sender \param dstRank receiver \param bytes payload bytes
     * \param delivery whom to tell on delivery \return the message id
     */
    virtual uint64_t DoSend(uint32_t srcRank,
                            uint32_t dstRank,
                            uint64_t bytes,
                            Delivery delivery) = 0;

    /// Throw FabricConfigError unless both ranks are below GetNRanks().
    void RequireRanks(uint32_t srcRank, uint32_t dstRank) const;

    /// Give sink \p serial (if it still lives) the note \p cookie.
    static void TakeNote(uint64_t serial, uint64_t cookie);

    /**
     * The flow label of a new message (attribute FlowLabels): FlowLabelOf
     * of its id, or of its sender's count of messages so far. The count
     * depends only on the sender's own sends, so a distributed run, whose
     * ranks allocate message ids apart, labels (and routes) every message as
     * one process does.
     * \param srcRank sender \param dstRank receiver \param id message id
     * \return the label
     */
    uint16_t NewFlowLabel(uint32_t srcRank, uint32_t dstRank, uint32_t id);

    /**
     * Give a message up: record its report, fire MessageFailed and tell the
     * message's sink (MessageSink::MessageFailed). A backend calls it once
     * per message, and never delivers that message.
     * \param report the message, with its reason and time of failure
     * \param delivery whom the message was to be told to (emptied)
     */
    void ReportFailure(MessageReport report, Delivery& delivery);

    void DoDispose() override;

    /// Let a RunProgress watching this run look at the clock every
    /// \p every calls (a power of two); the backends call it from events
    /// that make progress, so that the watcher needs no events of its own.
    /// \param every calls per look
    void PollProgress(uint32_t every)
    {
        if (m_watcher && (++m_polls & (every - 1)) == 0)
        {
            PollProgressNow();
        }
    }

  private:
    /// Ask the watcher to look at the clock.
    void PollProgressNow();

    RunProgress* m_watcher{nullptr};                //!< WatchProgress (it clears it when disposed)
    uint32_t m_polls{0};                            //!< PollProgress calls
    uint32_t m_flowLabelSalt;                       //!< FlowLabelSalt of the run's seed
    FlowLabels m_flowLabels{FLOW_LABEL_MESSAGE_ID}; //!< FlowLabels
    std::vector<uint32_t> m_sentBy; //!< per sender: messages labelled so far (SourceSequence)
    uint32_t m_minStripe{256};      //!< StripeMinPayload
    bool m_showProgress{true};      //!< ShowProgress
    uint64_t m_expectedMessages{0}; //!< declared by ExpectWork
    uint64_t m_expectedBytes{0};    //!< declared by ExpectWork
    double m_expectedSeconds{0};    //!< their estimate
    Ptr<Object> m_progress;         //!< the RunProgress of a long run (made when one is declared)
    std::vector<MessageReport> m_failures;              //!< failed messages
    TracedCallback<const MessageReport&> m_failedTrace; //!< MessageFailed
};

} // namespace ns3

#endif // GPU_FABRIC_TRANSPORT_H
