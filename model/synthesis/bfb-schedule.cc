/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "bfb-schedule.h"

#include "ns3/fabric-error.h"
#include "ns3/fabric-memory.h"
#include "ns3/fabric-work.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <numeric>
#include <unordered_map>

namespace ns3
{

double
ToDouble(const Fraction& f)
{
    return boost::rational_cast<double>(f);
}

std::string
ToString(const Fraction& f)
{
    if (f.denominator() == 1)
    {
        return std::to_string(f.numerator());
    }
    return fmt::format("{}/{}", f.numerator(), f.denominator());
}

std::string
ToString(SynthCollective c)
{
    switch (c)
    {
    case SynthCollective::ALLGATHER:
        return "allgather";
    case SynthCollective::REDUCE_SCATTER:
        return "reduce_scatter";
    case SynthCollective::ALLREDUCE:
        return "allreduce";
    }
    return "?";
}

// ------------------------------------------------------------- BfbSchedule

uint32_t
BfbSchedule::NumPieces() const
{
    return static_cast<uint32_t>(pieceWeights.size());
}

uint32_t
BfbSchedule::Steps() const
{
    return static_cast<uint32_t>(steps.size());
}

std::vector<Fraction>
BfbSchedule::StepLoads() const
{
    std::vector<Fraction> loads;
    loads.reserve(steps.size());
    for (const auto& s : steps)
    {
        loads.push_back(s.load);
    }
    return loads;
}

Fraction
BfbSchedule::Tb() const
{
    Fraction sum(0);
    for (const auto& s : steps)
    {
        sum += s.load;
    }
    return sum * Fraction(degree, nodes);
}

Fraction
BfbSchedule::TbLowerBound() const
{
    Fraction one(nodes - 1, nodes);
    return kind == SynthCollective::ALLREDUCE ? 2 * one : one;
}

bool
BfbSchedule::TbOptimal() const
{
    return Tb() == TbLowerBound();
}

std::vector<BfbTransfer>
BfbSchedule::Transfers() const
{
    std::vector<BfbTransfer> out;
    const uint32_t pieces = NumPieces();
    for (size_t t = 0; t < steps.size(); ++t)
    {
        for (const auto& ns : steps[t].nodes)
        {
            for (const auto& g : ns.groups)
            {
                for (uint32_t piece : g.pieces)
                {
                    for (const auto& sp : g.splits)
                    {
                        const auto& a = arcs[sp.arc];
                        out.push_back({static_cast<uint32_t>(t + 1),
                                       steps[t].phase,
                                       piece,
                                       piece / pieces,
                                       sp.arc,
                                       a.from,
                                       a.to,
                                       sp.fraction,
                                       sp.fraction * pieceWeights[piece % pieces]});
                    }
                }
            }
        }
    }
    return out;
}

void
BfbSchedule::RecomputeLoads()
{
    const uint32_t pieces = NumPieces();
    std::unordered_map<uint32_t, Fraction> arcLoad;
    for (auto& step : steps)
    {
        step.load = 0;
        for (auto& ns : step.nodes)
        {
            arcLoad.clear();
            for (const auto& g : ns.groups)
            {
                Fraction weight(0);
                for (uint32_t piece : g.pieces)
                {
                    weight += pieceWeights[piece % pieces];
                }
                for (const auto& sp : g.splits)
                {
                    arcLoad[sp.arc] += weight * sp.fraction;
                }
            }
            ns.load = 0;
            for (const auto& [arc, load] : arcLoad)
            {
                ns.load = std::max(ns.load, load);
            }
            step.load = std::max(step.load, ns.load);
        }
    }
}

// ----------------------------------------------------- per-(t,u) min-max problem

namespace
{

using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS,
    boost::vecS,
    boost::directedS,
    boost::no_property,
    boost::property<
        boost::edge_capacity_t,
        int64_t,
        boost::property<boost::edge_residual_capacity_t,
                        int64_t,
                        boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;

/**
 * Sources with identical eligible-arc sets are merged into one group of
 * weight `count`: an optimal split may treat them alike (average any optimal
 * split over the group), so the flow network has one node per distinct set.
 */
struct GroupProblem
{
    std::vector<int64_t> count; //!< sources per group
    /// local arc indices per group; entries past count.size() are storage
    /// kept for the next problem, not part of this one
    std::vector<std::vector<uint32_t>> arcs;
    uint32_t arcCount{0}; //!< local arcs
};

/// Result: load, and per group the fraction of each source on each of its arcs.
struct GroupSolution
{
    Fraction load;
    std::vector<std::vector<Fraction>> split;
};

/**
 * Is the load p/q feasible?  Network s -> group (cap q*count) -> arc (cap inf)
 * -> t (cap p), all integral, so the test is exact.  On success, fills the
 * load and, if \p wantSplit, the split; on failure, returns in `denseGroups`
 * the groups on the source side of a minimum cut, whose ratio count/|arcs|
 * exceeds p/q.
 */
bool
TestLoad(const GroupProblem& pb,
         const std::vector<uint32_t>& usedArcs,
         int64_t p,
         int64_t q,
         bool wantSplit,
         GroupSolution* sol,
         std::vector<uint32_t>* denseGroups)
{
    const uint32_t G = static_cast<uint32_t>(pb.count.size());
    const uint32_t A = static_cast<uint32_t>(usedArcs.size());
    // vertices: 0 = s, 1 = t, 2.. groups, then used arcs
    FlowGraph fg(2 + G + A);
    auto cap = boost::get(boost::edge_capacity, fg);
    auto rev = boost::get(boost::edge_reverse, fg);
    auto res = boost::get(boost::edge_residual_capacity, fg);
    auto addEdge = [&](uint32_t u, uint32_t v, int64_t c) {
        auto e = boost::add_edge(u, v, fg).first;
        auto r = boost::add_edge(v, u, fg).first;
        cap[e] = c;
        cap[r] = 0;
        rev[e] = r;
        rev[r] = e;
        return e;
    };
    std::vector<int32_t> arcVertex(pb.arcCount, -1);
    for (uint32_t i = 0; i < A; ++i)
    {
        arcVertex[usedArcs[i]] = static_cast<int32_t>(2 + G + i);
        addEdge(2 + G + i, 1, p);
    }
    int64_t total = 0;
    for (auto c : pb.count)
    {
        total += c;
    }
    const int64_t inf = q * total + 1;
    std::vector<std::vector<FlowTraits::edge_descriptor>> groupEdges(G);
    for (uint32_t g = 0; g < G; ++g)
    {
        addEdge(0, 2 + g, q * pb.count[g]);
        for (uint32_t a : pb.arcs[g])
        {
            groupEdges[g].push_back(addEdge(2 + g, arcVertex[a], inf));
        }
    }
    int64_t flow = boost::push_relabel_max_flow(fg, 0, 1);
    if (flow == q * total)
    {
        sol->load = Fraction(p, q);
        if (!wantSplit)
        {
            return true;
        }
        sol->split.assign(G, {});
        for (uint32_t g = 0; g < G; ++g)
        {
            for (auto e : groupEdges[g])
            {
                int64_t f = cap[e] - res[e];
                sol->split[g].push_back(Fraction(f, q * pb.count[g]));
            }
        }
        return true;
    }
    // Source side of the min cut: vertices reachable from s in the residual graph.
    std::vector<char> seen(2 + G + A, 0);
    std::vector<uint32_t> stack{0};
    seen[0] = 1;
    while (!stack.empty())
    {
        uint32_t u = stack.back();
        stack.pop_back();
        for (auto [ei, ee] = boost::out_edges(u, fg); ei != ee; ++ei)
        {
            auto v = boost::target(*ei, fg);
            if (res[*ei] > 0 && !seen[v])
            {
                seen[v] = 1;
                stack.push_back(static_cast<uint32_t>(v));
            }
        }
    }
    denseGroups->clear();
    for (uint32_t g = 0; g < G; ++g)
    {
        if (seen[2 + g])
        {
            denseGroups->push_back(g);
        }
    }
    return false;
}

/// Exact min-max load of one (step, host) problem; its split only if \p wantSplit
/// (a loads-only BFB run needs none).
GroupSolution
SolveGroups(const GroupProblem& pb, bool wantSplit)
{
    const uint32_t G = static_cast<uint32_t>(pb.count.size());
    GroupSolution sol;
    std::vector<uint32_t> arcUsers(pb.arcCount, 0);
    bool singleArc = true;
    for (uint32_t g = 0; g < G; ++g)
    {
        singleArc = singleArc && pb.arcs[g].size() == 1;
        for (uint32_t a : pb.arcs[g])
        {
            ++arcUsers[a];
        }
    }
    // Fast path 1: every source has one eligible arc, nothing to choose.
    // Fast path 2: groups use disjoint arc sets, so each spreads evenly on its own.
    bool disjoint =
        std::all_of(arcUsers.begin(), arcUsers.end(), [](uint32_t n) { return n <= 1; });
    if (singleArc || disjoint)
    {
        std::vector<Fraction> load(pb.arcCount, Fraction(0));
        sol.load = 0;
        sol.split.resize(wantSplit ? G : 0);
        for (uint32_t g = 0; g < G; ++g)
        {
            Fraction f(1, static_cast<int64_t>(pb.arcs[g].size()));
            if (wantSplit)
            {
                sol.split[g].assign(pb.arcs[g].size(), f);
            }
            for (uint32_t a : pb.arcs[g])
            {
                load[a] += Fraction(pb.count[g]) * f;
                sol.load = std::max(sol.load, load[a]);
            }
        }
        return sol;
    }
    // Newton / Dinkelbach iteration on the ratio |A| / |N(A)|: start from the
    // set of all groups; while the current ratio is infeasible, the min cut
    // exposes a set with a strictly larger ratio.  Every tested value is the
    // ratio of an actual set, so the first feasible one is the exact optimum.
    std::vector<uint32_t> used;
    for (uint32_t a = 0; a < pb.arcCount; ++a)
    {
        if (arcUsers[a] > 0)
        {
            used.push_back(a);
        }
    }
    int64_t p = std::accumulate(pb.count.begin(), pb.count.end(), int64_t{0});
    int64_t q = static_cast<int64_t>(used.size());
    std::vector<uint32_t> dense;
    while (!TestLoad(pb, used, p, q, wantSplit, &sol, &dense))
    {
        std::vector<char> inSet(pb.arcCount, 0);
        int64_t np = 0;
        int64_t nq = 0;
        for (uint32_t g : dense)
        {
            np += pb.count[g];
            for (uint32_t a : pb.arcs[g])
            {
                if (!inSet[a])
                {
                    inSet[a] = 1;
                    ++nq;
                }
            }
        }
        // Strict increase is what guarantees termination; a failure here is a bug.
        if (dense.empty() || Fraction(np, nq) <= Fraction(p, q))
        {
            throw std::logic_error("BFB min-max solver: min cut did not increase the ratio");
        }
        Fraction r(np, nq);
        p = r.numerator();
        q = r.denominator();
    }
    return sol;
}

/// Reverse BFS: dist[v] = hops from v to u (Dist's maximum: unreachable).
template <typename Dist>
void
DistancesTo(const DirectConnectGraph& g, uint32_t u, Dist* dist, std::vector<uint32_t>& queue)
{
    constexpr Dist kUnreached = std::numeric_limits<Dist>::max();
    const uint32_t n = g.NumNodes();
    std::fill(dist, dist + n, kUnreached);
    queue.clear();
    dist[u] = 0;
    queue.push_back(u);
    const auto& arcs = g.Arcs();
    for (size_t head = 0; head < queue.size(); ++head)
    {
        uint32_t x = queue[head];
        for (uint32_t a : g.InArcs(x))
        {
            uint32_t w = arcs[a].from;
            if (dist[w] == kUnreached)
            {
                dist[w] = static_cast<Dist>(dist[x] + 1);
                queue.push_back(w);
            }
        }
    }
}

} // namespace

Fraction
SolveMinMaxLoad(const std::vector<std::vector<uint32_t>>& eligible,
                uint32_t arcCount,
                std::vector<std::vector<Fraction>>* split)
{
    FabricRequire(!eligible.empty(), "min-max problem sources", 0, "at least one source");
    GroupProblem pb;
    pb.arcCount = arcCount;
    for (const auto& e : eligible)
    {
        FabricRequire(!e.empty(), "eligible arcs of a source", "none", "at least one arc");
        for (auto a : e)
        {
            FabricRequire(a < arcCount, "eligible arc", a, fmt::format("< {}", arcCount));
        }
        pb.count.push_back(1);
        pb.arcs.push_back(e);
    }
    auto sol = SolveGroups(pb, split != nullptr);
    if (split)
    {
        *split = sol.split;
    }
    return sol.load;
}

// --------------------------------------------------------------- BFB proper

namespace
{

/**
 * Refuse, before allocating, a BFB run whose memory estimate cannot fit: the
 * distance table is n^2 2-byte entries (8.6 GB in one request at 65535
 * hosts); a kept schedule holds every host's n - 1 sources, and a record per
 * (host, step) with sources: at least ecc(x) - dist(u, x) steps for host u,
 * with x = 0 (ecc(x) <= dist(u, x) + ecc(u)), from one search.
 */
void
RequireBfbMemory(const DirectConnectGraph& g, const BfbOptions& options)
{
    const uint32_t n = g.NumNodes();
    const double table = 2.0 * n * n;
    double schedule = 0;
    if (options.keepSchedule)
    {
        std::vector<uint16_t> toZero(n);
        std::vector<uint32_t> queue;
        DistancesTo(g, 0, toZero.data(), queue);
        const uint32_t ecc = *std::max_element(toZero.begin(), toZero.end());
        double records = 0;
        for (const uint16_t d : toZero)
        {
            records += std::max<double>(1, static_cast<double>(ecc) - d);
        }
        schedule = 4.0 * n * (n - 1) +
                   records * (sizeof(BfbNodeStep) + sizeof(BfbGroup) + sizeof(BfbSplit));
    }
    FabricRequireMemory(
        table + schedule,
        "graph " + g.Name() + " hosts",
        n,
        fmt::format("BFB's distance table ({}){}",
                    FabricBytesText(table),
                    options.keepSchedule
                        ? fmt::format(" and schedule (at least {})", FabricBytesText(schedule))
                        : ""));
}

// Weights of BfbWorkSteps' terms, in steps of a distance search's arc (about
// 1.1 ns on bench/README.md's machine), fitted to bfb-scale over twelve
// graphs: a source sorted and grouped by a host, a problem answered
// directly, a max-flow problem and an element of its network; then what
// keeping the schedule adds to a source, a problem and an element.
constexpr double kStepsPerSource = 70;
constexpr double kStepsPerDirectProblem = 90;
constexpr double kStepsPerFlowProblem = 900;
constexpr double kStepsPerFlowElement = 90;
constexpr double kKeptStepsPerSource = 30;
constexpr double kKeptStepsPerProblem = 460;
constexpr double kKeptStepsPerFlowElement = 50;
// A host's in-arc test reads, for every source, one entry in each of its k
// in-neighbours' rows of the distance table: once those rows (2 N k bytes)
// outgrow the second-level cache, every read misses (K(2048): 100 s for an
// estimate of 44 s at one step per read; K(1024), 2 MB of rows, still fits).
constexpr double kCachedRowBytes = 2 * 1024 * 1024;
constexpr double kStepsPerMissedRead = 6;

/// Longest in-arc set EstimateBfbWork analyses exactly (one 64-bit key).
constexpr uint32_t kAnalysedInArcs = 64;

} // namespace

double
BfbWorkSteps(const BfbWorkShape& shape)
{
    const double n = shape.hosts;
    const double words = std::max(1.0, std::ceil(shape.maxInDegree / 64));
    const bool kept = shape.keepSchedule;
    const double readSteps = 2 * n * shape.maxInDegree <= kCachedRowBytes ? 1 : kStepsPerMissedRead;
    const double distances = n * (n + shape.arcs) + readSteps * n * shape.arcs; // table, tests
    const double perSource = kStepsPerSource * words + (kept ? kKeptStepsPerSource : 0);
    const double problems = shape.directProblems + shape.flowProblems;
    const double perHost =
        kStepsPerDirectProblem * shape.directProblems + kStepsPerFlowProblem * shape.flowProblems +
        kStepsPerFlowElement * shape.flowSize +
        (kept ? kKeptStepsPerProblem * problems + kKeptStepsPerFlowElement * shape.flowSize : 0);
    return distances + perSource * n * n + n * perHost;
}

namespace
{

/// Host 0's view of a BFB run, standing for every host's.
struct HostView
{
    BfbWorkShape shape; //!< what the work depends on
    double steps{0};    //!< the steps with sources (T_L, from host 0)
    double groups{0};   //!< groups of sources over all steps
    double pairs{0};    //!< (group, eligible arc) pairs over all steps
};

/**
 * Host 0's problems: its sources at each distance t, grouped by their eligible
 * in-arcs (those whose tail is one step closer), found with a search towards
 * host 0 and one towards each in-neighbour (up to kAnalysedInArcs of them).
 * A denser host is charged from a forward search: a problem per step, one
 * group per source, and a max-flow over every eligible pair unless each host
 * has a single one.
 */
HostView
AnalyseHost(const DirectConnectGraph& g)
{
    HostView view;
    BfbWorkShape& shape = view.shape;
    const uint32_t n = g.NumNodes();
    shape.hosts = n;
    if (n == 0)
    {
        return view;
    }
    for (uint32_t u = 0; u < n; ++u)
    {
        shape.maxInDegree = std::max<double>(shape.maxInDegree, g.InDegree(u));
    }
    const auto& arcs = g.Arcs();
    for (const auto& a : arcs)
    {
        shape.arcs += a.from != a.to;
    }
    std::vector<uint32_t> tails; // of host 0's in-arcs, self-loops left out
    for (uint32_t a : g.InArcs(0))
    {
        if (arcs[a].from != 0)
        {
            tails.push_back(arcs[a].from);
        }
    }
    constexpr uint32_t kUnreached = std::numeric_limits<uint32_t>::max();
    if (tails.size() > kAnalysedInArcs)
    {
        const std::vector<uint32_t> from = g.BfsDistances(0);
        double eligible = 0;
        bool single = true;
        std::vector<uint32_t> predecessors(n, 0);
        for (const auto& a : arcs)
        {
            if (a.from != a.to && from[a.from] != kUnreached && from[a.from] + 1 == from[a.to])
            {
                eligible += 1;
                single = single && ++predecessors[a.to] == 1;
            }
        }
        uint32_t ecc = 0;
        for (const uint32_t d : from)
        {
            ecc = d == kUnreached ? ecc : std::max(ecc, d);
        }
        view.steps = ecc;
        view.groups = n - 1.0;
        view.pairs = eligible;
        if (single)
        {
            shape.directProblems = ecc;
        }
        else
        {
            shape.flowProblems = ecc;
            shape.flowSize = view.groups + eligible + static_cast<double>(tails.size());
        }
        return view;
    }
    std::vector<uint32_t> queue;
    std::vector<uint32_t> toZero(n);
    DistancesTo(g, 0, toZero.data(), queue);
    uint32_t ecc = 0;
    for (const uint32_t d : toZero)
    {
        ecc = d == kUnreached ? ecc : std::max(ecc, d);
    }
    std::vector<std::vector<uint32_t>> toTail(tails.size(), std::vector<uint32_t>(n));
    for (size_t i = 0; i < tails.size(); ++i)
    {
        DistancesTo(g, tails[i], toTail[i].data(), queue);
    }
    std::vector<std::unordered_map<uint64_t, uint32_t>> groups(ecc + 1);
    for (uint32_t v = 0; v < n; ++v)
    {
        const uint32_t t = toZero[v];
        if (t == 0 || t == kUnreached)
        {
            continue;
        }
        uint64_t key = 0;
        for (size_t i = 0; i < tails.size(); ++i)
        {
            key |= uint64_t{toTail[i][v] + 1u == t} << i;
        }
        ++groups[t][key];
    }
    for (const auto& step : groups)
    {
        if (step.empty())
        {
            continue;
        }
        uint64_t used = 0;
        double pairs = 0;
        bool single = true;
        for (const auto& [key, count] : step)
        {
            used |= key;
            pairs += __builtin_popcountll(key);
            single = single && __builtin_popcountll(key) == 1;
        }
        const double usedArcs = __builtin_popcountll(used);
        view.steps += 1;
        view.groups += static_cast<double>(step.size());
        view.pairs += pairs;
        if (single || pairs == usedArcs) // one arc each, or disjoint sets
        {
            shape.directProblems += 1;
        }
        else
        {
            shape.flowProblems += 1;
            shape.flowSize += static_cast<double>(step.size()) + pairs + usedArcs;
        }
    }
    return view;
}

/// \return the work of \p view in steps and seconds, the schedule kept or not
BfbWork
WorkOf(const HostView& view, bool keepSchedule)
{
    BfbWorkShape shape = view.shape;
    shape.keepSchedule = keepSchedule;
    BfbWork w;
    w.steps = BfbWorkSteps(shape);
    w.seconds = w.steps / FabricWorkRates::kBfbStepsPerSecond;
    w.problems = shape.hosts * view.steps;
    w.groups = shape.hosts * view.groups;
    return w;
}

/**
 * Refuse, before allocating, a kept schedule that cannot fit, counted from
 * host 0's view (RequireBfbMemory's bound counts a record per step and host,
 * far below what a graph whose sources each form their own group keeps, such
 * as a hypercube): per host, every step's record (reserved for every host), a
 * group per group of sources with two small allocations, the n - 1 piece ids,
 * and a split per group and per other eligible pair that carries a share (a
 * max-flow's split is mostly integral: half of them, by bfb-scale's peak
 * memory on Hypercube(12), 1.7 GB against 2.8 GB estimated).
 */
void
RequireScheduleMemory(const DirectConnectGraph& g, const HostView& view)
{
    const double n = g.NumNodes();
    const double table = 2.0 * n * n;
    const double splits = view.groups + (view.pairs - view.groups) / 2;
    const double perHost = view.steps * sizeof(BfbNodeStep) +
                           view.groups * (sizeof(BfbGroup) + 32) + splits * sizeof(BfbSplit) +
                           4.0 * (n - 1);
    const double schedule = n * perHost;
    FabricRequireMemory(table + schedule,
                        "graph " + g.Name() + " hosts",
                        g.NumNodes(),
                        fmt::format("BFB's distance table ({}) and schedule ({:.3g} groups of "
                                    "sources, about {:.3g} splits: {})",
                                    FabricBytesText(table),
                                    n * view.groups,
                                    n * splits,
                                    FabricBytesText(schedule)));
}

/**
 * Refuse, before any work, a BFB run whose estimate exceeds
 * GpuFabricMaxRunSeconds; \p runs allgathers' worth (an allreduce is two).
 */
BfbWork
RequireBfbWork(const DirectConnectGraph& g,
               const HostView& view,
               const BfbOptions& options,
               double runs,
               const std::string& what)
{
    BfbWork w = WorkOf(view, options.keepSchedule);
    w.steps *= runs;
    w.seconds *= runs;
    w.problems *= runs;
    w.groups *= runs;
    FabricRequireWork(w.seconds,
                      "graph " + g.Name() + " hosts",
                      g.NumNodes(),
                      fmt::format("BFB {} ({:.2g} steps)", what, w.steps));
    return w;
}

} // namespace

BfbWork
EstimateBfbWork(const DirectConnectGraph& g, const BfbOptions& options)
{
    return WorkOf(AnalyseHost(g), options.keepSchedule);
}

BfbSchedule
BfbAllGather(const DirectConnectGraph& g, const BfbOptions& options)
{
    const uint32_t n = g.NumNodes();
    FabricRequire(n >= 2, "graph " + g.Name() + " hosts", n, "at least 2 hosts");
    FabricRequire(n <= 65535, "graph " + g.Name() + " hosts", n, "at most 65535 hosts for BFB");
    const uint32_t d = g.MaxDegree();
    FabricRequire(d >= 1, "graph " + g.Name() + " degree", d, "degree >= 1");
    FabricRequire(g.IsStronglyConnected(),
                  "graph " + g.Name(),
                  "not strongly connected",
                  "a strongly connected graph (every host reaches every host)");
    RequireBfbMemory(g, options);
    const HostView view = AnalyseHost(g);
    if (options.keepSchedule)
    {
        RequireScheduleMemory(g, view);
    }
    const BfbWork work = RequireBfbWork(g, view, options, 1, "allgather");
    if (options.onStart)
    {
        options.onStart(work);
    }
    const uint64_t progressTotal = 2 * uint64_t{n};

    // distTo[u * n + v] = dist(v -> u); row u is what host u's problems read,
    // and row w of an in-neighbour gives dist(v -> w): both are sequential scans.
    std::vector<uint16_t> distTo(size_t{n} * n);
    std::vector<uint32_t> queue;
    queue.reserve(n);
    uint32_t diameter = 0;
    for (uint32_t u = 0; u < n; ++u)
    {
        uint16_t* row = &distTo[size_t{u} * n];
        DistancesTo(g, u, row, queue);
        diameter = std::max<uint32_t>(diameter, *std::max_element(row, row + n));
        if (options.progress)
        {
            options.progress(u + 1, progressTotal);
        }
    }

    BfbSchedule s;
    s.kind = SynthCollective::ALLGATHER;
    s.graphName = g.Name();
    s.nodes = n;
    s.degree = d;
    s.arcs = g.Arcs();
    s.steps.resize(diameter);
    for (auto& st : s.steps)
    {
        st.phase = SynthCollective::ALLGATHER;
        st.load = 0;
        if (options.keepSchedule)
        {
            st.nodes.reserve(n);
        }
    }

    const auto& arcs = g.Arcs();
    std::vector<uint32_t> order(n); // sources of u sorted by distance
    std::vector<uint32_t> start(diameter + 2);
    std::vector<uint32_t> inArcs;        // u's in-arcs without self-loops
    std::vector<const uint16_t*> inRows; // distTo rows of their tails
    std::vector<uint64_t> key;
    std::map<std::vector<uint64_t>, uint32_t> groupOf;
    std::unordered_map<uint64_t, uint32_t> groupOf64;
    GroupProblem pb;
    std::vector<std::vector<uint32_t>> groupSources;

    for (uint32_t u = 0; u < n; ++u)
    {
        const uint16_t* row = &distTo[size_t{u} * n];
        // counting sort of sources by distance to u
        std::fill(start.begin(), start.end(), 0);
        for (uint32_t v = 0; v < n; ++v)
        {
            ++start[row[v] + 1];
        }
        for (size_t t = 1; t < start.size(); ++t)
        {
            start[t] += start[t - 1];
        }
        {
            std::vector<uint32_t> fill(start.begin(), start.end() - 1);
            for (uint32_t v = 0; v < n; ++v)
            {
                order[fill[row[v]]++] = v;
            }
        }
        inArcs.clear();
        inRows.clear();
        for (uint32_t a : g.InArcs(u))
        {
            if (arcs[a].from != u) // a self-loop never lies on a shortest path
            {
                inArcs.push_back(a);
                inRows.push_back(&distTo[size_t{arcs[a].from} * n]);
            }
        }
        const uint32_t k = static_cast<uint32_t>(inArcs.size());
        const uint32_t words = (k + 63) / 64;
        for (uint32_t t = 1; t <= diameter; ++t)
        {
            if (start[t] == start[t + 1])
            {
                continue;
            }
            pb.count.clear(); // pb.arcs keeps its vectors for reuse
            pb.arcCount = k;
            groupSources.clear();
            groupOf.clear();
            groupOf64.clear();
            for (uint32_t idx = start[t]; idx < start[t + 1]; ++idx)
            {
                uint32_t v = order[idx];
                key.assign(words, 0);
                for (uint32_t i = 0; i < k; ++i)
                {
                    if (inRows[i][v] == t - 1)
                    {
                        key[i / 64] |= uint64_t{1} << (i % 64);
                    }
                }
                uint32_t gi;
                bool fresh;
                if (words == 1)
                {
                    auto [it, ins] = groupOf64.emplace(key[0], pb.count.size());
                    gi = it->second;
                    fresh = ins;
                }
                else
                {
                    auto [it, ins] = groupOf.emplace(key, pb.count.size());
                    gi = it->second;
                    fresh = ins;
                }
                if (fresh)
                {
                    pb.count.push_back(0);
                    if (pb.arcs.size() < pb.count.size())
                    {
                        pb.arcs.emplace_back();
                    }
                    auto& groupArcs = pb.arcs[gi];
                    groupArcs.clear();
                    for (uint32_t i = 0; i < k; ++i)
                    {
                        if (key[i / 64] >> (i % 64) & 1)
                        {
                            groupArcs.push_back(i);
                        }
                    }
                    groupSources.emplace_back();
                }
                ++pb.count[gi];
                if (options.keepSchedule)
                {
                    groupSources[gi].push_back(v);
                }
            }
            auto sol = SolveGroups(pb, options.keepSchedule);
            auto& step = s.steps[t - 1];
            step.load = std::max(step.load, sol.load);
            if (options.keepSchedule)
            {
                BfbNodeStep ns;
                ns.node = u;
                ns.load = sol.load;
                ns.groups.resize(pb.count.size());
                for (size_t gi = 0; gi < pb.count.size(); ++gi)
                {
                    auto& grp = ns.groups[gi];
                    grp.pieces = std::move(groupSources[gi]);
                    for (size_t j = 0; j < pb.arcs[gi].size(); ++j)
                    {
                        if (sol.split[gi][j] != 0)
                        {
                            grp.splits.push_back({inArcs[pb.arcs[gi][j]], sol.split[gi][j]});
                        }
                    }
                }
                step.nodes.push_back(std::move(ns));
            }
        }
        if (options.progress)
        {
            options.progress(uint64_t{n} + u + 1, progressTotal);
        }
    }
    return s;
}

BfbSchedule
ReverseToReduceScatter(const BfbSchedule& ag)
{
    FabricRequire(ag.kind == SynthCollective::ALLGATHER,
                  "schedule kind",
                  ToString(ag.kind),
                  "an allgather schedule of the reverse graph");
    BfbSchedule rs = ag;
    rs.kind = SynthCollective::REDUCE_SCATTER;
    for (auto& a : rs.arcs)
    {
        std::swap(a.from, a.to);
    }
    std::reverse(rs.steps.begin(), rs.steps.end());
    for (auto& st : rs.steps)
    {
        st.phase = SynthCollective::REDUCE_SCATTER;
    }
    return rs;
}

BfbSchedule
BfbReduceScatter(const DirectConnectGraph& g, const BfbOptions& options)
{
    // before the reverse graph is built (the allgather on it checks again)
    RequireBfbWork(g, AnalyseHost(g), options, 1, "reduce-scatter");
    auto rs = ReverseToReduceScatter(BfbAllGather(g.Reverse(), options));
    rs.graphName = g.Name();
    return rs;
}

BfbSchedule
BfbAllReduce(const DirectConnectGraph& g, const BfbOptions& options)
{
    // both halves up front: a refusal after the reduce-scatter would waste it
    RequireBfbWork(g, AnalyseHost(g), options, 2, "allreduce (reduce-scatter and allgather)");
    auto ar = BfbReduceScatter(g, options);
    auto ag = BfbAllGather(g, options);
    ar.kind = SynthCollective::ALLREDUCE;
    for (auto& st : ag.steps)
    {
        ar.steps.push_back(std::move(st));
    }
    return ar;
}

// ------------------------------------------------------------- closed forms

SynthCost
LineGraphCost(const SynthCost& base, uint32_t baseNodes)
{
    return {base.steps + 1, base.tb + Fraction(1, baseNodes)};
}

SynthCost
DegreeExpansionCost(const SynthCost& base, uint32_t baseNodes, uint32_t n)
{
    if (n == 1)
    {
        return base;
    }
    return {base.steps + 1, base.tb + Fraction(n - 1, int64_t{n} * baseNodes)};
}

SynthCost
PowerCost(const SynthCost& base, uint32_t baseNodes, uint32_t n)
{
    int64_t nn = 1;
    for (uint32_t i = 0; i < n; ++i)
    {
        nn *= baseNodes;
    }
    Fraction optimal(baseNodes - 1, baseNodes);
    Fraction optimalN(nn - 1, nn);
    return {base.steps * n, base.tb / optimal * optimalN};
}

namespace
{

/**
 * Step-load profile of a product schedule with dimension orders `orders`
 * (permutations of the factors) and weights.  Load of a dimension-j arc at a
 * step = sum over orders working on j of weight * (hosts of the finished
 * dimensions) * U_j(local step); the step load is the max over j (exact when
 * every factor's busiest arc is the same arc in all orders, an upper bound
 * otherwise -- the expansion recomputes the real loads).
 */
std::vector<Fraction>
ProductProfile(const std::vector<std::vector<Fraction>>& loads,
               const std::vector<uint32_t>& nodes,
               const std::vector<std::vector<uint32_t>>& orders,
               const std::vector<Fraction>& weights)
{
    size_t total = 0;
    for (const auto& l : loads)
    {
        total += l.size();
    }
    std::vector<Fraction> profile(total, Fraction(0));
    for (size_t s = 0; s < total; ++s)
    {
        std::vector<Fraction> dimLoad(loads.size(), Fraction(0));
        for (size_t o = 0; o < orders.size(); ++o)
        {
            size_t cum = 0;
            int64_t done = 1;
            for (uint32_t j : orders[o])
            {
                if (s < cum + loads[j].size())
                {
                    dimLoad[j] += weights[o] * Fraction(done) * loads[j][s - cum];
                    break;
                }
                cum += loads[j].size();
                done *= nodes[j];
            }
        }
        for (const auto& l : dimLoad)
        {
            profile[s] = std::max(profile[s], l);
        }
    }
    return profile;
}

Fraction
SumOf(const std::vector<Fraction>& v)
{
    Fraction s(0);
    for (const auto& x : v)
    {
        s += x;
    }
    return s;
}

} // namespace

SynthCost
ProductCost(const std::vector<Fraction>& loadsG,
            uint32_t nodesG,
            uint32_t degreeG,
            const std::vector<Fraction>& loadsH,
            uint32_t nodesH,
            uint32_t degreeH,
            Fraction* alphaOut)
{
    const std::vector<std::vector<Fraction>> loads{loadsG, loadsH};
    const std::vector<uint32_t> nodes{nodesG, nodesH};
    const std::vector<std::vector<uint32_t>> orders{{0, 1}, {1, 0}};
    const Fraction scale(degreeG + degreeH, int64_t{nodesG} * nodesH);
    // T_B(alpha) is a max of linear functions per step, summed: convex and
    // piecewise linear, so its minimum is at 0, 1 or where two pieces cross.
    auto lin = [&](Fraction alpha) {
        return ProductProfile(loads, nodes, orders, {alpha, 1 - alpha});
    };
    auto p0 = lin(0);
    auto p1 = lin(1);
    std::vector<Fraction> candidates{Fraction(0), Fraction(1), Fraction(1, 2)};
    // per step and dimension the load is a + b*alpha; recover a, b from p(0), p(1)
    // per dimension by evaluating single-dimension profiles.
    for (size_t s = 0; s < p0.size(); ++s)
    {
        // Dimension loads as linear functions: evaluate at alpha = 0 and 1 for each dim.
        std::vector<Fraction> a(2), b(2);
        for (uint32_t j = 0; j < 2; ++j)
        {
            std::vector<std::vector<Fraction>> only = loads;
            only[1 - j].assign(only[1 - j].size(), Fraction(0));
            auto q0 = ProductProfile(only, nodes, orders, {Fraction(0), Fraction(1)});
            auto q1 = ProductProfile(only, nodes, orders, {Fraction(1), Fraction(0)});
            a[j] = q0[s];
            b[j] = q1[s] - q0[s];
        }
        if (b[0] != b[1])
        {
            Fraction x = (a[1] - a[0]) / (b[0] - b[1]);
            if (x > 0 && x < 1)
            {
                candidates.push_back(x);
            }
        }
    }
    Fraction best = -1;
    Fraction bestAlpha = 0;
    for (const auto& c : candidates)
    {
        Fraction tb = SumOf(lin(c)) * scale;
        // ties go to the more balanced split (both dimension orders busy)
        bool better = best < 0 || tb < best ||
                      (tb == best && abs(c - Fraction(1, 2)) < abs(bestAlpha - Fraction(1, 2)));
        if (better)
        {
            best = tb;
            bestAlpha = c;
        }
    }
    if (alphaOut)
    {
        *alphaOut = bestAlpha;
    }
    return {static_cast<uint32_t>(loadsG.size() + loadsH.size()), best};
}

std::vector<Fraction>
ProductStepLoads(const std::vector<Fraction>& loadsG,
                 uint32_t nodesG,
                 const std::vector<Fraction>& loadsH,
                 uint32_t nodesH,
                 const Fraction& alpha)
{
    return ProductProfile({loadsG, loadsH}, {nodesG, nodesH}, {{0, 1}, {1, 0}}, {alpha, 1 - alpha});
}

// ------------------------------------------------------- schedule transforms

namespace
{

void
RequireAllGather(const DirectConnectGraph& g, const BfbSchedule& s, const char* what)
{
    FabricRequire(s.kind == SynthCollective::ALLGATHER,
                  std::string(what) + " schedule kind",
                  ToString(s.kind),
                  "an allgather schedule");
    FabricRequire(s.nodes == g.NumNodes() && s.arcs.size() == g.NumArcs(),
                  std::string(what) + " schedule",
                  s.graphName,
                  "a schedule of the graph being expanded (" + g.Name() + ")");
}

BfbSchedule
EmptyLike(const DirectConnectGraph& g, const std::vector<Fraction>& weights, uint32_t steps)
{
    BfbSchedule s;
    s.kind = SynthCollective::ALLGATHER;
    s.graphName = g.Name();
    s.nodes = g.NumNodes();
    s.degree = g.MaxDegree();
    s.arcs = g.Arcs();
    s.pieceWeights = weights;
    s.steps.resize(steps);
    for (auto& st : s.steps)
    {
        st.phase = SynthCollective::ALLGATHER;
    }
    return s;
}

/// Cost of a schedule as a SynthCost.
SynthCost
CostOf(const BfbSchedule& s)
{
    return {s.Steps(), s.Tb()};
}

} // namespace

ExpansionResult
ExpandLineGraph(const DirectConnectGraph& g, const BfbSchedule& s)
{
    RequireAllGather(g, s, "L(G)");
    auto lg = LineGraph(g);
    const uint32_t P = s.NumPieces();
    const auto& arcs = g.Arcs();
    // L-arc id of (e1 -> e2): arcs leave e1 in the order of OutArcs(head of e1).
    std::vector<uint32_t> offset(g.NumArcs() + 1, 0);
    std::vector<uint32_t> posInOut(g.NumArcs(), 0);
    for (uint32_t e = 0; e < g.NumArcs(); ++e)
    {
        offset[e + 1] = offset[e] + g.OutDegree(arcs[e].to);
    }
    for (uint32_t u = 0; u < g.NumNodes(); ++u)
    {
        const auto& out = g.OutArcs(u);
        for (uint32_t i = 0; i < out.size(); ++i)
        {
            posInOut[out[i]] = i;
        }
    }
    auto larc = [&](uint32_t e1, uint32_t e2) { return offset[e1] + posInOut[e2]; };

    ExpansionResult r{lg, EmptyLike(lg, s.pieceWeights, s.Steps() + 1), {}};
    // Step 1: L-host (u->v) gathers G-shard u, i.e. the L-shards of u's in-arcs.
    for (uint32_t e2 = 0; e2 < g.NumArcs(); ++e2)
    {
        BfbNodeStep ns{e2, 0, {}};
        for (uint32_t e1 : g.InArcs(arcs[e2].from))
        {
            if (e1 == e2)
            {
                continue;
            }
            BfbGroup grp;
            for (uint32_t p = 0; p < P; ++p)
            {
                grp.pieces.push_back(e1 * P + p);
            }
            grp.splits.push_back({larc(e1, e2), Fraction(1)});
            ns.groups.push_back(std::move(grp));
        }
        if (!ns.groups.empty())
        {
            r.schedule.steps[0].nodes.push_back(std::move(ns));
        }
    }
    // Step t+1 replays G's step t: every out-arc (u->v) of u receives what u
    // received, each G in-arc (w->u) becoming the L-arc (w->u) -> (u->v).
    for (uint32_t t = 0; t < s.Steps(); ++t)
    {
        for (const auto& gns : s.steps[t].nodes)
        {
            const uint32_t u = gns.node;
            for (uint32_t e2 : g.OutArcs(u))
            {
                BfbNodeStep ns{e2, 0, {}};
                for (const auto& ggrp : gns.groups)
                {
                    BfbGroup grp;
                    for (uint32_t gp : ggrp.pieces)
                    {
                        uint32_t x = gp / P;
                        uint32_t p = gp % P;
                        for (uint32_t y : g.InArcs(x))
                        {
                            if (y != e2) // e2 already holds its own shard
                            {
                                grp.pieces.push_back(y * P + p);
                            }
                        }
                    }
                    for (const auto& sp : ggrp.splits)
                    {
                        grp.splits.push_back({larc(sp.arc, e2), sp.fraction});
                    }
                    if (!grp.pieces.empty())
                    {
                        ns.groups.push_back(std::move(grp));
                    }
                }
                r.schedule.steps[t + 1].nodes.push_back(std::move(ns));
            }
        }
    }
    r.schedule.RecomputeLoads();
    r.predicted = LineGraphCost(CostOf(s), g.NumNodes());
    return r;
}

ExpansionResult
ExpandDegree(const DirectConnectGraph& g, const BfbSchedule& s, uint32_t n)
{
    RequireAllGather(g, s, "Deg(G,n)");
    auto xg = DegreeExpansion(g, n);
    const uint32_t P = s.NumPieces();
    const auto& arcs = g.Arcs();
    const uint32_t extra = n > 1 ? 1 : 0;
    ExpansionResult r{xg, EmptyLike(xg, s.pieceWeights, s.Steps() + extra), {}};
    // G's steps: copy i of every sender forwards the i-th copies of the shards.
    for (uint32_t t = 0; t < s.Steps(); ++t)
    {
        for (const auto& gns : s.steps[t].nodes)
        {
            for (uint32_t j = 0; j < n; ++j)
            {
                BfbNodeStep ns{gns.node * n + j, 0, {}};
                for (const auto& ggrp : gns.groups)
                {
                    for (uint32_t i = 0; i < n; ++i)
                    {
                        BfbGroup grp;
                        for (uint32_t gp : ggrp.pieces)
                        {
                            grp.pieces.push_back(((gp / P) * n + i) * P + gp % P);
                        }
                        for (const auto& sp : ggrp.splits)
                        {
                            grp.splits.push_back({sp.arc * n * n + i * n + j, sp.fraction});
                        }
                        ns.groups.push_back(std::move(grp));
                    }
                }
                r.schedule.steps[t].nodes.push_back(std::move(ns));
            }
        }
    }
    // Extra step: the copies of v are not adjacent, so each gets its siblings'
    // shards spread evenly over all n*d arcs from copies of v's in-neighbours.
    if (extra)
    {
        for (uint32_t v = 0; v < g.NumNodes(); ++v)
        {
            std::vector<uint32_t> in;
            for (uint32_t a : g.InArcs(v))
            {
                if (arcs[a].from != v)
                {
                    in.push_back(a);
                }
            }
            Fraction f(1, int64_t{n} * static_cast<int64_t>(in.size()));
            for (uint32_t j = 0; j < n; ++j)
            {
                BfbNodeStep ns{v * n + j, 0, {}};
                BfbGroup grp;
                for (uint32_t j2 = 0; j2 < n; ++j2)
                {
                    for (uint32_t p = 0; p < P && j2 != j; ++p)
                    {
                        grp.pieces.push_back((v * n + j2) * P + p);
                    }
                }
                for (uint32_t a : in)
                {
                    for (uint32_t i = 0; i < n; ++i)
                    {
                        grp.splits.push_back({a * n * n + i * n + j, f});
                    }
                }
                ns.groups.push_back(std::move(grp));
                r.schedule.steps.back().nodes.push_back(std::move(ns));
            }
        }
    }
    r.schedule.RecomputeLoads();
    r.predicted = DegreeExpansionCost(CostOf(s), g.NumNodes(), n);
    return r;
}

namespace
{

/**
 * Product schedule: factor k's schedule runs in every layer of dimension k.
 * Piece layout: ((shard) * O + order) * prod(P_k) + mixed-radix(p_k).  In
 * order o, the phase on dimension j moves, for every receiving host y, the
 * pieces whose finished coordinates are anything, whose coordinate j is a
 * source of factor j's group, and whose unfinished coordinates equal y's.
 */
BfbSchedule
ProductSchedule(const DirectConnectGraph& pg,
                const std::vector<const DirectConnectGraph*>& fg,
                const std::vector<const BfbSchedule*>& fs,
                const std::vector<std::vector<uint32_t>>& orders,
                const std::vector<Fraction>& orderWeights)
{
    const size_t K = fg.size();
    const uint32_t O = static_cast<uint32_t>(orders.size());
    std::vector<uint32_t> N(K), P(K), M(K);
    std::vector<uint64_t> stride(K, 1), pStride(K, 1);
    uint32_t totalSteps = 0;
    for (size_t k = 0; k < K; ++k)
    {
        RequireAllGather(*fg[k], *fs[k], "Prod");
        N[k] = fg[k]->NumNodes();
        P[k] = fs[k]->NumPieces();
        M[k] = fg[k]->NumArcs();
        totalSteps += fs[k]->Steps();
    }
    for (size_t k = K - 1; k > 0; --k)
    {
        stride[k - 1] = stride[k] * N[k];
        pStride[k - 1] = pStride[k] * P[k];
    }
    const uint64_t PP = pStride[0] * P[0];
    // arc block offsets
    std::vector<uint64_t> arcOffset(K, 0);
    for (size_t k = 1; k < K; ++k)
    {
        arcOffset[k] = arcOffset[k - 1] + pg.NumNodes() / N[k - 1] * M[k - 1];
    }
    std::vector<Fraction> weights(O * PP);
    for (uint32_t o = 0; o < O; ++o)
    {
        for (uint64_t pm = 0; pm < PP; ++pm)
        {
            Fraction w = orderWeights[o];
            for (size_t k = 0; k < K; ++k)
            {
                w *= fs[k]->pieceWeights[(pm / pStride[k]) % P[k]];
            }
            weights[o * PP + pm] = w;
        }
    }
    BfbSchedule out = EmptyLike(pg, weights, totalSteps);
    const uint32_t n = pg.NumNodes();
    std::vector<uint32_t> coord(K);

    for (uint32_t o = 0; o < O; ++o)
    {
        uint32_t cum = 0;
        std::vector<char> done(K, 0);
        for (uint32_t j : orders[o])
        {
            const auto& sched = *fs[j];
            for (uint32_t tau = 0; tau < sched.Steps(); ++tau)
            {
                auto& step = out.steps[cum + tau];
                // index factor-j node-steps by node for this local step
                std::vector<const BfbNodeStep*> byNode(N[j], nullptr);
                for (const auto& ns : sched.steps[tau].nodes)
                {
                    byNode[ns.node] = &ns;
                }
                for (uint32_t y = 0; y < n; ++y)
                {
                    for (size_t k = 0; k < K; ++k)
                    {
                        coord[k] = static_cast<uint32_t>((y / stride[k]) % N[k]);
                    }
                    const BfbNodeStep* fns = byNode[coord[j]];
                    if (!fns)
                    {
                        continue;
                    }
                    // layer of y in dimension j (other coordinates, mixed radix)
                    uint64_t low = y % stride[j];
                    uint64_t high = y / (stride[j] * N[j]);
                    uint64_t layer = high * stride[j] + low;
                    BfbNodeStep ns{y, 0, {}};
                    for (const auto& fgrp : fns->groups)
                    {
                        BfbGroup grp;
                        // enumerate the free coordinates: finished dims (any host),
                        // and parts of every dim other than j (any part)
                        uint64_t combos = 1;
                        for (size_t k = 0; k < K; ++k)
                        {
                            if (k != j)
                            {
                                combos *= (done[k] ? N[k] : 1) * P[k];
                            }
                        }
                        for (uint32_t fp : fgrp.pieces)
                        {
                            uint32_t xj = fp / P[j];
                            uint32_t pj = fp % P[j];
                            for (uint64_t c = 0; c < combos; ++c)
                            {
                                uint64_t rest = c;
                                uint64_t shard = 0;
                                uint64_t part = 0;
                                for (size_t k = 0; k < K; ++k)
                                {
                                    uint32_t xk;
                                    uint32_t pk;
                                    if (k == j)
                                    {
                                        xk = xj;
                                        pk = pj;
                                    }
                                    else
                                    {
                                        pk = static_cast<uint32_t>(rest % P[k]);
                                        rest /= P[k];
                                        if (done[k])
                                        {
                                            xk = static_cast<uint32_t>(rest % N[k]);
                                            rest /= N[k];
                                        }
                                        else
                                        {
                                            xk = coord[k];
                                        }
                                    }
                                    shard += xk * stride[k];
                                    part += pk * pStride[k];
                                }
                                grp.pieces.push_back(
                                    static_cast<uint32_t>((shard * O + o) * PP + part));
                            }
                        }
                        for (const auto& sp : fgrp.splits)
                        {
                            grp.splits.push_back(
                                {static_cast<uint32_t>(arcOffset[j] + layer * M[j] + sp.arc),
                                 sp.fraction});
                        }
                        ns.groups.push_back(std::move(grp));
                    }
                    step.nodes.push_back(std::move(ns));
                }
            }
            cum += sched.Steps();
            done[j] = 1;
        }
    }
    // Merge node-steps of the same host (several orders work in one step).
    for (auto& step : out.steps)
    {
        std::stable_sort(
            step.nodes.begin(),
            step.nodes.end(),
            [](const BfbNodeStep& a, const BfbNodeStep& b) { return a.node < b.node; });
        std::vector<BfbNodeStep> merged;
        for (auto& ns : step.nodes)
        {
            if (!merged.empty() && merged.back().node == ns.node)
            {
                for (auto& grp : ns.groups)
                {
                    merged.back().groups.push_back(std::move(grp));
                }
            }
            else
            {
                merged.push_back(std::move(ns));
            }
        }
        step.nodes = std::move(merged);
    }
    out.RecomputeLoads();
    return out;
}

} // namespace

ExpansionResult
ExpandProduct(const DirectConnectGraph& g,
              const BfbSchedule& sg,
              const DirectConnectGraph& h,
              const BfbSchedule& sh)
{
    RequireAllGather(g, sg, "Prod(G,H) first");
    RequireAllGather(h, sh, "Prod(G,H) second");
    Fraction alpha;
    auto cost = ProductCost(sg.StepLoads(),
                            g.NumNodes(),
                            sg.degree,
                            sh.StepLoads(),
                            h.NumNodes(),
                            sh.degree,
                            &alpha);
    auto pg = CartesianProduct(g, h);
    std::vector<std::vector<uint32_t>> orders;
    std::vector<Fraction> weights;
    if (alpha > 0)
    {
        orders.push_back({0, 1});
        weights.push_back(alpha);
    }
    if (alpha < 1)
    {
        orders.push_back({1, 0});
        weights.push_back(1 - alpha);
    }
    auto sched = ProductSchedule(pg, {&g, &h}, {&sg, &sh}, orders, weights);
    return {pg, std::move(sched), cost};
}

ExpansionResult
ExpandPower(const DirectConnectGraph& g, const BfbSchedule& s, uint32_t n)
{
    RequireAllGather(g, s, "Pow(G,n)");
    FabricRequire(n >= 1 && n <= 8, "Pow(G,n) exponent", n, "1..8");
    auto pg = CartesianPower(g, n);
    // Order k works on dimensions k, k+1, ...: in every phase each dimension
    // is used by exactly one order, so no port idles.
    std::vector<std::vector<uint32_t>> orders(n);
    for (uint32_t k = 0; k < n; ++k)
    {
        for (uint32_t i = 0; i < n; ++i)
        {
            orders[k].push_back((k + i) % n);
        }
    }
    std::vector<Fraction> weights(n, Fraction(1, n));
    std::vector<const DirectConnectGraph*> fg(n, &g);
    std::vector<const BfbSchedule*> fs(n, &s);
    auto sched = ProductSchedule(pg, fg, fs, orders, weights);
    return {pg, std::move(sched), PowerCost(CostOf(s), g.NumNodes(), n)};
}

} // namespace ns3
