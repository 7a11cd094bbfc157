/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_COLLECTIVE_SCHEDULE_H
#define GPU_FABRIC_COLLECTIVE_SCHEDULE_H

#include <cstdint>
#include <limits>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief The collective operations a schedule can implement.
 *
 * "Total bytes" of a schedule follows the size column of nccl-tests:
 * - AllReduce, Broadcast, Reduce: the buffer of each rank;
 * - AllGather: the gathered output buffer (n contributions);
 * - ReduceScatter: the input buffer of each rank (n output pieces);
 * - AllToAll: the send buffer of each rank (n pieces, one per destination,
 *   the piece to itself included);
 * - SendRecv: the bytes each (source, destination) pair moves.
 */
enum class CollectiveType : uint8_t
{
    AllReduce,
    AllGather,
    ReduceScatter,
    Broadcast,
    Reduce,
    AllToAll,
    SendRecv,
};

/**
 * \param type a collective type
 * \return its lower-case name: allreduce, allgather, reducescatter, broadcast,
 *         reduce, alltoall, sendrecv (the names used in JSON and on command lines)
 */
std::string_view CollectiveTypeName(CollectiveType type);

/**
 * \param name one of the names returned by CollectiveTypeName()
 * \return the collective type
 * \throws FabricConfigError naming \p parameter for any other name
 */
CollectiveType ParseCollectiveType(std::string_view name,
                                   std::string_view parameter = "collective");

/// \return true when the collective has a root rank (Broadcast, Reduce)
bool CollectiveHasRoot(CollectiveType type);

/// Marks an unused rank field (no source / destination / root).
constexpr uint32_t kNoRank = std::numeric_limits<uint32_t>::max();
/// Marks an unused chunk or operation index.
constexpr uint32_t kNoIndex = std::numeric_limits<uint32_t>::max();

/// Kind of a schedule operation.
enum class OpKind : uint8_t
{
    Send, //!< send a chunk to a peer
    Recv, //!< receive a chunk from a peer
};

/// What a receive does with the arriving data.
enum class RecvMode : uint8_t
{
    Copy,   //!< overwrite the local chunk with the arriving data
    Reduce, //!< reduce the arriving data into the local chunk
};

/**
 * \brief One chunk of the buffer.
 *
 * Only some collectives use \c src and \c dst (kNoRank otherwise):
 * - AllGather: \c src is the rank that contributes the chunk;
 * - ReduceScatter: \c dst is the rank that must end with the reduced chunk;
 * - AllToAll, SendRecv: \c src sends the chunk, \c dst must end with it.
 */
struct ChunkInfo
{
    uint64_t bytes{0};     //!< size of the chunk in bytes (may be 0 for tiny buffers)
    uint32_t src{kNoRank}; //!< source / owner rank (local index), see above
    uint32_t dst{kNoRank}; //!< destination rank (local index), see above
};

/**
 * \brief One operation of one rank.
 *
 * Dependencies are stored flat in the schedule; read them with
 * CollectiveSchedule::Deps().
 */
struct CollectiveOp
{
    OpKind kind{OpKind::Send};     //!< send or receive
    RecvMode mode{RecvMode::Copy}; //!< receives only; Copy for sends
    uint16_t channel{0};           //!< channel (ring / tree instance), for the executor
    uint32_t peer{0};              //!< local index of the other rank
    uint32_t chunk{0};             //!< first chunk moved
    uint32_t count{1};             //!< chunks moved: chunk .. chunk + count - 1, one message
    uint64_t bytes{0};             //!< bytes moved (always the sum of those chunks' sizes)
    uint32_t depBegin{0};          //!< first dependency in the rank's dependency array
    uint32_t depCount{0};          //!< number of dependencies
};

/// A read-only view of an operation's dependencies (indices of earlier ops of the same rank).
class DepRange
{
  public:
    /// \param b first element \param e one past the last element
    DepRange(const uint32_t* b, const uint32_t* e)
        : m_begin(b),
          m_end(e)
    {
    }

    /// \return first dependency
    const uint32_t* begin() const
    {
        return m_begin;
    }

