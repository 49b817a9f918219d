#pragma once
// The engine's options, one table for every front end: `pleshard run`, `embed`, `bench step`,
// `profile` and the Python module's Engine. Each entry says the option's name, its type, its
// range or choices (the choices from the library's own names), its help, which commands take
// it, and how it is set and checked — once, here: the command line builds its CLI11 options
// from the table, the Python module reads its keywords through it, and both `--help` and
// the docs' lists of options (`pleshard help-options`, job/engine_option_docs) are made from it.
//
// To add an option: one entry in engine_option_table.cpp (and, where the library's checks
// name it, its Option in core/option_names).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/option_names.hpp"
#include "job/run_job.hpp"

namespace pleshard {

// The commands that take engine options; an entry's `commands` is a set of them.
// every_command: each command of the command line (main adds it), not an engine's alone.
enum class EngineCommand : unsigned {
  run = 1,
  embed = 2,
  bench_step = 4,
  profile = 8,
  python = 16,
  every_command = 32
};
[[nodiscard]] constexpr unsigned operator|(EngineCommand a, EngineCommand b) {
  return static_cast<unsigned>(a) | static_cast<unsigned>(b);
}
[[nodiscard]] constexpr unsigned operator|(unsigned a, EngineCommand b) { return a | static_cast<unsigned>(b); }

enum class OptionKind { path, text, choice, integer, number, flag };

// A value as a front end read it: a flag's bool, an integer, a number, a path or a name.
using OptionValue = std::variant<bool, std::int64_t, double, std::string>;

// Where the options' values go: run's inputs, an Engine's, or a command's scratch copy.
// Null members: that front end has no such option.
struct EngineTarget {
  EngineInputs* inputs = nullptr;
  BatchJobOptions* job = nullptr;
  int* output_slots = nullptr;      // the Python module's
  std::int64_t* threads = nullptr;  // 0: from the launcher's binding
};

// An Engine's outputs that stay valid (EngineOptions::output_slots as Python's default).
inline constexpr int k_default_output_slots = 2;

struct EngineOptionEntry {
  Option option;     // how messages name it (core/option_names)
  const char* name;  // "step-tokens": --step-tokens on the command line, step_tokens in Python
  OptionKind kind;
  unsigned commands;  // EngineCommand bits
  const char* help;
  // Numbers: the closed range, and what completes "must be ..." in a refusal. `or_zero`: 0
  // is taken too (it means "none" or "all").
  double min = 0;
  double max = 0;
  const char* must_be = "";
  bool or_zero = false;
  // Choices: the names the library takes (its name tables), and its parse of them, which
  // refuses another name with a message naming the option.
  std::vector<std::string> (*choices)() = nullptr;
  void (*parse)(std::string_view) = nullptr;
  // Given or not: no value (Python's None) leaves what the library picks.
  bool optional = false;
  bool required = false;
  // The option it cannot be given with (the command line refuses the pair as it parses).
  std::optional<Option> excludes = std::nullopt;
  // What Python's refusal of a wrong type says is expected ("a number of seconds"); empty: the kind's.
  const char* python_expects = "";
  void (*set)(const EngineTarget&, const OptionValue&) = nullptr;
  OptionValue (*get)(const EngineTarget&) = nullptr;
  // What the help goes on with where it names registered things (the model families).
  std::string (*help_more)() = nullptr;
};

// Every entry, in the order `help-options` and Python's signature list them.
[[nodiscard]] std::span<const EngineOptionEntry> engine_option_table();
// The entry of `option`; SystemError when the table has none.
[[nodiscard]] const EngineOptionEntry& engine_option(Option option);
[[nodiscard]] bool takes(const EngineOptionEntry& entry, EngineCommand command);

// The help as `command` shows it: the other options named as it names them (step_tokens).
[[nodiscard]] std::string help_text(const EngineOptionEntry& entry, EngineCommand command);
// The choices of `option`'s entry, for the commands that take a list of them (bench step).
[[nodiscard]] std::vector<std::string> choices_of(Option option);

// The value as --help names it: "PATH", "TEXT", "INT", "FLOAT" (a flag's and a choice's: "TEXT").
[[nodiscard]] const char* value_name(OptionKind kind);

// "--step-tokens" and "step_tokens".
[[nodiscard]] std::string cli_name(const EngineOptionEntry& entry);
[[nodiscard]] std::string python_keyword(const EngineOptionEntry& entry);

// The entry's value before any is given, from the targets' own initializers; none for an
// optional entry (the library picks).
[[nodiscard]] std::optional<OptionValue> default_value(const EngineOptionEntry& entry);
// As the docs and --help write it: 8192, 0.5, "auto"'s auto, true.
[[nodiscard]] std::string value_text(const OptionValue& value);

// Why `value` is no value of `entry` ("0 is out of range: must be ..."); empty: it is one.
// `given` is the value as the user wrote it (empty: written from the value). Choices are
// refused by the library's parse, in set_option.
[[nodiscard]] std::string refusal(const EngineOptionEntry& entry, const OptionValue& value,
                                  std::string_view given = {});
// The command line's text as the entry's value, or the refusal ("x is not a number").
[[nodiscard]] std::variant<OptionValue, std::string> value_of_text(const EngineOptionEntry& entry,
                                                                   std::string_view text);
// Checks `value` (InputError "step_tokens: 0 is out of range: must be ...", the option named
// as the front end names it) and sets it into `target`.
void set_option(const EngineOptionEntry& entry, const OptionValue& value, const EngineTarget& target);

// Python's spelling of the options (core/option_names): every entry the Engine takes.
[[nodiscard]] const OptionSpelling& python_keyword_spelling();

}  // namespace pleshard
