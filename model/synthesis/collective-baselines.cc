/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "collective-baselines.h"

#include "ns3/fabric-error.h"

namespace ns3
{

namespace
{

void
RequireShape(uint32_t nodes, uint32_t degree)
{
    FabricRequire(nodes >= 2, "baseline hosts", nodes, "N >= 2");
    FabricRequire(degree >= 1, "baseline degree", degree, "d >= 1");
}

} // namespace

BaselineCost
ShiftedRingAllReduce(uint32_t nodes, uint32_t degree)
{
    RequireShape(nodes, degree);
    return {"ShiftedRing", 2 * (nodes - 1), Fraction(2 * (nodes - 1), nodes)};
}

BaselineCost
ShiftedRingAllGather(uint32_t nodes, uint32_t degree)
{
    RequireShape(nodes, degree);
    return {"ShiftedRing", nodes - 1, Fraction(nodes - 1, nodes)};
}

BaselineCost
DoubleBinaryTreeAllReduce(uint32_t nodes, uint32_t degree)
{
    RequireShape(nodes, degree);
    FabricRequire(degree >= 3,
                  "double binary tree degree",
                  degree,
                  "d >= 3 (a tree host needs a parent and two children)");
    uint32_t depth = 0;
    while ((uint64_t{1} << depth) < nodes)
    {
        ++depth;
    }
    // A host is an inner node (parent and two children) of one tree and a
    // leaf of the other: four tree cables. With d >= 4 each has its own port
    // and carries M/2 each way at B/d. With d = 3 two of them share a port,
    // whose arc then carries M each way (d/2 = 1.5 would undercut the
    // allreduce bound 2(N-1)/N).
    return {"DoubleBinaryTree", 2 * depth, degree >= 4 ? Fraction(degree, 2) : Fraction(degree)};
}

double
AlphaBetaTime(uint32_t steps,
              const Fraction& tb,
              double alphaSeconds,
              double bytes,
              double bandwidthBps)
{
    return alphaSeconds * steps + ToDouble(tb) * bytes * 8.0 / bandwidthBps;
}

} // namespace ns3
