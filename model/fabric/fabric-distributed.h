/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_DISTRIBUTED_H
#define GPU_FABRIC_FABRIC_DISTRIBUTED_H

#include "ns3/callback.h"
#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

class Node;

/**
 * \ingroup gpu-fabric
 * \brief Distributed runs on ns-3's MPI simulator, as the module sees them.
 *
 * In a build with MPI (GPU_FABRIC_MPI: scripts/build.sh --mpi), Enable()
 * starts MPI and selects ns-3's DistributedSimulatorImpl (granted time
 * window) or NullMessageSimulatorImpl; each process then builds the whole
 * fabric (FabricHelper::SetPartition gives every node its rank) and runs the
 * events of its own nodes. A fabric link whose ends are on different ranks
 * carries its frames, PFC frames included, through MpiInterface with the
 * link's delay as the lookahead.
 *
 * Without MPI (the default build) this is one rank: Enable() refuses a
 * request for more, IsLocal() is always true and the gathers return the
 * caller's own part.
 */
class FabricDistributed
{
  public:
    /**
     * Start MPI (once, before any simulation object) if the build has it.
     * \param argc the program's argc (MPI may take its own arguments)
     * \param argv the program's argv
     * \param nullMessages use the null-message protocol instead of the
     *        granted time window
     */
    static void Enable(int* argc, char*** argv, bool nullMessages = false);
    /// End MPI (after Simulator::Destroy); no-op when not enabled.
    static void Disable();
    /**
     * Simulator::Destroy(), for a program that runs several simulations one
     * after another (a sweep): on a distributed run it also sets ns-3's MPI
     * interface up again, which the engine's Destroy leaves unusable.
     */
    static void DestroySimulation();
    /// \return true if this build can run distributed (GPU_FABRIC_MPI)
    static bool IsAvailable();
    /// \return true if MPI was started
    static bool IsEnabled();
    /// \return true if it runs the null-message protocol (Enable's nullMessages)
    static bool UsesNullMessages();
    /**
     * Make the null-message engine end the run once every rank has run out
     * of events and no frame is in flight between ranks, as the sequential
     * and granted-time-window engines end by themselves (ns-3's
     * NullMessageSimulatorImpl never does: its null-message events recur).
     * Every rank calls it before Simulator::Run(), each simulation; every
     * \p period of simulated time the ranks compare notes (an MPI
     * all-reduce, which each waits for one period later), so the run ends
     * up to two periods after its last event, at the same instant on every
     * rank. It counts the events queued, so it needs
     * ns3::FabricLookaheadScheduler as the SchedulerType (refused
     * otherwise), and the run must not also be stopped by Simulator::Stop.
     * No-op unless the run is distributed on null messages.
     * \param period simulated time between the ranks' checks (positive)
     */
    static void StopWhenIdle(Time period = MicroSeconds(100));
    /// \return this process's rank (0 when not enabled)
    static uint32_t GetSystemId();
    /// \return the number of ranks (1 when not enabled)
    static uint32_t GetSize();
    /// \param node a node \return whether this rank simulates it
    static bool IsLocal(const Node& node);

    /**
     * Send a frame to a device of another rank, to arrive at \p rxTime
     * (at least the lookahead from now).
     * The frame travels with the others this rank sends to that rank at
     * this instant (and later ones, up to a lookahead before their arrival),
     * in one MPI message.
     * \param p the frame (copied now; the caller may change or reuse it)
     * \param rxTime arrival time \param node the receiving node's id
     * \param ifIndex the receiving device's interface index
     */
    static void SendPacket(Ptr<Packet> p, Time rxTime, uint32_t node, uint32_t ifIndex);

    /**
     * Frames sent to \p device by another rank are handed to \p cb.
     * \param device a device of this rank \param cb the receiver
     */
    static void AttachReceiver(Ptr<NetDevice> device, Callback<void, Ptr<Packet>> cb);

    /**
     * Collect one text per rank on rank 0 (a barrier for all ranks).
     * \param mine this rank's part
     * \return on rank 0 every rank's part, in rank order; elsewhere empty
     */
    static std::vector<std::string> GatherToRoot(const std::string& mine);

    /**
     * Sum a count over all ranks (every rank gets the sum).
     * \param mine this rank's count \return the sum
     */
    static uint64_t SumAll(uint64_t mine);

    /// \return frames this rank sent to others (SendPacket calls)
    static uint64_t GetFramesSent();
    /// \return frames this rank received from others
    static uint64_t GetFramesReceived();
    /// \return MPI messages this rank sent (frames go in batches: the ones
    ///         of one instant for one rank travel together)
    static uint64_t GetMessagesSent();
    /// \return MPI messages of frames this rank received from others
    static uint64_t GetMessagesReceived();
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_DISTRIBUTED_H
