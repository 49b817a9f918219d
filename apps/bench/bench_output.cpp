#include "bench/bench_output.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

namespace pleshard {

namespace {

// A value as JSON: numbers in the shortest form that reads back the same; null where not finite.
std::string json_text(const BenchValue& v) {
  if (std::holds_alternative<std::monostate>(v)) return "null";
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const std::int64_t* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const double* d = std::get_if<double>(&v)) return std::isfinite(*d) ? nlohmann::json(*d).dump() : "null";
  return nlohmann::json(std::get<std::string>(v)).dump();
}

// A value as plain text: what `case` and CSV show (empty for null).
std::string plain_text(const BenchValue& v) {
  if (const std::string* s = std::get_if<std::string>(&v)) return *s;
  return std::holds_alternative<std::monostate>(v) ? "" : json_text(v);
}

// RFC 4180: quoted where it holds a comma, a quote or a line break.
std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

void print_lines(std::FILE* to, const std::string& prefix, const std::vector<std::string>& lines) {
  for (const auto& line : lines) std::fprintf(to, "%s%s\n", prefix.c_str(), line.c_str());
}

void print_columns(const BenchTable& t, std::FILE* out) {
  if (t.rows.empty()) return;
  const std::vector<BenchRow::Column>& head = t.rows.front().columns();
  std::vector<std::size_t> width(head.size());
  for (std::size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].heading.size();
    for (const BenchRow& row : t.rows) width[c] = std::max(width[c], row.columns().at(c).text.size());
  }
  const auto line = [&](auto&& text_of) {
    std::string s;
    for (std::size_t c = 0; c < head.size(); ++c) {
      const std::string text = text_of(c);
      const std::string pad(width[c] - text.size(), ' ');
      s += (c == 0 ? "" : "  ") + (head[c].left ? text + pad : pad + text);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    std::fprintf(out, "%s\n", s.c_str());
  };
  line([&](std::size_t c) { return head[c].heading; });
  for (const BenchRow& row : t.rows) line([&](std::size_t c) { return row.columns()[c].text; });
}

void print_json_lines(const BenchTable& t, std::FILE* out) {
  for (const BenchRow& row : t.rows) {
    std::string s = "{\"bench\": " + json_text(t.bench) + ", \"case\": " + json_text(row.case_name());
    for (const auto& [name, value] : row.values()) s += ", " + nlohmann::json(name).dump() + ": " + json_text(value);
    std::fprintf(out, "%s}\n", s.c_str());
  }
}

void print_csv(const BenchTable& t, std::FILE* out) {
  // Every name any row has, in order of first appearance; a row without one leaves it empty.
  std::vector<std::string> names;
  for (const BenchRow& row : t.rows)
    for (const auto& v : row.values())
      if (std::find(names.begin(), names.end(), v.name) == names.end()) names.push_back(v.name);
  std::string header = "bench,case";
  for (const auto& name : names) header += "," + csv_cell(name);
  std::fprintf(out, "%s\n", header.c_str());
  for (const BenchRow& row : t.rows) {
    std::string s = csv_cell(t.bench) + "," + csv_cell(row.case_name());
    for (const auto& name : names) {
      const auto& values = row.values();
      const auto it = std::find_if(values.begin(), values.end(), [&](const auto& v) { return v.name == name; });
      s += "," + (it == values.end() ? std::string() : csv_cell(plain_text(it->value)));
    }
    std::fprintf(out, "%s\n", s.c_str());
  }
}

}  // namespace

BenchRow& BenchRow::key(std::string name, BenchValue value, const std::string& heading) {
  keys_.push_back(name);
  if (!heading.empty()) column(heading, plain_text(value), std::holds_alternative<std::string>(value));
  values_.push_back({std::move(name), std::move(value)});
  return *this;
}

BenchRow& BenchRow::value(std::string name, BenchValue value, const std::string& heading, std::string text) {
  if (!heading.empty()) column(heading, text.empty() ? plain_text(value) : std::move(text));
  values_.push_back({std::move(name), std::move(value)});
  return *this;
}

BenchRow& BenchRow::column(std::string heading, std::string text, bool left) {
  columns_.push_back({std::move(heading), std::move(text), left});
  return *this;
}

std::string BenchRow::case_name() const {
  std::string name;
  for (const auto& v : values_)
    if (std::find(keys_.begin(), keys_.end(), v.name) != keys_.end())
      name += (name.empty() ? "" : " ") + v.name + "=" + plain_text(v.value);
  return name;
}

std::string fixed(double x, int digits) {
  if (!std::isfinite(x)) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, x);
  return text;
}

void print_bench(const BenchTable& table, BenchFormat format, std::FILE* out, std::FILE* err) {
  switch (format) {
    case BenchFormat::table:
      print_lines(out, "# ", table.legend);
      print_columns(table, out);
      print_lines(out, "# ", table.remarks);
      print_lines(out, "# ", table.skipped);
      print_json_lines(table, out);
      break;
    case BenchFormat::json:
      print_json_lines(table, out);
      print_lines(err, "pleshard: bench " + table.bench + ": ", table.skipped);
      break;
    case BenchFormat::csv:
      print_csv(table, out);
      print_lines(err, "pleshard: bench " + table.bench + ": ", table.skipped);
      break;
  }
  std::fflush(out);
}

}  // namespace pleshard
