/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The Python bindings (bindings/, module gpu_fabric) driven from an embedded
 * interpreter: each scenario runs in Python and in C++ in the same process,
 * and the two must agree exactly; bad input raises ConfigError with the C++
 * message; Python callbacks run from simulation events.
 */
#include "ns3/analytical-model.h"
#include "ns3/bfb-schedule.h"
#include "ns3/collective-helper.h"
#include "ns3/fabric-cost.h"
#include "ns3/fabric-helper.h"
#include "ns3/fault-helper.h"
#include "ns3/flow-helper.h"
#include "ns3/iteration-program.h"
#include "ns3/llm-model.h"
#include "ns3/simulator.h"
#include "ns3/topology-builders.h"
#include "ns3/topology-finder.h"
#include "ns3/traffic-matrix.h"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pybind11/embed.h>
#include <pybind11/stl.h>
#include <sstream>

namespace py = pybind11;
using namespace ns3;

// Python's interpreter keeps some objects for the life of the process.
extern "C" const char*
__lsan_default_suppressions()
{
    return "leak:libpython3\n";
}

namespace
{

/// The interpreter (started once per process) with gpu_fabric importable.
py::module_
GpuFabric()
{
    static py::scoped_interpreter interpreter;
    static py::module_ gf = [] {
        py::module_::import("sys").attr("path").attr("insert")(0, GPU_FABRIC_PYTHON_DIR);
        return py::module_::import("gpu_fabric");
    }();
    return gf;
}

ClusterParams
Dgx16()
{
    ClusterParams p;
    p.gpus = 16;
    p.platform = HbDomainPreset::Get("dgx-h100");
    p.radix = 64;
    return p;
}

/// Run \p code with gpu_fabric imported as gf; \return its variables.
py::dict
RunPython(const char* code)
{
    py::module_ gf = GpuFabric(); // starts the interpreter before any Python object
    py::dict scope;
    scope["gf"] = gf;
    // the C++ tests' 16-GPU DGX-H100 cluster (Dgx16), and expect() for bad input, for the Python
    // side
    py::exec(R"py(
def dgx16():
    p = gf.ClusterParams()
    p.gpus = 16
    p.platform = gf.HbDomainPreset.Get("dgx-h100")
    p.radix = 64
    return p
def said_by(said):
    """expect(f): run f, append "accepted" or the ConfigError's message to said"""
    def expect(f):
        try:
            f()
            said.append("accepted")
        except gf.ConfigError as e:
            said.append(str(e))
    return expect
)py",
             scope);
    py::exec(code, scope);
    return scope;
}

TEST(PythonBindings, TopologyCountsAndCostEqualTheCppApi)
{
    const py::dict py = RunPython(R"py(
p = gf.ClusterParams()
p.gpus = 32768
p.platform = gf.HbDomainPreset.Get("gh200-256-hotnets")
p.radix = 64
counts = {}
cost = {}
model = gf.FabricCostModel()
for name, build in (("rail-only", gf.BuildRailOnly), ("rail-optimized", gf.BuildRailOptimized)):
    c = gf.CountEquipment(build(p), 64)
    counts[name] = (c.switches, c.transceivers, c.switchPorts)
    cost[name] = model.Cost(c)
)py");
    ClusterParams p;
    p.gpus = 32768;
    p.platform = HbDomainPreset::Get("gh200-256-hotnets");
    p.radix = 64;
    Ptr<FabricCostModel> model = CreateObject<FabricCostModel>();
    for (const auto& [name, topo] : {std::pair{"rail-only", BuildRailOnly(p)},
                                     std::pair{"rail-optimized", BuildRailOptimized(p)}})
    {
        const FabricCounts c = CountEquipment(topo, 64);
        const auto got = py["counts"][name].cast<std::tuple<uint64_t, uint64_t, uint64_t>>();
        EXPECT_EQ(got, std::make_tuple(c.switches, c.transceivers, c.switchPorts)) << name;
        EXPECT_DOUBLE_EQ(py["cost"][name].cast<double>(), model->Cost(c)) << name;
    }
}

