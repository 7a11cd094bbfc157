/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_TOPOLOGY_FINDER_H
#define GPU_FABRIC_TOPOLOGY_FINDER_H

#include "bfb-schedule.h"

#include "ns3/direct-connect-graph.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Build a graph from its construction name.
 *
 * Grammar (spaces ignored, names case-sensitive):
 *   K(n) | K(d,d) | Ring(n) | BiRing(n) | Torus(a,b,...) | Hypercube(k) |
 *   Hamming(dims,q) | C(N,{s1,s2,...}) | DC(N,{s1,s2,...}) | Kautz(d,D) |
 *   GenKautz(d,N) | Petersen | L(G) | Deg(G,n) | Prod(G,H) | Pow(G,n)
 * nested freely.  C is the undirected circulant (x -> x +- s, MakeCirculant),
 * DC the directed one (x -> x + s, MakeDirectedCirculant).  The built graph's Name() is the
 * canonical spelling of the name, so names printed by the finder round-trip. \throws
 * FabricConfigError naming the character position of the first error, or the parameter a generator
 * rejected
 */
DirectConnectGraph BuildFromName(const std::string& name);

/// A topology the finder considered.
struct SynthCandidate
{
    std::string name;                //!< construction name (BuildFromName accepts it)
    uint32_t nodes{0};               //!< N
    uint32_t degree{0};              //!< d
    uint32_t steps{0};               //!< T_L of its allgather
    Fraction tb;                     //!< T_B of its allgather, units of M/B
    std::vector<Fraction> stepLoads; //!< per-step loads (BFB for bases, closed forms above)
    bool fromBfb{false};             //!< true: BFB run on the graph itself
    bool selfLoops{false};           //!< the graph has self-loop arcs (GenKautz)
};

/// Search limits.
struct FinderOptions
{
    uint32_t maxDepth{2};        //!< expansion operations stacked on a base
    uint32_t maxBaseNodes{1024}; //!< bases larger than this are not evaluated with BFB
    /// Products up to this size are evaluated with BFB on the product graph itself
    /// (exact); larger ones use the dimension-ordered construction of ProductCost.
    uint32_t maxProductBfbNodes{1024};
    /**
     * Undirected circulants C(N,S) of degree d are searched exhaustively, every
     * connected offset set up to isomorphism by multipliers (C(N,S) = C(N,uS)
     * for u coprime to N), when there are at most this many non-isomorphic
     * sets (every N < 210 at d = 4, N < 42 at d = 6); otherwise only the paper's family
     * C(N,{a,...,a+d/2-1}) (plus N/2 for odd d) for 7 values of a near
     * sqrt(N (d/2-1) / 2).
     */
    uint32_t maxCirculants{128};
    /**
     * Called after each BFB evaluation with (evaluations done, total): the
     * total is EstimateFinderWork's bfbRuns, raised to the count done when the
     * search needs more.  Empty: not called.  Programs show progress with it;
     * the model prints nothing.
     */
    std::function<void(uint64_t, uint64_t)> progress;
};

/// The finder's work, estimated before it searches (EstimateFinderWork).
struct FinderWork
{
    double candidates{0}; //!< candidates it will consider (FinderResult::considered)
    double bfbRuns{0};    //!< of them, graphs evaluated with BFB (bases and products)
    double steps{0};      //!< their BFB steps (BfbWorkSteps)
    double seconds{0};    //!< steps / FabricWorkRates::kBfbStepsPerSecond
};

/**
 * \brief Estimate the finder's work before it searches: the same recursion
 * over (N, d, depth) without BFB, every sub-frontier assumed to keep a few
 * points (their real sizes are known only after their BFB runs).  Bases are
 * built and estimated with EstimateBfbWork; a product of N <=
 * maxProductBfbNodes hosts is estimated from products of its factors'
 * bases.  FindTopology and
 * EnumerateCandidates refuse (FabricRequireWork, naming "finder depth") a
 * search whose estimate exceeds GpuFabricMaxRunSeconds.
 * \throws FabricConfigError if N < 2, d < 1, d >= N or the depth exceeds 4
 */
FinderWork EstimateFinderWork(uint32_t nodes, uint32_t degree, const FinderOptions& options = {});

/// \return the estimate for a message: "the finder for N = .., d = .. at depth .. (about ..
/// candidates, .. of them evaluated with BFB: .. steps)"
std::string FinderWorkText(const FinderWork& work,
                           uint32_t nodes,
                           uint32_t degree,
                           const FinderOptions& options);

/// The alpha-beta workload a topology is chosen for.
struct FinderWorkload
{
    double alphaSeconds{10e-6};   //!< per-step latency alpha
    double bandwidthBps{100e9};   //!< per-host bandwidth B, bits per second
    double messageBytes{1 << 20}; //!< allgather message size M, bytes
};

/// What FindTopology returns.
struct FinderResult
{
    std::vector<SynthCandidate> frontier; //!< Pareto frontier, by increasing T_L
    SynthCandidate best;                  //!< frontier point with the smallest time
    double bestTimeSeconds{0};            //!< alpha*T_L + T_B*M*8/B of best
    size_t considered{0};                 //!< candidates evaluated before pruning
};

/**
 * \brief Every candidate (bases, families, expansion chains) for exactly N hosts
 * of degree d.  Sub-constructions are pruned to their own Pareto frontier
 * before being expanded (the closed forms of L and Deg are monotone in
 * (T_L, T_B); for products this is a heuristic).
 * \throws FabricConfigError if N < 2 or d < 1, or if EstimateFinderWork exceeds
 * GpuFabricMaxRunSeconds
 */
std::vector<SynthCandidate> EnumerateCandidates(uint32_t nodes,
                                                uint32_t degree,
                                                const FinderOptions& options = {});

/// \brief Non-dominated points of (T_L, T_B), sorted by T_L; one per distinct point.
std::vector<SynthCandidate> ParetoFrontier(std::vector<SynthCandidate> candidates);

/// \return alpha*T_L + T_B*M*8/B for the candidate
double CandidateTime(const SynthCandidate& c, const FinderWorkload& w);

/**
 * \brief Frontier for (N, d) and the best point for the workload.
 * \throws FabricConfigError if no candidate reaches (N, d), or the workload is invalid,
 * or (before the search) if EstimateFinderWork exceeds GpuFabricMaxRunSeconds
 */
FinderResult FindTopology(uint32_t nodes,
                          uint32_t degree,
                          const FinderWorkload& workload,
                          const FinderOptions& options = {});

} // namespace ns3

#endif // GPU_FABRIC_TOPOLOGY_FINDER_H
