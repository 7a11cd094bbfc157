/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_NODE_H
#define GPU_FABRIC_FABRIC_NODE_H

#include "fabric-header.h"
#include "fabric-net-device.h"

#include "ns3/fabric-routing-table.h"
#include "ns3/node.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

namespace ns3
{

class FabricRecurringEventBase;

/**
 * \ingroup gpu-fabric
 * \brief A node of the fabric (GPU or switch): numbered FabricNetDevice
 * ports and a forwarding table, with ECMP over equal-cost ports.
 *
 * ECMP picks a port with a deterministic hash of (source, destination, flow
 * label) salted per node, so that a flow keeps one path (no reordering) and
 * successive tiers do not make correlated choices. Other load balancing
 * (SetLoadBalancing; a FabricSwitch attribute) chooses among the same
 * equal-cost ports per packet, per flowlet or by queue length.
 */
class FabricNode : public Node
{
  public:
    /// How a packet's port is chosen among its destination's equal-cost ports.
    enum LoadBalancing : uint8_t
    {
        kEcmp = 0,     //!< per flow: hash of (source, destination, flow label)
        kSpray = 1,    //!< per packet: the ports in turn
        kFlowlet = 2,  //!< per flowlet: a new hashed port after an idle gap (LetFlow)
        kAdaptive = 3, //!< per packet: the port with the fewest queued bytes
    };

    /**
     * \param mode how to choose among equal-cost ports
     * \param flowletGap with kFlowlet: the idle time that starts a new flowlet
     */
    void SetLoadBalancing(LoadBalancing mode, Time flowletGap);
    /// \return how this node chooses among equal-cost ports
    LoadBalancing GetLoadBalancing() const;
    /// \param entries most flows the flowlet table holds (at least 1); when
    ///        full, the flow seen least recently is forgotten
    void SetFlowletTableSize(uint32_t entries);
    /// \return flows the flowlet table holds
    uint32_t GetFlowletCount() const;
    /// \param h a packet's header \return whether its flow is in the flowlet table
    bool HasFlowlet(const FabricHeaderData& h) const;

    /// \return the TypeId
    static TypeId GetTypeId();
    FabricNode();
    ~FabricNode() override;

    /**
     * Add a port: the device is added to the node and numbered.
     * \param device the port
     * \return its port index
     */
    virtual uint32_t AddPort(Ptr<FabricNetDevice> device);
    /**
     * In a distributed run, add to this node of another rank the device at
     * its end of a cable that reaches this rank: it stands in for the port
     * \p port there (the frames sent to it cross to that rank, addressed by
     * the port's interface index there). It is not one of this node's ports
     * here (GetNPorts counts the ports it forwards on).
     * \param device the device \param port its port index on the node's rank
     */
    void AddStandIn(Ptr<FabricNetDevice> device, uint32_t port);
    /// \return number of ports
    uint32_t GetNPorts() const;
    /// \param i port index \return the port
    Ptr<FabricNetDevice> GetPort(uint32_t i) const;

    /// \param salt ECMP salt (FabricHelper uses VertexSalt of the topology vertex)
    void SetEcmpSalt(uint32_t salt);

    /// \param routes the fabric's explicit routes (shared by its nodes)
    void SetSourceRoutes(std::shared_ptr<const FabricSourceRoutes> routes);

    /// \param table the forwarding table
    void SetRoutingTable(FabricRoutingTable table);
    /// \return the forwarding table
    const FabricRoutingTable& GetRoutingTable() const;

    /**
     * Output port for a packet of the given flow, or nullptr without route.
     * \param h the packet's header
     * \return the port
     */
    FabricNetDevice* SelectPort(const FabricHeaderData& h) const;

    /**
     * Called by a port for every received packet.
     * \param port the input port
     * \param p the packet
     * \param h its header as the previous hop passed it along, or nullptr
     *        (then it is read from the packet)
     */
    void ReceiveFromPort(FabricNetDevice* port, const Ptr<Packet>& p, const FabricHeaderData* h);

    /// \return packets dropped for lack of a route (on a GPU, also those it
    ///         refused to relay)
    uint64_t GetNoRouteDrops() const;

    /// \param cb called with every packet this node drops (no route, refused relay)
    void SetLossCallback(FabricNetDevice::LossCallback cb);

    /**
     * Handle the frames (and PFC frames) that arrive at the same instant in
     * a canonical order: by port index, PFC frames of a port before its data,
     * each port's in order, after every other event of that instant already
     * due (one more event per instant with arrivals). ns-3 orders events of
     * one instant by when they were scheduled, which a distributed run
     * cannot reproduce for frames from another rank; with this order on, a
     * run gives the same results on any number of ranks (FabricHelper turns
     * it on for a partitioned fabric). Off by default: ns-3's order, and no
     * extra event. The attribute CanonicalTies.
     * \param on the order on or off
     */
    void SetCanonicalTies(bool on);
    /// \return whether same-instant arrivals are handled in the canonical order
    bool GetCanonicalTies() const;