    /// \return one past the last dependency
    const uint32_t* end() const
    {
        return m_end;
    }

    /// \return number of dependencies
    size_t size() const
    {
        return static_cast<size_t>(m_end - m_begin);
    }

    /// \return true when there are no dependencies
    bool empty() const
    {
        return m_begin == m_end;
    }

    /// \param i index \return the i-th dependency
    uint32_t operator[](size_t i) const
    {
        return m_begin[i];
    }

  private:
    const uint32_t* m_begin; //!< first
    const uint32_t* m_end;   //!< one past last
};

/**
 * \brief A structural defect of a schedule: which field, which value, what is allowed,
 *        and where (rank, operation, chunk; kNoRank / kNoIndex where not applicable).
 */
struct ScheduleIssue
{
    std::string parameter;    //!< e.g. "ranks[3].ops[7].peer"
    std::string value;        //!< the offending value as text
    std::string allowed;      //!< what would be accepted
    uint32_t rank{kNoRank};   //!< rank concerned
    uint32_t op{kNoIndex};    //!< operation index at that rank
    uint32_t chunk{kNoIndex}; //!< chunk concerned
};

/// Bytes sent from one rank to another (local indices).
struct PairBytes
{
    uint32_t src;      //!< sender
    uint32_t dst;      //!< receiver
    uint64_t bytes;    //!< bytes
    uint64_t messages; //!< number of sends
};

/**
 * \ingroup gpu-fabric
 * \brief A collective as plain data: who sends which chunk to whom, in what order.
 *
 * Ranks are local indices 0..n-1 into the communicator (a vector of global
 * rank ids: local index = position).  The buffer is cut into chunks; each rank
 * has an ordered list of operations, each moving one whole chunk, or a run of
 * consecutive chunks as one message (CollectiveOp::count; what a step that
 * moves a piece made of several chunks sends, e.g. HierarchicalAllReduce's
 * domain steps; every chunk of the run is read or written as if moved alone):
 * - Send(chunk c, to peer p): may start once all its dependencies completed;
 *   it reads the chunk when it starts and completes when its data has arrived
 *   at p (eager: it never waits for the receiver).
 * - Recv(chunk c, from peer p, Copy|Reduce): completes once its matching send's
 *   data has arrived and its dependencies completed; then the data is written
 *   (Copy) or reduced (Reduce) into the local chunk.
 *
 * Dependencies are indices of earlier operations of the same rank (strictly
 * smaller indices), so every schedule's dependency graph is acyclic per rank;
 * a deadlock can only come from waits across ranks (ScheduleChecker finds it).
 *
 * Matching: the k-th Send from rank r to rank p (counting in r's list order)
 * matches the k-th Recv at p from r (counting in p's list order).  Matching
 * pairs must name the same chunks, byte count and channel.  An executor tags a
 * message with its sequence number k on the (r, p) pair, or with the index of
 * the matching receive (MatchingOps()), to deliver it to the right Recv.
 *
 * Operations of one rank run concurrently as far as dependencies allow; the
 * list order only defines matching.  Generators add exactly the dependencies
 * the data needs (read after write, write after read, write after write on the
 * same chunk of the same rank), so pipelining falls out of the data flow; a
 * transport that serves each (sender, receiver, channel) connection first in,
 * first out sends chunks of one connection back to back.
 *
 * Every chunk has a byte count; chunk sizes are whatever the generator chose
 * (generators spread remainders as SplitBytes() documents) but they must add
 * up exactly (see Validate()).
 */
class CollectiveSchedule
{
  public:
    /// An empty AllReduce schedule with no ranks.
    CollectiveSchedule() = default;

    /**
     * \param type the collective
     * \param ranks communicator size n (the communicator is 0..n-1 until SetCommunicator)
     * \param totalBytes total bytes as CollectiveType documents
     */
    CollectiveSchedule(CollectiveType type, uint32_t ranks, uint64_t totalBytes);

    /// \return the collective type
    CollectiveType Type() const
    {
        return m_type;
    }

