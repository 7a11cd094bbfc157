/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * A completion callback for the tests: MakeBoundCallback(&RecordNow, &t)
 * stores the simulated time it is called at.
 */
#ifndef GPU_FABRIC_TEST_RECORD_NOW_H
#define GPU_FABRIC_TEST_RECORD_NOW_H

#include "ns3/simulator.h"

namespace gpu_fabric_test
{

/// Stores the current simulated time in \p at.
inline void
RecordNow(ns3::Time* at)
{
    *at = ns3::Simulator::Now();
}

} // namespace gpu_fabric_test

#endif
