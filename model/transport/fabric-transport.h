/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_TRANSPORT_H
#define GPU_FABRIC_FABRIC_TRANSPORT_H

#include "ns3/callback.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief The message layer every traffic source talks to.
 *
 * A backend moves `bytes` from one rank to another and calls `done` when the
 * last byte has been delivered at the destination.  Collectives and
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

    /**
     * Send a message.
     * \param srcRank sender \param dstRank receiver
     * \param bytes payload bytes (0 completes at once)
     * \param done called on delivery of the last byte (may be null)
     * \return a message id, unique among messages in flight
     */
    virtual uint64_t Send(uint32_t srcRank,
                          uint32_t dstRank,
                          uint64_t bytes,
                          DoneCallback done) = 0;

    /// \return number of ranks served
    virtual uint32_t GetNRanks() const = 0;

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
     * The flow label (ECMP entropy) of a message: every backend derives it
     * the same way, so that a message takes the same path on each.
     * \param srcRank sender \param dstRank receiver \param id message id
     * \return the flow label
     */
    static uint16_t FlowLabelOf(uint32_t srcRank, uint32_t dstRank, uint32_t id);

  protected:
    /// Throw FabricConfigError unless both ranks are below GetNRanks().
    void RequireRanks(uint32_t srcRank, uint32_t dstRank) const;
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_TRANSPORT_H
