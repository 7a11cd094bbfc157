/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fct-study.h"

#include "ns3/fabric-error.h"
#include "ns3/fabric-header.h"
#include "ns3/nstime.h"
#include "ns3/packet-transport.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

namespace ns3
{

namespace
{

/// What a distribution file must hold, for errors.
const char* const kCdfAllowed =
    "a flow-size CDF file: lines '<bytes> <cumulative percent>', sizes >= 0 strictly "
    "increasing, percents non-decreasing from 0 to 100, '#' comments";

} // namespace

FlowSizeCdf
FlowSizeCdf::FromPoints(const std::string& flag, std::vector<std::pair<double, double>> points)
{
    FabricRequire(points.size() >= 2, flag, points.size(), "at least 2 CDF points");
    for (size_t i = 0; i < points.size(); ++i)
    {
        const auto [bytes, pct] = points[i];
        FabricRequire(std::isfinite(bytes) && bytes >= 0,
                      flag,
                      bytes,
                      "a flow size in bytes, at least 0");
        FabricRequire(std::isfinite(pct) && pct >= 0 && pct <= 100,
                      flag,
                      pct,
                      "a cumulative percent from 0 to 100");
        if (i > 0)
        {
            FabricRequire(bytes > points[i - 1].first,
                          flag,
                          bytes,
                          fmt::format("a size above the previous point's {}", points[i - 1].first));
            FabricRequire(
                pct >= points[i - 1].second,
                flag,
                pct,
                fmt::format("a percent at least the previous point's {}", points[i - 1].second));
        }
    }
    FabricRequire(points.front().second == 0, flag, points.front().second, "0 at the first point");
    FabricRequire(points.back().second == 100, flag, points.back().second, "100 at the last point");
    FlowSizeCdf cdf;
    for (const auto& [bytes, pct] : points)
    {
        cdf.m_points.emplace_back(bytes, pct / 100.0);
    }
    return cdf;
}

FlowSizeCdf
FlowSizeCdf::Load(const std::string& flag, const std::string& path)
{
    std::ifstream in(path);
    FabricRequire(in.good(), flag, path, "a readable flow-size CDF file");
    std::vector<std::pair<double, double>> points;
    std::string line;
    uint32_t n = 0;
    while (std::getline(in, line))
    {
        ++n;
        const auto hash = line.find('#');
        if (hash != std::string::npos)
        {
            line.erase(hash);
        }
        std::istringstream s(line);
        std::string a;
        std::string b;
        std::string extra;
        if (!(s >> a))
        {
            continue; // blank or comment
        }
        const std::string where = fmt::format("{} (line {})", path, n);
        FabricRequire(static_cast<bool>(s >> b) && !(s >> extra), where, line, kCdfAllowed);
        char* end = nullptr;
        const double bytes = std::strtod(a.c_str(), &end);
        FabricRequire(end != a.c_str() && *end == '\0', where, line, kCdfAllowed);
        const double pct = std::strtod(b.c_str(), &end);
        FabricRequire(end != b.c_str() && *end == '\0', where, line, kCdfAllowed);
        points.emplace_back(bytes, pct);
    }
    return FromPoints(fmt::format("{} ({})", flag, path), std::move(points));
}

double
FlowSizeCdf::Mean() const
{
    double mean = 0;
    for (size_t i = 1; i < m_points.size(); ++i)
    {
        const auto [x0, p0] = m_points[i - 1];
        const auto [x1, p1] = m_points[i];
        mean += (x0 + x1) / 2 * (p1 - p0); // uniform within the segment
    }
    return mean;
}

double
FlowSizeCdf::Probability(double bytes) const
{
    if (bytes <= m_points.front().first)
    {
        return bytes < m_points.front().first ? 0.0 : m_points.front().second;
    }
    for (size_t i = 1; i < m_points.size(); ++i)
    {
        const auto [x0, p0] = m_points[i - 1];
        const auto [x1, p1] = m_points[i];
        if (bytes <= x1)
        {
            return p0 + (p1 - p0) * (bytes - x0) / (x1 - x0);
        }
    }
    return 1.0;
}

uint64_t
FlowSizeCdf::Sample(double u) const
{
    double x = m_points.back().first;
    for (size_t i = 1; i < m_points.size(); ++i)
    {
        const auto [x0, p0] = m_points[i - 1];
        const auto [x1, p1] = m_points[i];
        if (u < p1)
        {
            x = x0 + (x1 - x0) * (u - p0) / (p1 - p0);
            break;
        }
    }
    return std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(x)));
}

