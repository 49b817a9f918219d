#include "store/host_reads.hpp"

#include "core/enum_names.hpp"
#include "core/option_names.hpp"

namespace pleshard {

namespace {

constexpr EnumNames<HostReads, 3> k_host_reads{
    {{HostReads::automatic, "auto"}, {HostReads::gather, "gather"}, {HostReads::uva, "uva"}}};

}  // namespace

const char* to_string(HostReads reads) { return name_of(k_host_reads, reads); }

HostReads parse_host_reads(std::string_view name) { return parse_value(k_host_reads, name, Option::host_reads); }

bool gathers_on_host(HostReads reads, std::int64_t ids, bool capturing) {
  if (capturing || ids <= 0) return false;
  switch (reads) {
    case HostReads::gather:
      return true;
    case HostReads::uva:
      return false;
    case HostReads::automatic:
      break;
  }
  return ids >= k_host_gather_min_ids;
}

}  // namespace pleshard
