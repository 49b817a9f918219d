#pragma once
// The hashing stage of the batch job: requests spread over the ranks of a communicator,
// packed into steps, every PLE layer hashed each step. Reports throughput and a digest of
// all ids that is identical for any number of ranks and any step schedule.

#include <cstdint>
#include <functional>
#include <vector>

#include <mpi.h>

#include "config/model_config.hpp"
#include "engine/step_scheduler.hpp"
#include "io/requests.hpp"

namespace pleshard {

// Owner rank of each request: largest requests first onto the least-loaded rank, so
// token counts are balanced; deterministic.
[[nodiscard]] std::vector<int> assign_requests_by_tokens(const std::vector<Request>& requests,
                                                         int ranks);

struct HashJobReport {
  int ranks = 1;
  std::int64_t requests = 0;
  std::int64_t tokens = 0;
  std::int64_t ids = 0;
  std::int64_t max_steps = 0;     // most steps taken by one rank
  double seconds = 0;             // wall time, max over ranks
  double hash_seconds = 0;        // time inside the hash kernel, max over ranks
  std::uint64_t id_digest = 0;    // order-independent digest of every (token, layer, head) id
};

// Called on each rank after each of its steps with its own progress.
using ProgressCallback = std::function<void(std::int64_t tokens_done, std::int64_t tokens_total,
                                            double seconds)>;

// Collective over `comm`; every rank passes the same request list.
[[nodiscard]] HashJobReport run_hash_job(MPI_Comm comm, const ModelConfig& config,
                                         const std::vector<Request>& requests,
                                         const StepSchedule& schedule,
                                         const ProgressCallback& progress = {});

// Digest term of one id: mixes where the id belongs (request, position, layer column) so
// a sum over all ids detects any misplaced or wrong id, in any summation order.
[[nodiscard]] std::uint64_t id_digest_term(std::int64_t request, std::int64_t position,
                                           std::int64_t column, std::int64_t id);

}  // namespace pleshard
