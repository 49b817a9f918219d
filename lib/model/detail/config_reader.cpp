#include "model/detail/config_reader.hpp"

#include <limits>

#include "core/error.hpp"

namespace pleshard::detail {

using nlohmann::json;

ConfigReader::ConfigReader(const json& document, std::string source) : document_(document), source_(std::move(source)) {
  if (!document_.is_object()) throw InputError(source_ + ": expected a JSON object at the top level");
  if (auto it = document_.find("text_config"); it != document_.end() && !it->is_null()) {
    if (!it->is_object()) fail("text_config", *it, "must be an object");
    text_config_ = &*it;
  }
}

const json* ConfigReader::find(const char* key) const {
  if (text_config_ != nullptr) {
    if (auto it = text_config_->find(key); it != text_config_->end() && !it->is_null()) return &*it;
  }
  if (auto it = document_.find(key); it != document_.end() && !it->is_null()) return &*it;
  return nullptr;
}

void ConfigReader::fail(const char* key, const json& value, const std::string& what) const {
  throw InputError(source_ + ": " + key + " = " + quoted_value(value.dump()) + ": " + what);
}

void ConfigReader::fail_missing(const char* key) const {
  throw InputError(source_ + ": required key " + key + " is missing");
}

std::int64_t ConfigReader::integer(const char* key, const json& value) const {
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() &&
        value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(key, value, "does not fit a signed 64-bit integer");
    return value.get<std::int64_t>();
  }
  fail(key, value, "must be an integer");
}

std::optional<std::int64_t> ConfigReader::optional_integer(const char* key) const {
  const json* value = find(key);
  if (value == nullptr) return std::nullopt;
  return integer(key, *value);
}

std::int64_t ConfigReader::required_integer(const char* key) const {
  const json* value = find(key);
  if (value == nullptr) fail_missing(key);
  return integer(key, *value);
}

std::int64_t ConfigReader::positive(const char* key, std::int64_t fallback) const {
  const std::int64_t v = optional_integer(key).value_or(fallback);
  if (v <= 0) fail(key, json(v), "must be positive");
  return v;
}

int ConfigReader::bounded_int(const char* key, std::int64_t value, std::int64_t lo, std::int64_t hi) const {
  if (value < lo || value > hi) fail(key, json(value), "must be in " + std::to_string(lo) + ".." + std::to_string(hi));
  return static_cast<int>(value);
}

}  // namespace pleshard::detail
