/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "collective-application.h"

#include "ns3/log.h"
#include "ns3/pointer.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveApplication");
NS_OBJECT_ENSURE_REGISTERED(CollectiveApplication);

TypeId
CollectiveApplication::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CollectiveApplication")
            .SetParent<Application>()
            .SetGroupName("GpuFabric")
            .AddConstructor<CollectiveApplication>()
            // read-only: a Config path reaches the run's trace sources
            // through it (.../$ns3::CollectiveApplication/Run/Complete)
            .AddAttribute("Run",
                          "The collective this application runs one rank of (set by "
                          "CollectiveHelper); its trace sources are reached through it.",
                          TypeId::ATTR_GET,
                          PointerValue(),
                          MakePointerAccessor(&CollectiveApplication::m_run),
                          MakePointerChecker<CollectiveRun>());
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
