#include "io/json_values.hpp"

#include <limits>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace pleshard {

void read_token_list(const nlohmann::json& value, const std::string& where, std::vector<std::int64_t>& out) {
  if (!value.is_array()) throw InputError(where + ": expected a list of integer token ids");
  out.clear();
  out.reserve(value.size());
  for (std::size_t i = 0; i < value.size(); ++i) {
    const auto& v = value[i];
    const bool fits = v.is_number_integer() &&
                      (!v.is_number_unsigned() ||
                       v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
    if (!fits)
      throw InputError(where + "[" + std::to_string(i) + "] = " + v.dump() +
                       ": expected an integer token id that fits int64");
    out.push_back(v.get<std::int64_t>());
  }
}

}  // namespace pleshard