    /// \param type the collective type
    void SetType(CollectiveType type)
    {
        m_type = type;
    }

    /// \return the root (local index) for Broadcast and Reduce; kNoRank otherwise
    uint32_t Root() const
    {
        return m_root;
    }

    /// \param root local index of the root
    void SetRoot(uint32_t root)
    {
        m_root = root;
    }

    /// \return the algorithm name the schedule was made with (informative)
    const std::string& Algorithm() const
    {
        return m_algorithm;
    }

    /// \param name the algorithm name (informative)
    void SetAlgorithm(std::string name)
    {
        m_algorithm = std::move(name);
    }

    /**
     * \return whether each rank issues its Sends to one (peer, channel) in
     *         list order (see SetInOrderConnections)
     */
    bool InOrderConnections() const
    {
        return m_inOrderConnections;
    }

    /**
     * \brief Issue the Sends of one connection in list order.
     *
     * By default a Send starts as soon as its dependencies completed, so a
     * send listed later (a later step's chunk whose data came early) can go
     * before an earlier one on the same connection and, connections being
     * first in, first out, delay it.  With this set, a Send whose dependencies
     * completed also waits until the rank's earlier Sends to the same
     * (peer, channel) were handed to the transport, as an MSCCL thread block
     * runs its steps in order.  It adds no completion dependency: the sends
     * still leave back to back.  ScheduleChecker counts these waits when it
     * looks for deadlocks.
     * \param inOrder whether to issue in list order
     */
    void SetInOrderConnections(bool inOrder)
    {
        m_inOrderConnections = inOrder;
    }

    /// \return the number of ranks n
    uint32_t NumRanks() const
    {
        return static_cast<uint32_t>(m_communicator.size());
    }

    /// \return the global rank id of each local index
    const std::vector<uint32_t>& Communicator() const
    {
        return m_communicator;
    }

    /**
     * \param globalRanks global rank id of each local index; same size as the
     *        current communicator, no duplicates
     */
    void SetCommunicator(std::vector<uint32_t> globalRanks);

    /// \return total bytes (see CollectiveType)
    uint64_t TotalBytes() const
    {
        return m_totalBytes;
    }

    /// \param bytes total bytes
    void SetTotalBytes(uint64_t bytes)
    {
        m_totalBytes = bytes;
    }

    /**
     * \brief Append a chunk.
     * \param bytes chunk size
     * \param src source / owner (see ChunkInfo)
     * \param dst destination (see ChunkInfo)
     * \return the new chunk's index
     */
    uint32_t AddChunk(uint64_t bytes, uint32_t src = kNoRank, uint32_t dst = kNoRank);

    /// \return the number of chunks
    uint32_t NumChunks() const
    {
        return static_cast<uint32_t>(m_chunks.size());
    }

    /// \param c chunk index \return the chunk
    const ChunkInfo& Chunk(uint32_t c) const
    {
        return m_chunks[c];
    }

    /// \return all chunks
    const std::vector<ChunkInfo>& Chunks() const
    {
        return m_chunks;
    }

    /**
     * \brief Append a Send to \p rank's list (bytes = the chunks' sizes).
     * \param rank local index of the sender
     * \param chunk (first) chunk index
     * \param peer local index of the receiver
     * \param deps indices of earlier operations of \p rank
     * \param channel channel index
     * \param count consecutive chunks moved as one message
     * \return the new operation's index in \p rank's list
     */
    uint32_t AddSend(uint32_t rank,
                     uint32_t chunk,
                     uint32_t peer,
                     const std::vector<uint32_t>& deps = {},
                     uint16_t channel = 0,
                     uint32_t count = 1);

    /**
     * \brief Append a Recv to \p rank's list (bytes = the chunks' sizes).
     * \param rank local index of the receiver
     * \param chunk (first) chunk index
     * \param peer local index of the sender
     * \param mode Copy or Reduce
     * \param deps indices of earlier operations of \p rank
     * \param channel channel index
     * \param count consecutive chunks moved as one message
     * \return the new operation's index in \p rank's list
     */
    uint32_t AddRecv(uint32_t rank,
                     uint32_t chunk,
                     uint32_t peer,
                     RecvMode mode,
                     const std::vector<uint32_t>& deps = {},
                     uint16_t channel = 0,
                     uint32_t count = 1);

