/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "iteration-program.h"

#include "ns3/fabric-error.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

namespace ns3
{

void
IterationProgramOptions::Validate() const
{
    FabricRequire(tpGranularity == "layer" || tpGranularity == "micro-batch",
                  "TP granularity",
                  tpGranularity,
                  "layer or micro-batch");
    FabricRequire(!overlapDp || tpGranularity == "layer",
                  "DP overlap",
                  "with micro-batch granularity",
                  "layer granularity (buckets follow the blocks' backward passes)");
}

namespace
{

/// Key of a shared comm: (kind, a, b, c, d).
using CommKey = std::array<uint64_t, 5>;

enum KeyKind : uint64_t
{
    kTp = 0,
    kEp = 1,
    kPp = 2,
    kDp = 3,
    kExpertDp = 4,
};

/// Builds the per-rank programs; see IterationProgram.
class Builder
{
  public:
    Builder(const TrainingIteration& it, const IterationProgramOptions& opt)
        : m_it(it),
          m_par(it.GetParallelism()),
          m_model(it.Model()),
          m_opt(opt)
    {
        const uint32_t n = m_par.Gpus();
        m_out.program.ranks = n;
        m_out.program.tasks.resize(n);
        m_out.steps.resize(n);
        for (auto& v : m_callOf)
        {
            v.assign(n, kNoRank);
        }
        const auto& calls = m_it.Collectives();
        for (uint32_t c = 0; c < calls.size(); ++c)
        {
            const CollectiveCall& call = calls[c];
            int slot = -1;
            if (call.what == "tp-allreduce")
            {
                slot = call.phase == IterationPhase::Forward ? 0 : 1;
            }
            else if (call.what == "ep-alltoall")
            {
                slot = call.phase == IterationPhase::Forward ? 2 : 3;
            }
            else if (call.what == "dp-gradient")
            {
                slot = 4;
            }
            else if (call.what == "dp-expert-gradient")
            {
                slot = 5;
            }
            else if (call.what == "pp-activation")
            {
                slot = 6;
            }
            else if (call.what == "pp-gradient")
            {
                slot = 7;
            }
            NS_ABORT_MSG_IF(slot < 0, "unknown collective call " << call.what);
            for (uint32_t r : call.communicator)
            {
                m_callOf[slot][r] = c;
            }
        }
        m_rate = m_it.Options().gpuFlops * m_it.Options().computeEfficiency;
        m_tokens = static_cast<double>(m_it.MicroBatchTokens());
        m_aTp = m_par.Tp() > 1 ? m_model.tpRoundsPerBlock / 4 : 0;
        m_ep = m_model.IsMoe() && m_par.Ep() > 1;
    }

    IterationProgram Build()
    {
        for (uint32_t r = 0; r < m_par.Gpus(); ++r)
        {
            BuildRank(r);
        }
        m_out.program.Validate();
        return std::move(m_out);
    }

  private:
    /// Is block b an MoE block (with EP all-to-all)?
    bool IsMoeBlock(uint32_t b) const
    {
        return m_ep && (b + 1) % m_model.moeLayerInterval == 0;
    }

    /// Forward seconds of block b for one micro-batch on one GPU.
    double BlockSeconds(uint32_t b) const
    {
        return m_model.BlockForwardFlopsPerToken(b, m_it.Options().attentionFlops) * m_tokens /
               m_par.Tp() / m_rate;
    }

    /// The comm for \p key, created from \p make on first use.
    template <typename Make>
    uint32_t Comm(const CommKey& key, Make make)
    {
        auto it = m_comms.find(key);
        if (it != m_comms.end())
        {
            return it->second;
        }
        const auto idx = static_cast<uint32_t>(m_out.program.comms.size());
        ProgramComm comm;
        IterationCommInfo info;
        make(comm, info);
        comm.chunkBytes = m_opt.chunkBytes;
        m_out.program.comms.push_back(std::move(comm));
        m_out.info.push_back(info);
        m_comms.emplace(key, idx);
        return idx;
    }

