#pragma once
// The engine's options on the command line, made from the library's one table
// (job/engine_option_table.hpp): each command adds the entries it takes, each with its
// help, default, CLI11 check (range or choices) and setter from its entry.

#include <CLI/CLI.hpp>

#include "job/engine_option_table.hpp"

namespace pleshard::app {

// The entry as an option of `cmd`, set into `target` as it is parsed.
CLI::Option* add_engine_option(CLI::App& cmd, const EngineOptionEntry& entry, const EngineTarget& target);
// Every entry `command` takes, in the table's order, and the pairs they exclude.
void add_engine_options(CLI::App& cmd, EngineCommand command, const EngineTarget& target);

}  // namespace pleshard::app
