/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_DOC_H
#define GPU_FABRIC_DOC_H

/**
 * \file
 * \ingroup gpu-fabric
 * Doxygen groups of the gpu-fabric module (as ns-3 keeps them in a module's
 * doc/<module>.h; nothing to include).
 */

/**
 * \defgroup gpu-fabric GPU fabric
 *
 * Networks of GPU training clusters in ns-3: rail-only networks, rail-optimized
 * and classic fat-trees, and distilled direct-connect topologies, under the
 * same collective traffic and LLM training workloads.
 *
 * The module's layers, bottom first (each uses only those below it; the build
 * enforces it): topology (FabricTopology, presets, graph families, routing,
 * cost), fabric (FabricNetDevice, FabricChannel, FabricSwitch, FabricGpu),
 * transport (Transport, PacketTransport, FlowTransport), collective
 * (CollectiveSchedule, CollectiveRun), synthesis (BFB, the topology finder)
 * and workload (LlmModel, Parallelism, iteration programs), then the helpers
 * (FabricHelper, CollectiveHelper, FaultHelper, FabricLinkHelper).
 * See doc/gpu-fabric.rst for the model, its usage and its validation.
 */

/**
 * \ingroup gpu-fabric
 * \defgroup gpu-fabric-tests gpu-fabric tests
 * The module's GoogleTest suites (test/) and its ns-3 TestSuite.
 */

#endif // GPU_FABRIC_DOC_H
