/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "direct-connect-graph.h"

#include "ns3/fabric-error.h"
#include "ns3/fabric-memory.h"

#include <algorithm>
#include <boost/graph/strong_components.hpp>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

namespace ns3
{

DirectConnectGraph::DirectConnectGraph()
    : m_graph(std::make_unique<BoostGraph>())
{
}

DirectConnectGraph::DirectConnectGraph(uint32_t nodes, std::string name)
    : m_nodes(nodes),
      m_name(std::move(name)),
      m_out(nodes),
      m_in(nodes),
      m_graph(std::make_unique<BoostGraph>(nodes))
{
}

DirectConnectGraph::DirectConnectGraph(const DirectConnectGraph& other)
    : m_nodes(other.m_nodes),
      m_name(other.m_name),
      m_arcs(other.m_arcs),
      m_out(other.m_out),
      m_in(other.m_in),
      m_graph(std::make_unique<BoostGraph>(other.Graph()))
{
}

DirectConnectGraph&
DirectConnectGraph::operator=(const DirectConnectGraph& other)
{
    if (this != &other)
    {
        *this = DirectConnectGraph(other);
    }
    return *this;
}

DirectConnectGraph::DirectConnectGraph(DirectConnectGraph&& other) noexcept
    : m_nodes(std::exchange(other.m_nodes, 0)),
      m_name(std::move(other.m_name)),
      m_arcs(std::move(other.m_arcs)),
      m_out(std::move(other.m_out)),
      m_in(std::move(other.m_in)),
      m_graph(std::move(other.m_graph))
{
    other.m_arcs.clear();
    other.m_out.clear();
    other.m_in.clear();
}

DirectConnectGraph&
DirectConnectGraph::operator=(DirectConnectGraph&& other) noexcept
{
    if (this != &other)
    {
        m_nodes = std::exchange(other.m_nodes, 0);
        m_name = std::move(other.m_name);
        m_arcs = std::move(other.m_arcs);
        m_out = std::move(other.m_out);
        m_in = std::move(other.m_in);
        m_graph = std::move(other.m_graph);
        other.m_arcs.clear();
        other.m_out.clear();
        other.m_in.clear();
    }
    return *this;
}

DirectConnectGraph::~DirectConnectGraph() = default;

void
DirectConnectGraph::CheckNode(uint32_t u, const char* what) const
{
    // the message is formatted only for a bad id: InArcs and OutArcs check
    // every call, and BFB makes N^2 of them
    if (u >= m_nodes)
    {
        FabricRequire(false, what, u, fmt::format("a host id in [0, {})", m_nodes));
    }
}

uint32_t
DirectConnectGraph::AddArc(uint32_t from, uint32_t to)
{
    CheckNode(from, "arc tail");
    CheckNode(to, "arc head");
    auto id = static_cast<uint32_t>(m_arcs.size());
    m_arcs.push_back({from, to});
    m_out[from].push_back(id);
    m_in[to].push_back(id);
    boost::add_edge(from, to, id, *m_graph);
    return id;
}

uint32_t
DirectConnectGraph::NumNodes() const
{
    return m_nodes;
}

uint32_t
DirectConnectGraph::NumArcs() const
{
    return static_cast<uint32_t>(m_arcs.size());
}

const DirectConnectGraph::Arc&
DirectConnectGraph::GetArc(uint32_t id) const
{
    if (id >= m_arcs.size())
    {
        FabricRequire(false, "arc id", id, fmt::format("[0, {})", m_arcs.size()));
    }
    return m_arcs[id];
}

const std::vector<DirectConnectGraph::Arc>&
DirectConnectGraph::Arcs() const
{
    return m_arcs;
}

const std::vector<uint32_t>&
DirectConnectGraph::OutArcs(uint32_t u) const
{
    CheckNode(u, "host");
    return m_out[u];
}

const std::vector<uint32_t>&
DirectConnectGraph::InArcs(uint32_t u) const
{
    CheckNode(u, "host");
    return m_in[u];
}

uint32_t
DirectConnectGraph::OutDegree(uint32_t u) const
{
    return static_cast<uint32_t>(OutArcs(u).size());
}

uint32_t
DirectConnectGraph::InDegree(uint32_t u) const
{
    return static_cast<uint32_t>(InArcs(u).size());
}

bool
DirectConnectGraph::IsRegular() const
{
    if (m_nodes == 0)
    {
        return false;
    }
    size_t d = m_out[0].size();
    for (uint32_t u = 0; u < m_nodes; ++u)
    {
        if (m_out[u].size() != d || m_in[u].size() != d)
        {
            return false;
        }
    }
    return true;
}

uint32_t
DirectConnectGraph::Degree() const
{
    FabricRequire(IsRegular(),
                  "graph " + m_name,
                  "irregular",
                  "a regular graph (every host with the same in- and out-degree)");
    return static_cast<uint32_t>(m_out[0].size());
}

uint32_t
DirectConnectGraph::MaxDegree() const
{
    size_t d = 0;
    for (uint32_t u = 0; u < m_nodes; ++u)
    {
        d = std::max({d, m_out[u].size(), m_in[u].size()});
    }
    return static_cast<uint32_t>(d);
}

uint32_t
DirectConnectGraph::SelfLoopCount() const
{
    return static_cast<uint32_t>(
        std::count_if(m_arcs.begin(), m_arcs.end(), [](const Arc& a) { return a.from == a.to; }));
}

bool
DirectConnectGraph::IsStronglyConnected() const
{
    if (m_nodes == 0)
    {
        return false;
    }
    std::vector<uint32_t> component(m_nodes);
    const BoostGraph& graph = Graph();
    auto count = boost::strong_components(
        graph,
        boost::make_iterator_property_map(component.begin(),
                                          boost::get(boost::vertex_index, graph)));
    return count == 1;
}

std::vector<uint32_t>
DirectConnectGraph::BfsDistances(uint32_t source) const
{
    CheckNode(source, "BFS source");
    // A flat queue BFS: this runs N times per BFB call, so it avoids the
    // visitor machinery of boost::breadth_first_search.
    std::vector<uint32_t> dist(m_nodes, UNREACHABLE);
    std::vector<uint32_t> queue;
    queue.reserve(m_nodes);
    dist[source] = 0;
    queue.push_back(source);
    for (size_t head = 0; head < queue.size(); ++head)
    {
        uint32_t u = queue[head];
        for (uint32_t a : m_out[u])
        {
            uint32_t v = m_arcs[a].to;
            if (dist[v] == UNREACHABLE)
            {
                dist[v] = dist[u] + 1;
                queue.push_back(v);
            }
        }
    }
    return dist;
}

uint32_t
DirectConnectGraph::Diameter() const
{
    FabricRequire(IsStronglyConnected(),
                  "graph " + m_name,
                  "not strongly connected",
                  "a strongly connected graph");
    uint32_t diameter = 0;
    for (uint32_t u = 0; u < m_nodes; ++u)
    {
        auto d = BfsDistances(u);
        diameter = std::max(diameter, *std::max_element(d.begin(), d.end()));
    }
    return diameter;
}

DirectConnectGraph
DirectConnectGraph::Reverse() const
{
    DirectConnectGraph r(m_nodes, "Rev(" + m_name + ")");
    for (const auto& a : m_arcs)
    {
        r.AddArc(a.to, a.from);
    }
    return r;
}

const std::string&
DirectConnectGraph::Name() const
{
    return m_name;
}

void
DirectConnectGraph::SetName(std::string name)
{
    m_name = std::move(name);
}

const DirectConnectGraph::BoostGraph&
DirectConnectGraph::Graph() const
{
    static const BoostGraph empty;
    return m_graph ? *m_graph : empty;
}

// ---------------------------------------------------------------- generators

namespace
{

/// Bytes per arc and per host of a built graph (bench/bfb-scale, peak
/// resident memory over graphs of 0.5-4 M arcs): the arc, its id in two
/// per-host lists, and the Boost mirror's list node and two edge records.
constexpr double kGraphBytesPerArc = 150;
/// per host: two id lists and the Boost mirror's two edge lists
constexpr double kGraphBytesPerHost = 120;

/// \return a count for a message: whole when it is, else in e-notation
std::string
CountText(double n)
{
    if (!std::isfinite(n))
    {
        return "more than 1e308";
    }
    return n < 1e15 ? fmt::format("{:.0f}", n) : fmt::format("{:.3g}", n);
}

} // namespace

double
DirectConnectGraphBytes(double hosts, double arcs)
{
    return kGraphBytesPerHost * hosts + kGraphBytesPerArc * arcs;
}

void
RequireGraphSize(const std::string& parameter,
                 const std::string& value,
                 double hosts,
                 double arcs,
                 const std::string& graph)
{
    const std::string size = fmt::format("{} would have {} hosts and {} arcs",
                                         FabricShownValue(graph),
                                         CountText(hosts),
                                         CountText(arcs));
    if (!(hosts <= static_cast<double>(kMaxGraphHosts) &&
          arcs <= static_cast<double>(kMaxGraphArcs)))
    {
        throw FabricConfigError(parameter,
                                value,
                                fmt::format("a graph of at most {} hosts and {} arcs; {}",
                                            kMaxGraphHosts,
                                            kMaxGraphArcs,
                                            size));
    }
    FabricRequireMemory(DirectConnectGraphBytes(hosts, arcs),
                        parameter,
                        value,
                        "the graph " + size);
}

DirectConnectGraph
MakeCompleteDigraph(uint32_t n)
{
    FabricRequire(n >= 2, "K(n) hosts", n, "n >= 2");
    const std::string name = fmt::format("K({})", n);
    RequireGraphSize("K(n) hosts", std::to_string(n), n, double(n) * (n - 1), name);
    DirectConnectGraph g(n, name);
    for (uint32_t u = 0; u < n; ++u)
    {
        for (uint32_t v = 0; v < n; ++v)
        {
            if (u != v)
            {
                g.AddArc(u, v);
            }
        }
    }
    return g;
}

DirectConnectGraph
MakeCompleteBipartite(uint32_t d)
{
    FabricRequire(d >= 1, "K(d,d) degree", d, "d >= 1");
    const std::string name = fmt::format("K({},{})", d, d);
    RequireGraphSize("K(d,d) degree", std::to_string(d), 2.0 * d, 2.0 * d * d, name);
    DirectConnectGraph g(2 * d, name);
    for (uint32_t u = 0; u < d; ++u)
    {
        for (uint32_t v = d; v < 2 * d; ++v)
        {
            g.AddArc(u, v);
            g.AddArc(v, u);
        }
    }
    return g;
}

DirectConnectGraph
MakeRing(uint32_t n)
{
    FabricRequire(n >= 2, "Ring(n) hosts", n, "n >= 2");
    const std::string name = fmt::format("Ring({})", n);
    RequireGraphSize("Ring(n) hosts", std::to_string(n), n, n, name);
    DirectConnectGraph g(n, name);
    for (uint32_t u = 0; u < n; ++u)
    {
        g.AddArc(u, (u + 1) % n);
    }
    return g;
}

DirectConnectGraph
MakeBiRing(uint32_t n)
{
    FabricRequire(n >= 3, "BiRing(n) hosts", n, "n >= 3");
    const std::string name = fmt::format("BiRing({})", n);
    RequireGraphSize("BiRing(n) hosts", std::to_string(n), n, 2.0 * n, name);
    DirectConnectGraph g(n, name);
    for (uint32_t u = 0; u < n; ++u)
    {
        g.AddArc(u, (u + 1) % n);
        g.AddArc(u, (u + n - 1) % n);
    }
    return g;
}

DirectConnectGraph
MakeTorus(const std::vector<uint32_t>& dims)
{
    FabricRequire(!dims.empty(), "Torus dimensions", "none", "at least one side length");
    double n = 1;
    std::string sides;
    for (size_t k = 0; k < dims.size(); ++k)
    {
        FabricRequire(dims[k] >= 3, "Torus side length", dims[k], "each side >= 3");
        n *= dims[k];
        sides += (k ? "," : "") + std::to_string(dims[k]);
    }
    const std::string name = "Torus(" + sides + ")";
    RequireGraphSize("Torus side lengths", sides, n, 2.0 * dims.size() * n, name);
    std::vector<const DirectConnectGraph*> factors;
    std::vector<DirectConnectGraph> rings;
    rings.reserve(dims.size());
    for (auto side : dims)
    {
        rings.push_back(MakeBiRing(side));
    }
    for (const auto& r : rings)
    {
        factors.push_back(&r);
    }
    auto g = CartesianProduct(factors);
    g.SetName(name);
    return g;
}

DirectConnectGraph
MakeHypercube(uint32_t k)
{
    FabricRequire(k >= 1, "Hypercube dimension", k, "k >= 1");
    const std::string name = fmt::format("Hypercube({})", k);
    const double hosts = std::ldexp(1.0, static_cast<int>(std::min<uint32_t>(k, 2000)));
    RequireGraphSize("Hypercube dimension", std::to_string(k), hosts, k * hosts, name);
    uint32_t n = 1u << k;
    DirectConnectGraph g(n, name);
    for (uint32_t u = 0; u < n; ++u)
    {
        for (uint32_t i = 0; i < k; ++i)
        {
            g.AddArc(u, u ^ (1u << i));
        }
    }
    return g;
}

DirectConnectGraph
MakeHamming(uint32_t dims, uint32_t q)
{
    FabricRequire(dims >= 1, "Hamming dimensions", dims, "dims >= 1");
    FabricRequire(q >= 2, "Hamming alphabet size", q, "q >= 2");
    // q^dims by steps, stopped once past the cap: dims may be 10^9
    double n = 1;
    for (uint32_t i = 0; i < dims && n <= static_cast<double>(kMaxGraphHosts); ++i)
    {
        n *= q;
    }
    RequireGraphSize("Hamming(dims,q)",
                     fmt::format("{},{}", dims, q),
                     n,
                     n * dims * (q - 1.0),
                     fmt::format("Hamming({},{})", dims, q));
    auto kq = MakeCompleteDigraph(q);
    auto g = CartesianPower(kq, dims);
    g.SetName(fmt::format("Hamming({},{})", dims, q));
    return g;
}

namespace
{

/**
 * Check a circulant's offsets: each in 1..N-1 and none repeated.
 * \param family "C" or "DC", for the messages
 * \param n hosts \param steps the offsets
 * \return the offsets as the name lists them ("2,3")
 */
std::string
CheckCirculantOffsets(const std::string& family, uint32_t n, const std::vector<uint32_t>& steps)
{
    const std::string what = family + "(N,S) offset";
    FabricRequire(n >= 2, family + "(N,S) hosts", n, "N >= 2");
    FabricRequire(!steps.empty(), family + "(N,S) offsets", "none", "at least one offset");
    std::string list;
    for (auto s : steps)
    {
        // an offset of N or more is a typo more likely than a wish for s mod N
        FabricRequire(s >= 1 && s < n, what, s, fmt::format("an offset 1..N-1 = 1..{}", n - 1));
        list += (list.empty() ? "" : ",") + std::to_string(s);
    }
    // sorted, so that a long list is checked in S log S rather than S^2
    std::vector<uint32_t> sorted(steps);
    std::sort(sorted.begin(), sorted.end());
    auto repeat = std::adjacent_find(sorted.begin(), sorted.end());
    FabricRequire(repeat == sorted.end(),
                  what,
                  repeat == sorted.end() ? 0 : *repeat,
                  "each offset once");
    return list;
}

/**
 * Build the circulant with arcs x -> x + t mod N for t in \p offsets, after
 * its size check.
 * \param family "C" or "DC" \param n hosts
 * \param steps the offsets as given (for the name)
 * \param offsets the arcs' offsets, distinct
 */
DirectConnectGraph
BuildCirculant(const std::string& family,
               uint32_t n,
               const std::vector<uint32_t>& steps,
               const std::vector<uint32_t>& offsets)
{
    const std::string list = CheckCirculantOffsets(family, n, steps);
    RequireGraphSize(family + "(N,S)",
                     fmt::format("N = {}, {} offsets", n, steps.size()),
                     n,
                     double(n) * offsets.size(),
                     fmt::format("{}({},{{...}})", family, n));
    DirectConnectGraph g(n, fmt::format("{}({},{{{}}})", family, n, list));
    for (uint32_t x = 0; x < n; ++x)
    {
        for (auto t : offsets)
        {
            g.AddArc(x, static_cast<uint32_t>((uint64_t{x} + t) % n));
        }
    }
    return g;
}

} // namespace

DirectConnectGraph
MakeCirculant(uint32_t n, const std::vector<uint32_t>& steps)
{
    CheckCirculantOffsets("C", n, steps);
    // +s and -s for each s, each distinct value once (s = N/2 is its own
    // negative; s and N-s give the same pair)
    std::vector<uint32_t> offsets;
    std::set<uint32_t> seen;
    for (auto s : steps)
    {
        for (uint32_t t : {s, n - s})
        {
            if (seen.insert(t).second)
            {
                offsets.push_back(t);
            }
        }
    }
    return BuildCirculant("C", n, steps, offsets);
}

DirectConnectGraph
MakeDirectedCirculant(uint32_t n, const std::vector<uint32_t>& steps)
{
    return BuildCirculant("DC", n, steps, steps);
}

DirectConnectGraph
MakeKautz(uint32_t d, uint32_t D)
{
    FabricRequire(d >= 1, "Kautz degree", d, "d >= 1");
    FabricRequire(D >= 1, "Kautz diameter", D, "D >= 1");
    // (d+1) d^(D-1) hosts by steps, stopped once past the cap (D may be 10^9).
    // Kautz(1,D) is K(2) for every D (its line graph is itself): no loop of
    // D steps, and no name grown by "L(" D times
    double n = d + 1.0;
    for (uint32_t i = 1; i < D && d > 1 && n <= static_cast<double>(kMaxGraphHosts); ++i)
    {
        n *= d;
    }
    RequireGraphSize("Kautz(d,D)",
                     fmt::format("{},{}", d, D),
                     n,
                     n * d,
                     fmt::format("Kautz({},{})", d, D));
    auto g = MakeCompleteDigraph(d + 1);
    for (uint32_t i = 1; i < D && d > 1; ++i)
    {
        g = LineGraph(g);
    }
    g.SetName(fmt::format("Kautz({},{})", d, D));
    return g;
}

DirectConnectGraph
MakeGeneralizedKautz(uint32_t d, uint32_t n)
{
    FabricRequire(d >= 1, "GenKautz degree", d, "d >= 1");
    FabricRequire(n > d, "GenKautz hosts", n, fmt::format("N > d = {}", d));
    const std::string name = fmt::format("GenKautz({},{})", d, n);
    RequireGraphSize("GenKautz(d,N)", fmt::format("{},{}", d, n), n, double(n) * d, name);
    DirectConnectGraph g(n, name);
    for (uint32_t x = 0; x < n; ++x)
    {
        // (-d*x - a) mod N computed without negative intermediates.
        uint64_t dx = (uint64_t{d} * x) % n;
        for (uint32_t a = 1; a <= d; ++a)
        {
            uint64_t v = (2 * uint64_t{n} - dx - a) % n;
            g.AddArc(x, static_cast<uint32_t>(v));
        }
    }
    return g;
}

DirectConnectGraph
MakePetersen()
{
    DirectConnectGraph g(10, "Petersen");
    auto edge = [&g](uint32_t u, uint32_t v) {
        g.AddArc(u, v);
        g.AddArc(v, u);
    };
    for (uint32_t i = 0; i < 5; ++i)
    {
        edge(i, (i + 1) % 5);         // outer pentagon
        edge(i, 5 + i);               // spoke
        edge(5 + i, 5 + (i + 2) % 5); // inner pentagram
    }
    return g;
}

namespace
{

/// Longest edge-list line read: "u v # comment" needs far less, and a file
/// without newlines (/dev/zero) would otherwise be read whole into one line.
constexpr size_t kMaxEdgeLine = 64 * 1024;

/**
 * Read one line of at most kMaxEdgeLine bytes (without its newline).
 * \param in the stream \param line set to the line (or its first
 * kMaxEdgeLine + 1 bytes) \return false at the end of the stream
 */
bool
ReadBoundedLine(std::istream& in, std::string& line)
{
    line.clear();
    int c = 0;
    while ((c = in.get()) != std::char_traits<char>::eof())
    {
        if (c == '\n')
        {
            return true;
        }
        line.push_back(static_cast<char>(c));
        if (line.size() > kMaxEdgeLine)
        {
            return true;
        }
    }
    return !line.empty();
}

} // namespace

DirectConnectGraph
ParseEdgeList(std::istream& in, const std::string& source)
{
    std::vector<std::pair<uint32_t, uint32_t>> arcs;
    uint64_t maxId = 0;
    std::string line;
    uint32_t lineNo = 0;
    while (ReadBoundedLine(in, line))
    {
        ++lineNo;
        auto param = fmt::format("edge list {} line {}", source, lineNo);
        FabricRequire(line.size() <= kMaxEdgeLine,
                      param,
                      line,
                      fmt::format("a line of at most {} bytes (this one is longer)", kMaxEdgeLine));
        auto hash = line.find('#');
        std::string body = hash == std::string::npos ? line : line.substr(0, hash);
        std::istringstream ls(body);
        std::string tok;
        std::vector<std::string> toks;
        while (ls >> tok)
        {
            toks.push_back(tok);
        }
        if (toks.empty())
        {
            continue;
        }
        FabricRequire(toks.size() == 2, param, line, "two host ids 'u v' (# starts a comment)");
        uint32_t ends[2];
        for (int k = 0; k < 2; ++k)
        {
            const auto& t = toks[k];
            bool digits =
                !t.empty() && t.size() <= 9 &&
                std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
            FabricRequire(digits, param, line, "two non-negative integer host ids below 10^9");
            ends[k] = static_cast<uint32_t>(std::stoul(t));
            maxId = std::max<uint64_t>(maxId, ends[k]);
        }
        // a self loop carries nothing in a schedule: a typo more likely than a link
        FabricRequire(ends[0] != ends[1], param, line, "two different host ids (no self loop)");
        FabricRequire(arcs.size() < kMaxGraphArcs,
                      "edge list " + source,
                      fmt::format("more than {} arcs", kMaxGraphArcs),
                      fmt::format("at most {} arcs", kMaxGraphArcs));
        arcs.emplace_back(ends[0], ends[1]);
    }
    FabricRequire(!arcs.empty(), "edge list " + source, "no arcs", "at least one 'u v' line");
    const std::string name = "Edges(" + source + ")";
    RequireGraphSize("edge list " + source + " hosts",
                     std::to_string(maxId + 1),
                     static_cast<double>(maxId + 1),
                     static_cast<double>(arcs.size()),
                     name);
    DirectConnectGraph g(static_cast<uint32_t>(maxId + 1), name);
    for (auto [u, v] : arcs)
    {
        g.AddArc(u, v);
    }
    return g;
}

DirectConnectGraph
LoadEdgeList(const std::string& path)
{
    // a device or a FIFO (/dev/zero, /dev/stdin) would be read forever
    std::error_code error;
    FabricRequire(std::filesystem::is_regular_file(path, error),
                  "edge list file",
                  path,
                  "a readable regular file (not a directory, device or pipe)");
    std::ifstream in(path);
    FabricRequire(in.good(), "edge list file", path, "a readable regular file");
    return ParseEdgeList(in, path);
}

// ---------------------------------------------------------------- expansions

DirectConnectGraph
LineGraph(const DirectConnectGraph& g)
{
    uint64_t arcs = 0;
    for (const auto& a : g.Arcs())
    {
        arcs += g.OutDegree(a.to);
    }
    // N' = arcs of G, arcs' = sum over hosts v of indeg(v) outdeg(v)
    const std::string name = "L(" + g.Name() + ")";
    RequireGraphSize("line graph L(G)", name, g.NumArcs(), static_cast<double>(arcs), name);
    DirectConnectGraph l(g.NumArcs(), name);
    for (uint32_t e = 0; e < g.NumArcs(); ++e)
    {
        for (uint32_t f : g.OutArcs(g.GetArc(e).to))
        {
            l.AddArc(e, f);
        }
    }
    return l;
}

DirectConnectGraph
DegreeExpansion(const DirectConnectGraph& g, uint32_t n)
{
    FabricRequire(n >= 1, "Deg(G,n) copies", n, "n >= 1");
    const std::string name = fmt::format("Deg({},{})", g.Name(), n);
    RequireGraphSize("Deg(G,n) copies",
                     std::to_string(n),
                     double(g.NumNodes()) * n,
                     double(g.NumArcs()) * n * n,
                     name);
    DirectConnectGraph x(g.NumNodes() * n, name);
    for (const auto& a : g.Arcs())
    {
        for (uint32_t i = 0; i < n; ++i)
        {
            for (uint32_t j = 0; j < n; ++j)
            {
                x.AddArc(a.from * n + i, a.to * n + j);
            }
        }
    }
    return x;
}

DirectConnectGraph
CartesianProduct(const std::vector<const DirectConnectGraph*>& factors)
{
    FabricRequire(!factors.empty(), "product factors", "none", "at least one factor");
    std::string name = "Prod(";
    for (size_t i = 0; i < factors.size(); ++i)
    {
        name += (i ? "," : "") + factors[i]->Name();
    }
    name += ")";
    // hosts: the product of the factors' (each at most 2^24, so at most 24
    // factors of two or more hosts pass); arcs: each factor's in every layer
    double hosts = 1;
    for (auto* f : factors)
    {
        hosts *= f->NumNodes();
    }
    double arcs = 0;
    for (auto* f : factors)
    {
        arcs += hosts / f->NumNodes() * f->NumArcs();
    }
    RequireGraphSize("product", name, hosts, arcs, name);
    const auto n = static_cast<uint64_t>(hosts);
    DirectConnectGraph p(static_cast<uint32_t>(n), name);
    const size_t k = factors.size();
    // stride[i]: weight of coordinate i in the mixed-radix host id.
    std::vector<uint64_t> stride(k, 1);
    for (size_t i = k - 1; i > 0; --i)
    {
        stride[i - 1] = stride[i] * factors[i]->NumNodes();
    }
    for (size_t i = 0; i < k; ++i)
    {
        const auto& f = *factors[i];
        uint64_t layers = n / f.NumNodes();
        for (uint64_t layer = 0; layer < layers; ++layer)
        {
            // Host of this layer with coordinate i = 0: split the layer index
            // into the part above and below coordinate i.
            uint64_t low = layer % stride[i];
            uint64_t high = layer / stride[i];
            uint64_t base = high * stride[i] * f.NumNodes() + low;
            for (const auto& a : f.Arcs())
            {
                p.AddArc(static_cast<uint32_t>(base + a.from * stride[i]),
                         static_cast<uint32_t>(base + a.to * stride[i]));
            }
        }
    }
    return p;
}

DirectConnectGraph
CartesianProduct(const DirectConnectGraph& g, const DirectConnectGraph& h)
{
    return CartesianProduct(std::vector<const DirectConnectGraph*>{&g, &h});
}

DirectConnectGraph
CartesianPower(const DirectConnectGraph& g, uint32_t n)
{
    FabricRequire(n >= 1, "Pow(G,n) exponent", n, "n >= 1");
    // the size first: the list of n factors is itself n pointers (8 GB for
    // Pow(K(2),999999999)); a graph of two or more hosts passes 2^24 hosts
    // within 24 factors
    uint64_t hosts = 1;
    for (uint32_t i = 0; i < n; ++i)
    {
        hosts *= g.NumNodes();
        FabricRequire(hosts <= (1u << 24) && i < 24,
                      "Pow(G,n) hosts",
                      fmt::format("{}^{}", g.NumNodes(), n),
                      "at most 16777216 hosts, and n <= 24");
    }
    const std::string name = fmt::format("Pow({},{})", g.Name(), n);
    const double h = static_cast<double>(hosts);
    RequireGraphSize("Pow(G,n) exponent",
                     std::to_string(n),
                     h,
                     n * h / g.NumNodes() * g.NumArcs(),
                     name);
    std::vector<const DirectConnectGraph*> factors(n, &g);
    auto p = CartesianProduct(factors);
    p.SetName(name);
    return p;
}

} // namespace ns3
