/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "collective-helper.h"

#include "ns3/fabric-error.h"
#include "ns3/simulator.h"

#include <fmt/format.h>
#include <numeric>

namespace ns3
{

CollectiveHelper::CollectiveHelper(Ptr<Fabric> fabric)
    : m_fabric(fabric),
      m_transport(fabric->GetTransport())
{
}

CollectiveHelper::CollectiveHelper(Ptr<Transport> transport)
    : m_transport(transport)
{
}

void
CollectiveHelper::SetChunkBytes(uint64_t bytes)
{
    m_chunkBytes = bytes;
}

void
CollectiveHelper::SetChannels(uint32_t channels)
{
    FabricRequire(channels >= 1, "channels", channels, "an integer >= 1");
    m_channels = channels;
}

void
CollectiveHelper::SetDomainSize(uint32_t k)
{
    m_domainSize = k;
}

void
CollectiveHelper::SetRoot(uint32_t root)
{
    m_root = root;
}

std::vector<uint32_t>
CollectiveHelper::AllRanks(uint32_t n)
{
    std::vector<uint32_t> r(n);
    std::iota(r.begin(), r.end(), 0);
    return r;
}

ScheduleRequest
CollectiveHelper::GetRequest(const std::vector<uint32_t>& ranks,
                             const std::string& collective,
                             const std::string& algorithm,
                             uint64_t bytes) const
{
    ScheduleRequest req;
    req.collective = collective;
    req.algorithm = algorithm;
    req.ranks = ranks.size();
    req.bytes = bytes;
    req.chunkBytes = m_chunkBytes;
    req.channels = m_channels;
    req.root = m_root;
    req.domainSize = m_domainSize;
    if (req.domainSize == 0 && m_fabric)
    {
        req.domainSize = m_fabric->GetTopology().gpusPerDomain;
    }
    if (algorithm != "hierarchical" && algorithm != "pxn")
    {
        req.domainSize = 0;
    }
    req.communicator = ranks;
    return req;
}

Ptr<CollectiveRun>
CollectiveHelper::Install(const std::vector<uint32_t>& ranks,
                          const std::string& collective,
                          const std::string& algorithm,
                          uint64_t bytes,
                          Time start) const
{
    return Install(MakeSchedule(GetRequest(ranks, collective, algorithm, bytes)), start);
}

Ptr<CollectiveRun>
CollectiveHelper::Install(CollectiveSchedule schedule, Time start) const
{
    const Time now = Simulator::Now();
    FabricRequire(start >= now,
                  "start time",
                  start.As(Time::S),
                  fmt::format("a time not before now ({})", FabricValueText(now.As(Time::S))));
    // refused up front, by its size, if it cannot finish in reasonable time
    m_transport->ExpectWork(schedule.TotalOps() / 2,
                            schedule.TotalBytesSent(),
                            "collective",
                            fmt::format("{} ({}) of {} bytes on {} ranks",
                                        CollectiveTypeName(schedule.Type()),
                                        schedule.Algorithm(),
                                        schedule.TotalBytes(),
                                        schedule.NumRanks()));
    auto run = CreateObject<CollectiveRun>();
    run->Setup(std::move(schedule), m_transport);
    const auto& comm = run->GetSchedule().Communicator();
    for (uint32_t local = 0; local < comm.size(); ++local)
    {
        if (m_fabric)
        {
            auto app = CreateObject<CollectiveApplication>();
            app->Setup(run, local);
            m_fabric->GetGpu(comm[local])->AddApplication(app);
            // an application's start time counts from when it is added
            app->SetStartTime(start - now);
        }
        else
        {
            Simulator::Schedule(start - now, &CollectiveRun::StartRank, run, local);
        }
    }
    return run;
}

} // namespace ns3