TEST(PythonBindings, MessagesAndCollectivesTakeTheCppTimesAndCallBackIntoPython)
{
    // Python: one message and one ring allreduce at once, each reporting
    // from a callback run by a simulation event
    const py::dict py = RunPython(R"py(
p = dgx16()
fabric = gf.FabricHelper().Install(gf.BuildRailOnly(p))
arrived = []
fabric.GetTransport().Send(0, 9, 1 << 20, lambda: arrived.append(gf.Simulator.Now()))
run = gf.CollectiveHelper(fabric).Install(gf.CollectiveHelper.AllRanks(16), "allreduce", "ring",
                                          4 << 20, start_s=1e-6)
finished = []
run.SetCompletionCallback(lambda r: finished.append(r.GetResult().timeS))
gf.Simulator.Run()
result = run.GetResult()
totals = fabric.GetTransport().GetTotals()
fabric.Dispose()
gf.Simulator.Destroy()
)py");
    // C++: the same scenario
    Ptr<Fabric> fabric = FabricHelper().Install(BuildRailOnly(Dgx16()));
    Time arrived;
    fabric->GetTransport()->Send(0,
                                 9,
                                 1 << 20,
                                 MakeBoundCallback(
                                     +[](Time* t) { *t = Simulator::Now(); },
                                     &arrived));
    Ptr<CollectiveRun> run = CollectiveHelper(fabric).Install(CollectiveHelper::AllRanks(16),
                                                              "allreduce",
                                                              "ring",
                                                              4 << 20,
                                                              MicroSeconds(1));
    Simulator::Run();
    const CollectiveResult want = run->GetResult();
    const auto totals = fabric->GetTransport()->GetTotals();
    fabric->Dispose();
    Simulator::Destroy();

    ASSERT_EQ(py::len(py["arrived"]), 1u);
    EXPECT_DOUBLE_EQ(py["arrived"][py::int_(0)].cast<double>(), arrived.GetSeconds());
    ASSERT_EQ(py::len(py["finished"]), 1u);
    EXPECT_DOUBLE_EQ(py["finished"][py::int_(0)].cast<double>(), want.timeS);
    const py::object result = py["result"];
    EXPECT_TRUE(result.attr("complete").cast<bool>());
    EXPECT_DOUBLE_EQ(result.attr("timeS").cast<double>(), want.timeS);
    EXPECT_DOUBLE_EQ(result.attr("busbwGBps").cast<double>(), want.busbwGBps);
    // every byte sent arrived, as many as in C++
    const py::dict t = py["totals"];
    EXPECT_EQ(t["bytes_sent"].cast<uint64_t>(), totals.bytesSent);
    EXPECT_EQ(t["bytes_delivered"].cast<uint64_t>(), totals.bytesSent);
    EXPECT_EQ(t["messages_delivered"].cast<uint64_t>(), totals.messagesSent);
}

TEST(PythonBindings, FlowLevelBackendRunsTheSameCollective)
{
    const py::dict py = RunPython(R"py(
p = dgx16()
flow = gf.FlowHelper().Install(gf.BuildRailOnly(p))
helper = gf.CollectiveHelper(flow)
helper.SetDomainSize(8)
run = helper.Install(gf.CollectiveHelper.AllRanks(16), "allgather", "ring", 16 << 20)
gf.Simulator.Run()
time_s = run.GetResult().timeS
gf.Simulator.Destroy()
)py");
    Ptr<FlowTransport> flow = FlowHelper().Install(BuildRailOnly(Dgx16()));
    CollectiveHelper helper{Ptr<Transport>(flow)};
    helper.SetDomainSize(8);
    Ptr<CollectiveRun> run =
        helper.Install(CollectiveHelper::AllRanks(16), "allgather", "ring", 16 << 20, Seconds(0));
    Simulator::Run();
    const double want = run->GetResult().timeS;
    Simulator::Destroy();
    EXPECT_GT(want, 0);
    EXPECT_DOUBLE_EQ(py["time_s"].cast<double>(), want);
}

