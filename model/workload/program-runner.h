/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_PROGRAM_RUNNER_H
#define GPU_FABRIC_PROGRAM_RUNNER_H

#include "ns3/collective-application.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"
#include "ns3/transport.h"

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief A communication step shared by several ranks: a collective (or a
 * point-to-point transfer) on a communicator of global ranks.
 */
struct ProgramComm
{
    std::string collective{"allreduce"}; //!< allreduce|allgather|reducescatter|alltoall|sendrecv
    std::string algorithm{"ring"};       //!< algorithm name (ignored for sendrecv)
    std::vector<uint32_t> members;       //!< global ranks, communicator order
    uint64_t bytes{0};                   //!< nccl-tests size (sendrecv: bytes sent)
    uint64_t chunkBytes{0};              //!< pipelining chunk (0: none)
    uint32_t domainSize{0};              //!< K for hierarchical / pxn
    std::string label;                   //!< e.g. "tp-allreduce layer 3 mb 1"
};

/**
 * \ingroup gpu-fabric
 * \brief One task of one rank: compute for a time, or take part in a
 * ProgramComm; it starts when the tasks it depends on (same rank) are done.
 */
struct ProgramTask
{
    enum class Kind : uint8_t
    {
        Compute, //!< busy for `seconds`
        Comm,    //!< this rank's part of comms[comm]
    };

    Kind kind{Kind::Compute};   //!< kind
    double seconds{0};          //!< compute time
    uint32_t comm{0};           //!< index into ParallelProgram::comms
    std::vector<uint32_t> deps; //!< indices of earlier tasks of the same rank
};

/**
 * \ingroup gpu-fabric
 * \brief Per-rank programs of a parallel job (e.g. one training iteration):
 * compute phases and communication with dependencies.
 *
 * Point-to-point transfers are comms of collective "sendrecv" with two
 * members, the first sending to the second.
 */
struct ParallelProgram
{
    uint32_t ranks{0};                           //!< number of global ranks
    std::vector<ProgramComm> comms;              //!< shared communication steps
    std::vector<std::vector<ProgramTask>> tasks; //!< per rank

    /// Throws FabricConfigError for a malformed program (bad rank, member,
    /// comm index, forward dependency, a rank taking part in a comm without a
    /// task for it).
    void Validate() const;

    /// \return messages and payload bytes the comms send, the up-front
    /// estimate ProgramRunner::Setup declares to its transport (ring
    /// algorithm counts; doubles, as a hostile program's may not fit 64 bits)
    std::pair<double, double> Work() const;
};

/**
 * \ingroup gpu-fabric
 * \brief Runs a ParallelProgram over a Transport: compute tasks are timed
 * events; a comm's schedule is built when its first member reaches it, and
 * each member's part starts when that member's dependencies are done; a
 * member's Comm task completes when its own operations have completed.
 */
