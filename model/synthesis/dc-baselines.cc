/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "dc-baselines.h"

#include "ns3/collective-algorithms.h"
#include "ns3/fabric-error.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <numeric>
#include <random>
#include <set>

namespace ns3
{

namespace
{

/// Tree pipelining: chunks of max(this, M / (2 * kTreeChunks)).
constexpr uint64_t kTreeMinChunk = 64 * 1024;
/// Tree pipelining: at most this many chunks per tree.
constexpr uint64_t kTreeChunks = 64;

/**
 * A depth-first search for a Hamiltonian cycle over free arcs from host 0,
 * with at most \p budget host visits. \return its arc ids in order, or empty.
 */
std::vector<uint32_t>
FindCycle(const DirectConnectGraph& g,
          const std::vector<char>& used,
          std::mt19937& rng,
          uint64_t budget)
{
    const uint32_t n = g.NumNodes();
    std::vector<char> onPath(n, 0);
    // onward choices of a host: free out-arcs to hosts off the path
    auto onward = [&](uint32_t u) {
        uint32_t k = 0;
        for (uint32_t a : g.OutArcs(u))
        {
            k += !used[a] && !onPath[g.GetArc(a).to];
        }
        return k;
    };

    struct Frame
    {
        uint32_t host;
        std::vector<uint32_t> arcs; // candidates, best first
        size_t next{0};
    };

    auto candidates = [&](uint32_t u, size_t depth) {
        std::vector<uint32_t> c;
        for (uint32_t a : g.OutArcs(u))
        {
            const uint32_t v = g.GetArc(a).to;
            if (used[a] || v == u)
            {
                continue;
            }
            if (depth + 1 == n ? v == 0 : !onPath[v])
            {
                c.push_back(a);
            }
        }
        std::shuffle(c.begin(), c.end(), rng);
        std::stable_sort(c.begin(), c.end(), [&](uint32_t x, uint32_t y) {
            return onward(g.GetArc(x).to) < onward(g.GetArc(y).to);
        });
        return c;
    };
    std::vector<Frame> stack;
    std::vector<uint32_t> path; // arcs
    onPath[0] = 1;
    stack.push_back({0, candidates(0, 0)});
    while (!stack.empty() && budget > 0)
    {
        Frame& f = stack.back();
        if (f.next == f.arcs.size())
        {
            onPath[f.host] = 0;
            stack.pop_back();
            if (!path.empty())
            {
                path.pop_back();
            }
            continue;
        }
        const uint32_t a = f.arcs[f.next++];
        const uint32_t v = g.GetArc(a).to;
        path.push_back(a);
        if (path.size() == n)
        {
            return path; // closed at host 0
        }
        --budget;
        onPath[v] = 1;
        stack.push_back({v, candidates(v, path.size())});
    }
    return {};
}

/// \return the cycle's host order (from host 0)
std::vector<uint32_t>
CycleOrder(const DirectConnectGraph& g, const std::vector<uint32_t>& arcs)
{
    std::vector<uint32_t> order;
    for (uint32_t a : arcs)
    {
        order.push_back(g.GetArc(a).from);
    }
    return order;
}

/// \return the ring's edges as a sorted list (two rings are the same if equal)
std::vector<std::pair<uint32_t, uint32_t>>
RingEdges(const std::vector<uint32_t>& order)
{
    std::vector<std::pair<uint32_t, uint32_t>> e;
    for (size_t i = 0; i < order.size(); ++i)
    {
        e.emplace_back(order[i], order[(i + 1) % order.size()]);
    }
    std::sort(e.begin(), e.end());
    return e;
}

/// \return whether every edge of the ring is an arc of \p g
bool
IsNative(const DirectConnectGraph& g, const std::vector<uint32_t>& order)
{
    for (size_t i = 0; i < order.size(); ++i)
    {
        const uint32_t u = order[i];
        const uint32_t v = order[(i + 1) % order.size()];
        const auto& out = g.OutArcs(u);
        if (std::none_of(out.begin(), out.end(), [&](uint32_t a) { return g.GetArc(a).to == v; }))
        {
            return false;
        }
    }
    return true;
}

/// The step of a ring-based allreduce: every ring edge carries its ring's piece.
std::vector<DcMessage>
RingStep(const std::vector<std::vector<uint32_t>>& rings, uint64_t bytes)
{
    std::vector<DcMessage> step;
    const auto parts = SplitBytes(bytes, rings.size());
    for (size_t c = 0; c < rings.size(); ++c)
    {
        const size_t n = rings[c].size();
        for (size_t i = 0; i < n; ++i)
        {
            step.push_back({rings[c][i],
                            rings[c][(i + 1) % n],
                            static_cast<double>(parts[c]) / static_cast<double>(n)});
        }
    }
    return step;
}

/// \return the sides of a torus ("Torus(a,b,...)") or hypercube
/// ("Hypercube(k)": k sides of 2) by the graph's name, else none
std::vector<uint32_t>
GridSides(const DirectConnectGraph& g)
{
    const std::string& name = g.Name();
    std::vector<uint32_t> sides;
    if (name.rfind("Hypercube(", 0) == 0)
    {
        sides.assign(static_cast<size_t>(std::log2(g.NumNodes())), 2);
    }
    else if (name.rfind("Torus(", 0) == 0)
    {
        for (size_t i = 6; i < name.size(); ++i)
        {
            if (std::isdigit(static_cast<unsigned char>(name[i])))
            {
                size_t end = i;
                sides.push_back(static_cast<uint32_t>(std::stoul(name.substr(i), &end)));
                i += end;
            }
        }
    }
    return sides;
}

/**
 * The reflected mixed-radix Gray order of a grid's hosts (coordinate 0 most
 * significant in the host id), an even side outermost: consecutive hosts, and
 * the last and the first, differ by one step in one coordinate.
 * \return the order, or empty without an even side
 */
std::vector<uint32_t>
GrayCycle(const std::vector<uint32_t>& sides)
{
    const auto even =
        std::find_if(sides.begin(), sides.end(), [](uint32_t s) { return s % 2 == 0; });
    if (even == sides.end())
    {
        return {};
    }
    std::vector<uint64_t> stride(sides.size(), 1);
    for (size_t c = sides.size() - 1; c > 0; --c)
    {
        stride[c - 1] = stride[c] * sides[c];
    }
    // traversal order: the even side outermost, the others after it
    std::vector<size_t> dims{static_cast<size_t>(even - sides.begin())};
    for (size_t c = 0; c < sides.size(); ++c)
    {
        if (c != dims[0])
        {
            dims.push_back(c);
        }
    }
    const uint64_t n = stride[0] * sides[0];
    std::vector<uint32_t> order;
    order.reserve(n);
    for (uint64_t i = 0; i < n; ++i)
    {
        uint64_t host = 0;
        uint64_t inner = n; // hosts in one block of the current digit
        for (size_t c : dims)
        {
            const uint64_t block = i / inner; // blocks of this digit so far
            inner /= sides[c];
            const uint64_t digit = (i / inner) % sides[c];
            // a digit runs backwards in every odd block of the digit outside it
            host += (block % 2 == 0 ? digit : sides[c] - 1 - digit) * stride[c];
        }
        order.push_back(static_cast<uint32_t>(host));
    }
    return order;
}

} // namespace

std::vector<std::vector<uint32_t>>
FindArcDisjointRings(const DirectConnectGraph& g, uint32_t maxRings)
{
    const uint32_t n = g.NumNodes();
    std::vector<std::vector<uint32_t>> best;
    if (n < 2 || maxRings == 0)
    {
        return best;
    }
    // the reverse of a cycle: free arcs v -> u for each of its arcs u -> v
    auto reverseArcs = [&](const std::vector<uint32_t>& cycle, const std::vector<char>& used) {
        std::vector<uint32_t> rev;
        std::vector<char> taken = used;
        for (auto it = cycle.rbegin(); it != cycle.rend(); ++it)
        {
            const auto& arc = g.GetArc(*it);
            uint32_t found = kNoIndex;
            for (uint32_t a : g.OutArcs(arc.to))
            {
                if (!taken[a] && g.GetArc(a).to == arc.from)
                {
                    found = a;
                    break;
                }
            }
            if (found == kNoIndex)
            {
                return std::vector<uint32_t>{};
            }
            taken[found] = 1;
            rev.push_back(found);
        }
        // start the reversed cycle at host 0 as FindCycle's do
        std::rotate(rev.begin(), rev.end() - 1, rev.end());
        return rev;
    };
    // first the shifted rings x -> x + s (s coprime to N) whose arcs all
    // exist: a circulant's own rings, found without a search
    std::vector<char> shiftUsed(g.NumArcs(), 0);
    for (uint32_t sh = 1; sh < n && best.size() < maxRings; ++sh)
    {
        if (std::gcd(sh, n) != 1)
        {
            continue;
        }
        std::vector<uint32_t> arcs;
        for (uint32_t x = 0, i = 0; i < n; ++i, x = (x + sh) % n)
        {
            for (uint32_t a : g.OutArcs(x))
            {
                if (!shiftUsed[a] && g.GetArc(a).to == (x + sh) % n)
                {
                    arcs.push_back(a);
                    break;
                }
            }
            if (arcs.size() != i + 1)
            {
                break;
            }
        }
        if (arcs.size() == n)
        {
            for (uint32_t a : arcs)
            {
                shiftUsed[a] = 1;
            }
            best.push_back(CycleOrder(g, arcs));
        }
    }
    // a torus with an even side or a hypercube: the Gray order's cycle (a
    // snake) and its reverse, which the search may not find on large grids
    const std::vector<uint32_t> gray = GrayCycle(GridSides(g));
    if (gray.size() == n && IsNative(g, gray))
    {
        for (const bool reverse : {false, true})
        {
            std::vector<uint32_t> order = gray;
            if (reverse)
            {
                std::reverse(order.begin() + 1, order.end());
            }
            std::vector<uint32_t> arcs;
            for (size_t i = 0; i < n; ++i)
            {
                for (uint32_t a : g.OutArcs(order[i]))
                {
                    if (!shiftUsed[a] && g.GetArc(a).to == order[(i + 1) % n])
                    {
                        arcs.push_back(a);
                        break;
                    }
                }
            }
            if (arcs.size() == n && best.size() < maxRings && (n > 2 || !reverse))
            {
                for (uint32_t a : arcs)
                {
                    shiftUsed[a] = 1;
                }
                best.push_back(order);
            }
        }
    }
    const auto shifted = best; // the search adds to these, on the other arcs
    const int attempts = 32;
    const uint64_t budget = 64 * uint64_t{n} + 20000;
    for (int t = 0; t < attempts && best.size() < maxRings; ++t)
    {
        std::mt19937 rng(12345 + t);
        // odd attempts ignore the shifted rings: C(16,{1,2}) has four
        // Hamiltonian cycles, but none on its +-2 arcs alone
        const bool fromShifted = t % 2 == 0;
        std::vector<char> used = fromShifted ? shiftUsed : std::vector<char>(g.NumArcs(), 0);
        std::vector<std::vector<uint32_t>> rings;
        if (fromShifted)
        {
            rings = shifted;
        }
        while (rings.size() < maxRings)
        {
            auto cycle = FindCycle(g, used, rng, budget);
            if (cycle.empty())
            {
                break;
            }
            for (uint32_t a : cycle)
            {
                used[a] = 1;
            }
            rings.push_back(CycleOrder(g, cycle));
            if (rings.size() < maxRings && n > 2)
            {
                auto rev = reverseArcs(cycle, used);
                if (!rev.empty())
                {
                    for (uint32_t a : rev)
                    {
                        used[a] = 1;
                    }
                    rings.push_back(CycleOrder(g, rev));
                }
            }
        }
        if (rings.size() > best.size())
        {
            best = std::move(rings);
        }
        if (n > 256 && t >= 1 && best.size() == shifted.size())
        {
            break; // a large graph whose first search failed: the others would too
        }
    }
    return best;
}

CollectiveSchedule
MultiRingAllReduce(const std::vector<std::vector<uint32_t>>& rings, uint64_t bytes)
{
    FabricRequire(!rings.empty(), "rings", 0, "at least one ring");
    const auto n = static_cast<uint32_t>(rings[0].size());
    FabricRequire(n >= 2, "ring hosts", n, "at least 2");
    for (size_t c = 0; c < rings.size(); ++c)
    {
        std::vector<uint32_t> sorted = rings[c];
        std::sort(sorted.begin(), sorted.end());
        std::vector<uint32_t> all(n);
        std::iota(all.begin(), all.end(), 0);
        FabricRequire(sorted == all,
                      fmt::format("rings[{}]", c),
                      fmt::format("{} hosts", rings[c].size()),
                      fmt::format("a permutation of the hosts 0..{}", n - 1));
    }
    const auto k = static_cast<uint32_t>(rings.size());
    CollectiveSchedule s(CollectiveType::AllReduce, n, bytes);
    for (uint64_t part : SplitBytes(bytes, k))
    {
        for (uint64_t piece : SplitBytes(part, n))
        {
            s.AddChunk(piece);
        }
    }
    for (uint32_t r = 0; r < n; ++r)
    {
        const size_t ops = size_t{4} * (n - 1) * k;
        s.ReserveOps(r, ops, 2 * ops);
    }
    ScheduleBuilder b(s);
    // reduce-scatter: at step t position i passes piece i - t - 1 on, so it ends
    // with piece i reduced; allgather: position i passes piece i - t on
    for (int phase = 0; phase < 2; ++phase)
    {
        for (uint32_t t = 0; t + 1 < n; ++t)
        {
            for (uint32_t c = 0; c < k; ++c)
            {
                const auto& ring = rings[c];
                for (uint32_t i = 0; i < n; ++i)
                {
                    const uint32_t q = phase == 0 ? (i + 2 * n - t - 1) % n : (i + n - t) % n;
                    b.Transfer(ring[i],
                               ring[(i + 1) % n],
                               c * n + q,
                               phase == 0 ? RecvMode::Reduce : RecvMode::Copy,
                               static_cast<uint16_t>(c));
                }
            }
        }
    }
    return s;
}

namespace
{

/// The search of PlaceDoubleBinaryTree (see there), with its budget.
class TreePairSearch
{
  public:
    TreePairSearch(const DirectConnectGraph& g, uint64_t budget)
        : m_n(g.NumNodes()),
          m_budget(budget),
          m_adj(m_n)
    {
        std::vector<std::vector<uint32_t>> out(m_n);
        for (uint32_t u = 0; u < m_n; ++u)
        {
            for (uint32_t a : g.OutArcs(u))
            {
                if (g.GetArc(a).to != u)
                {
                    out[u].push_back(g.GetArc(a).to);
                }
            }
            std::sort(out[u].begin(), out[u].end());
            out[u].erase(std::unique(out[u].begin(), out[u].end()), out[u].end());
        }
        for (uint32_t u = 0; u < m_n; ++u)
        {
            for (uint32_t v : out[u])
            {
                if (std::binary_search(out[v].begin(), out[v].end(), u))
                {
                    m_adj[u].push_back(v);
                }
            }
        }
        m_hmax = DoubleBinaryTree(m_n)[0].height;
    }