TEST(PythonBindings, SynthesisAndEq1EqualTheCppApi)
{
    const py::dict py = RunPython(R"py(
s = gf.BfbAllGather(gf.BuildFromName("L(L(K(4,4)))"))
steps, tb = s.Steps(), s.TbExact()
w = gf.FinderWorkload()
w.alphaSeconds, w.bandwidthBps, w.messageBytes = 1e-5, 1e11, 1 << 20
found = gf.FindTopology(64, 4, w)
best = (found.best.name, found.best.steps, found.best.tb, found.bestTimeSeconds)
bound = gf.FindTopology(64, 4, w, productBfbNodes=0)
productsByBound = [c.name for c in bound.frontier if c.name.startswith("Prod(") and not c.fromBfb]
am = gf.AnalyticalModel(gf.AnalyticalParams.From(gf.LlmModel.Get("gpt3-175b"),
                                                 gf.HbDomainPreset.Get("gh200-256-hotnets"), 32768))
tp = am.ClampedOptimalTp()
eq1 = am.IterationTime(tp)
)py");
    // the paper's worked example: L(L(K(4,4))) has T_L = 4, T_B = 33/32
    EXPECT_EQ(py["steps"].cast<uint32_t>(), 4u);
    EXPECT_EQ(py["tb"].cast<std::string>(), "33/32");
    FinderWorkload w;
    w.alphaSeconds = 1e-5;
    w.bandwidthBps = 1e11;
    w.messageBytes = 1 << 20;
    const FinderResult found = FindTopology(64, 4, w);
    const auto best = py["best"].cast<std::tuple<std::string, uint32_t, double, double>>();
    EXPECT_EQ(std::get<0>(best), found.best.name);
    EXPECT_EQ(std::get<1>(best), found.best.steps);
    EXPECT_DOUBLE_EQ(std::get<2>(best), ToDouble(found.best.tb));
    // productBfbNodes reaches FinderOptions: the same products by their bound
    FinderOptions bound;
    bound.maxProductBfbNodes = 0;
    std::vector<std::string> productsByBound;
    for (const auto& c : FindTopology(64, 4, w, bound).frontier)
    {
        if (c.name.rfind("Prod(", 0) == 0 && !c.fromBfb)
        {
            productsByBound.push_back(c.name);
        }
    }
    EXPECT_EQ(py["productsByBound"].cast<std::vector<std::string>>(), productsByBound);
    // the time is the alpha-beta formula of the best point
    EXPECT_DOUBLE_EQ(std::get<3>(best),
                     1e-5 * found.best.steps + ToDouble(found.best.tb) * (1 << 20) * 8 / 1e11);
    const AnalyticalModel am(AnalyticalParams::From(LlmModel::Get("gpt3-175b"),
                                                    HbDomainPreset::Get("gh200-256-hotnets"),
                                                    32768));
    EXPECT_DOUBLE_EQ(py["tp"].cast<double>(), am.ClampedOptimalTp());
    EXPECT_DOUBLE_EQ(py["eq1"].cast<double>(), am.IterationTime(am.ClampedOptimalTp()));
}

