/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-helper.h"

#include "../model/fabric/fabric-internal.h"

#include "ns3/data-rate.h"
#include "ns3/fabric-distributed.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-routing.h"
#include "ns3/log.h"
#include "ns3/mac48-address.h"
#include "ns3/names.h"
#include "ns3/run-observer.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FabricHelper");

namespace
{

/// A role as a name may hold it: no '/' (Names and Config paths split at it).
std::string
NameOfRole(const std::string& role)
{
    std::string name = role.empty() ? "switch" : role;
    std::replace(name.begin(), name.end(), '/', '-');
    return name;
}

/// The first of \p names, after \p prefix, taken in ns3::Names ("" if none).
std::string
TakenName(const std::string& prefix, const std::vector<std::string>& names)
{
    for (const std::string& name : names)
    {
        if (Names::Find<Object>(prefix + name))
        {
            return prefix + name;
        }
    }
    return "";
}

bool g_namesClearScheduled = false; //!< Names::Clear is due at Simulator::Destroy

/// Release every name (ns-3 cannot remove one), at Simulator::Destroy.
void
ClearNames()
{
    Names::Clear();
    g_namesClearScheduled = false;
}

/// Attributes FabricHelper sets on every object from the topology.
struct TopologySet
{
    const char* type;      //!< TypeId name
    const char* attribute; //!< attribute
    const char* setter;    //!< FabricHelper's setter that refuses it
    const char* instead;   //!< what sets it
};

const TopologySet kTopologySets[] = {
    {"ns3::FabricNetDevice",
     "DataRate",
     "SetDeviceAttribute",
     "every cable's rate (ClusterParams, the preset's NVLink and NIC rates)"},
    {"ns3::FabricChannel", "Delay", "", "every cable's latency (ClusterParams, the preset)"},
    {"ns3::FabricGpu", "Rank", "SetGpuAttribute", "every GPU's rank"},
    {"ns3::FabricSwitch", "Role", "SetSwitchAttribute", "every switch's role"},
};

/// Throw if \p name is an attribute of kTopologySets for \p setter.
void
RequireNotTopologySet(const std::string& setter, const std::string& name, const AttributeValue& v)
{
    for (const TopologySet& t : kTopologySets)
    {
        if (setter == t.setter && name == t.attribute)
        {
            TypeId::AttributeInformation info;
            TypeId::LookupByName(t.type).LookupAttributeByName(name, &info);
            throw FabricConfigError(fmt::format("FabricHelper::{}(\"{}\")", setter, name),
                                    v.SerializeToString(info.checker),
                                    fmt::format("another attribute: FabricHelper sets {} from the "
                                                "topology (FabricLinkHelper takes it)",
                                                t.instead));
        }
    }
}

} // namespace

std::vector<std::string>
FabricVertexNames(const FabricTopology& topo)
{
    std::vector<std::string> names(topo.GetNVertices());
    std::map<std::string, uint32_t> perRole;
    for (uint32_t v = 0; v < names.size(); ++v)
    {
        const TopoNode& n = topo.Node(v);
        if (n.kind == TopoNodeKind::Gpu)
        {
            names[v] = fmt::format("gpu-{}", n.rank);
        }
        else if (n.kind == TopoNodeKind::NvSwitch && n.domain >= 0)
        {
            names[v] = fmt::format("nvswitch-{}-{}", n.domain, n.local);
        }
        else
        {
            const std::string role =
                n.kind == TopoNodeKind::NvSwitch ? "nvswitch" : NameOfRole(n.role);
            names[v] = fmt::format("{}-{}", role, perRole[role]++);
        }
    }
    // GPUs keep their names first, then NVSwitches, then switches
    std::set<std::string> seen;
    for (const TopoNodeKind kind :
         {TopoNodeKind::Gpu, TopoNodeKind::NvSwitch, TopoNodeKind::Switch})
    {
        for (uint32_t v = 0; v < names.size(); ++v)
        {
            if (topo.Node(v).kind == kind && !seen.insert(names[v]).second)
            {
                names[v] += fmt::format("-v{}", v);
                NS_ABORT_MSG_UNLESS(seen.insert(names[v]).second,
                                    "two vertices named " << names[v]);
            }
        }
    }
    return names;
}

/// First random stream of a partitioned fabric's ports (FabricHelper::SetPartition),
/// above the small indices scenarios give AssignStreams, below ns-3's automatic ones.
constexpr int64_t kPartitionStreamBase = int64_t{1} << 40;

