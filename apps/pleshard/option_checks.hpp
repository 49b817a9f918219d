#pragma once
// Checks of option values where they are parsed: bad values are usage errors (exit 2) with
// the option's name and the accepted range, before anything runs. CLI11's own range checks
// let NaN through (every comparison with it is false), so numbers are checked here as
// finite numbers in a closed range.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "job/step_scheduler.hpp"

namespace pleshard::app {

// A path that names something: an empty one is an unset variable in a script.
[[nodiscard]] CLI::Validator path_given();
// A finite number in [min, max]; `what` completes "must be ..." in the message.
[[nodiscard]] CLI::Validator finite_in(double min, double max, const std::string& what);

// --step-tokens: 1 to k_max_step_tokens (job/step_scheduler.hpp).
[[nodiscard]] CLI::Validator step_tokens_option();

// The first option of `args` (argv without the program) that its command does not know, or
// the first command name that is none, as "unknown option --chekpoint (did you mean
// --checkpoint?); see pleshard run --help"; empty when there is none. CLI11 checks required
// options before unknown ones, so a typo would read as a missing option without this.
[[nodiscard]] std::string unknown_argument(const CLI::App& app, const std::vector<std::string>& args);

// The innermost subcommand `app` parsed (`app` itself where none was).
[[nodiscard]] const CLI::App& command_parsed(const CLI::App& app);

// The command `app` parsed, as a user types it: "pleshard ckpt make" (the innermost
// subcommand parsed; "pleshard" where none was).
[[nodiscard]] std::string command_given(const CLI::App& app);

// CLI11's parse error `e` of the command line `args` (argv without the program), as every
// error of pleshard's reads: "pleshard: error: --part-tokens: 0 is out of range: ...; see
// pleshard run --help" (the command given, or the one that was being parsed).
[[nodiscard]] std::string usage_error(const CLI::App& app, const CLI::Error& e, const std::vector<std::string>& args);

// `message` (CLI11's, which quotes a value whole) with every long value of `args` (an argument,
// or what follows --name=) as quoted_value quotes it: CLI11's failure message for every command.
[[nodiscard]] std::string with_values_quoted(std::string message, const std::vector<std::string>& args);

}  // namespace pleshard::app