double
FlowSizeCdf::MaxBytes() const
{
    return m_points.back().first;
}

std::string
FindDataFile(const std::string& flag, const std::string& name, const std::string& dataDir)
{
    std::vector<std::string> dirs;
    if (!dataDir.empty())
    {
        dirs.push_back(dataDir);
    }
    else
    {
        if (const char* env = std::getenv("GPU_FABRIC_DATA_DIR"); env != nullptr && *env != '\0')
        {
            dirs.emplace_back(env);
        }
#ifdef GPU_FABRIC_DATA_SOURCE_DIR
        dirs.emplace_back(GPU_FABRIC_DATA_SOURCE_DIR);
#endif
#ifdef GPU_FABRIC_DATA_INSTALL_DIR
        dirs.emplace_back(GPU_FABRIC_DATA_INSTALL_DIR);
#endif
        // a program installed under another prefix: <prefix>/bin/../share/gpu-fabric
        std::error_code ec;
        const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
        if (!ec)
        {
            dirs.push_back((exe.parent_path().parent_path() / "share" / "gpu-fabric").string());
        }
    }
    std::string looked;
    for (const auto& dir : dirs)
    {
        const std::string path = (std::filesystem::path(dir) / name).string();
        std::error_code ec;
        if (std::filesystem::is_regular_file(path, ec))
        {
            return path;
        }
        looked += (looked.empty() ? "" : ", ") + path;
    }
    throw FabricConfigError(flag,
                            name,
                            fmt::format("a data file found in one of: {} (--data-dir or "
                                        "GPU_FABRIC_DATA_DIR name another directory)",
                                        looked.empty() ? std::string("(no directory)") : looked));
}

namespace
{

/// \return a size as a label: 10KB, 1MB, 30MB, 350B (decimal units)
std::string
SizeLabel(double bytes)
{
    if (bytes >= 1e6)
    {
        return fmt::format("{:g}MB", bytes / 1e6);
    }
    if (bytes >= 1e3)
    {
        return fmt::format("{:g}KB", bytes / 1e3);
    }
    return fmt::format("{:g}B", bytes);
}

} // namespace

std::vector<SizeBucket>
SizeBuckets(const FlowSizeCdf& cdf, double minMass)
{
    std::vector<double> bounds;
    for (double b = 10; b < cdf.MaxBytes(); b *= 10)
    {
        bounds.push_back(b);
    }
    bounds.push_back(cdf.MaxBytes());
    std::vector<SizeBucket> buckets;
    double lo = 0;
    for (double hi : bounds)
    {
        if (cdf.Probability(hi) - cdf.Probability(lo) < minMass && hi != bounds.back())
        {
            continue; // merged into the next
        }
        buckets.push_back({lo, hi, ""});
        lo = hi;
    }
    if (buckets.size() > 1 &&
        cdf.Probability(buckets.back().maxBytes) - cdf.Probability(buckets.back().minBytes) <
            minMass)
    {
        // the last is too small: merged into the one before it
        buckets[buckets.size() - 2].maxBytes = buckets.back().maxBytes;
        buckets.pop_back();
    }
    for (auto& b : buckets)
    {
        b.label = b.minBytes == 0 ? "<=" + SizeLabel(b.maxBytes)
                                  : SizeLabel(b.minBytes) + "-" + SizeLabel(b.maxBytes);
    }
    return buckets;
}

