/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Python bindings of gpu-fabric (pybind11): the module's own API, the way a
// scenario program uses it. Debian's ns-3.37 has no Python bindings of its
// own, so the few ns-3 calls a scenario needs (Simulator, attribute defaults,
// the RNG seed) are bound here too. Names follow the C++ API (as ns-3's own
// Python bindings do), so the C++ documentation applies; times are seconds
// (float) and rates bits per second (int) instead of ns3::Time / DataRate.
//
// ns3::Ptr<T> is the holder of every Object-derived class (intrusive: the
// reference count lives in the object). Simulator.Run() keeps the GIL, so
// Python callbacks from simulation events run on the calling thread with it;
// their holders still take the GIL to release the Python object, since ns-3
// may drop a callback from anywhere.
//
// Lifetime: as ns-3 keeps every Node until Simulator::Destroy, the module
// keeps every fabric and flow-level transport it installed until
// Simulator.Destroy() (dropping the Python object does not end a run), and
// refuses to use one from before it (ns-3 objects do not survive Destroy).
#include "ns3/analytical-model.h"
#include "ns3/bfb-schedule.h"
#include "ns3/collective-helper.h"
#include "ns3/config.h"
#include "ns3/fabric-cost.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-helper.h"
#include "ns3/fabric-routing.h"
#include "ns3/fault-helper.h"
#include "ns3/flow-helper.h"
#include "ns3/hb-domain-preset.h"
#include "ns3/iteration-program.h"
#include "ns3/llm-model.h"
#include "ns3/program-flags.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/topology-builders.h"
#include "ns3/topology-finder.h"
#include "ns3/topology-helper.h"
#include "ns3/traffic-matrix.h"

#include <csignal>
#include <fmt/format.h>
#include <memory>
#include <optional>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <unordered_set>
#include <vector>

namespace py = pybind11;
using namespace ns3;

PYBIND11_DECLARE_HOLDER_TYPE(T, ns3::Ptr<T>, true);

namespace pybind11
{
namespace detail
{
/// ns3::Ptr has no get(): pybind11 reaches the object through PeekPointer.
template <typename T>
struct holder_helper<ns3::Ptr<T>>
{
    static T* get(const ns3::Ptr<T>& p)
    {
        return ns3::PeekPointer(p);
    }
};
} // namespace detail
} // namespace pybind11

namespace
{

/// A Python callable kept by an ns-3 callback; released under the GIL.
class PyCallable
{
  public:
    explicit PyCallable(py::object f)
        : m_f(std::move(f))
    {
    }

    ~PyCallable()
    {
        if (!Py_IsInitialized() || _Py_IsFinalizing())
        {
            m_f.release(); // Python is gone or going: nothing left to release
            return;
        }
        py::gil_scoped_acquire gil;
        m_f = py::object();
    }

    PyCallable(const PyCallable&) = delete;
    PyCallable& operator=(const PyCallable&) = delete;

    /// Call it with \p args under the GIL.
    template <typename... Args>
    void operator()(Args&&... args) const
    {
        py::gil_scoped_acquire gil;
        m_f(std::forward<Args>(args)...);
    }

  private:
    py::object m_f;
};

/// \return \p f as a shared holder, or null for None
std::shared_ptr<PyCallable>
Hold(const py::object& f)
{
    if (f.is_none())
    {
        return nullptr;
    }
    if (!PyCallable_Check(f.ptr()))
    {
        throw FabricConfigError("callback",
                                py::str(py::repr(f)).cast<std::string>(),
                                "a callable or None");
    }
    return std::make_shared<PyCallable>(f);
}

/// A number of seconds within ns-3's Time range as a Time.
Time
SecondsArg(const std::string& what, double s)
{
    // Time counts nanoseconds in 64 bits: about 9.2e9 s
    const double most = Time::Max().GetSeconds() / 2;
    FabricRequire(std::isfinite(s) && s >= 0 && s <= most,
                  what,
                  s,
                  fmt::format("a number of seconds from 0 to {:.3g} (ns-3's Time range)", most));
    return Seconds(s);
}

/// What the module installed since the last Simulator.Destroy() (see the file comment).
struct Installed
{
    std::vector<Ptr<Fabric>> fabrics;
    std::vector<Ptr<FlowTransport>> flows;
    std::unordered_set<const Transport*> live; //!< transports that may still send
};

Installed&
GetInstalled()
{
    static Installed installed;
    return installed;
}

/// Simulator.Run() calls in progress (Run may nest in a callback).
int g_running = 0;
/// SIGINT arrived during Run.
volatile std::sig_atomic_t g_interrupted = 0;

/// Throw unless \p t was installed since the last Simulator.Destroy().
void
RequireLive(const Transport* t)
{
    FabricRequire(t != nullptr && GetInstalled().live.count(t) > 0,
                  "transport",
                  t == nullptr ? "None" : "one disposed or from before Simulator.Destroy()",
                  "one FabricHelper or FlowHelper installed since");
}

/// The transport of \p fabric: ConfigError for None or a disposed fabric.
Ptr<PacketTransport>
TransportOf(const Ptr<Fabric>& fabric)
{
    FabricRequire(fabric != nullptr, "fabric", "None", "a Fabric");
    Ptr<PacketTransport> t = fabric->GetTransport();
    FabricRequire(t != nullptr,
                  "fabric",
                  "disposed (Fabric.Dispose or Simulator.Destroy)",
                  "one installed since");
    return t;
}

/**
 * A FaultHelper method taking its time last, as Python calls it: the same
 * arguments with the time in seconds.
 * \tparam A the arguments before the time
 */
template <typename... A>
struct AtSeconds
{
    void (FaultHelper::*method)(A..., Time) const; //!< the method