TEST(PythonBindings, BadInputRaisesConfigErrorWithTheCppMessage)
{
    const py::dict py = RunPython(R"py(
errors = []
def expect(f):
    try:
        f()
        errors.append(None)
    except gf.ConfigError as e:
        errors.append((isinstance(e, ValueError), str(e)))
p = gf.ClusterParams()
p.gpus = 60
p.platform = gf.HbDomainPreset.Get("dgx-h100")
expect(lambda: gf.BuildRailOnly(p))
expect(lambda: gf.HbDomainPreset.Get("dgx-z9"))
# ns-3's own parser would abort on these
expect(lambda: gf.SetDefault("ns3::FabricNetDevice::DataRate", "abc"))
expect(lambda: gf.SetDefault("ns3::FabricSwitch::NoSuchAttribute", "1"))
expect(lambda: gf.SetDefault("ns3::FabricSwitch::PfcXoff", "-1"))
expect(lambda: gf.Simulator.Stop(-1.0))
p.gpus = 16
fabric = gf.FabricHelper().Install(gf.BuildRailOnly(p))
expect(lambda: fabric.GetTransport().Send(0, 1, 1000, "not callable"))
expect(lambda: fabric.GetTransport().Send(0, 16, 1000))
expect(lambda: gf.CollectiveHelper(fabric).Install([0, 1], "allreduce", "spiral", 1024))
fabric.Dispose()
gf.Simulator.Destroy()
)py");
    const std::vector<std::string> said = {
        "invalid gpus: got '60', allowed: a multiple of the HB domain size K = 8",
        "invalid preset: got 'dgx-z9'",
        "invalid ns3::FabricNetDevice::DataRate: got 'abc', allowed: DataRate",
        "invalid ns3::FabricSwitch::NoSuchAttribute: got '1'",
        "invalid ns3::FabricSwitch::PfcXoff: got '-1'",
        "invalid stop time: got '-1'",
        "invalid callback: got ''not callable'', allowed: a callable or None",
        "invalid",
        "spiral",
    };
    const py::list errors = py["errors"];
    ASSERT_EQ(py::len(errors), said.size());
    for (size_t i = 0; i < said.size(); ++i)
    {
        ASSERT_FALSE(errors[i].is_none()) << "accepted: " << said[i];
        const auto [isValueError, text] = errors[i].cast<std::pair<bool, std::string>>();
        EXPECT_TRUE(isValueError);
        EXPECT_NE(text.find(said[i]), std::string::npos) << text;
    }
}

TEST(PythonBindings, ParallelismTakesItsFieldsByName)
{
    // eight numbers in a row were easy to give in the wrong order: keywords
    // only, with the C++ Shape's defaults, and a zero named by its field
    const py::dict py = RunPython(R"py(
p = gf.Parallelism(gpus=16, gpus_per_domain=8, tp=8, dp=2, global_batch_sequences=2)
got = (p.Gpus(), p.Tp(), p.Pp(), p.Dp(), p.Ep(), p.MicroBatches())
try:
    gf.Parallelism(16, 8, 8, 1, 2, 1, 2, 4)
    positional = "accepted"
except TypeError:
    positional = "TypeError"
said = []
expect = said_by(said)
expect(lambda: gf.Parallelism(gpus=16, gpus_per_domain=8, tp=8, dp=2, micro_batches=0,
                              global_batch_sequences=4))
try:
    gf.Parallelism(gpus=16, gpus_per_domain=8, tp=8, dp=2)
    missing = "accepted"
except TypeError:
    missing = "TypeError"
)py");
    EXPECT_EQ(
        (py["got"].cast<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>>()),
        std::make_tuple(16u, 8u, 1u, 2u, 1u, 1u));
    EXPECT_EQ(py["positional"].cast<std::string>(), "TypeError");
    const auto said = py["said"].cast<std::vector<std::string>>();
    ASSERT_EQ(said.size(), 1u);
    EXPECT_NE(said[0].find("invalid micro-batches: got '0', allowed: an integer >= 1"),
              std::string::npos)
        << said[0];
    // a field without a default (here the batch) left out is Python's TypeError
    EXPECT_EQ(py["missing"].cast<std::string>(), "TypeError");
}

