/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FLOW_TRANSPORT_H
#define GPU_FABRIC_FLOW_TRANSPORT_H

#include "transport.h"

#include "ns3/event-id.h"
#include "ns3/fabric-routing-table.h"
#include "ns3/fabric-topology.h"
#include "ns3/traced-callback.h"

#include <map>
#include <memory>
#include <queue>
#include <unordered_map>
#include <vector>

namespace ns3
{

class FlowWaterFill;

/**
 * \ingroup gpu-fabric
 * \brief Flow-level (fluid) backend: every message is one flow on its routed
 * path, and the flows share link capacities max-min fairly.
 *
 * <b>Links.</b> Each direction of a cable is a link whose capacity is its
 * rate. A GPU with two or more NVLink ports (NVSwitch planes) also has two
 * aggregated links, "NVLink out" and "NVLink in", whose capacity is the sum
 * of its planes.
 *
 * <b>Paths.</b> The path of a message is the one its packets would take at
 * the packet level: message ids are allocated like PacketTransport's (a
 * last-in first-out free list), the flow label is
 * FabricEcmpHash(src, dst, id, 0x6d) truncated to 16 bits, and every
 * hop picks among the equal-cost ports of the routing table with the same
 * salted hash as TracePath. A message whose first hops are all NVLink ports
 * (2 or more planes, attribute StripeNvLink) is striped over the planes at
 * the packet level; here it is one flow on the sender's aggregated NVLink-out
 * link and the aggregated NVLink-in link of the GPU the planes lead to (the
 * destination, or the relay GPU of rail-only forwarding), then on the single
 * path from that GPU. A message striped to a GPU of the domain is cut into packets
 * as the packet level cuts it (PacketPayload: a packet per plane when it has
 * less than a full one per plane); these are not split further: the sender's planes are dealt
 * all its striped packets round-robin (every message and connection), and
 * from the instant its NVLink-out link gets a striped flow until it has
 * none, K packets keep the busiest plane busy for about ceil(K / P) packet
 * times, more than the fluid's K / P. The message whose fluid part ends
 * last in such a period is delivered no earlier than that: its latency gets
 * the difference between the busiest plane's end (partial last packet
 * included) and its fluid end, if positive; its rate, and so what it leaves
 * to others, stays the fluid's. One message alone thus takes the packet
 * level's time up to rounding, while many concurrent ones (an all-to-all)
 * get the small imbalance of all their packets together. Only for messages
 * striped within a domain, with StoreAndForward. This assumes the planes
 * are single-tier NVSwitches, as every builder makes them, and that
 * striping balances the planes. A non-striped flow over one plane uses that
 * plane's link and the GPU's aggregated link, so both kinds of traffic share
 * NVLink correctly.
 *
 * <b>Routes.</b> With routing tables (Setup with tables) the next hops are
 * read from them. Without (the scale path), the equal-cost next hops are
 * derived on demand from hop distances toward the set of switches the
 * destination is attached to (one breadth-first search per distinct set, for
 * example per leaf), with the HB-domain and rail-relay rules of
 * ComputeRoutingTables; this yields exactly the same port lists, in the same
 * order, without the tables' N^2 memory. Topologies where GPUs carry transit
 * traffic (direct-connect) or whose NVSwitch planes are not single-tier fall
 * back to full routing tables.
 *
 * <b>Rates: progressive filling (water-filling).</b> All unfrozen flows grow
 * at the same pace; the link whose fair share (remaining capacity / unfrozen
 * flows) is smallest saturates first and freezes its flows at that share;
 * its capacity is subtracted from the other links of those flows; repeat.
 * Implemented with a lazy binary heap of links keyed by fair share (a
 * link's entry is a lower bound of its share, re-keyed only when it reaches
 * the top): O(F h + (L + R) log L) for F flows of h hops over L links with R
 * re-entries, in exactly the order of a heap re-keyed at every change.
 *
 * <b>Incremental recomputation.</b> Max-min rates of flows that share no link,
 * directly or through a chain of flows, are independent. When flows start or
 * end, their links are marked dirty; one recomputation per simulated instant
 * (an event scheduled at the current time, so that the many flows a
 * collective starts at once are handled together) collects the connected
 * component of the flow-link graph reachable from the dirty links, and
 * water-fills that component only. Flows elsewhere keep their rates and
 * their completion events.
 *
 * <b>Bytes and time.</b> A flow carries its wire bytes: payload plus
 * PacketOverhead bytes for each packet of at most PacketPayload bytes
 * (26 per 4096 by default, the packet level's FabricHeader), so that large
 * transfers take the packet level's time. The fluid part of a flow ends when
 * its wire bytes have drained at its (changing) rate; it then leaves its
 * links, and the message is delivered after the path latency
 *   L = sum_i d_i + [StoreAndForward] (sum_i S / r_i - S / min_i r_i),
 * where d_i and r_i are the propagation delay and rate of hop i (for a
 * striped message, the hops of the first plane), and S the wire size of the
 * message's first packet (min(bytes, payload) + PacketOverhead, where the
 * payload is PacketPayload, or less for a message striped to a GPU of its
 * domain with less than a full packet per plane: PacketPayload() in
 * transport.h, as at the packet level). For one
 * uncontended message of full packets this is the packet level's
 * store-and-forward pipeline exactly: the first packet's trip across every
 * hop, then the other packets at the slowest hop. Completions are ns-3 events:
 * the earliest fluid end over all flows (a binary heap with lazy
 * invalidation) has one event, cancelled and rescheduled when rates change.
 *
 * <b>Connections.</b> As at the packet level, where the messages from one GPU
 * to one destination form a connection (a queue pair) served first in, first
 * out, messages of a (source, destination) pair are sent one after the other
 * (attribute ConnectionFifo, default): a message sent while an earlier one
 * of its pair is still flowing waits, and starts the instant the earlier
 * one's last byte leaves (its packets follow back to back). So a pipelined
 * collective's chunks arrive one after another, as on the wire, instead of
 * all together at the end; connections share links max-min fairly. A fluid
 * end is rounded up to a time step; the next message starts with the bytes
 * its predecessor's rate would have moved in the rest of that step already
 * sent (passed on through messages smaller than that; none to a message sent
 * in that very step), so that back-to-back messages do not lose up to a step
 * each. On one path (not striped) a connection delivers in order, as packets
 * on one path cannot overtake each other.
 * Same inputs give bit-identical outputs: every container is walked in an
 * order fixed by the inputs (no pointer-keyed or unordered iteration).
 */
class FlowTransport : public Transport
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    FlowTransport();
    ~FlowTransport() override;

