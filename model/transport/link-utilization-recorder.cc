/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "link-utilization-recorder.h"

#include "fabric.h"
#include "flow-transport.h"

#include "ns3/fabric-distributed.h"
#include "ns3/fabric-error.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("LinkUtilizationRecorder");
NS_OBJECT_ENSURE_REGISTERED(LinkUtilizationRecorder);

TypeId
LinkUtilizationRecorder::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::LinkUtilizationRecorder")
            .SetParent<RunObserver>()
            .SetGroupName("GpuFabric")
            .AddConstructor<LinkUtilizationRecorder>()
            .AddAttribute("Bins",
                          "Time bins of a run's series in ToJson and ToCsv (from 0 to the "
                          "run's end).",
                          UintegerValue(100),
                          MakeUintegerAccessor(&LinkUtilizationRecorder::m_bins),
                          MakeUintegerChecker<uint32_t>(1, 100000))
            .AddAttribute("MaxIntervals",
                          "Busy intervals kept at most, over all links (24 bytes each; "
                          "back-to-back frames are one); later ones are counted as dropped.",
                          UintegerValue(10000000),
                          MakeUintegerAccessor(&LinkUtilizationRecorder::m_maxIntervals),
                          MakeUintegerChecker<uint32_t>(1));
    return tid;
}

LinkUtilizationRecorder::LinkUtilizationRecorder() = default;

void
LinkUtilizationRecorder::Observe(Ptr<Object> object)
{
    if (auto fabric = DynamicCast<Fabric>(object))
    {
        Attach(fabric);
    }
    else if (auto flow = DynamicCast<FlowTransport>(object))
    {
        Attach(flow);
    }
}

std::string
LinkUtilizationRecorder::ClassName(TopoLinkKind kind)
{
    switch (kind)
    {
    case TopoLinkKind::NvLink:
        return "nvlink";
    case TopoLinkKind::Nic:
        return "nic-rail";
    case TopoLinkKind::SwitchToSwitch:
        return "leaf-spine";
    default:
        return "direct";
    }
}

uint32_t
LinkUtilizationRecorder::AddLink(std::string name, TopoLinkKind kind, double capacityBps)
{
    const auto run = static_cast<uint32_t>(m_backends.size() - 1);
    m_links.push_back(Link{run, std::move(name), kind, capacityBps});
    m_busy.emplace_back();
    m_open.push_back(0);
    m_rate.push_back(0);
    return static_cast<uint32_t>(m_links.size() - 1);
}

void
LinkUtilizationRecorder::Attach(Ptr<Fabric> fabric)
{
    m_backends.emplace_back("packet");
    const FabricTopology& topo = fabric->GetTopology();
    const auto& cables = topo.Cables();
    for (uint32_t c = 0; c < cables.size(); ++c)
    {
        const TopoCable& cable = cables[c];
        const auto [a, b] = fabric->GetCableDevices(c);
        // the device at each end sends one direction
        for (const auto& [dev, from, to] :
             {std::tuple(a, cable.a, cable.b), std::tuple(b, cable.b, cable.a)})
        {
            if (!cable.bidirectional && from != cable.a)
            {
                continue;
            }
            // every rank lists every link, built here or not (rank 0 gathers by index)
            const uint32_t link =
                AddLink(fmt::format("v{}->v{}", from, to),
                        cable.kind,
                        static_cast<double>(dev ? dev->GetDataRate().GetBitRate() : cable.rateBps));
            if (!dev)
            {
                continue;
            }
            dev->TraceConnectWithoutContext(
                "PhyTxBegin",
                Callback<void, Ptr<const Packet>>(
                    [this, link](Ptr<const Packet>) { TxBegin(link); }));
            dev->TraceConnectWithoutContext(
                "PhyTxEnd",
                Callback<void, Ptr<const Packet>>(
                    [this, link](Ptr<const Packet> p) { TxEnd(link, p->GetSize()); }));
        }
    }
}

void
LinkUtilizationRecorder::Attach(Ptr<FlowTransport> flow)
{
    m_backends.emplace_back("flow");
    const auto base = static_cast<uint32_t>(m_links.size());
    for (uint32_t l = 0; l < flow->GetNLinks(); ++l)
    {
        AddLink(flow->GetLinkName(l), flow->GetLinkKind(l), flow->GetLinkCapacityBps(l));
    }
    flow->TraceConnectWithoutContext(
        "LinkRate",
        Callback<void, uint32_t, double>(
            [this, base](uint32_t link, double bps) { RateChanged(base, link, bps); }));
}

