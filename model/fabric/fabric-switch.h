/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_SWITCH_H
#define GPU_FABRIC_FABRIC_SWITCH_H

#include "fabric-node.h"

#include "ns3/queue-size.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief An output-queued switch: rail switch, leaf, spine or NVSwitch.
 *
 * Every port gets a FIFO output queue of PortBuffer (grown, with PFC on, to
 * what its ports need to stay lossless: GetLosslessBufferBytes), the ECN marking
 * (a step threshold, or RED's EcnKmin, EcnKmax, EcnPmax) and the flow-control
 * thresholds of this switch when it is added; forwarding is by destination
 * rank over equal-cost ports chosen as LoadBalancing says (per-flow ECMP by
 * default; per-packet spraying, flowlets or adaptive). The roles differ only
 * in these attributes and in the rates of the links a builder attaches.
 */
class FabricSwitch : public FabricNode
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    FabricSwitch();

    uint32_t AddPort(Ptr<FabricNetDevice> device) override;

    /// \return the role label ("rail", "leaf", "spine", "nvswitch", ...)
    std::string GetRole() const;

    /**
     * What one output queue must hold so that PFC never drops: every input
     * port may deliver its PfcXoff plus the headroom that arrives while its
     * pause is on the way, 2 x Delay x DataRate + 2 Mtu (bytes).
     * \return the sum over this switch's attached ports, bytes
     */
    uint64_t GetLosslessBufferBytes() const;
    /**
     * One port's share of GetLosslessBufferBytes.
     * \param rateBps its rate \param delay its cable's delay
     * \param frameMtu its largest frame, bytes
     * \return PfcXoff + 2 x Delay x DataRate + 2 Mtu, bytes
     */
    uint64_t GetLosslessPortBytes(uint64_t rateBps, Time delay, uint32_t frameMtu) const;

    /**
     * Throw FabricConfigError, naming the switch, PfcXoff and the bytes, if
     * the buffer GrowBufferForPfc would give does not fit ns-3's 32-bit
     * QueueSize (it would wrap to a tiny, lossy queue). FabricHelper checks
     * it when it builds a fabric; DoInitialize checks it again.
     */
    void RequireLosslessBufferFits() const;
    /**
     * The same check for a switch whose ports are not built here (a node of
     * another rank in a distributed run: every rank refuses alike).
     * \param need its GetLosslessBufferBytes, bytes \param ports its ports
     */
    void RequireLosslessBufferFits(uint64_t need, uint32_t ports) const;

    /**
     * \return LoadBalancing's names, in the order of its modes: ecmp, spray,
     *         flowlet, adaptive (for programs that list or check them)
     */
    static const std::vector<std::string>& LoadBalancingNames();

    /**
     * Refuse a name LoadBalancing does not take.
     * \param name the name \param parameter what gave it, for the error
     * \throws FabricConfigError naming \p parameter, \p name and the names allowed
     */
    static void CheckLoadBalancingName(const std::string& name, const std::string& parameter);

  protected:
    /// Grows the output queues to GetLosslessBufferBytes() (GrowBufferForPfc).
    void DoInitialize() override;
    void DoDispose() override;
    void HandlePacket(FabricNetDevice* port,
                      const Ptr<Packet>& p,
                      const FabricHeaderData& h) override;

  private:
    /// LoadBalancing's accessors (a name; anything else is refused by name).
    void SetLoadBalancingName(const std::string& name);
    std::string GetLoadBalancingName() const;

    std::string m_role;                          //!< label used in traces and reports
    QueueSize m_portBuffer;                      //!< output queue capacity per port
    uint32_t m_ecnThreshold;                     //!< ECN marking threshold, bytes (0: off)
    uint32_t m_ecnKmin{0};                       //!< RED marking: lower threshold, bytes
    uint32_t m_ecnKmax{0};                       //!< RED marking: upper threshold (0: off)
    double m_ecnPmax{0};                         //!< RED marking: probability at Kmax
    LoadBalancing m_loadBalancing{kEcmp};        //!< how equal-cost ports are chosen
    Time m_flowletGap;                           //!< idle gap that starts a flowlet
    uint32_t m_flowletTable{65536};              //!< most flows the flowlet table holds
    bool m_intEnabled{true};                     //!< ports append INT hops
    bool m_pfcEnabled;                           //!< lossless (pause frames) on every port
    uint32_t m_pfcXoff;                          //!< pause threshold per input port, bytes
    uint32_t m_pfcXon;                           //!< resume threshold per input port, bytes
    bool m_growBuffer{true};                     //!< grow PortBuffer to the lossless requirement
    std::vector<Ptr<Queue<Packet>>> m_ownQueues; //!< the queues AddPort gave, by port
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_SWITCH_H
