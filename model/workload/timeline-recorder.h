/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_TIMELINE_RECORDER_H
#define GPU_FABRIC_TIMELINE_RECORDER_H

#include "ns3/nstime.h"
#include "ns3/run-observer.h"

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace ns3
{

class CollectiveRun;
class ProgramRunner;
class Transport;

/**
 * \ingroup gpu-fabric
 * \brief Records what every rank did and when: program tasks (compute and
 * comms, by their labels), collectives run alone, and every message, as a
 * Chrome / Perfetto trace (JSON) a trace viewer loads.
 *
 * It connects to trace sources only: a transport's MessageComplete (both
 * backends), a ProgramRunner's TaskStarted and TaskCompleted, a
 * CollectiveRun's Complete. A collective that belongs to a program is shown
 * as that program's comm task; one run alone (collective-bench) as a span per
 * rank from the collective's start to that rank's finish, so the longest
 * span is the collective's measured time. Each backend attached is a run of
 * its own: a process in the trace ("pid"), with a thread per rank ("tid").
 *
 * \code
 *   auto timeline = CreateObject<TimelineRecorder>();
 *   RunObserver::Add(timeline); // hears of every backend, collective, program
 *   ... install a backend, run ...
 *   RunObserver::Remove(timeline);
 *   std::string text = timeline->ToJson().dump();
 * \endcode
 */
class TimelineRecorder : public RunObserver
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    TimelineRecorder();

    /// \param object a Fabric or FlowTransport (a new run, its messages
    ///        recorded), a CollectiveRun or a ProgramRunner (others ignored)
    void Observe(Ptr<Object> object) override;

    /**
     * Start a run: its messages are recorded, and collectives and programs
     * attached from now on belong to it.
     * \param transport the backend's transport \param backend its name
     */
    void AttachTransport(Ptr<Transport> transport, const std::string& backend);
    /// \param run a collective, recorded when it completes
    void AttachCollective(Ptr<CollectiveRun> run);
    /// \param runner a program, its tasks recorded as they complete
    void AttachProgram(Ptr<ProgramRunner> runner);

    /// What a span is.
    enum class Kind : uint8_t
    {
        Compute,    //!< a program's compute task
        Comm,       //!< a program's comm task (the rank's part of a collective)
        Collective, //!< a rank's part of a collective run alone
        Message,    //!< a message, from its send to the delivery of its last byte
    };

    /// One span of the timeline.
    struct Span
    {
        uint32_t run{0};          //!< the run (order of AttachTransport)
        uint32_t rank{0};         //!< the rank (a message: its sender)
        Kind kind{Kind::Compute}; //!< what it is
        Time start;               //!< when it began
        Time end;                 //!< when it ended
        std::string name;         //!< a comm's label, a collective's name (empty for the others)
        uint32_t peer{0};         //!< a message's receiver, a comm's number, a collective's
        uint64_t bytes{0};        //!< a message's or a comm's bytes
    };

    /// \return every span recorded, in the order they ended (after
    ///         GatherToRoot, rank 0's: every rank's, ties in end time in a
    ///         fixed order: run, rank, kind, start, name, peer, bytes)
    const std::vector<Span>& GetSpans() const;

    /**
     * In a distributed run (FabricDistributed enabled on more than one
     * process), every process records the spans of its own GPUs: their
     * tasks, their parts of collectives and the messages delivered to them.
     * This gathers them on rank 0, which then holds the whole run's spans (a
     * collective's spans start at its earliest start over the ranks), in the
     * order a one-process run gives; the other ranks keep none. Every rank
     * must call it, after its last run. Does nothing on one process.
     */
    void GatherToRoot();
    /// \return the runs recorded
    uint32_t GetNRuns() const;
    /// \return spans left out once MaxSpans were recorded
    uint64_t GetDropped() const;

    /**
     * \return the Chrome trace event format: {"traceEvents": [...],
     *         "displayTimeUnit": "ns"}; compute, comm and collective spans
     *         as complete events ("ph": "X", ts and dur in microseconds),
     *         messages as async events ("b" / "e", category "message") on
     *         their sender's thread, process and thread names as metadata;
     *         "otherData": {"dropped_spans"} counts those past MaxSpans.
     */
    nlohmann::json ToJson() const;

    /// Write ToJson()'s document to \p out, an event at a time (for large
    /// runs: the document in memory takes about ten times its text).
    /// \param out the stream
    void WriteJson(std::ostream& out) const;

  private:
    /// \param emit called with each event of ToJson()'s traceEvents, in order
    void ForEachEvent(const std::function<void(const nlohmann::json&)>& emit) const;
    /// The run that objects attached now belong to (one made if none).
    uint32_t CurrentRun();
    void MessageDone(uint32_t run, uint32_t src, uint32_t dst, uint64_t bytes, Time sent);
    void TaskStarted(const ProgramRunner* runner, uint32_t rank, uint32_t task);
    void TaskCompleted(const ProgramRunner* runner, uint32_t run, uint32_t rank, uint32_t task);
    void CollectiveDone(uint32_t run, uint32_t number, Ptr<const CollectiveRun> collective);
    /// The spans in the order they ended, ties in a fixed order (so that the
    /// trace does not depend on how events of one instant were processed).
    /// \return pointers into m_spans
    std::vector<const Span*> SortedSpans() const;
    /// Sort m_spans as SortedSpans() orders them.
    void SortSpans();

    /// Keep \p s unless MaxSpans are kept already. \param s the span
    void Keep(Span&& s);

    bool m_messages{true};               //!< RecordMessages
    uint32_t m_maxSpans{1000000};        //!< MaxSpans
    uint64_t m_dropped{0};               //!< spans past MaxSpans
    std::vector<std::string> m_backends; //!< per run
    std::vector<bool> m_hasProgram;      //!< per run: collectives are its comms
    std::vector<Span> m_spans;
    uint32_t m_collectives{0}; //!< collectives attached (run alone), numbering them
    /// per runner: (rank << 32 | task) -> start of tasks in progress
    std::map<const ProgramRunner*, std::map<uint64_t, Time>> m_started;
};

} // namespace ns3

#endif // GPU_FABRIC_TIMELINE_RECORDER_H
