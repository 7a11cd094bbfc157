/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_COLLECTIVE_ALGORITHMS_H
#define GPU_FABRIC_COLLECTIVE_ALGORITHMS_H

#include "collective-schedule.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Builds a schedule from a sequential program of transfers and derives
 *        the dependencies from the data.
 *
 * A generator calls Transfer(src, dst, chunk, mode) in an order that would be
 * correct if run one transfer at a time.  The builder appends the Send to
 * src's list and the Recv to dst's list (so the k-th send src->dst matches the
 * k-th recv at dst from src by construction) and gives each op exactly the
 * dependencies the data needs, per (rank, chunk):
 * - a Send depends on the last Recv into that chunk (read after write);
 * - a Recv depends on the last Recv into it (write after write) and on every
 *   Send of it since then (write after read);
 * - with SetCommutingReduces(true), Reduce receives into a chunk with no
 *   Send of it between them form a group whose members wait only for what
 *   the first one waits for: reductions commute (ScheduleChecker accepts such
 *   groups), so a node can take the contributions of several children at
 *   once, as NCCL's trees do.  Whatever reads or overwrites the chunk next
 *   waits for the whole group.
 * Everything else may run concurrently, which is what lets chunks pipeline.
 * Since every dependency points to an earlier transfer of the sequential
 * program, a schedule built this way cannot deadlock.
 *
 * Algorithms that run step by step (a step being, say, one sendrecv of MPI)
 * call EndStep() between steps; see there.
 */
class ScheduleBuilder
{
  public:
    /// \param schedule the schedule to append to (chunks must exist before Transfer)
    explicit ScheduleBuilder(CollectiveSchedule& schedule);

    /**
     * \brief Move one chunk (or a run of consecutive chunks) from \p src to \p dst.
     * \param src sender (local index)
     * \param dst receiver (local index)
     * \param chunk chunk index
     * \param mode what the receiver does with it
     * \param channel channel index recorded on both operations
     * \param count consecutive chunks chunk .. chunk + count - 1 moved as one
     *        message (dependencies as if each chunk moved alone)
     */
    void Transfer(uint32_t src,
                  uint32_t dst,
                  uint32_t chunk,
                  RecvMode mode,
                  uint16_t channel = 0,
                  uint32_t count = 1);

    /**
     * \brief Let Reduce receives into one chunk with no Send between them
     *        run in any order (see the class description).  Off by default.
     * \param commute whether later Transfer() calls group such receives
     */
    void SetCommutingReduces(bool commute);

    /**
     * \brief End a step: every op a rank gets from now on also waits until
     *        that rank has finished all its ops of the earlier steps.
     *
     * Without it, a rank whose data for step s+1 is ready starts that step
     * while step s still runs elsewhere, and the two steps then share links
     * (step by step, as MPI's and NCCL's implementations run, each step has
     * the links to itself).  The new ops depend on the rank's last Send to
     * and last Recv from each peer of its latest step: messages of one
     * connection are delivered first in, first out, and in a step whose ops
     * depend only on earlier steps they are issued in list order, so those
     * finish last.  Earlier steps are covered transitively.  This adds at
     * most two dependencies per peer of the previous step to each op.
     */
    void EndStep();

  private:
    /// Accesses to one (rank, chunk) since its last write.
    struct Access
    {
        uint32_t writer{kNoIndex};   //!< last Recv into the chunk (first of a group)
        uint32_t group{kNoIndex};    //!< Reduce group in m_groups, if more than one
        bool writerReduces{false};   //!< writer is a Reduce receive
        uint32_t readers[2]{0, 0};   //!< first Sends of it since then
        uint32_t nReaders{0};        //!< number of Sends since then
        uint32_t overflow{kNoIndex}; //!< further Sends, index into m_overflow
    };

    /// \return the access record of (rank, chunk)
    Access& At(uint32_t rank, uint32_t chunk);

