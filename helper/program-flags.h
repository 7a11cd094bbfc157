/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_PROGRAM_FLAGS_H
#define GPU_FABRIC_PROGRAM_FLAGS_H

#include "ns3/command-line.h"
#include "ns3/data-rate.h"

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ns3
{

/**
 * \file
 * \ingroup gpu-fabric
 * \brief Command lines that reject bad input the same way in every program
 * (examples, benchmarks, a user's scenario): a message naming the flag, the
 * value and what is allowed, and exit status 2. Which topology or backend a
 * name means is TopologyHelper's and TransportHelper's.
 */

/**
 * \ingroup gpu-fabric
 * Make FabricLookaheadScheduler the simulator's scheduler (the SchedulerType
 * global value): ns-3's order of events, so the same results as its map
 * scheduler, in less time on packet-level runs. NS_GLOBAL_VALUE naming a
 * SchedulerType wins (ns-3 reads it at start-up, before this module has
 * registered its types, and would ignore the name). Call it before the
 * simulator's first event; a --SchedulerType parsed afterwards still decides
 * (ProgramFlags::UseFabricScheduler does it at that point of Parse).
 * \throws FabricConfigError if NS_GLOBAL_VALUE's SchedulerType names no
 *         ns-3 scheduler
 */
void UseFabricScheduler();

/**
 * \ingroup gpu-fabric
 * \brief ns-3's CommandLine as the programs use it, with every bad flag
 * treated as bad input (a message naming the flag, the value and what is
 * allowed, exit status 2): an unknown flag (CommandLine exits with 1), a bad
 * --ns3:: attribute or global value (see RejectUnknownFlags), and a value
 * that does not fit a numeric flag's type. CommandLine alone reads "-5" for
 * an unsigned flag as 2^64 - 5 and "12abc" as 12; here an integer flag takes
 * only a whole number within its type's range, a floating-point flag a
 * finite number and a bool flag true, false, t, f, 1 or 0; a bare --flag
 * sets a bool flag true (CommandLine would toggle it) and is an error for
 * other flags (CommandLine would exit with 1). A string flag takes its whole
 * value (CommandLine reads it with >>, which stops at the first blank: a
 * --json="my results.json" would write "my"). Flags are known from AddValue:
 * there is no second list.
 */
class ProgramFlags
{
  public:
    /**
     * \param program the program's name, for messages
     * \param file the program's source (__FILE__), for CommandLine's help
     */
    ProgramFlags(std::string program, const std::string& file);
    /// Ends MPI if Distribute() started it (after the program's last simulation).
    ~ProgramFlags();
    ProgramFlags(const ProgramFlags&) = delete;
    ProgramFlags& operator=(const ProgramFlags&) = delete;

    /// \param text what the program does, for --help
    void Usage(const std::string& text);

    /**
     * Add a flag --name=value.
     * \param name the flag without dashes \param help its help text
     * \param value the variable it sets (its default shown in --help)
     */
    template <typename T>
    void AddValue(const std::string& name, const std::string& help, T& value);

    /**
     * Add a numeric flag --name=value that must also satisfy \p valid: a
     * value that is not a number of the type, or that \p valid refuses,
     * exits with status 2 as "invalid --name: got '<value>', allowed:
     * <allowed>" (the default is not checked).
     * \param name the flag without dashes \param help its help text
     * \param value the variable it sets (its default shown in --help)
     * \param allowed what is allowed, for the message
     * \param valid whether a value of the type is allowed
     */
    template <typename T>
    void AddValue(const std::string& name,
                  const std::string& help,
                  T& value,
                  const std::string& allowed,
                  std::function<bool(T)> valid);

    /**
     * Add an integer flag from \p minimum to \p maximum, refused as
     * ParseInteger refuses a value out of its range ("an integer from 1 to
     * 2147483647", or "an integer >= 1" without a maximum).
     * \param name the flag without dashes \param help its help text
     * \param value the variable it sets
     * \param minimum smallest allowed \param maximum largest allowed (at
     *        most the type's)
     */
    template <typename T>
    void AddInteger(const std::string& name,
                    const std::string& help,
                    T& value,
                    uint64_t minimum = 1,
                    uint64_t maximum = (uint64_t{1} << 31) - 1);

    /**
     * Run on the module's scheduler: Parse then calls ns3::UseFabricScheduler
     * after checking the flags and before setting them, so --SchedulerType
     * (or NS_GLOBAL_VALUE) still decides, and a bad NS_GLOBAL_VALUE exits
     * with status 2. The module's programs all call it. Without it Parse
     * leaves the scheduler as it is (ns-3's map scheduler unless set).
     */
    void UseFabricScheduler();

    /**
     * Check every flag, then let CommandLine set the variables; exits with
     * status 2 on the first bad flag.
     * \param argc argc of main \param argv argv of main
     */
    void Parse(int argc, char* argv[]);

    /// \param name a flag without dashes \return whether the command line gave it
    bool WasGiven(const std::string& name) const;

    /**
     * Declare, before Parse, that the program calls Distribute() after it.
     * Without it, a program started by mpirun on N > 1 processes runs on
     * rank 0 alone (the others exit at once, printing nothing) and says so
     * on stderr: the output is the one-process run's, printed once.
     */
    void SupportsDistributed();

    /**
     * SupportsDistributed(), and the flag --partition: under mpirun -np N,
     * how each packet-level fabric is cut over the ranks (domain, pod or
     * file:PATH, as bench/mpi-scale; TransportHelper::SetPartition). Refuse
     * it where the run is not distributed with OnlyWith("partition",
     * distributed, kDistributedOnly).
     * \param partition the variable it sets (its default is the flag's)
     * \param scope what is cut, for --help ("packet level", "with --simulate")
     */
    void AddPartition(std::string& partition, const std::string& scope = "packet level");

    /// When --partition means something (OnlyWith's \p when).
    static constexpr const char* kDistributedOnly =
        "under mpirun -np N (N > 1), packet level, in a build with MPI";

    /**
     * After Parse: under mpirun on N > 1 processes, in a build with MPI and
     * where \p applies, start ns-3's distributed engine (FabricDistributed);
     * TransportHelper then cuts every packet-level fabric over the ranks and
     * gathers each collective's result on rank 0. Ranks other than 0 print
     * nothing (Parse sends their stdout and stderr to /dev/null, so help and
     * bad flags are printed once too) and write no files, so the output is
     * printed once. Otherwise the run goes to rank 0 alone,
     * as without SupportsDistributed(), and the note gives \p why.
     * RunOutputs' --timeline and --link-util are gathered on rank 0 too.
     * \param argc argc of main \param argv argv of main (MPI's own arguments)
     * \param applies whether this run can be distributed
     * \param why why not, when it cannot ("the flow level is not distributed")
     * \return whether the run is distributed
     */
    bool Distribute(int argc, char* argv[], bool applies, const std::string& why);

    /**
     * Refuse a flag the command line gave where it would be ignored (a flag
     * that only means something with another), instead of running without it.
     * \param name the flag without dashes
     * \param applies whether it means something in this run
     * \param when when it does, for the message ("with --simulate")
     * \throws FabricConfigError "invalid --name: got 'value', allowed: only when"
     */
    void OnlyWith(const std::string& name, bool applies, const std::string& when) const;

    /**
     * \param name a flag without dashes
     * \return the text the command line gave it (the last one), else its
     *         default as --help shows it: what a message about it must quote
     */
    std::string ValueText(const std::string& name) const;

  private:
    /**
     * Started by mpirun on several processes: run on rank 0 alone (the
     * others exit now, printing nothing), saying so with \p why.
     */
    void RunOnRankZero(const std::string& why) const;
    /// \return "" if \p text is a valid value, else what is allowed
    using Check = std::function<std::string(const std::string& text)>;
    /// \return the check of an integer type from \p low to \p high
    static Check IntegerCheck(bool isSigned, long double low, long double high);
    /// \return the check of a floating-point type
    static Check RealCheck();
    /// \return the check of a bool flag (CommandLine's spellings)
    static Check BoolCheck();
    /**
     * \param value a floating-point default
     * \return its text with the fewest digits (at least a stream's six) that
     *         read back as \p value
     */
    template <typename T>
    static std::string RealText(T value);

    std::string m_program;
    bool m_supportsDistributed{false}; //!< SupportsDistributed
    bool m_distributed{false};         //!< Distribute started MPI
    CommandLine m_cmd;
    std::set<std::string> m_known;
    std::map<std::string, Check> m_checks;
    std::set<std::string> m_bools;                 //!< bool flags (a bare --flag sets them true)
    std::map<std::string, std::string> m_given;    //!< flags the command line gave, and values
    std::map<std::string, std::string> m_defaults; //!< each flag's default, as text
    bool m_fabricScheduler{false};                 //!< UseFabricScheduler was called
};

template <typename T>
void
ProgramFlags::AddValue(const std::string& name, const std::string& help, T& value)
{
    m_known.insert(name);
    if constexpr (std::is_same_v<T, bool>)
    {
        m_checks[name] = BoolCheck();
        m_bools.insert(name);
    }
    else if constexpr (std::is_integral_v<T>)
    {
        m_checks[name] = IntegerCheck(std::is_signed_v<T>,
                                      static_cast<long double>(std::numeric_limits<T>::min()),
                                      static_cast<long double>(std::numeric_limits<T>::max()));
    }
    else if constexpr (std::is_floating_point_v<T>)
    {
        m_checks[name] = RealCheck();
    }
    std::ostringstream text;
    text << std::boolalpha << value;
    m_defaults[name] = text.str();
    if constexpr (std::is_floating_point_v<T>)
    {
        // a stream's six digits would show 1048576 as 1.04858e+06 in --help:
        // the default is shown with the digits that read back as it
        m_defaults[name] = RealText(value);
        T* target = &value;
        m_cmd.AddValue(name,
                       help,
                       Callback<bool, std::string>([target](std::string given) {
                           std::istringstream in(given); // as CommandLine reads it
                           in >> *target;
                           return !in.fail();
                       }),
                       m_defaults[name]);
    }
    else if constexpr (std::is_same_v<T, std::string>)
    {
        // CommandLine would read it with >>, which stops at the first blank;
        // through a callback it gets the whole value, and --help still shows
        // the default
        T* target = &value;
        m_cmd.AddValue(name,
                       help,
                       Callback<bool, std::string>([target](std::string whole) {
                           *target = std::move(whole);
                           return true;
                       }),
                       value);
    }
    else
    {
        m_cmd.AddValue(name, help, value);
    }
}

template <typename T>
std::string
ProgramFlags::RealText(T value)
{
    std::string shown;
    for (int digits = 6; digits <= std::numeric_limits<T>::max_digits10; ++digits)
    {
        std::ostringstream text;
        text.precision(digits);
        text << value;
        shown = text.str();
        std::istringstream back(shown);
        T read{};
        back >> read;
        if (read == value)
        {
            break;
        }
    }
    return shown;
}

/**
 * \param minimum smallest allowed \param maximum largest allowed
 * \return what ParseInteger and ProgramFlags::AddInteger allow: "an integer
 *         from <minimum> to <maximum>", or "an integer >= <minimum>" when
 *         \p maximum is the largest uint64_t
 */
std::string IntegerRangeText(uint64_t minimum, uint64_t maximum);

template <typename T>
void
ProgramFlags::AddValue(const std::string& name,
                       const std::string& help,
                       T& value,
                       const std::string& allowed,
                       std::function<bool(T)> valid)
{
    static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>,
                  "a checked flag is an integer or a floating-point number");
    AddValue(name, help, value);
    // the type's own check first (CommandLine would misread what it refuses)
    m_checks[name] = [typeCheck = m_checks[name], allowed, valid](const std::string& text) {
        if (!typeCheck(text).empty())
        {
            return allowed;
        }
        T v{};
        if constexpr (std::is_floating_point_v<T>)
        {
            v = static_cast<T>(std::strtold(text.c_str(), nullptr));
        }
        else if constexpr (std::is_signed_v<T>)
        {
            v = static_cast<T>(std::strtoll(text.c_str(), nullptr, 10));
        }
        else
        {
            v = static_cast<T>(std::strtoull(text.c_str(), nullptr, 10));
        }
        return valid(v) ? std::string() : allowed;
    };
}

