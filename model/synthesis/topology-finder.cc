/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "topology-finder.h"

#include "ns3/fabric-error.h"
#include "ns3/fabric-work.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

namespace ns3
{

// ------------------------------------------------------------ name parser

namespace
{

const char* const KNOWN_NAMES =
    "K(n), K(d,d), Ring(n), BiRing(n), Torus(a,b,...), Hypercube(k), Hamming(dims,q), "
    "C(N,{s1,s2,...}), DC(N,{s1,s2,...}), Kautz(d,D), GenKautz(d,N), Petersen, L(G), Deg(G,n), "
    "Prod(G,H), "
    "Pow(G,n)";

/// Deepest nesting of constructions a name may have: the parser recurses once
/// per level, and a name nested 10,000 deep overflowed the stack.
constexpr uint32_t kMaxNameDepth = 64;

/// Recursive-descent parser over a construction name.
class NameParser
{
  public:
    explicit NameParser(const std::string& text)
        : m_text(text)
    {
    }

    DirectConnectGraph Parse()
    {
        auto g = Expr();
        SkipSpaces();
        if (m_pos != m_text.size())
        {
            Fail("end of name");
        }
        return g;
    }

  private:
    [[noreturn]] void Fail(const std::string& expected) const
    {
        std::string found =
            m_pos < m_text.size() ? fmt::format("'{}'", m_text[m_pos]) : "end of name";
        throw FabricConfigError(
            fmt::format("construction name at character {}", m_pos + 1),
            m_text,
            fmt::format("{} there (found {}); names: {}", expected, found, KNOWN_NAMES));
    }

    void SkipSpaces()
    {
        while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos])))
        {
            ++m_pos;
        }
    }

    bool Peek(char c)
    {
        SkipSpaces();
        return m_pos < m_text.size() && m_text[m_pos] == c;
    }

    void Expect(char c)
    {
        if (!Peek(c))
        {
            Fail(fmt::format("'{}'", c));
        }
        ++m_pos;
    }

    uint32_t Int()
    {
        SkipSpaces();
        size_t begin = m_pos;
        while (m_pos < m_text.size() && std::isdigit(static_cast<unsigned char>(m_text[m_pos])))
        {
            ++m_pos;
        }
        if (m_pos == begin || m_pos - begin > 9)
        {
            m_pos = begin;
            Fail("a non-negative integer below 10^9");
        }
        return static_cast<uint32_t>(std::stoul(m_text.substr(begin, m_pos - begin)));
    }

    std::vector<uint32_t> IntList()
    {
        std::vector<uint32_t> v{Int()};
        while (Peek(','))
        {
            ++m_pos;
            v.push_back(Int());
        }
        return v;
    }

    DirectConnectGraph Expr()
    {
        SkipSpaces();

        // one level deeper until this construction returns (or throws)
        struct Level
        {
            uint32_t& depth;

            ~Level()
            {
                --depth;
            }
        } level{++m_depth};

        if (m_depth > kMaxNameDepth)
        {
            throw FabricConfigError(
                fmt::format("construction name nesting depth (at character {})", m_pos + 1),
                m_text,
                fmt::format("at most {} constructions nested in one another; this name "
                            "nests {} deep",
                            kMaxNameDepth,
                            NestingDepth()));
        }
        size_t begin = m_pos;
        while (m_pos < m_text.size() && std::isalpha(static_cast<unsigned char>(m_text[m_pos])))
        {
            ++m_pos;
        }
        std::string id = m_text.substr(begin, m_pos - begin);
        if (id.empty())
        {
            Fail("a construction name");
        }
        if (id == "Petersen")
        {
            return MakePetersen();
        }
        static const std::vector<std::string> known{"K",
                                                    "Ring",
                                                    "BiRing",
                                                    "Torus",
                                                    "Hypercube",
                                                    "Hamming",
                                                    "C",
                                                    "DC",
                                                    "Kautz",
                                                    "GenKautz",
                                                    "L",
                                                    "Deg",
                                                    "Prod",
                                                    "Pow"};
        if (std::find(known.begin(), known.end(), id) == known.end())
        {
            m_pos = begin;
            Fail("a known construction");
        }
        Expect('(');
        DirectConnectGraph g;
        if (id == "K")
        {
            uint32_t a = Int();
            if (Peek(','))
            {
                ++m_pos;
                size_t at = m_pos;
                uint32_t b = Int();
                if (a != b)
                {
                    m_pos = at;
                    Fail(fmt::format("{} (complete bipartite K(d,d) needs equal sides)", a));
                }
                g = MakeCompleteBipartite(a);
            }
            else
            {
                g = MakeCompleteDigraph(a);
            }
        }
        else if (id == "Ring")
        {
            g = MakeRing(Int());
        }
        else if (id == "BiRing")
        {
            g = MakeBiRing(Int());
        }
        else if (id == "Hypercube")
        {
            g = MakeHypercube(Int());
        }
        else if (id == "Torus")
        {
            g = MakeTorus(IntList());
        }
        else if (id == "Hamming" || id == "Kautz" || id == "GenKautz")
        {
            uint32_t a = Int();
            Expect(',');
            uint32_t b = Int();
            g = id == "Hamming" ? MakeHamming(a, b)
                : id == "Kautz" ? MakeKautz(a, b)
                                : MakeGeneralizedKautz(a, b);
        }
        else if (id == "C" || id == "DC")
        {
            uint32_t n = Int();
            Expect(',');
            Expect('{');
            auto steps = IntList();
            Expect('}');
            g = id == "C" ? MakeCirculant(n, steps) : MakeDirectedCirculant(n, steps);
        }
        else if (id == "L")
        {
            g = LineGraph(Expr());
        }
        else if (id == "Deg" || id == "Pow")
        {
            auto inner = Expr();
            Expect(',');
            uint32_t n = Int();
            g = id == "Deg" ? DegreeExpansion(inner, n) : CartesianPower(inner, n);
        }
        else // Prod
        {
            auto a = Expr();
            Expect(',');
            auto b = Expr();
            g = CartesianProduct(a, b);
        }
        Expect(')');
        return g;
    }

    /// \return the deepest nesting of parentheses in the name (counted
    /// without recursion, for the message)
    size_t NestingDepth() const
    {
        size_t depth = 0;
        size_t deepest = 0;
        for (const char c : m_text)
        {
            depth += c == '(' ? 1 : 0;
            depth -= c == ')' && depth > 0 ? 1 : 0;
            deepest = std::max(deepest, depth);
        }
        return deepest;
    }

    const std::string& m_text; //!< the name
    size_t m_pos{0};           //!< cursor
    uint32_t m_depth{0};       //!< constructions open at the cursor
};

} // namespace

