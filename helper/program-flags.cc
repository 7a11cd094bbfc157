/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "program-flags.h"

#include "ns3/config.h"
#include "ns3/fabric-distributed.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-lookahead-scheduler.h"
#include "ns3/global-value.h"
#include "ns3/pointer.h"
#include "ns3/scheduler.h"
#include "ns3/simulator-impl.h"
#include "ns3/string.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <new>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

namespace ns3
{

namespace
{

// The checks below scan by hand: std::regex matches recursively, and a
// flag value of 100 kB overflowed the stack.

/// \return the number of decimal digits \p text starts with from \p at
size_t
Digits(std::string_view text, size_t at)
{
    size_t n = 0;
    while (at + n < text.size() && std::isdigit(static_cast<unsigned char>(text[at + n])))
    {
        ++n;
    }
    return n;
}

/// \return whether \p text is a whole number: digits after an optional +
/// (or -, if \p minus)
bool
IsWhole(std::string_view text, bool minus)
{
    const size_t sign = !text.empty() && (text[0] == '+' || (minus && text[0] == '-')) ? 1 : 0;
    return text.size() > sign && Digits(text, sign) == text.size() - sign;
}

/**
 * \return the length of the decimal number \p text starts with, as ns-3's
 * stream parsers read one ([+-]?(d+.?d*|.d+)([eE][+-]?d+)?), or 0
 */
size_t
DecimalPrefix(std::string_view text)
{
    size_t at = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
    const size_t whole = Digits(text, at);
    at += whole;
    size_t fraction = 0;
    if (at < text.size() && text[at] == '.')
    {
        fraction = Digits(text, at + 1);
        at += 1 + fraction;
    }
    if (whole + fraction == 0)
    {
        return 0;
    }
    if (at < text.size() && (text[at] == 'e' || text[at] == 'E'))
    {
        const size_t sign = at + 1 < text.size() && (text[at + 1] == '+' || text[at + 1] == '-');
        const size_t exponent = Digits(text, at + 1 + sign);
        at += exponent > 0 ? 1 + sign + exponent : 0;
    }
    return at;
}

/// \return whether \p text is one whole decimal number (see DecimalPrefix)
bool
IsDecimal(std::string_view text)
{
    return !text.empty() && DecimalPrefix(text) == text.size();
}

/**
 * Print "<program>: <message>" and exit with status 2, as every program
 * does on bad input.
 */
[[noreturn]] void
ExitBadInput(const std::string& program, const std::string& message)
{
    fmt::print(stderr, "{}: {}\n", program, message);
    std::exit(2);
}

/**
 * \return +1 if \p text spells true for a bool flag as CommandLine reads
 *         it (any case; empty means a bare flag: true here), -1 for false, 0
 *         for neither
 */
int
BoolSpelling(const std::string& text)
{
    std::string v = text;
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) {
        return static_cast<char>(std::tolower(c));
    });
    if (v.empty() || v == "true" || v == "t" || v == "1")
    {
        return 1;
    }
    return v == "false" || v == "f" || v == "0" ? -1 : 0;
}

/**
 * \return false if \p value would make ns-3 abort when parsed as a value of
 * \p type (its integer, floating-point and Time parsers abort on a malformed
 * string instead of failing)
 */
bool
ParsesWithoutAbort(const std::string& type, const std::string& value)
{
    if (type.rfind("uint", 0) == 0)
    {
        return !value.empty() && Digits(value, 0) == value.size();
    }
    if (type.rfind("int", 0) == 0)
    {
        return IsWhole(value, true) && value[0] != '+';
    }
    if (type.rfind("double", 0) == 0)
    {
        return IsDecimal(value);
    }
    if (type.rfind("Time", 0) == 0)
    {
        const size_t number = DecimalPrefix(value);
        const std::string unit = value.substr(number);
        return number > 0 && (unit.empty() || unit == "s" || unit == "ms" || unit == "us" ||
                              unit == "ns" || unit == "ps" || unit == "fs" || unit == "min" ||
                              unit == "h" || unit == "d" || unit == "y");
    }
    // the other ns-3 parsers fail cleanly, but most abort on a second word
    return type == "std::string" || value.find_first_of(" \t") == std::string::npos;
}

/**
 * \return the concrete registered types derived from \p base, by name
 * (what a TypeId-valued global such as SchedulerType may name)
 */
