// The benchmarks' GPU cases in a build without CUDA (apps/CMakeLists.txt builds this file or
// the gpu_*_bench.cpp ones).
#include "bench/gpu_benches.hpp"
#include "core/error.hpp"

namespace pleshard {

void bench_gpu_tier(StorageTier tier, const TableSource&, const std::vector<std::int64_t>&,
                    const std::vector<std::uint8_t>&, const LookupBenchOptions&, RowFormat, double, double,
                    std::vector<LookupBenchResult>&) {
  throw InputError(std::string("bench lookup: the ") + to_string(tier) + " tier needs a CUDA build");
}

std::vector<std::int64_t> hash_on_gpu(const kernels::NgramHashParams&, const TokenBatch&, std::size_t,
                                      const HashBenchOptions&, HashBenchResult&) {
  throw InputError("bench hash: the GPU's hashing needs a CUDA build");
}

}  // namespace pleshard
