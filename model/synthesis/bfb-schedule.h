/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_BFB_SCHEDULE_H
#define GPU_FABRIC_BFB_SCHEDULE_H

#include "ns3/direct-connect-graph.h"

#include <boost/rational.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ns3
{

/// Exact rational number used for every load and fraction of the synthesis layer.
using Fraction = boost::rational<int64_t>;

/// \return the Fraction as a double
double ToDouble(const Fraction& f);
/// \return "p/q" (or "p" when q = 1)
std::string ToString(const Fraction& f);

/// The collective a schedule implements.
enum class SynthCollective
{
    ALLGATHER,      //!< every host ends with every shard
    REDUCE_SCATTER, //!< host v ends with shard v reduced over all hosts
    ALLREDUCE       //!< reduce-scatter then allgather
};

/// \return "allgather", "reduce_scatter" or "allreduce"
std::string ToString(SynthCollective c);

/**
 * \brief One share of a group's pieces sent over one arc.
 */
struct BfbSplit
{
    uint32_t arc;      //!< arc id in the schedule's graph
    Fraction fraction; //!< fraction of each piece of the group carried by this arc
};

/**
 * \brief Pieces that one host handles with the same split over its arcs in one step.
 *
 * In an allgather step the host is the receiver and the splits are over its
 * in-arcs; in a reduce-scatter step the host is the sender and the splits are
 * over its out-arcs (the time-reversed allgather of the reverse graph).
 */
struct BfbGroup
{
    std::vector<uint32_t> pieces; //!< piece ids (see BfbSchedule::pieceWeights)
    std::vector<BfbSplit> splits; //!< the fractions sum to 1
};

/// What one host does in one step.
struct BfbNodeStep
{
    uint32_t node;                //!< the host
    Fraction load;                //!< busiest arc of this host in this step, in shards
    std::vector<BfbGroup> groups; //!< the pieces it receives (allgather) or sends (RS)
};

/// One synchronous step.
struct BfbStep
{
    SynthCollective phase;          //!< ALLGATHER or REDUCE_SCATTER
    Fraction load;                  //!< U_t: busiest arc in the step, in shards
    std::vector<BfbNodeStep> nodes; //!< hosts with work in this step
};

/// One flattened transfer: fraction of one piece crossing one arc in one step.
struct BfbTransfer
{
    uint32_t step;          //!< 1-based step
    SynthCollective phase;  //!< ALLGATHER or REDUCE_SCATTER
    uint32_t piece;         //!< piece id
    uint32_t shard;         //!< shard (= owning host) of the piece
    uint32_t arc;           //!< arc id
    uint32_t from;          //!< sending host
    uint32_t to;            //!< receiving host
    Fraction fraction;      //!< fraction of the piece
    Fraction shardFraction; //!< fraction of the whole shard (fraction * piece weight)
};

/**
 * \brief A step-synchronous collective schedule on a direct-connect graph.
 *
 * Data model: host v's shard (M/N bytes) is cut into NumPieces() pieces; piece
 * id v * NumPieces() + p has weight pieceWeights[p] (the weights sum to 1).
 * Plain BFB uses one piece per shard; expansions (products) may route parts of
 * a shard differently and use several.  Loads are in shards (units of M/N).
 * T_B = (degree / nodes) * sum of step loads, in units of M/B.
 */
class BfbSchedule
{
  public:
    SynthCollective kind{SynthCollective::ALLGATHER}; //!< collective
    std::string graphName;                            //!< construction name of the graph
    uint32_t nodes{0};                                //!< N
    uint32_t degree{0};                               //!< d (ports per host)
    std::vector<DirectConnectGraph::Arc> arcs;        //!< the graph's arcs, by id
    std::vector<Fraction> pieceWeights{Fraction(1)};  //!< weight of part p of every shard
    std::vector<BfbStep> steps;                       //!< the steps in order

    /// \return pieces per shard
    uint32_t NumPieces() const;
    /// \return T_L, the number of steps
    uint32_t Steps() const;
    /// \return U_t for every step, in shards
    std::vector<Fraction> StepLoads() const;
    /// \return T_B in units of M/B
    Fraction Tb() const;
    /// \return (N-1)/N for allgather and reduce-scatter, 2(N-1)/N for allreduce
    Fraction TbLowerBound() const;
    /// \return Tb() == TbLowerBound()
    bool TbOptimal() const;
    /// \return every transfer, in step order
    std::vector<BfbTransfer> Transfers() const;
    /// \brief Recompute every node-step and step load from the groups.
    void RecomputeLoads();
};

/// An up-front estimate of the work of one BFB allgather.
struct BfbWork
{
    double steps{0};   //!< steps (BfbWorkSteps)
    double seconds{0}; //!< steps / FabricWorkRates::kBfbStepsPerSecond
    /// (step, host) problems solved: the BfbNodeStep records a kept schedule holds
    double problems{0};
    /// groups of sources over all problems: the BfbGroup records a kept schedule holds
    double groups{0};
};

/// Knobs of the BFB solver.
struct BfbOptions
{
    /// Keep the per-host groups; false keeps only the loads (saves memory).
    bool keepSchedule{true};
    /**
     * Called as the run advances, with (done, total): the distance table's
     * rows, then the hosts whose problems are solved (total = 2 N).  Empty:
     * not called.  Programs use it to show progress; the model prints nothing.
     */
    std::function<void(uint64_t, uint64_t)> progress;
    /**
     * Called once the run's memory and work estimates are accepted, before
     * the work starts, with the work estimate (programs warn of a long run
     * there).  Empty: not called.
     */
    std::function<void(const BfbWork&)> onStart;
};

/**
 * \brief What BFB allgather's work depends on, seen from one host (host 0):
 * BfbWorkSteps turns it into steps.
 */
struct BfbWorkShape
{
    double hosts{0};       //!< N
    double arcs{0};        //!< A, self-loops not counted
    double maxInDegree{0}; //!< largest in-degree (sets the 64-bit words of an in-arc set)
    /// (step) problems of one host answered directly: one eligible arc per
    /// source, or sources in groups with disjoint arc sets
    double directProblems{0};
    double flowProblems{0};  //!< problems of one host that need max-flow
    double flowSize{0};      //!< their groups, group-arc pairs and arcs, summed
    bool keepSchedule{true}; //!< the schedule is kept (BfbOptions::keepSchedule)
};

/**
 * \brief The steps of BFB allgather on a graph of this shape: the distance
 * table (N breadth-first searches) and every host's test of its in-arcs
 * against every source, N (N + A) + N A, one step each (six for a test once
 * a host's in-neighbours' rows of the table, 2 N d bytes, outgrow a 2 MiB
 * cache); every host's sort and
 * grouping of its N sources (some 70 steps per source and 64-bit word of an
 * in-arc set); and N times the host's problems, each at a fixed cost (90
 * steps answered directly, 900 with a max-flow) plus 90 per element of a
 * max-flow.  Keeping the schedule adds 30 per source, 460 per problem and 50
 * per max-flow element.  The weights are fitted to bfb-scale's wall times
 * (bench/README.md, "BFB work estimate"); a step is about a nanosecond there.
 * \param shape the graph's shape
 * \return the steps
 */
double BfbWorkSteps(const BfbWorkShape& shape);

/**
 * \brief Estimate BFB allgather's work on \p g before running it: host 0's
 * problems, found from breadth-first searches towards it and towards its
 * in-neighbours (up to 64 of them; a denser graph is charged a max-flow per
 * step with every eligible pair in it), stand for every host's: exact for a
 * vertex-transitive graph (K, Hypercube, Torus, Hamming, circulants and their
 * products), one host's view for the others.  Costs (1 + in-degree of host 0)
 * breadth-first searches.
 * \param g the graph (strongly connected)
 * \param options the run's options (keepSchedule costs more)
 * \return the estimate (BfbReduceScatter costs the same, BfbAllReduce twice)
 */
BfbWork EstimateBfbWork(const DirectConnectGraph& g, const BfbOptions& options = {});

/**
 * \brief BFB allgather on a strongly connected graph.
 *
 * Host u receives v's shard at step dist(v, u) from in-neighbours w with
 * dist(v, w) = dist(v, u) - 1; the split over those arcs minimises the
 * busiest in-arc of u, solved exactly per (step, host) with max-flow.
 * d is the graph's MaxDegree() (its Degree() when regular).
 * \throws FabricConfigError if N < 2, d = 0, N > 65535 or the graph is not
 * strongly connected; or, before any work, if its memory estimate does not
 * fit (FabricRequireMemory) or its work estimate (EstimateBfbWork) exceeds
 * GpuFabricMaxRunSeconds (FabricRequireWork), both naming
 * "graph <name> hosts"
 */
BfbSchedule BfbAllGather(const DirectConnectGraph& g, const BfbOptions& options = {});

/// \brief BFB reduce-scatter: allgather on the reverse graph, run backwards (arc ids of g).
BfbSchedule BfbReduceScatter(const DirectConnectGraph& g, const BfbOptions& options = {});

/// \brief BFB allreduce: BfbReduceScatter then BfbAllGather.
BfbSchedule BfbAllReduce(const DirectConnectGraph& g, const BfbOptions& options = {});

/**
 * \brief Turn an allgather schedule of Reverse(g) into a reduce-scatter of g:
 * step t becomes step T - t + 1 and every arc is read in g (same id, reversed).
 */
BfbSchedule ReverseToReduceScatter(const BfbSchedule& allGatherOnReverse);

/**
 * \brief The exact optimum of one (step, host) problem, for tests and tools:
 * minimise the busiest arc when source s must be split over eligible[s].
 * \param eligible for every source, the local arc indices it may use (non-empty)
 * \param arcCount number of local arcs
 * \param[out] split for every source, the fraction on each of its eligible arcs
 * \return the optimal busiest-arc load
 */
Fraction SolveMinMaxLoad(const std::vector<std::vector<uint32_t>>& eligible,
                         uint32_t arcCount,
                         std::vector<std::vector<Fraction>>* split = nullptr);

/// (T_L, T_B) of a construction: the closed form of an expansion or a BFB result.
struct SynthCost
{
    uint32_t steps{0}; //!< T_L
    Fraction tb;       //!< T_B in units of M/B
};

/// \name Closed forms of the expansions (reference: direct-connect.md)
/// @{
/// L(G): (T_L + 1, T_B + 1/N)
SynthCost LineGraphCost(const SynthCost& base, uint32_t baseNodes);
/// Deg(G,n): (T_L + 1, T_B + (n-1)/(nN)); n = 1 is the identity
SynthCost DegreeExpansionCost(const SynthCost& base, uint32_t baseNodes, uint32_t n);
/// G^n: (n T_L, T_B * ((N^n - 1)/N^n) / ((N - 1)/N))
SynthCost PowerCost(const SynthCost& base, uint32_t baseNodes, uint32_t n);
/// @}

/**
 * \brief Cost of the product schedule Prod(G,H) built by ExpandProduct from the
 * two factors' per-step loads: a fraction alpha of every shard goes G then H, the
 * rest H then G; alpha is chosen exactly to minimise T_B.
 * \param loadsG per-step loads of G's allgather (shards of G)
 * \param[out] alpha the chosen alpha (may be null)
 */
SynthCost ProductCost(const std::vector<Fraction>& loadsG,
                      uint32_t nodesG,
                      uint32_t degreeG,
                      const std::vector<Fraction>& loadsH,
                      uint32_t nodesH,
                      uint32_t degreeH,
                      Fraction* alpha = nullptr);

/**
 * \brief Per-step loads of the ProductCost schedule for a given alpha (shards of
 * the product); their sum times (dG + dH)/(NG NH) is its T_B.
 */
std::vector<Fraction> ProductStepLoads(const std::vector<Fraction>& loadsG,
                                       uint32_t nodesG,
                                       const std::vector<Fraction>& loadsH,
                                       uint32_t nodesH,
                                       const Fraction& alpha);

/// An expanded graph, its transformed allgather schedule and the closed-form prediction.
struct ExpansionResult
{
    DirectConnectGraph graph; //!< the expanded graph
    BfbSchedule schedule;     //!< the transformed allgather schedule (loads recomputed)
    SynthCost predicted;      //!< closed-form (T_L, T_B)
};

/// \name Schedule transformations (allgather schedules; take RS/AR via the reverse graph)
/// @{
/// L(G) from an allgather of G
ExpansionResult ExpandLineGraph(const DirectConnectGraph& g, const BfbSchedule& s);
/// Deg(G,n) from an allgather of G. `predicted` is the closed form, which
/// assumes every arc into a host comes from another host: on a graph with
/// self-loops (GenKautz) the extra step spreads over fewer arcs and the
/// schedule's own Tb() is above it (the topology finder offers no Deg() of
/// such graphs).
ExpansionResult ExpandDegree(const DirectConnectGraph& g, const BfbSchedule& s, uint32_t n);
/// Prod(G,H) from allgathers of G and H (two dimension orders, alpha from ProductCost)
ExpansionResult ExpandProduct(const DirectConnectGraph& g,
                              const BfbSchedule& sg,
                              const DirectConnectGraph& h,
                              const BfbSchedule& sh);
/// G^n from an allgather of G (n rotated dimension orders, weight 1/n each)
ExpansionResult ExpandPower(const DirectConnectGraph& g, const BfbSchedule& s, uint32_t n);
/// @}

} // namespace ns3

#endif // GPU_FABRIC_BFB_SCHEDULE_H