DirectConnectGraph
BuildFromName(const std::string& name)
{
    return NameParser(name).Parse();
}

// ------------------------------------------------------------ the finder

namespace
{

/// Builds one base graph (throws FabricConfigError if it does not exist).
using BaseBuilder = std::function<DirectConnectGraph()>;

void TorusDims(uint32_t rest,
               uint32_t left,
               uint32_t minSide,
               std::vector<uint32_t>& dims,
               std::vector<BaseBuilder>& out);

/// Most offset sets of C(N,S) enumerated to find the non-isomorphic ones:
/// C(511,2) = 130,305 (N = 1024, d = 4) takes a few milliseconds.
constexpr double kMaxCirculantEnumeration = 1 << 17;

/// \return C(n, k), as a double (it may be huge)
double
Binomial(uint32_t n, uint32_t k)
{
    double c = 1;
    for (uint32_t i = 0; i < k && c <= 1e300; ++i)
    {
        c = c * (n - i) / (i + 1);
    }
    return k > n ? 0 : c;
}

/**
 * Step \p set, k increasing values in 1..\p top, to the next such set in
 * lexicographic order. \return false after the last
 */
bool
NextCombination(std::vector<uint32_t>& set, uint32_t top)
{
    const auto k = static_cast<uint32_t>(set.size());
    for (uint32_t i = k; i-- > 0;)
    {
        if (set[i] < top - (k - 1 - i))
        {
            ++set[i];
            for (uint32_t j = i + 1; j < k; ++j)
            {
                set[j] = set[j - 1] + 1;
            }
            return true;
        }
    }
    return false;
}

/**
 * \return the offset sets S of the undirected circulants C(n, S) of degree d
 * the finder searches (see FinderOptions::maxCirculants): d = 2k offsets +-s,
 * s < n/2, or for odd d and even n, 2k of them and n/2.  Every connected one
 * up to isomorphism by multipliers (C(n, S) is C(n, uS) for u coprime to n;
 * the lexicographically first of each class is kept), if there are at most
 * \p maxSets; else C(n, {a, ..., a+k-1}) (and n/2) for a near
 * sqrt(n (k-1) / 2).  None for d = 2 (a connected C(n, {s}) is BiRing(n))
 * or d = n - 1 (K(n)): those families have them.
 */
std::vector<std::vector<uint32_t>>
CirculantOffsetSets(uint32_t n, uint32_t d, uint32_t maxSets)
{
    std::vector<std::vector<uint32_t>> out;
    const bool half = d % 2 == 1;
    const uint32_t k = d / 2;
    const uint32_t top = (n - 1) / 2; // the offsets below n/2
    // d = 2: every connected C(n, {s}) is a cycle, BiRing(n)
    if (d < 3 || d + 1 >= n || (half && n % 2 == 1) || k > top)
    {
        return out;
    }
    const auto withHalf = [&](std::vector<uint32_t> set) {
        if (half)
        {
            set.push_back(n / 2);
        }
        return set;
    };
    if (Binomial(top, k) <= kMaxCirculantEnumeration)
    {
        std::vector<uint32_t> units;
        for (uint32_t u = 2; u <= n / 2; ++u)
        {
            if (std::gcd(u, n) == 1)
            {
                units.push_back(u);
            }
        }
        std::set<std::vector<uint32_t>> seen; // members of the classes found
        std::vector<uint32_t> set(k);
        std::iota(set.begin(), set.end(), 1u);
        bool tooMany = false;
        // sets in lexicographic order: the first member met of a class is its least
        do
        {
            uint32_t g = half ? n / 2 : n;
            for (auto s : set)
            {
                g = std::gcd(g, s);
            }
            if (g != 1 || seen.count(set))
            {
                continue; // disconnected, or isomorphic to one kept
            }
            for (auto u : units)
            {
                std::vector<uint32_t> image;
                for (auto s : set)
                {
                    const auto us = static_cast<uint32_t>(uint64_t{u} * s % n);
                    image.push_back(std::min(us, n - us));
                }
                std::sort(image.begin(), image.end());
                seen.insert(std::move(image));
            }
            out.push_back(withHalf(set));
            tooMany = out.size() > maxSets;
        } while (!tooMany && NextCombination(set, top));
        if (!tooMany)
        {
            return out;
        }
        out.clear();
    }
    // too many to search: the paper's family of consecutive offsets
    const auto centre = static_cast<uint32_t>(std::lround(std::sqrt(double(n) * (k - 1) / 2.0)));
    for (uint32_t a = centre > 4 ? centre - 3 : 1; a <= centre + 3 && a + k - 1 <= top; ++a)
    {
        std::vector<uint32_t> set(k);
        for (uint32_t i = 0; i < k; ++i)
        {
            set[i] = a + i;
        }
        out.push_back(withHalf(set));
    }
    return out;
}

/// \return the base constructions the finder evaluates with BFB for (n, d)
std::vector<BaseBuilder>
BaseBuilders(uint32_t n, uint32_t d, const FinderOptions& options)
{
    std::vector<BaseBuilder> out;
    if (n == d + 1)
    {
        out.emplace_back([n] { return MakeCompleteDigraph(n); });
    }
    if (n == 2 * d)
    {
        out.emplace_back([d] { return MakeCompleteBipartite(d); });
    }
    if (d == 1)
    {
        out.emplace_back([n] { return MakeRing(n); });
    }
    if (d == 2 && n >= 3)
    {
        out.emplace_back([n] { return MakeBiRing(n); });
    }
    for (auto& set : CirculantOffsetSets(n, d, options.maxCirculants))
    {
        out.emplace_back([n, set] { return MakeCirculant(n, set); });
    }
    if (d >= 2)
    {
        // DC(N,{a,...,a+d-1}) reaches about t^2 (d-1)/2 hosts in t steps when
        // a is near t (d-1), so best near a = sqrt(N (d-1)); a window around it
        auto r = static_cast<uint32_t>(std::lround(std::sqrt(double(n) * (d - 1))));
        for (uint32_t a = (r > 3 ? r - 2 : 1); a <= r + 2 && uint64_t{a} + d - 1 < n; ++a)
        {
            std::vector<uint32_t> set(d);
            for (uint32_t i = 0; i < d; ++i)
            {
                set[i] = a + i;
            }
            out.emplace_back([n, set] { return MakeDirectedCirculant(n, set); });
        }
    }
    if (d % 2 == 0 && d >= 4)
    {
        std::vector<uint32_t> dims;
        TorusDims(n, d / 2, 3, dims, out);
    }
    if (d < 31 && n == (1u << d))
    {
        out.emplace_back([d] { return MakeHypercube(d); });
    }
    for (uint32_t q = 3; q <= d + 1; ++q)
    {
        if (d % (q - 1) != 0 || d / (q - 1) < 2)
        {
            continue;
        }
        uint32_t dims = d / (q - 1);
        uint64_t size = 1;
        for (uint32_t i = 0; i < dims && size <= n; ++i)
        {
            size *= q;
        }
        if (size == n)
        {
            out.emplace_back([dims, q] { return MakeHamming(dims, q); });
        }
    }
    if (d >= 2)
    {
        uint64_t size = d + 1;
        for (uint32_t D = 2; size * d <= n; ++D)
        {
            size *= d;
            if (size == n)
            {
                out.emplace_back([d, D] { return MakeKautz(d, D); });
            }
        }
        if (n > d + 1)
        {
            out.emplace_back([d, n] { return MakeGeneralizedKautz(d, n); });
        }
    }
    if (n == 10 && d == 3)
    {
        out.emplace_back([] { return MakePetersen(); });
    }
    return out;
}

/// Tori of \p left dimensions with sides >= \p minSide, non-decreasing, whose product is \p rest.
void
TorusDims(uint32_t rest,
          uint32_t left,
          uint32_t minSide,
          std::vector<uint32_t>& dims,
          std::vector<BaseBuilder>& out)
{
    if (left == 1)
    {
        if (rest >= minSide)
        {
            dims.push_back(rest);
            out.emplace_back([copy = dims] { return MakeTorus(copy); });
            dims.pop_back();
        }
        return;
    }
    for (uint32_t side = minSide; uint64_t{side} * side <= rest; ++side)
    {
        if (rest % side == 0)
        {
            dims.push_back(side);
            TorusDims(rest / side, left - 1, side, dims, out);
            dims.pop_back();
        }
    }
}

/**
 * The product splits of (n, d) the finder expands: N = n1 n2, d = d1 + d2,
 * unordered ((n1, d1) <= (n2, d2)).
 */
template <typename Visit>
void
ForEachProductSplit(uint32_t n, uint32_t d, Visit visit)
{
    for (uint32_t n1 = 2; uint64_t{n1} * 2 <= n; ++n1)
    {
        if (n % n1 != 0)
        {
            continue;
        }
        uint32_t n2 = n / n1;
        for (uint32_t d1 = 1; d1 < d; ++d1)
        {
            uint32_t d2 = d - d1;
            if (std::make_pair(n1, d1) > std::make_pair(n2, d2))
            {
                continue;
            }
            visit(n1, d1, n2, d2);
        }
    }
}

/// \return the BFB options the finder evaluates with: loads only
BfbOptions
LoadsOnly()
{
    BfbOptions o;
    o.keepSchedule = false;
    return o;
}

/**
 * Sub-frontier size the planner assumes: the Pareto frontiers the finder
 * keeps have a few points (1-3 for most sub-problems, up to 6 at the sizes
 * bench/README.md lists), but their sizes are only known once their
 * candidates are evaluated.
 */
constexpr double kFrontierGuess = 3;

/**
 * \return an estimate of BFB's steps on a product of \p n hosts and degree
 * \p d whose factors are not known: a max-flow problem per host and step,
 * 2 sqrt(n) steps (a two-dimensional torus's), each over a few groups of
 * sources on the host's d arcs.
 */
double
GenericProductSteps(uint32_t n, uint32_t d)
{
    BfbWorkShape shape;
    shape.hosts = n;
    shape.arcs = double(n) * d;
    shape.maxInDegree = d;
    shape.flowProblems = 2 * std::sqrt(double(n));
    shape.flowSize = shape.flowProblems * 4.0 * d;
    shape.keepSchedule = false;
    return BfbWorkSteps(shape);
}

/**
 * The finder's recursion over (n, d, depth) without BFB: counts the
 * candidates, and the BFB runs with their estimated steps, that the search
 * will evaluate, with every sub-frontier assumed to hold
 * min(its candidates, kFrontierGuess) points.  Bases are built (cheap) and
 * estimated with EstimateBfbWork; a product, whose factors come from the
 * frontiers, is estimated from products of its factors' bases.
 */
class FinderPlanner
{
  public:
    explicit FinderPlanner(const FinderOptions& o)
        : m_opt(o)
    {
    }

