/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FCT_STUDY_H
#define GPU_FABRIC_FCT_STUDY_H

// What examples/cc-study needs beyond the module, and its tests check: the
// flow-size distributions (data files of CDF points), Poisson flow arrivals
// at a load, the ideal flow completion time of a flow alone on the idle
// fabric (closed form), size buckets and percentiles. A part of the
// programs' support library: not installed, not module API.

#include "ns3/fabric-topology.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * A flow-size distribution as CDF points, sizes drawn piecewise-linearly
 * between them (the DCTCP and HPCC papers' generators do the same).
 *
 * File format: one point per line, "<bytes> <cumulative percent>", sizes
 * strictly increasing and at least 0, percents non-decreasing, the first 0
 * and the last 100; '#' starts a comment (the file's header names its
 * source); blank lines are skipped.
 */
class FlowSizeCdf
{
  public:
    /**
     * Read a distribution file.
     * \param flag the flag that chose it (for errors) \param path the file
     * \return the distribution
     * \throws FabricConfigError naming \p flag, the file, the line and what is allowed
     */
    static FlowSizeCdf Load(const std::string& flag, const std::string& path);

    /**
     * Make one from points (checked as Load checks a file).
     * \param flag for errors \param points (bytes, percent) pairs
     * \return the distribution
     */
    static FlowSizeCdf FromPoints(const std::string& flag,
                                  std::vector<std::pair<double, double>> points);

    /// \return the mean size of the piecewise-linear distribution, bytes
    double Mean() const;

    /// \param bytes a size \return P(size <= bytes)
    double Probability(double bytes) const;

    /**
     * \param u a uniform variate in [0, 1)
     * \return the size at quantile \p u, rounded up to whole bytes (at least 1)
     */
    uint64_t Sample(double u) const;

    /// \return the largest size, bytes
    double MaxBytes() const;

    /// \return the points, (bytes, probability in [0, 1])
    const std::vector<std::pair<double, double>>& Points() const
    {
        return m_points;
    }

  private:
    std::vector<std::pair<double, double>> m_points; //!< (bytes, probability)
};

/**
 * The path to a data file of the module's programs (examples/data): from
 * \p dataDir if not empty, else the environment's GPU_FABRIC_DATA_DIR, else
 * the source tree's examples/data (a build tree), else the installed
 * share/gpu-fabric (CMAKE_INSTALL_DATADIR of the configured prefix), else
 * share/gpu-fabric beside the program's bin/ (an install under another prefix).
 * \param flag the flag that named it, for the error
 * \param name the file's name \param dataDir a directory given by a flag
 * \return the first path that exists
 * \throws FabricConfigError naming \p flag, the file and every place looked in
 */
std::string FindDataFile(const std::string& flag,
                         const std::string& name,
                         const std::string& dataDir);

/// A range of flow sizes, (minBytes, maxBytes].
struct SizeBucket
{
    double minBytes;   //!< exclusive lower bound, bytes
    double maxBytes;   //!< inclusive upper bound, bytes
    std::string label; //!< e.g. "10KB-100KB"
};

/**
 * Size buckets of a distribution: decades (upper bounds 10^k bytes, and the
 * largest size), ascending; a bucket holding less than \p minMass of the
 * flows is merged into the next (the last into the one before it).
 * \param cdf the distribution \param minMass smallest share of flows per bucket
 * \return the buckets, ascending, covering (0, MaxBytes]
 */
std::vector<SizeBucket> SizeBuckets(const FlowSizeCdf& cdf, double minMass = 0.05);

/// One flow of a study.
struct FlowSpec
{
    uint32_t src;   //!< source host (rank)
    uint32_t dst;   //!< destination host, another than src
    uint64_t bytes; //!< payload bytes
    double startS;  //!< start time, seconds
};

/**
 * Poisson arrivals: each host starts flows with exponential gaps of mean
 * meanBytes x 8 / (load x rate) (offered load = load x the host's link rate),
 * destination uniform among the other hosts, sizes from \p cdf, from time 0
 * until \p durationS. One seeded generator (64-bit Mersenne twister), variates
 * made from its bits without the standard library's distributions, so a
 * seed gives the same flows on every platform.
 * \param hosts hosts (at least 2) \param load fraction of the link rate, in (0, 1)
 * \param rateBps each host's link rate \param cdf the sizes \param durationS arrivals until then
 * \param seed the seed
 * \return the flows in start-time order
 */
std::vector<FlowSpec> PoissonFlows(uint32_t hosts,
                                   double load,
                                   double rateBps,
                                   const FlowSizeCdf& cdf,
                                   double durationS,
                                   uint64_t seed);

/**
 * How a transport puts a flow on the wire: payload bytes per packet, header
 * bytes per packet as it leaves the sender, and bytes each switch egress
 * adds (in-band telemetry, HPCC's and Swift's INT: one record per switch).
 */
struct PacketFraming
{
    uint32_t payload{0};  //!< payload bytes per full packet
    uint32_t overhead{0}; //!< header bytes per packet at the sender
    uint32_t hopBytes{0}; //!< bytes added at each switch egress
    uint32_t maxHops{0};  //!< switch egresses that add them (the rest add nothing)
};

class PacketTransport;

/**
 * \param transport a packet-level transport (installed: its payload is known)
 * \param frameMtu the fabric's frame MTU (FabricHelper::GetDeviceFrameMtu)
 * \return how it frames its flows: FabricHeader, and with a congestion
 *         control that reads INT (HPCC, Swift) the telemetry header and a
 *         record per switch egress
 */
PacketFraming TransportFraming(const PacketTransport& transport, uint32_t frameMtu);

/**
 * The completion time of one flow alone on the idle fabric, in closed form:
 * FlowTransport's latency formula (model/transport/flow-transport.h)
 * generalised to frames that grow at each switch (INT). On a shortest path
 * of hops i = 1..h with delay d_i and rate r_i, with F_k(i) the wire bytes
 * of packet k at hop i and b the bottleneck hop (the largest full-packet
 * serialization time, the last one on ties):
 *   T = sum_i d_i + sum_{i != b} F_0(i) / r_i + sum_k F_k(b) / r_b,
 * the first packet's store-and-forward trip, then every packet at the
 * bottleneck. Without INT and with the bottleneck the slowest link this is
 * the flow level's sum_i d_i + sum_i S / r_i - S / min r + W / min r. Exact
 * where the bottleneck is the last hop (equal rates: every fabric of
 * cc-study), which the packet level reproduces (test-cc-study).
 */
class IdealFct
{
  public:
    /// \param topo the fabric's topology (kept by reference)
    explicit IdealFct(const FabricTopology& topo);

    /// \param src source rank \param dst destination rank \param bytes payload
    /// \param framing the transport's packets \return seconds
    double Seconds(uint32_t src, uint32_t dst, uint64_t bytes, const PacketFraming& framing) const;

    /// \param src source rank \param dst destination rank \return hops of a shortest path
    uint32_t Hops(uint32_t src, uint32_t dst) const;

  private:
    /// One hop of a path.
    struct Hop
    {
        double delayS;  //!< propagation delay
        double rateBps; //!< rate
    };

    /// \return a shortest path's hops from \p src to \p dst (BFS tree, cached per source)
    std::vector<Hop> Path(uint32_t src, uint32_t dst) const;

    const FabricTopology& m_topo;
    /// by source rank: each vertex's BFS parent edge's (parent, delay, rate); empty until asked
    mutable std::vector<std::vector<std::pair<int64_t, Hop>>> m_parents;
};

/**
 * The \p q quantile of \p v (0 < q <= 1) by the nearest-rank rule: the
 * smallest value with at least q x n values at or below it.
 * \param v the values (sorted here) \param q the quantile
 * \return the value (0 for no values)
 */
double NearestRankPercentile(std::vector<double> v, double q);

} // namespace ns3

#endif // GPU_FABRIC_FCT_STUDY_H