template <typename T>
void
ProgramFlags::AddInteger(const std::string& name,
                         const std::string& help,
                         T& value,
                         uint64_t minimum,
                         uint64_t maximum)
{
    static_assert(std::is_integral_v<T> && std::is_unsigned_v<T> && !std::is_same_v<T, bool>,
                  "AddInteger takes an unsigned integer flag");
    AddValue<T>(name, help, value, IntegerRangeText(minimum, maximum), [minimum, maximum](T v) {
        return v >= minimum && v <= maximum;
    });
}

/**
 * \param argc argc of main \param argv argv of main
 * \param name a bool flag without dashes
 * \return its value as ProgramFlags will set it (last one given wins; a
 *         bare --name is true), for programs whose defaults depend on it
 */
bool FlagIsTrue(int argc, char* argv[], const std::string& name);

/**
 * Set an ns-3 attribute's default (ns3::Type::Attribute) or a global value
 * (SchedulerType, RngRun) from text, as a program's --name=value does, but
 * refusing what ns-3's own parsers would abort on.
 * \param flag how the caller names it, for the message
 * \param name the attribute's full name or the global value's name
 * \param value the text
 * \throws FabricConfigError naming \p flag, the value and what it takes
 */
void SetDefaultFromText(const std::string& flag, const std::string& name, const std::string& value);

