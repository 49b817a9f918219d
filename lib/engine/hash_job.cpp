#include "engine/hash_job.hpp"

#include <algorithm>
#include <numeric>

#include "core/mpi_check.hpp"
#include "hash/ple_layer_spec.hpp"
#include "kernels/host/ngram_ids_host.hpp"

namespace pleshard {

std::vector<int> assign_requests_by_tokens(const std::vector<Request>& requests, int ranks) {
  std::vector<std::size_t> order(requests.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return requests[a].tokens.size() > requests[b].tokens.size();
  });
  std::vector<std::int64_t> load(static_cast<std::size_t>(ranks), 0);
  std::vector<int> owner(requests.size(), 0);
  for (std::size_t r : order) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();
    owner[r] = static_cast<int>(least);
    load[static_cast<std::size_t>(least)] += static_cast<std::int64_t>(requests[r].tokens.size());
  }
  return owner;
}

std::uint64_t id_digest_term(std::int64_t request, std::int64_t position, std::int64_t column,
                             std::int64_t id) {
  using kernels::splitmix64;
  const std::uint64_t where =
      splitmix64(splitmix64(static_cast<std::uint64_t>(request)) ^
                 (static_cast<std::uint64_t>(position) << 16) ^ static_cast<std::uint64_t>(column));
  return splitmix64(where ^ static_cast<std::uint64_t>(id));
}

HashJobReport run_hash_job(MPI_Comm comm, const ModelConfig& config,
                           const std::vector<Request>& requests, const StepSchedule& schedule,
                           const ProgressCallback& progress) {
  int rank = 0;
  int ranks = 1;
  PLESHARD_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  PLESHARD_MPI_CHECK(MPI_Comm_size(comm, &ranks));

  const std::vector<int> owner = assign_requests_by_tokens(requests, ranks);
  std::vector<Request> mine;
  std::vector<std::int64_t> global_index;
  for (std::size_t r = 0; r < requests.size(); ++r) {
    if (owner[r] != rank) continue;
    mine.push_back(requests[r]);
    global_index.push_back(static_cast<std::int64_t>(r));
  }
  const std::int64_t my_tokens = total_tokens(mine);

  const std::vector<PleLayerSpec> specs = derive_layer_specs(config);
  std::vector<kernels::NgramHashParams> params;
  for (const auto& spec : specs) params.push_back(make_hash_params(spec));
  const int heads = config.total_heads();

  PLESHARD_MPI_CHECK(MPI_Barrier(comm));
  const double start = MPI_Wtime();
  double hash_seconds = 0;
  std::int64_t steps = 0;
  std::uint64_t digest = 0;

  StepScheduler scheduler(mine, config.ngram_size, config.eos_token_id, schedule);
  TokenBatch batch;
  std::vector<StepSlice> slices;
  std::vector<std::int64_t> ids;
  while (scheduler.next_step(batch, slices)) {
    ++steps;
    ids.resize(static_cast<std::size_t>(batch.num_tokens() * heads));
    for (std::size_t d = 0; d < params.size(); ++d) {
      const double t0 = MPI_Wtime();
      kernels::compute_ngram_ids_host(params[d], batch.view(), ids.data());
      hash_seconds += MPI_Wtime() - t0;
      std::int64_t row = 0;
      for (const StepSlice& slice : slices) {
        const std::int64_t request = global_index[static_cast<std::size_t>(slice.request)];
        for (std::int64_t i = 0; i < slice.length; ++i, ++row) {
          for (int h = 0; h < heads; ++h) {
            const auto column = static_cast<std::int64_t>(d) * heads + h;
            digest += id_digest_term(request, slice.position + i, column,
                                     ids[static_cast<std::size_t>(row * heads + h)]);
          }
        }
      }
    }
    if (progress) progress(scheduler.tokens_done(), my_tokens, MPI_Wtime() - start);
  }
  const double seconds = MPI_Wtime() - start;

  HashJobReport report;
  report.ranks = ranks;
  report.requests = static_cast<std::int64_t>(requests.size());
  report.tokens = total_tokens(requests);
  report.ids = report.tokens * heads * static_cast<std::int64_t>(specs.size());
  double local_times[2] = {seconds, hash_seconds};
  double max_times[2] = {0, 0};
  PLESHARD_MPI_CHECK(MPI_Allreduce(local_times, max_times, 2, MPI_DOUBLE, MPI_MAX, comm));
  report.seconds = max_times[0];
  report.hash_seconds = max_times[1];
  PLESHARD_MPI_CHECK(MPI_Allreduce(&steps, &report.max_steps, 1, MPI_INT64_T, MPI_MAX, comm));
  PLESHARD_MPI_CHECK(MPI_Allreduce(&digest, &report.id_digest, 1, MPI_UINT64_T, MPI_SUM, comm));
  return report;
}

}  // namespace pleshard
