#include "core/report_fields.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace pleshard {

namespace {

nlohmann::ordered_json json_value(const ReportField::Value& value) {
  return std::visit(
      [](const auto& v) -> nlohmann::ordered_json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::vector<ReportRecord>>) {
          nlohmann::ordered_json records = nlohmann::ordered_json::array();
          for (const ReportRecord& record : v) {
            nlohmann::ordered_json object = nlohmann::ordered_json::object();
            for (const ReportField& f : record) object[f.key] = json_value(f.value);
            records.push_back(std::move(object));
          }
          return records;
        } else {
          return v;
        }
      },
      value);
}

std::string text_value(const ReportField& field) {
  if (!field.text.empty()) return field.text;
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) {
          return "-";
        } else if constexpr (std::is_same_v<T, bool>) {
          return v ? "yes" : "no";
        } else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, double>) {
          return plain_number(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return v.empty() ? "-" : v;
        } else {
          return std::to_string(v.size()) + " records";
        }
      },
      field.value);
}

// Records as a table: one column per field of the first record, right-aligned.
std::string text_table(const std::vector<ReportRecord>& records) {
  if (records.empty()) return "";
  const ReportRecord& first = records.front();
  std::vector<std::size_t> width(first.size());
  for (std::size_t c = 0; c < first.size(); ++c) {
    width[c] = first[c].label.size();
    for (const ReportRecord& r : records) width[c] = std::max(width[c], text_value(r.at(c)).size());
  }
  std::string out;
  const auto line = [&](auto cell) {
    out += "   ";
    for (std::size_t c = 0; c < first.size(); ++c) {
      const std::string s = cell(c);
      out += " " + std::string(width[c] - s.size(), ' ') + s;
    }
    out += "\n";
  };
  line([&](std::size_t c) { return first[c].label; });
  for (const ReportRecord& r : records) line([&](std::size_t c) { return text_value(r.at(c)); });
  return out;
}

}  // namespace

std::string plain_number(std::int64_t value) {
  const std::string digits = std::to_string(value < 0 ? -static_cast<std::uint64_t>(value) : value);
  std::string grouped = value < 0 ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return grouped;
}

std::string plain_number(double value) {
  const double size = std::fabs(value);
  if (size >= 1000 && size < 1e15) return plain_number(static_cast<std::int64_t>(std::llround(value)));
  // %.4g writes fixed notation for 4 significant digits from 1e-4 to below 1,000.
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value == 0 ? 0.0 : value);  // -0 as 0
  return text;
}

std::string report_json(const std::vector<ReportField>& fields) {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (const ReportField& f : fields) object[f.key] = json_value(f.value);
  return object.dump() + "\n";
}

std::string report_text(const std::string& heading, const std::vector<ReportField>& fields) {
  std::size_t width = 0;
  for (const ReportField& f : fields) width = std::max(width, f.label.size());
  std::string out = heading + "\n";
  const std::string* group = nullptr;
  for (const ReportField& f : fields) {
    if (group == nullptr || *group != f.group) {
      group = &f.group;
      out += "  " + f.group + "\n";
    }
    const auto* records = std::get_if<std::vector<ReportRecord>>(&f.value);
    if (records != nullptr && !records->empty()) {
      out += "    " + f.label + ":\n" + text_table(*records);
      continue;
    }
    out += "    " + f.label + std::string(width + 2 - f.label.size(), ' ') +
           (records != nullptr ? std::string("none") : text_value(f)) + "\n";
  }
  return out;
}

}  // namespace pleshard
