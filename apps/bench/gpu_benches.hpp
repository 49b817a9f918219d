#pragma once
// The benchmarks' GPU cases: built where the build has CUDA (gpu_lookup_bench.cpp,
// gpu_hash_bench.cpp), errors in a build without it (no_gpu_benches.cpp; no case calls them
// there: GPU tiers and kernels are refused or skipped before). The one place the benches
// meet CUDA.

#include <cstdint>
#include <vector>

#include "bench/hash_bench.hpp"
#include "bench/lookup_bench.hpp"
#include "ckpt/ple_checkpoint.hpp"
#include "hash/token_batch.hpp"
#include "kernels/common/ngram_hash.hpp"

namespace pleshard {

// The GPU tier's lookups of `ids` (`tier`: device or pinned) and their baselines, each
// output checked against `expected`, appended to `results`.
void bench_gpu_tier(StorageTier tier, const TableSource& source, const std::vector<std::int64_t>& ids,
                    const std::vector<std::uint8_t>& expected, const LookupBenchOptions& o, RowFormat format,
                    double row_bytes, double out_row_bytes, std::vector<LookupBenchResult>& results);

// The `count` ids the GPU's hashing gives for `batch`; its median time and repeats into `result`.
[[nodiscard]] std::vector<std::int64_t> hash_on_gpu(const kernels::NgramHashParams& params, const TokenBatch& batch,
                                                    std::size_t count, const HashBenchOptions& options,
                                                    HashBenchResult& result);

}  // namespace pleshard