    /// Call it with \p at seconds as its time.
    void operator()(const FaultHelper& h, A... args, double at) const
    {
        (h.*method)(args..., SecondsArg("at", at));
    }
};

/// Dispose of everything installed, then destroy the simulator.
void
DestroyAll()
{
    FabricRequire(g_running == 0,
                  "Simulator.Destroy",
                  "called during Simulator.Run()",
                  "after Run() returns (Stop() ends a run from a callback)");
    Installed& in = GetInstalled();
    for (auto& f : in.fabrics)
    {
        f->Dispose();
    }
    for (auto& f : in.flows)
    {
        f->Dispose();
    }
    in = Installed();
    Simulator::Destroy();
}

/// While a Simulator.Run() is in progress: counted, and the outermost one
/// has Ctrl-C stop the simulator (restored on the way out, exceptions too).
class RunScope
{
  public:
    RunScope()
        : m_outer(g_running == 0)
    {
        if (m_outer)
        {
            struct sigaction stop
            {
            };

            stop.sa_handler = [](int) {
                g_interrupted = 1;
                Simulator::Stop(); // sets a flag the event loop reads
            };
            sigemptyset(&stop.sa_mask);
            g_interrupted = 0;
            sigaction(SIGINT, &stop, &m_previous);
        }
        ++g_running;
    }

    ~RunScope()
    {
        --g_running;
        if (m_outer)
        {
            sigaction(SIGINT, &m_previous, nullptr);
        }
    }

    RunScope(const RunScope&) = delete;
    RunScope& operator=(const RunScope&) = delete;

    /// \return whether Ctrl-C stopped the outermost run
    bool Interrupted() const
    {
        return m_outer && g_interrupted;
    }

  private:
    bool m_outer; //!< not nested in another Run

    struct sigaction m_previous
    {
    }; //!< SIGINT's handler before
};

/// Simulator::Run with Ctrl-C stopping it (raised as KeyboardInterrupt).
void
RunSimulator()
{
    bool interrupted = false;
    {
        RunScope scope;
        Simulator::Run();
        interrupted = scope.Interrupted();
    }
    if (interrupted)
    {
        PyErr_SetNone(PyExc_KeyboardInterrupt);
        throw py::error_already_set();
    }
}

/// CollectiveHelper and the transport it drives (kept alive, checked live).
struct PyCollectiveHelper
{
    CollectiveHelper helper;
    Ptr<Transport> transport;
};

} // namespace