std::vector<std::string>
ConcreteChildren(TypeId base)
{
    std::vector<std::string> names;
    for (uint16_t i = 0; i < TypeId::GetRegisteredN(); ++i)
    {
        const TypeId tid = TypeId::GetRegistered(i);
        if (tid != base && tid.IsChildOf(base) && tid.HasConstructor())
        {
            names.push_back(tid.GetName());
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

/**
 * \return "" if \p value names a constructible type derived from \p base,
 * else what is allowed (the global's checker takes any TypeId: ns-3 would
 * then crash creating a ns3::FabricSwitch as its scheduler)
 */
std::string
ChildTypeCheck(TypeId base, const std::string& what, const std::string& value)
{
    TypeId tid;
    if (TypeId::LookupByNameFailSafe(value, &tid) && tid != base && tid.IsChildOf(base) &&
        tid.HasConstructor())
    {
        return "";
    }
    return fmt::format("the TypeId name of {}: {}", what, fmt::join(ConcreteChildren(base), ", "));
}

/// \return the global value called \p name, or null
const GlobalValue*
FindGlobalValue(const std::string& name)
{
    for (auto g = GlobalValue::Begin(); g != GlobalValue::End(); ++g)
    {
        if ((*g)->GetName() == name)
        {
            return *g;
        }
    }
    return nullptr;
}

/**
 * Exit with status 2 naming a bad --ns3:: attribute or global value; set a
 * valid one, as CommandLine would.
 */
void
RejectBadAttributeValue(const std::string& program,
                        const std::string& name,
                        const std::string& value)
{
    try
    {
        SetDefaultFromText("--" + name, name, value);
    }
    catch (const FabricConfigError& e)
    {
        ExitBadInput(program, e.what());
    }
}

} // namespace

void
SetDefaultFromText(const std::string& flag, const std::string& name, const std::string& value)
{
    const GlobalValue* global = FindGlobalValue(name); // e.g. SchedulerType, RngRun
    // what the attribute or global takes: its checker's type, and its help
    Ptr<const AttributeChecker> checker;
    std::string help;
    if (global != nullptr)
    {
        checker = global->GetChecker();
        help = global->GetHelp();
    }
    else
    {
        const auto sep = name.rfind("::");
        TypeId tid;
        TypeId::AttributeInformation info;
        if (sep != std::string::npos && TypeId::LookupByNameFailSafe(name.substr(0, sep), &tid) &&
            tid.LookupAttributeByName(name.substr(sep + 2), &info))
        {
            checker = info.checker;
            help = info.help;
        }
    }
    const std::string type = checker ? checker->GetUnderlyingTypeInformation() : "";
    // what the global's checker lets through but ns-3 cannot run with
    std::string refused;
    if (name == "SchedulerType")
    {
        refused = ChildTypeCheck(Scheduler::GetTypeId(), "an ns-3 scheduler", value);
    }
    else if (name == "SimulatorImplementationType")
    {
        refused =
            ChildTypeCheck(SimulatorImpl::GetTypeId(), "an ns-3 simulator implementation", value);
    }
    else if (name == "RngSeed" && IsWhole(value, false) &&
             value.find_first_not_of("+0") == std::string::npos)
    {
        refused = "a whole number from 1 to 4294967295 (ns-3's generator needs a non-zero seed)";
    }
    else if (const auto pointer = DynamicCast<const PointerChecker>(checker))
    {
        // ns-3 makes the object from the text when it builds the owner, and
        // aborts on a name it cannot make (TxQueue=0)
        const TypeId pointee = pointer->GetPointeeTypeId();
        refused = ChildTypeCheck(pointee, pointee.GetName(), value);
    }
    if (!refused.empty())
    {
        throw FabricConfigError(flag, value, refused);
    }
    if (checker && ParsesWithoutAbort(type, value) &&
        (global != nullptr ? GlobalValue::BindFailSafe(name, StringValue(value))
                           : Config::SetDefaultFailSafe(name, StringValue(value))))
    {
        return;
    }
    throw FabricConfigError(flag,
                            value,
                            checker ? fmt::format("{} ({})", type, help)
                                    : "an attribute of a registered type, ns3::<Type>::<Attribute> "
                                      "(see --PrintAttributes=ns3::<Type>), or a global value");
}

void
RejectUnknownFlags(const std::string& program,
                   int argc,
                   char* argv[],
                   const std::set<std::string>& known)
{
    const auto unknown = [&](const std::string& arg) {
        ExitBadInput(program,
                     FabricConfigError("flag",
                                       arg,
                                       fmt::format("--{} (see --help)", fmt::join(known, ", --")))
                         .what());
    };
    const auto noValue = [&](const std::string& name, const std::string& allowed) {
        ExitBadInput(
            program,
            fmt::format("invalid --{}: got no value, allowed: --{}={}", name, name, allowed));
    };
    for (int i = 1; i < argc; ++i)
    {
        const std::string a = argv[i];
        // exactly two dashes: CommandLine strips two, so "---gpus" would be
        // the unknown "-gpus" (exit 1) while its value was checked as --gpus
        if (a.size() < 3 || a.rfind("--", 0) != 0 || a[2] == '-')
        {
            unknown(a);
        }
        const auto eq = a.find('=');
        const std::string name = a.substr(2, eq == std::string::npos ? eq : eq - 2);
        const std::string value = eq == std::string::npos ? "" : a.substr(eq + 1);
        if (FindGlobalValue(name) != nullptr || name.rfind("ns3::", 0) == 0)
        {
            // e.g. --SchedulerType, --RngRun, --ns3::Type::Attribute: CommandLine
            // would reject a bad value with status 1 or abort; checked and set here
            if (eq == std::string::npos)
            {
                noValue(name, "<value> (see --PrintGlobals, --PrintAttributes=ns3::<Type>)");
            }
            RejectBadAttributeValue(program, name, value);
            continue;
        }
        if (name == "help" || name == "PrintHelp" || name == "PrintGlobals" ||
            name == "PrintGroups" || name == "PrintTypeIds" || name == "version" ||
            name == "PrintVersion")
        {
            continue;
        }
        if (name == "PrintAttributes")
        {
            // ns-3 aborts on a name it cannot look up (a bare flag is "")
            TypeId tid;
            if (eq == std::string::npos)
            {
                noValue(name, "<TypeId> (see --PrintTypeIds)");
            }
            if (!TypeId::LookupByNameFailSafe(value, &tid))
            {
                ExitBadInput(program,
                             FabricConfigError("--" + name,
                                               value,
                                               "a registered TypeId name, e.g. "
                                               "ns3::FabricSwitch (see --PrintTypeIds)")
                                 .what());
            }
            continue;
        }
        if (name == "PrintGroup")
        {
            // ns-3 prints an empty list for a group no type is in
            bool found = false;
            for (uint16_t t = 0; t < TypeId::GetRegisteredN() && !found; ++t)
            {
                found = TypeId::GetRegistered(t).GetGroupName() == value;
            }
            if (eq == std::string::npos)
            {
                noValue(name, "<group> (see --PrintGroups)");
            }
            if (value.empty() || !found)
            {
                ExitBadInput(program,
                             FabricConfigError("--" + name,
                                               value,
                                               "the name of a group of types (see --PrintGroups)")
                                 .what());
            }
            continue;
        }
        if (!known.count(name))
        {
            unknown(a);
        }
    }
}

ProgramFlags::ProgramFlags(std::string program, const std::string& file)
    : m_program(std::move(program)),
      m_cmd(file)
{
}

void
ProgramFlags::Usage(const std::string& text)
{
    m_cmd.Usage(text);
}

ProgramFlags::Check
ProgramFlags::IntegerCheck(bool isSigned, long double low, long double high)
{
    return [isSigned, low, high](const std::string& text) -> std::string {
        const std::string allowed =
            fmt::format("a whole number from {:.0Lf} to {:.0Lf}", low, high);
        if (!IsWhole(text, isSigned))
        {
            return allowed;
        }
        // long double holds every 64-bit integer's magnitude to compare
        const long double v = std::strtold(text.c_str(), nullptr);
        return v < low || v > high ? allowed : "";
    };
}

ProgramFlags::Check
ProgramFlags::RealCheck()
{
    return [](const std::string& text) -> std::string {
        // decimal only: strtod would take "0x.8", which the stream ns-3 reads with sees as 0
        const bool ok = IsDecimal(text) && std::isfinite(std::strtod(text.c_str(), nullptr));
        return ok ? "" : "a finite number, e.g. 0.5 or 1e-6";
    };
}

ProgramFlags::Check
ProgramFlags::BoolCheck()
{
    return [](const std::string& text) -> std::string {
        const bool ok = BoolSpelling(text) != 0;
        return ok ? "" : "true, false, 1 or 0";
    };
}

namespace
{

/// \return the process's peak resident set, MB (getrusage allocates nothing)
double
PeakRssMegabytes()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) * 1024 / 1e6;
}

/// The running program's name, for the out-of-memory handler (set once, by Parse).
char g_programName[64] = "program";

/**
 * The last resort when memory runs out where no estimate refused the run up
 * front: say so and exit with status 2, instead of the SIGABRT of an
 * uncaught std::bad_alloc. It allocates nothing (an allocation just failed).
 */
[[noreturn]] void
OutOfMemory()
{
    char text[512];
    const int n = std::snprintf(text,
                                sizeof(text),
                                "%s: out of memory: a request for memory failed with %.1f MB in "
                                "use at peak; the run needs more than this machine or its limit "
                                "(ulimit -v) allows: give it smaller sizes\n",
                                g_programName,
                                PeakRssMegabytes());
    if (n > 0)
    {
        [[maybe_unused]] const auto written =
            write(STDERR_FILENO, text, std::min<size_t>(n, sizeof(text) - 1));
    }
    _exit(2);
}

/**
 * mimalloc's error callback (mi_register_error): mimalloc, linked into the
 * programs, aborts on a failed new without asking std::get_new_handler, but
 * calls this first; anything but running out keeps its default handling.
 */
void
MimallocError(int error, void* /* arg */)
{
    if (error == ENOMEM || error == EOVERFLOW)
    {
        OutOfMemory();
    }
}

/// \return the scheduler NS_GLOBAL_VALUE ("name=value;name=value") names,
/// else the module's (ns-3 reads the variable at start-up, before this module
/// registers its types, and ignores a name it cannot resolve then)
/// \throws FabricConfigError if it names no scheduler
TypeId
ProgramSchedulerType()
{
    const char* env = std::getenv("NS_GLOBAL_VALUE");
    std::istringstream items(env == nullptr ? "" : env);
    for (std::string item; std::getline(items, item, ';');)
    {
        const std::string key = "SchedulerType=";
        if (item.rfind(key, 0) != 0)
        {
            continue;
        }
        // the first one counts, as for ns-3
        const std::string name = item.substr(key.size());
        TypeId tid;
        FabricRequire(TypeId::LookupByNameFailSafe(name, &tid) &&
                          tid.IsChildOf(Scheduler::GetTypeId()),
                      "NS_GLOBAL_VALUE SchedulerType",
                      name,
                      "the TypeId name of an ns-3 scheduler (ns3::MapScheduler, "
                      "ns3::FabricLookaheadScheduler, ...)");
        return tid;
    }
    return FabricLookaheadScheduler::GetTypeId();
}

} // namespace

