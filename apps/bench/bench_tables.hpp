#pragma once
// Each benchmark's results as a BenchTable (bench/bench_output.hpp): its table's columns in
// fixed notation with the unit in each heading (times in us, or s for a whole load; rates per
// second; bandwidths in GB/s), and its JSON and CSV values in SI units under stable names.

#include <string>
#include <vector>

#include "bench/bench_output.hpp"
#include "bench/exchange_bench.hpp"
#include "bench/hash_bench.hpp"
#include "bench/load_bench.hpp"
#include "bench/lookup_bench.hpp"
#include "bench/step_bench.hpp"

namespace pleshard {

[[nodiscard]] BenchTable hash_table(const std::vector<HashBenchResult>& results, int ranks);
[[nodiscard]] BenchTable lookup_table(const std::vector<LookupBenchResult>& results, int ranks,
                                      const LookupBenchOptions& options);
[[nodiscard]] BenchTable exchange_table(const std::vector<ExchangeBenchResult>& results);
[[nodiscard]] BenchTable step_table(const std::vector<StepBenchResult>& results);
[[nodiscard]] BenchTable load_table(const std::vector<LoadBenchResult>& results, int ranks,
                                    const LoadBenchOptions& options);

}  // namespace pleshard
