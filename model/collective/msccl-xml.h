/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_MSCCL_XML_H
#define GPU_FABRIC_MSCCL_XML_H

#include "collective-schedule.h"

#include <cstdint>
#include <string>

namespace ns3
{

/// What MscclXml::Export writes besides the schedule.
struct MscclExportOptions
{
    std::string name;               //!< algo name; empty: the schedule's algorithm name
    std::string protocol{"Simple"}; //!< algo proto: Simple, LL or LL128
};

/**
 * \ingroup gpu-fabric
 * \brief CollectiveSchedules as MSCCL algorithm XML, out and in.
 *
 * The format is the one MSCCL's runtime reads and msccl-tools writes: one
 * \c algo element (name, proto, nchannels, nchunksperloop, ngpus, coll,
 * inplace), one \c gpu per rank (id, i_chunks, o_chunks, s_chunks), thread
 * blocks \c tb (id, send, recv, chan) each running its \c step elements one
 * after the other (s, type, srcbuf, srcoff, dstbuf, dstoff, cnt, depid,
 * deps, hasdep).  A step waits for the step before it in its thread block
 * and for at most one step of another thread block (depid, deps); the
 * runtime signals only steps marked hasdep="1".
 *
 * Export: every chunk of the schedule is one MSCCL chunk (chunks whose
 * sizes differ beyond rounding are several, in proportion); chunks are laid
 * out as MSCCL expects (allgather: rank r's contribution at offsets r*k ..,
 * reduce_scatter: rank r's piece there), in place (inplace="1", one buffer:
 * "o" for allgather, "i" otherwise).  Each rank gets one thread block per
 * (peer, direction, channel): a thread block sends to one peer or receives
 * from one peer, on one channel, its steps in the rank's list order.  A
 * dependency on another thread block becomes depid/deps; a second one a
 * "nop" step before it, as msccl-tools writes them.  AllToAll and SendRecv
 * are refused.
 *
 * Import: the in-place collectives allreduce, allgather, reduce_scatter,
 * broadcast and reduce (these two with a \c root attribute); step types s,
 * r, rrc, rcs, rrs, rrcs and nop.  The k-th send of a thread block to a peer
 * on a channel matches the k-th receive of that peer's thread block from it
 * on that channel.  The schedule is built in an order that respects every
 * step's waits, proven by ScheduleChecker; every defect is a
 * FabricConfigError naming the element (with its line), the attribute, the
 * value and what is allowed, or, for a file whose steps are well formed but
 * do not implement the collective, the first wrong rank and chunk.
 */
class MscclXml
{
  public:
    /**
     * \param schedule a structurally valid schedule
     * \param options name and protocol
     * \return the MSCCL XML text
     */
    static std::string Export(const CollectiveSchedule& schedule,
                              const MscclExportOptions& options = {});

    /**
     * \param schedule a structurally valid schedule
     * \param path file to write (FabricConfigError if it cannot be written)
     * \param options name and protocol
     */
    static void Save(const CollectiveSchedule& schedule,
                     const std::string& path,
                     const MscclExportOptions& options = {});

    /**
     * \param text MSCCL XML
     * \param totalBytes the collective's total bytes (CollectiveType), split
     *        over the nchunksperloop chunks as SplitBytes() does
     * \param source what to call the text in messages (a file name)
     * \return the schedule, proven correct by ScheduleChecker
     */
    static CollectiveSchedule Import(const std::string& text,
                                     uint64_t totalBytes,
                                     const std::string& source = "MSCCL XML");

    /**
     * \param path MSCCL XML file
     * \param totalBytes as for Import()
     * \return the schedule
     */
    static CollectiveSchedule Load(const std::string& path, uint64_t totalBytes);
};

} // namespace ns3

#endif // GPU_FABRIC_MSCCL_XML_H