void
UseFabricScheduler()
{
    GlobalValue::Bind("SchedulerType", TypeIdValue(ProgramSchedulerType()));
}

void
ProgramFlags::UseFabricScheduler()
{
    m_fabricScheduler = true;
}

namespace
{

/**
 * \param openMpi Open MPI's variable (the job's size, or this process's rank)
 * \param pmi PMI's variable for the same
 * \return what mpirun told this process (Open MPI, or a PMI launcher such as
 *         MPICH's); 0 when not started by one
 */
uint32_t
LauncherValue(const char* openMpi, const char* pmi)
{
    for (const char* var : {openMpi, pmi})
    {
        if (const char* text = std::getenv(var))
        {
            return static_cast<uint32_t>(std::strtoul(text, nullptr, 10));
        }
    }
    return 0;
}

/// \return the processes mpirun started (1 when not started by it)
uint32_t
LaunchedSize()
{
    return std::max<uint32_t>(1, LauncherValue("OMPI_COMM_WORLD_SIZE", "PMI_SIZE"));
}

/// \return this process's rank among them
uint32_t
LaunchedRank()
{
    return LauncherValue("OMPI_COMM_WORLD_RANK", "PMI_RANK");
}

} // namespace

ProgramFlags::~ProgramFlags()
{
    if (m_distributed)
    {
        FabricDistributed::Disable();
    }
}