    /// Adds the last write of \p a (all of its Reduce group) to m_deps.
    void AddWriters(const Access& a);

    /// Adds \p rank's step fence to m_deps, then sorts them and drops duplicates.
    void AddFence(uint32_t rank);

    CollectiveSchedule& m_s;                       //!< schedule being built
    bool m_dense;                                  //!< dense table or hash map
    std::vector<Access> m_table;                   //!< dense: rank * chunks + chunk
    std::unordered_map<uint64_t, Access> m_map;    //!< sparse
    std::vector<std::vector<uint32_t>> m_overflow; //!< readers beyond two
    std::vector<uint32_t> m_deps;                  //!< scratch
    std::vector<uint32_t> m_stepStart;             //!< per rank: first op of its current step
    std::vector<std::vector<uint32_t>> m_fence;    //!< per rank: ops new ops wait for (sorted)
    std::vector<uint32_t> m_seen;                  //!< scratch for EndStep: per (kind, peer)
    std::vector<std::vector<uint32_t>> m_groups;   //!< open Reduce groups (op indices)
    std::vector<uint32_t> m_freeGroups;            //!< reusable entries of m_groups
    bool m_commute{false};                         //!< group commuting Reduce receives
};

/**
 * \brief A rooted tree over ranks 0..n-1 (used by the tree algorithms).
 */
struct BinaryTree
{
    uint32_t root{0};                            //!< the root rank
    std::vector<uint32_t> parent;                //!< parent of each rank (kNoRank at the root)
    std::vector<std::vector<uint32_t>> children; //!< children of each rank, ascending
    uint32_t height{0};                          //!< edges on the longest root-leaf path
    std::vector<uint32_t> topDown;               //!< ranks by increasing depth (root first)
};

/**
 * \brief The in-order binary tree NCCL's trees are built from.
 *
 * Rank r > 0 with lowest set bit b sits at height log2(b) of an in-order tree:
 * its parent is whichever of r - b, r + b has lowest set bit 2b; if that is
 * not below n, its nearest ancestor below n, r - b, is used instead.  Rank 0
 * is the root and has one child.  Odd ranks are leaves.
 * \param ranks n >= 1
 * \return the tree
 */
BinaryTree InOrderBinaryTree(uint32_t ranks);

/**
 * \brief NCCL's two complementary trees: tree 0 is InOrderBinaryTree(n);
 *        tree 1 places rank n-1-x where tree 0 has x when n is even (mirror),
 *        and rank (x+1) mod n when n is odd (shift).  So the leaves of one
 *        tree (odd ranks) are the inner nodes of the other, and a rank sends
 *        and receives about the same in both.
 * \param ranks n >= 2
 * \return the two trees
 */
std::array<BinaryTree, 2> DoubleBinaryTree(uint32_t ranks);

/**
 * \brief Ring AllReduce: reduce-scatter then allgather around the ring
 *        r -> r+1 mod n, 2(n-1) steps.
 *
 * Layout: the buffer is split into \p channels parts, each part into n
 * pieces, each piece into P chunks of at most \p chunkBytes (P is the same for
 * all pieces, from the largest one; chunkBytes 0 = no pipelining, P = 1);
 * every split spreads remainders as SplitBytes() does.  Chunk index
 * ((channel * n) + piece) * P + sub.  Channel c's ring runs on channel c, all
 * rings in the same direction.  Each rank sends 2(n-1) * channels * P messages.
 * \param ranks n >= 2
 * \param bytes buffer size
 * \param chunkBytes pipelining chunk (0: none)
 * \param channels rings in parallel (>= 1)
 * \return the schedule
 */
CollectiveSchedule RingAllReduce(uint32_t ranks,
                                 uint64_t bytes,
                                 uint64_t chunkBytes = 0,
                                 uint32_t channels = 1);