    /// \return the placement
    DcTreePlacement Run()
    {
        DcTreePlacement r;
        // side 0 holds ceil(n/2) hosts; with n even the sides are alike, so host 0 is on side 0
        const uint32_t s0 = (m_n + 1) / 2;
        std::vector<uint32_t> pick(s0);
        std::iota(pick.begin(), pick.end(), 0);
        const uint32_t top = m_n % 2 == 0 ? 1 : 0; // pick[0] stays below top when n is even
        while (!m_stop)
        {
            m_side.assign(m_n, 1);
            for (uint32_t v : pick)
            {
                m_side[v] = 0;
            }
            if (Partition())
            {
                break;
            }
            // the next combination
            int i = static_cast<int>(s0) - 1;
            while (i >= 0 && pick[i] == m_n - s0 + i)
            {
                --i;
            }
            if (i < 0 || (i == 0 && top == 1))
            {
                break;
            }
            ++pick[i];
            for (uint32_t j = i + 1; j < s0; ++j)
            {
                pick[j] = pick[j - 1] + 1;
            }
        }
        r.tried = m_tried;
        r.exhausted = m_stop;
        r.complete = !m_stop && !m_capped;
        if (!m_found.empty())
        {
            r.trees = std::move(m_found);
            r.exhausted = false;
        }
        return r;
    }