    /// \return the estimated candidates of Finder::All(n, d, depth)
    double All(uint32_t n, uint32_t d, uint32_t depth)
    {
        double count = Bases(n, d);
        if (depth > 0)
        {
            count += Expansions(n, d, depth);
        }
        m_work.candidates += count;
        return count;
    }

    /// \return the plan so far, seconds included
    FinderWork Work() const
    {
        FinderWork w = m_work;
        w.seconds = w.steps / FabricWorkRates::kBfbStepsPerSecond;
        return w;
    }

  private:
    double Frontier(uint32_t n, uint32_t d, uint32_t depth)
    {
        auto key = std::make_tuple(n, d, depth);
        auto it = m_memo.find(key);
        if (it == m_memo.end())
        {
            it = m_memo.emplace(key, std::min(All(n, d, depth), kFrontierGuess)).first;
        }
        return it->second;
    }

    double Bases(uint32_t n, uint32_t d)
    {
        if (n > m_opt.maxBaseNodes)
        {
            return 0;
        }
        double count = 0;
        for (const auto& build : BaseBuilders(n, d, m_opt))
        {
            try
            {
                const DirectConnectGraph g = build();
                if (m_bases.insert(g.Name()).second)
                {
                    m_work.bfbRuns += 1;
                    m_work.steps += EstimateBfbWork(g, LoadsOnly()).steps;
                }
                count += 1;
            }
            catch (const FabricConfigError&)
            {
                // a family member that does not exist for these parameters
            }
        }
        return count;
    }