class ProgramRunner : public Object
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    ProgramRunner();
    ~ProgramRunner() override;

    /**
     * \param program the programs (validated)
     * \param transport the message layer
     */
    void Setup(ParallelProgram program, Ptr<Transport> transport);

    /// Start every rank now.
    void Start();

    /**
     * Builds a comm's schedule in place of MakeSchedule when it returns one:
     * a fabric's own algorithms (the direct-connect schedules of
     * DirectConnectSchedules) for the comms they apply to, nothing for the
     * rest. The schedule's local rank i must be comm.members[i].
     */
    using ScheduleSource = std::function<std::optional<CollectiveSchedule>(const ProgramComm&)>;

    /// \param source the source (empty: MakeSchedule for every comm); before Start
    void SetScheduleSource(ScheduleSource source);

    /// \return true when every task of every rank has completed
    bool IsComplete() const;
    /// \return time the last task completed
    Time GetFinishTime() const;
    /// \param rank a rank \return when its last task completed
    Time GetRankFinishTime(uint32_t rank) const;
    /// \return total seconds each rank spent in comm tasks (per rank)
    const std::vector<double>& GetCommSeconds() const;
    /// \return the runs of the comms (null for comms not reached)
    const std::vector<Ptr<CollectiveRun>>& GetRuns() const;
    /**
     * \param comm a comm of the program
     * \return its result (GetRuns()[comm]->GetResult(); a default
     *         CollectiveResult, ranks 0, for a comm not reached); on rank 0
     *         of a distributed run after GatherResults, the whole comm's,
     *         combined from the ranks that ran it
     */
    CollectiveResult GetCommResult(uint32_t comm) const;

    /**
     * In a distributed run (a transport with IsDistributed()), each rank
     * runs the tasks of its own GPUs, and the getters describe them. Every
     * rank must call this after Simulator::Run(): rank 0's getters then
     * describe the whole program (finish times, comm seconds, completion,
     * failure reports of every rank; GetUnfinishedRanks; GetCommResult);
     * another rank's keep its own part. Nothing changes on one process.
     */
    void GatherResults();

    /// Invoked once when the whole program has completed (in a distributed
    /// run: this process's part of it; at Start if it has none).
    typedef Callback<void, Ptr<ProgramRunner>> CompletionCallback;
    /// \param cb the callback
    void SetCompletionCallback(CompletionCallback cb);

    /**
     * Invoked once, when the first comm fails: the transport gave up a
     * message of it (PacketTransport: MaxRetransmissions, a failed GPU, no
     * route), so the program will never complete. The ranks not held by the
     * failure go on; call Simulator::Stop() from here to end the run.
     */
    typedef Callback<void, Ptr<ProgramRunner>, const std::string&> FailureCallback;
    /// \param cb the callback, invoked with this runner and GetFailureReport()
    void SetFailureCallback(FailureCallback cb);
    /// \return true once a comm has failed (the program will not complete)
    bool IsFailed() const;
    /**
     * \return one line per failed comm, in the order they failed: its index,
     * label, collective and size, and the first failed operation of its run
     * (GetRuns()[comm]->GetFailureReport() has them all); empty unless failed
     */
    const std::string& GetFailureReport() const;
    /// \return the indices of the failed comms, in the order they failed
    const std::vector<uint32_t>& GetFailedComms() const;
    /**
     * \return the ranks with tasks left when called: after a run that ended
     * because no event was left, the ranks a failure holds; after a
     * Simulator::Stop(), also those that had not finished yet
     */
    std::vector<uint32_t> GetUnfinishedRanks() const;

    /**
     * Signature of the CommFailed trace.
     * \param comm index of the comm in the program
     * \param report its line of GetFailureReport()
     */
    typedef void (*CommFailedTracedCallback)(uint32_t comm, const std::string& report);

    /**
     * Signature of the TaskStarted and TaskCompleted traces.
     * \param rank the rank \param task the index of its task (GetProgram().tasks[rank])
     */
    typedef void (*TaskTracedCallback)(uint32_t rank, uint32_t task);

    /// \return the program set up (its comms' labels name what the traces report)
    const ParallelProgram& GetProgram() const;

  protected:
    void DoDispose() override;

  private:
    void Ready(uint32_t rank, uint32_t task);
    /// \return the run of \p comm, made now if it is not yet
    Ptr<CollectiveRun> RunOf(uint32_t comm);
    /// The sink of serial \p serial (a reserved one: a comm's run), made now
    /// (a message or note for it came from a rank that reached it first).
    MessageSink* SinkOf(uint64_t serial);
    /// Forget the serials reserved for the runs (distributed runs).
    void ReleaseSerials();
    void TaskDone(uint32_t rank, uint32_t task);
    /// This process's part of the program is done: the completion callback.
    void Finish();
    void CommRankDone(uint32_t comm, uint32_t local, Time when);
    /// Stop listening to the runs (they can outlive the runner: the
    /// transport holds a run while its messages are in flight).
    void DisconnectRuns();
    /// The run of \p comm reported its first failed message.
    void CommFailed(uint32_t comm, Ptr<const CollectiveRun> run, const std::string& report);

    ParallelProgram m_program;
    Ptr<Transport> m_transport;
    ScheduleSource m_source;                      //!< a fabric's own schedules (may be empty)
    std::vector<std::vector<uint32_t>> m_waiting; //!< unmet deps per task
    std::vector<std::vector<std::vector<uint32_t>>> m_dependents; //!< per task
    std::vector<std::vector<uint32_t>> m_commTask; //!< comm -> task index of each member
    std::vector<std::vector<double>> m_commStart;  //!< comm -> start time of each member
    std::vector<Ptr<CollectiveRun>> m_runs;        //!< comm -> its run
    std::vector<CollectiveResult> m_gathered;      //!< GatherResults on rank 0 (else empty)
    std::vector<uint8_t> m_local;                  //!< per rank: simulated by this process
    bool m_reserved{false};                        //!< serials reserved for the runs
    uint64_t m_firstSerial{0};                     //!< the first run's sink serial
    std::vector<uint32_t> m_left;                  //!< tasks left per rank
    std::vector<Time> m_rankFinish;                //!< per rank
    std::vector<double> m_commSeconds;             //!< per rank
    uint64_t m_tasksLeft{0};
    Time m_finish;
    CompletionCallback m_done;
    FailureCallback m_failedCallback;
    std::vector<uint32_t> m_failedComms; //!< in the order they failed
    std::string m_failure;               //!< GetFailureReport()
    TracedCallback<uint32_t, const std::string&> m_commFailedTrace;
    TracedCallback<uint32_t, uint32_t> m_taskStartedTrace;   //!< TaskStarted
    TracedCallback<uint32_t, uint32_t> m_taskCompletedTrace; //!< TaskCompleted
};

} // namespace ns3

#endif // GPU_FABRIC_PROGRAM_RUNNER_H