    /// A comm from a CollectiveCall with \p bytes per execution.
    uint32_t CallComm(const CommKey& key,
                      uint32_t call,
                      uint64_t bytes,
                      uint32_t microBatch,
                      uint32_t layer,
                      const std::string& label)
    {
        return Comm(key, [&](ProgramComm& comm, IterationCommInfo& info) {
            const CollectiveCall& c = m_it.Collectives()[call];
            comm.collective = std::string(CollectiveTypeName(c.type));
            comm.algorithm = c.algorithm;
            comm.members = c.communicator;
            comm.bytes = bytes;
            comm.domainSize = c.domainSize;
            comm.label = label;
            info.dim = c.dim;
            info.phase = c.phase;
            info.call = call;
            info.stage = c.stage;
            info.microBatch = microBatch;
            info.layer = layer;
        });
    }

    /// Append a task to the chain of \p rank (depends on the chain's last
    /// task and on m_extra), \return its index.
    uint32_t Chain(uint32_t rank, ProgramTask t)
    {
        auto& tasks = m_out.program.tasks[rank];
        if (m_last != kNoRank)
        {
            t.deps.push_back(m_last);
        }
        t.deps.insert(t.deps.end(), m_extra.begin(), m_extra.end());
        m_extra.clear();
        std::sort(t.deps.begin(), t.deps.end());
        tasks.push_back(std::move(t));
        m_last = static_cast<uint32_t>(tasks.size() - 1);
        return m_last;
    }

    /// Append a task outside the chain, \return its index.
    uint32_t Side(uint32_t rank, ProgramTask t)
    {
        auto& tasks = m_out.program.tasks[rank];
        std::sort(t.deps.begin(), t.deps.end());
        tasks.push_back(std::move(t));
        return static_cast<uint32_t>(tasks.size() - 1);
    }

    void Compute(uint32_t rank, double seconds)
    {
        ProgramTask t;
        t.kind = ProgramTask::Kind::Compute;
        t.seconds = std::max(0.0, seconds);
        Chain(rank, std::move(t));
    }

    void ChainComm(uint32_t rank, uint32_t comm)
    {
        ProgramTask t;
        t.kind = ProgramTask::Kind::Comm;
        t.comm = comm;
        Chain(rank, std::move(t));
    }

    /// The PP transfer of micro-batch \p mb from \p src (stage s) to \p dst.
    uint32_t PpComm(uint32_t src, uint32_t dst, uint32_t mb, bool forward)
    {
        const uint32_t call = m_callOf[forward ? 6 : 7][src];
        NS_ABORT_MSG_IF(call == kNoRank, "no PP call for rank " << src);
        return Comm({kPp, src, dst, mb, forward ? 0u : 1u}, [&](ProgramComm& comm, auto& info) {
            comm.collective = "sendrecv";
            comm.algorithm = "direct";
            comm.members = {src, dst};
            comm.bytes = m_it.ActivationBytesPerMicroBatch();
            comm.domainSize = 0;
            comm.label = fmt::format("{} mb {} {}->{}",
                                     forward ? "pp-activation" : "pp-gradient",
                                     mb,
                                     src,
                                     dst);
            info.dim = ParallelDim::PP;
            info.phase = forward ? IterationPhase::Forward : IterationPhase::Backward;
            info.call = call;
            info.stage = m_par.Coord(src).pp;
            info.microBatch = mb;
            info.layer = kNoRank;
        });
    }

    /// TP AllReduce k of block b in a pass of micro-batch mb.
    void TpAllReduce(uint32_t rank, bool forward, uint32_t mb, uint32_t b, uint32_t k)
    {
        const uint32_t call = m_callOf[forward ? 0 : 1][rank];
        const CollectiveCall& c = m_it.Collectives()[call];
        ChainComm(rank,
                  CallComm({kTp, call, mb, b, k},
                           call,
                           c.bytes,
                           mb,
                           b,
                           fmt::format("tp-allreduce {} mb {} block {} #{} group {}",
                                       forward ? "fwd" : "bwd",
                                       mb,
                                       b,
                                       k,
                                       c.communicator.front())));
    }

