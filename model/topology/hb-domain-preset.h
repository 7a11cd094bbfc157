/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_HB_DOMAIN_PRESET_H
#define GPU_FABRIC_HB_DOMAIN_PRESET_H

#include "ns3/data-rate.h"
#include "ns3/nstime.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Figures of one GPU platform: its HB (NVLink) domain and its NICs.
 *
 * Rates are per GPU and per direction.  The NVLink bandwidth of a GPU is
 * split evenly over its NVSwitch planes (one port per plane), so a GPU's
 * traffic is spread by ECMP over the planes, as NVLink spreads it over its
 * links.
 */
struct HbDomainPreset
{
    std::string name;        //!< preset name, e.g. "dgx-h100"
    uint32_t gpusPerDomain;  //!< K
    DataRate nvlinkRate;     //!< NVLink bandwidth per GPU, one direction
    DataRate nicRate;        //!< NIC bandwidth per GPU, one direction
    double gpuFlops;         //!< dense BF16 FLOP/s per GPU
    uint32_t nvswitchPlanes; //!< NVSwitch planes (ports per GPU into the domain)
    Time nvlinkLatency;      //!< one-way propagation per NVLink hop (assumption)
    std::string source;      //!< where the figures come from

    /// Most NVSwitch planes a platform may have (Validate): each is a switch
    /// per domain and a cable per GPU.
    static constexpr uint32_t kMaxNvSwitchPlanes = 64;

    /**
     * Look up a preset by name (case-insensitive).
     * \param name one of Names()
     * \return the preset
     * \throws FabricConfigError for an unknown name
     */
    static HbDomainPreset Get(const std::string& name);

    /// \return the names of all presets
    static std::vector<std::string> Names();

    /// \return all presets
    static const std::vector<HbDomainPreset>& All();

    /**
     * A custom platform, validated.
     * \param gpusPerDomain K (>= 1)
     * \param nvlinkRate NVLink rate per GPU (> 0)
     * \param nicRate NIC rate per GPU (> 0)
     * \param nvswitchPlanes planes (1 to kMaxNvSwitchPlanes)
     * \return the preset named "custom"
     */
    static HbDomainPreset Custom(uint32_t gpusPerDomain,
                                 DataRate nvlinkRate,
                                 DataRate nicRate,
                                 uint32_t nvswitchPlanes = 1);

    /// Throws FabricConfigError if a field is out of range.
    void Validate() const;
};

} // namespace ns3

#endif // GPU_FABRIC_HB_DOMAIN_PRESET_H
