/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Decode a PCAP file with tshark (Wireshark's dissectors; installed by
 * scripts/install-deps.sh) for the tests that check captures open there.
 */
#ifndef GPU_FABRIC_TEST_TSHARK_H
#define GPU_FABRIC_TEST_TSHARK_H

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <vector>

namespace gpu_fabric_test
{

/**
 * One line per frame of \p pcap, the \p fields (tshark -e names) separated
 * by tabs; a test failure if tshark cannot run or read the file. \p options
 * go before the file (e.g. -X lua_script:...).
 */
inline std::vector<std::string>
TsharkFields(const std::string& pcap,
             const std::vector<std::string>& fields,
             const std::string& options = "")
{
    const std::string out = pcap + ".tshark.txt";
    std::string cmd = "tshark " + options + " -r '" + pcap + "' -T fields";
    for (const auto& f : fields)
    {
        cmd += " -e " + f;
    }
    cmd += " > '" + out + "' 2> '" + out + ".err'";
    const int status = std::system(cmd.c_str());
    EXPECT_EQ(status, 0) << cmd << " (tshark comes with scripts/install-deps.sh)";
    std::vector<std::string> lines;
    std::ifstream in(out);
    std::string line;
    while (std::getline(in, line))
    {
        lines.push_back(line);
    }
    return lines;
}

/// Split a tshark fields line at tabs.
inline std::vector<std::string>
SplitTabs(const std::string& line)
{
    std::vector<std::string> parts;
    std::stringstream ss(line);
    std::string part;
    while (std::getline(ss, part, '\t'))
    {
        parts.push_back(part);
    }
    return parts;
}

} // namespace gpu_fabric_test

#endif // GPU_FABRIC_TEST_TSHARK_H
