/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_RESULTS_TABLE_H
#define GPU_FABRIC_RESULTS_TABLE_H

// The programs' results: one list of columns from which a program prints its
// aligned table and writes its JSON rows and its CSV, so the three cannot
// drift apart. Part of the programs' support library (not module API): the
// JSON keys and CSV headers are the programs' interface to users' scripts,
// not the simulator's.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace ns3
{

/**
 * \brief One column of a ResultsTable.
 *
 * A value is stored once, in the unit its name says (time_s: seconds); the
 * table may show it scaled (tableScale 1e6: microseconds, heading
 * "time(us)"). A column can be left out of the table, the CSV or the JSON
 * (a JSON-only key such as a per-row parameter, a table-only ratio).
 */
struct ResultsColumn
{
    /**
     * \param name JSON key and CSV header \param heading the table's heading
     * \param unit the stored value's unit \param tableFormat a table cell's field
     * \param tableScale the table shows value x tableScale
     * \param csvFormat a CSV cell's field
     */
    ResultsColumn(std::string name,
                  std::string heading,
                  std::string unit,
                  std::string tableFormat,
                  double tableScale = 1,
                  std::string csvFormat = "{}")
        : name(std::move(name)),
          heading(std::move(heading)),
          unit(std::move(unit)),
          tableFormat(std::move(tableFormat)),
          tableScale(tableScale),
          csvFormat(std::move(csvFormat))
    {
    }

    std::string name;            //!< JSON key (and CSV header), e.g. "time_s"
    std::string heading;         //!< the table's heading, e.g. "time(us)"
    std::string unit;            //!< unit of the stored value, e.g. "s" ("" for none)
    std::string tableFormat;     //!< fmt replacement field of a table cell, e.g. "{:>12.2f}"
    double tableScale{1};        //!< the table shows value x tableScale (numbers only)
    std::string csvFormat{"{}"}; //!< fmt replacement field of a CSV cell
    std::string headingFormat;   //!< the heading's field ("": tableFormat's width and alignment)
    std::string csvName;         //!< the CSV's header where it is not name ("": name)
    bool inTable{true};          //!< shown in the table
    bool inCsv{true};            //!< written to the CSV
    bool inJson{true};           //!< written to each JSON row

    static constexpr unsigned kTable = 1; //!< In(): the table
    static constexpr unsigned kCsv = 2;   //!< In(): the CSV
    static constexpr unsigned kJson = 4;  //!< In(): the JSON rows

    /// \param where kTable, kCsv and kJson or'ed \return this column, only there
    ResultsColumn In(unsigned where) const
    {
        ResultsColumn c = *this;
        c.inTable = (where & kTable) != 0;
        c.inCsv = (where & kCsv) != 0;
        c.inJson = (where & kJson) != 0;
        return c;
    }

    /// \param header the CSV's header \return this column, so named in the CSV
    ResultsColumn CsvAs(const std::string& header) const
    {
        ResultsColumn c = *this;
        c.csvName = header;
        return c;
    }
};

/**
 * \brief Rows of results under one column list: an aligned table for the
 * terminal, JSON rows and CSV text from the same values.
 *
 * A cell holds a string, a bool, a signed or unsigned integer or a double,
 * each kept as its type (JSON keeps unsigned and signed integers, doubles
 * and NaN, which it writes as null), or nothing: an empty cell is left out
 * of its JSON row, blank in the table and the CSV.
 *
 * \code
 *   ResultsTable t({{"bytes", "size(B)", "B", "{:>12}"},
 *                   {"time_s", "time(us)", "s", "{:>12.2f}", 1e6, "{:.9e}"}});
 *   t.AddRow({bytes, seconds});
 *   fmt::print("{}", t.Table());
 *   WriteTextFile("--csv", csv, t.Csv());
 *   j["results"] = t.Json();
 * \endcode
 */
class ResultsTable
{
  public:
    /// A cell: nothing, a string, a bool, a signed or unsigned integer, or a double.
    using Value = std::variant<std::monostate, std::string, bool, int64_t, uint64_t, double>;

    /**
     * \brief A cell from a value of any of those types (an integer keeps
     * its signedness, a float becomes a double, a C string a string).
     */
    struct Cell
    {
        Value value; //!< the cell's value

        /// An empty cell.
        Cell() = default;

        /// \param v the value
        template <typename T>
        Cell(const T& v) // NOLINT: implicit, so that rows read as lists of values
            : value(Convert(v))
        {
        }

      private:
        /// \param v a value \return it as a Value
        template <typename T>
        static Value Convert(const T& v)
        {
            if constexpr (std::is_same_v<T, Value>)
            {
                return v;
            }
            else if constexpr (std::is_same_v<T, bool>)
            {
                return v;
            }
            else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
            {
                return static_cast<int64_t>(v);
            }
            else if constexpr (std::is_integral_v<T>)
            {
                return static_cast<uint64_t>(v);
            }
            else if constexpr (std::is_floating_point_v<T>)
            {
                return static_cast<double>(v);
            }
            else
            {
                return std::string(v);
            }
        }
    };

    /// An empty cell, for a value a row does not have.
    static Cell None()
    {
        return Cell();
    }

    /// \param columns the columns, in table and CSV order
    explicit ResultsTable(std::vector<ResultsColumn> columns);

    /// \return the columns
    const std::vector<ResultsColumn>& Columns() const;

    /**
     * Set a heading's own field, where the cell's does not fit it (a cell
     * "{:>9.2f}%" is 10 wide: heading "{:>10}").
     * \param name a column's name \param field the heading's replacement field
     */
    void SetHeadingFormat(const std::string& name, const std::string& field);

    /**
     * Add a row.
     * \param cells one per column, in order
     * \throws std::logic_error if the count differs from the columns'
     */
    void AddRow(std::vector<Cell> cells);

    /// \return the number of rows
    size_t Rows() const;

    /**
     * \param row a row \param name a column's name
     * \return the cell
     */
    const Value& At(size_t row, const std::string& name) const;

    /**
     * \return the table's heading line: each heading in its cell's width and
     *         alignment (from tableFormat), one blank apart, ending in a newline
     */
    std::string Heading() const;

    /// \param row a row \return its table line, ending in a newline
    std::string Line(size_t row) const;

    /// \return the heading and every row's line
    std::string Table() const;

    /// \return the CSV: a line of the names, then a line per row
    std::string Csv() const;

    /// \param row a row \return its JSON object (keys: the columns' names)
    nlohmann::json JsonRow(size_t row) const;

    /// \return a JSON array of every row's object
    nlohmann::json Json() const;

  private:
    /// \return \p v formatted by the replacement field \p field, scaled by \p scale
    static std::string Format(const std::string& field, const Value& v, double scale);

    std::vector<ResultsColumn> m_columns;   //!< the columns
    std::map<std::string, size_t> m_index;  //!< column name -> position
    std::vector<std::vector<Value>> m_rows; //!< the cells
};

} // namespace ns3

#endif // GPU_FABRIC_RESULTS_TABLE_H
