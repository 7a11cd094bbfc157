/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_CHAKRA_TRACE_H
#define GPU_FABRIC_CHAKRA_TRACE_H

#include "program-runner.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief How ReadChakraTraces maps a trace's communication onto the module's
 * collectives.
 */
struct ChakraReplayOptions
{
    /// Algorithm of every collective that has one by this name
    /// (AlgorithmsFor); "auto": ring, and direct for all-to-all.
    std::string algorithm{"auto"};
    /// HB-domain size K given to hierarchical and pxn (0: none).
    uint32_t domainSize{0};
    /// Pipelining chunk of every collective (0: none).
    uint64_t chunkBytes{0};
    /// JSON file {"pg_name": [rank, ...], ...} giving each process group's
    /// ranks in communicator order. Empty: PREFIX.comm-groups.json when it
    /// exists, otherwise each pg_name's ranks are those whose traces use it,
    /// in ascending order.
    std::string commGroups;
};

/**
 * \ingroup gpu-fabric
 * \brief Chakra execution traces turned into a ParallelProgram.
 */
struct ChakraReplay
{
    ParallelProgram program;            //!< one task per trace node, per rank
    uint64_t nodes{0};                  //!< nodes read, all ranks
    std::vector<double> computeSeconds; //!< per rank: the durations of its non-communication nodes
};

/**
 * \ingroup gpu-fabric
 * \brief Read the Chakra execution traces PREFIX.0.et .. PREFIX.(n-1).et
 * (MLCommons Chakra's protobuf schema, as its tools write them) into a
 * program that runs on any Transport (RunProgram).
 *
 * Every node becomes a task of its rank that starts when its ctrl_deps and
 * data_deps are done. COMP_NODE, MEM_LOAD_NODE, MEM_STORE_NODE and the
 * storage, batch and checkpoint nodes take duration_micros; METADATA_NODE
 * takes no time. COMM_COLL_NODE (attributes comm_type, comm_size, pg_name)
 * is this rank's part of a collective: the k-th collective of a process
 * group on each of its ranks is one collective, of the same type and size.
 * comm_size is the collective's size as nccl-tests counts it. BARRIER is an
 * all-reduce of comm_size bytes (4 when it is 0); REDUCE and BROADCAST are
 * rooted at the group's first rank; REDUCE_SCATTER_BLOCK is a
 * reduce-scatter. COMM_SEND_NODE (comm_dst, comm_size, comm_tag) and
 * COMM_RECV_NODE (comm_src, comm_size, comm_tag) pair up in order per
 * (source, destination, tag).
 *
 * \param prefix path prefix of the files (the rank files must be 0..n-1 with
 *        none missing)
 * \param options collective mapping
 * \return the program, with what was read
 * \throw FabricConfigError naming the file, node id, field and value for a
 *        file that is missing, unreadable or does not parse, an unknown node
 *        or collective type, a dependency on a node that does not exist, a
 *        dependency cycle, collectives or sends that do not match across
 *        ranks, and bad comm-groups files
 */
ChakraReplay ReadChakraTraces(const std::string& prefix, const ChakraReplayOptions& options = {});

/**
 * \ingroup gpu-fabric
 * \brief Write \p program as Chakra execution traces PREFIX.RANK.et, one
 * node per task (node id = task index), and PREFIX.comm-groups.json, the
 * process groups (one per distinct communicator, named by number).
 *
 * Compute times are rounded to whole microseconds (Chakra's
 * duration_micros); algorithms and chunking are not part of the format.
 * \param program a valid program whose comms of one communicator appear in
 *        the same order on every member
 * \param prefix path prefix of the files
 * \throw FabricConfigError if the program cannot be written so that it reads
 *        back to the same comms, or a file cannot be written
 */
void WriteChakraTraces(const ParallelProgram& program, const std::string& prefix);

/**
 * \ingroup gpu-fabric
 * \brief The algorithm a replayed workload (Chakra, AICB) gives a collective.
 * \param collective a collective name (allreduce, allgather, ...)
 * \param algorithm the replay option: "auto", or an algorithm name
 * \return \p algorithm if the collective has it, else ring (direct for
 *         all-to-all)
 */
std::string ReplayAlgorithm(const std::string& collective, const std::string& algorithm);

/**
 * \ingroup gpu-fabric
 * \brief Refuse a replay algorithm option no collective has.
 * \param parameter its name, for the message
 * \param algorithm "auto" or an algorithm of some collective
 * \throw FabricConfigError otherwise
 */
void RequireReplayAlgorithm(const std::string& parameter, const std::string& algorithm);

/**
 * \ingroup gpu-fabric
 * \brief Check, when a workload is read, what building \p comm's schedule
 * would check when the run reaches it (sizes, algorithm, members).
 * \param comm a collective of a replayed workload
 * \param where what the message names (file and position)
 * \throw FabricConfigError naming \p where and the comm's label
 */
void RequireRunnableComm(const ProgramComm& comm, const std::string& where);

} // namespace ns3

#endif // GPU_FABRIC_CHAKRA_TRACE_H
