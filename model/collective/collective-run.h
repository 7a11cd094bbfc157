/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_COLLECTIVE_RUN_H
#define GPU_FABRIC_COLLECTIVE_RUN_H

#include "collective-schedule.h"

#include "ns3/nstime.h"
#include "ns3/traced-callback.h"
#include "ns3/transport.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Results of one collective, in nccl-tests' terms.
 */
struct CollectiveResult
{
    std::string collective; //!< e.g. "allreduce"
    std::string algorithm;  //!< e.g. "ring"
    uint32_t ranks{0};      //!< communicator size
    uint64_t bytes{0};      //!< nccl-tests "size" (CollectiveSchedule::TotalBytes)
    double timeS{0};        //!< from the earliest rank start to the last op's completion
    double algbwGBps{0};    //!< bytes / time, GB/s
    double busbwGBps{0};    //!< algbw x the collective's bus factor, GB/s
    uint64_t bytesSent{0};  //!< bytes all ranks sent
    bool complete{false};   //!< every op of every rank completed
    bool failed{false};     //!< a message of it failed (see CollectiveRun::GetFailureReport)
    std::string failure;    //!< the failure report (empty unless failed)
};

/**
 * \ingroup gpu-fabric
 * \brief One collective in progress: runs a CollectiveSchedule over a
 * Transport.
 *
 * An op's dependencies count once its rank has started. A Send is handed to
 * the transport when its dependencies have completed and, with Rendezvous
 * (the default, as MPI's and NCCL's large-message protocols), its matching
 * Recv is posted, i.e. the receiver has met the Recv's dependencies; the
 * handshake itself takes no time. A Send completes
 * when its last byte is delivered, which also marks the matching Recv's data
 * as arrived (the k-th send from r to p matches the k-th receive at p from
 * r). A Recv completes when its data has arrived and it is ready. Local
 * reductions and copies take no time. With ControlDelay, the sender hears of
 * the posted Recv and of the delivery that long later (notes, which is also
 * how the ranks of a distributed run tell each other: each runs its own
 * GPUs' part, and GatherResult combines them). The schedule is only read, so one
 * executor serves every algorithm and any schedule loaded from a file.
 */