bool
AttributeDefaultChanged(TypeId tid, const std::string& name, std::string* value)
{
    TypeId::AttributeInformation info;
    if (!tid.LookupAttributeByName(name, &info))
    {
        return false;
    }
    const std::string now = info.initialValue->SerializeToString(info.checker);
    if (now == info.originalInitialValue->SerializeToString(info.checker))
    {
        return false;
    }
    if (value != nullptr)
    {
        *value = now;
    }
    return true;
}

void
FabricHelper::RequireTopologyAttributesUnset()
{
    for (const TopologySet& t : kTopologySets)
    {
        std::string value;
        if (AttributeDefaultChanged(TypeId::LookupByName(t.type), t.attribute, &value))
        {
            throw FabricConfigError(
                fmt::format("{}::{}", t.type, t.attribute),
                value,
                fmt::format("its default with FabricHelper, which sets {} from the topology "
                            "(FabricLinkHelper takes it)",
                            t.instead));
        }
    }
}

FabricHelper::FabricHelper()
{
    m_switchFactory.SetTypeId("ns3::FabricSwitch");
    m_nvswitchFactory.SetTypeId("ns3::FabricSwitch");
    m_nvswitchFactory.Set("Role", StringValue("nvswitch"));
    m_gpuFactory.SetTypeId("ns3::FabricGpu");
    m_deviceFactory.SetTypeId("ns3::FabricNetDevice");
}

void
FabricHelper::SetSwitchAttribute(const std::string& name, const AttributeValue& value)
{
    RequireNotTopologySet("SetSwitchAttribute", name, value);
    m_switchFactory.Set(name, value);
}

void
FabricHelper::SetNvSwitchAttribute(const std::string& name, const AttributeValue& value)
{
    RequireNotTopologySet("SetSwitchAttribute", name, value);
    m_nvswitchFactory.Set(name, value);
}

void
FabricHelper::SetGpuAttribute(const std::string& name, const AttributeValue& value)
{
    RequireNotTopologySet("SetGpuAttribute", name, value);
    m_gpuFactory.Set(name, value);
}

void
FabricHelper::SetDeviceAttribute(const std::string& name, const AttributeValue& value)
{
    RequireNotTopologySet("SetDeviceAttribute", name, value);
    m_deviceFactory.Set(name, value);
}

uint32_t
FabricHelper::GetDeviceFrameMtu() const
{
    return m_deviceFactory.Create<FabricNetDevice>()->GetFrameMtu();
}

void
FabricHelper::SetNamePrefix(const std::string& prefix)
{
    FabricRequire(prefix.find('/') == std::string::npos,
                  "name prefix",
                  prefix,
                  "a prefix without '/' (Names and Config paths split at it)");
    m_namePrefix = prefix;
    m_names = true;
}

void
FabricHelper::SetPartition(const FabricPartition& partition)
{
    m_rankOf = partition.rankOf;
}

void
FabricHelper::DisableNames()
{
    m_names = false;
}

std::string
FabricHelper::ChooseNamePrefix(const std::vector<std::string>& names) const
{
    if (m_namePrefix)
    {
        const std::string taken = TakenName(*m_namePrefix, names);
        FabricRequire(taken.empty(),
                      "name prefix",
                      *m_namePrefix,
                      fmt::format("a prefix whose names are free in ns3::Names ('{}' is taken: "
                                  "each fabric of a simulation needs its own prefix; "
                                  "Simulator::Destroy releases the names)",
                                  taken));
        return *m_namePrefix;
    }
    // one candidate per fabric named in this simulation, each checked up to
    // its first taken name
    std::string prefix;
    for (uint32_t i = 1; !TakenName(prefix, names).empty(); ++i)
    {
        prefix = fmt::format("fabric{}-", i);
    }
    return prefix;
}

