#include "core/same_on_every_rank.hpp"

#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/watched_collectives.hpp"

namespace pleshard {

std::string setting_name(const char* field, Option option) {
  return std::string(field) + " (" + option_name(option) + ")";
}

void require_same_on_every_rank(MPI_Comm comm, const std::vector<RankSetting>& settings, const std::string& what) {
  std::vector<std::int64_t> lowest, highest;
  for (const RankSetting& s : settings) lowest.push_back(s.value);
  highest = lowest;
  const auto count = static_cast<int>(settings.size());
  watched_allreduce(lowest.data(), count, MPI_INT64_T, MPI_MIN, comm, what + " of every rank");
  watched_allreduce(highest.data(), count, MPI_INT64_T, MPI_MAX, comm, what + " of every rank");
  for (std::size_t i = 0; i < settings.size(); ++i) {
    if (lowest[i] == highest[i]) continue;
    const std::string values =
        settings[i].printable ? " (from " + std::to_string(lowest[i]) + " to " + std::to_string(highest[i]) + ")" : "";
    // Every rank knows: agreed, so that one message is printed for all (bad input).
    throw AgreedError(
        what + ": " + settings[i].name + " differs between ranks" + values + ": every rank must be given the same", 0,
        true);
  }
}

}  // namespace pleshard
