/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "fabric-distributed.h"

#include "fabric-internal.h"

#include "ns3/event-id.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-lookahead-scheduler.h"
#include "ns3/global-value.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/type-id.h"

#include <array>
#include <set>
#include <unordered_map>

#ifdef GPU_FABRIC_MPI
#include "ns3/channel.h"
#include "ns3/mpi-interface.h"
#include "ns3/mpi-receiver.h"
#include "ns3/node-list.h"

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
uint64_t g_messagesSent = 0;
uint64_t g_messagesReceived = 0;

#ifdef GPU_FABRIC_MPI
bool g_mpiStartedHere = false; //!< Enable called MPI_Init (Disable ends MPI)

/// A frame on its way to another rank, until its batch leaves.
struct PendingFrame
{
    bool hasEnvelope{false};       //!< FabricSendRemote's (else SendPacket's)
    FabricRemoteEnvelope envelope; //!< if hasEnvelope
    Ptr<const Packet> packet;      //!< null: none
    Time rxTime;                   //!< its arrival
    uint32_t node{0};              //!< the receiving node
    uint32_t ifIndex{0};           //!< and device
};

/**
 * Frames for one other rank, sent in as few MPI messages as they fit in
 * (FabricSetBatchLookahead says when). One message per frame cost more than
 * the frame's simulation: MPI's per-message work, a request in ns-3's
 * pending list and a receive buffer re-posted for each.
 *
 * The frames are written into messages only when they leave, all in one
 * loop, rather than one by one between the data plane's events.
 * Records are FabricAppendRecord's: a plain fabric frame as its fields,
 * anything else as Packet::Serialize writes it (packet tags too).
 */
struct Batch
{
    std::vector<PendingFrame> frames; //!< in the order they were sent
    std::vector<uint8_t> bytes;       //!< the message being written
};

/// What a device of this rank takes from other ranks.
struct Receivers
{
    Callback<void, Ptr<Packet>> plain; //!< AttachReceiver
    FabricRemoteReceiver remote;       //!< FabricAttachRemote
};

std::vector<Batch> g_batches; //!< by destination rank
Time g_flushAt;               //!< when the scheduled flush runs
EventId g_flushEvent;         //!< and its event
bool g_flushPending = false;  //!< g_flushEvent is still to run (cheaper than asking the engine)
/// each node's rank by id, filled on first use (a frame's destination rank)
std::vector<uint32_t> g_rankOfNode;
Time g_lookahead; //!< FabricSetBatchLookahead (0: every instant's frames leave at its end)
std::unordered_map<const NetDevice*, Receivers> g_receivers; //!< this rank's devices
/// g_receivers by node id and interface index, filled as records arrive
std::vector<std::vector<const Receivers*>> g_receiversByPort;

/**
 * ns-3's granted-time-window and null-message interfaces receive into
 * buffers of 2,000 bytes (MAX_MPI_MSG_SIZE), which hold their own 16-byte
 * header and the batch packet's serialization (a few tens of bytes around
 * the records); a batch stops below that.
 */
constexpr uint32_t kBatchBytes = 1800;

/// Send the message \p bytes, whose first record is \p first's.
void
SendMessage(std::vector<uint8_t>& bytes, const PendingFrame& first, Time earliest)
{
    Ptr<Packet> p = Create<Packet>(bytes.data(), static_cast<uint32_t>(bytes.size()));
    ++g_messagesSent;
    MpiInterface::SendPacket(p, earliest, first.node, first.ifIndex);
    bytes.clear();
}

/// Write the frames waiting for \p rank into messages and send them.
void
SendBatch(uint32_t rank)
{
    Batch& b = g_batches[rank];
    size_t first = 0; // the current message's first frame
    Time earliest;
    for (size_t i = 0; i < b.frames.size(); ++i)
    {
        const PendingFrame& f = b.frames[i];
        const FabricRemoteEnvelope* envelope = f.hasEnvelope ? &f.envelope : nullptr;
        const Packet* packet = PeekPointer(f.packet);
        const size_t before = b.bytes.size();
        uint32_t record =
            FabricAppendRecord(b.bytes, kBatchBytes, envelope, packet, f.rxTime, f.node, f.ifIndex);
        if (b.bytes.size() == before)
        {
            NS_ABORT_MSG_IF(before == 0,
                            "FabricDistributed: a frame whose record takes "
                                << record << " bytes (packet size "
                                << (packet ? packet->GetSize() : 0) << ") crosses ranks, above the "
                                << kBatchBytes
                                << " bytes one MPI message of ns-3's distributed simulator "
                                   "holds; frames that cross ranks carry virtual payload "
                                   "(Packet(size))");
            SendMessage(b.bytes, b.frames[first], earliest);
            first = i;
            FabricAppendRecord(b.bytes, kBatchBytes, envelope, packet, f.rxTime, f.node, f.ifIndex);
        }
        earliest = i == first ? f.rxTime : std::min(earliest, f.rxTime);
    }
    if (!b.bytes.empty())
    {
        SendMessage(b.bytes, b.frames[first], earliest);
    }
    b.frames.clear();
}