Ptr<Fabric>
FabricHelper::Install(const FabricTopology& topology) const
{
    // a device's own checks first (Mtu=0, DataRate=0bps name their rule)
    GetDeviceFrameMtu();
    RequireTopologyAttributesUnset();
    // before any node: the tables are the largest part of a fabric
    RequireRoutingTablesFit(topology);
    // and the names, so that a taken prefix leaves no half-built fabric
    std::vector<std::string> names;
    std::string prefix;
    if (m_names)
    {
        names = FabricVertexNames(topology);
        names.emplace_back("fabric");
        names.emplace_back("transport");
        prefix = ChooseNamePrefix(names);
    }
    FabricRequire(
        m_rankOf.empty() || m_rankOf.size() == topology.GetNVertices(),
        "partition (vertices)",
        m_rankOf.size(),
        fmt::format("one rank per vertex of the topology installed ({})", topology.GetNVertices()));
    auto fabric = CreateObject<Fabric>();
    fabric->m_topology = topology;
    const FabricTopology& topo = fabric->m_topology;
    const uint32_t nv = topo.GetNVertices();
    fabric->m_nodes.resize(nv);
    fabric->m_gpus.resize(topo.GetNGpus());

    struct SystemIdReset // the next nodes made elsewhere are rank 0's again
    {
        ~SystemIdReset()
        {
            FabricNextSystemId() = 0;
        }
    } systemIdReset;

    for (uint32_t v = 0; v < nv; ++v)
    {
        const TopoNode& tn = topo.Node(v);
        // a Node's system id is fixed when it is made
        FabricNextSystemId() = m_rankOf.empty() ? 0 : m_rankOf[v];
        Ptr<FabricNode> node;
        if (tn.kind == TopoNodeKind::Gpu)
        {
            Ptr<FabricGpu> gpu = m_gpuFactory.Create<FabricGpu>();
            gpu->SetRank(tn.rank);
            fabric->m_gpus[tn.rank] = gpu;
            node = gpu;
        }
        else
        {
            const ObjectFactory& f =
                tn.kind == TopoNodeKind::NvSwitch ? m_nvswitchFactory : m_switchFactory;
            Ptr<FabricSwitch> sw = f.Create<FabricSwitch>();
            if (tn.kind == TopoNodeKind::Switch)
            {
                sw->SetAttribute("Role", StringValue(tn.role));
            }
            node = sw;
        }
        node->SetEcmpSalt(VertexSalt(v));
        if (!m_rankOf.empty())
        {
            // the results of one process on any number of ranks
            node->SetCanonicalTies(true);
        }
        fabric->m_nodes[v] = node;
    }
    // In a distributed run a process builds only what it simulates: its
    // nodes' cables, and every GPU's (the transport reads a GPU's ports, on
    // any rank). A node of another rank gets stand-ins for the ends of those
    // cables (FabricNode::AddStandIn); a switch of another rank has no ports.
    const bool partial = !m_rankOf.empty() && FabricDistributed::GetSize() > 1;
    const uint32_t me = FabricDistributed::GetSystemId();
    const auto local = [&](uint32_t v) { return !partial || m_rankOf[v] == me; };
    const auto complete = [&](uint32_t v) {
        return local(v) || topo.Node(v).kind == TopoNodeKind::Gpu;
    };
    // Ports are added in the order the topology numbered them, so that the
    // routing tables' port indices are the nodes' port indices.
    const auto& cables = topo.Cables();
    std::vector<std::vector<std::pair<uint32_t, Ptr<FabricNetDevice>>>> ports(nv);
    fabric->m_devs.resize(2 * cables.size());
    const uint32_t frameMtu = GetDeviceFrameMtu();
    std::vector<uint64_t> replicaNeed(partial ? nv : 0, 0);
    for (uint32_t c = 0; c < cables.size(); ++c)
    {
        const TopoCable& cable = cables[c];
        for (const uint32_t v : {cable.a, cable.b})
        {
            if (!complete(v))
            {
                // its ports are not built here: its lossless check is (below)
                const auto sw = DynamicCast<FabricSwitch>(fabric->m_nodes[v]);
                replicaNeed[v] +=
                    sw->GetLosslessPortBytes(cable.rateBps, NanoSeconds(cable.delayNs), frameMtu);
            }
        }
        if (!complete(cable.a) && !complete(cable.b))
        {
            // the MAC addresses of the devices built next stay those of one process
            Mac48Address::Allocate();
            Mac48Address::Allocate();
            continue;
        }
        auto channel = CreateObject<FabricChannel>();
        channel->SetAttribute("Delay", TimeValue(NanoSeconds(cable.delayNs)));
        for (int end = 0; end < 2; ++end)
        {
            Ptr<FabricNetDevice> dev = m_deviceFactory.Create<FabricNetDevice>();
            dev->SetDataRate(DataRate(cable.rateBps));
            dev->SetNvLink(cable.kind == TopoLinkKind::NvLink);
            dev->Attach(channel);
            if (!m_rankOf.empty())
            {
                // RED draws that do not depend on which port marks first
                dev->AssignStreams(kPartitionStreamBase + 2 * c + end);
            }
            const uint32_t v = end == 0 ? cable.a : cable.b;
            const uint32_t port = end == 0 ? cable.aPort : cable.bPort;
            ports[v].emplace_back(port, dev);
            fabric->m_devs[2 * c + end] = dev;
        }
    }
    for (uint32_t v = 0; v < nv; ++v)
    {
        std::sort(ports[v].begin(), ports[v].end(), [](const auto& x, const auto& y) {
            return x.first < y.first;
        });
        for (const auto& [index, dev] : ports[v])
        {
            if (!complete(v))
            {
                fabric->m_nodes[v]->AddStandIn(dev, index);
                continue;
            }
            const uint32_t got = fabric->m_nodes[v]->AddPort(dev);
            NS_ASSERT(got == index && dev->GetIfIndex() == index);
        }
    }
    for (uint32_t v = 0; v < nv; ++v)
    {
        // before the run: a refusal from inside it would leave its events behind
        if (const auto sw = DynamicCast<FabricSwitch>(fabric->m_nodes[v]))
        {
            if (complete(v))
            {
                sw->RequireLosslessBufferFits();
                continue;
            }
            // its ports are not here: from the topology, so that every rank refuses alike
            sw->RequireLosslessBufferFits(replicaNeed[v], topo.Node(v).ports);
        }
    }
    std::vector<char> keep; // (empty: every vertex's table)
    if (partial)
    {
        // only this process's nodes forward here (a FaultInjector builds
        // them all: see Fabric::BuildAllRoutingTables)
        keep.assign(nv, 0);
        for (uint32_t v = 0; v < nv; ++v)
        {
            keep[v] = local(v) ? 1 : 0;
        }
        fabric->m_someTables = true;
    }
    fabric->InstallTables(ComputeRoutingTables(topo, FaultState(), keep));
    fabric->m_sourceRoutes = std::make_shared<FabricSourceRoutes>();
    for (uint32_t v = 0; v < nv; ++v)
    {
        fabric->m_nodes[v]->SetSourceRoutes(fabric->m_sourceRoutes);
    }
    fabric->m_transport = CreateObject<PacketTransport>();
    fabric->m_transport->Install(fabric->m_gpus);
    if (partial)
    {
        const uint32_t ranks = *std::max_element(m_rankOf.begin(), m_rankOf.end()) + 1;
        FabricRequire(
            ranks <= FabricDistributed::GetSize(),
            "partition (ranks)",
            ranks,
            fmt::format("at most the {} MPI ranks running", FabricDistributed::GetSize()));
        // the lookahead, and a word's delay from this rank to each other:
        // the least delay of a cable between the two (the null-message
        // protocol promises no less); with the granted time window any rank
        // may be reached in one lookahead
        Time lookahead = Time::Max();
        std::vector<Time> toRank(FabricDistributed::GetSize(), Time::Max());
        for (const TopoCable& c : cables)
        {
            const uint32_t ra = m_rankOf[c.a];
            const uint32_t rb = m_rankOf[c.b];
            if (ra == rb)
            {
                continue;
            }
            const Time d = NanoSeconds(c.delayNs);
            lookahead = std::min(lookahead, d);
            if (ra == me || rb == me)
            {
                Time& w = toRank[ra == me ? rb : ra];
                w = std::min(w, d);
            }
        }
        if (lookahead != Time::Max())
        {
            for (uint32_t r = 0; r < toRank.size(); ++r)
            {
                if (toRank[r] == Time::Max())
                {
                    toRank[r] =
                        r == me || FabricDistributed::UsesNullMessages() ? Time(0) : lookahead;
                }
            }
            fabric->m_transport->SetDistributed(lookahead, toRank);
            if (!FabricDistributed::UsesNullMessages())
            {
                // frames for a rank wait to travel together up to it (the
                // null-message protocol's promises are per neighbour: they
                // leave at the end of their instant)
                FabricSetBatchLookahead(lookahead);
            }
        }
    }
    fabric->m_transport->SetSourceRoutes(fabric->m_sourceRoutes);
    if (partial)
    {
        std::vector<const FabricNode*> all;
        for (const auto& node : fabric->m_nodes)
        {
            all.push_back(PeekPointer(node));
        }
        fabric->m_transport->SetFabricNodes(std::move(all));
    }
    // every loss in the fabric is reported to the transport, which resends
    const auto lost = MakeCallback(&PacketTransport::PacketLost, fabric->m_transport);
    for (const auto& dev : fabric->m_devs)
    {
        if (dev)
        {
            dev->SetLossCallback(lost);
        }
    }
    for (const auto& node : fabric->m_nodes)
    {
        node->SetLossCallback(lost);
    }
    if (m_names)
    {
        NS_LOG_INFO("naming the fabric's objects with prefix \"" << prefix << "\"");
        fabric->m_namePrefix = prefix;
        for (uint32_t v = 0; v < nv; ++v)
        {
            Names::Add(prefix + names[v], fabric->m_nodes[v]);
        }
        Names::Add(prefix + names[nv], fabric);
        Names::Add(prefix + names[nv + 1], fabric->m_transport);
        if (!g_namesClearScheduled)
        {
            g_namesClearScheduled = true;
            Simulator::ScheduleDestroy(&ClearNames);
        }
    }
    RunObserver::Announce(fabric);
    return fabric;
}

} // namespace ns3
