/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_TRAFFIC_MATRIX_H
#define GPU_FABRIC_TRAFFIC_MATRIX_H

#include "training-iteration.h"

#include "ns3/collective-schedule.h"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ns3
{

/// Bytes of one ordered GPU pair, per parallel dimension.
struct TrafficEntry
{
    uint32_t src{0};                             //!< sender (global rank)
    uint32_t dst{0};                             //!< receiver (global rank)
    std::array<uint64_t, kParallelDims> bytes{}; //!< bytes per ParallelDim

    /// \return bytes over all dimensions
    uint64_t Total() const;
};

/// Where bytes go: inside an HB domain, between domains on one rail, or neither.
struct TrafficSplit
{
    uint64_t intraDomain{0};   //!< same HB domain (NVLink)
    uint64_t sameRailInter{0}; //!< different domains, same rail (rail network)
    uint64_t otherInter{0};    //!< different domains and rails (needs a spine or forwarding)

    /// \return all bytes
    uint64_t Total() const
    {
        return intraDomain + sameRailInter + otherInter;
    }
};

/**
 * \ingroup gpu-fabric
 * \brief Sparsity statistics of a traffic matrix.
 */
struct TrafficStats
{
    uint32_t gpus{0};                              //!< N
    uint32_t gpusPerDomain{0};                     //!< K
    uint64_t orderedPairs{0};                      //!< N (N - 1)
    uint64_t pairsWithTraffic{0};                  //!< ordered pairs with at least one byte
    uint64_t interDomainPairsWithTraffic{0};       //!< of those, pairs in different domains
    uint64_t otherPairsWithTraffic{0};             //!< of those, different domains and rails
    TrafficSplit all;                              //!< bytes over all dimensions
    std::array<TrafficSplit, kParallelDims> byDim; //!< bytes per ParallelDim

    /// \return fraction of ordered GPU pairs that exchange nothing
    double IdlePairFraction() const;
    /// \return fraction of bytes inside HB domains
    double IntraDomainFraction() const;
    /// \return fraction of bytes between same-rail GPUs of different domains
    double SameRailFraction() const;
    /// \return fraction of bytes between GPUs of different domains and rails
    double OtherFraction() const;
};

/**
 * \ingroup gpu-fabric
 * \brief Bytes per ordered GPU pair of one training iteration, stored sparse
 *        (only pairs that exchange something), split by parallel dimension.
 *
 * A byte counts once on every GPU-to-GPU transfer: a byte PXN relays through
 * a GPU of the sender's domain appears on both hops.  Per call the local
 * traffic comes from the collective generators' TrafficMatrix() when the
 * communicator has at most \c exactGroupLimit ranks (computed once per shape
 * and reused for every communicator), otherwise from the closed forms below,
 * which equal the generators' to within rounding (a few bytes per pair):
 * - ring AllReduce of S over n: rank i sends 2 (n-1) S / n to i+1 mod n;
 * - hierarchical AllReduce, k members per domain, D = n / k domains: each
 *   member sends 2 (k-1) S / k to the next member of its domain (ring) and
 *   2 (D-1) S / (k D) to the member with the same index in the next domain;
 * - direct AllToAll of S per rank: S / n to every other rank;
 * - PXN AllToAll: S / n * D to each other member of its domain (its own piece
 *   plus the D - 1 it relays onto that member's rail) and S / n * k to each
 *   member with the same index in another domain;
 * - SendRecv: the bytes on each pair.
 */
class IterationTrafficMatrix
{
  public:
    /**
     * \param gpus N \param gpusPerDomain K (a divisor of N)
     * \param exactGroupLimit largest communicator whose traffic is taken from the
     *        generated schedule (0: closed forms only)
     */
    IterationTrafficMatrix(uint32_t gpus, uint32_t gpusPerDomain, uint32_t exactGroupLimit = 64);

    /**
     * \brief The traffic of one iteration.
     * \param iteration the iteration \param exactGroupLimit see the constructor
     * \return the matrix
     */
    static IterationTrafficMatrix FromIteration(const TrainingIteration& iteration,
                                                uint32_t exactGroupLimit = 64);

    /**
     * \brief The traffic of one execution of a call's collective, local indices.
     * \param call the call (count ignored)
     * \param exact from the generated schedule (true) or the closed form (false)
     * \return (src, dst, bytes) per local pair, sorted, bytes > 0
     */
    static std::vector<PairBytes> LocalTraffic(const CollectiveCall& call, bool exact);

    /// Add \p bytes from \p src to \p dst in dimension \p dim.
    void Add(uint32_t src, uint32_t dst, ParallelDim dim, uint64_t bytes);

    /// Add \p call.count executions of \p call.
    void AddCall(const CollectiveCall& call);

    /// \return N
    uint32_t Gpus() const
    {
        return m_gpus;
    }

    /// \return K
    uint32_t GpusPerDomain() const
    {
        return m_k;
    }

    /// \return number of ordered pairs with traffic
    size_t NonZeroPairs() const
    {
        return m_map.size();
    }

    /// \param src sender \param dst receiver \return bytes over all dimensions
    uint64_t Bytes(uint32_t src, uint32_t dst) const;

    /// \param src sender \param dst receiver \param dim dimension \return bytes
    uint64_t Bytes(uint32_t src, uint32_t dst, ParallelDim dim) const;

    /// \return all non-zero pairs, sorted by (src, dst)
    std::vector<TrafficEntry> Entries() const;

    /// \return sparsity statistics
    TrafficStats Stats() const;

    /// \param dim dimension \return all bytes of that dimension
    uint64_t TotalBytes(ParallelDim dim) const;

    /// \return all bytes
    uint64_t TotalBytes() const;

  private:
    /// Local traffic of a call, from the cache or computed.
    const std::vector<PairBytes>& CachedLocalTraffic(const CollectiveCall& call);

    uint32_t m_gpus;                                                         //!< N
    uint32_t m_k;                                                            //!< K
    uint32_t m_exactGroupLimit;                                              //!< see constructor
    std::unordered_map<uint64_t, std::array<uint64_t, kParallelDims>> m_map; //!< (src<<32|dst)
    /// local traffic per (algorithm, type, ranks, domain size, bytes, pair list)
    std::map<std::tuple<std::string, int, uint32_t, uint32_t, uint64_t, std::vector<uint64_t>>,
             std::vector<PairBytes>>
        m_cache;
};

} // namespace ns3

#endif // GPU_FABRIC_TRAFFIC_MATRIX_H
