/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "hb-domain-preset.h"

#include "ns3/fabric-error.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ns3
{

const std::vector<HbDomainPreset>&
HbDomainPreset::All()
{
    // Vendor figures as summarised in the rail-only papers (Wang et al.,
    // HotNets 2023 and arXiv 2307.12169). NVLink latency is a modelling
    // assumption (no published per-hop figure): 100 ns per NVLink hop.
    static const std::vector<HbDomainPreset> presets = {
        {"dgx-a100",
         8,
         DataRate("2400Gbps"),
         DataRate("200Gbps"),
         312e12,
         6,
         NanoSeconds(100),
         "NVIDIA DGX A100: 8 GPUs, NVLink3 300 GB/s per GPU per direction through 6 NVSwitches, "
         "one 200 Gb/s HDR NIC per GPU, 312 TFLOP/s dense BF16"},
        {"dgx-h100",
         8,
         DataRate("3600Gbps"),
         DataRate("400Gbps"),
         989e12,
         4,
         NanoSeconds(100),
         "NVIDIA DGX H100: 8 GPUs, NVLink4 450 GB/s per GPU per direction through 4 NVSwitches, "
         "one 400 Gb/s NDR NIC per GPU, 989 TFLOP/s dense BF16"},
        {"gh200-256",
         256,
         DataRate("3600Gbps"),
         DataRate("400Gbps"),
         989e12,
         1,
         NanoSeconds(100),
         "NVIDIA DGX GH200: 256 Grace Hopper superchips in one NVLink domain, 450 GB/s per GPU "
         "per direction (the NVLink switch system modelled as one non-blocking plane), 400 Gb/s "
         "NIC per GPU, 989 TFLOP/s dense BF16"},
        {"gh200-256-hotnets",
         256,
         DataRate("7680Gbps"),
         DataRate("400Gbps"),
         989e12,
         1,
         NanoSeconds(100),
         "DGX GH200 as the HotNets 2023 rail-only paper models it: HB bandwidth 7.68 Tb/s per GPU"},
        {"gb200-nvl72",
         72,
         DataRate("7200Gbps"),
         DataRate("800Gbps"),
         2.25e15,
         18,
         NanoSeconds(100),
         "NVIDIA GB200 NVL72: 72 GPUs, NVLink5 900 GB/s per GPU per direction through 18 "
         "NVSwitch chips, 800 Gb/s NIC per GPU, about 2.25 PFLOP/s dense BF16"},
    };
    return presets;
}

std::vector<std::string>
HbDomainPreset::Names()
{
    std::vector<std::string> names;
    for (const auto& p : All())
    {
        names.push_back(p.name);
    }
    return names;
}

HbDomainPreset
HbDomainPreset::Get(const std::string& name)
{
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) {
        return c == '_' ? '-' : std::tolower(c);
    });
    for (const auto& p : All())
    {
        if (p.name == lower)
        {
            return p;
        }
    }
    throw FabricConfigError("preset", name, fmt::format("one of {}", fmt::join(Names(), ", ")));
}

HbDomainPreset
HbDomainPreset::Custom(uint32_t gpusPerDomain,
                       DataRate nvlinkRate,
                       DataRate nicRate,
                       uint32_t nvswitchPlanes)
{
    HbDomainPreset p{"custom",
                     gpusPerDomain,
                     nvlinkRate,
                     nicRate,
                     0.0,
                     nvswitchPlanes,
                     NanoSeconds(100),
                     "user-defined"};
    p.Validate();
    return p;
}

void
HbDomainPreset::Validate() const
{
    FabricRequire(gpusPerDomain >= 1, "HB domain size K", gpusPerDomain, "an integer >= 1");
    FabricRequire(nvlinkRate.GetBitRate() > 0,
                  "NVLink rate",
                  nvlinkRate,
                  "a positive rate, e.g. 3600Gbps");
    FabricRequire(nicRate.GetBitRate() > 0, "NIC rate", nicRate, "a positive rate, e.g. 400Gbps");
    // each plane is a switch per domain and a cable per GPU: a million
    // planes built for minutes and gigabytes
    FabricRequire(nvswitchPlanes >= 1 && nvswitchPlanes <= kMaxNvSwitchPlanes,
                  "NVSwitch planes",
                  nvswitchPlanes,
                  fmt::format("an integer from 1 to {} (one NVLink port per GPU each; 18 on "
                              "NVLink 5)",
                              kMaxNvSwitchPlanes));
    FabricRequire(nvlinkRate.GetBitRate() % nvswitchPlanes == 0,
                  "NVSwitch planes",
                  nvswitchPlanes,
                  fmt::format("a divisor of the NVLink rate {} bps", nvlinkRate.GetBitRate()));
    FabricRequire(!nvlinkLatency.IsNegative(),
                  "NVLink latency",
                  nvlinkLatency.As(Time::NS),
                  "a non-negative time");
}

} // namespace ns3
