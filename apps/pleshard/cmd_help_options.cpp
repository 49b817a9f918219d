// pleshard help-options cli|python|COMMAND: the engine option table as the docs print it
// (docs/cli.md's table of options, docs/python.md's keywords), or the names one command takes,
// a line each. Hidden from `pleshard --help`: it serves the docs and their tests.

#include <cstdio>
#include <string>

#include "cli.hpp"
#include "job/engine_option_docs.hpp"

namespace pleshard::app {

namespace {

struct HelpOptions {
  std::string what;
};

// The names `command` takes, as the command line spells them ("--tp"), a line each.
std::string names_taken_by(EngineCommand command) {
  std::string names;
  for (const EngineOptionEntry& e : engine_option_table())
    if (takes(e, command) || takes(e, EngineCommand::every_command))
      names += (command == EngineCommand::python ? python_keyword(e) : cli_name(e)) + "\n";
  return names;
}

}  // namespace

void add_help_options_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<HelpOptions>();
  CLI::App* cmd = app.add_subcommand("help-options", "The engine's options as the docs list them");
  cmd->group("");  // hidden
  cmd->add_option("what", o->what,
                  "cli: docs/cli.md's table; python: docs/python.md's keywords; run, embed, bench-step, profile, "
                  "python-names: the names each takes, a line each")
      ->required()
      ->check(CLI::IsMember({"cli", "python", "run", "embed", "bench-step", "profile", "python-names"}));
  cmd->callback([&action, o] {
    action = [o] {
      if (world_rank() != 0) return 0;
      const std::string& w = o->what;
      const std::string text = w == "cli"          ? command_line_options_markdown()
                               : w == "python"     ? python_keywords_markdown()
                               : w == "run"        ? names_taken_by(EngineCommand::run)
                               : w == "embed"      ? names_taken_by(EngineCommand::embed)
                               : w == "bench-step" ? names_taken_by(EngineCommand::bench_step)
                               : w == "profile"    ? names_taken_by(EngineCommand::profile)
                                                   : names_taken_by(EngineCommand::python);
      std::fputs(text.c_str(), stdout);
      return 0;
    };
  });
}

}  // namespace pleshard::app