void
ProgramFlags::SupportsDistributed()
{
    m_supportsDistributed = true;
}

void
ProgramFlags::AddPartition(std::string& partition, const std::string& scope)
{
    SupportsDistributed();
    AddValue("partition",
             "under mpirun -np N, " + scope +
                 ": how each fabric is cut over the ranks (domain, domain:B, pipeline:P, pod or "
                 "file:PATH, as bench/mpi-scale)",
             partition);
}

void
ProgramFlags::RunOnRankZero(const std::string& why) const
{
    const uint32_t size = LaunchedSize();
    if (size <= 1)
    {
        return;
    }
    if (LaunchedRank() != 0)
    {
        std::exit(0); // before printing or writing anything
    }
    fmt::print(stderr,
               "note: {} started on {} processes by mpirun runs on rank 0 alone ({}); the "
               "other ranks exit\n",
               m_program,
               size,
               why);
}

bool
ProgramFlags::Distribute(int argc, char* argv[], bool applies, const std::string& why)
{
    if (LaunchedSize() <= 1)
    {
        return false;
    }
    if (!applies || !FabricDistributed::IsAvailable())
    {
        RunOnRankZero(applies ? "this build has no MPI; scripts/build.sh --mpi builds one that has"
                              : why);
        return false;
    }
    FabricDistributed::Enable(&argc, &argv);
    m_distributed = true;
    return true;
}

