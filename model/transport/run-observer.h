/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_RUN_OBSERVER_H
#define GPU_FABRIC_RUN_OBSERVER_H

#include "ns3/object.h"
#include "ns3/ptr.h"

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Something that watches every run of a process: a recorder that a
 * program's --timeline or --link-util registers once, and that then hears of
 * every backend, collective and program as it is set up, however deep in a
 * helper it is made (a sweep makes a fresh backend per size).
 *
 * What is announced, once each, when it is ready to run:
 * - a Fabric (FabricHelper::Install) or a FlowTransport (FlowHelper::Install):
 *   a new backend, hence a new run;
 * - a CollectiveRun (CollectiveRun::Setup);
 * - a ProgramRunner (ProgramRunner::Setup).
 *
 * An observer connects to their trace sources; it must not change the model
 * (results are the same with or without one). With none registered (the
 * default) an announcement costs one test of an empty list.
 */
class RunObserver : public Object
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();

    /**
     * \param object a Fabric, FlowTransport, CollectiveRun or ProgramRunner
     *        that is set up and about to run (others may come: ignore them)
     */
    virtual void Observe(Ptr<Object> object) = 0;

    /// \param observer told of every announcement from now on (once, however often added)
    static void Add(Ptr<RunObserver> observer);
    /// \param observer no longer told
    static void Remove(Ptr<RunObserver> observer);
    /// \param object announced to every registered observer
    static void Announce(Ptr<Object> object);
};

} // namespace ns3

#endif // GPU_FABRIC_RUN_OBSERVER_H