TEST(PythonBindings, AFailedIterationReportsTheSameCommsAsTheCppRun)
{
    // GPU 3 fails mid-iteration: the runner says which comms failed and which
    // ranks they hold, the same in Python as in C++
    const py::dict py = RunPython(R"py(
model = gf.LlmModel.Custom(4, 1024, 16, 1024, 8192, 2 * 2 * 1024)
par = gf.Parallelism(gpus=16, gpus_per_domain=8, tp=8, dp=2, micro_batches=2,
                     global_batch_sequences=4)
program = gf.BuildIterationProgram(gf.TrainingIteration(model, par))
fabric = gf.FabricHelper().Install(gf.BuildRailOnly(dgx16()))
faults = gf.FaultHelper(fabric)
faults.GpuDown(3, 20e-6)
runner = gf.StartProgram(program, fabric.GetTransport())
gf.Simulator.Run()
result = (runner.IsComplete(), runner.IsFailed(), runner.GetFailureReport(),
          runner.GetFailedComms(), runner.GetUnfinishedRanks())
gf.Simulator.Destroy()
# again, told at the first failure, which stops the run there
fabric = gf.FabricHelper().Install(gf.BuildRailOnly(dgx16()))
gf.FaultHelper(fabric).GpuDown(3, 20e-6)
runner = gf.StartProgram(program, fabric.GetTransport())
told = []
def failed(r, report):
    told.append((report, r.GetFailedComms(), gf.Simulator.Now()))
    gf.Simulator.Stop(0)
runner.SetFailureCallback(failed)
gf.Simulator.Run()
stopped_at = gf.Simulator.Now()
gf.Simulator.Destroy()
)py");
    const LlmModel model = LlmModel::Custom(4, 1024, 16, 1024, 8192, 2 * 2 * 1024);
    Parallelism::Shape shape;
    shape.gpus = 16;
    shape.gpusPerDomain = 8;
    shape.tp = 8;
    shape.dp = 2;
    shape.microBatches = 2;
    shape.globalBatchSequences = 4;
    const Parallelism par(shape);
    const IterationProgram program = BuildIterationProgram(TrainingIteration(model, par));
    Ptr<Fabric> fabric = FabricHelper().Install(BuildRailOnly(Dgx16()));
    FaultHelper(fabric).GpuDown(3, MicroSeconds(20));
    Ptr<ProgramRunner> runner = RunProgram(program.program, fabric->GetTransport());
    EXPECT_FALSE(runner->IsComplete());
    ASSERT_TRUE(runner->IsFailed());
    EXPECT_NE(runner->GetFailureReport().find("GPU 3 down"), std::string::npos)
        << runner->GetFailureReport();
    const auto got =
        py["result"]
            .cast<
                std::
                    tuple<bool, bool, std::string, std::vector<uint32_t>, std::vector<uint32_t>>>();
    EXPECT_FALSE(std::get<0>(got));
    EXPECT_TRUE(std::get<1>(got));
    EXPECT_EQ(std::get<2>(got), runner->GetFailureReport());
    EXPECT_EQ(std::get<3>(got), runner->GetFailedComms());
    EXPECT_EQ(std::get<4>(got), runner->GetUnfinishedRanks());
    // the callback: once, with the first failed comm's line, and Stop() ends the run there
    const auto told =
        py["told"].cast<std::vector<std::tuple<std::string, std::vector<uint32_t>, double>>>();
    ASSERT_EQ(told.size(), 1u);
    const std::string& all = runner->GetFailureReport();
    EXPECT_EQ(std::get<0>(told[0]), all.substr(0, all.find('\n')));
    EXPECT_EQ(std::get<1>(told[0]), std::vector<uint32_t>{runner->GetFailedComms().front()});
    EXPECT_EQ(py["stopped_at"].cast<double>(), std::get<2>(told[0]));
    // the TP group of GPU 3 (ranks 0-7) cannot finish
    const auto unfinished = runner->GetUnfinishedRanks();
    for (uint32_t r = 0; r < 8; ++r)
    {
        EXPECT_TRUE(std::find(unfinished.begin(), unfinished.end(), r) != unfinished.end()) << r;
    }
    fabric->Dispose();
    Simulator::Destroy();
}