  private:
    /// A rooted tree on one side's hosts: parent (kNoRank off it and at the root), depth.
    struct Skeleton
    {
        uint32_t root;
        std::vector<uint32_t> parent;
        std::vector<uint32_t> depth;
        std::vector<uint32_t> children;
    };

    /// \return false (and stop) when the budget is spent
    bool Step()
    {
        if (m_tried == m_budget)
        {
            m_stop = true;
            return false;
        }
        ++m_tried;
        return true;
    }

    /// Every binary spanning tree of \p side's hosts rooted at each of them,
    /// no deeper than the height limit (at most kMaxSkeletons).
    std::vector<Skeleton> Skeletons(uint32_t side)
    {
        std::vector<Skeleton> all;
        Skeleton s;
        s.parent.assign(m_n, kNoRank);
        s.depth.assign(m_n, kNoRank);
        s.children.assign(m_n, 0);
        uint32_t size = 0;
        for (uint32_t v = 0; v < m_n; ++v)
        {
            size += m_side[v] == side;
        }
        std::vector<uint32_t> queue;
        // grow: the hosts in queue order each take 0, 1 or 2 unvisited neighbours
        std::function<void(size_t)> grow = [&](size_t qi) {
            if (m_stop || all.size() == kMaxSkeletons)
            {
                m_capped = m_capped || all.size() == kMaxSkeletons;
                return;
            }
            if (queue.size() == size)
            {
                all.push_back(s);
                return;
            }
            if (qi == queue.size() || !Step())
            {
                return;
            }
            const uint32_t u = queue[qi];
            std::vector<uint32_t> c;
            if (s.depth[u] < m_hmax)
            {
                for (uint32_t v : m_adj[u])
                {
                    if (m_side[v] == side && s.depth[v] == kNoRank)
                    {
                        c.push_back(v);
                    }
                }
            }
            auto take = [&](std::initializer_list<uint32_t> kids) {
                for (uint32_t v : kids)
                {
                    s.parent[v] = u;
                    s.depth[v] = s.depth[u] + 1;
                    queue.push_back(v);
                }
                s.children[u] = static_cast<uint32_t>(kids.size());
                grow(qi + 1);
                for (uint32_t v : kids)
                {
                    s.parent[v] = kNoRank;
                    s.depth[v] = kNoRank;
                    queue.pop_back();
                }
                s.children[u] = 0;
            };
            // two children first: shallow trees come out early
            for (size_t i = 0; i < c.size(); ++i)
            {
                for (size_t j = i + 1; j < c.size(); ++j)
                {
                    take({c[i], c[j]});
                }
            }
            for (uint32_t v : c)
            {
                take({v});
            }
            take({});
        };
        for (uint32_t root = 0; root < m_n && !m_stop; ++root)
        {
            if (m_side[root] != side)
            {
                continue;
            }
            s.root = root;
            s.depth[root] = 0;
            queue = {root};
            grow(0);
            s.depth[root] = kNoRank;
        }
        return all;
    }

