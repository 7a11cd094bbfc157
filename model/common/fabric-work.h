/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_WORK_H
#define GPU_FABRIC_FABRIC_WORK_H

#include "fabric-error.h"

#include <fmt/format.h>
#include <string>
#include <string_view>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Reference speeds that up-front work estimates convert to wall time
 * with: a little below what bench/ measures on a shared two-core machine
 * (bench/README.md), so an estimate errs long.
 */
struct FabricWorkRates
{
    /// packet-level events per wall second (fabric-throughput: 2.2-2.7 M/s)
    static constexpr double kPacketEventsPerSecond = 2.0e6;
    /// flow-level messages per wall second (flow-scale: 12.8 M flows in 30 s)
    static constexpr double kFlowMessagesPerSecond = 1.0e5;
    /// steps per second of the BFB synthesis (BfbWorkSteps: one step is one
    /// arc of a distance search; bfb-scale: about 9e8)
    static constexpr double kBfbStepsPerSecond = 6.0e8;
};

/**
 * \ingroup gpu-fabric
 * \return the estimated wall time above which a run is refused: the global
 *         value GpuFabricMaxRunSeconds (default 43200, twelve hours; 0 lifts
 *         the limit). Set it with --GpuFabricMaxRunSeconds=S on a program's
 *         command line, NS_GLOBAL_VALUE, or GlobalValue::Bind.
 */
double FabricMaxRunSeconds();

/**
 * \ingroup gpu-fabric
 * \return the estimated wall time above which programs warn up front and show
 *         progress while they run: GpuFabricWarnRunSeconds (default 60)
 */
double FabricWarnRunSeconds();

/**
 * \ingroup gpu-fabric
 * \param seconds a duration
 * \return it for a message ("3.2 hours", "40 s", "over 1000 years")
 */
std::string FabricDurationText(double seconds);

/**
 * \ingroup gpu-fabric
 * \brief Throw FabricConfigError if a run's up-front estimate exceeds
 * FabricMaxRunSeconds(): called before the work starts, so that a run that
 * cannot finish is refused by the parameter that makes it long.
 * \param estimateSeconds the estimated wall time (a double: it may be huge)
 * \param parameter the parameter that sets the work
 * \param value its value
 * \param what what takes the time, with its count ("4.2e+12 packet events")
 * \throws FabricConfigError "invalid <parameter>: got '<value>', allowed: a
 *         run estimated within GpuFabricMaxRunSeconds (...); <what> would
 *         take about <duration>"
 */
template <typename T>
inline void
FabricRequireWork(double estimateSeconds,
                  std::string_view parameter,
                  const T& value,
                  std::string_view what)
{
    const double limit = FabricMaxRunSeconds();
    if (limit > 0 && !(estimateSeconds <= limit))
    {
        throw FabricConfigError(
            parameter,
            FabricValueText(value),
            fmt::format("a run estimated to finish within {} (the global value "
                        "GpuFabricMaxRunSeconds={:g}; 0 lifts the limit); {} would take about {}",
                        FabricDurationText(limit),
                        limit,
                        what,
                        FabricDurationText(estimateSeconds)));
    }
}

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_WORK_H
