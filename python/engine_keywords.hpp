#pragma once
// pleshard.Engine's keywords, read through the library's engine option table
// (job/engine_option_table.hpp): the same names as `pleshard run`'s options (dashes as
// underscores), the same defaults, and the same checks and messages. Its signature as
// help() and the stub show it is written from the table too.

#include <cstdint>
#include <string>

#include <pybind11/pybind11.h>

#include "engine.hpp"

namespace pleshard::python {

// Sets every keyword of `keywords` (but comm) into `args`, and `threads` (0: none asked):
// a wrong type, a value out of range or an unknown keyword is an InputError naming it.
void read_engine_keywords(const pybind11::kwargs& keywords, EngineArguments& args, std::int64_t& threads);

// Engine.__init__'s doc: the signature line pybind11 would write (every keyword with its type
// and default, then **kwargs), and a line on each keyword.
[[nodiscard]] const std::string& engine_init_doc();

}  // namespace pleshard::python