    /// \return whether \p side's hosts are joined by links among themselves
    bool Connected(uint32_t side) const
    {
        uint32_t first = kNoRank;
        uint32_t size = 0;
        for (uint32_t v = 0; v < m_n; ++v)
        {
            if (m_side[v] == side)
            {
                first = first == kNoRank ? v : first;
                ++size;
            }
        }
        if (first == kNoRank)
        {
            return false;
        }
        std::vector<char> seen(m_n, 0);
        std::vector<uint32_t> q{first};
        seen[first] = 1;
        for (size_t i = 0; i < q.size(); ++i)
        {
            for (uint32_t v : m_adj[q[i]])
            {
                if (m_side[v] == side && !seen[v])
                {
                    seen[v] = 1;
                    q.push_back(v);
                }
            }
        }
        return q.size() == size;
    }

    /// One partition: \return whether trees were found
    bool Partition()
    {
        if (!Step() || !Connected(0) || !Connected(1))
        {
            return false;
        }
        const std::vector<Skeleton> sk0 = Hangable(Skeletons(0), 0);
        const std::vector<Skeleton> sk1 = Hangable(Skeletons(1), 1);
        for (const Skeleton& a : sk0)
        {
            for (const Skeleton& b : sk1)
            {
                if (m_stop)
                {
                    return false;
                }
                if (Attach({&a, &b}))
                {
                    return true;
                }
            }
        }
        return false;
    }

    /// \return the skeletons of \p side that leave, within the height, a
    /// child slot for every host of the other side and one linked to each
    /// (the same order; one step each)
    std::vector<Skeleton> Hangable(std::vector<Skeleton> all, uint32_t side)
    {
        std::vector<Skeleton> kept;
        for (Skeleton& s : all)
        {
            if (!Step())
            {
                break;
            }
            auto slots = [&](uint32_t v) {
                return s.depth[v] + 1 <= m_hmax ? 2 - s.children[v] : 0;
            };
            uint64_t total = 0;
            uint32_t others = 0;
            bool each = true;
            for (uint32_t v = 0; v < m_n; ++v)
            {
                if (m_side[v] == side)
                {
                    total += slots(v);
                    continue;
                }
                ++others;
                bool any = false;
                for (uint32_t y : m_adj[v])
                {
                    any = any || (m_side[y] == side && slots(y) > 0);
                }
                each = each && any;
            }
            if (each && total >= others)
            {
                kept.push_back(std::move(s));
            }
        }
        return kept;
    }

