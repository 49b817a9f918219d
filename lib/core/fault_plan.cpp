#include "core/fault_plan.hpp"

#include <signal.h>

#include <array>
#include <charconv>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include "core/error.hpp"

namespace pleshard {

namespace {

FaultPlan& plan_in_force() {
  static FaultPlan plan;
  return plan;
}

std::optional<std::uint64_t> whole_number(const char* variable) {
  const char* text = std::getenv(variable);
  if (text == nullptr || *text == '\0') return std::nullopt;
  const std::string_view value(text);
  std::uint64_t n = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (error != std::errc() || end != value.data() + value.size())
    throw InputError(std::string(variable) + "=" + text + ": not a whole number");
  return n;
}

constexpr std::array<std::pair<std::string_view, FaultPoint>, 4> k_points{{{"start", FaultPoint::start},
                                                                           {"load", FaultPoint::load},
                                                                           {"output", FaultPoint::output},
                                                                           {"end", FaultPoint::end}}};

std::optional<FaultPoint> fault_point(const char* variable) {
  const char* text = std::getenv(variable);
  if (text == nullptr || *text == '\0') return std::nullopt;
  for (const auto& [name, point] : k_points)
    if (name == text) return point;
  throw InputError(std::string(variable) + "=" + text + ": not a point of the job (start, load, output or end)");
}

}  // namespace

const FaultPlan& fault_plan() { return plan_in_force(); }

void set_fault_plan(const FaultPlan& plan) { plan_in_force() = plan; }

FaultPlan fault_plan_from_environment(int rank) {
  FaultPlan plan;
  plan.stall_step = whole_number("PLESHARD_FAULT_STALL_STEP");
  plan.stall_rank = static_cast<int>(whole_number("PLESHARD_FAULT_STALL_RANK").value_or(0));
  plan.kill_after_parts = whole_number("PLESHARD_FAULT_KILL_AFTER_PARTS");
  plan.write_limit = whole_number("PLESHARD_FAULT_WRITE_LIMIT");
  plan.kill_in_shared_load = whole_number("PLESHARD_FAULT_KILL_IN_SHARED_LOAD").value_or(0) != 0;
  plan.small_pages = whole_number("PLESHARD_FAULT_SMALL_PAGES").value_or(0) != 0;
  plan.peer_map_failure = whole_number("PLESHARD_FAULT_PEER_MAP").value_or(0) != 0;
  plan.decode_delay_us = whole_number("PLESHARD_FAULT_DECODE_DELAY_US").value_or(0);
  plan.host_gather_failure = whole_number("PLESHARD_FAULT_HOST_GATHER_FAILURE");
  if (whole_number("PLESHARD_FAULT_AHEAD_REFUSED_RANK").value_or(0) == static_cast<std::uint64_t>(rank))
    plan.ahead_refused = whole_number("PLESHARD_FAULT_AHEAD_REFUSED").value_or(0) != 0;
  const auto disk_read_failure = whole_number("PLESHARD_FAULT_DISK_READ_FAILURE");
  if (whole_number("PLESHARD_FAULT_DISK_READ_FAILURE_RANK").value_or(0) == static_cast<std::uint64_t>(rank))
    plan.disk_read_failure = disk_read_failure;
  const auto stop_at = fault_point("PLESHARD_FAULT_STOP_AT");
  if (whole_number("PLESHARD_FAULT_STOP_RANK").value_or(0) == static_cast<std::uint64_t>(rank)) plan.stop_at = stop_at;
  return plan;
}

void reach_fault_point(FaultPoint point) {
  if (plan_in_force().stop_at == point) ::raise(SIGSTOP);
}

}  // namespace pleshard
