#pragma once
// Reading a config.json's keys, for the families: keys are looked up in "text_config" first,
// then at the top level, and problems reported as "<source>: <key> = <value>: <what>".

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace pleshard::detail {

class ConfigReader {
 public:
  ConfigReader(const nlohmann::json& document, std::string source);

  [[nodiscard]] const nlohmann::json* find(const char* key) const;
  [[noreturn]] void fail(const char* key, const nlohmann::json& value, const std::string& what) const;
  [[noreturn]] void fail_missing(const char* key) const;

  // An integer that fits int64 (InputError otherwise).
  [[nodiscard]] std::int64_t integer(const char* key, const nlohmann::json& value) const;
  [[nodiscard]] std::optional<std::int64_t> optional_integer(const char* key) const;
  [[nodiscard]] std::int64_t required_integer(const char* key) const;
  // Present and positive, or `fallback` when absent.
  [[nodiscard]] std::int64_t positive(const char* key, std::int64_t fallback) const;
  // An integer in [lo, hi] as an int.
  [[nodiscard]] int bounded_int(const char* key, std::int64_t value, std::int64_t lo, std::int64_t hi) const;

  [[nodiscard]] const std::string& source() const { return source_; }

 private:
  const nlohmann::json& document_;
  const nlohmann::json* text_config_ = nullptr;
  std::string source_;
};

}  // namespace pleshard::detail
