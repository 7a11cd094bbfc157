/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * For the workload-replay tests (Chakra, AICB): run a program on a 16-GPU
 * DGX-H100 rail-only fabric, and the alpha-beta parameters of a ring
 * all-reduce inside an NVLink domain and across the rails, on that fabric
 * uncontended.
 */
#ifndef GPU_FABRIC_TEST_REPLAY_CLOSED_FORM_H
#define GPU_FABRIC_TEST_REPLAY_CLOSED_FORM_H

#include "ns3/collective-metrics.h"
#include "ns3/fabric-helper.h"
#include "ns3/fabric.h"
#include "ns3/iteration-program.h"
#include "ns3/simulator.h"
#include "ns3/topology-builders.h"

#include <gtest/gtest.h>

namespace gpu_fabric_test
{

constexpr double kPayloadShare = 4096.0 / 4122.0; //!< goodput of a full packet

/// Simulated finish time of \p program on a 16-GPU DGX-H100 rail-only fabric.
inline double
RunOnRailOnly(const ns3::ParallelProgram& program)
{
    using namespace ns3;
    ClusterParams cp;
    cp.gpus = 16;
    cp.platform = HbDomainPreset::Get("dgx-h100");
    Ptr<Fabric> fabric = FabricHelper().Install(BuildRailOnly(cp));
    Ptr<ProgramRunner> runner = RunProgram(program, fabric->GetTransport());
    EXPECT_TRUE(runner->IsComplete());
    EXPECT_EQ(fabric->GetTotalDrops(), 0U);
    const double t = runner->GetFinishTime().GetSeconds();
    fabric->Dispose();
    Simulator::Destroy();
    return t;
}

/// Alpha of one message: two cables and one store-and-forward packet.
inline double
Alpha(double cableDelayS, double hopRateBps)
{
    return 2 * cableDelayS + 4122 * 8.0 / hopRateBps;
}

/// Ring all-reduce parameters inside a DGX-H100's NVLink domain.
inline ns3::AlphaBetaParams
NvlinkRingParams()
{
    const ns3::HbDomainPreset h100 = ns3::HbDomainPreset::Get("dgx-h100");
    const double nv = h100.nvlinkRate.GetBitRate();
    ns3::AlphaBetaParams p;
    p.alpha = Alpha(h100.nvlinkLatency.GetSeconds(), nv / h100.nvswitchPlanes);
    p.linkRateBps = nv * kPayloadShare;
    return p;
}

/// Ring all-reduce parameters across DGX-H100 domains on one rail.
inline ns3::AlphaBetaParams
RailRingParams()
{
    const ns3::HbDomainPreset h100 = ns3::HbDomainPreset::Get("dgx-h100");
    ns3::AlphaBetaParams p;
    p.alpha = Alpha(ns3::ClusterParams().linkDelayNs * 1e-9, h100.nicRate.GetBitRate());
    p.linkRateBps = h100.nicRate.GetBitRate() * kPayloadShare;
    return p;
}

} // namespace gpu_fabric_test

#endif
