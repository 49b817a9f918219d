#pragma once
// A row cache's hit rate against its size on a token corpus (`pleshard profile --curve`) —
// the share of lookups it serves without a read of the slow tier (hits, and repeats of a
// miss within its step, which the tier reads once):
// the cache's own policy (kernels/common/row_cache.hpp, run on the host over rows of no
// bytes) with every slot dynamic, every slot static (a profile's hottest rows), and both,
// against two yardsticks: every lookup that repeats an earlier one of the stream or is of the
// profile's hottest rows (a cache of any size that knew the profile), and what a cache of
// that size that knew the whole stream ahead would hit (Belady's: evict the row needed
// farthest ahead, admit none needed later still).

#include <cstdint>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "io/requests.hpp"
#include "model/model_config.hpp"
#include "profile/row_profile.hpp"

namespace pleshard {

struct CurvePoint {
  std::int64_t slots = 0;
  double bound = 0;    // repeats of the stream or rows of the profile's hottest `slots`
  double optimal = 0;  // Belady's, over each step's distinct rows, plus the steps' repeats
  double dynamic = 0;  // every slot admitting rows as they come
  double fixed = 0;    // every slot the profile's (0 without a profile)
  double mixed = 0;    // `static_share` of the slots the profile's, the rest dynamic
};

struct CurveOptions {
  std::vector<std::int64_t> slots;  // cache sizes, in rows
  std::int64_t step_tokens = 8192;  // the stream's lookups go in steps of this many tokens
  double static_share = 0.5;
};

// One table's curve: the corpus's lookups of PLE table `ple_index`, requests whole and in
// order; `profile` may be null.
[[nodiscard]] std::vector<CurvePoint> miss_ratio_curve(const ModelConfig& config, const PleCheckpoint& checkpoint,
                                                       const std::vector<Request>& requests, int ple_index,
                                                       const TableProfile* profile, const CurveOptions& options);

}  // namespace pleshard
