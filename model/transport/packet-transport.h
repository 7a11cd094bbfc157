/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_PACKET_TRANSPORT_H
#define GPU_FABRIC_PACKET_TRANSPORT_H

#include "congestion-control.h"
#include "transport.h"

#include "ns3/event-id.h"
#include "ns3/fabric-gpu.h"
#include "ns3/object-factory.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Reliable RDMA-like messages over the packet-level fabric.
 *
 * A message is cut into packets of the fabric's MTU (one FabricHeader each;
 * a short message striped to a GPU of the domain into a packet per plane,
 * PacketPayload() and attribute StripeMinPayload) and leaves on the port the GPU's routing table
 * gives its flow (ECMP on source, destination and the message's flow label), or striped over all
 * NVLink ports.  Messages to one destination through one port form a
 * connection (a queue pair) and are sent in order, so that chunked
 * collectives pipeline; each port serves its busy connections packet by
 * packet in round robin, and is fed only when its queue holds at most one
 * packet, so that a GPU injects at line rate and link-level flow control
 * backs up into the transport instead of dropping. With ConnectionPerMessage
 * (off by default) every message is a connection of its own instead, with a
 * congestion-control flow and receiver state of its own (as the HPCC and
 * DCQCN flow-completion studies give every flow its own queue pair);
 * ConnectionWindow credits and relayed traffic stay per pair.
 *
 * Credits (ConnectionWindow, off by default): a GPU may have at most that
 * many payload bytes in flight to one destination; a delivered (or lost)
 * packet's bytes come back as credit CreditDelay later (credits are not
 * packets), and a connection out of credit leaves its port's round robin
 * until credit returns (exceptions: one packet always goes when nothing is in
 * flight, and a resent packet is not held back, so resends can exceed the
 * window by the bytes lost). This is NCCL's per-connection buffer slots. Without
 * it a GPU injects at line rate and incast ports queue until PFC pauses
 * their senders, which then stall toward every destination (head-of-line
 * blocking); a window sized so that an incast fits under PfcXoff keeps PFC
 * as a backstop only.
 *
 * Loss recovery (selective repeat): links are lossless by default, but a
 * packet can be lost to a full queue, a down link, a bit error, a dead end
 * of the routing or a GPU that does not relay. Every such loss is reported
 * to the transport by the fabric element that lost it; the sender resends
 * exactly that packet RetransmitTimeout after the loss, on the port its
 * routing table gives at that time (so retransmissions follow the tables
 * recomputed after a failure). ACKs are not packets: delivery of a packet is
 * its acknowledgement, instantly and for free, and the receiver counts the
 * bytes of each message (each sequence number arrives once, since only lost
 * packets are resent). This is the timing of a NIC with a retransmission
 * timer of RetransmitTimeout and selective repeat (IRN-like), without ACK
 * traffic and without spurious timeouts. Nothing of this runs while no packet
 * is lost.
 *
 * Queue-overflow drops (possible only without PFC or with undersized
 * buffers) are resent too while RecoverCongestionDrops is true (the
 * default), so that loss never hangs a run; false keeps the original
 * behaviour (such messages never complete). The Drop trace and the drop
 * counters count them either way.
 *
 * Congestion control (CongestionControl, off by default): with an
 * algorithm named, every flow (a GPU's traffic to one destination leaving
 * through a NIC port, not NVLink; with ConnectionPerMessage, one message's)
 * gets its own FabricCongestionControl,
 * which paces the flow's packets and bounds its bytes in flight. The
 * receiver then returns real control packets on the reverse path: an ACK
 * (64-byte frame, FabricAckHeader) every AckEvery packets and at the end of
 * each message, and, for algorithms that use them (DCQCN), a CNP when a
 * packet arrives marked CE, at most one per CnpInterval per flow. Control
 * packets travel in the ports' control class (ahead of data, never paused).
 * A lost ACK is sent again RetransmitTimeout later with the latest totals.
 * Loss recovery stays as described below.
 *
 * Relayed traffic (rail-only's cross-rail messages, NCCL's PXN): a packet
 * whose first hop was NVLink (so not congestion-controlled by its source)
 * and that a GPU relays onto one of its NICs is congestion-controlled by the
 * relay, as the relaying GPU's NIC is the RDMA sender of the network leg: it
 * is paced and windowed by the relay's flow to the destination (the flow
 * its own traffic there uses), it carries the relay's rank (a packet tag, no
 * bytes on the wire, where a real frame carries the relay NIC's address
 * instead of the source's), the receiver's ACKs and CNPs go to the relay,
 * and the relay's telemetry (INT, send time) starts at the relay. The
 * message still completes at its source when the destination has it all,
 * and a lost packet is still resent by its source. Needs RelayTurns (the
 * relay's round robin); not in distributed runs (refused there by
 * FabricHelper for rail-only fabrics; elsewhere relayed packets go unpaced).
 *
 * NACKs (Nack, off by default): the receiver tracks each message's next
 * expected sequence. Where the path keeps order (per-flow ECMP, one port) a
 * packet beyond a gap is discarded and the receiver sends a NACK naming the
 * expected packet (once per gap, a 64-byte control packet on the reverse
 * path); where it may reorder (a node on the way balances other than ECMP,
 * or the message is striped over NVLink planes) out-of-order packets are
 * kept and the NACK goes only if the gap persists NackReorderDelay. The
 * sender goes back N: it resends from the NACKed packet, in its connection's
 * turn, under the window and pace. A loss the fabric reports is resent from
 * that packet RetransmitTimeout after it unless resent since (the
 * retransmission timer, which recovers tail losses).
 *
 * A message fails (MessageFailed trace, never its done callback) when its
 * destination has no route any more, an end of it is a GPU that went down,
 * or one packet was lost more than MaxRetransmissions times.
 */
