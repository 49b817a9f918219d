#include "core/log.hpp"

#include <cstdio>

namespace pleshard {

void log_warning(const std::string& message) { std::fprintf(stderr, "pleshard: warning: %s\n", message.c_str()); }

void log_info(const std::string& message) { std::fprintf(stderr, "pleshard: %s\n", message.c_str()); }

}  // namespace pleshard