/**
 * \brief Ring AllGather: n-1 steps; rank r contributes piece r of every channel
 *        (layout as RingAllReduce; chunk src = piece).
 * \param ranks n >= 2 \param bytes output buffer size \param chunkBytes pipelining chunk
 * \param channels rings in parallel \return the schedule
 */
CollectiveSchedule RingAllGather(uint32_t ranks,
                                 uint64_t bytes,
                                 uint64_t chunkBytes = 0,
                                 uint32_t channels = 1);

/**
 * \brief Ring ReduceScatter: n-1 steps; rank r ends with piece r of every
 *        channel reduced (layout as RingAllReduce; chunk dst = piece).
 * \param ranks n >= 2 \param bytes input buffer size \param chunkBytes pipelining chunk
 * \param channels rings in parallel \return the schedule
 */
CollectiveSchedule RingReduceScatter(uint32_t ranks,
                                     uint64_t bytes,
                                     uint64_t chunkBytes = 0,
                                     uint32_t channels = 1);

/**
 * \brief NCCL's double binary tree AllReduce.
 *
 * The buffer is split into 2 * channels parts; part k runs on tree k mod 2 of
 * DoubleBinaryTree() and on channel k.  Each part is cut into P chunks of at
 * most \p chunkBytes.  Per chunk: reduce up the tree (each node reduces its
 * children's data into its own, then sends to its parent), then broadcast
 * down from the root.  Chunk index k * P + sub.
 * \param ranks n >= 2 \param bytes buffer size \param chunkBytes pipelining chunk
 * \param channels tree pairs in parallel \return the schedule
 */
CollectiveSchedule DoubleBinaryTreeAllReduce(uint32_t ranks,
                                             uint64_t bytes,
                                             uint64_t chunkBytes = 0,
                                             uint32_t channels = 1);

/**
 * \brief The double binary tree AllReduce on two given trees (layout and
 *        order as DoubleBinaryTreeAllReduce(ranks, ...), which passes
 *        DoubleBinaryTree(ranks)); for trees placed on a network's links.
 * \param trees two trees over the same ranks 0..n-1 (parent, root and
 *        topDown are read; children are not)
 * \param bytes buffer size \param chunkBytes pipelining chunk
 * \param channels tree pairs in parallel \return the schedule
 * \throws FabricConfigError naming "trees[k]" for a tree that is not one
 */
CollectiveSchedule DoubleBinaryTreeAllReduce(const std::array<BinaryTree, 2>& trees,
                                             uint64_t bytes,
                                             uint64_t chunkBytes = 0,
                                             uint32_t channels = 1);

/**
 * \brief Recursive halving-doubling (Rabenseifner) AllReduce for any n.
 *
 * With p the largest power of two <= n, ranks p..n-1 first reduce their whole
 * buffer into ranks 0..n-p-1 (fold), ranks 0..p-1 run recursive halving
 * (reduce-scatter, partner distance p/2, p/4, ..., 1: each keeps one half and
 * sends the other) and recursive doubling (allgather, distances 1, ..., p/2),
 * then ranks 0..n-p-1 copy the result back to ranks p..n-1 (unfold).
 * Layout: channels parts x p pieces x P chunks, index ((channel * p) + piece) * P + sub.
 * \param ranks n >= 2 \param bytes buffer size \param chunkBytes pipelining chunk
 * \param channels independent instances on buffer parts \return the schedule
 */
CollectiveSchedule HalvingDoublingAllReduce(uint32_t ranks,
                                            uint64_t bytes,
                                            uint64_t chunkBytes = 0,
                                            uint32_t channels = 1);