    double Expansions(uint32_t n, uint32_t d, uint32_t depth)
    {
        double count = 0;
        if (n % d == 0 && n / d >= 2)
        {
            count += Frontier(n / d, d, depth - 1);
        }
        for (uint32_t m = 2; m <= d; ++m)
        {
            if (d % m == 0 && n % m == 0 && n / m >= 2)
            {
                count += Frontier(n / m, d / m, depth - 1);
            }
        }
        ForEachProductSplit(n, d, [&](uint32_t n1, uint32_t d1, uint32_t n2, uint32_t d2) {
            const double fa = Frontier(n1, d1, depth - 1);
            const double fb = Frontier(n2, d2, depth - 1);
            const double pairs = n1 == n2 && d1 == d2 ? fa * (fa + 1) / 2 : fa * fb;
            count += pairs;
            if (n <= m_opt.maxProductBfbNodes)
            {
                m_work.bfbRuns += pairs;
                m_work.steps += pairs * ProductSteps(n1, d1, n2, d2);
            }
        });
        return count;
    }

    /**
     * \return the estimated BFB steps of a product of an (n1, d1) and an
     * (n2, d2) graph: the mean over products of their bases (up to four of
     * each: a frontier mixes few-step graphs with a ring-like one of many
     * steps), or GenericProductSteps if one has none
     */
    double ProductSteps(uint32_t n1, uint32_t d1, uint32_t n2, uint32_t d2)
    {
        auto key = std::make_tuple(n1, d1, n2, d2);
        auto it = m_productSteps.find(key);
        if (it != m_productSteps.end())
        {
            return it->second;
        }
        const auto bases = [this](uint32_t n, uint32_t d) {
            std::vector<DirectConnectGraph> out;
            for (const auto& build : BaseBuilders(n, d, m_opt))
            {
                try
                {
                    out.push_back(build());
                }
                catch (const FabricConfigError&)
                {
                    continue; // does not exist for these parameters
                }
                if (out.size() == 4)
                {
                    break;
                }
            }
            return out;
        };
        const auto gs = bases(n1, d1);
        const auto hs = gs.empty() ? std::vector<DirectConnectGraph>() : bases(n2, d2);
        double steps = GenericProductSteps(n1 * n2, d1 + d2);
        if (!hs.empty())
        {
            double sum = 0;
            for (const auto& g : gs)
            {
                for (const auto& h : hs)
                {
                    sum += EstimateBfbWork(CartesianProduct(g, h), LoadsOnly()).steps;
                }
            }
            steps = sum / static_cast<double>(gs.size() * hs.size());
        }
        return m_productSteps.emplace(key, steps).first->second;
    }