/**
 * Exit with status 2 for an argument ns-3's CommandLine does not know (it
 * would exit with 1); ns-3's own --help and --Print* flags pass. A --ns3::
 * attribute or global value is checked and set here: a value its checker
 * refuses, or that would make ns-3's parser abort, exits with 2 too.
 * \param program the program's name, for the message
 * \param argc argc of main \param argv argv of main
 * \param known flag names without the leading dashes
 */
void RejectUnknownFlags(const std::string& program,
                        int argc,
                        char* argv[],
                        const std::set<std::string>& known);

/**
 * Parse a whole non-negative integer flag value.
 * \param flag the flag, e.g. "--gpus" \param text its value
 * \param minimum smallest allowed \param maximum largest allowed
 * \return the value; FabricConfigError naming the flag otherwise
 */
uint64_t ParseInteger(const std::string& flag,
                      const std::string& text,
                      uint64_t minimum = 1,
                      uint64_t maximum = (uint64_t{1} << 31) - 1);

/**
 * Parse a positive data rate flag value ("100Gbps", "400Gb/s", "25GB/s"; a
 * unit is required and the whole text must be the rate).
 * ns-3's DataRate(std::string) aborts the program on a malformed string;
 * this names the flag instead.
 * \param flag the flag, e.g. "--rate" \param text its value
 * \return the rate; FabricConfigError naming the flag otherwise
 */
DataRate ParseRate(const std::string& flag, const std::string& text);

/**
 * Split a comma-separated flag value; empty items are rejected.
 * \param flag the flag \param text its value \return the items
 */
std::vector<std::string> SplitList(const std::string& flag, const std::string& text);

/**
 * A comma-separated list of integers, each checked by ParseInteger.
 * \param flag the flag \param text its value
 * \param minimum smallest allowed item \return the items
 */
std::vector<uint32_t> ParseIntegerList(const std::string& flag,
                                       const std::string& text,
                                       uint64_t minimum = 1);

/**
 * A value as an error message shows it: FabricShownValue (its first 60
 * bytes, then "... (N bytes)"; control characters escaped). A
 * FabricConfigError already shows its value so: this is for messages made
 * otherwise.
 * \param text the value \return its text for the message
 */
std::string ShownValue(std::string_view text);

} // namespace ns3

#endif // GPU_FABRIC_PROGRAM_FLAGS_H
