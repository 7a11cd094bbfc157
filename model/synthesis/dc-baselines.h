/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_DC_BASELINES_H
#define GPU_FABRIC_DC_BASELINES_H

#include "ns3/collective-algorithms.h"
#include "ns3/collective-schedule.h"
#include "ns3/direct-connect-graph.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Arc-disjoint Hamiltonian cycles of a direct-connect graph, found by a
 *        budgeted depth-first search.
 *
 * First the shifted rings x -> x + s mod N (s coprime to N) whose arcs all
 * exist (a circulant's own rings); then a search on the remaining arcs, and
 * also from scratch.
 * The search (Warnsdorff order: the next host with the fewest onward choices
 * first, ties broken by a fixed-seed shuffle, so results are reproducible)
 * looks for a cycle over arcs not used yet; on a graph where every arc has
 * its reverse, the reverse of a cycle found is taken next when its arcs are
 * still free.  Several attempts with different tie-breaks are made and the one
 * with the most rings is kept.  It is a heuristic: circulants, tori and rings
 * decompose at once; a graph without the rings, or where the budget runs
 * out, gets fewer (possibly none).
 * \param g the graph
 * \param maxRings stop after this many rings (normally the degree)
 * \return each ring as its host order (ring edge i: order[i] -> order[i + 1 mod N])
 */
std::vector<std::vector<uint32_t>> FindArcDisjointRings(const DirectConnectGraph& g,
                                                        uint32_t maxRings);

/**
 * \ingroup gpu-fabric
 * \brief Ring allreduce on several rings at once, each with its own host
 *        order and its own channel, each carrying an equal part of the buffer.
 *
 * Layout: the buffer is split into k = rings.size() parts (SplitBytes), each
 * part into N pieces; chunk ring * N + piece.  Ring c reduce-scatters then
 * allgathers its part around rings[c] (2(N-1) steps; the host at position i
 * passes piece i - t - 1, then i - t, to the host at position i + 1).
 * \param rings host orders, each a permutation of 0..N-1
 * \param bytes buffer size
 * \return the schedule (AllReduce on N ranks, rank = host)
 */
CollectiveSchedule MultiRingAllReduce(const std::vector<std::vector<uint32_t>>& rings,
                                      uint64_t bytes);

/// One message of a step of a baseline's step-synchronous model.
struct DcMessage
{
    uint32_t src; //!< sending host
    uint32_t dst; //!< receiving host
    double bytes; //!< bytes
};

/**
 * \ingroup gpu-fabric
 * \brief A baseline allreduce as a schedule on a direct-connect graph's hosts,
 *        with the steps its formula charges.
 */
struct DcBaseline
{
    std::string algorithm;       //!< ring, shifted-ring, tree or halving-doubling
    CollectiveSchedule schedule; //!< AllReduce, rank r = host r
    uint64_t messages{0};        //!< sends of the schedule (its TotalOps() / 2)
    /// Ring-based: the rings' host orders (ring: one; shifted-ring: up to d).
    std::vector<std::vector<uint32_t>> rings;
    /// Ring-based: how many rings run over arcs only (the rest over shortest paths).
    uint32_t nativeRings{0};
    /// The formula's steps, each a set of concurrent messages.
    std::vector<std::vector<DcMessage>> steps;
    /// How many times each step repeats (the ring's 2(N-1) steps are alike).
    std::vector<uint32_t> repeats;
    /// Tree only: the formula pipelines the chunks; its latency is twice this
    /// many hops (the deepest root-leaf path, up then down), its bandwidth term
    /// the busiest arc over all steps together (0: step-synchronous).
    uint32_t pipelineHops{0};
    /// Tree only: the two trees over hosts the schedule runs
    /// (PlaceDoubleBinaryTree's, else NCCL's DoubleBinaryTree with ranks = hosts).
    std::vector<BinaryTree> trees;
    /// Tree only: whether every tree edge is a link of its own (PlaceDoubleBinaryTree).
    bool treeOnLinks{false};
    std::string routing; //!< how the schedule meets the graph, for output
};

/// PlaceDoubleBinaryTree's default budget: search steps.
constexpr uint64_t kDcTreeSearchBudget = 2'000'000;

/// The two trees PlaceDoubleBinaryTree found, or why none.
struct DcTreePlacement
{
    std::vector<BinaryTree> trees; //!< the two trees over hosts (empty: none found)
    uint64_t tried{0};             //!< search steps taken
    bool exhausted{false};         //!< none found: the budget ran out
    bool complete{false};          //!< none found: none exists (every candidate tried)
};

/**
 * \ingroup gpu-fabric
 * \brief A double binary tree placed on a graph's links: two spanning trees
 *        of the hosts, every edge of either joining two hosts linked both
 *        ways (an arc each way), no two edges, of one tree or of both, on
 *        the same link.
 *
 * As in NCCL's double binary tree, every host has at most two children in
 * each tree and is inner (has children) in at most one of them, a leaf in
 * the other; so a host has at most 3 + 1 tree edges, and on a degree-4 graph
 * each tree edge gets a port of its own (up on one arc, down on its
 * reverse).  The trees are no higher than NCCL's (DoubleBinaryTree(N)'s
 * height, about log2 N).  The search, deterministic and budgeted: the hosts
 * are split into two halves (the hosts each tree may be inner in; with N
 * even host 0 in the first) in lexicographic order; for a split whose
 * halves are connected by their own links, every binary spanning tree of
 * each half within the height (two children first, at most 4096 per half)
 * is kept when it leaves every host of the other half a linked free slot
 * (and enough slots), and paired with every one kept of the other; then
 * every host is hung as a leaf of the other half's tree by backtracking
 * (fewest choices first), each on a link of its own to a host with a free
 * child slot within the height.
 * \param g the graph
 * \param budget search steps at most (splits, tree growth, tree checks,
 *        pairs and hanging steps)
 * \return the placement
 */
DcTreePlacement PlaceDoubleBinaryTree(const DirectConnectGraph& g,
                                      uint64_t budget = kDcTreeSearchBudget);

/// The algorithm names BuildDcBaseline accepts.
const std::vector<std::string>& DcBaselineNames();

/**
 * \ingroup gpu-fabric
 * \brief Build a baseline allreduce on \p g's hosts.
 *
 * - "ring": one ring, a Hamiltonian cycle of \p g when FindArcDisjointRings
 *   finds one, else hosts 0..N-1 in order, neighbours joined by shortest paths;
 * - "shifted-ring" (the paper's ShiftedRing): d rings, each carrying M/d, on
 *   arc-disjoint Hamiltonian cycles so that every port is used; when fewer
 *   than d are found, the missing rings are the found (or 0..N-1) orders
 *   shifted (host at position i s positions on), joined by shortest paths;
 * - "tree": a double binary tree allreduce (DoubleBinaryTreeAllReduce),
 *   pipelined in chunks of max(64 KiB, M/128), on two trees placed so that
 *   every tree edge is a link of its own (PlaceDoubleBinaryTree, within
 *   \p treeSearchBudget); when none is found, NCCL's trees with ranks =
 *   hosts, tree edges that are not arcs over shortest paths (routing says which);
 * - "halving-doubling": recursive halving-doubling over ranks = hosts, with
 *   the standard fold for N not a power of two (HalvingDoublingAllReduce);
 *   partners take shortest paths.
 * The fabric's forwarding tables (ECMP over shortest paths) route whatever
 * is not between neighbours.
 * \param g a strongly connected regular graph
 * \param algorithm one of DcBaselineNames()
 * \param bytes buffer size M
 * \param withSchedule false: everything but the schedule (its rings,
 *        message count and formula steps), to decide before building it
 * \param treeSearchBudget "tree": PlaceDoubleBinaryTree's budget (0: ranks = hosts)
 * \return the baseline
 * \throws FabricConfigError naming "algorithm" for an unknown name
 */
DcBaseline BuildDcBaseline(const DirectConnectGraph& g,
                           std::string_view algorithm,
                           uint64_t bytes,
                           bool withSchedule = true,
                           uint64_t treeSearchBudget = kDcTreeSearchBudget);

/**
 * \ingroup gpu-fabric
 * \brief Per-arc load of concurrent messages routed over shortest paths,
 *        split evenly over the equal-cost next arcs at every host (ECMP).
 */
class DcRouter
{
  public:
    /// \param g the graph (kept by reference)
    explicit DcRouter(const DirectConnectGraph& g);

    /// \param src host \param dst host \return hops on a shortest path
    uint32_t Hops(uint32_t src, uint32_t dst);

    /**
     * \param step concurrent messages
     * \param[out] maxHops the longest message's hops
     * \return the bytes on the busiest arc
     */
    double MaxArcBytes(const std::vector<DcMessage>& step, uint32_t& maxHops);

  private:
    /// \return distances to \p dst (computed once)
    const std::vector<uint32_t>& DistTo(uint32_t dst);

    const DirectConnectGraph& m_g;               //!< graph
    DirectConnectGraph m_reverse;                //!< for distances to a host
    std::vector<std::vector<uint32_t>> m_distTo; //!< per destination (empty until needed)
};

/**
 * \ingroup gpu-fabric
 * \brief The alpha-beta time of a baseline on its graph.
 *
 * Step-synchronous (ring, shifted-ring, halving-doubling): the sum over steps
 * of alpha * (hops of the step's longest route) + (bytes on the step's
 * busiest arc) / (B / d), with the routing of DcRouter.  For a ring whose
 * edges are arcs this is 2(N-1) (alpha + M / (N B / d)); for ShiftedRing on
 * d arc-disjoint rings 2(N-1) alpha + 2(N-1)/N M/B, collective-baselines'
 * ShiftedRingAllReduce.  Pipelined (tree): alpha * 2 * (the hops of the
 * deepest root-leaf path) + (bytes on the busiest arc over both trees, up
 * and down) / (B / d); with tree edges on links of their own (a placed
 * tree) that is ceil(M/2) on every arc a tree uses, collective-baselines'
 * T_B = d/2, and the latency 2 alpha times the trees' height.
 * \param g the graph \param b the baseline
 * \param alphaSeconds per-hop latency
 * \param bandwidthBps per-host bandwidth B (split over the d ports)
 * \return seconds
 */
double DcBaselineFormula(const DirectConnectGraph& g,
                         const DcBaseline& b,
                         double alphaSeconds,
                         double bandwidthBps);

/// How many shortest paths DcShortestPathAllToAll spreads a pair over by default.
constexpr uint32_t kDcAllToAllMaxPaths = 24;

/**
 * \ingroup gpu-fabric
 * \brief The shortest paths from \p src to \p dst on \p g, as host sequences
 *        (src first, dst last), at most \p maxPaths of them.
 *
 * Parallel arcs give one path (the hosts are the same). A pair with at
 * most \p maxPaths shortest paths gets them all. Otherwise \p maxPaths are
 * kept, shared out evenly over the next hosts at every hop (a next host
 * with fewer paths than its share gives the rest to the others), so that
 * they still spread over every first hop; next hosts are taken in order of
 * host id rotated by (src + dst), so different pairs round differently.
 * \param g the graph
 * \param distToDst hop distance of every host to \p dst (BFS on g.Reverse())
 * \param src host \param dst host (reachable from src)
 * \param maxPaths at most this many (>= 1)
 * \return the paths (one path {src} when src == dst)
 */
std::vector<std::vector<uint32_t>> DcShortestPaths(const DirectConnectGraph& g,
                                                   const std::vector<uint32_t>& distToDst,
                                                   uint32_t src,
                                                   uint32_t dst,
                                                   uint32_t maxPaths);

/**
 * \ingroup gpu-fabric
 * \brief All-to-all on a direct-connect fabric, every piece spread evenly
 *        over the shortest paths of the graph and relayed host by host.
 *
 * Ranks are the fabric's GPUs as BuildDirectConnect numbers them: K =
 * \p gpusPerNode GPUs per graph host, rank r is GPU r mod K of host r / K.
 * Rank a's piece for rank b (SplitBytes(bytes, n)[b], n = N K; the piece to
 * itself is a chunk that never moves, as in DirectAllToAll) goes:
 * - straight to b when a and b share a host (NVLink);
 * - else split into one chunk per shortest path between their hosts
 *   (DcShortestPaths, at most \p maxPaths; SplitBytes over them), each chunk
 *   copied along its path from GPU to GPU: hop i goes to the GPU of b's local
 *   index (b mod K) on the path's i-th host, which forwards it when it has it.
 *   The fabric carries each hop over the arc between the two hosts (and over
 *   NVLink to and from the GPU that holds that arc when K > 1).
 * With every pair's paths all kept, this is the equal split over all shortest
 * paths: on a graph whose automorphisms map any arc to any other (hypercubes,
 * tori of equal sides, Hamming graphs) every arc then carries the same bytes,
 * K^2 (bytes / n) W / d, W the sum of the distances from a host to all others.
 * The transfers are listed hop by hop (all first hops, in shifted order as in
 * DirectAllToAll, then all second hops, ...), so every rank starts with its
 * own pieces.  Algorithm name "dc-shortest-path".
 * \param g a strongly connected graph
 * \param gpusPerNode K >= 1
 * \param bytes send buffer per rank
 * \param maxPaths paths per pair at most (>= 1)
 * \return the schedule (AllToAll on N K ranks)
 * \throws FabricConfigError naming "graph" for a graph that is not strongly
 *         connected or whose schedule would exceed 2^26 transfers, naming
 *         "gpus-per-node" or "max-paths" for 0
 */
CollectiveSchedule DcShortestPathAllToAll(const DirectConnectGraph& g,
                                          uint32_t gpusPerNode,
                                          uint64_t bytes,
                                          uint32_t maxPaths = kDcAllToAllMaxPaths);

} // namespace ns3

#endif // GPU_FABRIC_DC_BASELINES_H
