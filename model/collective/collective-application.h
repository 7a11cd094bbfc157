/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_COLLECTIVE_APPLICATION_H
#define GPU_FABRIC_COLLECTIVE_APPLICATION_H

#include "collective-run.h"

#include "ns3/application.h"

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief The ns-3 Application of one GPU in one collective: starts that
 * rank's part of a CollectiveRun at the application's start time.
 *
 * Its attribute Run (read-only) makes the run's trace sources reachable by
 * Config path, e.g.
 * /Names/gpu-0/ApplicationList/0/$ns3::CollectiveApplication/Run/Complete.
 * Every GPU of the collective has an application of the same run, so a path
 * with a wildcard over GPUs connects once per GPU.
 */
class CollectiveApplication : public Application
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    CollectiveApplication();

    /**
     * \param run the collective
     * \param local this GPU's index in its communicator
     */
    void Setup(Ptr<CollectiveRun> run, uint32_t local);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;

    Ptr<CollectiveRun> m_run; //!< the collective
    uint32_t m_local{0};      //!< rank in the communicator
};

} // namespace ns3

#endif // GPU_FABRIC_COLLECTIVE_APPLICATION_H
