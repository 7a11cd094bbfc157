/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Runs ns-3 TestSuites outside an ns-3 source tree (standalone build).
#include "ns3/test.h"

int
main(int argc, char** argv)
{
    return ns3::TestRunner::Run(argc, argv);
}
