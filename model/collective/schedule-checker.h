/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_SCHEDULE_CHECKER_H
#define GPU_FABRIC_SCHEDULE_CHECKER_H

#include "collective-schedule.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ns3
{

/// Outcome of ScheduleChecker, from the first check that failed.
enum class CheckStatus : uint8_t
{
    Ok,               //!< the schedule implements its collective
    InvalidStructure, //!< CollectiveSchedule::FindStructureError() found a defect
    Race,             //!< two accesses to one chunk of one rank, one a write, not ordered by deps
    Deadlock,         //!< a cycle of waits: some operations can never run
    SendWithoutData,  //!< a send of a chunk the rank holds nothing of
    ReduceIntoEmpty,  //!< a reduce-into a chunk the rank holds nothing of
    DoubleCount,      //!< a reduce would count some rank's contribution twice
    WrongResult,      //!< the postcondition of the collective does not hold
};

/// \param s a status \return its name (e.g. "double-count")
std::string_view CheckStatusName(CheckStatus s);

/**
 * \brief What the checker found.  For errors, \c rank / \c chunk / \c op locate
 *        the first problem (kNoRank / kNoIndex where not applicable) and
 *        \c message says it in words.
 */
struct ScheduleCheckResult
{
    CheckStatus status{CheckStatus::Ok}; //!< outcome
    std::string message;                 //!< human readable explanation ("ok" when Ok)
    uint32_t rank{kNoRank};              //!< first wrong rank (local index)
    uint32_t chunk{kNoIndex};            //!< first wrong chunk
    uint32_t op{kNoIndex};               //!< operation at fault, at \c rank
    std::vector<uint32_t> held;          //!< WrongResult/DoubleCount: contributions held
    std::vector<uint32_t> expected;      //!< WrongResult: contributions expected
    /// Deadlock: the cycle of waits as (rank, op) pairs, each waiting for the next.
    std::vector<std::pair<uint32_t, uint32_t>> cycle;

    /// \return true when the schedule is correct
    bool Ok() const
    {
        return status == CheckStatus::Ok;
    }
};

/**
 * \ingroup gpu-fabric
 * \brief Proves a schedule correct by symbolic execution, without a network.
 *
 * Every (rank, chunk) holds the set of ranks whose contributions it contains
 * (a bitset over the communicator).  A Send reads the sender's set when it
 * starts; the matching Recv with mode Copy overwrites the receiver's set with
 * it, with mode Reduce unions it into the receiver's set.  Errors:
 * - sending a chunk whose set is empty (the rank holds no data of it);
 * - reducing into an empty set (the receiver holds nothing to reduce into);
 * - reducing two sets that share a rank (that rank's contribution would be
 *   counted twice).
 *
 * Initial sets (which chunks each rank starts with), per collective:
 * - AllReduce, Reduce, ReduceScatter: every rank r holds every chunk as {r};
 * - AllGather: rank r holds the chunks whose src is r, as {r};
 * - AllToAll, SendRecv: chunk c is held by rank c.src, as {c.src} (the data
 *   c.src sends to c.dst);
 * - Broadcast: the root holds every chunk as {root}.
 * All other (rank, chunk) sets start empty.
 *
 * Postconditions (what must hold at the end; other sets are not examined):
 * - AllReduce: every rank holds every chunk as the full set {0..n-1};
 * - Reduce: the root holds every chunk as the full set;
 * - ReduceScatter: rank c.dst holds chunk c as the full set;
 * - AllGather: every rank holds every chunk c as {c.src};
 * - Broadcast: every rank holds every chunk as {root};
 * - AllToAll, SendRecv: rank c.dst holds chunk c as {c.src}.
 *
 * Order of checks: structure (CollectiveSchedule::FindStructureError);
 * races (conflicting accesses to one (rank, chunk), at least one of them a
 * Recv, must be ordered by the transitive dependencies in list order; this
 * makes the result the same in every execution order an executor may choose;
 * the one exception: Reduce receives into a chunk with no Send of it between
 * them may run in any order, since reductions commute, as long as each is
 * ordered after what preceded the first of them and what follows is ordered
 * after all of them; for a double count among them, \c held is what the
 * receiver held in the execution order the checker chose);
 * deadlock (the operations are executed in a dependency-respecting order; if
 * some can never run, a cycle of waits is reported); data errors (the first in
 * execution order); postcondition (the smallest wrong (rank, chunk), with what
 * it held and what was expected).
 *
 * Cost: time linear in operations times n/64 words; memory for the schedule's
 * operations plus one chunk's sets at a time (chunks are independent once the
 * order is fixed).
 */
class ScheduleChecker
{
  public:
    /**
     * \param schedule the schedule to prove
     * \return the result; Ok() when the schedule implements its collective
     */
    static ScheduleCheckResult Check(const CollectiveSchedule& schedule);

    /**
     * \brief Check and throw FabricConfigError (parameter "schedule") with the
     *        checker's message if the schedule is wrong.
     * \param schedule the schedule to prove
     */
    static void Require(const CollectiveSchedule& schedule);
};

} // namespace ns3

#endif // GPU_FABRIC_SCHEDULE_CHECKER_H