    FinderOptions m_opt;                                               //!< limits
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, double> m_memo; //!< frontier sizes
    std::set<std::string> m_bases;                                     //!< bases counted
    std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, double>
        m_productSteps; //!< estimated steps of a product, by its factors' (n, d)
    FinderWork m_work;  //!< the plan
};

/// Enumeration state: memo of sub-frontiers and of evaluated bases.
class Finder
{
  public:
    /// \param o limits \param plannedRuns the BFB runs EstimateFinderWork expects
    Finder(const FinderOptions& o, double plannedRuns)
        : m_opt(o),
          m_plannedRuns(static_cast<uint64_t>(std::ceil(plannedRuns)))
    {
    }

    std::vector<SynthCandidate> All(uint32_t n, uint32_t d, uint32_t depth)
    {
        std::vector<SynthCandidate> out;
        Bases(n, d, out);
        if (depth > 0)
        {
            Expansions(n, d, depth, out);
        }
        m_considered += out.size();
        return out;
    }

    size_t Considered() const
    {
        return m_considered;
    }

  private:
    /// Pareto frontier of (n, d) up to depth, memoised.
    const std::vector<SynthCandidate>& Frontier(uint32_t n, uint32_t d, uint32_t depth)
    {
        auto key = std::make_tuple(n, d, depth);
        auto it = m_memo.find(key);
        if (it == m_memo.end())
        {
            it = m_memo.emplace(key, ParetoFrontier(All(n, d, depth))).first;
        }
        return it->second;
    }

