/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_CHANNEL_H
#define GPU_FABRIC_FABRIC_CHANNEL_H

#include "fabric-header.h"

#include "ns3/channel.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"

#include <boost/circular_buffer.hpp>

namespace ns3
{

class FabricNetDevice;
class FabricRecurringEventBase;
class RateErrorModel;

/**
 * \ingroup gpu-fabric
 * \brief Full-duplex point-to-point cable between two FabricNetDevices.
 *
 * A packet handed to the channel at the start of its serialization arrives at
 * the peer after its serialization time plus the propagation Delay (the
 * receiver sees the last bit, i.e. store-and-forward).  Link-level flow
 * control frames (PFC pause/resume) are delivered after Delay alone: they are
 * 64-byte frames that preempt data, and modelling them as out-of-band keeps
 * them off the data queues.  The Delay attribute is what ns-3's distributed
 * engine reads to compute lookahead.
 *
 * Packets on one direction of the cable arrive in the order they were sent
 * (one serializer, one delay): each direction keeps its packets in flight in
 * a FIFO and delivers the head at each arrival, through one reusable event.
 * A Delay lowered during a run applies to packets sent after the ones
 * already on the wire (they cannot be overtaken).
 *
 * Bit errors are the receiving devices' (FabricNetDevice's ReceiveErrorModel);
 * BitErrorRate is a shorthand that sets one RateErrorModel of unit bit on
 * both ends.
 */
class FabricChannel : public Channel
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    FabricChannel();
    ~FabricChannel() override;

    /**
     * Attach a device; a channel takes exactly two.
     * \param device the device
     */
    void Attach(Ptr<FabricNetDevice> device);

    /**
     * Carry a flow-control frame from \p sender to the peer.
     * \param sender the device asking its peer to pause or resume
     * \param pause true to pause the peer's transmitter, false to resume it
     */
    void SendFlowControl(const FabricNetDevice* sender, bool pause) const;

    /**
     * Take the cable down or up (both ends, see FabricNetDevice::SetLinkUp).
     * \param up the new state
     */
    void SetLinkUp(bool up);
    /// \return false while the cable is down
    bool IsUp() const;

    /**
     * Corrupt packets at random (the BitErrorRate attribute): a packet of b
     * bits is discarded by its receiver with probability 1 - (1 - ber)^b (it
     * still occupies the wire). Both ends get one RateErrorModel of unit bit
     * as their ReceiveErrorModel (replacing theirs), with \p ber its rate;
     * 0 takes it off them again. A device attached later gets it too.
     * \param ber bit-error rate in [0, 1); 0 turns corruption off
     */
    void SetBitErrorRate(double ber);
    /**
     * SetBitErrorRate(ber), its draws from one ns-3 random stream.
     * \param ber bit-error rate in [0, 1); 0 turns corruption off
     * \param stream random stream index (ns-3 RngStream), for reproducible runs
     */
    void SetBitErrorRate(double ber, int64_t stream);
    /// \return the bit-error rate
    double GetBitErrorRate() const;

    /// \return the propagation delay
    Time GetDelay() const
    {
        return m_send.delay;
    }

    /**
     * \param sender one end of the channel
     * \return the other end
     */
    Ptr<FabricNetDevice> GetPeer(const FabricNetDevice* sender) const;

    std::size_t GetNDevices() const override;
    Ptr<NetDevice> GetDevice(std::size_t i) const override;

  protected:
    void DoDispose() override;

  private:
    friend class FabricNetDevice; // the device's entry points below
    friend class FabricDataPlane; // prefetch hooks (fabric-internal.h, not installed)

    // Called by the devices only.

    /**
     * Carry a data packet from \p sender to the peer.
     * \param p the packet (header included)
     * \param meta what travels beside the packet to the peer
     * \param sender the transmitting device
     * \param now the simulation time (the sender has read it already)
     * \param txTime serialization time of \p p at the sender's rate
     */
    void Transmit(const Ptr<Packet>& p,
                  const FabricFrameMeta& meta,
                  const FabricNetDevice* sender,
                  Time now,
                  Time txTime);

    /// Re-read what the ends' devices say of themselves, node id and link
    /// epoch (a device calls it when it joins a node or its link changes).
    void RefreshEnds();

    /// Give the attached ends the BitErrorRate's error model, or take it off.
    void InstallErrorModel();

    /// A packet on the wire.
    struct InFlight
    {
        Ptr<Packet> packet;   //!< the packet
        FabricFrameMeta meta; //!< travels with it
        uint32_t epoch;       //!< the receiver's link epoch when it was sent
    };

    /// One direction of the cable: what a packet's send and arrival read,
    /// together (64 bytes; aligning it to a cache line measured slower).
    struct Direction
    {
        boost::circular_buffer<InFlight> wire; //!< packets in flight, oldest first
        /// delivers the oldest packet in flight
        Ptr<FabricRecurringEventBase> arrive;
        Time lastArrival;               //!< arrival time of the newest
        FabricNetDevice* peer{nullptr}; //!< the receiving end (m_device holds it)
        bool remote{false};             //!< the receiving end is on another rank
    };

    /**
     * Send a frame (or a PFC frame) to the end of direction \p d on another
     * rank (FabricDistributed), to arrive at \p arrival.
     * \param p the frame (nullptr for a PFC frame) \param meta its header fields
     * \param d the direction \param kind FabricRemoteEnvelope::Kind
     * \param arrival arrival time
     */
    void TransmitRemote(const Ptr<Packet>& p,
                        const FabricFrameMeta& meta,
                        uint32_t d,
                        uint8_t kind,
                        Time arrival) const;

    /// Deliver the oldest packet in flight in direction \p d (device d -> other end).
    template <uint32_t d>
    void Arrive();
    /// \param delay the propagation delay (the Delay attribute)
    void SetDelay(Time delay);

    /// What every send reads besides its direction.
    struct SendFields
    {
        Time delay;               //!< propagation delay
        uint32_t nodeId[2]{0, 0}; //!< node of each end (spares a device read)
        uint32_t epoch[2]{0, 0};  //!< link epoch of each end (see FabricNetDevice)
    };

    // What a packet's send reads comes first, beside the object's header;
    // then each direction's fields; the rest after.
    SendFields m_send;                //!< read by every send
    Direction m_dir[2];               //!< by sending end
    Ptr<FabricNetDevice> m_device[2]; //!< the two ends
    uint32_t m_nDevices{0};           //!< ends attached so far
    double m_ber{0};                  //!< bit-error rate (0: none)
    Ptr<RateErrorModel> m_errorModel; //!< the ends' error model for m_ber, once made
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_CHANNEL_H
