/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_TEST_STAR_TOPOLOGY_H
#define GPU_FABRIC_TEST_STAR_TOPOLOGY_H

#include "ns3/fabric-topology.h"

#include <cstdint>
#include <vector>

namespace gpu_fabric_test
{

/// n GPUs on one switch (a star), NIC links of the given rate and delay:
/// the smallest fabric where senders contend for one port.
inline ns3::FabricTopology
Star(uint32_t n, uint64_t rate, int64_t delayNs)
{
    ns3::FabricTopology topo("star");
    std::vector<uint32_t> gpus;
    for (uint32_t i = 0; i < n; ++i)
    {
        gpus.push_back(topo.AddGpu(-1, 0));
    }
    const uint32_t sw = topo.AddSwitch(ns3::TopoNodeKind::Switch, "rail", 1);
    for (uint32_t g : gpus)
    {
        topo.AddCable(g, sw, rate, delayNs, ns3::TopoLinkKind::Nic);
    }
    return topo;
}

} // namespace gpu_fabric_test

#endif // GPU_FABRIC_TEST_STAR_TOPOLOGY_H