    /**
     * \param chunk first chunk \param count number of chunks (in range)
     * \return the sum of their sizes
     */
    uint64_t RunBytes(uint32_t chunk, uint32_t count) const;

    /**
     * \brief Append an operation as given (bytes taken from \p op; depBegin/depCount ignored).
     * \param rank local index
     * \param op the operation
     * \param deps dependency array
     * \param depCount number of dependencies
     * \return the new operation's index
     */
    uint32_t AddOp(uint32_t rank, const CollectiveOp& op, const uint32_t* deps, size_t depCount);

    /// \param rank local index \return number of operations of \p rank
    uint32_t NumOps(uint32_t rank) const
    {
        return static_cast<uint32_t>(m_programs[rank].ops.size());
    }

    /// \param rank local index \param i op index \return the operation
    const CollectiveOp& Op(uint32_t rank, uint32_t i) const
    {
        return m_programs[rank].ops[i];
    }

    /// \param rank local index \return all operations of \p rank, in list order
    const std::vector<CollectiveOp>& Ops(uint32_t rank) const
    {
        return m_programs[rank].ops;
    }

    /// \param rank local index \param i op index \return the op's dependencies
    DepRange Deps(uint32_t rank, uint32_t i) const
    {
        const auto& p = m_programs[rank];
        const CollectiveOp& op = p.ops[i];
        const uint32_t* b = p.deps.data() + op.depBegin;
        return DepRange(b, b + op.depCount);
    }

    /// \return number of operations over all ranks
    uint64_t TotalOps() const;

    /**
     * \brief Replace an operation's dependencies (for tools and tests).
     * \param rank local index \param i op index \param deps new dependencies
     */
    void SetDeps(uint32_t rank, uint32_t i, const std::vector<uint32_t>& deps);

    /**
     * \brief Mutable access to an operation's fields (for tools and tests);
     *        use SetDeps() to change dependencies.
     * \param rank local index \param i op index \return the operation
     */
    CollectiveOp& MutableOp(uint32_t rank, uint32_t i)
    {
        return m_programs[rank].ops[i];
    }

    /**
     * \brief Reserve room for a rank's operations (a speed hint for generators).
     * \param rank local index \param ops operations \param deps dependencies
     */
    void ReserveOps(uint32_t rank, size_t ops, size_t deps);

    /**
     * \brief Remove an operation; later indices shift down by one and
     *        dependencies on the removed operation are dropped.
     * \param rank local index \param i op index
     */
    void RemoveOp(uint32_t rank, uint32_t i);

    /// \param rank local index \return bytes \p rank sends
    uint64_t BytesSent(uint32_t rank) const;

    /// \param rank local index \return bytes \p rank receives
    uint64_t BytesReceived(uint32_t rank) const;

    /// \return bytes sent by all ranks together
    uint64_t TotalBytesSent() const;

    /// \return bytes received by all ranks together
    uint64_t TotalBytesReceived() const;

    /// \return bytes and messages sent per (src, dst) pair that exchanges anything,
    ///         sorted by (src, dst)
    std::vector<PairBytes> TrafficMatrix() const;

    /**
     * \brief The first structural defect, if any.
     *
     * Checks: communicator non-empty without duplicates; root in range for
     * Broadcast/Reduce; chunk src/dst in range where the collective uses them;
     * chunk bytes add up (AllReduce, AllGather, ReduceScatter, Broadcast, Reduce:
     * sum of chunks = total bytes; AllToAll: chunks of each source sum to total
     * bytes; SendRecv: chunks of each (src, dst) pair sum to total bytes);
     * op peer in range and not the rank itself; chunk in range; op bytes equal
     * chunk bytes; dependencies strictly backwards; sends and receives match
     * one to one (same count per ordered pair, same chunk, bytes and channel).
     * \return the issue, or nullopt when the structure is sound
     */
    std::optional<ScheduleIssue> FindStructureError() const;