void
ProgramFlags::Parse(int argc, char* argv[])
{
    std::snprintf(g_programName, sizeof(g_programName), "%s", m_program.c_str());
    std::set_new_handler(OutOfMemory);
    if (m_supportsDistributed && LaunchedSize() > 1 && LaunchedRank() != 0)
    {
        // rank 0 prints the run's results, its help or a bad flag's message
        // once; the others print nothing (Distribute may still send this
        // rank away, or make it one of a distributed run's)
        (void)!std::freopen("/dev/null", "w", stdout);
        (void)!std::freopen("/dev/null", "w", stderr);
    }
    if (!m_supportsDistributed && !FabricDistributed::IsEnabled())
    {
        RunOnRankZero("it is not a distributed program; collective-bench, "
                      "rail-only-vs-fat-tree, moe-alltoall, multi-job, chakra-replay, "
                      "direct-connect-synth --simulate and --compare (packet level) and "
                      "bench/mpi-scale are");
    }
    // looked up, not linked: the library does not depend on mimalloc
    using MiErrorFun = void (*)(int, void*);
    if (auto registerError =
            reinterpret_cast<void (*)(MiErrorFun, void*)>(dlsym(RTLD_DEFAULT, "mi_register_error")))
    {
        registerError(&MimallocError, nullptr);
    }
    // what CommandLine will parse: a bare bool flag is written out as true
    // (CommandLine would toggle it: a bare --keep whose default is true
    // would turn it off)
    std::vector<std::string> args(argv, argv + argc);
    for (auto& a : args)
    {
        const auto eq = a.find('=');
        if (a.rfind("--", 0) != 0)
        {
            continue;
        }
        const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
        if (eq != std::string::npos && eq + 1 == a.size() && m_known.count(name))
        {
            // ns-3's CommandLine refuses it too, but with exit 1 and no reason
            ExitBadInput(m_program,
                         FabricConfigError("--" + name,
                                           "",
                                           "a value (leave the flag out for its default; see "
                                           "--help)")
                             .what());
        }
        if (m_known.count(name))
        {
            m_given[name] = eq == std::string::npos ? "" : a.substr(eq + 1);
        }
        const auto check = m_checks.find(name);
        if (check == m_checks.end())
        {
            continue;
        }
        if (eq == std::string::npos)
        {
            if (m_bools.count(name))
            {
                a += "=true";
                continue;
            }
            ExitBadInput(
                m_program,
                fmt::format("invalid --{}: got no value, allowed: --{}=<value> (see --help)",
                            name,
                            name));
        }
        const std::string value = a.substr(eq + 1);
        const std::string allowed = check->second(value);
        if (!allowed.empty())
        {
            ExitBadInput(m_program, FabricConfigError("--" + name, value, allowed).what());
        }
    }
    std::vector<char*> raw;
    for (auto& a : args)
    {
        raw.push_back(a.data());
    }
    RejectUnknownFlags(m_program, argc, raw.data(), m_known);
    // the module's scheduler if asked (UseFabricScheduler); --SchedulerType,
    // parsed next, or NS_GLOBAL_VALUE naming it still decides
    if (m_fabricScheduler)
    {
        try
        {
            ns3::UseFabricScheduler();
        }
        catch (const FabricConfigError& e)
        {
            ExitBadInput(m_program, e.what());
        }
    }
    m_cmd.Parse(argc, raw.data());
}

