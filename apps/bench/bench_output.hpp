#pragma once
// The benchmarks' results as rows of named values, printed one way for people and two for
// programs: a table of fixed-notation columns (each heading names its unit) followed by a
// JSON line per row (the default), JSON lines alone (--json), or CSV with a header (--csv).
// Every JSON line and CSV row carries `bench` and `case` (the values that identify the row's
// case, "key=value" joined by spaces), by which jobs/bench_compare.py matches two runs' rows.

#include <cstdint>
#include <cstdio>
#include <string>
#include <variant>
#include <vector>

namespace pleshard {

enum class BenchFormat { table, json, csv };

// A JSON or CSV value: null, a flag, a whole number, a number or text.
using BenchValue = std::variant<std::monostate, bool, std::int64_t, double, std::string>;

class BenchRow {
 public:
  // A value that identifies the row's case (a tier, a size), part of `case`; with a heading,
  // also a column of the table that shows it as it is (text to the left).
  BenchRow& key(std::string name, BenchValue value, const std::string& heading = {});
  // A measured value (JSON and CSV); with a heading, also a column that shows it as `text`
  // (as it is where `text` is empty).
  BenchRow& value(std::string name, BenchValue value, const std::string& heading = {}, std::string text = {});
  // A column of the table alone: its heading and what it shows.
  BenchRow& column(std::string heading, std::string text, bool left = false);

  struct Named {
    std::string name;
    BenchValue value;
  };
  struct Column {
    std::string heading;
    std::string text;
    bool left = false;
  };
  [[nodiscard]] const std::vector<Named>& values() const { return values_; }
  [[nodiscard]] const std::vector<Column>& columns() const { return columns_; }
  [[nodiscard]] std::string case_name() const;

 private:
  std::vector<Named> values_;
  std::vector<std::string> keys_;  // the names among values_ that identify the case
  std::vector<Column> columns_;
};

struct BenchTable {
  std::string bench;                     // "hash", "lookup", ...
  std::vector<std::string> legend = {};  // the table's opening lines (without "# ")
  std::vector<BenchRow> rows = {};
  std::vector<std::string> remarks = {};  // the table's closing lines (without "# ")
  // What was not run and why: under the table, or on stderr beside JSON and CSV.
  std::vector<std::string> skipped = {};
};

// `digits` decimals, fixed notation; "-" where `x` is not finite.
[[nodiscard]] std::string fixed(double x, int digits);

// Prints `table` to `out` as `format` says; with JSON or CSV, the skipped lines go to `err`.
void print_bench(const BenchTable& table, BenchFormat format, std::FILE* out, std::FILE* err);

}  // namespace pleshard
