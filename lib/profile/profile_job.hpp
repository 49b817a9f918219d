#pragma once
// `pleshard profile`: how often a token corpus looks up each row of every PLE table. Every
// rank hashes every request whole, as a prefill from its first token would, and counts the
// lookups of its balanced share of each table's rows (no exchange: hashing is cheap beside
// counting, and a share's counts fit in memory); rank 0 gathers the profile.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <mpi.h>

#include "ckpt/ple_checkpoint.hpp"
#include "hash/token_batch.hpp"
#include "io/requests.hpp"
#include "model/model_config.hpp"
#include "profile/row_profile.hpp"

namespace pleshard {

struct ProfileOptions {
  std::int64_t batch_tokens = 1 << 20;  // requests hashed together, whole
  // Rank 0, after each batch: tokens hashed so far of all.
  std::function<void(std::int64_t done, std::int64_t total)> progress;
};

// The corpus as the profile sees it: every request whole, as a prefill from its first token,
// in order, in batches of whole requests of about `batch_tokens` tokens for `visit`.
void for_each_request_batch(const ModelConfig& config, const std::vector<Request>& requests, std::int64_t batch_tokens,
                            const std::function<void(const TokenBatch&)>& visit);

// Collective over `comm`; rank 0 returns the profile, the others an empty one.
[[nodiscard]] RowProfile profile_rows(MPI_Comm comm, const ModelConfig& config, const PleCheckpoint& checkpoint,
                                      const std::vector<Request>& requests, const std::string& corpus,
                                      const ProfileOptions& options);

}  // namespace pleshard