    /**
     * Serve the GPUs of a topology, deriving routes on demand (no N^2
     * routing tables); falls back to ComputeRoutingTables where needed.
     * \param topo the topology (read during the call only)
     */
    void Setup(const FabricTopology& topo);

    /**
     * Serve the GPUs of a topology with given routing tables (those of
     * ComputeRoutingTables / Fabric::GetRoutingTables).
     * \param topo the topology (read during the call only)
     * \param tables one table per vertex
     */
    void Setup(const FabricTopology& topo, std::vector<FabricRoutingTable> tables);

    uint32_t GetNRanks() const override;
    Totals GetTotals() const override;

    /// \return true if routes come from full tables, false if derived on demand
    bool UsesRoutingTables() const;

    /**
     * Current max-min rate of a message in flight.
     * \param id the id Send returned
     * \return its rate in wire bits per second (0 if not flowing)
     */
    double GetRateBps(uint64_t id) const;

    /**
     * The links of a message in flight (the first hop first).
     * \param id the id Send returned
     * \return link indices, see GetLinkName
     */
    std::vector<uint32_t> GetFlowLinks(uint64_t id) const;

    /// \param link a link index \return a readable name, e.g. "v3->v40" or "nvlink-out(gpu3)"
    std::string GetLinkName(uint32_t link) const;

    /// \return number of links (cable directions plus aggregated NVLink links)
    uint32_t GetNLinks() const;

    /// \param link a link index \return what it is (an aggregated NVLink link: NvLink)
    TopoLinkKind GetLinkKind(uint32_t link) const;

    /// \param link a link index \return its capacity, bits per second
    double GetLinkCapacityBps(uint32_t link) const;

    /// \param link a link index \return the sum of its flows' rates now, bits per second
    double GetLinkRateBps(uint32_t link) const;

    /**
     * Signature of the LinkRate trace: a link's rate (the sum of its flows'
     * rates, bits per second) changed to \p bps at this instant.
     * \param link the link \param bps the new rate
     */
    typedef void (*LinkRateTracedCallback)(uint32_t link, double bps);

    /// Counters of the fluid engine.
    struct Stats
    {
        uint64_t flows{0};           //!< flows started (messages that crossed the fabric)
        uint64_t activeFlows{0};     //!< flows on links now
        uint64_t peakActiveFlows{0}; //!< most flows on links at once
        uint64_t recomputations{0};  //!< water-filling runs (one per component)
        uint64_t flowsRecomputed{0}; //!< sum over runs of the flows in the component
        uint64_t linksRecomputed{0}; //!< sum over runs of the links in the component
        uint64_t distanceFields{0};  //!< breadth-first searches done for routes
        uint64_t queuedMessages{0};  //!< messages that waited behind their connection
    };