void
FlushBatches()
{
    g_flushPending = false;
    for (uint32_t r = 0; r < g_batches.size(); ++r)
    {
        SendBatch(r);
    }
}

/// Add a record for \p node's device \p ifIndex to the batch for its rank.
void
AddRecord(const FabricRemoteEnvelope* envelope,
          const Packet* p,
          Time rxTime,
          uint32_t node,
          uint32_t ifIndex)
{
    ++g_framesSent;
    if (node >= g_rankOfNode.size())
    {
        g_rankOfNode.resize(NodeList::GetNNodes());
        for (uint32_t n = 0; n < g_rankOfNode.size(); ++n)
        {
            g_rankOfNode[n] = NodeList::GetNode(n)->GetSystemId();
        }
    }
    const uint32_t rank = g_rankOfNode[node];
    if (g_batches.size() <= rank)
    {
        g_batches.resize(FabricDistributed::GetSize());
    }
    PendingFrame& f = g_batches[rank].frames.emplace_back();
    f.hasEnvelope = envelope != nullptr;
    if (envelope != nullptr)
    {
        f.envelope = *envelope;
    }
    f.packet = p;
    f.rxTime = rxTime;
    f.node = node;
    f.ifIndex = ifIndex;
    // A frame may wait until one lookahead (and a nanosecond: a granted
    // window includes its end) before its arrival: until this rank passes
    // that time no rank is granted the arrival's instant. Frames of the same
    // instant, and of the next ones up to then, leave together.
    const Time now = Simulator::Now();
    const Time deadline = g_lookahead.IsStrictlyPositive()
                              ? std::max(now, rxTime - g_lookahead - NanoSeconds(1))
                              : now;
    if (!g_flushPending || deadline < g_flushAt)
    {
        // a flush at the same instant runs after what it has already scheduled
        if (g_flushPending)
        {
            Simulator::Cancel(g_flushEvent);
        }
        g_flushPending = true;
        g_flushAt = deadline;
        g_flushEvent = Simulator::Schedule(deadline - now, &FlushBatches);
    }
}

void
Deliver(const Receivers* to, bool hasEnvelope, FabricRemoteEnvelope envelope, Ptr<Packet> p)
{
    if (hasEnvelope)
    {
        to->remote(envelope, p);
    }
    else
    {
        to->plain(p);
    }
}

/// The receivers of \p node's device \p ifIndex (null: not a device of this rank).
const Receivers*
FindReceivers(uint32_t node, uint32_t ifIndex)
{
    if (node < g_receiversByPort.size() && ifIndex < g_receiversByPort[node].size() &&
        g_receiversByPort[node][ifIndex] != nullptr)
    {
        return g_receiversByPort[node][ifIndex];
    }
    // the device's index in its node, as ns-3's own receive finds it
    const Ptr<Node> n = NodeList::GetNode(node);
    const auto to = ifIndex < n->GetNDevices()
                        ? g_receivers.find(PeekPointer(n->GetDevice(ifIndex)))
                        : g_receivers.end();
    if (to == g_receivers.end())
    {
        return nullptr;
    }
    if (g_receiversByPort.size() <= node)
    {
        g_receiversByPort.resize(node + 1);
    }
    auto& ports = g_receiversByPort[node];
    if (ports.size() <= ifIndex)
    {
        ports.resize(ifIndex + 1, nullptr);
    }
    ports[ifIndex] = &to->second; // unordered_map keeps its elements where they are
    return &to->second;
}

/// A batch's event, at its earliest arrival: those frames now, the others at their times.
void
Unpack(Ptr<Packet> batch)
{
    ++g_messagesReceived;
    static std::vector<uint8_t> bytes; // reused: a batch is unpacked whole before the next
    bytes.resize(batch->GetSize());
    batch->CopyData(bytes.data(), bytes.size());
    const Time now = Simulator::Now();
    const uint8_t* at = bytes.data();
    const uint8_t* end = at + bytes.size();
    // the packets first, then their deliveries: each in a loop of its own
    static std::vector<FabricRecord> records;
    records.clear();
    while (at < end)
    {
        records.push_back(FabricReadRecord(at, end));
    }
    g_framesReceived += records.size();
    for (FabricRecord& r : records)
    {
        const Receivers* to = FindReceivers(r.node, r.ifIndex);
        NS_ABORT_MSG_IF(to == nullptr,
                        "FabricDistributed: a frame for node " << r.node << " device " << r.ifIndex
                                                               << ", not a device of this rank");
        if (r.rxTime == now)
        {
            // as the frame's own event would have been: this event was
            // scheduled when the message came in, before the instant began
            // (a new event now would follow what the instant has scheduled)
            Deliver(to, r.hasEnvelope, r.envelope, std::move(r.packet));
        }
        else
        {
            Simulator::ScheduleWithContext(r.node,
                                           r.rxTime - now,
                                           &Deliver,
                                           to,
                                           r.hasEnvelope,
                                           r.envelope,
                                           std::move(r.packet));
        }
    }
    records.clear();
}

