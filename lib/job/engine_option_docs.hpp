#pragma once
// The engine option table (job/engine_option_table.hpp) as people read it outside --help:
// Python's signature of each keyword, and the lists of options in docs/cli.md and of
// keywords in docs/python.md (`pleshard help-options`; tests/docs/check_options.py fails
// when the committed pages differ from them).

#include <string>

#include "job/engine_option_table.hpp"

namespace pleshard {

// The keyword's type and default as Python's signature writes them: "int | None", "'auto'".
[[nodiscard]] std::string python_type(const EngineOptionEntry& entry);
[[nodiscard]] std::string python_default(const EngineOptionEntry& entry);

// A Markdown table of every command-line option of the table: value, default, the commands
// that take it, help.
[[nodiscard]] std::string command_line_options_markdown();
// A Markdown list of pleshard.Engine's keywords: type, default, help.
[[nodiscard]] std::string python_keywords_markdown();

}  // namespace pleshard
