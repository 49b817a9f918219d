#include <array>
#include <mutex>
#include <stdexcept>

#include "kernels/common/format_traits.hpp"

namespace pleshard::kernels {

namespace {

constexpr int k_registered_ids = 256 - k_first_registered_format;

// What an id never registered decodes as: rows of no bytes.
RowFormatHooks unknown_hooks() {
  RowFormatHooks hooks;
  hooks.row_bytes = [](int) -> std::size_t { return 0; };
  hooks.global_scale_for = [](float) { return 1.0f; };
  hooks.decode_value = [](const std::uint8_t*, const std::uint8_t*, float, int) { return 0.0f; };
  hooks.encode_row = [](const float*, int, float, std::uint8_t*, std::uint8_t*) {};
  return hooks;
}

// Registration happens at static initialization or before any table is read: the lock
// orders registrations among themselves, and lookups read entries written before them.
struct RegisteredHooks {
  std::mutex lock;
  int count = 0;
  std::array<RowFormatHooks, k_registered_ids> hooks;
  RegisteredHooks() { hooks.fill(unknown_hooks()); }
};

RegisteredHooks& registered() {
  static RegisteredHooks table;
  return table;
}

}  // namespace

const RowFormatHooks& registered_format_hooks(RowFormat format) {
  const int index = static_cast<int>(format) - k_first_registered_format;
  static const RowFormatHooks unknown = unknown_hooks();
  return index >= 0 ? registered().hooks[static_cast<std::size_t>(index)] : unknown;
}

RowFormat register_format_hooks(const RowFormatHooks& hooks) {
  RegisteredHooks& table = registered();
  const std::lock_guard<std::mutex> guard(table.lock);
  if (table.count == k_registered_ids) throw std::length_error("every registered row format id is taken");
  table.hooks[static_cast<std::size_t>(table.count)] = hooks;
  return static_cast<RowFormat>(k_first_registered_format + table.count++);
}

}  // namespace pleshard::kernels
