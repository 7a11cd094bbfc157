/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_TOPOLOGY_H
#define GPU_FABRIC_FABRIC_TOPOLOGY_H

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/// \ingroup gpu-fabric
/// What a vertex of a FabricTopology is.
enum class TopoNodeKind : uint8_t
{
    Gpu,      //!< a GPU (rank)
    NvSwitch, //!< an NVSwitch plane of an HB domain
    Switch,   //!< a network switch (rail, leaf, aggregation, spine, core)
};

/// \ingroup gpu-fabric
/// What a link of a FabricTopology is.
enum class TopoLinkKind : uint8_t
{
    NvLink,         //!< GPU <-> NVSwitch inside an HB domain
    Nic,            //!< GPU NIC <-> its first switch
    SwitchToSwitch, //!< between network switches
    Direct,         //!< GPU/host <-> GPU/host (direct-connect)
};

/// \return the name of a link kind ("nvlink", "nic", "switch", "direct")
std::string ToString(TopoLinkKind kind);

/// \ingroup gpu-fabric
/// Vertex properties.
struct TopoNode
{
    TopoNodeKind kind{TopoNodeKind::Switch}; //!< kind
    std::string role;                        //!< "gpu", "nvswitch", "rail", "leaf", "spine", ...
    uint32_t tier{0};    //!< 0 for GPUs and NVSwitches, 1 for leaves/rail switches, ...
    uint32_t rank{0};    //!< global rank (GPUs)
    int32_t domain{-1};  //!< HB domain (GPUs, NVSwitches), -1 if none
    uint32_t local{0};   //!< index inside the domain = rail (GPUs); plane (NVSwitches)
    uint32_t chassis{0}; //!< physical box (several logical switches may share one)
    uint32_t ports{0};   //!< ports attached so far
};

/// \ingroup gpu-fabric
/// Directed edge properties; a cable is two edges sharing a cable id.
struct TopoLink
{
    TopoLinkKind kind{TopoLinkKind::SwitchToSwitch}; //!< kind
    uint64_t rateBps{0};                             //!< rate of this direction, bits per second
    int64_t delayNs{0};                              //!< propagation delay, nanoseconds
    uint32_t srcPort{0};                             //!< port index at the source vertex
    uint32_t dstPort{0};                             //!< port index at the target vertex
    uint32_t cable{0};                               //!< index into FabricTopology::Cables()
};

/// \ingroup gpu-fabric
/// One physical link (a full-duplex cable or a one-way arc).
struct TopoCable
{
    uint32_t a{0};                                   //!< first end (vertex)
    uint32_t b{0};                                   //!< second end (vertex)
    uint32_t aPort{0};                               //!< port at a
    uint32_t bPort{0};                               //!< port at b
    uint64_t rateBps{0};                             //!< rate per direction
    int64_t delayNs{0};                              //!< propagation delay
    TopoLinkKind kind{TopoLinkKind::SwitchToSwitch}; //!< kind
    bool bidirectional{true};                        //!< false: only a -> b carries traffic
};

/**
 * \ingroup gpu-fabric
 * \brief The one description of a fabric: a Boost.Graph of GPUs, NVSwitches,
 * switches and links.
 *
 * Builders produce it; FabricHelper instantiates ns-3 nodes and devices from
 * it; routing, the cost model and the flow backend read it. Vertices are
 * numbered in creation order; GPUs also have dense ranks 0..N-1.
 */
class FabricTopology
{
  public:
    /// The graph type (directed edges, both directions navigable).
    using Graph =
        boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, TopoNode, TopoLink>;
    using Vertex = Graph::vertex_descriptor; //!< vertex handle
    using Edge = Graph::edge_descriptor;     //!< edge handle

    /**
     * The most GPUs one topology holds. Topologies live in memory (about
     * 1.5 KB per GPU with its share of switches and cables, so ~6 GB at the
     * cap); larger counts are refused by name instead of exhausting memory.
     */
    static constexpr uint32_t kMaxGpus = 1u << 22;

    /// What kMaxGpus allows, for error messages.
    static std::string MaxGpusAllowed();

    /// \param name a label ("rail-only", "fat-tree", ...)
    explicit FabricTopology(std::string name = "fabric");

    /**
     * Add a GPU with the next rank.
     * \param domain HB domain index, or -1
     * \param local index in the domain (its rail)
     * \return its vertex
     * \throws FabricConfigError past kMaxGpus GPUs
     */
    uint32_t AddGpu(int32_t domain, uint32_t local);

    /**
     * Add a switch.
     * \param kind Switch or NvSwitch
     * \param role label \param tier tier (1 = leaf)
     * \param chassis physical box id; by default a new one
     * \return its vertex
     */
    uint32_t AddSwitch(TopoNodeKind kind,
                       const std::string& role,
                       uint32_t tier,
                       int64_t chassis = -1);

    /**
     * Add a full-duplex cable: one port on each end, an edge each way.
     * \return the cable index
     */
    uint32_t AddCable(uint32_t a, uint32_t b, uint64_t rateBps, int64_t delayNs, TopoLinkKind kind);

    /**
     * Add a one-way arc a -> b (direct-connect): a port on each end.
     * \return the cable index
     */
    uint32_t AddArc(uint32_t a, uint32_t b, uint64_t rateBps, int64_t delayNs, TopoLinkKind kind);

    /**
     * Place a switch in an HB domain (NVSwitch planes).
     * \param v the vertex \param domain the domain \param plane its plane index
     */
    void SetDomain(uint32_t v, int32_t domain, uint32_t plane);

    /// \return the graph
    const Graph& GetGraph() const;
    /// \return all cables
    const std::vector<TopoCable>& Cables() const;
    /// \return number of vertices
    uint32_t GetNVertices() const;
    /// \return number of GPUs
    uint32_t GetNGpus() const;
    /// \param rank a GPU rank \return its vertex
    uint32_t GpuVertex(uint32_t rank) const;
    /// \param v a vertex \return its properties
    const TopoNode& Node(uint32_t v) const;
    /// \return the label
    const std::string& GetName() const;

    /// HB domain size K (0 if the topology has no HB domains).
    uint32_t gpusPerDomain{0};
    /// GPUs may relay traffic of other ranks (direct-connect).
    bool gpuTransit{false};
    /// Cross-rail traffic is relayed through the sender's HB domain (rail-only).
    bool railRelay{false};
    /// Direct-connect: cable of each arc of the source graph (-1: self-loop).
    std::vector<int64_t> arcToCable;

  private:
    std::string m_name;                //!< label
    Graph m_graph;                     //!< the graph
    std::vector<TopoCable> m_cables;   //!< physical links
    std::vector<uint32_t> m_gpuVertex; //!< rank -> vertex
    uint32_t m_nextChassis{0};         //!< next chassis id
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_TOPOLOGY_H
