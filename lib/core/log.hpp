#pragma once
// Diagnostics to stderr, one line each, prefixed "pleshard: warning:" or "pleshard:".

#include <string>

namespace pleshard {

void log_warning(const std::string& message);
void log_info(const std::string& message);

}  // namespace pleshard