class CollectiveRun : public Object, public MessageSink
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    CollectiveRun();

    /**
     * \param schedule the schedule (validated here)
     * \param transport the message layer
     */
    void Setup(CollectiveSchedule schedule, Ptr<Transport> transport);

    /**
     * Start one rank's part (called by its CollectiveApplication, or by the
     * helper when there are no nodes).
     * \param local the rank's index in the communicator
     */
    void StartRank(uint32_t local);

    /// Invoked once when every op of every rank has completed.
    typedef Callback<void, Ptr<CollectiveRun>> CompletionCallback;
    /// \param cb the completion callback
    void SetCompletionCallback(CompletionCallback cb);

    /// \return true once every op has completed
    bool IsComplete() const;
    /// \return the schedule
    const CollectiveSchedule& GetSchedule() const;
    /// \return time the first rank started
    Time GetStartTime() const;
    /// \return time the last op completed (zero before)
    Time GetFinishTime() const;
    /// \param local a rank \return time its last op completed
    Time GetRankFinishTime(uint32_t local) const;
    /// \param local a communicator position \return whether this process
    ///        simulates its GPU (always, on one process)
    bool IsLocalRank(uint32_t local) const;
    /// \return the results (complete == false while running)
    CollectiveResult GetResult() const;
    /// \return ops completed so far, all ranks
    uint64_t GetCompletedOps() const;

    /// Invoked once if the collective fails (a message of it was given up by
    /// its Transport: no path left, a dead GPU, too many losses).
    typedef Callback<void, Ptr<CollectiveRun>, const std::string&> FailureCallback;
    /// \param cb the failure callback
    void SetFailureCallback(FailureCallback cb);
    /// \return true if the collective failed (it will never complete)
    bool IsFailed() const;
    /// \return which ranks, which message and since when (empty unless failed)
    const std::string& GetFailureReport() const;

    /// A send's last byte arrived (cookie: rank << 32 | op).
    void MessageDelivered(uint64_t cookie) override;
    /// A message of this collective was given up: the collective fails.
    /// \param cookie its cookie \param report the transport's report
    void MessageFailed(uint64_t cookie, const TransportMessageReport& report) override;
    /// A receive was posted, or a send's message delivered, ControlDelay ago.
    /// \param cookie the note (NoteCookie)
    void NoteReceived(uint64_t cookie) override;

    /**
     * The results of the whole collective in a distributed run: every rank
     * of the run must call it, after Simulator::Run(). Rank 0 gets the
     * collective's result (earliest start, last completion, complete only if
     * every rank's part is, the failure reports of all); another rank gets
     * its own part's. Without MPI it is GetResult().
     * \return the result
     */
    CollectiveResult GatherResult() const;

    /**
     * This rank's part of the result (its GPUs' earliest start and last
     * completion, whether they completed, their failures, and what the
     * collective is), as text, for a caller that gathers the parts of many
     * runs at once (ProgramRunner::GatherResults). GatherResult gathers it.
     * \return the part
     */
    std::string GetPartText() const;

    /**
     * The result of a collective from the parts (GetPartText) of the ranks
     * that ran it: earliest start, last completion, complete only if every
     * part with GPUs in it is, the failure reports of all.
     * \param parts the parts, in rank order (ranks that never made the run
     *        give none)
     * \return the result (a default CollectiveResult for no parts)
     */
    static CollectiveResult CombineParts(const std::vector<std::string>& parts);

  protected:
    void DoDispose() override;

  private:
    /// Per-op execution state, with what a step of the op reads from the
    /// schedule beside it, in 24 bytes (the size of the state alone before):
    /// a large run's ops are cold when their turn comes, and each array read
    /// separately was a cache miss more.
    struct OpState
    {
        uint32_t waiting : 25;        //!< dependencies not yet complete
        uint32_t send : 1;            //!< a send (else a receive)
        uint32_t cts : 1;             //!< send: the matching receive is posted (ControlDelay ago)
        uint32_t depsMet : 1;         //!< all dependencies complete (a receive is then posted)
        uint32_t issued : 1;          //!< send: handed to the transport
        uint32_t arrived : 1;         //!< receive: data delivered
        uint32_t turn : 1;            //!< send: its connection's earlier sends were issued
        uint32_t held : 1;            //!< send: ready, waiting for its turn (in-order connections)
        uint32_t peer{0};             //!< the op's peer (local rank)
        uint32_t partner{0};          //!< the peer's matching op (MatchingOps)
        uint32_t dependents{0};       //!< its first dependent in m_dependents[rank]
        uint64_t message{kNoMessage}; //!< send in flight: its transport message id

        OpState()
            : waiting(0),
              send(0),
              cts(0),
              depsMet(0),
              issued(0),
              arrived(0),
              turn(1),
              held(0)
        {
        }
    };

    /// The most dependencies an op may have (OpState::waiting's width).
    static constexpr uint32_t kMaxDeps = (1U << 25) - 1;

    /// What a note says (NoteCookie).
    enum NoteKind : uint64_t
    {
        kNoteCts = 1,       //!< a send's matching receive is posted
        kNoteDelivered = 2, //!< a send's message was delivered
    };

    /// Ranks a note can name (NoteCookie: 30 bits).
    static constexpr uint32_t kMaxNoteRanks = 1U << 30;

    /// \return the cookie of note \p kind about op \p op of rank \p rank
    static uint64_t NoteCookie(NoteKind kind, uint32_t rank, uint32_t op);
    /// Send note \p kind about send \p op of \p rank, from its peer's GPU, ControlDelay from now.
    void Note(NoteKind kind, uint32_t rank, uint32_t op);
    /// Send \p op of \p rank may go: its receive is posted.
    void ClearToSend(uint32_t rank, uint32_t op);
    /// Refuse a ControlDelay below the notes' delay between \p rank and \p peer (distributed).
    void RequireControlDelay(uint32_t rank, uint32_t peer) const;
    /**
     * Fill \p r's time and bandwidths from \p seconds.
     * \param r the result (its bytes and ranks set) \param type the collective
     */
    static void SetTimes(CollectiveResult& r, CollectiveType type, double seconds);

    static constexpr uint64_t kNoMessage = ~0ULL; //!< no message in flight

    void DepsMet(uint32_t rank, uint32_t op);
    /// A send may go: issued with the rank's others ready at this instant, in op order.
    void Ready(uint32_t rank, uint32_t op);
    /// In-order connections: link rank \p r's sends of each (peer, channel).
    void LinkConnections(uint32_t r);
    /// Issue a rank's ready sends in op order.
    void Flush(uint32_t rank);
    void Issue(uint32_t rank, uint32_t op);
    void CompleteOp(uint32_t rank, uint32_t op);
    void Delivered(uint32_t rank, uint32_t op);
    void Finish();

    CollectiveSchedule m_schedule;
    Ptr<Transport> m_transport;
    std::vector<std::vector<uint32_t>> m_dependents; //!< dependents CSR lists per rank
    /// state of every op, per rank, and one more whose `dependents` ends the
    /// last op's list
    std::vector<std::vector<OpState>> m_ops;
    std::vector<uint8_t> m_started;             //!< rank started
    std::vector<std::vector<uint32_t>> m_ready; //!< sends ready to issue, per rank
    /// in-order connections: per rank, each send's next send to the same
    /// (peer, channel), or kNoIndex (empty otherwise)
    std::vector<std::vector<uint32_t>> m_connNext;
    std::vector<uint8_t> m_flushPending; //!< a Flush is scheduled, per rank
    std::vector<uint32_t> m_left;        //!< ops left per rank
    std::vector<Time> m_rankFinish;      //!< per rank
    uint64_t m_opsLeft{0};
    uint64_t m_opsDone{0};
    bool m_anyStarted{false};
    bool m_finished{false};
    bool m_rendezvous{true};
    Time m_controlDelay;          //!< ControlDelay
    bool m_notes{false};          //!< ranks tell each other by notes (ControlDelay, distributed)
    std::vector<uint8_t> m_local; //!< per rank: simulated by this process
    Time m_start;
    Time m_finish;
    CompletionCallback m_done;
    FailureCallback m_failed;
    bool m_isFailed{false};
    std::string m_failure;
    TracedCallback<Ptr<const CollectiveRun>, const std::string&> m_failedTrace;
    TracedCallback<Ptr<const CollectiveRun>> m_completeTrace;
    TracedCallback<uint32_t, Time> m_rankCompleteTrace;
};

} // namespace ns3

#endif // GPU_FABRIC_COLLECTIVE_RUN_H