    /// Hang every host as a leaf of the other side's skeleton, each over a
    /// link of its own to a host of spare children within the height limit.
    bool Attach(std::array<const Skeleton*, 2> sk)
    {
        if (!Step())
        {
            return false; // every pair is a step, even one that fails at once
        }
        // free child slots: hosts of side k take children of tree k
        std::vector<uint32_t> spare(m_n, 0);
        for (uint32_t v = 0; v < m_n; ++v)
        {
            const Skeleton& s = *sk[m_side[v]];
            spare[v] = s.depth[v] + 1 <= m_hmax ? 2 - s.children[v] : 0;
        }
        // hosts to hang, fewest choices first
        std::vector<uint32_t> order(m_n);
        std::iota(order.begin(), order.end(), 0);
        auto choices = [&](uint32_t x) {
            uint32_t c = 0;
            for (uint32_t y : m_adj[x])
            {
                c += m_side[y] != m_side[x] && spare[y] > 0;
            }
            return c;
        };
        std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
            return choices(x) < choices(y);
        });
        if (choices(order[0]) == 0)
        {
            return false;
        }
        std::vector<uint32_t> up(m_n, kNoRank); // each host's parent in the other side's tree
        std::function<bool(size_t)> hang = [&](size_t i) {
            if (i == m_n)
            {
                return true;
            }
            if (!Step())
            {
                return false;
            }
            const uint32_t x = order[i];
            for (uint32_t y : m_adj[x])
            {
                // y's link to x is free unless y hangs from x
                if (m_side[y] == m_side[x] || spare[y] == 0 || up[y] == x)
                {
                    continue;
                }
                up[x] = y;
                --spare[y];
                if (hang(i + 1))
                {
                    return true;
                }
                ++spare[y];
                up[x] = kNoRank;
                if (m_stop)
                {
                    return false;
                }
            }
            return false;
        };
        if (!hang(0))
        {
            return false;
        }
        for (uint32_t k = 0; k < 2; ++k)
        {
            const Skeleton& s = *sk[k];
            BinaryTree t;
            t.root = s.root;
            t.parent.assign(m_n, kNoRank);
            t.children.assign(m_n, {});
            for (uint32_t v = 0; v < m_n; ++v)
            {
                t.parent[v] = m_side[v] == k ? s.parent[v] : up[v];
                if (t.parent[v] != kNoRank)
                {
                    t.children[t.parent[v]].push_back(v);
                }
            }
            std::vector<uint32_t> depth(m_n, 0);
            t.topDown.push_back(t.root);
            for (size_t q = 0; q < t.topDown.size(); ++q)
            {
                const uint32_t v = t.topDown[q];
                for (uint32_t c : t.children[v])
                {
                    depth[c] = depth[v] + 1;
                    t.height = std::max(t.height, depth[c]);
                    t.topDown.push_back(c);
                }
            }
            m_found.push_back(std::move(t));
        }
        return true;
    }

    static constexpr size_t kMaxSkeletons = 4096; //!< per side and partition

    uint32_t m_n;                             //!< hosts
    uint64_t m_budget;                        //!< steps allowed
    std::vector<std::vector<uint32_t>> m_adj; //!< hosts linked both ways, sorted
    uint32_t m_hmax{0};                       //!< height limit: NCCL's trees'
    std::vector<uint8_t> m_side;              //!< the tree each host may be inner in
    uint64_t m_tried{0};                      //!< steps taken
    bool m_stop{false};                       //!< the budget ran out
    bool m_capped{false};                     //!< some skeletons were left out
    std::vector<BinaryTree> m_found;          //!< the trees, once found
};

} // namespace

DcTreePlacement
PlaceDoubleBinaryTree(const DirectConnectGraph& g, uint64_t budget)
{
    if (g.NumNodes() < 3)
    {
        // two hosts: both trees are the one edge between them
        DcTreePlacement r;
        r.complete = true;
        return r;
    }
    return TreePairSearch(g, budget).Run();
}

const std::vector<std::string>&
DcBaselineNames()
{
    static const std::vector<std::string> names{"ring", "shifted-ring", "tree", "halving-doubling"};
    return names;
}

