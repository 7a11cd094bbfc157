/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// The user documentation lists every attribute and trace source of the
// module: for each registered TypeId of group GpuFabric, doc/gpu-fabric.rst
// names each of its own attributes as ``Name`` in the TypeId's subsection of
// Usage / Attributes, and each trace source as ``Name`` in its subsection of
// Usage / Trace sources (a subsection: a '#'-underlined heading that names
// the TypeId as ``ns3::Type``).
#include "ns3/core-module.h"

#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#ifndef GPU_FABRIC_SOURCE_DIR
#error "GPU_FABRIC_SOURCE_DIR must name the source tree (test/CMakeLists.txt)"
#endif

using namespace ns3;

namespace
{

std::vector<std::string>
ReadLines(const std::string& path)
{
    std::ifstream in(path);
    std::vector<std::string> lines;
    std::string line;
    while (std::getline(in, line))
    {
        lines.push_back(line);
    }
    return lines;
}

/// Whether line i is a heading: the next line underlines it with c only.
bool
IsHeading(const std::vector<std::string>& lines, size_t i, char c)
{
    if (i + 1 >= lines.size() || lines[i].empty())
    {
        return false;
    }
    const std::string& u = lines[i + 1];
    return u.size() == lines[i].size() && u.find_first_not_of(c) == std::string::npos;
}

/// Lines [first, last) of the section titled `title` (underlined with `c`),
/// which ends at the next heading underlined with `c` or with any of `ends`.
std::pair<size_t, size_t>
Section(const std::vector<std::string>& lines,
        size_t from,
        size_t to,
        const std::string& title,
        char c,
        const std::string& ends)
{
    for (size_t i = from; i < to; ++i)
    {
        if (lines[i] == title && IsHeading(lines, i, c))
        {
            size_t j = i + 2;
            for (; j < to; ++j)
            {
                bool end = IsHeading(lines, j, c);
                for (char e : ends)
                {
                    end = end || IsHeading(lines, j, e);
                }
                if (end)
                {
                    break;
                }
            }
            return {i + 2, j};
        }
    }
    return {to, to};
}

/// The text of each '#' subsection of [first, last), by the TypeId its
/// heading names (``ns3::Type``).
std::map<std::string, std::string>
ByTypeId(const std::vector<std::string>& lines, std::pair<size_t, size_t> range)
{
    std::map<std::string, std::string> out;
    std::string current;
    for (size_t i = range.first; i < range.second; ++i)
    {
        if (IsHeading(lines, i, '#'))
        {
            current.clear();
            const auto a = lines[i].find("``ns3::");
            if (a != std::string::npos)
            {
                const auto b = lines[i].find("``", a + 2);
                current = lines[i].substr(a + 2, b - a - 2);
            }
            ++i;
            continue;
        }
        if (!current.empty())
        {
            out[current] += lines[i] + "\n";
        }
    }
    return out;
}

bool
Names(const std::string& text, const std::string& name)
{
    return text.find("``" + name + "``") != std::string::npos;
}

class DocAttributes : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        lines = ReadLines(std::string(GPU_FABRIC_SOURCE_DIR) + "/doc/gpu-fabric.rst");
        ASSERT_FALSE(lines.empty()) << "cannot read doc/gpu-fabric.rst";
        usage = Section(lines, 0, lines.size(), "Usage", '*', "");
        ASSERT_LT(usage.first, usage.second) << "no Usage part";
        for (uint32_t i = 0; i < TypeId::GetRegisteredN(); ++i)
        {
            TypeId tid = TypeId::GetRegistered(i);
            if (tid.GetGroupName() == "GpuFabric")
            {
                types.push_back(tid);
            }
        }
    }

    std::vector<std::string> lines;
    std::pair<size_t, size_t> usage;
    std::vector<TypeId> types;
};

TEST_F(DocAttributes, ModuleHasTypeIds)
{
    // the library is linked and registered its types
    EXPECT_GE(types.size(), 10U);
}

TEST_F(DocAttributes, EveryAttributeIsListed)
{
    const auto section = Section(lines, usage.first, usage.second, "Attributes", '=', "*");
    ASSERT_LT(section.first, section.second) << "no Attributes section in Usage";
    const auto byType = ByTypeId(lines, section);
    for (const TypeId& tid : types)
    {
        for (uint32_t i = 0; i < tid.GetAttributeN(); ++i)
        {
            const TypeId::AttributeInformation info = tid.GetAttribute(i);
            const auto it = byType.find(tid.GetName());
            const bool listed = it != byType.end() && Names(it->second, info.name);
            EXPECT_TRUE(listed) << "doc/gpu-fabric.rst, Usage / Attributes / ``" << tid.GetName()
                                << "``: no ``" << info.name << "`` ("
                                << info.checker->GetUnderlyingTypeInformation() << ", default "
                                << info.initialValue->SerializeToString(info.checker) << ": "
                                << info.help << ")";
        }
    }
}

TEST_F(DocAttributes, EveryTraceSourceIsListed)
{
    const auto section = Section(lines, usage.first, usage.second, "Trace sources", '=', "*");
    ASSERT_LT(section.first, section.second) << "no Trace sources section in Usage";
    const auto byType = ByTypeId(lines, section);
    for (const TypeId& tid : types)
    {
        for (uint32_t i = 0; i < tid.GetTraceSourceN(); ++i)
        {
            const TypeId::TraceSourceInformation info = tid.GetTraceSource(i);
            const auto it = byType.find(tid.GetName());
            const bool listed = it != byType.end() && Names(it->second, info.name);
            EXPECT_TRUE(listed) << "doc/gpu-fabric.rst, Usage / Trace sources / ``"
                                << tid.GetName() << "``: no ``" << info.name << "`` ("
                                << info.callback << ": " << info.help << ")";
        }
    }
}

} // namespace
