// --token-map on the commands that hash without an engine (ids, ckpt, bench hash, profile),
// with the engine option table's help.

#include <string>

#include "cli.hpp"
#include "job/engine_option_table.hpp"
#include "option_checks.hpp"

namespace pleshard::app {

void add_token_map_option(CLI::App& cmd, std::string& path) {
  cmd.add_option("--token-map", path, engine_option(Option::token_map).help)->check(path_given());
}

}  // namespace pleshard::app