class PacketTransport : public Transport
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    PacketTransport();
    ~PacketTransport() override;

    /**
     * Serve these GPUs (index = rank).
     * \param gpus the GPUs, in rank order, with their ports attached
     */
    void Install(const std::vector<Ptr<FabricGpu>>& gpus);

    /**
     * Send a message along a registered explicit route (see
     * Fabric::RegisterRoute) instead of the forwarding tables.
     * \param srcRank sender \param dstRank receiver \param bytes payload
     * \param routeId the route \param done delivery callback
     * \return the message id
     */
    uint64_t SendRouted(uint32_t srcRank,
                        uint32_t dstRank,
                        uint64_t bytes,
                        uint16_t routeId,
                        DoneCallback done);

    /// \param routes the fabric's explicit routes
    void SetSourceRoutes(std::shared_ptr<const FabricSourceRoutes> routes);
    /**
     * The fabric's nodes, whose load balancing decides whether a message's
     * packets may arrive out of order. Without them (the default) the
     * nodes are those reachable from the GPUs' ports; FabricHelper gives
     * them in a distributed run, where a switch of another rank has none.
     * \param nodes every node of the fabric (they outlive the transport's use)
     */
    void SetFabricNodes(std::vector<const FabricNode*> nodes);
    uint32_t GetNRanks() const override;
    Totals GetTotals() const override;
    /// Events: kEventsPerPacket per packet (arrival and end of serialization at
    /// each of about four hops), packets of GetPayloadPerPacket() bytes.
    double EstimateRunSeconds(uint64_t messages, uint64_t bytes) const override;
    /// Events a packet costs in EstimateRunSeconds (fabric-throughput: 6.4 on a
    /// three-tier fat-tree)
    static constexpr double kEventsPerPacket = 8;

    /// \return payload bytes per packet (smallest MTU minus the header)
    uint32_t GetPayloadPerPacket() const;
    /// \return packets delivered so far
    uint64_t GetPacketsDelivered() const;
    /// \return delivered packets that carried an ECN mark
    uint64_t GetEcnMarkedPackets() const;
    /// \return ACKs sent by receivers (congestion control on)
    uint64_t GetAcksSent() const;
    /// \return CNPs sent by receivers (congestion control on)
    uint64_t GetCnpsSent() const;
    /// \return ACKs, CNPs and NACKs that reached their GPU
    uint64_t GetControlPacketsDelivered() const;
    /// \return NACKs sent by receivers (Nack)
    uint64_t GetNacksSent() const;
    /// \return data packets a receiver discarded (Nack: beyond a gap on an
    ///         in-order path, or a duplicate)
    uint64_t GetDiscardedPackets() const;
    /// \return data packets of other GPUs that relays sent onto their NICs
    ///         under their own congestion control (rail-only's cross-rail
    ///         traffic with congestion control on)
    uint64_t GetRelayedCcPackets() const;
    /// \return ACKs and CNPs that reached a relay's flow (one that has sent
    ///         relayed packets)
    uint64_t GetRelayControlPackets() const;

    /**
     * \param src a sender \param dst a destination
     * \return the congestion control of the flow src -> dst, or nullptr (none
     *         configured, the flow has not sent through a NIC yet, or
     *         ConnectionPerMessage: each message has its own)
     */
    Ptr<FabricCongestionControl> GetFlowControl(uint32_t src, uint32_t dst) const;

    /// Signature of the Retransmit trace: src, dst, message id, sequence.
    typedef void (*RetransmitTracedCallback)(uint32_t, uint32_t, uint64_t, uint32_t);

    /**
     * A packet was lost somewhere in the fabric (FabricHelper connects every
     * device and node to this).
     * \param p the packet, header included
     * \param congestion true for a queue overflow (recovered only with
     *        RecoverCongestionDrops), false for a fault
     */
    void PacketLost(Ptr<const Packet> p, bool congestion);

    /**
     * The forwarding tables changed (after a failure was detected): move
     * queued messages off down ports onto the new routes, and fail messages
     * without a route or with a dead end.
     */
    void RoutesChanged();

    /**
     * Mark a GPU's endpoint dead or alive: a dead endpoint sends nothing, and
     * messages from or to it fail at the next RoutesChanged.
     * \param rank the GPU \param down true for dead
     */
    void SetEndpointDown(uint32_t rank, bool down);
    /// \param rank a GPU \return true if its endpoint is dead
    bool IsEndpointDown(uint32_t rank) const;

    /// \return packets resent
    uint64_t GetRetransmissions() const;
    /// \return packets reported lost
    uint64_t GetLostPackets() const;
    /// \return messages accepted and neither delivered nor failed
    uint64_t GetPendingMessages() const;
    /// \param max at most this many \return pending messages, oldest id first
    std::vector<MessageReport> GetPendingReports(uint32_t max) const;

    /// \param cb called whenever the number of pending messages rises from zero
    void SetBusyCallback(Callback<void> cb);

    /**
     * Serve a distributed run (FabricDistributed; FabricHelper calls this on
     * a partitioned fabric when MPI runs on several ranks). Only a GPU's own
     * rank sends from it. The packets of a message to a GPU of another rank
     * carry what that rank must know (a FabricMessageTag, carried across in
     * the frame's envelope); that rank counts them and completes the message:
     * its MessageComplete trace fires there, and its MessageSink (found by
     * serial, MessageSink::GetSinkSerial) is told there. The sender's rank
     * hears of the completion, and of a loss on another rank, by a word
     * that takes \p wordDelay of the receiving rank (the resend still leaves
     * RetransmitTimeout after the loss), and ConnectionWindow credits for
     * its GPUs cross the same way, due CreditDelay after the delivery or
     * loss. Refused: a RetransmitTimeout below a word's delay, and with
     * ConnectionWindow on a CreditDelay not above it.
     * \param lookahead the run's lookahead (FabricPartition::lookahead)
     * \param wordDelay per rank: the delay of a word to it from this rank,
     *        the least delay of a cable between the two (0: none, or this rank)
     */
    void SetDistributed(Time lookahead, const std::vector<Time>& wordDelay);
    bool IsDistributed() const override;
    bool IsLocalGpu(uint32_t rank) const override;
    uint32_t GetGpuProcess(uint32_t rank) const override;
    /// \copydoc Transport::GetNoteDelay
    Time GetNoteDelay(uint32_t from, uint32_t to) const override;
    /// A note to a GPU of another rank crosses as a word (as a completion
    /// does); every note is taken through its GPU's node (FabricNode::TakeNote).
    void SendNote(uint32_t from,
                  uint32_t to,
                  const MessageSink& sink,
                  uint64_t cookie,
                  Time at) override;

    /// Signature of the MessageComplete trace: src, dst, bytes, send time.
    typedef void (*MessageCompleteTracedCallback)(uint32_t, uint32_t, uint64_t, Time);

  protected:
    void DoDispose() override;

  private:
    /// The sender's side of a congestion-controlled flow.
    struct CcFlow
    {
        Ptr<FabricCongestionControl> cc; //!< the algorithm's state
        uint64_t inFlight{0};            //!< payload bytes sent, not acknowledged or lost
        uint64_t sent{0};                //!< payload bytes sent (first sends)
        uint64_t acked{0};               //!< the receiver's total at the last ACK
        uint64_t marked{0};              //!< its marked total at the last ACK
        Time nextSend;                   //!< pacing: the next packet not before
        EventId wake;                    //!< pacing: unblocks the flow at nextSend
        bool relays{false};              //!< has sent packets this GPU relays
    };

    /// The receiver's side of a congestion-controlled flow.
    struct RxFlow
    {
        uint64_t bytes{0};   //!< payload bytes received
        uint64_t marked{0};  //!< of which marked CE
        uint32_t unacked{0}; //!< packets since the last ACK
        Time lastCnp;        //!< when the last CNP went
        bool cnpSent{false}; //!< a CNP went
    };

    /// What a pull reads of a message (prefetched as one: PrefetchTxReady).
    struct MessageHead
    {
        uint32_t src{0};
        uint32_t dst{0};
        uint64_t bytes{0};
        uint64_t queued{0};    //!< bytes already packetized
        uint32_t payload{0};   //!< payload bytes per packet (PacketPayload())
        uint64_t delivered{0}; //!< bytes delivered
        uint32_t nextSeq{0};
        uint16_t flowLabel{0};
        uint32_t queueRefs{0}; //!< entries in port queues (the id is reused only at 0)
        bool routed{false};    //!< follows a source route (flowLabel = route id)
        bool remote{false};    //!< to a GPU of another rank (distributed runs)
        bool completed{false};
        bool failed{false}; //!< given up (reported through MessageFailed)
    };

    /// Nack: a message's receiver side (a Message's, or a RemoteMessage's
    /// where the sender is on another rank).
    struct NackRx
    {
        uint32_t rxNext{0};     //!< the next sequence expected
        uint32_t rxHigh{0};     //!< one past the highest sequence seen
        std::deque<char> ahead; //!< from rxNext: received (may-reorder paths)
        bool nackSent{false};   //!< a NACK for rxNext went
        bool gapTimer{false};   //!< a GapPersists check is pending
    };

    /// A message: what a pull reads, then the rest.
    struct Message : MessageHead
    {
        uint32_t lost{0}; //!< packets lost and not yet resent successfully
        Time start;
        Time firstLoss; //!< time of its first lost packet
        Delivery delivery;
        // Nack only: the sender's side
        uint64_t serial{0};                            //!< tells a reused id's events apart
        uint32_t sentSeq{0};                           //!< packets sent at least once
        uint32_t flying{0};                            //!< its packets on the way (the id waits)
        bool mayReorder{false};                        //!< its path may reorder (Queue)
        std::map<uint32_t, Time> lossAt;               //!< reported losses not resent since
        std::unordered_map<uint32_t, uint32_t> resent; //!< seq -> times resent (its copy)
        // Nack only: the receiver's side
        NackRx nack;
        // ConnectionPerMessage only: the message's own flow, both sides
        CcFlow tx; //!< the sender's side (its cc made at its first NIC packet)
        RxFlow rx; //!< the receiver's side
    };

    uint64_t DoSend(uint32_t srcRank, uint32_t dstRank, uint64_t bytes, Delivery delivery) override;
    uint32_t NewMessage(uint32_t srcRank, uint32_t dstRank, uint64_t bytes, Delivery delivery);
    bool Local(uint32_t id);
    [[noreturn]] void Reject(uint32_t id, const std::string& why);
    /// Unset the GPUs' delivery callbacks and ports' sources, forget the GPUs.
    void DetachGpus();
    void Queue(uint32_t id, const std::vector<FabricNetDevice*>& ports);
    struct PortTurns;
    /// The GPU ports' traffic source (a FabricTxSource that prefetches; packet-transport.cc).
    class TxPull;
    /// A GPU port can take packets (TxPull; \p cookie: its PortTurns).
    void TxReady(FabricNetDevice* port, void* cookie);
    /// A GPU relays \p p through \p port: queued on its relay connection
    /// for (source, destination), served in the port's round robin (TxPull).
    void TakeRelay(FabricNetDevice* port,
                   PortTurns& turns,
                   const Ptr<Packet>& p,
                   const FabricHeaderData& h,
                   FabricNetDevice* ingress);
    /// \p port went down: its relayed packets go back to it, which loses them.
    void DropRelays(FabricNetDevice* port, PortTurns& turns);
    /// Prefetch what TxReady will read, from the port's PortTurns to the
    /// connection and message at its head (TxPull).
    void PrefetchTxReady(const void* cookie, uint32_t stage) const;
    /// Feed \p port from its connections (round robin) while its FIFO has
    /// room, at most \p limit packets; \return packets it took
    uint32_t Pump(FabricNetDevice* port, uint32_t limit = UINT32_MAX);
    /// Pump(port, limit) with the port's round robin \p turns at hand.
    uint32_t Pump(FabricNetDevice* port, PortTurns& turns, uint32_t limit);
    /// \return whether \p port takes a packet now (FIFO room, not paused, up)
    bool CanTake(const FabricNetDevice* port) const;
    void Deliver(Ptr<Packet> p, const FabricHeaderData& h);
    /// \p bytes of \p src's window toward \p dst return CreditDelay after
    /// now, less \p late (a loss heard of from another rank that much later)
    void Credit(uint32_t src, uint32_t dst, uint32_t bytes, Time late = Time(0));
    /// A credit's instant: taken as a note of \p src's node (FabricNode::TakeNote)
    void CreditDue(uint32_t src, uint32_t dst, uint32_t bytes);
    /// TakeNote's callback for a credit: \p note kCreditNote | dst, \p cookie src << 32 | bytes
    void TakeCredit(uint64_t note, uint64_t cookie);
    /// Notes that are credits: after every sink's notes of an instant
    static constexpr uint64_t kCreditNote = uint64_t{1} << 63;
    void ReturnCredit(uint32_t src, uint32_t dst, uint32_t bytes);
    void Complete(uint32_t id);
    void Release(uint32_t id);
    std::vector<FabricNetDevice*> Route(uint32_t id) const;
    /// Route(id) for a resend; if an end is down or no path is left, fail
    /// the message (Fail) and \return no port.
    std::vector<FabricNetDevice*> LivePorts(uint32_t id);

    /// \return the flow src -> dst, created for \p port's line rate
    CcFlow& FlowOf(uint32_t src, uint32_t dst, const FabricNetDevice* port);
    /// \return message \p m's flow: its own (ConnectionPerMessage), else its pair's (FlowOf)
    CcFlow& FlowFor(Message& m, const FabricNetDevice* port);
    /// \return the tag of message \p m's own flow in its ACKs and CNPs (their
    /// sequence field; never 0, which names a pair's flow)
    static uint32_t FlowTag(const Message& m);
    /// \return the tag of the own flow of the message of sender's serial \p serial
    static uint32_t FlowTag(uint64_t serial);
    /// \return the receiver's side of the flow \p sender -> \p receiver that
    /// the control packet of \p messageId tagged \p tag reports on (nullptr: a
    /// message's own flow that is gone)
    RxFlow* RxFlowOf(uint32_t receiver, uint32_t sender, uint32_t messageId, uint32_t tag);
    /// \return whether the flow may send \p payload now (else it waits for
    /// an ACK, or a wake-up is scheduled)
    /// (\p only: as for Unblock, whom the pacing wake-up puts back).
    bool CcAllows(CcFlow& f, uint32_t payload, uint32_t src, uint32_t dst, uint32_t only);
    /// The flow sent \p payload: in flight, paced, told.
    void CcSent(CcFlow& f, uint32_t payload);
    /// Connections of src waiting (credit, window, pacing) for dst go back on
    /// their ports' round robins: all of them, or (\p only a message id:
    /// ConnectionPerMessage, an ACK or the pace of its own flow) only those of
    /// message \p only, as a NIC schedules a queue pair once it may send.
    void Unblock(uint32_t src, uint32_t dst, uint32_t only = kAnyMessage);
    /// Unblock's \p only for every connection of the pair.
    static constexpr uint32_t kAnyMessage = UINT32_MAX;
    /// The receiver's ACK and CNP for a congestion-controlled data packet
    /// (\p telemetry: its INT, echoed by the ACK, or nullptr).
    /// \p sender: the flow's congestion-controlled sender (the relay of a
    /// relayed packet, else h.src).
    /// \p serial: the sender's serial of the message where its sender is on
    /// another rank (FabricMessageTag), else 0.
    void ReceiverFeedback(const FabricHeaderData& h,
                          uint32_t sender,
                          uint32_t payload,
                          const FabricIntHeader* telemetry,
                          uint64_t serial);
    /// Send an ACK with the receiver's totals for the flow sender -> receiver.
    void SendAck(uint32_t receiver,
                 uint32_t sender,
                 uint32_t messageId,
                 uint16_t flowLabel,
                 const FabricIntHeader* telemetry = nullptr,
                 uint32_t tag = 0);
    /// Send a control packet (\p ack: an ACK's body, or nullptr for a CNP;
    /// \p telemetry: INT to echo, or nullptr).
    void SendControl(const FabricHeader& h,
                     const FabricAckHeader* ack,
                     const FabricIntHeader* telemetry,
                     uint64_t nackSerial = 0);
    /// Give a data packet (payload only so far) its telemetry header.
    void AddTelemetry(const Ptr<Packet>& p, FabricHeader& h);
    /// An ACK or CNP reached the sender.
    void ControlArrived(const Ptr<Packet>& p, const FabricHeaderData& h);
    /// Attribute accessors of CongestionControl.
    void SetCongestionControl(const std::string& name);
    std::string GetCongestionControl() const;
    void Retransmit(uint32_t id, uint32_t seq);
    /// Nack: whether the receiver (state \p rx; \p done: the message
    /// completed) takes data packet \p h of the message of sender's serial
    /// \p serial (else it is discarded).
    bool NackAccept(NackRx& rx,
                    bool mayReorder,
                    bool done,
                    const FabricHeaderData& h,
                    uint64_t serial);
    /// Nack: \p receiver asks \p sender for packet \p rxNext of message \p id
    /// (the sender's id and serial \p serial).
    void SendNack(uint32_t receiver,
                  uint32_t sender,
                  uint32_t id,
                  uint16_t flowLabel,
                  uint32_t rxNext,
                  uint64_t serial);
    /// Nack: the receiver's side of message \p id of \p sender, if it is still
    /// the one of serial \p serial and not done; its receiver and flow label.
    NackRx* FindNackRx(uint32_t sender,
                       uint32_t id,
                       uint64_t serial,
                       uint32_t& receiver,
                       uint16_t& flowLabel);
    /// Nack: a NACK reached the sender (go back N).
    void NackArrived(const Ptr<const Packet>& p, const FabricHeaderData& h);
    /// Nack: resend message \p id from packet \p seq (go back N).
    void GoBack(uint32_t id, uint32_t seq);
    /// Nack: packet \p seq of message \p id was sent (a resend is counted).
    /// \return its copy: 0 the first time, n its n-th resend
    uint32_t NackSent(Message& m, uint32_t id, uint32_t seq);
    /// Nack: the retransmission timer of copy \p copy of a packet lost at \p at.
    void LossTimeout(uint32_t id, uint64_t serial, uint32_t seq, Time at, uint32_t copy);
    /// Nack: the gap before packet \p seq (a may-reorder path) was seen a while ago.
    void GapPersists(uint32_t sender, uint32_t id, uint64_t serial, uint32_t seq);
    /// Nack: a NACK of message \p id was lost; send another if the gap remains.
    void NackAgain(uint32_t sender, uint32_t id, uint64_t serial);
    /// \return whether a node reachable from the GPUs balances other than ECMP
    bool PathsMayReorder() const;
    /// The header of packet \p seq of message \p id (sent first or resent).
    FabricHeader PacketHeader(uint32_t id, uint32_t seq, bool last) const;
    void Fail(uint32_t id, const std::string& why);
    MessageReport Report(uint32_t id) const;

    std::vector<Ptr<FabricGpu>> m_gpus; //!< rank -> GPU
    std::unique_ptr<TxPull> m_txPull;   //!< what the GPU ports pull from

    /// Messages from one GPU to one destination through one port, served in
    /// order (a queue pair); ports serve their connections in round robin.
    struct Connection
    {
        std::deque<uint32_t> messages; //!< message ids, first in first out
    };

    struct Endpoint;

    /// A connection's turn in its port's round robin, with the message at
    /// the head of its queue (so that the pull's message is known, and
    /// prefetched, one step before its connection is read).
    struct Turn
    {
        uint32_t connection; //!< index in Endpoint::connections, or kRelayTurn | relay
        uint32_t message;    //!< its first message (the front of its queue)
    };

    /// Turn::connection of a relay connection (Endpoint::relays).
    static constexpr uint32_t kRelayTurn = 0x80000000U;

    /// A packet of another GPU this GPU relays, with what its port needs.
    struct RelayFrame
    {
        Ptr<Packet> packet;
        FabricHeaderData header;
        FabricNetDevice* ingress; //!< where it arrived (charged until it leaves)
        uint32_t charged;         //!< the bytes \p ingress was charged
    };

    /// The packets of one (source, destination) this GPU relays through
    /// one port, first in first out: a queue pair of its own.
    struct RelayConnection
    {
        std::deque<RelayFrame> frames;
    };

    /// A GPU port's round robin of its connections with data.
    struct PortTurns
    {
        std::deque<Turn> turns; //!< connections with data, next first
        Endpoint* ep{nullptr};  //!< the GPU's endpoint
    };

    /// Per GPU: its connections and, per port, the round robin of busy ones
    /// (its ports hold pointers into `busy` from Install on: not copied or
    /// resized after it).
    struct Endpoint
    {
        std::unordered_map<uint64_t, uint32_t> index;    //!< (dst, port) -> connection
        std::vector<Connection> connections;             //!< by index
        std::vector<PortTurns> busy;                     //!< per port: connections with data
        std::unordered_map<uint32_t, uint64_t> inFlight; //!< dst -> bytes sent, not yet credited
        std::unordered_map<uint32_t, std::vector<std::pair<uint32_t, uint16_t>>>
            blocked; //!< dst -> (connection, or kRelayTurn | relay, port) held back (credit,
                     //!< window, pace)
        /// port index of the plane that took the last packet dealt when a
        /// striped message was queued (the next one starts after it)
        uint32_t lastPlane{std::numeric_limits<uint32_t>::max()};
        /// per port: the NVSwitch an NVLink port leads to (nullptr for others)
        std::vector<const FabricNode*> nvSwitch;
        /// (source, destination, port) -> relay connection
        std::unordered_map<uint64_t, uint32_t> relayIndex;
        std::vector<RelayConnection> relays;          //!< by index
        std::unordered_map<uint32_t, CcFlow> ccFlows; //!< dst -> its flow (sender side)
        std::unordered_map<uint32_t, RxFlow> rxFlows; //!< src -> its flow (receiver side)
    };

    /// Put connection \p cid (with data) last in port \p port's round robin;
    /// \return whether it is the only one there
    bool AddTurn(Endpoint& ep, uint32_t port, uint32_t cid);
    /// \return the index of \p ep's connection to \p dst through \p port (made if new)
    /// (ConnectionPerMessage: message \p id's own connection through \p port)
    uint32_t ConnectionOf(Endpoint& ep, uint32_t dst, uint32_t port, uint32_t id);
    /// \return whether relayed packet \p f leaving through \p port falls
    /// to the relay's congestion control (it arrived uncontrolled, leaves by
    /// a NIC, one process)
    bool RelayControls(const FabricNetDevice* port, const RelayFrame& f) const;
    /// The relay \p ep sends \p f (of relay connection \p cid) under its
    /// flow to the destination: \return false if the flow holds it back
    /// (then the connection waits in Endpoint::blocked), else marks it
    /// congestion-controlled, tags it with the relay and gives it telemetry.
    bool RelaySend(FabricNetDevice* port, Endpoint& ep, uint32_t cid, RelayFrame& f);

    std::vector<Endpoint> m_endpoints;                        //!< by rank
    std::shared_ptr<const FabricSourceRoutes> m_sourceRoutes; //!< explicit routes
    std::vector<Message> m_messages;                          //!< by id
    MessageIdPool m_ids;                                      //!< message ids
    uint32_t m_payload{0};                                    //!< payload bytes per packet
    uint32_t m_frameMtu{0}; //!< the GPU ports' smallest Mtu (Install)
    /// m_payload from the Mtu, less a full INT record when packets carry one
    void SetPayload();
    Totals m_totals;
    uint64_t m_packetsDelivered{0};
    uint64_t m_ecnMarked{0};

    /// A message to this rank's GPU from a GPU of another rank (distributed runs).
    struct RemoteMessage
    {
        uint64_t bytes{0};      //!< its size (FabricMessageTag of its first packet)
        uint64_t delivered{0};  //!< payload bytes arrived
        Time start;             //!< when it was sent
        uint64_t sink{0};       //!< its MessageSink's serial
        uint64_t cookie{0};     //!< for the sink
        bool hasSink{false};    //!< a sink is to be told
        uint64_t serial{0};     //!< the sender's serial of it (Nack)
        bool mayReorder{false}; //!< its path may reorder (Nack)
        uint16_t flowLabel{0};  //!< its packets' (a NACK goes back with it)
        uint32_t dst{0};        //!< its receiver
        NackRx nack;            //!< the receiver's side (Nack)
    };

    /// ConnectionPerMessage: the receiver's side of the own flow of a message
    /// from another rank, kept (as a Message's rx on one process) until the
    /// sender's next message of the same id replaces it.
    struct RemoteRxFlow
    {
        uint64_t serial{0}; //!< the sender's serial of its message
        RxFlow rx;          //!< its state
    };
    /// What travels between the ranks of a message's ends.
    struct Word;
    /// Check a send of a distributed run; \return true if its receiver is on another rank.
    bool RequireDistributedSend(uint32_t srcRank,
                                uint32_t dstRank,
                                uint64_t bytes,
                                const Delivery& delivery) const;
    /// Send \p w to GPU \p gpu's rank, arriving the lookahead from now.
    void SendWord(uint32_t gpu, const Word& w);
    /// A word from another rank (a port's remote transport callback).
    void ReceiveWord(Ptr<Packet> p);
    /// Tag a data packet of a message to another rank (FabricMessageTag).
    void TagRemote(const Ptr<Packet>& p, const Message& m) const;
    /// A data packet of a message from another rank arrived.
    void DeliverRemote(const Ptr<Packet>& p, const FabricHeaderData& h, uint32_t payload);
    /// Complete a message from another rank if all of it arrived.
    void MaybeCompleteRemote(uint64_t key, RemoteMessage& r, uint32_t src, uint32_t dst);
    /// The sender's part of a loss reported \p late after it happened.
    /// \p extra: for a data packet its copy (NackSent), for a NACK its
    /// message's serial; \p serial: a data packet's message serial where its
    /// receiver is on another rank, else 0.
    void SenderLost(const FabricHeaderData& h,
                    uint32_t payload,
                    bool congestion,
                    Time late,
                    uint64_t extra,
                    uint64_t serial);
    /// A packet sent under \p relay's flow to \p dst was lost: it leaves the flow.
    void RelayLost(uint32_t relay, uint32_t dst, uint32_t payload);
    /// The receiver's rank completed message \p id of this rank.
    void CompletedElsewhere(uint32_t id);
    /// A note for GPU \p gpu is due now: its node takes it.
    void NoteDue(uint32_t gpu, uint64_t sink, uint64_t cookie);

    bool m_distributed{false};                            //!< SetDistributed was called
    std::vector<Time> m_wordDelay;                        //!< per rank: a word's delay to it
    std::vector<uint8_t> m_localGpu;                      //!< per GPU: this rank's
    std::unordered_map<uint64_t, RemoteMessage> m_remote; //!< (src << 32 | id) -> state
    std::unordered_map<uint64_t, uint64_t> m_remoteDone;  //!< Nack: (src << 32 | id) -> serial
                                                          //!< of the last one completed
    /// ConnectionPerMessage: (src << 32 | id) -> own flow of a message from another rank
    std::unordered_map<uint64_t, RemoteRxFlow> m_remoteRx;
    Time m_rto;                                   //!< RetransmitTimeout
    uint64_t m_window{0};                         //!< ConnectionWindow (0: none)
    bool m_connPerMessage{false};                 //!< ConnectionPerMessage
    uint32_t m_txFifo{2};                         //!< TxFifoPackets
    bool m_relayTurns{true};                      //!< RelayTurns
    Time m_creditDelay;                           //!< CreditDelay
    uint32_t m_maxRetransmissions{0};             //!< per packet
    bool m_recoverCongestion{false};              //!< resend queue-overflow drops too
    uint64_t m_retransmissions{0};                //!< packets resent
    uint64_t m_lostPackets{0};                    //!< losses reported
    uint64_t m_pending{0};                        //!< messages in progress
    bool m_faultsSeen{false};                     //!< routes changed or an endpoint died
    std::vector<char> m_deadEndpoint;             //!< by rank
    std::map<uint64_t, uint32_t> m_attempts;      //!< (id, seq) -> losses, lost packets only
    Callback<void> m_busy;                        //!< pending rose from zero
    std::string m_ccType;                         //!< CongestionControl's TypeId name ("": none)
    ObjectFactory m_ccFactory;                    //!< makes each flow's algorithm
    bool m_ccUsesCnp{false};                      //!< receivers send CNPs
    bool m_ccUsesTelemetry{false};                //!< data packets carry a FabricIntHeader
    uint32_t m_ackEvery{1};                       //!< AckEvery
    Time m_cnpInterval;                           //!< CnpInterval
    uint64_t m_acksSent{0};                       //!< ACKs sent
    uint64_t m_cnpsSent{0};                       //!< CNPs sent
    uint64_t m_controlDelivered{0};               //!< ACKs, CNPs and NACKs delivered
    bool m_nack{false};                           //!< Nack
    Time m_nackReorderDelay;                      //!< NackReorderDelay
    int8_t m_pathsReorder{-1};                    //!< PathsMayReorder, once known
    std::vector<const FabricNode*> m_fabricNodes; //!< SetFabricNodes (empty: walk the ports)
    uint64_t m_serials{0};                        //!< Message::serial's source
    uint64_t m_nacksSent{0};                      //!< NACKs sent
    uint64_t m_discarded{0};                      //!< data packets a receiver discarded
    uint64_t m_relayedCc{0};                      //!< relayed packets sent under a relay's flow
    uint64_t m_relayControl{0};                   //!< ACKs and CNPs that reached a relay's flow
    TracedCallback<uint32_t, uint32_t, uint64_t, Time> m_completeTrace;
    TracedCallback<uint32_t, uint32_t, uint64_t, uint32_t> m_retransmitTrace;
};

} // namespace ns3

#endif // GPU_FABRIC_PACKET_TRANSPORT_H