    template <typename Build>
    void AddBase(uint32_t n, std::vector<SynthCandidate>& out, Build build)
    {
        AddWithBfb(n, m_opt.maxBaseNodes, out, build);
    }

    /// Evaluate a graph of \p n hosts with BFB if n <= \p limit.
    template <typename Build>
    void AddWithBfb(uint32_t n, uint32_t limit, std::vector<SynthCandidate>& out, Build build)
    {
        if (n > limit)
        {
            return;
        }
        try
        {
            auto g = build();
            auto it = m_bases.find(g.Name());
            if (it == m_bases.end())
            {
                auto s = BfbAllGather(g, LoadsOnly());
                ++m_bfbRuns;
                if (m_opt.progress)
                {
                    m_opt.progress(m_bfbRuns, std::max(m_bfbRuns, m_plannedRuns));
                }
                SynthCandidate c;
                c.name = g.Name();
                c.nodes = g.NumNodes();
                c.degree = s.degree;
                c.steps = s.Steps();
                c.tb = s.Tb();
                c.stepLoads = s.StepLoads();
                c.fromBfb = true;
                c.selfLoops = g.SelfLoopCount() > 0;
                it = m_bases.emplace(c.name, c).first;
            }
            out.push_back(it->second);
        }
        catch (const FabricConfigError&)
        {
            // a family member that does not exist for these parameters
        }
    }

    void Bases(uint32_t n, uint32_t d, std::vector<SynthCandidate>& out)
    {
        for (const auto& build : BaseBuilders(n, d, m_opt))
        {
            AddBase(n, out, build);
        }
    }

