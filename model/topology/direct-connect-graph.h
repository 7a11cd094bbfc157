/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_DIRECT_CONNECT_GRAPH_H
#define GPU_FABRIC_DIRECT_CONNECT_GRAPH_H

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <istream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief A direct-connect topology: a directed multigraph of hosts and arcs.
 *
 * Each arc is one unidirectional link (a bidirectional cable is two arcs).
 * Arcs have stable ids 0..NumArcs()-1 in insertion order; schedules refer to
 * arcs by these ids, so parallel arcs stay distinguishable.  The Boost.Graph
 * adjacency_list mirrors the arcs (edge i of the Boost graph is arc i) for the
 * Boost algorithms; the flat in/out arc lists are kept for the hot loops of
 * BFB.  The class is plain C++ and does not need the ns-3 runtime.
 */
class DirectConnectGraph
{
  public:
    /// The Boost.Graph view of the topology (edge property = arc id).
    using BoostGraph = boost::adjacency_list<boost::vecS,
                                             boost::vecS,
                                             boost::bidirectionalS,
                                             boost::no_property,
                                             boost::property<boost::edge_index_t, uint32_t>>;

    /// One directed link.
    struct Arc
    {
        uint32_t from; //!< tail (sending host)
        uint32_t to;   //!< head (receiving host)
    };

    /// Distance value for a host that cannot be reached.
    static constexpr uint32_t UNREACHABLE = std::numeric_limits<uint32_t>::max();

    DirectConnectGraph();
    /// A deep copy (the Boost mirror included).
    DirectConnectGraph(const DirectConnectGraph& other);
    /// A deep copy (the Boost mirror included).
    DirectConnectGraph& operator=(const DirectConnectGraph& other);
    /// Moves without copying: Boost 1.74's adjacency_list has no move, so a
    /// mirror held by value was copied arc by arc on every return and move.
    /// The moved-from graph is empty.
    DirectConnectGraph(DirectConnectGraph&& other) noexcept;
    /// \copydoc DirectConnectGraph(DirectConnectGraph&&)
    DirectConnectGraph& operator=(DirectConnectGraph&& other) noexcept;
    ~DirectConnectGraph();

    /**
     * \brief An arc-less graph.
     * \param nodes number of hosts
     * \param name construction name (e.g. "K(4,4)")
     */
    explicit DirectConnectGraph(uint32_t nodes, std::string name = "");

    /**
     * \brief Add one arc.
     * \param from tail host
     * \param to head host
     * \return the new arc's id
     */
    uint32_t AddArc(uint32_t from, uint32_t to);

    /// \return number of hosts
    uint32_t NumNodes() const;
    /// \return number of arcs (links)
    uint32_t NumArcs() const;
    /// \param id arc id \return the arc
    const Arc& GetArc(uint32_t id) const;
    /// \return all arcs, indexed by id
    const std::vector<Arc>& Arcs() const;
    /// \param u host \return ids of the arcs leaving u
    const std::vector<uint32_t>& OutArcs(uint32_t u) const;
    /// \param u host \return ids of the arcs entering u
    const std::vector<uint32_t>& InArcs(uint32_t u) const;
    /// \param u host \return out-degree of u (self-loops and parallel arcs counted)
    uint32_t OutDegree(uint32_t u) const;
    /// \param u host \return in-degree of u
    uint32_t InDegree(uint32_t u) const;

    /// \return true if every host has the same in- and out-degree d
    bool IsRegular() const;
    /**
     * \return the degree d of a regular graph
     * \throws FabricConfigError if the graph is not regular
     */
    uint32_t Degree() const;
    /// \return the largest in- or out-degree (the port count a host needs)
    uint32_t MaxDegree() const;
    /// \return number of self-loop arcs (u -> u)
    uint32_t SelfLoopCount() const;

    /// \return true if every host reaches every other host (Boost strong_components)
    bool IsStronglyConnected() const;
    /**
     * \param source start host
     * \return hop distance from source to every host (UNREACHABLE if none)
     */
    std::vector<uint32_t> BfsDistances(uint32_t source) const;
    /**
     * \return the largest distance between two hosts
     * \throws FabricConfigError if the graph is not strongly connected
     */
    uint32_t Diameter() const;
    /// \return the graph with every arc reversed; arc i of the result is arc i reversed
    DirectConnectGraph Reverse() const;

    /// \return the construction name ("" if none)
    const std::string& Name() const;
    /// \param name new construction name
    void SetName(std::string name);
    /// \return the Boost.Graph mirror
    const BoostGraph& Graph() const;