namespace
{

/// \return a uniform variate in [0, 1) from the generator's top 53 bits
double
Uniform(std::mt19937_64& rng)
{
    return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

} // namespace

std::vector<FlowSpec>
PoissonFlows(uint32_t hosts,
             double load,
             double rateBps,
             const FlowSizeCdf& cdf,
             double durationS,
             uint64_t seed)
{
    FabricRequire(hosts >= 2, "hosts", hosts, "at least 2");
    FabricRequire(load > 0 && load < 1, "load", load, "a fraction of the link rate in (0, 1)");
    const double meanGapS = cdf.Mean() * 8 / (load * rateBps);
    std::mt19937_64 rng(seed);
    std::vector<FlowSpec> flows;
    for (uint32_t h = 0; h < hosts; ++h)
    {
        double t = 0;
        while (true)
        {
            t += -std::log1p(-Uniform(rng)) * meanGapS; // exponential gap
            if (t >= durationS)
            {
                break;
            }
            // uniform among the hosts other than h
            auto dst = static_cast<uint32_t>(Uniform(rng) * (hosts - 1));
            dst += dst >= h ? 1 : 0;
            flows.push_back({h, dst, cdf.Sample(Uniform(rng)), t});
        }
    }
    std::stable_sort(flows.begin(), flows.end(), [](const FlowSpec& a, const FlowSpec& b) {
        return a.startS < b.startS;
    });
    return flows;
}

PacketFraming
TransportFraming(const PacketTransport& transport, uint32_t frameMtu)
{
    PacketFraming f;
    f.payload = transport.GetPayloadPerPacket();
    f.overhead = FabricHeader::kSerializedSize;
    if (f.payload + FabricHeader::kSerializedSize < frameMtu)
    {
        // room is kept for a full INT record: the flow carries telemetry
        FabricIntHeader empty;
        FabricIntHeader full;
        full.nHops = FabricIntHeader::kMaxHops;
        f.overhead += empty.GetSerializedSize();
        f.hopBytes = (full.GetSerializedSize() - empty.GetSerializedSize()) / full.nHops;
        f.maxHops = FabricIntHeader::kMaxHops;
    }
    return f;
}

IdealFct::IdealFct(const FabricTopology& topo)
    : m_topo(topo),
      m_parents(topo.GetNGpus())
{
}

std::vector<IdealFct::Hop>
IdealFct::Path(uint32_t src, uint32_t dst) const
{
    auto& parents = m_parents.at(src);
    const uint32_t s = m_topo.GpuVertex(src);
    if (parents.empty())
    {
        const auto& g = m_topo.GetGraph();
        parents.assign(m_topo.GetNVertices(), {-1, Hop{0, 0}});
        parents[s].first = s;
        std::deque<uint32_t> queue{s};
        // breadth first: the first path found to a vertex is a shortest one
        // (in a fat-tree all shortest paths have the same rates and delays)
        while (!queue.empty())
        {
            const uint32_t v = queue.front();
            queue.pop_front();
            if (v != s && m_topo.Node(v).kind == TopoNodeKind::Gpu)
            {
                continue; // hosts do not forward
            }
            for (auto [e, end] = boost::out_edges(v, g); e != end; ++e)
            {
                const uint32_t w = boost::target(*e, g);
                if (parents[w].first >= 0)
                {
                    continue;
                }
                const TopoLink& link = g[*e];
                parents[w] = {v, Hop{link.delayNs * 1e-9, static_cast<double>(link.rateBps)}};
                queue.push_back(w);
            }
        }
    }
    uint32_t v = m_topo.GpuVertex(dst);
    FabricRequire(parents[v].first >= 0 && v != s,
                  "destination",
                  dst,
                  "a host other than the source, reachable from it");
    std::vector<Hop> path;
    while (v != s)
    {
        path.push_back(parents[v].second);
        v = static_cast<uint32_t>(parents[v].first);
    }
    std::reverse(path.begin(), path.end());
    return path;
}

uint32_t
IdealFct::Hops(uint32_t src, uint32_t dst) const
{
    return Path(src, dst).size();
}

double
IdealFct::Seconds(uint32_t src, uint32_t dst, uint64_t bytes, const PacketFraming& f) const
{
    FabricRequire(f.payload > 0, "payload", f.payload, "a positive byte count");
    const std::vector<Hop> path = Path(src, dst);
    const uint64_t packets = std::max<uint64_t>(1, (bytes + f.payload - 1) / f.payload);
    // header bytes of a packet at hop i (0-based): the sender's, then one
    // record more at each switch egress (hop 0 leaves the host)
    auto header = [&f](size_t i) {
        return static_cast<double>(f.overhead) +
               static_cast<double>(f.hopBytes) * std::min<size_t>(i, f.maxHops);
    };
    // the bottleneck: the largest full-packet serialization, the last on ties
    size_t b = 0;
    for (size_t i = 0; i < path.size(); ++i)
    {
        if ((f.payload + header(i)) / path[i].rateBps >= (f.payload + header(b)) / path[b].rateBps)
        {
            b = i;
        }
    }
    // In whole simulator time steps, as the packet level serializes: a port
    // rounds each frame down and carries the remainder to its next one, so a
    // run of frames on one port takes floor(their bits / rate) steps.
    const auto stepsPerSecond = static_cast<unsigned __int128>(ns3::Seconds(1).GetTimeStep());
    auto serialization = [stepsPerSecond](double frameBytes, double rateBps) {
        const auto bits = static_cast<unsigned __int128>(std::llround(frameBytes * 8));
        return static_cast<int64_t>(bits * stepsPerSecond /
                                    static_cast<unsigned __int128>(std::llround(rateBps)));
    };
    // The largest serialization of one of the flow's frames on a hop of the
    // bottleneck's rate and frames: a port's k-th frame takes
    // floor(C_k) - floor(C_k-1) steps (C_k: its first k + 1 frames' bits /
    // rate), the floor of a full frame's time, or one step more once the
    // carried remainders wrap (after m full frames iff m x rem >= rate);
    // then the partial last frame with the carry left.
    auto largestSerialization = [&](size_t i) {
        const auto rate = static_cast<unsigned __int128>(std::llround(path[i].rateBps));
        const uint64_t full = bytes / f.payload;
        const uint64_t last = bytes % f.payload;
        const auto fullBits =
            static_cast<unsigned __int128>(std::llround((f.payload + header(i)) * 8));
        const auto lastBits = static_cast<unsigned __int128>(
            std::llround((static_cast<double>(last) + header(i)) * 8));
        const unsigned __int128 fullNum = fullBits * stepsPerSecond;
        const unsigned __int128 lastNum = lastBits * stepsPerSecond;
        int64_t largest = 0;
        unsigned __int128 carry = 0;
        if (full > 0)
        {
            const unsigned __int128 rem = fullNum % rate;
            largest = static_cast<int64_t>(fullNum / rate) + (full * rem >= rate ? 1 : 0);
            carry = (rem * full) % rate;
        }
        if (last > 0)
        {
            largest = std::max<int64_t>(largest,
                                        static_cast<int64_t>(lastNum / rate) +
                                            (carry + lastNum % rate >= rate ? 1 : 0));
        }
        return largest;
    };
    const double first = static_cast<double>(std::min<uint64_t>(bytes, f.payload));
    int64_t steps = 0;
    for (size_t i = 0; i < path.size(); ++i)
    {
        steps += ns3::Seconds(path[i].delayS).GetTimeStep();
        if (i == b)
        {
            continue;
        }
        // Tandem store-and-forward ports (max-plus): the flow's last frame
        // leaves the bottleneck after every frame there plus, for each other
        // hop, one frame's serialization on it. A hop with the bottleneck's
        // frames and rate serializes the same sequence, and the slowest
        // frame of it counts; a hop with smaller frames (before INT records
        // are added), the first frame's, as the first frame crosses it.
        const bool same = header(i) == header(b) && path[i].rateBps == path[b].rateBps;
        steps += same ? largestSerialization(i) : serialization(first + header(i), path[i].rateBps);
    }
    // every packet at the bottleneck, back to back
    steps += serialization(static_cast<double>(bytes) + static_cast<double>(packets) * header(b),
                           path[b].rateBps);
    return ns3::TimeStep(steps).GetSeconds();
}

double
NearestRankPercentile(std::vector<double> v, double q)
{
    if (v.empty())
    {
        return 0;
    }
    std::sort(v.begin(), v.end());
    // less a hair: 0.99 x 100 is 99.000000000000014 in binary
    const auto rank = static_cast<size_t>(std::ceil(q * v.size() - 1e-9));
    return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

} // namespace ns3
