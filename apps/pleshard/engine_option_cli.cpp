#include "engine_option_cli.hpp"

#include <string>
#include <variant>

namespace pleshard::app {

namespace {

// The entry's check as CLI11 runs it on the text given: the range (a NaN, an infinity or a
// fraction of a whole number refused) or an empty path; choices are CLI11's IsMember.
CLI::Validator entry_check(const EngineOptionEntry& entry) {
  return CLI::Validator(
      [&entry](std::string& text) {
        const auto value = value_of_text(entry, text);
        if (const auto* why = std::get_if<std::string>(&value)) return *why;
        return refusal(entry, std::get<OptionValue>(value), text);
      },
      "", entry.name);
}

}  // namespace

CLI::Option* add_engine_option(CLI::App& cmd, const EngineOptionEntry& entry, const EngineTarget& target) {
  const std::string help = help_text(entry, EngineCommand::run);
  if (entry.kind == OptionKind::flag)
    return cmd.add_flag_callback(
        cli_name(entry), [&entry, target] { set_option(entry, OptionValue{true}, target); }, help);
  CLI::Option* option = cmd.add_option_function<std::string>(
      cli_name(entry),
      [&entry, target](const std::string& text) {
        set_option(entry, std::get<OptionValue>(value_of_text(entry, text)), target);
      },
      help);
  option->type_name(value_name(entry.kind));
  if (entry.kind == OptionKind::choice)
    option->check(CLI::IsMember(entry.choices()));
  else
    option->check(entry_check(entry));
  if (const std::optional<OptionValue> value = default_value(entry)) option->default_str(value_text(*value));
  if (entry.required) option->required();
  return option;
}

void add_engine_options(CLI::App& cmd, EngineCommand command, const EngineTarget& target) {
  for (const EngineOptionEntry& entry : engine_option_table())
    if (takes(entry, command)) add_engine_option(cmd, entry, target);
  for (const EngineOptionEntry& entry : engine_option_table())
    if (takes(entry, command) && entry.excludes)
      if (CLI::Option* other = cmd.get_option_no_throw(cli_name(engine_option(*entry.excludes))))
        cmd.get_option(cli_name(entry))->excludes(other);
}

}  // namespace pleshard::app
