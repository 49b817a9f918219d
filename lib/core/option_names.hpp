#pragma once
// How messages name the options a user set. One check serves two front ends: `pleshard`'s
// command line (--storage gpu, --step-tokens) and the Python module's keywords
// (storage="gpu", step_tokens). The library's checks name an option only through these
// functions, and each front end's users read their own spelling: the command line's is the
// default, the Python module puts its keywords' in place when it is imported.

#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/enum_names.hpp"

namespace pleshard {

// The options that the library's checks name.
enum class Option {
  checkpoint,
  config,
  token_map,
  tp,
  etp,
  storage,
  placement,
  gpu_memory_limit,
  exchange,
  out_dtype,
  cuda_graph,
  step_tokens,
  decode_tokens,
  part_tokens,
  collective_timeout,
  cache_rows,
  cache_gb,
  cache_profile,
  host_reads,
  owner_fixed_below,
  owner_gpu_plan_from,
  no_shared_tables,
  threads,
  cache_static,
  disk_reads,
  layer_prefix,
  output_slots,  // the Python module's alone
};

// A front end's spelling: each option's name (an option it lacks is left out) and how a
// value follows it.
struct OptionSpelling {
  std::span<const EnumName<Option>> names;
  std::string_view assign;  // between a name and its value: " " (--tp 2) or "=" (tp=2)
  bool quote_text = false;  // a text value in double quotes where the value is named (storage="gpu")
};

// The command line's spelling (the default).
[[nodiscard]] const OptionSpelling& command_line_spelling();

// Makes `spelling` the process's, for every message from now on; it must outlive them. A
// process has one front end: call this once, before anything is checked.
void use_option_spelling(const OptionSpelling& spelling);

// Whether the front end offers the option (a hint to set it is left out where not).
[[nodiscard]] bool option_offered(Option option);

// The option's name: "--step-tokens" or "step_tokens". One the front end lacks is named as
// the command line names it (a check only the command line reaches).
[[nodiscard]] std::string option_name(Option option);

// The option with `text` as its value, as it is.
[[nodiscard]] std::string option_with(Option option, std::string_view text);
// The option with a value as the user gave it: "--storage gpu" or "storage=\"gpu\"";
// numbers: "--tp 3" or "tp=3".
[[nodiscard]] std::string option_is(Option option, std::string_view value);
template <typename Number>
requires std::is_arithmetic_v<Number>
[[nodiscard]] std::string option_is(Option option, Number value) { return option_with(option, std::to_string(value)); }
// The option with a value always in quotes (a value that is not one of the names it takes):
// "--storage \"gpu\"" or "storage=\"gpu\"".
[[nodiscard]] std::string option_quoted(Option option, std::string_view value);

// The value named `name`, or InputError naming the option with the value in quotes and the
// names it takes: "--storage \"gpu\": expected host, device, pinned or disk".
template <typename E, std::size_t N>
[[nodiscard]] E parse_value(const EnumNames<E, N>& names, std::string_view name, Option option) {
  if (const auto value = find_value(names, name)) return *value;
  throw InputError(option_quoted(option, name) + ": expected " + name_list(names));
}

}  // namespace pleshard
