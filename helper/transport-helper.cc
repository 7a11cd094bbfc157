/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "transport-helper.h"

#include "collective-helper.h"

#include "ns3/fabric-error.h"
#include "ns3/simulator.h"

namespace ns3
{

void
InstalledTransport::Dispose()
{
    if (fabric)
    {
        fabric->Dispose();
    }
    if (transport)
    {
        transport->Dispose();
    }
}

TransportHelper::TransportHelper(const std::string& backend, const std::string& parameter)
    : m_backend(backend),
      m_parameter(parameter)
{
}

std::vector<std::string>
TransportHelper::GetNames()
{
    return {"packet", "flow"};
}

void
TransportHelper::SetBackend(const std::string& backend, const std::string& parameter)
{
    m_backend = backend;
    m_parameter = parameter;
}

const std::string&
TransportHelper::GetBackend() const
{
    return m_backend;
}

FabricHelper&
TransportHelper::GetFabricHelper()
{
    return m_fabric;
}

FlowHelper&
TransportHelper::GetFlowHelper()
{
    return m_flow;
}

InstalledTransport
TransportHelper::Install(const FabricTopology& topology) const
{
    FabricRequire(m_backend == "packet" || m_backend == "flow",
                  m_parameter,
                  m_backend,
                  "packet or flow");
    InstalledTransport b;
    if (m_backend == "flow")
    {
        // framed as the packet level's devices would be: both backends cut
        // messages alike
        FabricHelper::RequireTopologyAttributesUnset();
        FlowHelper flow = m_flow;
        flow.SetFrameMtu(m_fabric.GetDeviceFrameMtu());
        b.flow = flow.Install(topology);
        b.transport = b.flow;
    }
    else
    {
        b.fabric = m_fabric.Install(topology);
        b.transport = b.fabric->GetTransport();
    }
    return b;
}

CollectiveResult
TransportHelper::RunCollectiveAlone(const FabricTopology& topology,
                                    uint64_t chunkBytes,
                                    uint32_t channels,
                                    const std::string& collective,
                                    const std::string& algorithm,
                                    uint64_t bytes) const
{
    InstalledTransport installed = Install(topology);
    CollectiveHelper helper = installed.fabric ? CollectiveHelper(installed.fabric)
                                               : CollectiveHelper(installed.transport);
    if (installed.flow)
    {
        helper.SetDomainSize(topology.gpusPerDomain);
    }
    helper.SetChunkBytes(chunkBytes);
    helper.SetChannels(channels);
    // held here: without ns-3 nodes (flow backend) no application holds it
    Ptr<CollectiveRun> run = helper.Install(CollectiveHelper::AllRanks(topology.GetNGpus()),
                                            collective,
                                            algorithm,
                                            bytes,
                                            Seconds(0));
    Simulator::Run();
    const CollectiveResult result = run->GetResult();
    run = nullptr;
    installed.Dispose();
    Simulator::Destroy();
    return result;
}

} // namespace ns3
