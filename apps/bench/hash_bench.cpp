#include "bench/hash_bench.hpp"

#include <algorithm>
#include <functional>
#include <numeric>

#include "bench/bench_progress.hpp"
#include "bench/gpu_benches.hpp"
#include "bench/timing.hpp"
#include "core/mpi_check.hpp"
#include "io/requests.hpp"
#include "kernels/gpu_device.hpp"
#include "kernels/host/ngram_ids_host.hpp"
#include "model/table_spec.hpp"

namespace pleshard {

TokenBatch make_bench_batch(const ModelConfig& config, std::int64_t tokens, std::uint64_t seed) {
  SyntheticRequestsSpec spec;
  spec.count = 1;
  spec.min_tokens = 1;
  spec.max_tokens = 512;
  spec.vocab_size = config.vocab_size;
  spec.seed = seed;
  TokenBatch batch(config.ngram_size);
  std::vector<std::int64_t> context = fresh_context(config.ngram_size);
  std::int64_t made = 0;
  while (made < tokens) {
    std::vector<Request> one = make_synthetic_requests(spec);
    ++spec.seed;
    auto& request_tokens = one.front().tokens;
    request_tokens.resize(static_cast<std::size_t>(
        std::min<std::int64_t>(static_cast<std::int64_t>(request_tokens.size()), tokens - made)));
    // Alternate fresh requests with ones continuing earlier text.
    if (spec.seed % 2 == 0) context = fresh_context(config.ngram_size);
    batch.add_request(request_tokens, context);
    advance_context(context, request_tokens);
    made += static_cast<std::int64_t>(request_tokens.size());
  }
  return batch;
}

namespace {

std::int64_t count_mismatches(const std::vector<std::int64_t>& ids, const std::vector<std::int64_t>& reference) {
  return static_cast<std::int64_t>(reference.size()) - std::inner_product(ids.begin(), ids.end(), reference.begin(),
                                                                          std::int64_t{0}, std::plus<>(),
                                                                          std::equal_to<>());
}

HashBenchResult reduce_result(MPI_Comm comm, HashBenchResult result) {
  double seconds = result.seconds;
  PLESHARD_MPI_CHECK(MPI_Allreduce(&seconds, &result.seconds, 1, MPI_DOUBLE, MPI_MAX, comm));
  std::int64_t wrong = result.wrong;
  PLESHARD_MPI_CHECK(MPI_Allreduce(&wrong, &result.wrong, 1, MPI_INT64_T, MPI_SUM, comm));
  return result;
}

}  // namespace

std::vector<HashBenchResult> run_hash_bench(MPI_Comm comm, const ModelConfig& config, const HashBenchOptions& options) {
  int rank = 0;
  PLESHARD_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const kernels::NgramHashParams params = make_hash_params(derive_table_spec(config, 0));
  const int heads = config.total_heads();
  const bool cuda = options.cuda && kernels::gpu_count() > 0;
  BenchProgress progress(
      "hash", static_cast<int>(options.batch_tokens.size()) * ((options.host ? 1 : 0) + (cuda ? 1 : 0)), rank == 0);
  std::vector<HashBenchResult> results;
  for (const std::int64_t tokens : options.batch_tokens) {
    const TokenBatch batch = make_bench_batch(config, tokens, 1000 + static_cast<std::uint64_t>(rank));
    std::vector<std::int64_t> reference(static_cast<std::size_t>(tokens * heads));
    kernels::compute_ngram_ids_host(params, batch.view(), reference.data());

    if (options.host) {
      progress.next("host, " + std::to_string(tokens) + " tokens");
      HashBenchResult r{"host", tokens, heads};
      std::vector<std::int64_t> ids(reference.size(), -1);
      PLESHARD_MPI_CHECK(MPI_Barrier(comm));
      r.seconds = median_seconds(
          [&] { return host_seconds([&] { kernels::compute_ngram_ids_host(params, batch.view(), ids.data()); }); },
          options.min_repeats, options.min_seconds, &r.repeats);
      r.wrong = count_mismatches(ids, reference);
      results.push_back(reduce_result(comm, r));
    }
    if (cuda) {
      progress.next("cuda, " + std::to_string(tokens) + " tokens");
      HashBenchResult r{"cuda", tokens, heads};
      PLESHARD_MPI_CHECK(MPI_Barrier(comm));
      const std::vector<std::int64_t> ids = hash_on_gpu(params, batch, reference.size(), options, r);
      r.wrong = count_mismatches(ids, reference);
      results.push_back(reduce_result(comm, r));
    }
  }
  return results;
}

}  // namespace pleshard
