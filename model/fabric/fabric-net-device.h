/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_NET_DEVICE_H
#define GPU_FABRIC_FABRIC_NET_DEVICE_H

#include "fabric-event.h"
#include "fabric-header.h"

#include "ns3/data-rate.h"
#include "ns3/mac48-address.h"
#include "ns3/net-device-queue-interface.h"
#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/queue.h"
#include "ns3/traced-callback.h"
#include "ns3/traced-value.h"

#include <boost/circular_buffer.hpp>

namespace ns3
{

class FabricChannel;
class FabricNetDevice;
class FabricNode;

/**
 * \ingroup gpu-fabric
 * \brief A traffic source that a FabricNetDevice pulls packets from, called
 * directly instead of through a TxReadyCallback.
 *
 * A pull runs once per packet a GPU sends, and a large run finds the source's
 * state for that port cold. A source set with FabricNetDevice::SetTxSource
 * is asked, stage by stage before each end of serialization, to prefetch
 * what its pull will read (FabricLookaheadScheduler's look-ahead), and is
 * called without the indirections of an ns-3 Callback. PacketTransport is one.
 */
class FabricTxSource
{
  public:
    virtual ~FabricTxSource() = default;
    /**
     * The port can take packets (as a TxReadyCallback).
     * \param port the port
     * \param cookie what the source gave SetTxSource for this port
     */
    virtual void TxReady(FabricNetDevice* port, void* cookie) = 0;
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
 * \brief A port of a GPU, NVSwitch or network switch: full-duplex,
 * point-to-point, lossless by default.
 *
 * Transmit side: an ns-3 Queue<Packet> (FIFO) in front of a serializer that
 * sends one packet at a time at DataRate; the channel adds propagation delay.
 *
 * Flow control (PFC-style, one traffic class): every packet that arrives on
 * this port and is buffered in the node is charged to this port until it
 * leaves through an output port.  When the charge reaches PfcXoff bytes the
 * port sends a pause frame to its peer, whose transmitter then stops after
 * the packet on the wire; when the charge falls to PfcXon it sends resume.
 * No packet is ever dropped provided the output queue can hold (PfcXoff +
 * headroom) bytes per input port, headroom being 2 x Delay x DataRate + 2
 * Mtu; a FabricSwitch grows its output queues to that sum when PortBuffer is
 * smaller (GrowBufferForPfc, on by default).
 *
 * Packets reach the owning FabricNode (switch or GPU) directly; on a plain
 * ns-3 Node the device falls back to the standard receive callbacks, so it is
 * usable as a generic point-to-point link under an ns-3 Internet stack
 * (FabricLinkHelper): Send() frames each packet with a 14-byte Ethernet II
 * header (the sender's MAC, the destination Send is given, the protocol
 * number), which
 * is serialized with it, appears in PCAP captures and is removed by the
 * receiver. A frame a FabricNode sends starts with an Ethernet II header too
 * (the FabricHeader's first 14 bytes, EtherType 0x88B5).
 *
 * MTU: the Mtu attribute is the largest frame, link header included (the
 * 26-byte FabricHeader of fabric frames). NetDevice::GetMtu(), what an
 * ns-3 protocol above the device reads, is the largest packet Send() takes:
 * Mtu minus the 14-byte Ethernet II header, as Ethernet's 1500-byte MTU
 * excludes its framing.
 */
class FabricNetDevice : public NetDevice
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    FabricNetDevice();
    ~FabricNetDevice() override;

    /**
     * Connect to a channel.
     * \param channel the cable
     * \return true
     */
    bool Attach(Ptr<FabricChannel> channel);

    /**
     * \param queue the transmit queue (must be FIFO, e.g. DropTailQueue); if a
     * NetDeviceQueueInterface is aggregated, its queue follows this one
     */
    void SetQueue(Ptr<Queue<Packet>> queue);
    /// \return the transmit queue
    Ptr<Queue<Packet>> GetQueue() const;

    /// \param rate the line rate (must be positive)
    void SetDataRate(DataRate rate);
    /// \return the line rate
    DataRate GetDataRate() const;

    /// Ethernet II header bytes Send() adds to each packet
    static constexpr uint16_t kEthernetHeaderBytes = 14;

    /**
     * \param mtu the largest frame in bytes, link header included (the Mtu
     *        attribute); more than the FabricHeader's 26 bytes
     */
    void SetFrameMtu(uint16_t mtu);
    /// \return the largest frame in bytes, link header included
    uint16_t GetFrameMtu() const;

    /**
     * Queue a packet that already carries a FabricHeader for transmission.
     * \param p the packet
     * \param ingress the port it arrived on (charged for flow control), or
     *        nullptr for traffic the node itself originates
     * \return false if the queue was full and the packet dropped
     * A frame larger than Mtu raises FabricConfigError (a port whose Mtu is
     * below the transport's packet size is a configuration error).
     */
    bool Enqueue(const Ptr<Packet>& p, FabricNetDevice* ingress);

    /**
     * Queue a packet whose FabricHeader the caller already holds (the
     * transport that wrote it, or a node that received it): the header
     * travels beside the packet to the next node, which then routes without
     * parsing the packet's bytes.
     * \param p the packet, carrying \p h as its first header
     * \param h the packet's header
     * \param ingress as for Enqueue(p, ingress)
     * \return false if the queue was full and the packet dropped
     */
    bool Enqueue(const Ptr<Packet>& p, const FabricHeaderData& h, FabricNetDevice* ingress);

    /// \return packets waiting in the transmit queue
    uint32_t GetQueuePackets() const;
    /// \return bytes waiting in the transmit queue
    uint32_t GetQueueBytes() const;
    /// \return true while the peer has paused this transmitter
    bool IsTxPaused() const;
    /// \return true while a packet is being serialized
    bool IsTxBusy() const;
    /// \return how long the transmitter needs to send what it holds (the
    /// rest of the packet on the wire and the queue), pauses aside
    Time GetTxBacklog() const;

    /**
     * Called by the transmitter whenever its queue drains to at most one
     * packet, so that a traffic source can pull the next packet (pacing at
     * line rate without timers).
     */
    typedef Callback<void, Ptr<FabricNetDevice>> TxReadyCallback;
    /// \param cb callback invoked when the device can take more packets
    /// (replaces a source set with SetTxSource)
    void SetTxReadyCallback(TxReadyCallback cb);
    /**
     * Pull from \p source instead of a TxReadyCallback (which this replaces):
     * the same calls, made directly, with prefetching ahead of them.
     * \param source the source, or nullptr for none; it must outlive the
     *        device or be unset first
     * \param cookie passed back to \p source with each call for this port
     */
    void SetTxSource(FabricTxSource* source, void* cookie);

    /**
     * Called for every packet this device loses (queue overflow, link down,
     * corrupted on the wire), so that a transport can retransmit it; the
     * flag is true for a queue overflow (congestion), false for a fault.
     */
    typedef Callback<void, Ptr<const Packet>, bool> LossCallback;
    /// \param cb callback invoked with each lost packet
    void SetLossCallback(LossCallback cb);

    /**
     * Take this end of the link down or up (FabricChannel::SetLinkUp does
     * both ends). Going down loses the queued packets (the packet being
     * serialized is lost on the wire), drops every later Enqueue and forgets
     * pause state; going up restarts the transmitter.
     * \param up the new state
     */
    void SetLinkUp(bool up);

    /// \return false while the link is down (cheap, non-virtual)
    bool IsUp() const
    {
        return m_up;
    }

    /// \param nvlink true if this port is an NVLink (GPUs stripe messages over NVLink ports)
    void SetNvLink(bool nvlink);
    /// \return true if this port is an NVLink
    bool IsNvLink() const;

    /// \param index position of this port in its FabricNode
    void SetPortIndex(uint32_t index);
    /// \return position of this port in its FabricNode
    uint32_t GetPortIndex() const;

    /// Counters, cheap to read at the end of a run.
    struct Stats
    {
        // the counters of every packet hop first (56 bytes)
        uint64_t arrivals{0};          //!< packets whose last bit arrived (one event each)
        uint64_t rxPackets{0};         //!< packets received
        uint64_t rxBytes{0};           //!< bytes received
        uint64_t txPackets{0};         //!< packets serialized
        uint64_t txBytes{0};           //!< bytes serialized (headers included)
        uint64_t serializationEnds{0}; //!< ends of serialization scheduled as events
        uint32_t maxQueueBytes{0};     //!< high-water mark of the transmit queue
        uint64_t drops{0};             //!< packets dropped (queue full, or over the MTU in Send)
        uint64_t lost{0};       //!< packets lost to a down link (queued, on the wire, offered)
        uint64_t corrupted{0};  //!< packets received with bit errors and discarded
        uint64_t ecnMarks{0};   //!< packets marked CE at enqueue
        uint64_t pausesSent{0}; //!< pause frames sent to the peer
        uint64_t pausesRecv{0}; //!< pause frames received from the peer
        Time pausedTime;        //!< total time this transmitter was paused
        uint64_t flowControlFrames{0}; //!< pause/resume frames that arrived (one event each)
    };

    /// \return the counters
    const Stats& GetStats() const;

    /**
     * Stage \p stage of what receiving a frame reads, then forwarding it
     * (FabricLookaheadScheduler; stage 1: this port's fields).
     * \param stage the stage
     * \param meta the frame's header data
     */
    void PrefetchReceive(uint32_t stage, const FabricFrameMeta& meta) const;

    /**
     * Stage \p stage of what queueing a frame here reads (stage 1: this
     * port's fields, 2: its cable and queue, 3: the cable's slot and event).
     * \param stage the stage
     */
    void PrefetchEnqueue(uint32_t stage) const;

    /// \return the owner if it is a FabricNode, else nullptr (cheap: no Ptr)
    FabricNode* GetFabricNode() const
    {
        return m_fabricNode;
    }

    /// \return the id of the owning node (cached; the channel schedules with it)
    uint32_t GetNodeId() const
    {
        return m_nodeId;
    }

    /**
     * The link's state changes so far (each down and each up adds one). A
     * frame carries the receiver's count from when it was sent: if the count
     * differs on arrival, the link went down meanwhile and the frame was lost
     * with it, however short the outage.
     * \return the count
     */
    uint32_t GetLinkEpoch() const
    {
        return m_linkEpoch;
    }

    /**
     * Called by the channel: the last bit of \p p has arrived.
     * \param p the packet
     * \param meta what the sender passed along with it
     * \param epoch this device's GetLinkEpoch() when \p p was sent
     */
    void Receive(const Ptr<Packet>& p, const FabricFrameMeta& meta, uint32_t epoch);
    /**
     * Called by the channel: \p p arrived with bit errors (discarded, counted).
     * \param p the packet \param epoch GetLinkEpoch() when it was sent
     */
    void ReceiveCorrupted(Ptr<Packet> p, uint32_t epoch);
    /**
     * Called by the channel: the peer asks this transmitter to pause/resume.
     * \param pause pause (true) or resume \param epoch GetLinkEpoch() when sent
     */
    void ReceiveFlowControl(bool pause, uint32_t epoch);

    // NetDevice
    void SetIfIndex(const uint32_t index) override;
    uint32_t GetIfIndex() const override;
    Ptr<Channel> GetChannel() const override;
    void SetAddress(Address address) override;
    Address GetAddress() const override;
    bool SetMtu(const uint16_t mtu) override;
    uint16_t GetMtu() const override;
    bool IsLinkUp() const override;
    void AddLinkChangeCallback(Callback<void> callback) override;
    bool IsBroadcast() const override;
    Address GetBroadcast() const override;
    bool IsMulticast() const override;
    Address GetMulticast(Ipv4Address multicastGroup) const override;
    Address GetMulticast(Ipv6Address addr) const override;
    bool IsPointToPoint() const override;
    bool IsBridge() const override;
    bool Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber) override;
    bool SendFrom(Ptr<Packet> packet,
                  const Address& source,
                  const Address& dest,
                  uint16_t protocolNumber) override;
    Ptr<Node> GetNode() const override;
    void SetNode(Ptr<Node> node) override;
    bool NeedsArp() const override;
    void SetReceiveCallback(NetDevice::ReceiveCallback cb) override;
    void SetPromiscReceiveCallback(PromiscReceiveCallback cb) override;
    bool SupportsSendFrom() const override;