TEST(PythonBindings, TrainingIterationWithAFailedRailSwitchEqualsTheCppRun)
{
    // a 4-block GPT on 16 DGX-H100 GPUs (TP 8, DP 2, 2 micro-batches) on
    // rail-only, once healthy and once with rail 1's switch failing mid-run
    // (the traffic moves through the HB domains): the same times in Python
    // and in C++
    const py::dict py = RunPython(R"py(
model = gf.LlmModel.Custom(4, 1024, 16, 1024, 8192, 2 * 2 * 1024)
par = gf.Parallelism(gpus=16, gpus_per_domain=8, tp=8, dp=2, micro_batches=2,
                     global_batch_sequences=4)
it = gf.TrainingIteration(model, par)
program = gf.BuildIterationProgram(it)
p = dgx16()
topo = gf.BuildRailOnly(p)
times = []
for fail in (False, True):
    fabric = gf.FabricHelper().Install(topo)
    if fail:
        faults = gf.FaultHelper(fabric)
        faults.SetDetectionDelay(10e-6)
        faults.SwitchDown(gf.FaultHelper.FindSwitches(topo, "rail")[1], times[0] / 2)
    runner = gf.StartProgram(program, fabric.GetTransport())
    gf.Simulator.Run()
    times.append(runner.GetFinishTime() if runner.IsComplete() else -1.0)
    gf.Simulator.Destroy()
)py");
    const LlmModel model = LlmModel::Custom(4, 1024, 16, 1024, 8192, 2 * 2 * 1024);
    Parallelism::Shape shape;
    shape.gpus = 16;
    shape.gpusPerDomain = 8;
    shape.tp = 8;
    shape.dp = 2;
    shape.microBatches = 2;
    shape.globalBatchSequences = 4;
    const Parallelism par(shape);
    const TrainingIteration it(model, par);
    const IterationProgram program = BuildIterationProgram(it);
    const FabricTopology topo = BuildRailOnly(Dgx16());
    std::vector<double> times;
    for (bool fail : {false, true})
    {
        Ptr<Fabric> fabric = FabricHelper().Install(topo);
        if (fail)
        {
            FaultHelper faults(fabric);
            faults.SetDetectionDelay(MicroSeconds(10));
            faults.SwitchDown(FaultHelper::FindSwitches(topo, "rail").at(1), Seconds(times[0] / 2));
        }
        Ptr<ProgramRunner> runner = RunProgram(program.program, fabric->GetTransport());
        ASSERT_TRUE(runner->IsComplete());
        times.push_back(runner->GetFinishTime().GetSeconds());
        fabric->Dispose();
        Simulator::Destroy();
    }
    EXPECT_GT(times[1], times[0]); // the failure costs time
    const auto got = py["times"].cast<std::vector<double>>();
    ASSERT_EQ(got.size(), 2u);
    EXPECT_DOUBLE_EQ(got[0], times[0]);
    EXPECT_DOUBLE_EQ(got[1], times[1]);
}

