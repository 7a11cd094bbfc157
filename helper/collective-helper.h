/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_COLLECTIVE_HELPER_H
#define GPU_FABRIC_COLLECTIVE_HELPER_H

#include "fabric-helper.h"

#include "ns3/collective-algorithms.h"
#include "ns3/collective-application.h"

#include <string>
#include <type_traits>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Installs collectives on GPUs: builds the schedule from a
 * collective and an algorithm name (or takes one), puts one
 * CollectiveApplication on each GPU of the communicator, and returns the
 * CollectiveRun that collects the results.
 */
class CollectiveHelper
{
  public:
    /// \param fabric the fabric (its GPUs get the applications; its transport carries data)
    explicit CollectiveHelper(Ptr<Fabric> fabric);
    /// \param transport a transport without ns-3 nodes (ranks are started directly)
    explicit CollectiveHelper(Ptr<Transport> transport);

    /// \param transport any Transport subclass (e.g. FlowTransport); without
    /// this, a Ptr of a subclass would convert to both constructors' types
    template <typename T, typename = std::enable_if_t<std::is_base_of_v<Transport, T>>>
    explicit CollectiveHelper(Ptr<T> transport)
        : CollectiveHelper(Ptr<Transport>(transport))
    {
    }

    /// \param bytes pipelining chunk (0: one chunk per piece)
    void SetChunkBytes(uint64_t bytes);
    /// \param channels rings / tree pairs in parallel (>= 1)
    void SetChannels(uint32_t channels);
    /// \param k HB domain size for hierarchical and pxn (0: the fabric's)
    void SetDomainSize(uint32_t k);
    /// \param root root rank (communicator index) for broadcast and reduce
    void SetRoot(uint32_t root);

    /**
     * Install a collective by names.
     * \param ranks the communicator (global ranks, in communicator order)
     * \param collective allreduce|allgather|reducescatter|alltoall|broadcast|reduce|sendrecv
     * \param algorithm ring|tree|halving-doubling|hierarchical|direct|pxn
     * \param bytes nccl-tests size
     * \param start start time
     * \return the run
     */
    Ptr<CollectiveRun> Install(const std::vector<uint32_t>& ranks,
                               const std::string& collective,
                               const std::string& algorithm,
                               uint64_t bytes,
                               Time start) const;

    /**
     * The request Install(ranks, ...) builds its schedule from (this
     * helper's chunk, channels, root and domain size), for estimating a
     * collective's work before installing it.
     * \param ranks the communicator \param collective name
     * \param algorithm name \param bytes nccl-tests size
     * \return the request for MakeSchedule
     */
    ScheduleRequest GetRequest(const std::vector<uint32_t>& ranks,
                               const std::string& collective,
                               const std::string& algorithm,
                               uint64_t bytes) const;

    /**
     * Install a schedule (its communicator names the global ranks).
     * \param schedule the schedule \param start start time \return the run
     */
    Ptr<CollectiveRun> Install(CollectiveSchedule schedule, Time start) const;

    /// \return ranks 0 .. n-1
    static std::vector<uint32_t> AllRanks(uint32_t n);

  private:
    Ptr<Fabric> m_fabric;
    Ptr<Transport> m_transport;
    uint64_t m_chunkBytes{0};
    uint32_t m_channels{1};
    uint32_t m_domainSize{0};
    uint32_t m_root{0};
};

} // namespace ns3

#endif // GPU_FABRIC_COLLECTIVE_HELPER_H
