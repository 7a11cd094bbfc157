/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_COST_H
#define GPU_FABRIC_FABRIC_COST_H

#include "fabric-topology.h"

#include "ns3/object.h"

#include <map>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Counts of network equipment, read off a FabricTopology.
 *
 * Only the scale-out network is counted (NVLink and NVSwitches belong to
 * the servers, as in the rail-only papers): a switch is a distinct chassis
 * of network switches; every network link is optical with a transceiver at
 * each end, GPU-to-leaf links included. A direct-connect arc (one direction
 * of a link between graph nodes) takes the transmitter of one transceiver and
 * the receiver of another: a node of degree d has d transceivers, so one
 * transceiver per arc; the two arcs of a node pair share one duplex fibre.
 */
struct FabricCounts
{
    uint64_t switches{0};                        //!< switch chassis
    std::map<uint32_t, uint64_t> switchesByTier; //!< tier -> chassis
    uint64_t switchPorts{0};                     //!< ports of all chassis (radix x switches)
    uint64_t switchPortsUsed{0};                 //!< ports with a cable
    uint64_t links{0};                           //!< network cables (NIC and switch-to-switch)
    uint64_t transceivers{0};                    //!< 2 per network cable, 1 per direct arc
    uint64_t cables{0};                          //!< network cables (direct: fibres)
    uint64_t nics{0};                            //!< GPU NICs attached to the network
    uint64_t nvlinks{0};                         //!< NVLink cables (not priced)
    uint64_t directLinks{0};                     //!< direct-connect arcs/cables
    /// Direct-connect duplex fibres: per pair of graph nodes, the larger of
    /// its arc counts each way (an arc without a reverse arc takes a fibre).
    uint64_t directFibres{0};
    /// Direct-connect transceivers by their arc's rate (bits per second ->
    /// count); they are among `transceivers`, priced by rate.
    std::map<uint64_t, uint64_t> directTransceiversByRate;
    /// Switched network cables (NIC and switch-to-switch) by their rate (bits
    /// per second -> count); their transceivers, two per cable, are among
    /// `transceivers`, priced by rate.
    std::map<uint64_t, uint64_t> switchedCablesByRate;
    /// Switch ports (`switchPorts`, radix per chassis) by the rate of their
    /// chassis' fastest cable (bits per second -> ports; 0: a chassis without
    /// cables).
    std::map<uint64_t, uint64_t> switchPortsByRate;
};

/**
 * \ingroup gpu-fabric
 * \brief Count the equipment of a topology.
 * \param topo the topology
 * \param radix ports per switch chassis (prices are per port of the radix)
 * \return the counts
 */
FabricCounts CountEquipment(const FabricTopology& topo, uint32_t radix);

/**
 * \ingroup gpu-fabric
 * \brief The network cables that no two GPUs of one rail need: the
 * "trimmed Clos" of the rail-only papers.
 *
 * A switch's down-set is the GPUs below it (reached by descending tiers). A
 * cable between a switch s and a switch of a higher tier carries traffic of
 * one rail only when some rail has GPUs both inside and outside s's
 * down-set; otherwise it carries only cross-rail traffic, which a rail-only
 * fabric relays through the HB domain instead, so it can go. NIC cables
 * always stay. On a rail-optimized fat-tree whose rails each fit one block
 * of t_rail tiers this removes the tiers above: (t - t_rail) / t of the
 * links of a t-tier Clos (a third for 32768 GPUs in domains of 256 at radix
 * 64 or 128). Nothing goes from a rail-only fabric or a classic fat-tree.
 * \param topo the topology
 * \return per cable (index into Cables()), whether it can be removed
 */
std::vector<bool> RailTrimmableCables(const FabricTopology& topo);

/**
 * \ingroup gpu-fabric
 * \brief CountEquipment of \p topo without the cables RailTrimmableCables
 * removes; a switch left with no cable is not counted.
 * \param topo the topology \param radix ports per switch chassis
 * \return the counts of the trimmed fabric
 */
FabricCounts CountTrimmedEquipment(const FabricTopology& topo, uint32_t radix);

