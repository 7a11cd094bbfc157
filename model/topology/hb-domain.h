/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_HB_DOMAIN_H
#define GPU_FABRIC_HB_DOMAIN_H

#include "hb-domain-preset.h"

#include "ns3/object.h"

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief The HB (NVLink) domain's figures as ns-3 attributes.
 *
 * Starts from a preset (attribute Preset) and overrides any of its figures
 * with the attributes that are set: GPUs per domain, NVLink rate and latency
 * per GPU, NVSwitch planes, NIC rate, GPU FLOP/s. So a study can sweep them
 * with Config::SetDefault or from the command line, e.g.
 * \code
 *   --ns3::HbDomain::Preset=dgx-h100 --ns3::HbDomain::NvSwitchPlanes=2
 * \endcode
 * GetPlatform() gives the resulting HbDomainPreset, which the topology
 * builders take (ClusterParams::platform).
 */
class HbDomain : public Object
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();

    /**
     * \return the preset with the attributes that are set applied, validated
     * \throws FabricConfigError for an unknown preset or an out-of-range figure
     */
    HbDomainPreset GetPlatform() const;

    /**
     * The platform of a preset named explicitly (a program's preset flag,
     * Python's HbDomainPreset.FromAttributes): \p preset with the HbDomain
     * attribute defaults that are set applied. One rule everywhere: the name
     * given wins over the Preset attribute, so a Preset default set to
     * another preset (Config::SetDefault, --ns3::HbDomain::Preset) could not
     * take effect and is refused rather than ignored.
     * \param preset the preset's name
     * \return the platform, validated
     * \throws FabricConfigError naming ns3::HbDomain::Preset if its default
     *         names another preset; for an unknown preset or a bad figure
     */
    static HbDomainPreset PlatformOf(const std::string& preset);

  private:
    std::string m_preset;
    uint32_t m_gpus{0};
    DataRate m_nvlinkRate;
    Time m_nvlinkLatency;
    uint32_t m_planes{0};
    DataRate m_nicRate;
    double m_gpuFlops{0};
};

} // namespace ns3

#endif // GPU_FABRIC_HB_DOMAIN_H