/// The device's entry, its MpiReceiver aggregated and unpacking batches.
Receivers&
ReceiversOf(const Ptr<NetDevice>& device)
{
    Ptr<MpiReceiver> rx = device->GetObject<MpiReceiver>();
    if (!rx)
    {
        rx = CreateObject<MpiReceiver>();
        device->AggregateObject(rx);
    }
    rx->SetReceiveCallback(MakeCallback(&Unpack));
    return g_receivers[PeekPointer(device)];
}

/**
 * FabricDistributed::StopWhenIdle: every period each rank reports whether
 * it holds events other than the null-message engine's own (one per
 * neighbour rank, always queued) and how many frame messages it sent and
 * unpacked. Reports are taken at the same simulated instant on every rank,
 * a consistent cut: if no rank holds an event and every message sent was
 * unpacked, nothing can happen any more.
 */
struct IdleStop
{
    bool armed{false};                       //!< StopWhenIdle was called this simulation
    Time period;                             //!< between reports
    uint32_t neighbours{0};                  //!< ranks a cable of this rank's nodes leads to
    uint64_t sentBefore{0};                  //!< g_messagesSent when armed (earlier runs')
    uint64_t receivedBefore{0};              //!< g_messagesReceived when armed
    MPI_Request request{MPI_REQUEST_NULL};   //!< the last report's all-reduce
    std::array<unsigned long long, 3> in{};  //!< busy ranks, messages sent, unpacked
    std::array<unsigned long long, 3> out{}; //!< the same, summed
};

IdleStop g_idle;

/// The ranks ns-3's null-message engine exchanges null messages with (as it
/// finds them: point-to-point devices of this rank's nodes whose cable ends
/// on another rank), so the null-message events it keeps queued.
uint32_t
CountNeighbourRanks()
{
    const uint32_t me = MpiInterface::GetSystemId();
    std::set<uint32_t> ranks;
    for (auto n = NodeList::Begin(); n != NodeList::End(); ++n)
    {
        if ((*n)->GetSystemId() != me)
        {
            continue;
        }
        for (uint32_t i = 0; i < (*n)->GetNDevices(); ++i)
        {
            const Ptr<NetDevice> dev = (*n)->GetDevice(i);
            const Ptr<Channel> ch = dev->IsPointToPoint() ? dev->GetChannel() : nullptr;
            if (!ch || ch->GetNDevices() != 2)
            {
                continue;
            }
            const Ptr<NetDevice> other = ch->GetDevice(ch->GetDevice(0) == dev ? 1 : 0);
            const uint32_t r = other && other->GetNode() ? other->GetNode()->GetSystemId() : me;
            if (r != me)
            {
                ranks.insert(r);
            }
        }
    }
    return static_cast<uint32_t>(ranks.size());
}

/// A report (see IdleStop), after taking the last one's sums.
void
IdleProbe()
{
    if (g_idle.request != MPI_REQUEST_NULL)
    {
        // every rank reached the last report's instant, a period ago, without
        // this rank's promises: waiting here cannot stall them
        MPI_Wait(&g_idle.request, MPI_STATUS_IGNORE);
        if (g_idle.out[0] == 0 && g_idle.out[1] == g_idle.out[2])
        {
            Simulator::Stop(); // on every rank, at this instant
            return;
        }
    }
    const FabricLookaheadScheduler* s = FabricSchedulerInUse();
    const bool idle = s != nullptr && s->GetPending() <= g_idle.neighbours;
    g_idle.in = {idle ? 0ULL : 1ULL,
                 g_messagesSent - g_idle.sentBefore,
                 g_messagesReceived - g_idle.receivedBefore};
    MPI_Iallreduce(g_idle.in.data(),
                   g_idle.out.data(),
                   3,
                   MPI_UNSIGNED_LONG_LONG,
                   MPI_SUM,
                   MpiInterface::GetCommunicator(),
                   &g_idle.request);
    Simulator::Schedule(g_idle.period, &IdleProbe);
}