    void Expansions(uint32_t n, uint32_t d, uint32_t depth, std::vector<SynthCandidate>& out)
    {
        // Line graph: N = d * N_G, same degree.
        if (n % d == 0 && n / d >= 2)
        {
            for (const auto& g : Frontier(n / d, d, depth - 1))
            {
                SynthCandidate c;
                c.name = "L(" + g.name + ")";
                c.nodes = n;
                c.degree = d;
                c.stepLoads.push_back(1);
                for (const auto& u : g.stepLoads)
                {
                    c.stepLoads.push_back(u * Fraction(d));
                }
                auto cost = LineGraphCost({g.steps, g.tb}, g.nodes);
                c.steps = cost.steps;
                c.tb = cost.tb;
                c.selfLoops = g.selfLoops; // a loop v->v is a vertex of L(G) joined to itself
                out.push_back(c);
            }
        }
        // Degree expansion: N = m N_G, d = m d_G.
        for (uint32_t m = 2; m <= d; ++m)
        {
            if (d % m != 0 || n % m != 0 || n / m < 2)
            {
                continue;
            }
            for (const auto& g : Frontier(n / m, d / m, depth - 1))
            {
                if (g.selfLoops)
                {
                    continue; // the closed form assumes copies reach each other off-host
                }
                SynthCandidate c;
                c.name = fmt::format("Deg({},{})", g.name, m);
                c.nodes = n;
                c.degree = d;
                c.stepLoads = g.stepLoads;
                c.stepLoads.push_back(Fraction(m - 1, int64_t{m} * g.degree));
                auto cost = DegreeExpansionCost({g.steps, g.tb}, g.nodes, m);
                c.steps = cost.steps;
                c.tb = cost.tb;
                out.push_back(c);
            }
        }
        // Cartesian product: N = N1 N2, d = d1 + d2; unordered pairs only.
        ForEachProductSplit(n, d, [&](uint32_t n1, uint32_t d1, uint32_t n2, uint32_t d2) {
            const auto fa = Frontier(n1, d1, depth - 1);
            const auto fb = Frontier(n2, d2, depth - 1);
            bool same = n1 == n2 && d1 == d2;
            for (size_t i = 0; i < fa.size(); ++i)
            {
                for (size_t j = same ? i : 0; j < fb.size(); ++j)
                {
                    const auto& g = fa[i];
                    const auto& h = fb[j];
                    if (n <= m_opt.maxProductBfbNodes)
                    {
                        // its own limit: maxBaseNodes is for bases
                        auto name = fmt::format("Prod({},{})", g.name, h.name);
                        AddWithBfb(n, m_opt.maxProductBfbNodes, out, [&] {
                            return BuildFromName(name);
                        });
                        continue;
                    }
                    Fraction alpha;
                    auto cost = ProductCost(g.stepLoads,
                                            g.nodes,
                                            g.degree,
                                            h.stepLoads,
                                            h.nodes,
                                            h.degree,
                                            &alpha);
                    SynthCandidate c;
                    c.name = fmt::format("Prod({},{})", g.name, h.name);
                    c.nodes = n;
                    c.degree = d;
                    c.steps = cost.steps;
                    c.tb = cost.tb;
                    c.stepLoads =
                        ProductStepLoads(g.stepLoads, g.nodes, h.stepLoads, h.nodes, alpha);
                    // a factor's loop v->v makes (v,w)->(v,w) in every layer
                    c.selfLoops = g.selfLoops || h.selfLoops;
                    out.push_back(c);
                }
            }
        });
    }

    FinderOptions m_opt; //!< limits
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::vector<SynthCandidate>>
        m_memo;                                    //!< sub-frontiers
    std::map<std::string, SynthCandidate> m_bases; //!< evaluated bases by name
    size_t m_considered{0};                        //!< candidates seen
    uint64_t m_plannedRuns{0};                     //!< BFB runs the plan expects
    uint64_t m_bfbRuns{0};                         //!< BFB runs done
};

/// Refuse a search whose plan exceeds GpuFabricMaxRunSeconds; \return the plan.
FinderWork
RequireFinderWork(uint32_t nodes, uint32_t degree, const FinderOptions& options)
{
    const FinderWork w = EstimateFinderWork(nodes, degree, options);
    FabricRequireWork(w.seconds,
                      "finder depth",
                      options.maxDepth,
                      FinderWorkText(w, nodes, degree, options));
    return w;
}

} // namespace

FinderWork
EstimateFinderWork(uint32_t nodes, uint32_t degree, const FinderOptions& options)
{
    FabricRequire(nodes >= 2, "nodes", nodes, "N >= 2");
    FabricRequire(degree >= 1, "degree", degree, "d >= 1");
    FabricRequire(degree < nodes, "degree", degree, fmt::format("d < N = {}", nodes));
    FabricRequire(options.maxDepth <= 4, "finder depth", options.maxDepth, "0..4");
    FinderPlanner p(options);
    p.All(nodes, degree, options.maxDepth);
    return p.Work();
}

