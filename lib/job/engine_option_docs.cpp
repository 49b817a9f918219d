#include "job/engine_option_docs.hpp"

namespace pleshard {

namespace {

// "INT", "FLOAT", "PATH", "TEXT", or the choices as `a`, `b`: the value as --help names it.
std::string value_of(const EngineOptionEntry& e) {
  if (e.kind == OptionKind::flag) return "(flag)";
  if (e.kind != OptionKind::choice) return value_name(e.kind);
  std::string names;
  for (const std::string& name : e.choices()) names += (names.empty() ? "`" : ", `") + name + "`";
  return names;
}

// What a value must be: its range, where it has one.
std::string range_of(const EngineOptionEntry& e) {
  return e.kind == OptionKind::integer || e.kind == OptionKind::number ? std::string(": ") + e.must_be : "";
}

std::string commands_of(const EngineOptionEntry& e) {
  if (takes(e, EngineCommand::every_command)) return "every command";
  std::string list;
  const std::pair<EngineCommand, const char*> commands[] = {{EngineCommand::run, "run"},
                                                            {EngineCommand::embed, "embed"},
                                                            {EngineCommand::bench_step, "bench step"},
                                                            {EngineCommand::profile, "profile"}};
  for (const auto& [command, name] : commands)
    if (takes(e, command)) list += (list.empty() ? "" : ", ") + std::string(name);
  return list;
}

}  // namespace

std::string python_type(const EngineOptionEntry& e) {
  std::string type;
  switch (e.kind) {
    case OptionKind::path:
      type = "str | bytes | os.PathLike";
      break;
    case OptionKind::text:
    case OptionKind::choice:
      type = "str";
      break;
    case OptionKind::integer:
      type = "int";
      break;
    case OptionKind::number:
      type = "float";
      break;
    case OptionKind::flag:
      type = "bool";
      break;
  }
  return e.optional || e.required ? type + " | None" : type;
}

std::string python_default(const EngineOptionEntry& e) {
  const std::optional<OptionValue> value = default_value(e);
  if (!value) return "None";
  if (const auto* flag = std::get_if<bool>(&*value)) return *flag ? "True" : "False";
  if (const auto* name = std::get_if<std::string>(&*value)) return "'" + *name + "'";
  std::string text = value_text(*value);
  if (std::holds_alternative<double>(*value) && text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

std::string command_line_options_markdown() {
  std::string out = "| option | value | default | taken by | what |\n|---|---|---|---|---|\n";
  for (const EngineOptionEntry& e : engine_option_table()) {
    const std::string taken_by = commands_of(e);
    if (taken_by.empty()) continue;  // the Python module's alone
    const std::optional<OptionValue> value = default_value(e);
    const std::string shown = e.required ? "required" : value ? "`" + value_text(*value) + "`" : "";
    out += "| `" + cli_name(e) + "` | " + value_of(e) + range_of(e) + " | " + shown + " | " + taken_by + " | " +
           help_text(e, EngineCommand::run) + " |\n";
  }
  return out;
}

std::string python_keywords_markdown() {
  std::string out;
  for (const EngineOptionEntry& e : engine_option_table()) {
    if (!takes(e, EngineCommand::python)) continue;
    out += "- `" + python_keyword(e) + ": " + python_type(e) + " = " + python_default(e) + "`" +
           (e.required ? " (required)" : "") + range_of(e) + ". " + help_text(e, EngineCommand::python) + "\n";
  }
  return out;
}

}  // namespace pleshard