  protected:
    void DoDispose() override;
    /// A NetDeviceQueueInterface aggregated to the device gets the queue's traces.
    void NotifyNewAggregate() override;

  private:
    friend class FabricChannel; // takes both ends down/up before either reacts

    /// Set the link state (queue flushed when going down); \return whether it changed
    bool ChangeLinkState(bool up);
    /// After a change: link-change callbacks, and a restart when up.
    void NotifyLinkChanged();

    /// What the device keeps beside each packet of its Queue<Packet>.
    struct QueuedFrame
    {
        FabricFrameMeta meta;              //!< travels with the packet to the next node
        FabricNetDevice* ingress{nullptr}; //!< input port charged for it, or nullptr
    };

    /// Stage \p stage of what the next TransmitComplete() reads.
    void PrefetchTransmitComplete(uint32_t stage) const;
    /// Stage \p stage of what dequeuing reads (1: the queue, 2: its head, 3: the packet).
    void PrefetchQueue(uint32_t stage) const;
    /// Queue \p p (MacTx fired by the caller).
    bool DoEnqueue(const Ptr<Packet>& p, const QueuedFrame& frame);
    /// A frame for a plain ns-3 node: strip its Ethernet II header, hand it up.
    void ReceiveOnPlainNode(const Ptr<Packet>& p);
    /// Send()'s destination as a MAC address (the peer's if \p dest is none).
    Mac48Address DestinationMac(const Address& dest) const;
    void EnsureQueue();
    /// Connect the aggregated NetDeviceQueueInterface (if any) to the queue (if any).
    void ConnectQueueInterface();
    /// \return whether a traffic source pulls from this port
    bool HasTxPull() const;
    /// Let the traffic source pull (TxReadyCallback or FabricTxSource).
    void NotifyTxReady();
    /// Take the oldest waiting packet out of the queue, and \p frame beside it.
    Ptr<Packet> PopQueued(QueuedFrame& frame);
    /// Send the oldest waiting packet; \p now is the simulation time.
    void StartTransmission(Time now);
    /// Serialize \p p at \p now (the transmitter is idle); \p frame is what
    /// travels beside it. The callers pass the time they read: Simulator::Now()
    /// is an out-of-line call through the simulator's implementation.
    void SendFrame(const Ptr<Packet>& p, const QueuedFrame& frame, Time now);
    void TransmitComplete();
    void KickTransmitter();
    void ChargeIngress(uint32_t bytes);
    void ReleaseIngress(uint32_t bytes);
    void MarkCe(const Ptr<Packet>& p, QueuedFrame& frame);
    Time SerializationTime(uint32_t bytes);
    void Lose(Ptr<Packet> p);
    bool LostOnWire(uint32_t epoch) const;

