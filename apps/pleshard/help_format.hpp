#pragma once
// --help as people read it: each option's value named plainly (INT, FLOAT, PATH, or its
// choices {a,b}), its default as "(default: X)", flags by their names alone. CLI11's own
// lines show a validator's range in the value's name ("INT:[1, 1e+18]=65536") and a flag's
// value in its name ("--no-shared-tables{false}"); the ranges are in the errors that refuse
// a value, and in the options' descriptions where they matter.

#include <string>

#include <CLI/CLI.hpp>

namespace pleshard::app {

// "INT", "FLOAT", "PATH", "TEXT", or "{host,device}": an option's value as --help names it,
// CLI11's type name less its validators' ranges.
[[nodiscard]] std::string value_name(const CLI::Option* opt);

class PlainHelp : public CLI::Formatter {
 public:
  [[nodiscard]] std::string make_option_name(const CLI::Option* opt, bool is_positional) const override;
  [[nodiscard]] std::string make_option_opts(const CLI::Option* opt) const override;
};

}  // namespace pleshard::app
