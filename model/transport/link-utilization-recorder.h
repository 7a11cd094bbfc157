/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_LINK_UTILIZATION_RECORDER_H
#define GPU_FABRIC_LINK_UTILIZATION_RECORDER_H

#include "run-observer.h"

#include "ns3/fabric-topology.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace ns3
{

class Fabric;
class FlowTransport;

/**
 * \ingroup gpu-fabric
 * \brief Records how busy every link of a run is over time, at packet or
 * flow level, for time series and heatmaps.
 *
 * At packet level it listens to each FabricNetDevice's PhyTxBegin and
 * PhyTxEnd: a link is busy while a frame is serialized, and carries that
 * frame's bytes. At flow level it listens to FlowTransport's LinkRate: a
 * link carries its flows' rates, piecewise constant. Either way a link's
 * record is a list of busy intervals with their bytes (back-to-back frames
 * merge into one), so the bytes in any time bin are exact: the series of a
 * link adds up to the bytes it carried. Links are named "vA->vB" after the
 * topology's vertices on both backends; a GPU's aggregated NVLink at flow
 * level is "nvlink-out(gpuR)" / "nvlink-in(gpuR)". Each attached backend is
 * a run of its own (a sweep makes a fresh backend per size).
 *
 * \code
 *   auto util = CreateObject<LinkUtilizationRecorder>();
 *   util->Attach(fabric);           // or RunObserver::Add(util) before the runs
 *   Simulator::Run();
 *   nlohmann::json j = util->ToJson(); // per link and per link class
 * \endcode
 */
class LinkUtilizationRecorder : public RunObserver
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    LinkUtilizationRecorder();

    /// A Fabric or FlowTransport starts a run (others are ignored).
    /// \param object what was announced
    void Observe(Ptr<Object> object) override;

    /// Record the links of a packet-level fabric, as a new run.
    /// \param fabric the fabric
    void Attach(Ptr<Fabric> fabric);
    /// Record the links of a flow-level backend, as a new run.
    /// \param flow the backend
    void Attach(Ptr<FlowTransport> flow);

    /// One directed link of a run.
    struct Link
    {
        uint32_t run{0};  //!< the run (order of Attach)
        std::string name; //!< "vA->vB" or a flow-level NVLink aggregate
        TopoLinkKind kind{TopoLinkKind::SwitchToSwitch}; //!< its class
        double capacityBps{0};                           //!< bit/s
    };

    /// \return the runs recorded
    uint32_t GetNRuns() const;
    /// \return busy intervals left out once MaxIntervals were recorded (their
    ///         bytes are missing from the series)
    uint64_t GetDropped() const;
    /// \param run a run \return "packet" or "flow"
    std::string GetBackend(uint32_t run) const;
    /// \param run a run \return when its last recorded link went idle
    Time GetEnd(uint32_t run) const;
    /// \return every link of every run
    const std::vector<Link>& GetLinks() const;
    /// \param link an index into GetLinks() \return the bytes it carried
    double GetBytes(uint32_t link) const;
    /**
     * \param link an index into GetLinks()
     * \param bin width of a time bin \param bins number of bins from time 0
     * \return the bytes it carried in each bin
     */
    std::vector<double> GetBinBytes(uint32_t link, Time bin, uint32_t bins) const;

    /**
     * \param kind a link class
     * \return "nvlink", "nic-rail" (a GPU's NIC to its rail or leaf switch),
     *         "leaf-spine" (switch to switch), "direct" (GPU to GPU)
     */
    static std::string ClassName(TopoLinkKind kind);

    /**
     * The time series: per run that moved bytes, Bins bins from 0 to its end; per link that
     * carried bytes and per link class, utilization (bytes x 8 / (capacity x
     * bin)) in each bin, and its bytes.
     * \return {"bins", "dropped_intervals", "runs": [{"run", "backend", "end_s", "bin_s",
     *         "links": [{"link", "class", "capacity_bps", "bytes",
     *         "utilization"}], "classes": [{"class", "links", "bytes",
     *         "utilization"}]}]}
     */
    nlohmann::json ToJson() const;

    /**
     * In a distributed run (FabricDistributed enabled on more than one
     * process), each process records the links its own nodes send on. This
     * gathers every process's busy intervals on rank 0, which then describes
     * every link as a one-process run does; the other ranks keep none. Every
     * rank must call it, after its last run. Does nothing on one process.
     */
    void GatherToRoot();

    /// \return ToJson() as CSV: run,backend,link,class,bin_start_s,bin_end_s,utilization
    ///         (the link classes as links named "class:<name>")
    std::string ToCsv() const;

  private:
    /// A busy interval of a link and the bytes it carried.
    struct Busy
    {
        int64_t startNs;
        int64_t endNs;
        double bytes;
    };

    /// Add a link of the current run. \return its index
    uint32_t AddLink(std::string name, TopoLinkKind kind, double capacityBps);
    void TxBegin(uint32_t link);
    void TxEnd(uint32_t link, uint32_t bytes);
    void RateChanged(uint32_t base, uint32_t link, double bps);
    void AddBusy(uint32_t link, int64_t startNs, int64_t endNs, double bytes);

    uint32_t m_bins{100};                  //!< Bins
    uint32_t m_maxIntervals{10000000};     //!< MaxIntervals
    uint64_t m_intervals{0};               //!< busy intervals kept
    uint64_t m_dropped{0};                 //!< busy intervals past MaxIntervals
    std::vector<std::string> m_backends;   //!< per run
    std::vector<Link> m_links;             //!< all runs
    std::vector<std::vector<Busy>> m_busy; //!< per link
    std::vector<int64_t> m_open;           //!< per link: start of the frame or rate now
    std::vector<double> m_rate;            //!< per link: flow-level rate now, bytes/s
};

} // namespace ns3

#endif // GPU_FABRIC_LINK_UTILIZATION_RECORDER_H
