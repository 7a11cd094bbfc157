/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Collective schedules' sizes in closed form (EstimateScheduleSize), and the
// memory check every generator makes with them before it allocates.
#include "../model/collective/collective-algorithms-internal.h"

#include "ns3/collective-algorithms.h"
#include "ns3/collective-schedule.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-memory.h"

#include <cstdint>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

const std::vector<std::string> kCollectives =
    {"allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce", "sendrecv"};

/// The domain sizes a request of \p n ranks may ask for with \p algorithm.
std::vector<uint32_t>
DomainSizes(const std::string& algorithm, uint32_t n)
{
    std::vector<uint32_t> d;
    if (algorithm != "hierarchical" && algorithm != "pxn")
    {
        return {0};
    }
    for (uint32_t k = 1; k <= n; ++k)
    {
        if (n % k == 0)
        {
            d.push_back(k);
        }
    }
    return d;
}

} // namespace

TEST(CollectiveScheduleSize, EstimateIsExactForEveryAlgorithm)
{
    // every combination MakeSchedule accepts, on 2..17 ranks, unchunked and
    // chunked (with a remainder), 1..3 channels, every domain size, a message
    // smaller than the pieces and one that is not
    uint64_t built = 0;
    for (uint32_t n = 2; n <= 17; ++n)
    {
        for (const std::string& coll : kCollectives)
        {
            for (const std::string& alg : AlgorithmsFor(coll))
            {
                for (uint32_t K : DomainSizes(alg, n))
                {
                    for (uint32_t ch = 1; ch <= 3; ++ch)
                    {
                        for (uint64_t bytes : {uint64_t{5}, uint64_t{2007}})
                        {
                            for (uint64_t chunk : {uint64_t{0}, uint64_t{37}})
                            {
                                ScheduleRequest q;
                                q.collective = coll;
                                q.algorithm = alg;
                                q.ranks = n;
                                q.bytes = bytes;
                                q.chunkBytes = chunk;
                                q.channels = ch;
                                q.root = n / 2;
                                q.domainSize = K;
                                const std::string what = fmt::format(
                                    "{}/{} n={} K={} channels={} bytes={} chunkBytes={}",
                                    coll,
                                    alg,
                                    n,
                                    K,
                                    ch,
                                    bytes,
                                    chunk);
                                const ScheduleSizeEstimate e = EstimateScheduleSize(q);
                                const CollectiveSchedule s = MakeSchedule(q);
                                ++built;
                                EXPECT_EQ(e.chunks, static_cast<double>(s.NumChunks())) << what;
                                EXPECT_EQ(e.ops, static_cast<double>(s.TotalOps())) << what;
                                EXPECT_GT(e.ops, 0) << what;
                                if (chunk == 0)
                                {
                                    EXPECT_EQ(e.depth, 1U) << what;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    EXPECT_GT(built, 3000U);
    // a communicator sets the ranks
    ScheduleRequest c;
    c.collective = "alltoall";
    c.algorithm = "pxn";
    c.communicator = {4, 5, 6, 7, 8, 9};
    c.domainSize = 3;
    c.bytes = 6000;
    c.chunkBytes = 100;
    c.channels = 2;
    EXPECT_EQ(EstimateScheduleSize(c).ops, static_cast<double>(MakeSchedule(c).TotalOps()));
}

TEST(CollectiveScheduleSize, OperationsThatCannotFitAreRefusedBeforeAllocating)
{
    // Each request's operations need far more memory than any machine here
    // (hundreds of GB to hundreds of TB) while its chunk table stays below
    // 2^31 chunks; before the check every one but the ring was built until
    // mimalloc aborted or the machine swapped (a tree of 2^28 ranks, a
    // send/receive ring listing 2^31 pairs). Refused by the parameter that
    // makes it large, with "operations" in the estimate, in constant time.
    struct Bad
    {
        std::string collective;
        std::string algorithm;
        uint32_t ranks;
        uint64_t bytes;
        uint64_t chunkBytes;
        uint32_t channels;
        uint32_t domainSize;
        std::string parameter;
    };

    const uint64_t tib16 = kMaxCollectiveBytes;
    const std::vector<Bad> cases = {
        {"allreduce", "ring", 1U << 20, 1 << 20, 0, 1, 0, "ranks"},
        {"allreduce", "ring", 1U << 16, tib16, 1 << 20, 1, 0, "chunkBytes"},
        {"allgather", "ring", 1U << 20, 1 << 20, 0, 1, 0, "ranks"},
        {"reducescatter", "ring", 1U << 16, tib16, 1 << 20, 1, 0, "chunkBytes"},
        {"allreduce", "tree", 1U << 28, 1 << 20, 0, 1024, 0, "ranks"},
        {"allreduce", "tree", 1U << 20, uint64_t{1} << 41, 1 << 20, 1, 0, "chunkBytes"},
        // one message per step: 2 log2 p messages per rank
        {"allreduce", "halving-doubling", 1U << 26, 1 << 30, 0, 1, 0, "ranks"},
        {"allreduce", "halving-doubling", 1U << 16, tib16, 1 << 16, 1, 0, "chunkBytes"},
        {"allreduce", "hierarchical", 1U << 26, 1 << 20, 0, 1, 1U << 13, "ranks"},
        {"allreduce", "hierarchical", 1U << 16, tib16, 1 << 14, 1, 1U << 8, "chunkBytes"},
        // all-to-all moves each chunk at most twice: near 2^31 chunks
        {"alltoall", "direct", 46340, 1 << 20, 0, 1, 0, "ranks"},
        {"alltoall", "direct", 4096, 4096ULL * 127 << 20, 1 << 20, 1, 0, "chunkBytes"},
        {"alltoall", "pxn", 46336, 1 << 20, 0, 1, 8, "ranks"},
        {"alltoall", "pxn", 4096, 4096ULL * 127 << 20, 1 << 20, 1, 64, "chunkBytes"},
        {"broadcast", "ring", 1U << 30, 1 << 20, 0, 1024, 0, "ranks"},
        {"broadcast", "tree", 1U << 16, tib16, 1 << 20, 1, 0, "chunkBytes"},
        {"reduce", "ring", 1U << 16, tib16, 1 << 20, 1, 0, "chunkBytes"},
        {"reduce", "tree", 1U << 30, 1 << 20, 0, 1024, 0, "ranks"},
        {"sendrecv", "direct", (1U << 31) - 1, 1 << 20, 0, 1, 0, "ranks"},
        {"sendrecv", "direct", 2, ((1ULL << 30) - 1) << 14, 1 << 14, 1, 0, "chunkBytes"},
    };
    const uint64_t budget = FabricMemoryBudgetBytes();
    size_t fitted = 0;
    for (const Bad& bad : cases)
    {
        ScheduleRequest q;
        q.collective = bad.collective;
        q.algorithm = bad.algorithm;
        q.ranks = bad.ranks;
        q.bytes = bad.bytes;
        q.chunkBytes = bad.chunkBytes;
        q.channels = bad.channels;
        q.domainSize = bad.domainSize;
        const std::string what = fmt::format("{}/{} ranks={} chunkBytes={}",
                                             bad.collective,
                                             bad.algorithm,
                                             bad.ranks,
                                             bad.chunkBytes);
        const ScheduleSizeEstimate e = EstimateScheduleSize(q);
        EXPECT_LT(e.chunks, 2147483648.0) << what;
        EXPECT_GT(e.ops, e.chunks) << what;
        EXPECT_GT(e.bytes, 150e9) << what;
        if (e.bytes <= static_cast<double>(budget))
        {
            // a machine this large would build it (for minutes): not here
            ++fitted;
            continue;
        }
        std::string said;
        std::string parameter;
        try
        {
            MakeSchedule(q);
        }
        catch (const FabricConfigError& err)
        {
            said = err.what();
            parameter = err.Parameter();
        }
        EXPECT_EQ(parameter, bad.parameter) << what << ": " << said;
        EXPECT_NE(said.find(fmt::format("the schedule ({:.0f} chunks, {:.0f} operations) would "
                                        "need about {}",
                                        e.chunks,
                                        e.ops,
                                        FabricBytesText(e.bytes))),
                  std::string::npos)
            << what << ": " << said;
        EXPECT_NE(said.find("a run whose memory estimate fits in the "), std::string::npos)
            << what << ": " << said;
    }
    // the documented example (doc/gpu-fabric.rst, Troubleshooting)
    ScheduleRequest tree;
    tree.collective = "allreduce";
    tree.algorithm = "tree";
    tree.ranks = 1U << 28;
    tree.bytes = 1 << 20;
    tree.channels = 1024;
    std::string said;
    try
    {
        MakeSchedule(tree);
    }
    catch (const FabricConfigError& err)
    {
        said = err.what();
    }
    EXPECT_EQ(said.rfind("invalid ranks: got '268435456'", 0), 0U) << said;
    EXPECT_NE(said.find("the schedule (2048 chunks, 2199023247360 operations) would need about "
                        "88.0 TB"),
              std::string::npos)
        << said;
    if (fitted > 0)
    {
        GTEST_SKIP() << fitted << " of " << cases.size() << " requests fit in this machine's "
                     << FabricBytesText(static_cast<double>(budget));
    }
}

TEST(CollectiveScheduleSize, HostileSizesAreRefusedInConstantTime)
{
    // a halving-doubling of more than 2^31 ranks looped for ever (p * 2
    // wrapped to 0), an all-to-all of 2^32 - 1 ranks reserved (2^32)^2
    // pieces: both are refused by the chunk limit before anything is built
    for (const auto& [coll, alg] :
         std::vector<std::pair<std::string, std::string>>{{"allreduce", "halving-doubling"},
                                                          {"alltoall", "direct"},
                                                          {"alltoall", "pxn"},
                                                          {"allreduce", "hierarchical"},
                                                          {"allreduce", "ring"},
                                                          {"sendrecv", "direct"}})
    {
        ScheduleRequest q;
        q.collective = coll;
        q.algorithm = alg;
        q.ranks = 4294967295U; // 3 x 5 x 17 x 257 x 65537
        q.domainSize = 65537;
        q.bytes = 1 << 20;
        q.channels = 65535;
        std::string said;
        try
        {
            MakeSchedule(q);
        }
        catch (const FabricConfigError& err)
        {
            said = err.what();
        }
        EXPECT_NE(said.find("a size giving fewer than 2147483648 chunks"), std::string::npos)
            << coll << "/" << alg << ": " << said;
    }
}
