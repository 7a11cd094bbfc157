/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The small rail-only topology several suites run on.
 */
#ifndef GPU_FABRIC_TEST_RAIL_ONLY_16_H
#define GPU_FABRIC_TEST_RAIL_ONLY_16_H

#include "ns3/topology-builders.h"

#include <cstdint>

namespace gpu_fabric_test
{

/// \param radix the rail switches' radix
/// \return 16 GPUs of DGX H100 (K = 8, 4 NVSwitch planes) on a rail-only network
inline ns3::FabricTopology
RailOnly16(uint32_t radix = 16)
{
    ns3::ClusterParams p;
    p.gpus = 16;
    p.platform = ns3::HbDomainPreset::Get("dgx-h100");
    p.radix = radix;
    return ns3::BuildRailOnly(p);
}

} // namespace gpu_fabric_test

#endif // GPU_FABRIC_TEST_RAIL_ONLY_16_H