    /**
     * \brief FindStructureError() that also hands out the matching when sound.
     * \param matching if not null and the structure is sound, receives MatchingOps()
     * \return the issue, or nullopt
     */
    std::optional<ScheduleIssue> FindStructureError(
        std::vector<std::vector<uint32_t>>* matching) const;

    /// \brief Throw FabricConfigError for the first structural defect (see FindStructureError).
    void Validate() const;

    /**
     * \brief The matching partner of every operation.
     *
     * result[r][i] is the index, in the list of rank Op(r, i).peer, of the
     * operation that matches operation i of rank r.  Throws
     * FabricConfigError if sends and receives do not match (Validate first).
     * \return per rank, per op, the partner's op index
     */
    std::vector<std::vector<uint32_t>> MatchingOps() const;

    /**
     * \brief Validate() and MatchingOps() in one pass (an executor needs both).
     * \return per rank, per op, the partner's op index
     */
    std::vector<std::vector<uint32_t>> ValidatedMatching() const;

    /// \return the schedule as JSON (format in doc/gpu-fabric.rst, "Schedule JSON")
    nlohmann::json ToJson() const;

    /**
     * \param j a JSON document in the schedule format
     * \return the schedule; FabricConfigError naming the field if malformed or
     *         structurally unsound
     */
    static CollectiveSchedule FromJson(const nlohmann::json& j);

    /// \param indent JSON indentation (-1: compact) \return the JSON text
    std::string ToJsonString(int indent = -1) const;

    /// \param text JSON text \return the schedule (FabricConfigError on any defect)
    static CollectiveSchedule FromJsonString(const std::string& text);

    /// \param path file to write the JSON to (FabricConfigError if it cannot be written)
    void Save(const std::string& path) const;

    /// \param path JSON file \return the schedule (FabricConfigError on any defect)
    static CollectiveSchedule Load(const std::string& path);

  private:
    /// \return an op moving chunks \p chunk .. + \p count - 1 (their sizes), after
    ///         checking the range
    CollectiveOp ChunkOp(OpKind kind,
                         RecvMode mode,
                         uint32_t chunk,
                         uint32_t peer,
                         uint16_t channel,
                         uint32_t count) const;

    // The steps of FindStructureError(), in its order.
    /// \return a defect of the communicator, program count, root or chunk list
    std::optional<ScheduleIssue> FindCommunicatorError() const;
    /// \return a chunk's src/dst out of range, or bytes that do not add up
    std::optional<ScheduleIssue> FindChunksError() const;
    /// \return an op's field, size or dependency defect (first in rank, list order)
    std::optional<ScheduleIssue> FindOpsError() const;

    /// Operations and their flat dependency array for one rank.
    struct RankProgram
    {
        std::vector<CollectiveOp> ops; //!< in list order
        std::vector<uint32_t> deps;    //!< dependencies of all ops, op.depBegin indexes here
    };

    CollectiveType m_type{CollectiveType::AllReduce}; //!< collective
    uint32_t m_root{kNoRank};                         //!< root (Broadcast, Reduce)
    std::string m_algorithm;                          //!< algorithm name (informative)
    bool m_inOrderConnections{false};                 //!< sends of a connection in list order
    std::vector<uint32_t> m_communicator;             //!< global id per local index
    uint64_t m_totalBytes{0};                         //!< total bytes
    std::vector<ChunkInfo> m_chunks;                  //!< chunks
    std::vector<RankProgram> m_programs;              //!< per rank
};

/**
 * \brief Split \p total bytes into \p parts pieces that differ by at most one byte:
 *        the first (total % parts) pieces get one byte more, so every byte counts.
 * \param total bytes to split
 * \param parts number of pieces (>= 1)
 * \return the piece sizes, summing to \p total
 */
std::vector<uint64_t> SplitBytes(uint64_t total, uint64_t parts);

} // namespace ns3

#endif // GPU_FABRIC_COLLECTIVE_SCHEDULE_H