  private:
    /// Throw unless u is a host of this graph.
    void CheckNode(uint32_t u, const char* what) const;

    uint32_t m_nodes{0};                      //!< host count
    std::string m_name;                       //!< construction name
    std::vector<Arc> m_arcs;                  //!< arcs by id
    std::vector<std::vector<uint32_t>> m_out; //!< out-arc ids per host
    std::vector<std::vector<uint32_t>> m_in;  //!< in-arc ids per host
    std::unique_ptr<BoostGraph> m_graph;      //!< Boost mirror (null once moved from)
};

/// \name Size bounds: every generator, expansion and edge list checks its size first
/// @{

/// Most hosts a graph may have: 2^24 = 16,777,216.
constexpr uint64_t kMaxGraphHosts = uint64_t{1} << 24;

/**
 * Most arcs a graph may have: 2^22 = 4,194,304 (K(2048), Hypercube(17) and
 * Torus(1024,1024) fit; Hypercube(20) and K(4096) do not).  Building costs
 * about DirectConnectGraphBytes() and a fraction of a microsecond per arc, and
 * nothing that uses a graph goes further: BFB stops at 65535 hosts, and a
 * simulated fabric holds far more per arc than the graph does.
 */
constexpr uint64_t kMaxGraphArcs = uint64_t{1} << 22;

/**
 * \param hosts hosts of a graph
 * \param arcs its arcs
 * \return the bytes a DirectConnectGraph of that size holds (measured with
 *         bench/bfb-scale: arc lists, per-host arc ids and the Boost mirror)
 */
double DirectConnectGraphBytes(double hosts, double arcs);

/**
 * \brief Throw FabricConfigError unless a graph of \p hosts and \p arcs fits
 * kMaxGraphHosts, kMaxGraphArcs and the memory budget (FabricRequireMemory):
 * called with the counts computed before anything is allocated.
 * \param parameter the construction parameter that sets the size ("K(n) hosts")
 * \param value its value as given
 * \param hosts hosts the graph would have (a double: it may be huge)
 * \param arcs arcs it would have
 * \param graph the graph's name, for the message
 * \throws FabricConfigError "invalid <parameter>: got '<value>', allowed: a graph of at
 *         most 16777216 hosts and 4194304 arcs; <graph> would have H hosts and A arcs"
 */
void RequireGraphSize(const std::string& parameter,
                      const std::string& value,
                      double hosts,
                      double arcs,
                      const std::string& graph);

/// @}

/// \name Base and family generators (all set the graph's construction name)
/// @{

/**
 * \brief Complete digraph K(n): every ordered pair is an arc; d = n - 1.
 * \param n hosts, >= 2
 */
DirectConnectGraph MakeCompleteDigraph(uint32_t n);

/**
 * \brief Complete bipartite K(d,d), both directions; N = 2d, degree d.
 * \param d side size and degree, >= 1
 */
DirectConnectGraph MakeCompleteBipartite(uint32_t d);

/**
 * \brief Unidirectional ring: x -> x+1 mod n; d = 1.
 * \param n hosts, >= 2
 */
DirectConnectGraph MakeRing(uint32_t n);

/**
 * \brief Bidirectional ring: x -> x+-1 mod n; d = 2.
 * \param n hosts, >= 3 (n = 2 would need parallel arcs)
 */
DirectConnectGraph MakeBiRing(uint32_t n);

/**
 * \brief Bidirectional torus with the given side lengths; d = 2 * dims.
 *
 * Host id is mixed-radix with the first dimension most significant.
 * \param dims side lengths, each >= 3 (use Hypercube for sides of 2)
 */
DirectConnectGraph MakeTorus(const std::vector<uint32_t>& dims);

/**
 * \brief Hypercube of dimension k: x -> x xor 2^i; N = 2^k, d = k.
 * \param k dimension, 1..17 (k 2^k arcs, at most kMaxGraphArcs)
 */
DirectConnectGraph MakeHypercube(uint32_t k);

/**
 * \brief Hamming graph H(dims, q) = K(q)^dims: hosts are dims-digit words over
 * q symbols, arcs join words that differ in exactly one digit.
 * N = q^dims, d = dims * (q - 1).  The name is Hamming(dims,q).
 * \param dims number of digits, >= 1
 * \param q alphabet size, >= 2
 */
DirectConnectGraph MakeHamming(uint32_t dims, uint32_t q);