    /// \return the counters
    Stats GetStats() const;

    /// Signature of the MessageComplete trace: src, dst, bytes, send time.
    typedef void (*MessageCompleteTracedCallback)(uint32_t, uint32_t, uint64_t, Time);

  protected:
    void DoDispose() override;

  private:
    /// No message (end of a connection's queue).
    static constexpr uint32_t kNoFlow = 0xffffffffU;

    /// A connection's queue: the flowing message and the last one queued.
    struct Connection
    {
        uint32_t head{kNoFlow};   //!< flowing message, or none
        uint32_t tail{kNoFlow};   //!< last queued message
        uint32_t lastId{kNoFlow}; //!< idle: the last message, off the links, not yet delivered
        int64_t lastDelivery{0};  //!< its delivery (time step)
    };

    /// One message.
    struct Flow
    {
        uint32_t src{0};
        uint32_t dst{0};
        uint64_t bytes{0};
        double remaining{0};    //!< wire bytes left at lastUpdate
        double rate{0};         //!< wire bytes per second
        int64_t lastUpdate{0};  //!< time step of the last remaining/rate update
        int64_t latency{0};     //!< time steps from fluid end to delivery
        uint32_t planes{0};     //!< striped within a domain over this many planes (0: not)
        uint32_t payload{0};    //!< payload bytes per packet (PacketPayload())
        double planeRate{0};    //!< rate of one plane, wire bytes per second
        uint32_t version{0};    //!< completion heap entries with another version are stale
        uint32_t mark{0};       //!< recomputation epoch it was last visited in
        bool onLinks{false};    //!< in the link lists
        uint32_t next{kNoFlow}; //!< the next message queued on its connection
        double carry{0};        //!< wire bytes of credit left from its predecessor's last step
        int64_t notBefore{0};   //!< one path: its predecessor's delivery (time step)
        Time start;
        Delivery delivery;
        std::vector<uint32_t> links; //!< links crossed
        std::vector<uint32_t> pos;   //!< index in each link's flow list
    };

    /// A completion heap entry (earliest first).
    struct Completion
    {
        int64_t time;
        uint32_t id;
        uint32_t version;

        bool operator>(const Completion& o) const
        {
            return time != o.time ? time > o.time : id > o.id;
        }
    };

    void BuildLinks(const FabricTopology& topo);
    void Route(uint32_t id, uint16_t flowLabel);
    void NextHops(uint32_t v, uint32_t dstRank, std::vector<uint32_t>& edges);
    void TableNextHops(uint32_t v, uint32_t dstRank, std::vector<uint32_t>& edges) const;
    void OracleNextHops(uint32_t v, uint32_t dstRank, std::vector<uint32_t>& edges);
    void DomainNextHops(uint32_t v, uint32_t target, std::vector<uint32_t>& edges) const;
    uint32_t Dist(uint32_t v, uint32_t dstRank);
    const std::vector<uint8_t>& Field(uint32_t dstRank);
    uint32_t EdgeTo(uint32_t from, uint32_t to) const;

    void MarkDirty(uint32_t link);
    void Recompute();
    void WaterFill(size_t linkBegin, size_t flowBegin);
    void FluidEvent();
    void ScheduleNextFluidEnd();
    void Complete(uint32_t id);
    /// At \p f's fluid end (\p now, steps): takes it out of its sender's
    /// period of striped traffic; \return how much later than the fluid the
    /// period's packets leave the planes (time steps; 0 unless it ends it)
    int64_t StripeImbalance(const Flow& f, int64_t now);
    /// \p after follows \p before (delivered at step \p deliveredAt) on a
    /// connection: on one path it is delivered no earlier
    static void InOrder(const Flow& before, int64_t deliveredAt, Flow& after);
    uint64_t DoSend(uint32_t srcRank, uint32_t dstRank, uint64_t bytes, Delivery delivery) override;
    void StartFlow(uint32_t id);

    /// \return packets of \p f (of f.payload bytes, the last shorter)
    static uint64_t Packets(const Flow& f)
    {
        return (f.bytes + f.payload - 1) / f.payload;
    }

    /// \return \p f's bytes with PacketOverhead for each of its packets
    uint64_t WireBytes(const Flow& f) const
    {
        return f.bytes + Packets(f) * m_overhead;
    }

    static uint64_t ConnectionKey(uint32_t src, uint32_t dst)
    {
        return (static_cast<uint64_t>(src) << 32) | dst;
    }

    void RemoveFromLinks(uint32_t id);
    int64_t NowSteps() const;

