/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_NET_DEVICE_H
#define GPU_FABRIC_FABRIC_NET_DEVICE_H

#include "fabric-header.h"
#include "fabric-traced-callback.h"

#include "ns3/data-rate.h"
#include "ns3/mac48-address.h"
#include "ns3/net-device-queue-interface.h"
#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/queue.h"
#include "ns3/traced-callback.h"

#include <boost/circular_buffer.hpp>
#include <deque>
#include <utility>

namespace ns3
{

class ErrorModel;
class UniformRandomVariable;
class FabricChannel;
class FabricNetDevice;
class FabricNode;
struct FabricRemoteEnvelope;
class FabricPrefetchingTxSource;
class FabricRecurringEventBase;

/**
 * \ingroup gpu-fabric
 * \brief A traffic source that a FabricNetDevice pulls packets from
 * (FabricNetDevice::SetTxSource), pacing it at line rate without timers.
 *
 * The port calls TxReady whenever it can take packets: after each end of
 * serialization while at most one packet waits in its queue, when a pause
 * ends, and when its link comes back up. The source then sends what it has
 * (FabricNetDevice::Enqueue or Send) and returns. PacketTransport is one.
 */
class FabricTxSource
{
  public:
    virtual ~FabricTxSource() = default;
    /**
     * The port can take packets.
     * \param port the port
     * \param cookie what the source gave SetTxSource for this port
     */
    virtual void TxReady(FabricNetDevice* port, void* cookie) = 0;

    /**
     * A packet of another GPU that the port's node relays (it arrived on
     * \p ingress) is offered to the source, which may serve it in its own
     * round robin beside the node's own traffic, as a NIC serves a relayed
     * queue pair beside its own (NCCL's PXN), instead of the port's FIFO
     * serving it ahead of what the source still holds. A source that takes
     * it hands it back with FabricNetDevice::EnqueueRelayed when its turn
     * comes; \p ingress stays charged until then.
     * \param port the port
     * \param cookie what the source gave SetTxSource for this port
     * \param p the packet
     * \param h its header
     * \param ingress the port it arrived on
     * \return true if the source took it (the default leaves it to the FIFO)
     */
    virtual bool TakeRelay(FabricNetDevice* /* port */,
                           void* /* cookie */,
                           const Ptr<Packet>& /* p */,
                           const FabricHeaderData& /* h */,
                           FabricNetDevice* /* ingress */)
    {
        return false;
    }

    /**
     * The port's link went down: hand back every relayed packet taken for
     * it (EnqueueRelayed then loses them with the link, as the FIFO's).
     * \param port the port
     * \param cookie what the source gave SetTxSource for this port
     */
    virtual void DropRelays(FabricNetDevice* /* port */, void* /* cookie */)
    {
    }
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
 *
 * Bit errors: a ReceiveErrorModel (any ns3::ErrorModel, as on
 * PointToPointNetDevice) decides for each arriving frame whether it is
 * corrupt; a corrupt frame has used the wire, is discarded (PhyRxDrop and
 * Lost traces, Stats::corrupted) and is reported to the loss callback, so a
 * transport resends it. FabricChannel's BitErrorRate sets one on both ends.
 */
class FabricNetDevice : public NetDevice
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    FabricNetDevice();
    ~FabricNetDevice() override;

    // the traces and the pull's prefetching point into the device
    FabricNetDevice(const FabricNetDevice&) = delete;
    FabricNetDevice& operator=(const FabricNetDevice&) = delete;

    /// \param rate the line rate (must be positive)
    void SetDataRate(DataRate rate);
    /// \return the line rate
    DataRate GetDataRate() const;

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

    /**
     * \param em the error model that decides which arriving frames are
     *        corrupt (discarded), or nullptr for none
     */
    void SetReceiveErrorModel(Ptr<ErrorModel> em);
    /// \return the receive error model, if any
    Ptr<ErrorModel> GetReceiveErrorModel() const;

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

    /**
     * Queue a relayed packet that this port's source took
     * (FabricTxSource::TakeRelay) and now serves; \p ingress was charged
     * when it was taken and is released when it leaves, as for Enqueue.
     * \param p the packet
     * \param h its header
     * \param ingress the port it arrived on
     * \param chargedBytes what \p ingress was charged (0: the packet's size);
     *        a packet the source grew meanwhile (telemetry added by a relay
     *        that runs congestion control) is charged the difference
     * \return false if it was dropped or lost (the link is down)
     */
    bool EnqueueRelayed(const Ptr<Packet>& p,
                        const FabricHeaderData& h,
                        FabricNetDevice* ingress,
                        uint32_t chargedBytes = 0);

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
     * Pull packets from \p source: its TxReady is called whenever this port
     * can take packets (see FabricTxSource).
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
     * Fix the random stream of this port's RED marking draws (made when
     * marking first draws), as ns-3 models' AssignStreams do: with it, the
     * draws do not depend on which port marks first, which a distributed
     * run changes (FabricHelper assigns every port of a partitioned fabric
     * its own).
     * \param stream the first stream index to use
     * \return the number of streams used (1)
     */
    int64_t AssignStreams(int64_t stream);

