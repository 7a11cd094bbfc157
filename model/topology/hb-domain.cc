/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "hb-domain.h"

#include "ns3/double.h"
#include "ns3/fabric-error.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(HbDomain);

namespace
{
/// the Preset attribute's registered default
const char* const kDefaultPreset = "dgx-h100";
} // namespace

TypeId
HbDomain::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::HbDomain")
            .SetParent<Object>()
            .SetGroupName("GpuFabric")
            .AddConstructor<HbDomain>()
            .AddAttribute("Preset",
                          "The platform whose figures are the starting point (dgx-a100, "
                          "dgx-h100, gh200-256, gh200-256-hotnets, gb200-nvl72).",
                          StringValue(kDefaultPreset),
                          MakeStringAccessor(&HbDomain::m_preset),
                          MakeStringChecker())
            .AddAttribute("GpusPerDomain",
                          "K, GPUs per HB domain (0: the preset's).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&HbDomain::m_gpus),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("NvLinkRate",
                          "NVLink bandwidth per GPU and direction, over all its planes (0: the "
                          "preset's).",
                          DataRateValue(DataRate(0)),
                          MakeDataRateAccessor(&HbDomain::m_nvlinkRate),
                          MakeDataRateChecker())
            .AddAttribute("NvLinkLatency",
                          "One-way propagation per NVLink hop (negative: the preset's).",
                          TimeValue(NanoSeconds(-1)),
                          MakeTimeAccessor(&HbDomain::m_nvlinkLatency),
                          MakeTimeChecker())
            .AddAttribute("NvSwitchPlanes",
                          "NVSwitch planes, one NVLink port per GPU each, at most 64 (0: the "
                          "preset's).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&HbDomain::m_planes),
                          MakeUintegerChecker<uint32_t>(0, HbDomainPreset::kMaxNvSwitchPlanes))
            .AddAttribute("NicRate",
                          "NIC bandwidth per GPU and direction (0: the preset's).",
                          DataRateValue(DataRate(0)),
                          MakeDataRateAccessor(&HbDomain::m_nicRate),
                          MakeDataRateChecker())
            .AddAttribute("GpuFlops",
                          "Dense BF16 FLOP/s per GPU (0: the preset's).",
                          DoubleValue(0),
                          MakeDoubleAccessor(&HbDomain::m_gpuFlops),
                          MakeDoubleChecker<double>(0));
    return tid;
}

HbDomainPreset
HbDomain::GetPlatform() const
{
    HbDomainPreset p = HbDomainPreset::Get(m_preset);
    bool changed = false;
    auto set = [&changed](auto& field, const auto& value) {
        field = value;
        changed = true;
    };
    if (m_gpus != 0)
    {
        set(p.gpusPerDomain, m_gpus);
    }
    if (m_nvlinkRate.GetBitRate() != 0)
    {
        set(p.nvlinkRate, m_nvlinkRate);
    }
    if (!m_nvlinkLatency.IsNegative())
    {
        set(p.nvlinkLatency, m_nvlinkLatency);
    }
    if (m_planes != 0)
    {
        set(p.nvswitchPlanes, m_planes);
    }
    if (m_nicRate.GetBitRate() != 0)
    {
        set(p.nicRate, m_nicRate);
    }
    if (m_gpuFlops != 0)
    {
        set(p.gpuFlops, m_gpuFlops);
    }
    if (changed)
    {
        p.name += "+attributes";
        p.source += "; figures changed through ns3::HbDomain attributes";
    }
    p.Validate();
    return p;
}

HbDomainPreset
HbDomain::PlatformOf(const std::string& preset)
{
    Ptr<HbDomain> domain = CreateObject<HbDomain>();
    // the Preset default as set (CreateObject applied it); the registered
    // default is indistinguishable from an unset one, and never conflicts
    const std::string set = domain->m_preset;
    FabricRequire(set == kDefaultPreset || set == preset,
                  "ns3::HbDomain::Preset",
                  set,
                  fmt::format("the preset named where it is used ({}), or no "
                              "ns3::HbDomain::Preset: a program's or a function's own preset "
                              "wins over it, so give that one instead",
                              preset));
    domain->m_preset = preset;
    return domain->GetPlatform();
}

} // namespace ns3
