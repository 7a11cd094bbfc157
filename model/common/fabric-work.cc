/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-work.h"

#include "ns3/double.h"
#include "ns3/global-value.h"

#include <cmath>

namespace ns3
{

namespace
{

// Globals, not attributes: the estimates are made by free functions and
// programs (graph names, BFB, sweeps) before any object exists.
GlobalValue g_maxRunSeconds("GpuFabricMaxRunSeconds",
                            "gpu-fabric: refuse a run whose up-front estimate of wall time "
                            "exceeds this many seconds (0: no limit)",
                            DoubleValue(43200),
                            MakeDoubleChecker<double>(0));

GlobalValue g_warnRunSeconds("GpuFabricWarnRunSeconds",
                             "gpu-fabric: programs warn up front, and show progress, for a run "
                             "whose estimate of wall time exceeds this many seconds",
                             DoubleValue(60),
                             MakeDoubleChecker<double>(0));

double
GetSeconds(GlobalValue& g)
{
    DoubleValue v;
    g.GetValue(v);
    return v.Get();
}

} // namespace

double
FabricMaxRunSeconds()
{
    return GetSeconds(g_maxRunSeconds);
}

double
FabricWarnRunSeconds()
{
    return GetSeconds(g_warnRunSeconds);
}

std::string
FabricDurationText(double seconds)
{
    if (!std::isfinite(seconds) || seconds > 3.15e10)
    {
        return "over 1000 years";
    }
    if (seconds < 120)
    {
        return fmt::format("{:.0f} s", std::max(seconds, 1.0));
    }
    if (seconds < 7200)
    {
        return fmt::format("{:.0f} minutes", seconds / 60);
    }
    if (seconds < 2 * 86400)
    {
        return fmt::format("{:.1f} hours", seconds / 3600);
    }
    if (seconds < 2 * 365 * 86400)
    {
        return fmt::format("{:.0f} days", seconds / 86400);
    }
    return fmt::format("{:.0f} years", seconds / (365 * 86400));
}

} // namespace ns3