bool
ProgramFlags::WasGiven(const std::string& name) const
{
    return m_given.count(name) > 0;
}

std::string
ProgramFlags::ValueText(const std::string& name) const
{
    const auto given = m_given.find(name);
    if (given != m_given.end())
    {
        return given->second;
    }
    const auto d = m_defaults.find(name);
    return d == m_defaults.end() ? "" : d->second;
}

void
ProgramFlags::OnlyWith(const std::string& name, bool applies, const std::string& when) const
{
    const auto given = m_given.find(name);
    FabricRequire(applies || given == m_given.end(),
                  "--" + name,
                  given == m_given.end() ? "" : given->second,
                  "only " + when + " (it means nothing otherwise)");
}

bool
FlagIsTrue(int argc, char* argv[], const std::string& name)
{
    bool on = false;
    for (int i = 1; i < argc; ++i)
    {
        const std::string a = argv[i];
        if (a == "--" + name)
        {
            on = true;
        }
        else if (a.rfind("--" + name + "=", 0) == 0)
        {
            on = BoolSpelling(a.substr(name.size() + 3)) > 0;
        }
    }
    return on;
}

std::string
IntegerRangeText(uint64_t minimum, uint64_t maximum)
{
    return maximum == std::numeric_limits<uint64_t>::max()
               ? fmt::format("an integer >= {}", minimum)
               : fmt::format("an integer from {} to {}", minimum, maximum);
}

uint64_t
ParseInteger(const std::string& flag, const std::string& text, uint64_t minimum, uint64_t maximum)
{
    size_t used = 0;
    unsigned long long v = 0;
    try
    {
        v = std::stoull(text, &used);
    }
    catch (const std::exception&)
    {
        used = 0;
    }
    const std::string allowed = IntegerRangeText(minimum, maximum);
    if (!(used == text.size() && used > 0 && text[0] != '-' && v >= minimum && v <= maximum))
    {
        throw FabricConfigError(flag, text, allowed);
    }
    return v;
}

DataRate
ParseRate(const std::string& flag, const std::string& text)
{
    // DataRate's stream extraction sets failbit where its constructor aborts
    std::istringstream in(text);
    DataRate rate;
    in >> rate;
    const bool parsed = !in.fail();
    std::string rest;
    in >> rest; // "10 Gbps" would read as 10 bit/s: nothing may follow
    const bool whole = parsed && rest.empty();
    // a bare number would be bits per second: "100" meant 100Gbps, surely
    const bool hasUnit = text.find_first_not_of("0123456789.eE+- ") != std::string::npos;
    FabricRequire(hasUnit && whole && rate.GetBitRate() > 0,
                  flag,
                  text,
                  "a positive rate with a unit, e.g. 100Gbps, 400Gb/s or 50GB/s");
    return rate;
}

std::vector<std::string>
SplitList(const std::string& flag, const std::string& text)
{
    // getline drops a trailing empty item ("8,16," would read as 8,16)
    FabricRequire(text.empty() || text.back() != ',',
                  flag,
                  text,
                  "a comma-separated list without empty items");
    std::vector<std::string> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        FabricRequire(!item.empty(), flag, text, "a comma-separated list without empty items");
        out.push_back(item);
    }
    FabricRequire(!out.empty(), flag, text, "at least one item");
    return out;
}

std::vector<uint32_t>
ParseIntegerList(const std::string& flag, const std::string& text, uint64_t minimum)
{
    std::vector<uint32_t> out;
    for (const auto& item : SplitList(flag, text))
    {
        out.push_back(static_cast<uint32_t>(ParseInteger(flag, item, minimum)));
    }
    return out;
}

std::string
ShownValue(std::string_view text)
{
    return FabricShownValue(text);
}

} // namespace ns3