    /// Bits of m_traces: which packet traces have a sink.
    enum TraceBit : uint8_t
    {
        kTraceMacTx = 1,
        kTraceMacRx = 2,
        kTracePhyTxBegin = 4,
        kTracePhyTxEnd = 8,
        kTraceSniffer = 16,
        kTracePromiscSniffer = 32,
    };

    // What a packet hop reads comes first, grouped by the role the port plays
    // (a large run keeps thousands of ports, and a hop finds them cold): after
    // the object's 32-byte header, the input port's fields and the flags (to
    // byte 64), the output port's and its pull (to 256, the port index
    // last), the counters of every hop (from 256). On a 64-byte boundary, which the allocator does
    // not promise, that is one cache line for the input port, three for the output, one for the
    // counters.
    FabricNode* m_fabricNode{nullptr}; //!< owner as a FabricNode, if it is one
    uint32_t m_ingressBytes{0};        //!< bytes from this port buffered in the node
    uint32_t m_pfcXoff{0};             //!< pause threshold, bytes
    uint32_t m_pfcXon{0};              //!< resume threshold, bytes
    uint32_t m_linkEpoch{0};           //!< link state changes so far (GetLinkEpoch)
    bool m_faulted{false};             //!< the link has been down at least once
    bool m_pfcEnabled{true};           //!< send pause frames
    bool m_peerPaused{false};          //!< we have paused the peer
    uint8_t m_traces{0};               //!< TraceBit of each packet trace with a sink
    bool m_up{true};                   //!< link state
    bool m_txPaused{false};            //!< peer sent pause
    bool m_txEventPending{false};      //!< a TransmitComplete is scheduled
    uint8_t m_channelEnd{0};           //!< which end of m_channel this is (set by it)
    // the output port
    boost::circular_buffer<QueuedFrame> m_queuedFrames; //!< beside each queued packet
    Ptr<FabricChannel> m_channel;                       //!< the cable
    Ptr<Queue<Packet>> m_queue;                         //!< transmit queue
    Ptr<FabricRecurringEventBase> m_txDone;             //!< end of serialization (reused)
    Time m_txEnd;                                       //!< end of the current serialization
    TracedValue<uint32_t> m_queueBytes;                 //!< bytes in the transmit queue
    TxReadyCallback m_txReady;                          //!< the traffic source's pull
    FabricTxSource* m_txSource{nullptr};                //!< or this source's
    void* m_txCookie{nullptr};                          //!< its cookie for this port
    uint32_t m_nodeId{0};                               //!< owner's id
    uint16_t m_mtu{0};                                  //!< largest frame, header included
    uint32_t m_ecnThreshold{0};         //!< mark CE above this many queued bytes (0: off)
    uint32_t m_txTimeBytes{UINT32_MAX}; //!< frame size of the cached serialization time
    uint64_t m_bitRate{0};              //!< the line rate in bit/s
    uint64_t m_txTimeBase{0};           //!< its time steps, rounded down
    uint64_t m_txTimeBaseRem{0};        //!< and the remainder (bit-steps modulo the rate)
    uint64_t m_txCarry{0};              //!< remainder of serialization times (exact long-run rate)
    Ptr<Packet> m_txPacket;             //!< packet being serialized (only for PhyTxEnd)
    uint32_t m_portIndex{0};            //!< port index in the FabricNode
    Stats m_stats;                      //!< counters (those of every hop first, 256 bytes in)