/**
 * \brief Two-level AllReduce for HB domains (the rail-only paper's scheme).
 *
 * The communicator is domain-major: local index g is in domain g / K at local
 * index g % K.  (1) ring reduce-scatter inside each domain (over NVLink):
 * local index l ends with piece l reduced over its domain; (2) ring allreduce
 * of piece l among the D = n / K ranks with local index l (rail l); (3) ring
 * allgather inside each domain.  K = 1 is a flat ring over all ranks; K = n a
 * single-domain ring.  Layout: channels parts x K pieces x D sub-pieces x P
 * chunks, index (((channel * K) + piece) * P + sub) * D + subpiece, so that
 * a domain step moves chunk sub of a piece's D sub-pieces as one op
 * (CollectiveOp::count = D).
 * \param ranks n >= 2 \param domainSize K, dividing n \param bytes buffer size
 * \param chunkBytes pipelining chunk \param channels rings in parallel
 * \return the schedule
 */
CollectiveSchedule HierarchicalAllReduce(uint32_t ranks,
                                         uint32_t domainSize,
                                         uint64_t bytes,
                                         uint64_t chunkBytes = 0,
                                         uint32_t channels = 1);

/**
 * \brief Direct AllToAll: every rank sends piece j of its buffer straight to
 *        rank j, in shifted order (step s: rank i sends to i+s mod n).
 *
 * Layout: chunk ((src * n + dst) * channels + channel) * P + sub; the piece of
 * a rank to itself is a chunk too (it never moves) so that the bytes of every
 * source add up to \p bytes, as nccl-tests counts them.
 * \param ranks n >= 2 \param bytes send buffer size per rank \param chunkBytes
 * pipelining chunk \param channels channels per pair \return the schedule
 */
CollectiveSchedule DirectAllToAll(uint32_t ranks,
                                  uint64_t bytes,
                                  uint64_t chunkBytes = 0,
                                  uint32_t channels = 1);

/**
 * \brief Rail-aware (PXN) AllToAll for rail-only networks.
 *
 * Communicator domain-major with K ranks per HB domain (see
 * HierarchicalAllReduce).  Data from i to j moves:
 * - in one hop if i and j share a domain (NVLink) or a local index (rail);
 * - otherwise in two hops: first over NVLink to m = domain(i) * K + local(j),
 *   the GPU of i's domain on j's rail, then over that rail from m to j.
 * So all traffic between domains stays on rails.  Layout as DirectAllToAll.
 * \param ranks n >= 2 \param domainSize K, dividing n \param bytes send buffer
 * size per rank \param chunkBytes pipelining chunk \param channels channels
 * \return the schedule
 */
CollectiveSchedule PxnAllToAll(uint32_t ranks,
                               uint32_t domainSize,
                               uint64_t bytes,
                               uint64_t chunkBytes = 0,
                               uint32_t channels = 1);

/**
 * \brief Pipelined chain Broadcast: root -> root+1 -> ... -> root-1 (mod n),
 *        each chunk forwarded as soon as it arrived.  Layout: channels parts x
 *        P chunks, index channel * P + sub.
 * \param ranks n >= 2 \param root local index of the root \param bytes buffer size
 * \param chunkBytes pipelining chunk \param channels chains in parallel
 * \return the schedule
 */
CollectiveSchedule ChainBroadcast(uint32_t ranks,
                                  uint32_t root,
                                  uint64_t bytes,
                                  uint64_t chunkBytes = 0,
                                  uint32_t channels = 1);

/**
 * \brief Pipelined chain Reduce: root-1 -> root-2 -> ... -> root (mod n),
 *        each rank reducing into its chunk before forwarding.  Layout as ChainBroadcast.
 * \param ranks n >= 2 \param root local index of the root \param bytes buffer size
 * \param chunkBytes pipelining chunk \param channels chains in parallel
 * \return the schedule
 */
CollectiveSchedule ChainReduce(uint32_t ranks,
                               uint32_t root,
                               uint64_t bytes,
                               uint64_t chunkBytes = 0,
                               uint32_t channels = 1);

/**
 * \brief Pipelined binary tree Broadcast on InOrderBinaryTree(n) with rank x
 *        of the tree placed at (x + root) mod n.  Layout as ChainBroadcast.
 * \param ranks n >= 2 \param root local index of the root \param bytes buffer size
 * \param chunkBytes pipelining chunk \param channels trees in parallel
 * \return the schedule
 */