DcBaseline
BuildDcBaseline(const DirectConnectGraph& g,
                std::string_view algorithm,
                uint64_t bytes,
                bool withSchedule,
                uint64_t treeSearchBudget)
{
    const auto& names = DcBaselineNames();
    FabricRequire(std::find(names.begin(), names.end(), algorithm) != names.end(),
                  "algorithm",
                  std::string(algorithm),
                  "ring, shifted-ring, tree or halving-doubling");
    const uint32_t n = g.NumNodes();
    FabricRequire(n >= 2, "direct-connect nodes", n, "at least 2");
    DcBaseline b;
    b.algorithm = std::string(algorithm);
    if (algorithm == "ring" || algorithm == "shifted-ring")
    {
        const uint32_t want = algorithm == "ring" ? 1 : std::max<uint32_t>(1, g.Degree());
        b.rings = FindArcDisjointRings(g, want);
        // missing rings: a found order (or 0..N-1) taken s positions at a time,
        // s coprime to N, skipping rings already there
        std::vector<uint32_t> base(n);
        std::iota(base.begin(), base.end(), 0);
        if (!b.rings.empty())
        {
            base = b.rings[0];
        }
        std::set<std::vector<std::pair<uint32_t, uint32_t>>> have;
        for (const auto& r : b.rings)
        {
            have.insert(RingEdges(r));
        }
        for (uint32_t s = 1; s < n && b.rings.size() < want; ++s)
        {
            if (std::gcd(s, n) != 1)
            {
                continue;
            }
            std::vector<uint32_t> order(n);
            for (uint32_t i = 0; i < n; ++i)
            {
                order[i] = base[static_cast<uint64_t>(i) * s % n];
            }
            if (have.insert(RingEdges(order)).second)
            {
                b.rings.push_back(std::move(order));
            }
        }
        for (const auto& r : b.rings)
        {
            b.nativeRings += IsNative(g, r);
        }
        b.messages = uint64_t{2} * (n - 1) * n * b.rings.size();
        if (withSchedule)
        {
            b.schedule = MultiRingAllReduce(b.rings, bytes);
        }
        b.steps = {RingStep(b.rings, bytes)};
        b.repeats = {2 * (n - 1)};
        b.routing =
            fmt::format("{} ring(s), {} on arcs only{}",
                        b.rings.size(),
                        b.nativeRings,
                        b.nativeRings < b.rings.size() ? ", others over shortest paths" : "");
    }
    else if (algorithm == "tree")
    {
        const uint64_t chunk =
            std::max(kTreeMinChunk, (bytes + 2 * kTreeChunks - 1) / (2 * kTreeChunks));
        const uint64_t half = (bytes + 1) / 2;
        const uint64_t depth = half <= chunk ? 1 : (half + chunk - 1) / chunk;
        b.messages = 2 * depth * uint64_t{2} * (n - 1);
        std::array<BinaryTree, 2> trees = DoubleBinaryTree(n);
        DcTreePlacement placed = PlaceDoubleBinaryTree(g, treeSearchBudget);
        b.treeOnLinks = !placed.trees.empty();
        if (b.treeOnLinks)
        {
            trees = {std::move(placed.trees[0]), std::move(placed.trees[1])};
            b.routing = fmt::format("two trees (heights {} and {}) placed so that every tree "
                                    "edge is a link of its own ({} search steps), chunks of {} "
                                    "bytes",
                                    trees[0].height,
                                    trees[1].height,
                                    placed.tried,
                                    chunk);
        }
        else
        {
            const std::string why =
                placed.complete ? std::string("none exists within NCCL's height")
                                : fmt::format("none found in {} search steps", placed.tried);
            b.routing = fmt::format("ranks = hosts, chunks of {} bytes, tree edges over "
                                    "shortest paths (no placement with every tree edge on a "
                                    "link of its own: {})",
                                    chunk,
                                    why);
        }
        if (withSchedule)
        {
            b.schedule = DoubleBinaryTreeAllReduce(trees, bytes, chunk, 1);
        }
        // formula: both trees' edges up and down at once, M/2 each
        DcRouter router(g);
        const auto halves = SplitBytes(bytes, 2);
        std::vector<DcMessage> all;
        uint32_t deepest = 0;
        for (int k = 0; k < 2; ++k)
        {
            const BinaryTree& t = trees[k];
            std::vector<uint32_t> depth(n, 0); // hops from the root
            for (uint32_t v : t.topDown)
            {
                if (v == t.root)
                {
                    continue;
                }
                const uint32_t p = t.parent[v];
                depth[v] = depth[p] + router.Hops(p, v);
                deepest = std::max(deepest, depth[v]);
                all.push_back({v, p, static_cast<double>(halves[k])});
                all.push_back({p, v, static_cast<double>(halves[k])});
            }
        }
        b.steps = {all};
        b.repeats = {1};
        b.pipelineHops = deepest;
        b.trees.assign(trees.begin(), trees.end());
    }
    else
    {
        uint32_t p = 1;
        while (p <= n / 2)
        {
            p *= 2;
        }
        // one message per rank and step: log2 p halving and log2 p doubling
        // steps of p, a fold and an unfold per rank beyond p
        uint64_t steps = 0;
        for (uint32_t q = p; q > 1; q /= 2)
        {
            ++steps;
        }
        b.messages = uint64_t{2} * p * steps + uint64_t{2} * (n - p);
        if (withSchedule)
        {
            b.schedule = HalvingDoublingAllReduce(n, bytes, 0, 1);
        }
        const double m = static_cast<double>(bytes);
        std::vector<DcMessage> fold;
        std::vector<DcMessage> unfold;
        for (uint32_t e = 0; e + p < n; ++e)
        {
            fold.push_back({p + e, e, m});
            unfold.push_back({e, p + e, m});
        }
        if (!fold.empty())
        {
            b.steps.push_back(fold);
        }
        std::vector<std::vector<DcMessage>> halving;
        double share = m;
        for (uint32_t d = p / 2; d >= 1; d /= 2)
        {
            share /= 2;
            std::vector<DcMessage> step;
            for (uint32_t r = 0; r < p; ++r)
            {
                step.push_back({r, r ^ d, share});
            }
            halving.push_back(step);
        }
        // doubling: the halving steps backwards, partners the same, sizes the same
        b.steps.insert(b.steps.end(), halving.begin(), halving.end());
        b.steps.insert(b.steps.end(), halving.rbegin(), halving.rend());
        if (!unfold.empty())
        {
            b.steps.push_back(unfold);
        }
        b.repeats.assign(b.steps.size(), 1);
        b.routing = fmt::format("ranks = hosts, power of two {}{}, partners over shortest paths",
                                p,
                                p < n ? " with fold" : "");
    }
    if (withSchedule)
    {
        b.schedule.SetAlgorithm("dc-" + b.algorithm);
    }
    return b;
}

