/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "results-table.h"

#include <cctype>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <stdexcept>

namespace ns3
{

namespace
{

/// \return the field "{:<align><width>}" of the first replacement field of
/// \p format (its fill, alignment and width; no type, so that a heading fits)
std::string
WidthField(const std::string& format)
{
    const auto open = format.find("{:");
    if (open == std::string::npos)
    {
        return "{}";
    }
    size_t at = open + 2;
    std::string field = "{:";
    // [[fill]align]: an alignment character, maybe after a fill character
    const auto isAlign = [](char c) { return c == '<' || c == '>' || c == '^'; };
    if (at + 1 < format.size() && isAlign(format[at + 1]))
    {
        field += format.substr(at, 2);
        at += 2;
    }
    else if (at < format.size() && isAlign(format[at]))
    {
        field += format[at++];
    }
    while (at < format.size() && std::isdigit(static_cast<unsigned char>(format[at])))
    {
        field += format[at++];
    }
    return field + "}";
}

} // namespace

ResultsTable::ResultsTable(std::vector<ResultsColumn> columns)
    : m_columns(std::move(columns))
{
    for (size_t i = 0; i < m_columns.size(); ++i)
    {
        if (!m_index.emplace(m_columns[i].name, i).second)
        {
            throw std::logic_error("ResultsTable: two columns named " + m_columns[i].name);
        }
    }
}

const std::vector<ResultsColumn>&
ResultsTable::Columns() const
{
    return m_columns;
}

void
ResultsTable::SetHeadingFormat(const std::string& name, const std::string& field)
{
    m_columns.at(m_index.at(name)).headingFormat = field;
}

void
ResultsTable::AddRow(std::vector<Cell> cells)
{
    if (cells.size() != m_columns.size())
    {
        throw std::logic_error(fmt::format("ResultsTable: a row of {} cells for {} columns",
                                           cells.size(),
                                           m_columns.size()));
    }
    std::vector<Value> row;
    row.reserve(cells.size());
    for (auto& c : cells)
    {
        row.push_back(std::move(c.value));
    }
    m_rows.push_back(std::move(row));
}

size_t
ResultsTable::Rows() const
{
    return m_rows.size();
}

const ResultsTable::Value&
ResultsTable::At(size_t row, const std::string& name) const
{
    return m_rows.at(row).at(m_index.at(name));
}

std::string
ResultsTable::Format(const std::string& field, const Value& v, double scale)
{
    return std::visit(
        [&](const auto& x) -> std::string {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::monostate>)
            {
                return fmt::format(fmt::runtime(WidthField(field)), "");
            }
            else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool>)
            {
                return fmt::format(fmt::runtime(field), x);
            }
            else
            {
                if (scale != 1)
                {
                    return fmt::format(fmt::runtime(field), static_cast<double>(x) * scale);
                }
                return fmt::format(fmt::runtime(field), x);
            }
        },
        v);
}

std::string
ResultsTable::Heading() const
{
    std::vector<std::string> cells;
    for (const auto& c : m_columns)
    {
        if (c.inTable)
        {
            const std::string field =
                c.headingFormat.empty() ? WidthField(c.tableFormat) : c.headingFormat;
            cells.push_back(fmt::format(fmt::runtime(field), c.heading));
        }
    }
    return fmt::format("{}\n", fmt::join(cells, " "));
}

std::string
ResultsTable::Line(size_t row) const
{
    std::vector<std::string> cells;
    for (size_t i = 0; i < m_columns.size(); ++i)
    {
        const auto& c = m_columns[i];
        if (c.inTable)
        {
            cells.push_back(Format(c.tableFormat, m_rows.at(row)[i], c.tableScale));
        }
    }
    return fmt::format("{}\n", fmt::join(cells, " "));
}

std::string
ResultsTable::Table() const
{
    std::string text = Heading();
    for (size_t r = 0; r < m_rows.size(); ++r)
    {
        text += Line(r);
    }
    return text;
}

std::string
ResultsTable::Csv() const
{
    std::vector<std::string> names;
    for (const auto& c : m_columns)
    {
        if (c.inCsv)
        {
            names.push_back(c.csvName.empty() ? c.name : c.csvName);
        }
    }
    std::string text = fmt::format("{}\n", fmt::join(names, ","));
    for (const auto& row : m_rows)
    {
        std::vector<std::string> cells;
        for (size_t i = 0; i < m_columns.size(); ++i)
        {
            if (m_columns[i].inCsv)
            {
                cells.push_back(std::holds_alternative<std::monostate>(row[i])
                                    ? std::string()
                                    : Format(m_columns[i].csvFormat, row[i], 1));
            }
        }
        text += fmt::format("{}\n", fmt::join(cells, ","));
    }
    return text;
}

nlohmann::json
ResultsTable::JsonRow(size_t row) const
{
    nlohmann::json j = nlohmann::json::object();
    for (size_t i = 0; i < m_columns.size(); ++i)
    {
        if (!m_columns[i].inJson)
        {
            continue;
        }
        std::visit(
            [&](const auto& x) {
                using T = std::decay_t<decltype(x)>;
                if constexpr (!std::is_same_v<T, std::monostate>)
                {
                    j[m_columns[i].name] = x;
                }
            },
            m_rows.at(row)[i]);
    }
    return j;
}

nlohmann::json
ResultsTable::Json() const
{
    nlohmann::json rows = nlohmann::json::array();
    for (size_t r = 0; r < m_rows.size(); ++r)
    {
        rows.push_back(JsonRow(r));
    }
    return rows;
}

} // namespace ns3