/// The first report also counts the neighbours (the fabric is built by then).
void
FirstIdleProbe()
{
    g_idle.neighbours = CountNeighbourRanks();
    IdleProbe();
}
#endif
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
    // MPI is started here, not by ns-3, so that ns-3's interface can be
    // taken down and set up again between simulations (DestroySimulation)
    // without ending MPI
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized)
    {
        MPI_Init(argc, argv);
        g_mpiStartedHere = true;
    }
    MpiInterface::Enable(MPI_COMM_WORLD);
#else
    (void)argc;
    (void)argv;
    (void)nullMessages;
#endif
}

#ifdef GPU_FABRIC_MPI
namespace
{
/// Forget what a simulation left here (batches, its devices' receivers).
void
ClearRunState()
{
    g_batches.clear();
    g_flushEvent = EventId();
    g_flushPending = false;
    g_rankOfNode.clear();
    g_lookahead = Time(0);
    g_receivers.clear();
    g_receiversByPort.clear();
    // a run stopped otherwise leaves its last report unwaited (documented)
    g_idle = IdleStop();
}
} // namespace
#endif

void
FabricDistributed::Disable()
{
#ifdef GPU_FABRIC_MPI
    if (MpiInterface::IsEnabled())
    {
        MpiInterface::Disable();
    }
    ClearRunState();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (g_mpiStartedHere && !finalized)
    {
        MPI_Finalize();
    }
    g_mpiStartedHere = false;
#endif
}

void
FabricDistributed::DestroySimulation()
{
    Simulator::Destroy();
#ifdef GPU_FABRIC_MPI
    if (MpiInterface::IsEnabled())
    {
        // ns-3's engine frees the interface's receive buffers when it is
        // destroyed (it expects MPI to end next): a fresh interface, on a
        // fresh copy of the communicator, for the next simulation
        MpiInterface::Disable();
        ClearRunState();
        MpiInterface::Enable(MPI_COMM_WORLD);
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
    // written when its batch leaves: a copy, so that the caller may change p
    const Ptr<Packet> copy = p->Copy();
    AddRecord(nullptr, PeekPointer(copy), rxTime, node, ifIndex);
#else
    (void)p;
    (void)rxTime;
    (void)node;
    (void)ifIndex;
    NS_FATAL_ERROR("FabricDistributed::SendPacket: this build has no MPI (scripts/build.sh --mpi)");
#endif
}

void
FabricDistributed::AttachReceiver(Ptr<NetDevice> device, Callback<void, Ptr<Packet>> cb)
{
#ifdef GPU_FABRIC_MPI
    ReceiversOf(device).plain = cb;
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

void
FabricSetBatchLookahead(Time lookahead)
{
#ifdef GPU_FABRIC_MPI
    g_lookahead = lookahead;
#else
    (void)lookahead;
#endif
}

uint64_t
FabricDistributed::GetMessagesSent()
{
    return g_messagesSent;
}

uint64_t
FabricDistributed::GetMessagesReceived()
{
    return g_messagesReceived;
}

void
FabricDistributed::StopWhenIdle(Time period)
{
    FabricRequire(period.IsStrictlyPositive(),
                  "FabricDistributed::StopWhenIdle period",
                  period,
                  "a positive time");
#ifdef GPU_FABRIC_MPI
    if (!UsesNullMessages() || GetSize() < 2 || g_idle.armed)
    {
        return;
    }
    TypeIdValue scheduler;
    GlobalValue::GetValueByName("SchedulerType", scheduler);
    FabricRequire(scheduler.Get() == FabricLookaheadScheduler::GetTypeId() &&
                      FabricSchedulerInUse() != nullptr,
                  "SchedulerType",
                  scheduler.Get().GetName(),
                  "ns3::FabricLookaheadScheduler (FabricDistributed::StopWhenIdle counts the "
                  "events it holds)");
    g_idle.armed = true;
    g_idle.period = period;
    g_idle.sentBefore = g_messagesSent;
    g_idle.receivedBefore = g_messagesReceived;
    Simulator::Schedule(period, &FirstIdleProbe);
#endif
}

void
FabricSendRemote(const FabricRemoteEnvelope& envelope,
                 const Packet* p,
                 Time rxTime,
                 uint32_t node,
                 uint32_t ifIndex)
{
#ifdef GPU_FABRIC_MPI
    AddRecord(&envelope, p, rxTime, node, ifIndex);
#else
    (void)envelope;
    (void)p;
    (void)rxTime;
    (void)node;
    (void)ifIndex;
    NS_FATAL_ERROR("FabricSendRemote: this build has no MPI (scripts/build.sh --mpi)");
#endif
}

void
FabricAttachRemote(Ptr<NetDevice> device, FabricRemoteReceiver cb)
{
#ifdef GPU_FABRIC_MPI
    ReceiversOf(device).remote = cb;
#else
    (void)device;
    (void)cb;
#endif
}

} // namespace ns3
