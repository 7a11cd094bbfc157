/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-distributed.h"

#include "ns3/fabric-error.h"
#include "ns3/global-value.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/string.h"

#ifdef GPU_FABRIC_MPI
#include "ns3/mpi-interface.h"
#include "ns3/mpi-receiver.h"

#include <mpi.h>
#endif

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FabricDistributed");

namespace
{
uint64_t g_framesSent = 0;
bool g_nullMessages = false;
uint64_t g_framesReceived = 0;
} // namespace

bool
FabricDistributed::IsAvailable()
{
#ifdef GPU_FABRIC_MPI
    return true;
#else
    return false;
#endif
}

void
FabricDistributed::Enable(int* argc, char*** argv, bool nullMessages)
{
#ifdef GPU_FABRIC_MPI
    if (MpiInterface::IsEnabled())
    {
        return;
    }
    g_nullMessages = nullMessages;
    GlobalValue::Bind("SimulatorImplementationType",
                      StringValue(nullMessages ? "ns3::NullMessageSimulatorImpl"
                                               : "ns3::DistributedSimulatorImpl"));
    MpiInterface::Enable(argc, argv);
#else
    (void)argc;
    (void)argv;
    (void)nullMessages;
#endif
}

void
FabricDistributed::Disable()
{
#ifdef GPU_FABRIC_MPI
    if (MpiInterface::IsEnabled())
    {
        MpiInterface::Disable();
    }
#endif
}

bool
FabricDistributed::IsEnabled()
{
#ifdef GPU_FABRIC_MPI
    return MpiInterface::IsEnabled();
#else
    return false;
#endif
}

bool
FabricDistributed::UsesNullMessages()
{
    return IsEnabled() && g_nullMessages;
}

uint32_t
FabricDistributed::GetSystemId()
{
#ifdef GPU_FABRIC_MPI
    return MpiInterface::IsEnabled() ? MpiInterface::GetSystemId() : 0;
#else
    return 0;
#endif
}

uint32_t
FabricDistributed::GetSize()
{
#ifdef GPU_FABRIC_MPI
    return MpiInterface::IsEnabled() ? MpiInterface::GetSize() : 1;
#else
    return 1;
#endif
}

bool
FabricDistributed::IsLocal(const Node& node)
{
    return node.GetSystemId() == GetSystemId();
}

void
FabricDistributed::SendPacket(Ptr<Packet> p, Time rxTime, uint32_t node, uint32_t ifIndex)
{
#ifdef GPU_FABRIC_MPI
    ++g_framesSent;
    MpiInterface::SendPacket(p, rxTime, node, ifIndex);
#else
    (void)p;
    (void)rxTime;
    (void)node;
    (void)ifIndex;
    NS_FATAL_ERROR("FabricDistributed::SendPacket: this build has no MPI (scripts/build.sh --mpi)");
#endif
}

#ifdef GPU_FABRIC_MPI
namespace
{
void
CountAndForward(Callback<void, Ptr<Packet>> cb, Ptr<Packet> p)
{
    ++g_framesReceived;
    cb(p);
}
} // namespace
#endif

void
FabricDistributed::AttachReceiver(Ptr<NetDevice> device, Callback<void, Ptr<Packet>> cb)
{
#ifdef GPU_FABRIC_MPI
    Ptr<MpiReceiver> rx = device->GetObject<MpiReceiver>();
    if (!rx)
    {
        rx = CreateObject<MpiReceiver>();
        device->AggregateObject(rx);
    }
    rx->SetReceiveCallback(MakeBoundCallback(&CountAndForward, cb));
#else
    (void)device;
    (void)cb;
#endif
}

std::vector<std::string>
FabricDistributed::GatherToRoot(const std::string& mine)
{
#ifdef GPU_FABRIC_MPI
    if (IsEnabled() && GetSize() > 1)
    {
        MPI_Comm comm = MpiInterface::GetCommunicator();
        const uint32_t size = GetSize();
        int length = static_cast<int>(mine.size());
        std::vector<int> lengths(size);
        MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm);
        std::vector<int> offsets(size, 0);
        int total = 0;
        for (uint32_t r = 0; r < size; ++r)
        {
            offsets[r] = total;
            total += lengths[r];
        }
        std::string all(GetSystemId() == 0 ? total : 0, '\0');
        MPI_Gatherv(mine.data(),
                    length,
                    MPI_CHAR,
                    all.data(),
                    lengths.data(),
                    offsets.data(),
                    MPI_CHAR,
                    0,
                    comm);
        std::vector<std::string> out;
        if (GetSystemId() == 0)
        {
            for (uint32_t r = 0; r < size; ++r)
            {
                out.push_back(all.substr(offsets[r], lengths[r]));
            }
        }
        return out;
    }
#endif
    return {mine};
}

uint64_t
FabricDistributed::SumAll(uint64_t mine)
{
#ifdef GPU_FABRIC_MPI
    if (IsEnabled() && GetSize() > 1)
    {
        unsigned long long in = mine;
        unsigned long long out = 0;
        MPI_Allreduce(&in,
                      &out,
                      1,
                      MPI_UNSIGNED_LONG_LONG,
                      MPI_SUM,
                      MpiInterface::GetCommunicator());
        return out;
    }
#endif
    return mine;
}

uint64_t
FabricDistributed::GetFramesSent()
{
    return g_framesSent;
}

uint64_t
FabricDistributed::GetFramesReceived()
{
    return g_framesReceived;
}

} // namespace ns3