DcRouter::DcRouter(const DirectConnectGraph& g)
    : m_g(g),
      m_reverse(g.Reverse()),
      m_distTo(g.NumNodes())
{
}

const std::vector<uint32_t>&
DcRouter::DistTo(uint32_t dst)
{
    if (m_distTo[dst].empty())
    {
        m_distTo[dst] = m_reverse.BfsDistances(dst);
    }
    return m_distTo[dst];
}

uint32_t
DcRouter::Hops(uint32_t src, uint32_t dst)
{
    return DistTo(dst)[src];
}

double
DcRouter::MaxArcBytes(const std::vector<DcMessage>& step, uint32_t& maxHops)
{
    std::vector<double> load(m_g.NumArcs(), 0.0);
    std::vector<double> at(m_g.NumNodes(), 0.0);
    maxHops = 0;
    for (const DcMessage& msg : step)
    {
        const auto& dist = DistTo(msg.dst);
        FabricRequire(dist[msg.src] != DirectConnectGraph::UNREACHABLE,
                      "direct-connect graph",
                      m_g.Name(),
                      "a strongly connected graph");
        maxHops = std::max(maxHops, dist[msg.src]);
        if (!(msg.bytes > 0))
        {
            continue; // an empty piece loads nothing
        }
        // the bytes spread level by level towards dst, evenly over next arcs
        std::vector<uint32_t> level{msg.src};
        at[msg.src] = msg.bytes;
        while (!level.empty() && level.front() != msg.dst)
        {
            std::vector<uint32_t> next;
            for (uint32_t u : level)
            {
                uint32_t ways = 0;
                for (uint32_t a : m_g.OutArcs(u))
                {
                    ways += dist[m_g.GetArc(a).to] + 1 == dist[u];
                }
                for (uint32_t a : m_g.OutArcs(u))
                {
                    const uint32_t v = m_g.GetArc(a).to;
                    if (dist[v] + 1 == dist[u])
                    {
                        load[a] += at[u] / ways;
                        if (at[v] == 0)
                        {
                            next.push_back(v);
                        }
                        at[v] += at[u] / ways;
                    }
                }
                at[u] = 0;
            }
            level = std::move(next);
        }
        for (uint32_t u : level)
        {
            at[u] = 0;
        }
    }
    return load.empty() ? 0.0 : *std::max_element(load.begin(), load.end());
}

double
DcBaselineFormula(const DirectConnectGraph& g,
                  const DcBaseline& b,
                  double alphaSeconds,
                  double bandwidthBps)
{
    FabricRequire(bandwidthBps > 0, "bandwidth", bandwidthBps, "a rate > 0 bit/s");
    const double arcBps = bandwidthBps / std::max<uint32_t>(1, g.Degree());
    DcRouter router(g);
    double t = 0;
    for (size_t i = 0; i < b.steps.size(); ++i)
    {
        uint32_t hops = 0;
        const double bytes = router.MaxArcBytes(b.steps[i], hops);
        const double alpha = alphaSeconds * (b.pipelineHops > 0 ? 2.0 * b.pipelineHops : hops);
        t += b.repeats[i] * (alpha + bytes * 8 / arcBps);
    }
    return t;
}

std::vector<std::vector<uint32_t>>
DcShortestPaths(const DirectConnectGraph& g,
                const std::vector<uint32_t>& distToDst,
                uint32_t src,
                uint32_t dst,
                uint32_t maxPaths)
{
    FabricRequire(maxPaths >= 1, "max-paths", maxPaths, "at least 1");
    FabricRequire(distToDst[src] != DirectConnectGraph::UNREACHABLE,
                  "graph",
                  g.Name(),
                  "a strongly connected graph");
    const uint32_t n = g.NumNodes();
    const uint32_t rotate = (src + dst) % n;
    // the next hosts of u towards dst, distinct, in rotated id order
    auto next = [&](uint32_t u) {
        std::vector<uint32_t> v;
        for (uint32_t a : g.OutArcs(u))
        {
            const uint32_t w = g.GetArc(a).to;
            if (distToDst[w] + 1 == distToDst[u])
            {
                v.push_back(w);
            }
        }
        std::sort(v.begin(), v.end(), [&](uint32_t x, uint32_t y) {
            return (x + n - rotate) % n < (y + n - rotate) % n;
        });
        v.erase(std::unique(v.begin(), v.end()), v.end());
        return v;
    };
    if (src == dst)
    {
        return {{src}};
    }
    // shortest paths from each host to dst (saturating), for the budget split
    constexpr uint64_t kMany = uint64_t{1} << 40;
    std::vector<uint64_t> count(n, 0);
    std::vector<uint32_t> order;
    for (uint32_t u = 0; u < n; ++u)
    {
        if (distToDst[u] <= distToDst[src])
        {
            order.push_back(u);
        }
    }
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
        return distToDst[x] < distToDst[y];
    });
    for (uint32_t u : order)
    {
        if (u == dst)
        {
            count[u] = 1;
            continue;
        }
        for (uint32_t w : next(u))
        {
            count[u] = std::min(kMany, count[u] + count[w]);
        }
    }
    // every path when there are at most maxPaths; else the budget is shared
    // out evenly over the next hosts at every hop (water-filling: a branch
    // with fewer paths than its share gives the rest to the others), so the
    // paths kept still spread over all first hops
    std::vector<std::vector<uint32_t>> paths;
    std::vector<uint32_t> path{src};
    std::function<void(uint32_t, uint64_t)> walk = [&](uint32_t u, uint64_t budget) {
        if (u == dst)
        {
            paths.push_back(path);
            return;
        }
        const std::vector<uint32_t> v = next(u);
        std::vector<uint64_t> share(v.size(), 0);
        std::vector<size_t> open(v.size());
        std::iota(open.begin(), open.end(), 0);
        uint64_t left = budget;
        for (bool capped = true; capped && !open.empty();)
        {
            capped = false;
            const uint64_t fair = left / open.size();
            std::vector<size_t> still;
            for (size_t i : open)
            {
                if (count[v[i]] <= fair)
                {
                    share[i] = count[v[i]];
                    left -= count[v[i]];
                    capped = true;
                }
                else
                {
                    still.push_back(i);
                }
            }
            open = std::move(still);
        }
        for (size_t j = 0; j < open.size(); ++j)
        {
            share[open[j]] = left / open.size() + (j < left % open.size() ? 1 : 0);
        }
        for (size_t i = 0; i < v.size(); ++i)
        {
            if (share[i] > 0)
            {
                path.push_back(v[i]);
                walk(v[i], share[i]);
                path.pop_back();
            }
        }
    };
    walk(src, std::min<uint64_t>(maxPaths, count[src]));
    return paths;
}

