#pragma once
// A report as one list of fields: a JSON key (its unit in its name: _s, _us, _bytes, _gb_s,
// _per_s), a text label and a value. The text and the JSON of a report are printed from the
// same list, so they say the same things, and a key is in every report whose list has it
// (null where its value does not apply). Records of a kind (per layer, per collective) are
// arrays of objects, each a list of fields of its own.

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace pleshard {

struct ReportField;
using ReportRecord = std::vector<ReportField>;

struct ReportField {
  using Value = std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, std::vector<ReportRecord>>;
  std::string group;  // the text's heading above the field (the JSON is flat)
  std::string key;
  std::string label;  // with its unit, as the text shows it
  Value value;
  std::string text;  // the value as the text shows it, where that is not the value itself
};

// A number as people read it in the text report and the progress lines: fixed notation with
// the thousands grouped ("31,480"), whole from 1,000 and 4 significant digits below ("4.876",
// "0.000368"); scientific only where fixed notation would not fit (below 1e-4, from 1e15).
// The JSON report keeps its numbers as numbers.
[[nodiscard]] std::string plain_number(double value);
[[nodiscard]] std::string plain_number(std::int64_t value);

// One JSON object on one line, keys in the list's order.
[[nodiscard]] std::string report_json(const std::vector<ReportField>& fields);

// A heading line, then each group's fields as aligned "label  value" lines; an array as a
// table under its label (its records' labels as columns), or "none".
[[nodiscard]] std::string report_text(const std::string& heading, const std::vector<ReportField>& fields);

}  // namespace pleshard
