/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * What a graph construction name is refused with, for the tests of the
 * graph grammar's bounds.
 */
#ifndef GPU_FABRIC_TEST_NAME_ERROR_H
#define GPU_FABRIC_TEST_NAME_ERROR_H

#include "ns3/fabric-error.h"
#include "ns3/topology-finder.h"

#include <string>

namespace gpu_fabric_test
{

/// \return what ns3::BuildFromName(\p name) throws ("" if it builds)
inline std::string
NameError(const std::string& name)
{
    try
    {
        ns3::BuildFromName(name);
    }
    catch (const ns3::FabricConfigError& e)
    {
        return e.what();
    }
    return "";
}

} // namespace gpu_fabric_test

#endif // GPU_FABRIC_TEST_NAME_ERROR_H