CollectiveSchedule
DcShortestPathAllToAll(const DirectConnectGraph& g,
                       uint32_t gpusPerNode,
                       uint64_t bytes,
                       uint32_t maxPaths)
{
    FabricRequire(gpusPerNode >= 1, "gpus-per-node", gpusPerNode, "at least 1");
    FabricRequire(maxPaths >= 1, "max-paths", maxPaths, "at least 1");
    FabricRequire(g.NumNodes() >= 1 && g.IsStronglyConnected(),
                  "graph",
                  g.Name(),
                  "a strongly connected graph");
    const uint32_t N = g.NumNodes();
    const uint32_t K = gpusPerNode;
    const uint64_t n = uint64_t{N} * K;
    FabricRequire(n >= 2 && n < (uint64_t{1} << 24),
                  "graph",
                  g.Name(),
                  fmt::format("between 2 and 2^24 GPUs ({} hosts x {} GPUs given)", N, K));
    // the paths between hosts, and the schedule's size, before building it
    const DirectConnectGraph reverse = g.Reverse();
    std::vector<std::vector<std::vector<uint32_t>>> paths(uint64_t{N} * N);
    constexpr uint64_t kMaxTransfers = uint64_t{1} << 26;
    uint64_t transfers = 0;
    for (uint32_t v = 0; v < N; ++v)
    {
        const std::vector<uint32_t> dist = reverse.BfsDistances(v);
        for (uint32_t u = 0; u < N; ++u)
        {
            if (u == v)
            {
                continue;
            }
            auto& p = paths[uint64_t{u} * N + v];
            p = DcShortestPaths(g, dist, u, v, maxPaths);
            transfers += uint64_t{K} * K * p.size() * dist[u];
            FabricRequire(transfers <= kMaxTransfers,
                          "graph",
                          g.Name(),
                          fmt::format("an all-to-all of at most 2^26 relayed transfers (lower "
                                      "--max-paths, now {})",
                                      maxPaths));
        }
    }
    CollectiveSchedule s(CollectiveType::AllToAll, static_cast<uint32_t>(n), bytes);
    s.SetAlgorithm("dc-shortest-path");
    const std::vector<uint64_t> piece = SplitBytes(bytes, n);
    // chunks (src, dst)-major; a pair between hosts has one chunk per path
    std::vector<uint32_t> first(n * n + 1, 0);
    for (uint64_t a = 0; a < n; ++a)
    {
        for (uint64_t b = 0; b < n; ++b)
        {
            first[a * n + b] = s.NumChunks();
            const uint32_t u = a / K;
            const uint32_t v = b / K;
            const uint64_t parts = u == v ? 1 : paths[uint64_t{u} * N + v].size();
            for (uint64_t c : SplitBytes(piece[b], parts))
            {
                s.AddChunk(c, a, b);
            }
        }
    }
    first[n * n] = s.NumChunks();
    ScheduleBuilder builder(s);
    // hop by hop; within a hop, pairs in shifted order (rank a to a + t)
    uint32_t longest = 1;
    for (const auto& p : paths)
    {
        for (const auto& path : p)
        {
            longest = std::max<uint32_t>(longest, path.size() - 1);
        }
    }
    for (uint32_t hop = 0; hop < longest; ++hop)
    {
        for (uint64_t t = 1; t < n; ++t)
        {
            for (uint64_t a = 0; a < n; ++a)
            {
                const uint64_t b = (a + t) % n;
                const uint32_t u = a / K;
                const uint32_t v = b / K;
                if (u == v)
                {
                    if (hop == 0)
                    {
                        builder.Transfer(a, b, first[a * n + b], RecvMode::Copy);
                    }
                    continue;
                }
                const auto& p = paths[uint64_t{u} * N + v];
                for (size_t i = 0; i < p.size(); ++i)
                {
                    if (hop + 1 >= p[i].size())
                    {
                        continue;
                    }
                    // the GPU of b's local index on each host of the path
                    const uint64_t from = hop == 0 ? a : uint64_t{p[i][hop]} * K + b % K;
                    const uint64_t to = uint64_t{p[i][hop + 1]} * K + b % K;
                    builder.Transfer(from, to, first[a * n + b] + i, RecvMode::Copy);
                }
            }
        }
    }
    return s;
}

} // namespace ns3