    DataRate m_rate;          //!< line rate
    double m_stepsPerByte{0}; //!< time steps per byte at m_rate

    Ptr<Node> m_node;       //!< owner
    uint32_t m_ifIndex{0};  //!< interface index in the node
    bool m_nvlink{false};   //!< NVLink port
    Mac48Address m_address; //!< MAC address (for ns-3 APIs only)
    Time m_pausedSince;     //!< when the current pause began
    LossCallback m_loss;    //!< lost packets, for a transport
    NetDevice::ReceiveCallback m_rxCallback;
    NetDevice::PromiscReceiveCallback m_promiscCallback;
    // the packet traces of every hop: tested through m_traces
    FabricTracedCallback<Ptr<const Packet>> m_macTxTrace;
    FabricTracedCallback<Ptr<const Packet>> m_macRxTrace;
    FabricTracedCallback<Ptr<const Packet>> m_phyTxBeginTrace;
    FabricTracedCallback<Ptr<const Packet>> m_phyTxEndTrace;
    FabricTracedCallback<Ptr<const Packet>> m_snifferTrace;
    FabricTracedCallback<Ptr<const Packet>> m_promiscSnifferTrace;
    TracedCallback<Ptr<const Packet>> m_dropTrace;
    TracedCallback<Ptr<const Packet>> m_lossTrace;
    TracedCallback<bool> m_linkTrace;
    TracedCallback<bool> m_pfcTrace;
    TracedCallback<> m_linkChangeCallbacks;         //!< NetDevice::AddLinkChangeCallback
    Ptr<NetDeviceQueueInterface> m_queueInterface;  //!< traffic control's view, if aggregated
    const Queue<Packet>* m_interfaceQueue{nullptr}; //!< the queue it was connected to
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_NET_DEVICE_H