    /// EP AllToAll (dispatch k = 0, combine k = 1) of MoE block b.
    void EpAllToAll(uint32_t rank, bool forward, uint32_t mb, uint32_t b, uint32_t k)
    {
        const uint32_t call = m_callOf[forward ? 2 : 3][rank];
        NS_ABORT_MSG_IF(call == kNoRank, "no EP call for rank " << rank);
        const CollectiveCall& c = m_it.Collectives()[call];
        ChainComm(rank,
                  CallComm({kEp, call, mb, b, k},
                           call,
                           c.bytes,
                           mb,
                           b,
                           fmt::format("ep-alltoall {} {} mb {} block {} group {}",
                                       k == 0 ? "dispatch" : "combine",
                                       forward ? "fwd" : "bwd",
                                       mb,
                                       b,
                                       c.communicator.front())));
    }

    /// The chain of one block's pass at layer granularity.
    void BlockPass(uint32_t rank, bool forward, uint32_t mb, uint32_t b)
    {
        const bool moe = IsMoeBlock(b);
        const uint32_t pieces = std::max(m_aTp, moe ? 2u : 1u);
        const double total = BlockSeconds(b) * (forward ? 1.0 : 2.0);
        // piece 0 is the attention, the others share the MLP (an MoE block's
        // last one is its experts), each as long as its FLOPs
        const double attention =
            pieces == 1
                ? total
                : total * m_model.AttentionForwardFlopsPerToken(m_it.Options().attentionFlops) /
                      m_model.BlockForwardFlopsPerToken(b, m_it.Options().attentionFlops);
        for (uint32_t i = 0; i < pieces; ++i)
        {
            // the backward pass runs the block's parts in reverse (MLP first)
            const uint32_t k = forward ? i : pieces - 1 - i;
            const bool expertPiece = moe && k + 1 == pieces;
            if (expertPiece)
            {
                EpAllToAll(rank, forward, mb, b, 0);
            }
            Compute(rank, k == 0 ? attention : (total - attention) / (pieces - 1));
            if (expertPiece)
            {
                EpAllToAll(rank, forward, mb, b, 1);
            }
            if (k < m_aTp)
            {
                TpAllReduce(rank, forward, mb, b, k);
            }
        }
    }

    /// One pass aggregated: compute, one TP AllReduce, one EP AllToAll.
    void AggregatedPass(uint32_t rank, bool forward, uint32_t mb, uint32_t stage)
    {
        Compute(rank, forward ? m_it.ForwardSeconds(stage) : m_it.BackwardSeconds(stage));
        const uint32_t L = m_it.LayersPerStage();
        if (m_aTp > 0)
        {
            const uint32_t call = m_callOf[forward ? 0 : 1][rank];
            const CollectiveCall& c = m_it.Collectives()[call];
            ChainComm(rank,
                      CallComm({kTp, call, mb, kNoRank, 0},
                               call,
                               c.bytes * m_aTp * L,
                               mb,
                               kNoRank,
                               fmt::format("tp-allreduce {} mb {} (x{} aggregated) group {}",
                                           forward ? "fwd" : "bwd",
                                           mb,
                                           m_aTp * L,
                                           c.communicator.front())));
        }
        const uint32_t moe = m_ep ? m_it.MoeLayersInStage(stage) : 0;
        if (moe > 0)
        {
            const uint32_t call = m_callOf[forward ? 2 : 3][rank];
            const CollectiveCall& c = m_it.Collectives()[call];
            ChainComm(rank,
                      CallComm({kEp, call, mb, kNoRank, 0},
                               call,
                               c.bytes * 2 * moe,
                               mb,
                               kNoRank,
                               fmt::format("ep-alltoall {} mb {} (x{} aggregated) group {}",
                                           forward ? "fwd" : "bwd",
                                           mb,
                                           2 * moe,
                                           c.communicator.front())));
        }
    }

