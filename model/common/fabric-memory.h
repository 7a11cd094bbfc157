/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_MEMORY_H
#define GPU_FABRIC_FABRIC_MEMORY_H

#include "fabric-error.h"

#include <algorithm>
#include <cstdint>
#include <fmt/format.h>
#include <string>
#include <string_view>
#include <sys/resource.h>
#include <unistd.h>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief The bytes a run of this process may allocate: the machine's physical
 * memory, or less under an address-space or data-size limit (ulimit -v,
 * ulimit -d). Up-front memory estimates are held against it: with Linux's
 * overcommit a larger request may succeed and the run die later, unreported.
 * \return the budget in bytes
 */
inline uint64_t
FabricMemoryBudgetBytes()
{
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGE_SIZE);
    uint64_t budget = pages > 0 && pageSize > 0
                          ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize)
                          : UINT64_MAX;
    for (const int resource : {RLIMIT_AS, RLIMIT_DATA})
    {
        rlimit limit{};
        if (getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        {
            budget = std::min<uint64_t>(budget, limit.rlim_cur);
        }
    }
    return budget;
}

/**
 * \ingroup gpu-fabric
 * \param bytes a size in bytes
 * \return it for a message, in decimal units ("8.6 GB")
 */
inline std::string
FabricBytesText(double bytes)
{
    static const char* const units[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB", "ZB"};
    size_t unit = 0;
    while (bytes >= 1000 && unit + 1 < sizeof(units) / sizeof(units[0]))
    {
        bytes /= 1000;
        ++unit;
    }
    return unit == 0 ? fmt::format("{:.0f} bytes", bytes)
                     : fmt::format("{:.1f} {}", bytes, units[unit]);
}

/**
 * \ingroup gpu-fabric
 * \brief Throw FabricConfigError unless a run's memory estimate fits
 * FabricMemoryBudgetBytes(): called before the run allocates, so that a run
 * that cannot fit is refused by the parameter that makes it large.
 * \param estimateBytes the estimate (a double: it may exceed 2^64)
 * \param parameter the parameter that sets the size
 * \param value its value
 * \param what what needs the memory, for the message ("routing tables (...)")
 * \throws FabricConfigError "invalid <parameter>: got '<value>', allowed: a
 *         run whose memory estimate fits in the <budget> ...; <what> would
 *         need about <estimate>"
 */
template <typename T>
inline void
FabricRequireMemory(double estimateBytes,
                    std::string_view parameter,
                    const T& value,
                    std::string_view what)
{
    const uint64_t budget = FabricMemoryBudgetBytes();
    if (estimateBytes > static_cast<double>(budget))
    {
        throw FabricConfigError(
            parameter,
            FabricValueText(value),
            fmt::format("a run whose memory estimate fits in the {} this process may use "
                        "(physical memory, or ulimit -v); {} would need about {}",
                        FabricBytesText(static_cast<double>(budget)),
                        what,
                        FabricBytesText(estimateBytes)));
    }
}

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_MEMORY_H
