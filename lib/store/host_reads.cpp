#include "store/host_reads.hpp"

#include <algorithm>
#include <cmath>

#include "core/enum_names.hpp"
#include "core/option_names.hpp"

namespace pleshard {

namespace {

constexpr EnumNames<HostReads, 4> k_host_reads{{{HostReads::automatic, "auto"},
                                                {HostReads::gather, "gather"},
                                                {HostReads::uva, "uva"},
                                                {HostReads::both, "both"}}};

}  // namespace

const char* to_string(HostReads reads) { return name_of(k_host_reads, reads); }

HostReads parse_host_reads(std::string_view name) { return parse_value(k_host_reads, name, Option::host_reads); }

bool gathers_on_host(HostReads reads, std::int64_t ids, bool capturing) {
  if (capturing || ids <= 0) return false;
  switch (reads) {
    case HostReads::gather:
    case HostReads::both:
      return true;
    case HostReads::uva:
      return false;
    case HostReads::automatic:
      break;
  }
  return ids >= k_host_gather_min_ids;
}

bool shares_with_gpu(HostReads reads) { return reads == HostReads::both || reads == HostReads::automatic; }

GatherShare::GatherShare(double fixed) : share_(fixed >= 0 ? std::min(fixed, 1.0) : 0.5), fixed_(fixed >= 0) {}

std::int64_t GatherShare::host_rows(std::int64_t rows) const {
  if (rows <= 0) return 0;
  return std::clamp(static_cast<std::int64_t>(std::llround(share_ * static_cast<double>(rows))), std::int64_t{0}, rows);
}

void GatherShare::settle(bool gpu_finished_first) {
  if (fixed_) return;
  share_ = std::clamp(share_ + (gpu_finished_first ? -k_step : k_step), 0.0, 1.0);
}

}  // namespace pleshard