    /// What takes a note (Transport::SendNote): sink serial and cookie.
    typedef Callback<void, uint64_t, uint64_t> NoteCallback;
    /**
     * Take a note for this node now: at once, or, with canonical ties, after
     * the instant's frames, notes of one instant in (sink, cookie) order
     * (the order they were sent in differs between a distributed run and
     * one process).
     * \param sink the note's sink serial \param cookie its cookie
     * \param take what takes it
     */
    void TakeNote(uint64_t sink, uint64_t cookie, const NoteCallback& take);

  protected:
    /**
     * Handle a received packet whose header has been read.
     * \param port input port \param p packet \param h its header
     */
    virtual void HandlePacket(FabricNetDevice* port,
                              const Ptr<Packet>& p,
                              const FabricHeaderData& h) = 0;

    /**
     * Forward toward h.dst through the routing table.
     * \param port input port (charged for flow control)
     * \param p packet \param h its header
     * \return true if an output port took it, false if it was dropped (no
     *         route, or the port's queue full or its link down)
     */
    bool Forward(FabricNetDevice* port, const Ptr<Packet>& p, const FabricHeaderData& h);

    void DoDispose() override;

    /**
     * Count and trace a packet dropped for lack of a route.
     * \param p the packet
     * \param notifyLoss also report it to the loss callback (a transport's
     *        packet, which it may resend)
     */
    void DropUnroutable(const Ptr<Packet>& p, bool notifyLoss);

    /// Report a packet this node dropped to the loss callback.
    /// \param p the packet
    void NotifyLoss(Ptr<const Packet> p) const;

  private:
    friend class FabricDataPlane; // prefetch hooks (fabric-internal.h, not installed)
    friend class FabricNetDevice; // its arrivals wait here for the canonical order

    /// An arrival waiting for the end of its instant (SetCanonicalTies).
    struct Deferred
    {
        uint32_t port;        //!< its port's index
        bool data;            //!< a frame (else a PFC frame, handled first)
        FabricNetDevice* dev; //!< the port
        Ptr<Packet> packet;   //!< the frame
        FabricFrameMeta meta; //!< beside it
        uint32_t epoch;       //!< the port's link epoch when sent
        bool pause;           //!< PFC: pause (else resume)
        uint64_t sink{0};     //!< a note (port kNotePort): its sink serial
        uint64_t cookie{0};   //!< a note: its cookie
        NoteCallback take{};  //!< a note: what takes it
    };

    /// The port index of notes: after every port's frames.
    static constexpr uint32_t kNotePort = ~0U;

    /// Keep a frame for the end of this instant.
    void Defer(FabricNetDevice* port,
               const Ptr<Packet>& p,
               const FabricFrameMeta& meta,
               uint32_t epoch);
    /// Keep a PFC frame for the end of this instant.
    void DeferFlowControl(FabricNetDevice* port, bool pause, uint32_t epoch);
    /// Handle the instant's arrivals in the canonical order.
    void FlushDeferred();

    std::vector<Deferred> m_deferred;      //!< this instant's arrivals, in arrival order
    std::vector<Deferred> m_flushing;      //!< FlushDeferred's batch (kept for its capacity)
    Ptr<FabricRecurringEventBase> m_flush; //!< FlushDeferred, one reusable event
    bool m_canonicalTies{false};           //!< SetCanonicalTies

    /**
     * What SelectPort() picks, as a port index (inline in fabric-node.cc,
     * its only user: the data plane's hot path).
     * \param h the packet's header
     * \return the port index, or UINT32_MAX without route
     */
    uint32_t SelectPortIndex(const FabricHeaderData& h) const;

    /// What a forward reads of the node (prefetched as one).
    struct Forwarding
    {
        std::vector<Ptr<FabricNetDevice>> ports;                //!< ports by index
        FabricRoutingTable table;                               //!< destination -> ports
        std::shared_ptr<const FabricSourceRoutes> sourceRoutes; //!< explicit routes
        uint32_t salt{0};                                       //!< ECMP salt (from the node id)
        LoadBalancing lb{kEcmp};                                //!< how ports are chosen
    };

    /// A flowlet's port and when its last packet passed.
    struct Flowlet
    {
        Time last;                          //!< last packet
        uint32_t port{0};                   //!< its port index
        uint32_t count{0};                  //!< flowlets of this flow so far (the hash's salt)
        std::list<uint64_t>::iterator used; //!< its place in Balancer::byUse
    };

    /// What load balancing other than ECMP remembers (changed by const SelectPort).
    struct Balancer
    {
        std::vector<uint32_t> next;                  //!< kSpray: the next turn, by destination
        Time gap;                                    //!< kFlowlet: idle gap
        std::unordered_map<uint64_t, Flowlet> flows; //!< kFlowlet: by flow
        std::list<uint64_t> byUse;                   //!< kFlowlet: flows, least recent first
        uint32_t capacity{65536};                    //!< kFlowlet: most flows held
    };

    /// The port index of a packet under load balancing other than ECMP.
    uint32_t SelectBalanced(const FabricHeaderData& h, uint32_t n) const;

    FabricNetDevice::LossCallback m_loss;             //!< dropped packets
    Forwarding m_fwd;                                 //!< what a forward reads
    mutable Balancer m_balance;                       //!< load balancing's state
    uint64_t m_noRouteDrops{0};                       //!< packets without route
    TracedCallback<Ptr<const Packet>> m_noRouteTrace; //!< dropped: no route
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_NODE_H
