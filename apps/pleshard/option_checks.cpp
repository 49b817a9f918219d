#include "option_checks.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "core/error.hpp"

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

// Edits (insertions, deletions, substitutions) that turn a into b.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// " (did you mean X?)" for the closest of `names` within a quarter of the word's edits (at
// least two), else "".
std::string suggestion(const std::string& word, const std::vector<std::string>& names) {
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 4);
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const std::string& name : names)
    if (const std::size_t d = edit_distance(word, name); d < best_distance) {
      best = name;
      best_distance = d;
    }
  return best.empty() ? "" : " (did you mean " + best + "?)";
}

// "pleshard ckpt make": the command's path from the root.
std::string command_path(const CLI::App* cmd) {
  std::string path;
  for (; cmd->get_parent() != nullptr; cmd = cmd->get_parent()) path = " " + cmd->get_name() + path;
  return "pleshard" + path;
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
        return quoted_value(value) + " is out of range: must be " + what;
      },
      "[" + shortest(min) + ", " + shortest(max) + "]", "finite_in");
}

CLI::Validator step_tokens_option() {
  return finite_in(1, k_max_step_tokens, "a whole number of tokens from 1 to 16777216");
}

std::string unknown_argument(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* cmd = &app;
  bool value_next = false;  // the previous argument was an option that takes values
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (arg.starts_with("--")) {
      const std::string name = arg.substr(0, arg.find('='));
      const CLI::Option* option = cmd->get_option_no_throw(name);
      if (option == nullptr) {
        std::vector<std::string> names;
        for (const CLI::Option* o : cmd->get_options())
          for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
        return "unknown option " + quoted_value(name) + suggestion(name, names) + "; see " + command_path(cmd) +
               " --help";
      }
      value_next = option->get_items_expected_max() > 0 && arg.find('=') == std::string::npos;
      continue;
    }
    if (arg.starts_with("-")) {  // a short flag or a negative number
      value_next = false;
      continue;
    }
    const auto commands = cmd->get_subcommands([](const CLI::App*) { return true; });
    const auto found =
        std::find_if(commands.begin(), commands.end(), [&](const CLI::App* c) { return c->check_name(arg); });
    if (found != commands.end()) {
      cmd = *found;
      value_next = false;
    } else if (!commands.empty() && !value_next) {
      std::vector<std::string> names;
      for (const CLI::App* c : commands) names.push_back(c->get_name());
      return "unknown command " + quoted_value(arg) + suggestion(arg, names) + "; see " + command_path(cmd) + " --help";
    }
  }
  return "";
}

std::string with_values_quoted(std::string message, const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    const std::size_t eq = arg.starts_with("--") ? arg.find('=') : std::string::npos;
    const std::string value = eq == std::string::npos ? arg : arg.substr(eq + 1);
    if (value.size() <= k_quoted_value_bytes) continue;
    const std::string quoted = quoted_value(value);
    for (std::size_t at = message.find(value); at != std::string::npos; at = message.find(value, at + quoted.size()))
      message.replace(at, value.size(), quoted);
  }
  return message;
}

const CLI::App& command_parsed(const CLI::App& app) {
  // The subcommands parsed so far, the last the innermost.
  const CLI::App* cmd = &app;
  for (std::vector<const CLI::App*> parsed = cmd->get_subcommands([](const CLI::App* c) { return c->parsed(); });
       !parsed.empty(); parsed = cmd->get_subcommands([](const CLI::App* c) { return c->parsed(); }))
    cmd = parsed.front();
  return *cmd;
}

std::string command_given(const CLI::App& app) { return command_path(&command_parsed(app)); }

std::string usage_error(const CLI::App& app, const CLI::Error& e, const std::vector<std::string>& args) {
  return "pleshard: error: " + with_values_quoted(e.what(), args) + "; see " + command_given(app) + " --help";
}

}  // namespace pleshard::app