    /// Dense gradient bytes of block b on one GPU.
    double BlockGradientBytes(uint32_t b) const
    {
        const bool moe = m_model.IsMoe() && (b + 1) % m_model.moeLayerInterval == 0;
        const double params = moe ? m_model.AttentionParams() : m_model.DenseBlockParams();
        return params * m_model.bytesPerParam / m_par.Tp();
    }

    void BuildRank(uint32_t rank)
    {
        const RankCoord c = m_par.Coord(rank);
        const uint32_t s = c.pp;
        const uint32_t P = m_par.Pp();
        const uint32_t L = m_it.LayersPerStage();
        const uint32_t first = s * L;
        const bool perLayer = m_opt.tpGranularity == "layer";
        const bool lastStage = s + 1 == P;
        const double head = lastStage ? m_it.ForwardSeconds(s) -
                                            [&] {
                                                double sum = 0;
                                                for (uint32_t b = first; b < first + L; ++b)
                                                {
                                                    sum += BlockSeconds(b);
                                                }
                                                return sum;
                                            }()
                                      : 0.0;
        const uint32_t prevRank = s > 0 ? m_par.Rank(c.tp, s - 1, c.dp) : kNoRank;
        const uint32_t nextRank = !lastStage ? m_par.Rank(c.tp, s + 1, c.dp) : kNoRank;

        // DP buckets (overlapped): bucket k holds blocks [lo_k, hi_k) counted
        // from the top of the stage; issued when its lowest block is done.
        const uint32_t dpCall = m_callOf[4][rank];
        const bool overlap = m_opt.overlapDp && dpCall != kNoRank;
        const uint32_t buckets =
            overlap ? std::min(L, m_opt.dpBuckets == 0 ? L : m_opt.dpBuckets) : 0;
        std::vector<uint32_t> bucketOfBlock(L, 0);
        std::vector<uint64_t> bucketBytes(buckets, 0);
        if (overlap)
        {
            const uint64_t total = m_it.Collectives()[dpCall].bytes;
            std::vector<double> exact(buckets, 0.0);
            for (uint32_t j = 0; j < L; ++j)
            {
                // top block (j = L-1) in bucket 0
                const uint32_t fromTop = L - 1 - j;
                bucketOfBlock[j] = static_cast<uint32_t>(uint64_t{fromTop} * buckets / L);
                exact[bucketOfBlock[j]] += BlockGradientBytes(first + j);
            }
            uint64_t sum = 0;
            for (uint32_t k = 0; k + 1 < buckets; ++k)
            {
                bucketBytes[k] = static_cast<uint64_t>(std::llround(exact[k]));
                sum += bucketBytes[k];
            }
            bucketBytes[buckets - 1] = total - std::min(total, sum);
        }
        uint32_t lastBucketTask = kNoRank;

        m_last = kNoRank;
        m_extra.clear();
        const std::vector<PipelineStep> order = m_it.OneFOneBOrder(s);
        for (size_t si = 0; si < order.size(); ++si)
        {
            const PipelineStep step = order[si];
            const bool finalBackward = si + 1 == order.size();
            const uint32_t mb = step.microBatch;
            IterationStepTasks marks;
            marks.step = step;
            marks.firstTask = static_cast<uint32_t>(m_out.program.tasks[rank].size());
            const uint32_t from = step.forward ? prevRank : nextRank;
            if (from != kNoRank)
            {
                ProgramTask recv;
                recv.kind = ProgramTask::Kind::Comm;
                recv.comm = PpComm(from, rank, mb, step.forward);
                m_extra.push_back(Side(rank, std::move(recv)));
            }
            if (step.forward)
            {
                if (perLayer)
                {
                    for (uint32_t j = 0; j < L; ++j)
                    {
                        BlockPass(rank, true, mb, first + j);
                    }
                    if (lastStage)
                    {
                        Compute(rank, head);
                    }
                }
                else
                {
                    AggregatedPass(rank, true, mb, s);
                }
            }
            else
            {
                if (perLayer)
                {
                    if (lastStage)
                    {
                        Compute(rank, 2.0 * head);
                    }
                    for (uint32_t j = L; j-- > 0;)
                    {
                        BlockPass(rank, false, mb, first + j);
                        if (overlap && finalBackward &&
                            (j == 0 || bucketOfBlock[j - 1] != bucketOfBlock[j]))
                        {
                            const uint32_t k = bucketOfBlock[j];
                            ProgramTask t;
                            t.kind = ProgramTask::Kind::Comm;
                            t.comm = CallComm(
                                {kDp, dpCall, k, 0, 0},
                                dpCall,
                                bucketBytes[k],
                                kNoRank,
                                kNoRank,
                                fmt::format("dp-gradient bucket {} stage {} group {}",
                                            k,
                                            s,
                                            m_it.Collectives()[dpCall].communicator.front()));
                            t.deps.push_back(m_last);
                            if (lastBucketTask != kNoRank)
                            {
                                t.deps.push_back(lastBucketTask);
                            }
                            lastBucketTask = Side(rank, std::move(t));
                        }
                    }
                }
                else
                {
                    AggregatedPass(rank, false, mb, s);
                }
            }
            marks.lastTask = m_last;
            m_out.steps[rank].push_back(marks);
            const uint32_t to = step.forward ? nextRank : prevRank;
            if (to != kNoRank)
            {
                ProgramTask send;
                send.kind = ProgramTask::Kind::Comm;
                send.comm = PpComm(rank, to, mb, step.forward);
                send.deps.push_back(m_last);
                Side(rank, std::move(send));
            }
        }
        const uint32_t end = m_last;
        // a gradient allreduce after the rank's last task
        const auto gradient = [&](auto kind, uint32_t call, const char* what) {
            ProgramTask t;
            t.kind = ProgramTask::Kind::Comm;
            t.comm = CallComm({kind, call, 0, 0, 0},
                              call,
                              m_it.Collectives()[call].bytes,
                              kNoRank,
                              kNoRank,
                              fmt::format("{} stage {} group {}",
                                          what,
                                          s,
                                          m_it.Collectives()[call].communicator.front()));
            t.deps.push_back(end);
            Side(rank, std::move(t));
        };
        if (dpCall != kNoRank && !overlap)
        {
            gradient(kDp, dpCall, "dp-gradient");
        }
        const uint32_t expertCall = m_callOf[5][rank];
        if (expertCall != kNoRank)
        {
            gradient(kExpertDp, expertCall, "dp-expert-gradient");
        }
    }