void
LinkUtilizationRecorder::TxBegin(uint32_t link)
{
    m_open[link] = Simulator::Now().GetNanoSeconds();
}

void
LinkUtilizationRecorder::TxEnd(uint32_t link, uint32_t bytes)
{
    AddBusy(link, m_open[link], Simulator::Now().GetNanoSeconds(), bytes);
}

void
LinkUtilizationRecorder::RateChanged(uint32_t base, uint32_t link, double bps)
{
    const uint32_t l = base + link;
    const int64_t now = Simulator::Now().GetNanoSeconds();
    if (m_rate[l] > 0 && now > m_open[l])
    {
        AddBusy(l, m_open[l], now, m_rate[l] * static_cast<double>(now - m_open[l]) * 1e-9);
    }
    m_rate[l] = bps / 8;
    m_open[l] = now;
}

void
LinkUtilizationRecorder::AddBusy(uint32_t link, int64_t startNs, int64_t endNs, double bytes)
{
    auto& busy = m_busy[link];
    // frames back to back on a link (one rate) are one busy interval; flow
    // level rates change only when they differ, so those never merge
    if (!busy.empty() && busy.back().endNs == startNs && m_rate[link] == 0)
    {
        busy.back().endNs = endNs;
        busy.back().bytes += bytes;
        return;
    }
    if (m_intervals >= m_maxIntervals)
    {
        ++m_dropped;
        return;
    }
    ++m_intervals;
    busy.push_back(Busy{startNs, endNs, bytes});
}

void
LinkUtilizationRecorder::GatherToRoot()
{
    if (FabricDistributed::GetSize() <= 1)
    {
        return;
    }
    nlohmann::json mine = {{"dropped", m_dropped}, {"busy", nlohmann::json::array()}};
    for (uint32_t l = 0; l < m_busy.size(); ++l)
    {
        for (const Busy& b : m_busy[l])
        {
            mine["busy"].push_back({l, b.startNs, b.endNs, b.bytes});
        }
    }
    const std::vector<std::string> parts = FabricDistributed::GatherToRoot(mine.dump());
    for (auto& busy : m_busy)
    {
        busy.clear();
    }
    m_intervals = 0;
    m_dropped = 0;
    if (parts.empty())
    {
        return; // not rank 0
    }
    for (const std::string& text : parts)
    {
        const nlohmann::json part = nlohmann::json::parse(text);
        m_dropped += part["dropped"].get<uint64_t>();
        for (const nlohmann::json& e : part["busy"])
        {
            const auto link = e[0].get<uint32_t>();
            FabricRequire(
                link < m_busy.size(),
                "gathered link",
                link,
                fmt::format("below {} (every rank records the same fabric)", m_busy.size()));
            m_busy[link].push_back(
                Busy{e[1].get<int64_t>(), e[2].get<int64_t>(), e[3].get<double>()});
            ++m_intervals;
        }
    }
    // a link sends from one node, so its intervals come from one process;
    // sorted all the same, as the series expect
    for (auto& busy : m_busy)
    {
        std::stable_sort(busy.begin(), busy.end(), [](const Busy& a, const Busy& b) {
            return a.startNs < b.startNs;
        });
    }
}

uint64_t
LinkUtilizationRecorder::GetDropped() const
{
    return m_dropped;
}

uint32_t
LinkUtilizationRecorder::GetNRuns() const
{
    return static_cast<uint32_t>(m_backends.size());
}

std::string
LinkUtilizationRecorder::GetBackend(uint32_t run) const
{
    return m_backends.at(run);
}

Time
LinkUtilizationRecorder::GetEnd(uint32_t run) const
{
    int64_t end = 0;
    for (uint32_t l = 0; l < m_links.size(); ++l)
    {
        if (m_links[l].run == run && !m_busy[l].empty())
        {
            end = std::max(end, m_busy[l].back().endNs);
        }
    }
    return NanoSeconds(end);
}

const std::vector<LinkUtilizationRecorder::Link>&
LinkUtilizationRecorder::GetLinks() const
{
    return m_links;
}

double
LinkUtilizationRecorder::GetBytes(uint32_t link) const
{
    double bytes = 0;
    for (const Busy& b : m_busy.at(link))
    {
        bytes += b.bytes;
    }
    return bytes;
}

