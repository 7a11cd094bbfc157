/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Lets ctest run a suite again on another ns-3 scheduler: with
 * GPU_FABRIC_TEST_SCHEDULER=<TypeId name> set, every test of the binary runs
 * with that SchedulerType (ns-3's own NS_GLOBAL_VALUE cannot name a
 * scheduler of this module: it is read before the module registers it).
 * On FabricLookaheadScheduler the prefetch stages run whatever the number of
 * events queued (MinPending 0): the suites' small runs exercise them too.
 */
#ifndef GPU_FABRIC_TEST_SCHEDULER_ENV_H
#define GPU_FABRIC_TEST_SCHEDULER_ENV_H

#include "ns3/config.h"
#include "ns3/fabric-lookahead-scheduler.h"
#include "ns3/global-value.h"
#include "ns3/type-id.h"
#include "ns3/uinteger.h"

#include <cstdlib>
#include <gtest/gtest.h>

namespace gpu_fabric_test
{

/// Binds SchedulerType from GPU_FABRIC_TEST_SCHEDULER before the first test.
class SchedulerFromEnv : public ::testing::Environment
{
  public:
    void SetUp() override
    {
        const char* name = std::getenv("GPU_FABRIC_TEST_SCHEDULER");
        if (name == nullptr)
        {
            return;
        }
        ns3::TypeId tid;
        ASSERT_TRUE(ns3::TypeId::LookupByNameFailSafe(name, &tid))
            << "GPU_FABRIC_TEST_SCHEDULER=" << name << ": no such TypeId";
        ns3::GlobalValue::Bind("SchedulerType", ns3::TypeIdValue(tid));
        if (tid == ns3::FabricLookaheadScheduler::GetTypeId())
        {
            ns3::Config::SetDefault("ns3::FabricLookaheadScheduler::MinPending",
                                    ns3::UintegerValue(0));
        }
        // the simulator reads it whenever it is created (after each Destroy)
        ns3::TypeIdValue bound;
        ns3::GlobalValue::GetValueByName("SchedulerType", bound);
        ASSERT_EQ(bound.Get(), tid) << "SchedulerType did not take " << name;
    }
};

/// Registered once per test binary that includes this header.
inline ::testing::Environment* const g_schedulerFromEnv =
    ::testing::AddGlobalTestEnvironment(new SchedulerFromEnv);

} // namespace gpu_fabric_test

#endif