    /**
     * In a distributed run (FabricDistributed), a transport's word to this
     * device's node from another rank (FabricRemoteEnvelope::kTransport, the
     * envelope removed) is handed to \p cb; without one it is dropped.
     * \param cb the transport's handler
     */
    void SetRemoteTransportCallback(Callback<void, Ptr<Packet>> cb);

    /**
     * Send a transport's word to the node of device \p ifIndex of node \p node
     * on another rank, to arrive at \p arrival (at least the lookahead ahead).
     * \param p the word \param arrival when it arrives \param node the node id
     * \param ifIndex the device's interface index there
     */
    static void SendRemoteTransport(Ptr<Packet> p, Time arrival, uint32_t node, uint32_t ifIndex);

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
        return m_port.up;
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
        // the counters of every packet hop first (up to drops)
        uint64_t arrivals{0};          //!< packets whose last bit arrived (one event each)
        uint64_t rxPackets{0};         //!< packets received
        uint64_t rxBytes{0};           //!< bytes received
        uint64_t txPackets{0};         //!< packets serialized
        uint64_t txBytes{0};           //!< bytes serialized (headers included)
        uint64_t serializationEnds{0}; //!< ends of serialization scheduled as events
        uint32_t maxQueueBytes{0};     //!< high-water mark of the transmit queue
        uint64_t drops{0};             //!< packets dropped (queue full, or over the MTU in Send)
        uint64_t lost{0};       //!< packets lost to a down link (queued, on the wire, offered)
        uint64_t corrupted{0};  //!< packets the ReceiveErrorModel found corrupt (discarded)
        uint64_t ecnMarks{0};   //!< packets marked CE at enqueue
        uint64_t pausesSent{0}; //!< pause frames sent to the peer
        uint64_t pausesRecv{0}; //!< pause frames received from the peer
        Time pausedTime;        //!< total time this transmitter was paused
        uint64_t flowControlFrames{0}; //!< pause/resume frames that arrived (one event each)
        uint64_t controlPackets{0};    //!< control-class frames (ACK, CNP) serialized
    };

    /// \return the counters
    const Stats& GetStats() const;

    /// \return the owner if it is a FabricNode, else nullptr (cheap: no Ptr)
    FabricNode* GetFabricNode() const
    {
        return m_port.fabricNode;
    }

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
    friend class FabricChannel;   // the channel's entry points below
    friend class FabricDataPlane; // prefetch hooks (fabric-internal.h, not installed)

    // Called by the channel only.

    /**
     * The last bit of \p p has arrived.
     * \param p the packet
     * \param meta what the sender passed along with it
     * \param epoch this device's link epoch when \p p was sent
     */
    void Receive(const Ptr<Packet>& p, const FabricFrameMeta& meta, uint32_t epoch);
    /**
     * The peer asks this transmitter to pause/resume.
     * \param pause pause (true) or resume \param epoch the link epoch when sent
     */
    void ReceiveFlowControl(bool pause, uint32_t epoch);
    /**
     * A frame, PFC frame or transport word from another rank (FabricSendRemote).
     * \param envelope what it is \param p the frame or word (empty for PFC)
     */
    void ReceiveRemote(const FabricRemoteEnvelope& envelope, Ptr<Packet> p);

    // Called by the owning FabricNode (its canonical order of same-instant
    // arrivals, FabricNode::SetCanonicalTies).
    friend class FabricNode;
    /// Receive's work, in the node's order.
    void ReceiveNow(const Ptr<Packet>& p, const FabricFrameMeta& meta, uint32_t epoch);
    /// ReceiveFlowControl's work, in the node's order.
    void ReceiveFlowControlNow(bool pause, uint32_t epoch);
    /// Set the link state (queue flushed when going down); \return whether it changed
    bool ChangeLinkState(bool up);
    /// After a change: link-change callbacks, and a restart when up.
    void NotifyLinkChanged();
    /// \return the id of the owning node (cached; the channel schedules with it)
    uint32_t GetNodeId() const;
    /**
     * The link's state changes so far (each down and each up adds one). A
     * frame carries the receiver's count from when it was sent: if the count
     * differs on arrival, the link went down meanwhile and the frame was lost
     * with it, however short the outage.
     * \return the count
     */
    uint32_t GetLinkEpoch() const;

    /// What the device keeps beside each packet of its Queue<Packet>.
    struct QueuedFrame
    {
        FabricFrameMeta meta;              //!< travels with the packet to the next node
        FabricNetDevice* ingress{nullptr}; //!< input port charged for it, or nullptr
    };

    /// Queue \p p; \p charged: its ingress was charged already (a relay
    /// the source held).
    bool DoEnqueue(const Ptr<Packet>& p, const QueuedFrame& frame, bool charged = false);
    /// A frame that arrived is lost on the wire or corrupt: counted, traced,
    /// reported; \return true if so (then it is gone)
    bool DropOnArrival(const Ptr<Packet>& p, uint32_t epoch);
    /// A frame for a plain ns-3 node: strip its Ethernet II header, hand it up.
    void ReceiveOnPlainNode(const Ptr<Packet>& p);
    /// Send()'s destination as a MAC address (the peer's if \p dest is none).
    Mac48Address DestinationMac(const Address& dest) const;
    void EnsureQueue();
    /// Connect the aggregated NetDeviceQueueInterface (if any) to the queue (if any).
    void ConnectQueueInterface();
    /// Let the traffic source pull, if there is one.
    void NotifyTxReady();
    /// \param bytes the transmit queue's new byte count (QueueBytes trace)
    void SetQueueBytes(uint32_t bytes);
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

    // attribute accessors of fields kept with the data path's
    void SetPfcEnabled(bool enabled);
    bool GetPfcEnabled() const;
    void SetPfcXoff(uint32_t bytes);
    uint32_t GetPfcXoff() const;
    void SetPfcXon(uint32_t bytes);
    uint32_t GetPfcXon() const;
    void SetEcnThreshold(uint32_t bytes);
    uint32_t GetEcnThreshold() const;
    void SetIntEnabled(bool enabled);
    bool GetIntEnabled() const;
    /// Append this egress's INT record to \p p (it carries a FabricIntHeader).
    void AppendIntHop(const Ptr<Packet>& p, Time now);
    void SetEcnKmin(uint32_t bytes);
    uint32_t GetEcnKmin() const;
    void SetEcnKmax(uint32_t bytes);
    uint32_t GetEcnKmax() const;
    void SetEcnPmax(double p);
    double GetEcnPmax() const;
    /// \return whether a data frame entering a queue of \p queued bytes is marked CE
    bool EcnMarks(uint32_t queued);
    /// Queue (or send at once) a control-class frame: ahead of data, never
    /// paused, never charged to an input port. \return false if lost (link down)
    bool EnqueueControl(const Ptr<Packet>& p, const FabricFrameMeta& meta);

    /// Bits of Port::traces: which traces of every packet have a sink.
    enum TraceBit : uint8_t
    {
        kTraceMacTx = 1,
        kTraceMacRx = 2,
        kTracePhyTxBegin = 4,
        kTracePhyTxEnd = 8,
        kTraceSniffer = 16,
        kTracePromiscSniffer = 32,
        kTraceQueueBytes = 64,
    };

    /// Bits of Port::rxChecks: what an arriving frame must be checked for.
    enum RxCheckBit : uint8_t
    {
        kRxCheckEpoch = 1,  //!< the link has been down: frames may be lost on the wire
        kRxCheckErrors = 2, //!< a ReceiveErrorModel is set
    };

    /**
     * What a packet hop reads, grouped by the role the port plays (a large
     * run keeps thousands of ports, and a hop finds them cold): the input
     * side's fields and the flags both sides test (with the Object's own
     * fields, one cache line), the transmitter, then the counters of every
     * hop. The prefetch hooks (FabricDataPlane) take their ranges from this
     * struct's offsets, so it is kept standard-layout (checked).
     */
    struct Port
    {
        // the input side and the flags
        FabricNode* fabricNode{nullptr}; //!< owner as a FabricNode, if it is one
        uint32_t ingressBytes{0};        //!< bytes from this port buffered in the node
        uint32_t pfcXoff{0};             //!< pause threshold, bytes
        uint32_t pfcXon{0};              //!< resume threshold, bytes
        uint32_t linkEpoch{0};           //!< link state changes so far (GetLinkEpoch)
        uint8_t rxChecks{0};             //!< RxCheckBit of what arrivals are checked for
        bool pfcEnabled{true};           //!< send pause frames
        bool peerPaused{false};          //!< we have paused the peer
        uint8_t traces{0};               //!< TraceBit of each packet trace with a sink
        bool up{true};                   //!< link state
        bool txPaused{false};            //!< peer sent pause
        bool txEventPending{false};      //!< a TransmitComplete is scheduled
        uint8_t channelEnd{0};           //!< which end of the channel this is (set by it)
        uint32_t controlQueued{0};       //!< control-class frames waiting (served first)
        bool intEnabled{false};          //!< append INT hops (a switch port)
        bool deferTies{false};           //!< arrivals wait for the node's canonical order
        // the transmitter
        boost::circular_buffer<QueuedFrame> queuedFrames; //!< beside each queued packet
        Ptr<FabricChannel> channel;                       //!< the cable
        Ptr<Queue<Packet>> queue;                         //!< transmit queue
        Ptr<FabricRecurringEventBase> txDone;             //!< end of serialization (reused)
        Time txEnd;                                       //!< end of the current serialization
        uint32_t queueBytes{0};                           //!< bytes in the transmit queue
        FabricTxSource* txSource{nullptr};                //!< the traffic source's pull
        void* txCookie{nullptr};                          //!< its cookie for this port
        /// the source's prefetching, if it has one (fabric-internal.h)
        const FabricPrefetchingTxSource* txPrefetch{nullptr};
        uint32_t nodeId{0};               //!< owner's id
        uint16_t mtu{0};                  //!< largest frame, header included
        uint32_t ecnThreshold{0};         //!< mark CE above this many queued bytes (0: off)
        uint32_t ecnKmin{0};              //!< RED marking: no mark at or below, bytes
        uint32_t ecnKmax{0};              //!< RED marking: always above (0: RED off), bytes
        double ecnPmax{0};                //!< RED marking: probability at Kmax
        uint32_t txTimeBytes{UINT32_MAX}; //!< frame size of the cached serialization time
        uint64_t bitRate{0};              //!< the line rate in bit/s
        uint64_t txTimeBase{0};           //!< its time steps, rounded down
        uint64_t txTimeBaseRem{0};        //!< and the remainder (bit-steps modulo the rate)
        uint64_t txCarry{0};   //!< remainder of serialization times (exact long-run rate)
        Ptr<Packet> txPacket;  //!< packet being serialized (only for PhyTxEnd)
        uint32_t portIndex{0}; //!< port index in the FabricNode
        // the counters, those of every hop first
        Stats stats; //!< counters
    };

    Port m_port; //!< what a packet hop reads

    DataRate m_rate;          //!< line rate
    double m_stepsPerByte{0}; //!< time steps per byte at m_rate

    Ptr<Node> m_node;                              //!< owner
    uint32_t m_ifIndex{0};                         //!< interface index in the node
    bool m_nvlink{false};                          //!< NVLink port
    Mac48Address m_address;                        //!< MAC address (for ns-3 APIs only)
    Time m_pausedSince;                            //!< when the current pause began
    LossCallback m_loss;                           //!< lost packets, for a transport
    Callback<void, Ptr<Packet>> m_remoteTransport; //!< transport words from other ranks
    Ptr<ErrorModel> m_receiveErrorModel;           //!< which arriving frames are corrupt, if set
    /// control-class frames waiting, first in first out (Port::controlQueued counts them)
    std::deque<std::pair<Ptr<Packet>, FabricFrameMeta>> m_control;
    Ptr<UniformRandomVariable> m_ecnRandom; //!< RED marking draws (created when RED is on)
    int64_t m_ecnStream{-1};                //!< its stream (AssignStreams; -1: automatic)
    NetDevice::ReceiveCallback m_rxCallback;
    NetDevice::PromiscReceiveCallback m_promiscCallback;
    // the traces of every packet: tested through Port::traces
    FabricTracedCallback<Ptr<const Packet>> m_macTxTrace;
    FabricTracedCallback<Ptr<const Packet>> m_macRxTrace;
    FabricTracedCallback<Ptr<const Packet>> m_phyTxBeginTrace;
    FabricTracedCallback<Ptr<const Packet>> m_phyTxEndTrace;
    FabricTracedCallback<Ptr<const Packet>> m_snifferTrace;
    FabricTracedCallback<Ptr<const Packet>> m_promiscSnifferTrace;
    FabricTracedCallback<uint32_t, uint32_t> m_queueBytesTrace; //!< old and new byte count
    TracedCallback<Ptr<const Packet>> m_dropTrace;
    TracedCallback<Ptr<const Packet>> m_lossTrace;
    TracedCallback<Ptr<const Packet>> m_phyRxDropTrace;
    TracedCallback<bool> m_linkTrace;
    TracedCallback<bool> m_pfcTrace;
    TracedCallback<> m_linkChangeCallbacks;         //!< NetDevice::AddLinkChangeCallback
    Ptr<NetDeviceQueueInterface> m_queueInterface;  //!< traffic control's view, if aggregated
    const Queue<Packet>* m_interfaceQueue{nullptr}; //!< the queue it was connected to
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_NET_DEVICE_H