std::string
FinderWorkText(const FinderWork& w, uint32_t nodes, uint32_t degree, const FinderOptions& options)
{
    return fmt::format("the finder for N = {}, d = {} at depth {} (about {:.0f} candidates, "
                       "{:.0f} of them evaluated with BFB: {:.2g} steps)",
                       nodes,
                       degree,
                       options.maxDepth,
                       w.candidates,
                       w.bfbRuns,
                       w.steps);
}

std::vector<SynthCandidate>
EnumerateCandidates(uint32_t nodes, uint32_t degree, const FinderOptions& options)
{
    FabricRequire(nodes >= 2, "nodes", nodes, "N >= 2");
    FabricRequire(degree >= 1, "degree", degree, "d >= 1");
    FabricRequire(degree < nodes, "degree", degree, fmt::format("d < N = {}", nodes));
    FabricRequire(options.maxDepth <= 4, "finder depth", options.maxDepth, "0..4");
    Finder f(options, RequireFinderWork(nodes, degree, options).bfbRuns);
    return f.All(nodes, degree, options.maxDepth);
}

std::vector<SynthCandidate>
ParetoFrontier(std::vector<SynthCandidate> c)
{
    // Sort by T_L, then T_B, then name for a deterministic choice among ties;
    // keep a point only if its T_B beats every point with fewer steps.
    std::sort(c.begin(), c.end(), [](const SynthCandidate& a, const SynthCandidate& b) {
        return std::tie(a.steps, a.tb, a.name) < std::tie(b.steps, b.tb, b.name);
    });
    std::vector<SynthCandidate> f;
    for (auto& x : c)
    {
        if (f.empty() || x.tb < f.back().tb)
        {
            if (!f.empty() && f.back().steps == x.steps)
            {
                continue; // same T_L, worse or equal T_B (sorted)
            }
            f.push_back(std::move(x));
        }
    }
    return f;
}

double
CandidateTime(const SynthCandidate& c, const FinderWorkload& w)
{
    return w.alphaSeconds * c.steps + ToDouble(c.tb) * w.messageBytes * 8.0 / w.bandwidthBps;
}

FinderResult
FindTopology(uint32_t nodes,
             uint32_t degree,
             const FinderWorkload& workload,
             const FinderOptions& options)
{
    FabricRequire(std::isfinite(workload.alphaSeconds) && workload.alphaSeconds >= 0,
                  "alpha",
                  workload.alphaSeconds,
                  "a finite number of seconds >= 0");
    FabricRequire(std::isfinite(workload.bandwidthBps) && workload.bandwidthBps > 0,
                  "bandwidth",
                  workload.bandwidthBps,
                  "a finite rate > 0 in bits per second");
    FabricRequire(std::isfinite(workload.messageBytes) && workload.messageBytes >= 0,
                  "size",
                  workload.messageBytes,
                  "a finite number of bytes >= 0");
    FabricRequire(nodes >= 2, "nodes", nodes, "N >= 2");
    FabricRequire(degree >= 1, "degree", degree, "d >= 1");
    FabricRequire(degree < nodes, "degree", degree, fmt::format("d < N = {}", nodes));
    FabricRequire(options.maxDepth <= 4, "finder depth", options.maxDepth, "0..4");
    Finder f(options, RequireFinderWork(nodes, degree, options).bfbRuns);
    auto all = f.All(nodes, degree, options.maxDepth);
    FabricRequire(!all.empty(),
                  "nodes and degree",
                  fmt::format("N={}, d={}", nodes, degree),
                  fmt::format("an (N, d) that some construction reaches within depth {} and "
                              "bases of at most {} hosts (e.g. N = d+1, 2d, a power of d, ...)",
                              options.maxDepth,
                              options.maxBaseNodes));
    FinderResult r;
    r.considered = f.Considered();
    r.frontier = ParetoFrontier(std::move(all));
    r.best = r.frontier.front();
    r.bestTimeSeconds = CandidateTime(r.best, workload);
    for (const auto& c : r.frontier)
    {
        double t = CandidateTime(c, workload);
        if (t < r.bestTimeSeconds)
        {
            r.best = c;
            r.bestTimeSeconds = t;
        }
    }
    return r;
}

} // namespace ns3
