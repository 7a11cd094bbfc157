/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * ResultsTable (the programs' support library): the table, the CSV and the
 * JSON rows come from one column list, each value keeping its type.
 */
#include "results-table.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <stdexcept>
#include <string>

using namespace ns3;

namespace
{

/// A table as collective-bench prints it: time stored in seconds, shown in us.
ResultsTable
Bench()
{
    return ResultsTable({{"bytes", "size(B)", "B", "{:>12}"},
                         {"time_s", "time(us)", "s", "{:>12.2f}", 1e6, "{:.9e}"},
                         {"busbw_gbps", "busbw(GB/s)", "GB/s", "{:>10.2f}", 1, "{:.6f}"}});
}

TEST(ResultsTable, TheTableAlignsHeadingsWithTheirCells)
{
    ResultsTable t = Bench();
    t.AddRow({uint64_t{1024}, 12.5e-6, 81.92});
    t.AddRow({uint64_t{1048576}, 1.25e-3, 838.8608});
    EXPECT_EQ(t.Rows(), 2U);
    EXPECT_EQ(t.Table(),
              "     size(B)     time(us) busbw(GB/s)\n"
              "        1024        12.50      81.92\n"
              "     1048576      1250.00     838.86\n");
    EXPECT_EQ(t.Heading() + t.Line(0) + t.Line(1), t.Table());
}

TEST(ResultsTable, CsvAndJsonKeepTheStoredUnitAndType)
{
    ResultsTable t = Bench();
    t.AddRow({uint64_t{1024}, 12.5e-6, 81.92});
    EXPECT_EQ(t.Csv(), "bytes,time_s,busbw_gbps\n1024,1.250000000e-05,81.920000\n");
    const nlohmann::json j = t.Json();
    ASSERT_EQ(j.size(), 1U);
    EXPECT_TRUE(j[0]["bytes"].is_number_unsigned());
    EXPECT_EQ(j[0]["bytes"].get<uint64_t>(), 1024U);
    EXPECT_TRUE(j[0]["time_s"].is_number_float());
    EXPECT_EQ(j[0]["time_s"].get<double>(), 12.5e-6); // not scaled
    EXPECT_EQ(j[0].size(), 3U);
}

TEST(ResultsTable, ColumnsChooseWhereTheyAppear)
{
    const ResultsColumn how = ResultsColumn{"how", "how", "", "{:>5}"}.In(ResultsColumn::kTable);
    ResultsColumn simulated{"simulated", "", "", "{}"};
    simulated.inTable = false; // what In(kCsv | kJson) does
    const ResultsColumn compute =
        ResultsColumn{"compute_time_s", "compute", "s", "{:>9.4f}"}.CsvAs("compute_s");
    const ResultsColumn extra = ResultsColumn{"backend", "", "", "{}"}.In(ResultsColumn::kJson);
    EXPECT_TRUE(how.inTable && !how.inCsv && !how.inJson);
    EXPECT_TRUE(!extra.inTable && !extra.inCsv && extra.inJson);
    EXPECT_EQ(compute.csvName, "compute_s");
    ResultsTable t({{"topology", "topology", "", "{:<10}"}, how, simulated, compute, extra});
    t.AddRow({"rail-only", "sim", true, 0.5, "flow"});
    t.AddRow({std::string("fat-tree"), "Eq.1", false, 0.25, ResultsTable::None()});
    EXPECT_EQ(t.Table(),
              "topology     how   compute\n"
              "rail-only    sim    0.5000\n"
              "fat-tree    Eq.1    0.2500\n");
    EXPECT_EQ(t.Csv(),
              "topology,simulated,compute_s\n"
              "rail-only,true,0.5\n"
              "fat-tree,false,0.25\n");
    const nlohmann::json j = t.Json();
    EXPECT_EQ(j[0].dump(),
              R"({"backend":"flow","compute_time_s":0.5,"simulated":true,"topology":"rail-only"})");
    // an empty cell leaves its key out of the row
    EXPECT_EQ(j[1].dump(), R"({"compute_time_s":0.25,"simulated":false,"topology":"fat-tree"})");
    EXPECT_TRUE(std::holds_alternative<std::monostate>(t.At(1, "backend")));
    EXPECT_EQ(std::get<std::string>(t.At(0, "how")), "sim");
}

TEST(ResultsTable, SignedIntegersAndNanKeepTheirJsonForm)
{
    ResultsTable t({{"src", "src", "", "{:>4}"}, {"eq1_s", "Eq. 1 s", "s", "{:>8.3f}"}});
    t.AddRow({int32_t{-1}, std::numeric_limits<double>::quiet_NaN()});
    EXPECT_EQ(t.Line(0), "  -1      nan\n");
    EXPECT_EQ(t.Csv(), "src,eq1_s\n-1,nan\n");
    const nlohmann::json j = t.JsonRow(0);
    EXPECT_TRUE(j["src"].is_number_integer());
    EXPECT_FALSE(j["src"].is_number_unsigned());
    EXPECT_EQ(j.dump(), R"({"eq1_s":null,"src":-1})");
}

TEST(ResultsTable, ARowMustFillEveryColumnAndNamesAreUnique)
{
    ResultsTable t = Bench();
    EXPECT_THROW(t.AddRow({uint64_t{1}, 0.5}), std::logic_error);
    EXPECT_THROW(ResultsTable({{"a", "a", "", "{}"}, {"a", "b", "", "{}"}}), std::logic_error);
}

} // namespace