    const TrainingIteration& m_it;
    const Parallelism& m_par;
    const LlmModel& m_model;
    IterationProgramOptions m_opt;
    IterationProgram m_out;
    /// per slot (tp fwd, tp bwd, ep fwd, ep bwd, dp, expert dp, pp fwd, pp bwd): rank -> call
    std::array<std::vector<uint32_t>, 8> m_callOf;
    std::map<CommKey, uint32_t> m_comms;
    double m_rate{1};
    double m_tokens{0};
    uint32_t m_aTp{0};
    bool m_ep{false};
    uint32_t m_last{kNoRank};      //!< last task of the current rank's chain
    std::vector<uint32_t> m_extra; //!< extra deps of the next chained task
};

} // namespace

IterationProgram
BuildIterationProgram(const TrainingIteration& iteration, const IterationProgramOptions& options)
{
    options.Validate();
    return Builder(iteration, options).Build();
}

Ptr<ProgramRunner>
StartProgram(const ParallelProgram& program,
             Ptr<Transport> transport,
             const ProgramRunner::ScheduleSource& source)
{
    Ptr<ProgramRunner> runner = CreateObject<ProgramRunner>();
    runner->Setup(program, transport);
    runner->SetScheduleSource(source);
    Simulator::ScheduleNow(&ProgramRunner::Start, runner);
    return runner;
}

Ptr<ProgramRunner>
RunProgram(const ParallelProgram& program,
           Ptr<Transport> transport,
           const ProgramRunner::ScheduleSource& source)
{
    Ptr<ProgramRunner> runner = StartProgram(program, transport, source);
    Simulator::Run();
    runner->GatherResults(); // a distributed run's results, on rank 0
    return runner;
}

} // namespace ns3
