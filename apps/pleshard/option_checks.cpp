#include "option_checks.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace pleshard::app {

namespace {

// The value as a number, or NaN when it is none (CLI11 then reports the conversion).
double number_of(const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0') return std::numeric_limits<double>::quiet_NaN();
  return v;
}

std::string shortest(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

}  // namespace

CLI::Validator path_given() {
  return CLI::Validator(
      [](std::string& value) {
        return value.empty() ? std::string("empty path (an unset variable?); name the file") : std::string();
      },
      "PATH", "path_given");
}

CLI::Validator finite_in(double min, double max, const std::string& what) {
  return CLI::Validator(
      [min, max, what](std::string& value) {
        const double v = number_of(value);
        if (std::isfinite(v) && v >= min && v <= max) return std::string();
        return value + " is out of range: must be " + what;
      },
      "[" + shortest(min) + ", " + shortest(max) + "]", "finite_in");
}

CLI::Validator finite_positive() {
  return CLI::Validator(
      [](std::string& value) {
        const double v = number_of(value);
        if (std::isfinite(v) && v > 0) return std::string();
        return value + " is out of range: must be a finite number > 0";
      },
      "> 0", "finite_positive");
}

CLI::Validator step_tokens_option() {
  return finite_in(1, k_max_step_tokens, "a whole number of tokens from 1 to 16777216");
}

CLI::Validator ranks_option() { return finite_in(1, 1 << 24, "a whole number of ranks >= 1"); }

}  // namespace pleshard::app
