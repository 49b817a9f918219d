#include "help_format.hpp"

namespace pleshard::app {

std::string value_name(const CLI::Option* opt) {
  const std::string type = opt->get_type_name();
  const std::size_t colon = type.find(':');
  const std::string base = type.substr(0, colon);
  const std::string checks = colon == std::string::npos ? std::string() : type.substr(colon + 1);
  if (checks.starts_with("{")) return checks.substr(0, checks.find('}') + 1);
  if (checks.starts_with("PATH")) return "PATH";
  return base == "UINT" ? "INT" : base;
}

namespace {

std::string names_of(const std::set<CLI::Option*>& options) {
  std::string names;
  for (const CLI::Option* o : options) names += (names.empty() ? "" : ", ") + o->get_name();
  return names;
}

}  // namespace

std::string PlainHelp::make_option_name(const CLI::Option* opt, bool is_positional) const {
  std::string name = CLI::Formatter::make_option_name(opt, is_positional);
  // "--no-shared-tables{false}": the value the flag sets, which its description says.
  for (std::size_t open = name.find('{'); open != std::string::npos; open = name.find('{', open))
    name.erase(open, name.find('}', open) - open + 1);
  return name;
}

std::string PlainHelp::make_option_opts(const CLI::Option* opt) const {
  if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
  std::string out;
  if (const std::string value = value_name(opt); opt->get_type_size() != 0 && !value.empty()) {
    out += " " + value;
    if (opt->get_expected_max() == CLI::detail::expected_max_vector_size)
      out += " ...";
    else if (opt->get_expected_min() > 1)
      out += " x " + std::to_string(opt->get_expected());
    if (!opt->get_default_str().empty()) out += " (default: " + opt->get_default_str() + ")";
    if (opt->get_required()) out += " (required)";
  }
  if (!opt->get_needs().empty()) out += " (needs " + names_of(opt->get_needs()) + ")";
  if (!opt->get_excludes().empty()) out += " (not with " + names_of(opt->get_excludes()) + ")";
  return out;
}

}  // namespace pleshard::app