/**
 * \brief Circulant C(N, S), the undirected (bidirectional) circulant of graph
 * theory and of the direct-connect paper: x -> x + s and x -> x - s mod N for
 * every s in S, so degree 2|S| (C(12,{2,3}) has degree 4).
 *
 * No arc is added twice: s = N/2 gives one arc x -> x + N/2 (it is its own
 * negative, so it adds 1 to the degree), and s and N - s both in S give the
 * same two arcs (C(12,{2,3,9,10}) is C(12,{2,3})).  The degree is the number
 * of distinct values +-s mod N.  Arcs of host x follow S in the order given,
 * +s before -s.
 * \param n hosts, >= 2
 * \param steps offsets, each in 1..N-1, none repeated
 * \throws FabricConfigError naming an offset 0, >= N or repeated
 */
DirectConnectGraph MakeCirculant(uint32_t n, const std::vector<uint32_t>& steps);

/**
 * \brief Directed circulant DC(N, S): x -> x + s mod N for every s in S only;
 * degree |S|.  (Earlier versions built this graph for C(N,S).)
 * \param n hosts, >= 2
 * \param steps offsets, each in 1..N-1, none repeated
 * \throws FabricConfigError naming an offset 0, >= N or repeated
 */
DirectConnectGraph MakeDirectedCirculant(uint32_t n, const std::vector<uint32_t>& steps);

/**
 * \brief Kautz graph Kautz(d, D) = L^(D-1)(K(d+1)): N = (d+1) d^(D-1), degree d,
 * diameter D.
 * \param d degree, >= 1
 * \param D diameter, >= 1
 */
DirectConnectGraph MakeKautz(uint32_t d, uint32_t D);

/**
 * \brief Generalized Kautz (Imase-Itoh) graph GenKautz(d, N): x -> (-d*x - a) mod N,
 * a = 1..d.
 *
 * Self-loops: kept.  A host x with (d+1)x + a = 0 mod N has one port wired back
 * to itself; that arc is a real (wasted) port, so the graph stays d-regular and
 * T_B is charged for d ports, but no schedule ever sends on it (BFB cannot,
 * since a self-loop never shortens a path).  SelfLoopCount() reports how many
 * there are.
 * \param d degree, >= 1
 * \param n hosts, > d (so the d targets of a host are distinct)
 */
DirectConnectGraph MakeGeneralizedKautz(uint32_t d, uint32_t n);

/// \brief The Petersen graph as a bidirectional digraph: N = 10, degree 3, diameter 2.
DirectConnectGraph MakePetersen();

/**
 * \brief Read an edge list: one arc "u v" per line, '#' starts a comment,
 * blank lines ignored.  N = largest id + 1.
 * \param in the text
 * \param source file name used in error messages
 * \throws FabricConfigError naming the line number of a malformed line
 */
DirectConnectGraph ParseEdgeList(std::istream& in, const std::string& source);

/**
 * \brief ParseEdgeList on a file.
 * \param path file name
 * \throws FabricConfigError if the file cannot be opened or is malformed
 */
DirectConnectGraph LoadEdgeList(const std::string& path);

/// @}

/// \name Expansions (graph part; the schedule part is in bfb-schedule.h)
/// @{

/**
 * \brief Line graph L(G): host i of L(G) is arc i of G; arc (u->v) links to every
 * out-arc (v->w).  Arcs are created in order of the G arc they leave, then of
 * v's out-arc list.  N' = |arcs of G|.
 */
DirectConnectGraph LineGraph(const DirectConnectGraph& g);

/**
 * \brief Degree expansion Deg(G, n): host u becomes copies u*n + i; arc a = (u->v)
 * becomes arcs (u,i)->(v,j) with id a*n*n + i*n + j.  N' = nN, d' = nd.
 * \param n copies, >= 1
 */
DirectConnectGraph DegreeExpansion(const DirectConnectGraph& g, uint32_t n);

/**
 * \brief Cartesian product of factors G_0 x G_1 x ...: host ids are mixed-radix
 * (factor 0 most significant); arcs move in one coordinate.  Arcs of factor k
 * come in a block: for every setting of the other coordinates (mixed-radix,
 * increasing), the arcs of G_k in id order.
 */
DirectConnectGraph CartesianProduct(const std::vector<const DirectConnectGraph*>& factors);

/// \brief Prod(G, H) = CartesianProduct({G, H}); name "Prod(G,H)".
DirectConnectGraph CartesianProduct(const DirectConnectGraph& g, const DirectConnectGraph& h);

/**
 * \brief Cartesian power G^n; name "Pow(G,n)".
 * \param n exponent, >= 1
 */
DirectConnectGraph CartesianPower(const DirectConnectGraph& g, uint32_t n);

/// @}

} // namespace ns3

#endif // GPU_FABRIC_DIRECT_CONNECT_GRAPH_H
