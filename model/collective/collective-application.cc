/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "collective-application.h"

#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveApplication");
NS_OBJECT_ENSURE_REGISTERED(CollectiveApplication);

TypeId
CollectiveApplication::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CollectiveApplication")
                            .SetParent<Application>()
                            .SetGroupName("GpuFabric")
                            .AddConstructor<CollectiveApplication>();
    return tid;
}

CollectiveApplication::CollectiveApplication() = default;

void
CollectiveApplication::Setup(Ptr<CollectiveRun> run, uint32_t local)
{
    m_run = run;
    m_local = local;
}

void
CollectiveApplication::DoDispose()
{
    m_run = nullptr;
    Application::DoDispose();
}

void
CollectiveApplication::StartApplication()
{
    NS_ABORT_MSG_IF(!m_run, "CollectiveApplication started without a collective");
    m_run->StartRank(m_local);
}

void
CollectiveApplication::StopApplication()
{
    // A collective cannot be cancelled half-way; stopping only stops starting.
}

} // namespace ns3