std::vector<double>
LinkUtilizationRecorder::GetBinBytes(uint32_t link, Time bin, uint32_t bins) const
{
    std::vector<double> out(bins, 0.0);
    const int64_t w = std::max<int64_t>(1, bin.GetNanoSeconds());
    for (const Busy& b : m_busy.at(link))
    {
        if (b.endNs <= b.startNs)
        {
            // an instant (a zero-length frame time): all in its bin
            const auto i = static_cast<uint64_t>(b.startNs / w);
            out[std::min<uint64_t>(i, bins - 1)] += b.bytes;
            continue;
        }
        const double perNs = b.bytes / static_cast<double>(b.endNs - b.startNs);
        for (int64_t t = b.startNs; t < b.endNs;)
        {
            const int64_t i = t / w;
            const int64_t next = std::min(b.endNs, (i + 1) * w);
            // past the last bin (a bin width rounded down): into the last
            out[std::min<uint64_t>(static_cast<uint64_t>(i), bins - 1)] +=
                perNs * static_cast<double>(next - t);
            t = next;
        }
    }
    return out;
}

nlohmann::json
LinkUtilizationRecorder::ToJson() const
{
    nlohmann::json runs = nlohmann::json::array();
    for (uint32_t run = 0; run < GetNRuns(); ++run)
    {
        const int64_t end = GetEnd(run).GetNanoSeconds();
        if (end == 0)
        {
            continue; // nothing moved (a backend made only to estimate a run)
        }
        // bins of whole nanoseconds that cover the run
        const int64_t w = std::max<int64_t>(1, (end + m_bins - 1) / m_bins);
        const double binS = static_cast<double>(w) * 1e-9;
        nlohmann::json links = nlohmann::json::array();

        struct Class
        {
            uint32_t links{0};
            double capacityBps{0};
            double bytes{0};
            std::vector<double> binBytes;
        };

        std::map<std::string, Class> classes;
        for (uint32_t l = 0; l < m_links.size(); ++l)
        {
            const Link& link = m_links[l];
            if (link.run != run)
            {
                continue;
            }
            Class& c = classes[ClassName(link.kind)];
            ++c.links;
            c.capacityBps += link.capacityBps;
            c.binBytes.resize(m_bins, 0.0);
            if (m_busy[l].empty())
            {
                continue; // idle links count in their class only
            }
            const std::vector<double> bytes = GetBinBytes(l, NanoSeconds(w), m_bins);
            nlohmann::json util = nlohmann::json::array();
            for (uint32_t i = 0; i < m_bins; ++i)
            {
                util.push_back(bytes[i] * 8 / (link.capacityBps * binS));
                c.binBytes[i] += bytes[i];
            }
            const double total = GetBytes(l);
            c.bytes += total;
            links.push_back({{"link", link.name},
                             {"class", ClassName(link.kind)},
                             {"capacity_bps", link.capacityBps},
                             {"bytes", total},
                             {"utilization", util}});
        }
        nlohmann::json byClass = nlohmann::json::array();
        for (const auto& [name, c] : classes)
        {
            nlohmann::json util = nlohmann::json::array();
            for (double b : c.binBytes)
            {
                util.push_back(c.capacityBps > 0 ? b * 8 / (c.capacityBps * binS) : 0.0);
            }
            byClass.push_back({{"class", name},
                               {"links", c.links},
                               {"capacity_bps", c.capacityBps},
                               {"bytes", c.bytes},
                               {"utilization", util}});
        }
        runs.push_back({{"run", run},
                        {"backend", m_backends[run]},
                        {"end_s", static_cast<double>(end) * 1e-9},
                        {"bin_s", binS},
                        {"links", links},
                        {"classes", byClass}});
    }
    return {{"bins", m_bins}, {"dropped_intervals", m_dropped}, {"runs", runs}};
}

std::string
LinkUtilizationRecorder::ToCsv() const
{
    const nlohmann::json j = ToJson();
    std::string csv = "run,backend,link,class,bin_start_s,bin_end_s,utilization\n";
    for (const auto& run : j["runs"])
    {
        const double w = run["bin_s"].get<double>();
        const auto rows = [&](const nlohmann::json& list, bool isClass) {
            for (const auto& l : list)
            {
                const std::string name = isClass ? "class:" + l["class"].get<std::string>()
                                                 : l["link"].get<std::string>();
                const auto& u = l["utilization"];
                for (size_t i = 0; i < u.size(); ++i)
                {
                    csv += fmt::format("{},{},{},{},{:.9e},{:.9e},{:.6g}\n",
                                       run["run"].get<uint32_t>(),
                                       run["backend"].get<std::string>(),
                                       name,
                                       l["class"].get<std::string>(),
                                       static_cast<double>(i) * w,
                                       static_cast<double>(i + 1) * w,
                                       u[i].get<double>());
                }
            }
        };
        rows(run["links"], false);
        rows(run["classes"], true);
    }
    return csv;
}

} // namespace ns3