    // ---- topology, flattened ----
    uint32_t m_nRanks{0};
    uint32_t m_k{0}; //!< HB domain size
    bool m_railRelay{false};
    std::vector<uint32_t> m_gpuVertex;  //!< rank -> vertex
    std::vector<uint8_t> m_kind;        //!< vertex -> TopoNodeKind
    std::vector<int32_t> m_domain;      //!< vertex -> HB domain
    std::vector<uint32_t> m_rank;       //!< vertex -> rank (GPUs)
    std::vector<uint32_t> m_outBegin;   //!< vertex -> first out-edge (CSR, size V+1)
    std::vector<uint32_t> m_edgeTarget; //!< edge -> target vertex (edges = links 0..E-1)
    std::vector<uint32_t> m_edgeSource; //!< edge -> source vertex
    std::vector<uint16_t> m_edgePort;   //!< edge -> source port
    std::vector<uint8_t> m_edgeNvLink;  //!< edge -> is NVLink
    std::vector<int64_t> m_edgeDelayNs; //!< edge -> propagation delay
    std::vector<uint32_t> m_portEdge;   //!< (vertex offset + port) -> out-edge, or none
    std::vector<uint32_t> m_portBegin;  //!< vertex -> offset in m_portEdge
    std::vector<uint32_t> m_local;      //!< vertex -> index in its HB domain
    std::vector<uint32_t> m_inBegin;    //!< vertex -> first in-edge (CSR, size V+1)
    std::vector<uint32_t> m_inEdges;    //!< in-edges by target vertex
    std::vector<uint32_t> m_aggOut;     //!< GPU vertex -> aggregated NVLink-out link or none
    std::vector<uint32_t> m_aggIn;      //!< GPU vertex -> aggregated NVLink-in link or none
    uint32_t m_nEdges{0};

    // ---- routes ----
    bool m_useTables{false};
    std::vector<FabricRoutingTable> m_tables;
    std::vector<uint32_t> m_switchIndex;                  //!< vertex -> index among switches
    uint32_t m_nSwitches{0};                              //!< network switches
    std::vector<int32_t> m_fieldOfRank;                   //!< rank -> distance field, -1 none
    std::vector<std::vector<uint8_t>> m_fields;           //!< per attachment set
    std::map<std::vector<uint32_t>, int32_t> m_fieldKeys; //!< attachment set -> field
    std::vector<uint32_t> m_hops;                         //!< scratch
    std::vector<uint32_t> m_hops2;                        //!< scratch
    /// per link (a GPU's NVLink-out): striped flows on it, and since when
    /// and with how many packets and wire bytes it has had some (StripeImbalance)
    std::vector<uint32_t> m_stripedFlows;
    std::vector<int64_t> m_stripedSince;
    std::vector<uint64_t> m_stripedPackets;
    std::vector<uint64_t> m_stripedWireBytes;
    std::vector<uint32_t> m_queue; //!< scratch

    // ---- links and flows ----
    std::vector<double> m_capacity;                 //!< link -> bytes per second
    std::vector<std::vector<uint32_t>> m_linkFlows; //!< link -> flows on it
    std::vector<uint32_t> m_linkMark;               //!< link -> epoch visited
    std::vector<uint32_t> m_dirty;                  //!< links changed since the last run
    std::vector<Flow> m_flows;                      //!< by id
    MessageIdPool m_ids;                            //!< as PacketTransport's
    std::vector<uint32_t> m_compFlows;              //!< scratch
    std::vector<uint32_t> m_compLinks;              //!< scratch
    std::vector<double> m_newRate;                  //!< flow -> rate of this run
    std::unique_ptr<FlowWaterFill> m_fill;          //!< max-min rates of a component
    uint32_t m_epoch{0};
    std::priority_queue<Completion, std::vector<Completion>, std::greater<Completion>> m_heap;
    EventId m_recomputeEvent;
    EventId m_fluidEvent;
    int64_t m_fluidEventTime{-1};
    double m_secondsPerStep{1e-9};

    // ---- attributes ----
    uint32_t m_payload{4096};
    uint32_t m_overhead{26};
    bool m_storeAndForward{true};
    bool m_stripe{true};
    bool m_fifo{true};
    std::unordered_map<uint64_t, Connection>
        m_connections; //!< busy, or idle until their last message is delivered

    Totals m_totals;
    Stats m_stats;
    TracedCallback<uint32_t, uint32_t, uint64_t, Time> m_completeTrace;
    TracedCallback<uint32_t, double> m_linkRateTrace; //!< LinkRate
    std::vector<double> m_linkRateSent; //!< link -> the rate LinkRate last reported (bit/s)
};

} // namespace ns3

#endif // GPU_FABRIC_FLOW_TRANSPORT_H