TEST(PythonBindings, FabricsLiveUntilDestroyAndStaleOnesAreRefused)
{
    const py::dict py = RunPython(R"py(
p = dgx16()
said = []
expect = said_by(said)
# a fabric whose Python object is gone still runs (kept until Destroy)
arrived = []
gf.FabricHelper().Install(gf.BuildRailOnly(p)).GetTransport().Send(
    0, 9, 1 << 20, lambda: arrived.append(gf.Simulator.Now()))
gf.Simulator.Run()
# Destroy from a callback is refused (it would free the running simulator)
fabric = gf.FabricHelper().Install(gf.BuildRailOnly(p))
transport = fabric.GetTransport()
transport.Send(0, 1, 1000, lambda: gf.Simulator.Destroy())
expect(gf.Simulator.Run)
gf.Simulator.Destroy()
# what came before Destroy cannot be used again
expect(lambda: transport.Send(0, 1, 1000))
expect(lambda: fabric.GetTransport())
expect(lambda: gf.CollectiveHelper(None))
# a second collective installed after a run starts then (start_s defaults to now)
flow = gf.FlowHelper().Install(gf.BuildRailOnly(p))
helper = gf.CollectiveHelper(flow)
first = helper.Install(gf.CollectiveHelper.AllRanks(16), "allgather", "ring", 1 << 20)
gf.Simulator.Run()
second = helper.Install(gf.CollectiveHelper.AllRanks(16), "allgather", "ring", 1 << 20)
gf.Simulator.Run()
starts = (first.GetFinishTime(), second.GetStartTime(), second.IsComplete())
ticks = []
gf.Simulator.Schedule(2e-6, lambda: ticks.append(gf.Simulator.Now()))
at = gf.Simulator.Now()
gf.Simulator.Run()
# beyond ns-3's Time range, and collectives larger than a transport takes
expect(lambda: gf.Simulator.Stop(1e10))
expect(lambda: helper.Install([0, 1], "allreduce", "ring", 1 << 62))
gf.Simulator.Destroy()
)py");
    ASSERT_EQ(py::len(py["arrived"]), 1u);
    EXPECT_GT(py["arrived"][py::int_(0)].cast<double>(), 0.0);
    const auto said = py["said"].cast<std::vector<std::string>>();
    const std::vector<std::string> want = {
        "invalid Simulator.Destroy: got 'called during Simulator.Run()'",
        "invalid transport: got 'one disposed or from before Simulator.Destroy()'",
        "invalid fabric: got 'disposed (Fabric.Dispose or Simulator.Destroy)'",
        "invalid fabric: got 'None'",
        "invalid stop time: got '10000000000'",
        "invalid bytes: got '4611686018427387904', allowed: at most 17592186044416",
    };
    ASSERT_EQ(said.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
    {
        EXPECT_NE(said[i].find(want[i]), std::string::npos) << said[i];
    }
    const auto [firstDone, secondStart, secondComplete] =
        py["starts"].cast<std::tuple<double, double, bool>>();
    EXPECT_GT(firstDone, 0.0);
    EXPECT_DOUBLE_EQ(secondStart, firstDone);
    EXPECT_TRUE(secondComplete);
    ASSERT_EQ(py::len(py["ticks"]), 1u);
    EXPECT_NEAR(py["ticks"][py::int_(0)].cast<double>(), py["at"].cast<double>() + 2e-6, 1e-12);
}

TEST(PythonBindings, AFaultHelperOutlivingItsFabricRaises)
{
    // its injector's fabric is gone after Destroy: every fault segfaulted
    const py::dict py = RunPython(R"py(
p = dgx16()
said = []
expect = said_by(said)
topo = gf.BuildRailOnly(p)
fabric = gf.FabricHelper().Install(topo)
faults = gf.FaultHelper(fabric)
rail = gf.FaultHelper.FindSwitches(topo, "rail")[0]
expect(lambda: faults.LinkDown(0, 1e-6))
gf.Simulator.Destroy()
expect(lambda: faults.LinkDown(0, 0.0))
expect(lambda: faults.LinkUp(0, 0.0))
expect(lambda: faults.SwitchDown(rail, 0.0))
expect(lambda: faults.SwitchUp(rail, 0.0))
expect(lambda: faults.GpuDown(3, 0.0))
expect(lambda: faults.DegradeLink(0, 0.5, 0.0))
expect(lambda: faults.SetBitErrorRate(0, 1e-9))
gf.Simulator.Destroy()
)py");
    const auto said = py["said"].cast<std::vector<std::string>>();
    ASSERT_EQ(said.size(), 8u);
    EXPECT_EQ(said[0], "accepted");
    for (size_t i = 1; i < said.size(); ++i)
    {
        EXPECT_EQ(said[i],
                  "invalid fabric of the FaultHelper: got 'disposed (Fabric::Dispose or "
                  "Simulator::Destroy)', allowed: a fabric installed since the last "
                  "Simulator::Destroy (make a new FaultHelper for it)");
    }
}

TEST(PythonBindings, AScriptThatLeavesARunPendingExits)
{
#if defined(GPU_FABRIC_SANITIZE)
    GTEST_SKIP() << "needs a python3 that can load the module uninstrumented";
#else
    // no Simulator.Destroy() and a Python callback held by ns-3: the exit
    // used to hang (the C++ statics released the callback after Python)
    const std::string script = ::testing::TempDir() + "py-exit.py";
    {
        std::ofstream f(script);
        f << "import gpu_fabric as gf\n"
             "p = gf.ClusterParams()\np.gpus = 16\n"
             "fabric = gf.FabricHelper().Install(gf.BuildRailOnly(p))\n"
             "run = gf.CollectiveHelper(fabric).Install(gf.CollectiveHelper.AllRanks(16), "
             "'allreduce', 'ring', 1 << 20)\n"
             "run.SetCompletionCallback(lambda r: None)\n"
             "gf.Simulator.Run()\n"
             "print('ran', run.IsComplete())\n";
    }
    const std::string cmd = std::string("PYTHONPATH=") + GPU_FABRIC_PYTHON_DIR +
                            " timeout 60 /usr/bin/python3 " + script + " > " + script + ".out";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::ifstream out(script + ".out");
    std::stringstream text;
    text << out.rdbuf();
    EXPECT_EQ(text.str(), "ran True\n");
#endif
}

TEST(PythonBindings, ExampleScriptMatchesCollectiveBench)
{
#if defined(GPU_FABRIC_SANITIZE) || !defined(GPU_FABRIC_BIN_DIR)
    GTEST_SKIP() << "needs the programs, and a python3 that can load the module uninstrumented";
#else
    // bindings/examples/rail-only-allreduce.py run by Debian's python3: its
    // rail-only row is collective-bench's figure for the same allreduce
    const std::string dir = ::testing::TempDir();
    const std::string py = dir + "py-example.json";
    const std::string bench = dir + "py-bench.json";
    std::remove(py.c_str());
    std::remove(bench.c_str());
    const std::string runPy = std::string("PYTHONPATH=") + GPU_FABRIC_PYTHON_DIR +
                              " /usr/bin/python3 " + GPU_FABRIC_SOURCE_DIR +
                              "/bindings/examples/rail-only-allreduce.py --gpus=16 "
                              "--sizes=1048576 --json=" +
                              py + " > /dev/null";
    ASSERT_EQ(std::system(runPy.c_str()), 0) << runPy;
    const std::string runBench = std::string(GPU_FABRIC_BIN_DIR) +
                                 "/collective-bench --gpus=16 --min-bytes=1048576 "
                                 "--max-bytes=1048576 --json=" +
                                 bench + " > /dev/null";
    ASSERT_EQ(std::system(runBench.c_str()), 0) << runBench;
    const auto read = [](const std::string& path) {
        std::ifstream in(path);
        std::stringstream text;
        text << in.rdbuf();
        return nlohmann::json::parse(text.str());
    };
    const nlohmann::json a = read(py);
    const nlohmann::json b = read(bench);
    ASSERT_EQ(a["rows"].size(), 2u);
    EXPECT_EQ(a["rows"][0]["topology"], "rail-only");
    EXPECT_DOUBLE_EQ(a["rows"][0]["time_s"].get<double>(), b["results"][0]["time_s"].get<double>());
    EXPECT_DOUBLE_EQ(a["rows"][0]["busbw_gbps"].get<double>(),
                     b["results"][0]["busbw_gbps"].get<double>());
#endif
}

} // namespace