CollectiveSchedule TreeBroadcast(uint32_t ranks,
                                 uint32_t root,
                                 uint64_t bytes,
                                 uint64_t chunkBytes = 0,
                                 uint32_t channels = 1);

/**
 * \brief Pipelined binary tree Reduce (the tree of TreeBroadcast, data flowing up).
 * \param ranks n >= 2 \param root local index of the root \param bytes buffer size
 * \param chunkBytes pipelining chunk \param channels trees in parallel
 * \return the schedule
 */
CollectiveSchedule TreeReduce(uint32_t ranks,
                              uint32_t root,
                              uint64_t bytes,
                              uint64_t chunkBytes = 0,
                              uint32_t channels = 1);

/**
 * \brief Point-to-point transfers for pipeline parallelism: for each (src,
 *        dst) pair, src sends \p bytes to dst.  Layout: per pair, channels
 *        parts x P chunks, in pair order.
 * \param ranks n >= 2 \param pairs (src, dst) pairs, src != dst, no pair twice
 * \param bytes bytes per pair \param chunkBytes pipelining chunk
 * \param channels channels per pair \return the schedule
 */
CollectiveSchedule SendRecvPairs(uint32_t ranks,
                                 const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
                                 uint64_t bytes,
                                 uint64_t chunkBytes = 0,
                                 uint32_t channels = 1);

/**
 * \brief nccl-tests' sendrecv: every rank r sends \p bytes to r+1 mod n (and
 *        receives from r-1).  For a pipeline without wrap-around use SendRecvPairs.
 * \param ranks n >= 2 \param bytes bytes per rank \param chunkBytes pipelining chunk
 * \param channels channels per pair \return the schedule
 */
CollectiveSchedule RingSendRecv(uint32_t ranks,
                                uint64_t bytes,
                                uint64_t chunkBytes = 0,
                                uint32_t channels = 1);

/**
 * \brief What the name-based factory builds.
 */
struct ScheduleRequest
{
    std::string
        collective;        //!< allreduce|allgather|reducescatter|alltoall|broadcast|reduce|sendrecv
    std::string algorithm; //!< ring|tree|halving-doubling|hierarchical|direct|pxn
    uint32_t ranks{0};     //!< communicator size (or 0: size of \c communicator)
    uint64_t bytes{0};     //!< total bytes (see CollectiveType)
    uint64_t chunkBytes{0};             //!< pipelining chunk (0: none)
    uint32_t channels{1};               //!< channels (rings / tree pairs) in parallel
    uint32_t root{0};                   //!< root for broadcast / reduce
    uint32_t domainSize{0};             //!< K for hierarchical / pxn (must divide ranks)
    std::vector<uint32_t> communicator; //!< global rank ids (empty: 0..ranks-1)
};

/**
 * \brief The algorithms the factory accepts for a collective.
 * \param collective a collective name
 * \return algorithm names (throws FabricConfigError for an unknown collective)
 */
std::vector<std::string> AlgorithmsFor(std::string_view collective);

/// The largest collective MakeSchedule takes, bytes (2^44: 16 TiB).
constexpr uint64_t kMaxCollectiveBytes = uint64_t{1} << 44;

/**
 * \brief Build a schedule by names:
 * - allreduce: ring, tree (double binary tree), halving-doubling, hierarchical;
 * - allgather, reducescatter: ring;
 * - alltoall: direct, pxn;
 * - broadcast, reduce: ring (pipelined chain), tree;
 * - sendrecv: direct (RingSendRecv).
 * \param request what to build
 * \return the schedule, with Algorithm() set to the algorithm name
 * \throws FabricConfigError for unknown names, impossible combinations and bad parameters
 */
CollectiveSchedule MakeSchedule(const ScheduleRequest& request);

} // namespace ns3

#endif // GPU_FABRIC_COLLECTIVE_ALGORITHMS_H