PYBIND11_MODULE(gpu_fabric, m)
{
    m.doc() = "gpu-fabric: GPU cluster networks (rail-only, fat-trees, direct-connect) on ns-3";

    // Bad parameters raise ConfigError (a ValueError) with the message the
    // C++ API gives: the parameter, the value and what is allowed.
    static py::exception<FabricConfigError> configError(m, "ConfigError", PyExc_ValueError);
    py::register_exception_translator([](std::exception_ptr p) {
        try
        {
            if (p)
            {
                std::rethrow_exception(p);
            }
        }
        catch (const FabricConfigError& e)
        {
            configError(e.what());
        }
    });

    // ---- ns-3: the simulator, attribute defaults, the RNG --------------------
    // static members only: never constructed nor deleted from Python
    py::class_<Simulator, std::unique_ptr<Simulator, py::nodelete>>(
        m,
        "Simulator",
        "ns-3's simulator (times in seconds)")
        .def_static("Run",
                    &RunSimulator,
                    "Run until no event is left, Stop, or Ctrl-C (KeyboardInterrupt; Run "
                    "resumes the run)")
        .def_static(
            "Stop",
            [](double s) { Simulator::Stop(SecondsArg("stop time", s)); },
            py::arg("delay_s"),
            "Stop after delay_s seconds of simulated time")
        .def_static(
            "Now",
            [] { return Simulator::Now().GetSeconds(); },
            "Simulated time, seconds")
        .def_static("Destroy",
                    &DestroyAll,
                    "Dispose of every fabric and flow-level transport installed, then of every "
                    "event and node; objects from before cannot be used again")
        .def_static(
            "Schedule",
            [](double delay, const py::object& f) {
                const Time d = SecondsArg("delay", delay);
                const auto held = Hold(f);
                FabricRequire(held != nullptr, "callback", "None", "a callable");
                Simulator::Schedule(d, [held] { (*held)(); });
            },
            py::arg("delay_s"),
            py::arg("callback"),
            "Call callback() delay_s seconds of simulated time from now")
        .def_static("GetEventCount", &Simulator::GetEventCount, "Events executed so far");
    m.def(
        "SetDefault",
        [](const std::string& name, const std::string& value) {
            SetDefaultFromText(name, name, value);
        },
        py::arg("name"),
        py::arg("value"),
        "Set an attribute default (\"ns3::FabricSwitch::PfcXoff\", \"1048576\") or a global value "
        "(\"SchedulerType\", \"ns3::HeapScheduler\"); raises ConfigError for an unknown name "
        "or a value it does not take");
    m.def(
        "SetSeed",
        [](uint32_t seed) {
            FabricRequire(seed >= 1, "seed", seed, "an integer >= 1");
            RngSeedManager::SetSeed(seed);
        },
        py::arg("seed"));
    m.def("SetRun", &RngSeedManager::SetRun, py::arg("run"));

    // ---- platforms and models ------------------------------------------------
    py::class_<HbDomainPreset>(m, "HbDomainPreset", "An HB (NVLink) domain platform")
        .def_static("Get", &HbDomainPreset::Get, py::arg("name"))
        .def_static("Names", &HbDomainPreset::Names)
        .def_static("FromAttributes",
                    &TopologyHelper::GetPlatform,
                    py::arg("name"),
                    "The preset with the ns3::HbDomain::* attribute defaults set by SetDefault "
                    "applied (named \"<name>+attributes\" when one changed it), as the programs' "
                    "--preset does")
        .def_static(
            "Custom",
            [](uint32_t k, uint64_t nvlinkBps, uint64_t nicBps, uint32_t planes) {
                FabricRequire(nvlinkBps > 0, "NVLink rate (bps)", nvlinkBps, "a positive rate");
                FabricRequire(nicBps > 0, "NIC rate (bps)", nicBps, "a positive rate");
                return HbDomainPreset::Custom(k, DataRate(nvlinkBps), DataRate(nicBps), planes);
            },
            py::arg("gpus_per_domain"),
            py::arg("nvlink_rate_bps"),
            py::arg("nic_rate_bps"),
            py::arg("nvswitch_planes") = 1)
        .def_readwrite("name", &HbDomainPreset::name)
        .def_readwrite("gpusPerDomain", &HbDomainPreset::gpusPerDomain)
        .def_property(
            "nvlinkRateBps",
            [](const HbDomainPreset& p) { return p.nvlinkRate.GetBitRate(); },
            [](HbDomainPreset& p, uint64_t bps) { p.nvlinkRate = DataRate(bps); })
        .def_property(
            "nicRateBps",
            [](const HbDomainPreset& p) { return p.nicRate.GetBitRate(); },
            [](HbDomainPreset& p, uint64_t bps) { p.nicRate = DataRate(bps); })
        .def_readwrite("gpuFlops", &HbDomainPreset::gpuFlops)
        .def_readwrite("nvswitchPlanes", &HbDomainPreset::nvswitchPlanes)
        .def_property(
            "nvlinkLatencyS",
            [](const HbDomainPreset& p) { return p.nvlinkLatency.GetSeconds(); },
            [](HbDomainPreset& p, double s) { p.nvlinkLatency = SecondsArg("NVLink latency", s); })
        .def_readonly("source", &HbDomainPreset::source)
        .def("Validate", &HbDomainPreset::Validate)
        .def("__repr__", [](const HbDomainPreset& p) {
            return "<HbDomainPreset " + p.name + " K=" + std::to_string(p.gpusPerDomain) + ">";
        });

    py::class_<LlmModel>(m, "LlmModel", "A transformer model preset (rail-only paper's table)")
        .def_static("Get", &LlmModel::Get, py::arg("name"))
        .def_static("Names", &LlmModel::Names)
        .def_static("Custom",
                    &LlmModel::Custom,
                    py::arg("layers"),
                    py::arg("hidden_size"),
                    py::arg("heads"),
                    py::arg("seq_length"),
                    py::arg("vocab_size"),
                    py::arg("global_batch_tokens"),
                    py::arg("ffn_multiplier") = 4.0,
                    py::arg("experts") = 0,
                    py::arg("top_k") = 0)
        .def_readonly("name", &LlmModel::name)
        .def_readonly("layers", &LlmModel::layers)
        .def_readonly("hiddenSize", &LlmModel::hiddenSize)
        .def_readonly("heads", &LlmModel::heads)
        .def_readonly("seqLength", &LlmModel::seqLength)
        .def_readonly("experts", &LlmModel::experts)
        .def_readonly("globalBatchTokens", &LlmModel::globalBatchTokens)
        .def_readonly("tpRoundsPerBlock", &LlmModel::tpRoundsPerBlock)
        .def_readonly("source", &LlmModel::source);

    // ---- Eq. 1 of the rail-only paper ------------------------------------------
    py::class_<AnalyticalParams>(m,
                                 "AnalyticalParams",
                                 "The variables of Eq. 1 (B_F and B_S in bytes per second)")
        .def_static("From",
                    &AnalyticalParams::From,
                    py::arg("model"),
                    py::arg("platform"),
                    py::arg("gpus"),
                    py::arg("attention_flops") = false)
        .def_readwrite("N", &AnalyticalParams::N)
        .def_readwrite("K", &AnalyticalParams::K)
        .def_readwrite("l", &AnalyticalParams::l)
        .def_readwrite("d_model", &AnalyticalParams::d_model)
        .def_readwrite("S_T", &AnalyticalParams::S_T)
        .def_readwrite("b", &AnalyticalParams::b)
        .def_readwrite("M_cc", &AnalyticalParams::M_cc)
        .def_readwrite("M_flop", &AnalyticalParams::M_flop)
        .def_readwrite("C", &AnalyticalParams::C)
        .def_readwrite("B_F", &AnalyticalParams::B_F)
        .def_readwrite("B_S", &AnalyticalParams::B_S)
        .def_readwrite("activationBytes", &AnalyticalParams::activationBytes);
    py::class_<IterationTimeBreakdown>(m,
                                       "IterationTimeBreakdown",
                                       "Terms of Eq. 1: N_M, N_Ds, N_Df and times in seconds")
        .def_readonly("N_M", &IterationTimeBreakdown::N_M)
        .def_readonly("N_Ds", &IterationTimeBreakdown::N_Ds)
        .def_readonly("N_Df", &IterationTimeBreakdown::N_Df)
        .def_readonly("compute", &IterationTimeBreakdown::compute)
        .def_readonly("dpRail", &IterationTimeBreakdown::dpRail)
        .def_readonly("dpDomain", &IterationTimeBreakdown::dpDomain)
        .def_readonly("tp", &IterationTimeBreakdown::tp)
        .def_readonly("total", &IterationTimeBreakdown::total);
    py::class_<AnalyticalModel>(m, "AnalyticalModel", "Eq. 1: iteration time on rail-only")
        .def(py::init<const AnalyticalParams&>(), py::arg("params"))
        .def("IterationTime", &AnalyticalModel::IterationTime, py::arg("tp"))
        .def("Breakdown", &AnalyticalModel::Breakdown, py::arg("tp"))
        .def("OptimalTp", &AnalyticalModel::OptimalTp)
        .def("Eq1MinimizingTp", &AnalyticalModel::Eq1MinimizingTp)
        .def("ClampedOptimalTp", &AnalyticalModel::ClampedOptimalTp)
        .def("IdealTime", &AnalyticalModel::IdealTime)
        .def("Params", &AnalyticalModel::Params);

    // ---- topologies, routing, cost ------------------------------------------------
    py::class_<ClusterParams>(m, "ClusterParams", "What a topology builder takes")
        .def(py::init<>())
        .def_readwrite("gpus", &ClusterParams::gpus)
        .def_readwrite("platform", &ClusterParams::platform)
        .def_readwrite("radix", &ClusterParams::radix)
        .def_readwrite("linkDelayNs", &ClusterParams::linkDelayNs)
        .def_readwrite("oversubscription", &ClusterParams::oversubscription)
        .def_readwrite("fabricRateBps", &ClusterParams::fabricRateBps);
    py::class_<FabricTopology>(m, "FabricTopology", "One graph of GPUs, switches and cables")
        .def("GetName", &FabricTopology::GetName)
        .def("GetNGpus", &FabricTopology::GetNGpus)
        .def("GetNVertices", &FabricTopology::GetNVertices)
        .def("GetNCables", [](const FabricTopology& t) { return t.Cables().size(); })
        .def("GpuVertex", &FabricTopology::GpuVertex, py::arg("rank"))
        .def_readonly("gpusPerDomain", &FabricTopology::gpusPerDomain)
        .def_readonly_static("kMaxGpus", &FabricTopology::kMaxGpus);
    m.def("BuildRailOnly", &BuildRailOnly, py::arg("params"));
    m.def("BuildRailOptimized", &BuildRailOptimized, py::arg("params"));
    m.def("BuildFatTree", &BuildFatTree, py::arg("params"));
    m.def("BuildDirectConnect",
          &BuildDirectConnect,
          py::arg("graph"),
          py::arg("node_bandwidth_bps"),
          py::arg("params"));

    py::class_<RoutingReport>(m, "RoutingReport", "Reachability of every GPU pair")
        .def_readonly("pairs", &RoutingReport::pairs)
        .def_readonly("unreachable", &RoutingReport::unreachable)
        .def_readonly("maxHops", &RoutingReport::maxHops)
        .def_readonly("meanHops", &RoutingReport::meanHops)
        .def_readonly("hopHistogram", &RoutingReport::hopHistogram)
        .def_readonly("firstFailure", &RoutingReport::firstFailure);
    m.def(
        "CheckRouting",
        [](const FabricTopology& t) { return CheckRouting(t, ComputeRoutingTables(t)); },
        py::arg("topology"),
        "Routing tables computed and every GPU pair traced");

    py::class_<FabricCounts>(m, "FabricCounts", "Equipment of a topology")
        .def_readonly("switches", &FabricCounts::switches)
        .def_readonly("switchesByTier", &FabricCounts::switchesByTier)
        .def_readonly("switchPorts", &FabricCounts::switchPorts)
        .def_readonly("switchPortsUsed", &FabricCounts::switchPortsUsed)
        .def_readonly("links", &FabricCounts::links)
        .def_readonly("transceivers", &FabricCounts::transceivers)
        .def_readonly("nics", &FabricCounts::nics)
        .def_readonly("nvlinks", &FabricCounts::nvlinks)
        .def_readonly("directLinks", &FabricCounts::directLinks)
        .def_readonly("directFibres", &FabricCounts::directFibres);
    m.def("CountEquipment", &CountEquipment, py::arg("topology"), py::arg("radix"));
    py::class_<FabricCostModel, Ptr<FabricCostModel>>(m, "FabricCostModel", "Cost and power")
        .def(py::init([] { return CreateObject<FabricCostModel>(); }))
        .def("SetPricePreset", &FabricCostModel::SetPricePreset, py::arg("name"))
        .def_static("PricePresets", &FabricCostModel::PricePresets)
        .def("Cost", &FabricCostModel::Cost, py::arg("counts"), "US dollars")
        .def("Power", &FabricCostModel::Power, py::arg("counts"), "watts")
        .def("DirectConnectCost",
             &FabricCostModel::DirectConnectCost,
             py::arg("counts"),
             "US dollars of direct-connect fibres and patching");

    // ---- simulation: packet and flow level ---------------------------------------
    py::class_<Transport, Ptr<Transport>>(m, "Transport", "Send(src, dst, bytes, done)")
        .def(
            "Send",
            [](Transport& t, uint32_t src, uint32_t dst, uint64_t bytes, const py::object& done) {
                RequireLive(&t);
                const auto f = Hold(done);
                Transport::DoneCallback cb;
                if (f)
                {
                    cb = Transport::DoneCallback([f] { (*f)(); });
                }
                return t.Send(src, dst, bytes, cb);
            },
            py::arg("src"),
            py::arg("dst"),
            py::arg("bytes"),
            py::arg("done") = py::none(),
            "Send a message; done() is called when its last byte arrives")
        .def("GetNRanks", &Transport::GetNRanks)
        .def(
            "GetTotals",
            [](const Transport& t) {
                const Transport::Totals x = t.GetTotals();
                py::dict d;
                d["messages_sent"] = x.messagesSent;
                d["messages_delivered"] = x.messagesDelivered;
                d["bytes_sent"] = x.bytesSent;
                d["bytes_delivered"] = x.bytesDelivered;
                return d;
            },
            "messages_sent, messages_delivered, bytes_sent, bytes_delivered")
        .def("GetFailedMessages", &Transport::GetFailedMessages, "messages given up so far");
    py::class_<PacketTransport, Transport, Ptr<PacketTransport>>(m, "PacketTransport")
        .def("GetPacketsDelivered", &PacketTransport::GetPacketsDelivered)
        .def("GetEcnMarkedPackets", &PacketTransport::GetEcnMarkedPackets)
        .def("GetRetransmissions", &PacketTransport::GetRetransmissions)
        .def("GetLostPackets", &PacketTransport::GetLostPackets);
    py::class_<FlowTransport, Transport, Ptr<FlowTransport>>(m, "FlowTransport");

    py::class_<Fabric, Ptr<Fabric>>(m, "Fabric", "The packet-level fabric of one topology")
        .def("GetNGpus", &Fabric::GetNGpus)
        .def("GetTransport", &TransportOf)
        .def("GetTotalDrops", &Fabric::GetTotalDrops)
        .def("GetTotalLost", &Fabric::GetTotalLost)
        .def(
            "Dispose",
            [](Fabric& f) {
                GetInstalled().live.erase(PeekPointer(f.GetTransport()));
                f.Dispose();
            },
            "Dispose of it now (Simulator.Destroy() does it otherwise)");
    py::class_<FabricHelper>(m, "FabricHelper", "Instantiates a topology at packet level")
        .def(py::init<>())
        .def(
            "Install",
            [](const FabricHelper& h, const FabricTopology& topo) {
                Ptr<Fabric> f = h.Install(topo);
                GetInstalled().fabrics.push_back(f);
                GetInstalled().live.insert(PeekPointer(f->GetTransport()));
                return f;
            },
            py::arg("topology"),
            "Install it; kept until Simulator.Destroy()");
    py::class_<FlowHelper>(m, "FlowHelper", "Instantiates a topology at flow level")
        .def(py::init<>())
        .def(
            "Install",
            [](const FlowHelper& h, const FabricTopology& topo) {
                Ptr<FlowTransport> f = h.Install(topo);
                GetInstalled().flows.push_back(f);
                GetInstalled().live.insert(PeekPointer(f));
                return f;
            },
            py::arg("topology"),
            "Install it; kept until Simulator.Destroy()");

    py::class_<CollectiveResult>(m, "CollectiveResult", "nccl-tests' figures of one run")
        .def_readonly("collective", &CollectiveResult::collective)
        .def_readonly("algorithm", &CollectiveResult::algorithm)
        .def_readonly("ranks", &CollectiveResult::ranks)
        .def_readonly("bytes", &CollectiveResult::bytes)
        .def_readonly("timeS", &CollectiveResult::timeS)
        .def_readonly("algbwGBps", &CollectiveResult::algbwGBps)
        .def_readonly("busbwGBps", &CollectiveResult::busbwGBps)
        .def_readonly("bytesSent", &CollectiveResult::bytesSent)
        .def_readonly("complete", &CollectiveResult::complete)
        .def_readonly("failed", &CollectiveResult::failed)
        .def_readonly("failure", &CollectiveResult::failure);
    py::class_<CollectiveRun, Ptr<CollectiveRun>>(m, "CollectiveRun", "One collective's run")
        .def("IsComplete", &CollectiveRun::IsComplete)
        .def("GetResult", &CollectiveRun::GetResult)
        .def("GetStartTime", [](const CollectiveRun& r) { return r.GetStartTime().GetSeconds(); })
        .def("GetFinishTime", [](const CollectiveRun& r) { return r.GetFinishTime().GetSeconds(); })
        .def(
            "GetRankFinishTime",
            [](const CollectiveRun& r, uint32_t local) {
                return r.GetRankFinishTime(local).GetSeconds();
            },
            py::arg("local"))
        .def("GetFailureReport", &CollectiveRun::GetFailureReport)
        .def(
            "SetCompletionCallback",
            [](CollectiveRun& run, const py::object& done) {
                const auto f = Hold(done);
                run.SetCompletionCallback(
                    f ? CollectiveRun::CompletionCallback([f](Ptr<CollectiveRun> r) { (*f)(r); })
                      : CollectiveRun::CompletionCallback());
            },
            py::arg("done"),
            "done(run) is called when the last rank finishes");
    py::class_<PyCollectiveHelper>(m, "CollectiveHelper", "Installs collectives on ranks")
        .def(py::init([](const Ptr<Fabric>& fabric) {
                 Ptr<Transport> transport = TransportOf(fabric);
                 RequireLive(PeekPointer(transport));
                 return PyCollectiveHelper{CollectiveHelper(fabric), transport};
             }),
             py::arg("fabric"))
        .def(py::init([](const Ptr<Transport>& transport) {
                 RequireLive(PeekPointer(transport));
                 return PyCollectiveHelper{CollectiveHelper(transport), transport};
             }),
             py::arg("transport"))
        .def(
            "SetChunkBytes",
            [](PyCollectiveHelper& h, uint64_t b) { h.helper.SetChunkBytes(b); },
            py::arg("bytes"))
        .def(
            "SetChannels",
            [](PyCollectiveHelper& h, uint32_t c) { h.helper.SetChannels(c); },
            py::arg("channels"))
        .def(
            "SetDomainSize",
            [](PyCollectiveHelper& h, uint32_t k) { h.helper.SetDomainSize(k); },
            py::arg("k"))
        .def(
            "SetRoot",
            [](PyCollectiveHelper& h, uint32_t r) { h.helper.SetRoot(r); },
            py::arg("root"),
            "Root (local index) of broadcast and reduce")
        .def(
            "Install",
            [](const PyCollectiveHelper& h,
               const std::vector<uint32_t>& ranks,
               const std::string& collective,
               const std::string& algorithm,
               uint64_t bytes,
               std::optional<double> startS) {
                RequireLive(PeekPointer(h.transport));
                const Time start =
                    startS ? SecondsArg("start", *startS) : Simulator::Now(); // default: now
                return h.helper.Install(ranks, collective, algorithm, bytes, start);
            },
            py::arg("ranks"),
            py::arg("collective"),
            py::arg("algorithm"),
            py::arg("bytes"),
            py::arg("start_s") = py::none(),
            "Install a collective starting at start_s (seconds; default: now)")
        .def_static("AllRanks", &CollectiveHelper::AllRanks, py::arg("n"));

    // ---- training iterations ----------------------------------------------------
    py::class_<Parallelism>(m, "Parallelism", "TP x PP x DP (and EP) on N GPUs")
        // keywords only, as Parallelism::Shape names its fields: eight numbers
        // in a row were too easy to give in the wrong order
        .def(py::init([](uint32_t gpus,
                         uint32_t gpusPerDomain,
                         uint32_t tp,
                         uint32_t pp,
                         uint32_t dp,
                         uint32_t ep,
                         uint32_t microBatches,
                         uint64_t globalBatchSequences) {
                 Parallelism::Shape shape;
                 shape.gpus = gpus;
                 shape.gpusPerDomain = gpusPerDomain;
                 shape.tp = tp;
                 shape.pp = pp;
                 shape.dp = dp;
                 shape.ep = ep;
                 shape.microBatches = microBatches;
                 shape.globalBatchSequences = globalBatchSequences;
                 return Parallelism(shape);
             }),
             py::kw_only(),
             py::arg("gpus"),
             py::arg("gpus_per_domain"),
             py::arg("tp") = 1,
             py::arg("pp") = 1,
             py::arg("dp"),
             py::arg("ep") = 1,
             py::arg("micro_batches") = 1,
             py::arg("global_batch_sequences"))
        .def("Gpus", &Parallelism::Gpus)
        .def("Tp", &Parallelism::Tp)
        .def("Pp", &Parallelism::Pp)
        .def("Dp", &Parallelism::Dp)
        .def("Ep", &Parallelism::Ep)
        .def("MicroBatches", &Parallelism::MicroBatches);
    py::class_<WorkloadOptions>(m, "WorkloadOptions", "Collective algorithms and compute rate")
        .def(py::init<>())
        .def_readwrite("dpAlgorithm", &WorkloadOptions::dpAlgorithm)
        .def_readwrite("epAlgorithm", &WorkloadOptions::epAlgorithm)
        .def_readwrite("gpuFlops", &WorkloadOptions::gpuFlops)
        .def_readwrite("computeEfficiency", &WorkloadOptions::computeEfficiency)
        .def_readwrite("attentionFlops", &WorkloadOptions::attentionFlops);
    py::class_<TrainingIteration>(m,
                                  "TrainingIteration",
                                  "The traffic and compute of one iteration")
        .def(py::init<const LlmModel&, const Parallelism&, const WorkloadOptions&>(),
             py::arg("model"),
             py::arg("parallelism"),
             py::arg("options") = WorkloadOptions())
        .def("ForwardSeconds", &TrainingIteration::ForwardSeconds, py::arg("stage"))
        .def("BackwardSeconds", &TrainingIteration::BackwardSeconds, py::arg("stage"))
        .def("ComputeSecondsPerIteration",
             &TrainingIteration::ComputeSecondsPerIteration,
             py::arg("rank"))
        .def("MicroBatchTokens", &TrainingIteration::MicroBatchTokens)
        .def("ActivationBytesPerMicroBatch", &TrainingIteration::ActivationBytesPerMicroBatch);
    py::class_<IterationProgramOptions>(m, "IterationProgramOptions")
        .def(py::init<>())
        .def_readwrite("tpGranularity", &IterationProgramOptions::tpGranularity)
        .def_readwrite("overlapDp", &IterationProgramOptions::overlapDp)
        .def_readwrite("dpBuckets", &IterationProgramOptions::dpBuckets)
        .def_readwrite("chunkBytes", &IterationProgramOptions::chunkBytes);
    py::class_<IterationProgram>(m, "IterationProgram", "Per-rank programs of one iteration")
        .def("NumComms", [](const IterationProgram& p) { return p.program.comms.size(); });
    m.def("BuildIterationProgram",
          &BuildIterationProgram,
          py::arg("iteration"),
          py::arg("options") = IterationProgramOptions());
    py::class_<ProgramRunner, Ptr<ProgramRunner>>(m, "ProgramRunner", "Runs an iteration program")
        .def("IsComplete", &ProgramRunner::IsComplete)
        .def("GetFinishTime", [](const ProgramRunner& r) { return r.GetFinishTime().GetSeconds(); })
        .def(
            "GetRankFinishTime",
            [](const ProgramRunner& r, uint32_t rank) {
                return r.GetRankFinishTime(rank).GetSeconds();
            },
            py::arg("rank"))
        .def("IsFailed",
             &ProgramRunner::IsFailed,
             "True once a comm failed (the transport gave up one of its messages)")
        .def("GetFailureReport",
             &ProgramRunner::GetFailureReport,
             "One line per failed comm: index, label, collective, size, first failed op")
        .def("GetFailedComms", &ProgramRunner::GetFailedComms, "Failed comms, in order")
        .def("GetUnfinishedRanks",
             &ProgramRunner::GetUnfinishedRanks,
             "Ranks with tasks left when called (after a failure and a run with no event left: "
             "those it holds)")
        .def(
            "SetFailureCallback",
            [](ProgramRunner& runner, const py::object& failed) {
                const auto f = Hold(failed);
                runner.SetFailureCallback(
                    f ? ProgramRunner::FailureCallback(
                            [f](Ptr<ProgramRunner> r, const std::string& report) {
                                (*f)(r, report);
                            })
                      : ProgramRunner::FailureCallback());
            },
            py::arg("failed"),
            "failed(runner, report) is called once, at the first failed comm; "
            "Simulator.Stop(0) there ends the run");
    m.def(
        "StartProgram",
        [](const IterationProgram& ip, const Ptr<Transport>& transport) {
            RequireLive(PeekPointer(transport));
            return StartProgram(ip.program, transport);
        },
        py::arg("program"),
        py::arg("transport"),
        "Start the program now on the transport; Simulator.Run() runs it (RunProgram in C++)");

    // ---- faults ---------------------------------------------------------------------
    py::class_<FaultHelper>(m, "FaultHelper", "Link, switch, GPU and NVLink faults at given times")
        .def(py::init([](const Ptr<Fabric>& fabric) {
                 TransportOf(fabric);
                 return FaultHelper(fabric);
             }),
             py::arg("fabric"))
        .def(
            "SetDetectionDelay",
            [](FaultHelper& h, double s) { h.SetDetectionDelay(SecondsArg("detection delay", s)); },
            py::arg("delay_s"))
        .def("SetHbDomainRelay", &FaultHelper::SetHbDomainRelay, py::arg("relay"))
        .def("LinkDown",
             AtSeconds<uint32_t>{&FaultHelper::LinkDown},
             py::arg("cable"),
             py::arg("at_s"))
        .def("LinkUp", AtSeconds<uint32_t>{&FaultHelper::LinkUp}, py::arg("cable"), py::arg("at_s"))
        .def("SwitchDown",
             AtSeconds<uint32_t>{&FaultHelper::SwitchDown},
             py::arg("vertex"),
             py::arg("at_s"))
        .def("SwitchUp",
             AtSeconds<uint32_t>{&FaultHelper::SwitchUp},
             py::arg("vertex"),
             py::arg("at_s"))
        .def("GpuDown",
             AtSeconds<uint32_t>{&FaultHelper::GpuDown},
             py::arg("rank"),
             py::arg("at_s"))
        .def("DegradeLink",
             AtSeconds<uint32_t, double>{&FaultHelper::DegradeLink},
             py::arg("cable"),
             py::arg("fraction"),
             py::arg("at_s"))
        .def("SetBitErrorRate",
             AtSeconds<uint32_t, double>{&FaultHelper::SetBitErrorRate},
             py::arg("cable"),
             py::arg("ber"),
             py::arg("at_s") = 0.0)
        .def_static("FindCable",
                    &FaultHelper::FindCable,
                    py::arg("topology"),
                    py::arg("a"),
                    py::arg("b"))
        .def_static("FindSwitches",
                    &FaultHelper::FindSwitches,
                    py::arg("topology"),
                    py::arg("role"))
        .def_static("CablesOf", &FaultHelper::CablesOf, py::arg("topology"), py::arg("vertex"));

    // ---- direct-connect synthesis -----------------------------------------------
    py::class_<DirectConnectGraph>(m, "DirectConnectGraph", "A d-regular directed graph")
        .def("Name", &DirectConnectGraph::Name)
        .def("NumNodes", &DirectConnectGraph::NumNodes)
        .def("NumArcs", &DirectConnectGraph::NumArcs)
        .def("Degree", &DirectConnectGraph::Degree)
        .def("IsRegular", &DirectConnectGraph::IsRegular)
        .def("IsStronglyConnected", &DirectConnectGraph::IsStronglyConnected);
    m.def("BuildFromName",
          &BuildFromName,
          py::arg("name"),
          "A graph from its construction name, e.g. \"L(L(K(4,4)))\"");
    py::class_<BfbSchedule>(m, "BfbSchedule", "A BFB schedule (Zhao et al.)")
        .def_readonly("graphName", &BfbSchedule::graphName)
        .def_readonly("nodes", &BfbSchedule::nodes)
        .def_readonly("degree", &BfbSchedule::degree)
        .def("Steps", &BfbSchedule::Steps, "T_L")
        .def(
            "Tb",
            [](const BfbSchedule& s) { return ToDouble(s.Tb()); },
            "T_B in units of M/B")
        .def(
            "TbExact",
            [](const BfbSchedule& s) { return ToString(s.Tb()); },
            "T_B as a fraction, e.g. \"33/32\"")
        .def("TbOptimal", &BfbSchedule::TbOptimal);
    m.def(
        "BfbAllGather",
        [](const DirectConnectGraph& g) { return BfbAllGather(g); },
        py::arg("graph"));
    m.def(
        "BfbReduceScatter",
        [](const DirectConnectGraph& g) { return BfbReduceScatter(g); },
        py::arg("graph"));
    m.def(
        "BfbAllReduce",
        [](const DirectConnectGraph& g) { return BfbAllReduce(g); },
        py::arg("graph"));
    py::class_<FinderWorkload>(m, "FinderWorkload", "The alpha-beta workload of the finder")
        .def(py::init<>())
        .def_readwrite("alphaSeconds", &FinderWorkload::alphaSeconds)
        .def_readwrite("bandwidthBps", &FinderWorkload::bandwidthBps)
        .def_readwrite("messageBytes", &FinderWorkload::messageBytes);
    py::class_<SynthCandidate>(m, "SynthCandidate", "A topology the finder considered")
        .def_readonly("name", &SynthCandidate::name)
        .def_readonly("nodes", &SynthCandidate::nodes)
        .def_readonly("degree", &SynthCandidate::degree)
        .def_readonly("steps", &SynthCandidate::steps)
        .def_readonly("fromBfb", &SynthCandidate::fromBfb)
        .def_property_readonly("tb", [](const SynthCandidate& c) { return ToDouble(c.tb); });
    py::class_<FinderResult>(m, "FinderResult", "Pareto frontier and the best point")
        .def_readonly("frontier", &FinderResult::frontier)
        .def_readonly("best", &FinderResult::best)
        .def_readonly("bestTimeSeconds", &FinderResult::bestTimeSeconds)
        .def_readonly("considered", &FinderResult::considered);
    m.def(
        "FindTopology",
        [](uint32_t nodes,
           uint32_t degree,
           const FinderWorkload& w,
           uint32_t depth,
           uint32_t productBfbNodes) {
            FabricRequire(depth <= 4, "depth", depth, "an integer 0..4");
            FinderOptions o;
            o.maxDepth = depth;
            o.maxProductBfbNodes = productBfbNodes;
            return FindTopology(nodes, degree, w, o);
        },
        py::arg("nodes"),
        py::arg("degree"),
        py::arg("workload") = FinderWorkload(),
        py::arg("depth") = 2,
        py::arg("productBfbNodes") = FinderOptions().maxProductBfbNodes);

    // Python's exit comes before the C++ statics that would dispose of the
    // nodes (and of the Python callbacks they hold): clean up while Python is
    // still there
    py::module_::import("atexit").attr("register")(py::cpp_function([] {
        if (g_running == 0)
        {
            DestroyAll();
        }
    }));
}