/**
 * \ingroup gpu-fabric
 * \brief Prices and powers of network equipment; cost and power of a
 * topology.
 *
 * Network cost = switch ports x SwitchPortPrice + transceivers x
 * TransceiverPrice (cables are not priced: CablePrice is 0), as in the
 * rail-only papers, for links up to 400 Gb/s. Power likewise with
 * SwitchPortPower and TransceiverPower. Presets: "hotnets2023" ($374 per
 * 400G transceiver, $748 per 400G switch port) and "railonly2024" ($199,
 * $694; the later arXiv version), each with its 800G prices (below). The
 * papers do not publish per-device powers; the defaults (12 W per
 * transceiver, 24 W per switch port) are assumptions with the 2:1 ratio that
 * reproduces the published power savings.
 *
 * Every link is priced by its rate. An end of a link of rate r takes
 * TransceiverPriceAt(r): up to 400 Gb/s one transceiver at TransceiverPrice,
 * above that the cheaper of ceil(r / 400G) 400G ones and ceil(r / 800G) 800G
 * ones (Transceiver800gPrice), the link being that many parallel lanes; their
 * power likewise (TransceiverPower, Transceiver800gPower). A switched link's
 * lanes are cables at CablePrice or Cable800gPrice (CablePriceAt; cables
 * draw no power), a direct-connect arc's fibre is priced below. A
 * direct-connect arc's rate is the node bandwidth over its degree (800 Gb/s
 * for 3.2 Tb/s over 4 arcs); a switched link's is its NIC's (800 Gb/s on
 * GB200 NVL72). A switch chassis' ports are priced at the rate of its
 * fastest cable (SwitchPortPriceAt): up to 400 Gb/s SwitchPortPrice, above
 * that ceil(r / 800G) x SwitchPort800gPrice; power likewise
 * (SwitchPortPower, SwitchPort800gPower). The papers publish no 800G price:
 * the 800G defaults are assumptions (see the attributes).
 *
 * Direct-connect equipment (no switches): each fibre costs FibrePrice and
 * each of its two ends takes a patch-panel port (PatchPanelPortPrice) or an
 * optical circuit switch port (OcsPortPrice), as DirectConnectPatching says.
 * Patch panels and OCS ports draw no power in this model.
 */
class FabricCostModel : public Object
{
  public:
    /// How direct-connect fibres are patched.
    enum Patching
    {
        PATCH_PANEL, //!< a patch-panel port per fibre end
        OCS,         //!< an optical circuit switch port per fibre end
    };

    /// \return the TypeId
    static TypeId GetTypeId();
    FabricCostModel();

    /**
     * Apply a price preset: the paper's 400G transceiver and switch port
     * prices and the 800G ones derived from them (x 668 / 374, rounded to
     * dollars: the assumed 800G:400G ratio of Transceiver800gPrice's
     * default). Powers and cable prices are left as they are.
     * \param name "hotnets2023" or "railonly2024"
     */
    void SetPricePreset(const std::string& name);
    /// \return the preset names
    static std::vector<std::string> PricePresets();

    /// \param c counts \return network cost, US dollars
    double Cost(const FabricCounts& c) const;
    /// \param c counts \return network power, watts
    double Power(const FabricCounts& c) const;

    /**
     * \param rateBps a link's rate (a direct-connect arc's or a switched
     *        cable's), bits per second
     * \return US dollars for the transceivers of one end of a link of that
     *         rate
     */
    double TransceiverPriceAt(uint64_t rateBps) const;
    /// \param rateBps a link's rate \return watts, as TransceiverPriceAt
    double TransceiverPowerAt(uint64_t rateBps) const;

    /**
     * \param rateBps the rate of a switch chassis' fastest cable, bits per
     *        second
     * \return US dollars per port of that chassis: SwitchPortPrice up to
     *         400 Gb/s, above that ceil(rate / 800G) x SwitchPort800gPrice
     */
    double SwitchPortPriceAt(uint64_t rateBps) const;
    /// \param rateBps a chassis' fastest cable's rate \return watts per port, as SwitchPortPriceAt
    double SwitchPortPowerAt(uint64_t rateBps) const;

    /**
     * \param rateBps a switched link's rate, bits per second
     * \return US dollars for its cables: one per lane of TransceiverPriceAt's
     *         optics, at CablePrice (400G lanes) or Cable800gPrice (800G lanes)
     */
    double CablePriceAt(uint64_t rateBps) const;

    /// \param c counts \return cost of the direct-connect fibres and their patching, US dollars
    double DirectConnectCost(const FabricCounts& c) const;
    /// \param c counts \return patch-panel ports (0 with OCS patching)
    uint64_t PatchPanelPorts(const FabricCounts& c) const;
    /// \param c counts \return OCS ports (0 with patch-panel patching)
    uint64_t OcsPorts(const FabricCounts& c) const;
    /// \return "patch-panel" or "ocs"
    std::string PatchingName() const;

  private:
    double m_transceiverPrice;     //!< $ per transceiver
    double m_portPrice;            //!< $ per switch port
    double m_transceiverPower;     //!< W per transceiver
    double m_portPower;            //!< W per switch port
    double m_transceiver800gPrice; //!< $ per 800G transceiver
    double m_transceiver800gPower; //!< W per 800G transceiver
    double m_port800gPrice;        //!< $ per 800G switch port
    double m_port800gPower;        //!< W per 800G switch port
    double m_cablePrice;           //!< $ per switched cable (lane) up to 400G
    double m_cable800gPrice;       //!< $ per switched 800G cable (lane)
    double m_fibrePrice;           //!< $ per direct-connect duplex fibre
    double m_patchPortPrice;       //!< $ per patch-panel port
    double m_ocsPortPrice;         //!< $ per OCS port
    Patching m_patching;           //!< patch panel or OCS
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_COST_H
