#pragma once
// Settings that must be the same on every rank of a job — those that decide which messages
// ranks send each other, and how large — compared before the first of those messages: ranks
// that differ would otherwise wait on messages of other sizes, or never sent, until the
// collective timeout. One line on every rank naming the first setting that differs.

#include <cstdint>
#include <string>
#include <vector>

#include <mpi.h>

#include "core/option_names.hpp"

namespace pleshard {

struct RankSetting {
  std::string name;        // as the message names it, with its option
  std::int64_t value = 0;  // the setting, or a digest of it
  bool printable = true;   // whether the message shows the values (not for digests)
};

// A setting's name as the message gives it: `field` and the option that sets it, in the
// front end's spelling ("max_tokens (--step-tokens)").
[[nodiscard]] std::string setting_name(const char* field, Option option);

// Collective over `comm`: returns where every rank has the same values (given in the same
// order on every rank); otherwise throws AgreedError (bad input) on every rank, naming
// `what`'s first setting that differs and, where printable, its lowest and highest values.
void require_same_on_every_rank(MPI_Comm comm, const std::vector<RankSetting>& settings, const std::string& what);

}  // namespace pleshard
