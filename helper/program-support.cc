/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "program-support.h"

#include "ns3/fabric-error.h"
#include "ns3/flow-helper.h"
#include "ns3/global-value.h"
#include "ns3/hb-domain.h"
#include "ns3/string.h"

#include <chrono>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <sstream>
#include <sys/resource.h>

namespace ns3
{

void
RejectUnknownFlags(const std::string& program,
                   int argc,
                   char* argv[],
                   const std::set<std::string>& known)
{
    for (int i = 1; i < argc; ++i)
    {
        const std::string a = argv[i];
        std::string name = a.substr(0, a.find('='));
        while (!name.empty() && name[0] == '-')
        {
            name.erase(0, 1);
        }
        bool global = false; // ns-3 global values, e.g. --SchedulerType, --RngRun
        for (auto g = GlobalValue::Begin(); g != GlobalValue::End(); ++g)
        {
            global = global || (*g)->GetName() == name;
        }
        if (global || name == "help" || name == "PrintHelp" || name == "PrintGlobals" ||
            name == "PrintGroups" || name == "PrintTypeIds" || name == "version" ||
            name == "PrintVersion" || name.rfind("PrintGroup", 0) == 0 ||
            name.rfind("PrintAttributes", 0) == 0 || name.rfind("ns3::", 0) == 0)
        {
            continue;
        }
        if (a.rfind("--", 0) != 0 || !known.count(name))
        {
            fmt::print(stderr,
                       "{}: invalid flag: got '{}', allowed: --{} (see --help)\n",
                       program,
                       a,
                       fmt::join(known, ", --"));
            std::exit(2);
        }
    }
}

void
ProgramBackend::Dispose()
{
    if (fabric)
    {
        fabric->Dispose();
    }
    if (transport)
    {
        transport->Dispose();
    }
}

ProgramBackend
InstallBackend(const std::string& flag, const std::string& backend, const FabricTopology& topology)
{
    FabricRequire(backend == "packet" || backend == "flow", flag, backend, "packet or flow");
    ProgramBackend b;
    if (backend == "flow")
    {
        b.flow = FlowHelper().Install(topology);
        b.transport = b.flow;
    }
    else
    {
        b.fabric = FabricHelper().Install(topology);
        b.transport = b.fabric->GetTransport();
    }
    return b;
}

HbDomainPreset
ProgramPlatform(const std::string& preset)
{
    Ptr<HbDomain> domain = CreateObject<HbDomain>();
    domain->SetAttribute("Preset", StringValue(preset));
    return domain->GetPlatform();
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
    const std::string allowed = maximum == std::numeric_limits<uint64_t>::max()
                                    ? fmt::format("an integer >= {}", minimum)
                                    : fmt::format("an integer from {} to {}", minimum, maximum);
    FabricRequire(used == text.size() && used > 0 && text[0] != '-' && v >= minimum && v <= maximum,
                  flag,
                  text,
                  allowed);
    return v;
}

DataRate
ParseRate(const std::string& flag, const std::string& text)
{
    // DataRate's stream extraction sets failbit where its constructor aborts
    std::istringstream in(text);
    DataRate rate;
    in >> rate;
    // a bare number would be bits per second: "100" meant 100Gbps, surely
    const bool hasUnit = text.find_first_not_of("0123456789.eE+- ") != std::string::npos;
    FabricRequire(hasUnit && !in.fail() && rate.GetBitRate() > 0,
                  flag,
                  text,
                  "a positive rate with a unit, e.g. 100Gbps, 400Gb/s or 50GB/s");
    return rate;
}

std::vector<std::string>
SplitList(const std::string& flag, const std::string& text)
{
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

uint64_t
PeakRssBytes()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<uint64_t>(u.ru_maxrss) * 1024;
}

double
WallSeconds()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void
WriteTextFile(const std::string& flag, const std::string& path, const std::string& text)
{
    std::ofstream f(path);
    FabricRequire(f.good(), flag, path, "a writable file path");
    f << text;
    FabricRequire(f.good(), flag, path, "a path with room to write");
}

bool
RenderPlot(const std::string& gp, const std::string& dat, const std::string& png)
{
    if (std::system("gnuplot --version > /dev/null 2>&1") != 0)
    {
        fmt::print("note: gnuplot not found; data in {} and script in {} (no PNG)\n", dat, gp);
        return false;
    }
    if (std::system(fmt::format("gnuplot '{}'", gp).c_str()) != 0)
    {
        fmt::print("note: gnuplot failed on {}; no PNG written\n", gp);
        return false;
    }
    fmt::print("plot: {}\n", png);
    return true;
}

} // namespace ns3
