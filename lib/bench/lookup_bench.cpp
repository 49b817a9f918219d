#include "bench/lookup_bench.hpp"

#include <cstring>
#include <random>

#include "bench/timing.hpp"
#include "ckpt/synthetic.hpp"
#include "core/mpi_check.hpp"
#include "kernels/common/ngram_hash.hpp"
#include "store/host_table.hpp"

namespace pleshard {

namespace {

// A one-table config whose rows are synthetic values of `format`.
TableSource bench_table(RowFormat format, std::int64_t rows, int head_dim) {
  ModelConfig config;
  config.source = "bench";
  config.vocab_size = 1000;
  config.num_hidden_layers = 1;
  config.ngram_size = 2;
  config.heads_per_ngram = 1;
  config.ple_embed_dim = head_dim;
  config.ngram_vocab_size_base = rows;
  config.vocab_size_divisor = 1;
  config.split_ngram_parts = 1;
  config.ple_layer_ids = {1};
  config.quantization = format == RowFormat::fp8     ? TableQuantization::fp8
                        : format == RowFormat::nvfp4 ? TableQuantization::nvfp4
                                                     : TableQuantization::none;
  TableSource source = synthetic_tables(config, format, 2024).front();
  source.info.layout.rows = rows;  // exactly `rows`, not the prime the config implies
  return source;
}

// Element-by-element check with a plain loop over the decode core.
std::int64_t count_wrong(const kernels::TableView& view, const std::vector<std::int64_t>& ids,
                         OutDtype dtype, const std::vector<std::uint8_t>& out) {
  std::vector<std::uint8_t> row(static_cast<std::size_t>(view.head_dim) * kernels::out_bytes(dtype));
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    kernels::decode_row(view, ids[i], dtype, row.data(), 0);
    wrong += std::memcmp(row.data(), out.data() + i * row.size(), row.size()) != 0 ? 1 : 0;
  }
  return wrong;
}

}  // namespace

std::vector<LookupBenchResult> run_lookup_bench(MPI_Comm comm, const LookupBenchOptions& options) {
  int rank = 0;
  PLESHARD_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  std::vector<LookupBenchResult> results;
  for (RowFormat format : options.formats) {
    const TableSource source = bench_table(format, options.rows, options.head_dim);
    const HostTable table(source, {0, options.rows});
    const double row_bytes = static_cast<double>(table.layout().bytes_per_row());
    const double out_row_bytes =
        static_cast<double>(options.head_dim) * static_cast<double>(kernels::out_bytes(options.out_dtype));
    std::mt19937_64 rng(7 + static_cast<std::uint64_t>(rank));
    for (std::int64_t n : options.ids_per_step) {
      std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
      for (auto& id : ids) id = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(options.rows));
      std::vector<std::uint8_t> out(static_cast<std::size_t>(out_row_bytes) * ids.size());
      LookupBenchResult r{"host", format, n};
      PLESHARD_MPI_CHECK(MPI_Barrier(comm));
      r.seconds = median_seconds(
          [&] { return host_seconds([&] { table.lookup(ids, options.out_dtype, out.data()); }); },
          options.min_repeats, options.min_seconds);
      r.bytes = static_cast<double>(n) * (row_bytes + out_row_bytes);
      r.wrong = count_wrong(table.view(), ids, options.out_dtype, out);
      double seconds = r.seconds;
      PLESHARD_MPI_CHECK(MPI_Allreduce(&seconds, &r.seconds, 1, MPI_DOUBLE, MPI_MAX, comm));
      std::int64_t wrong = r.wrong;
      PLESHARD_MPI_CHECK(MPI_Allreduce(&wrong, &r.wrong, 1, MPI_INT64_T, MPI_SUM, comm));
      results.push_back(r);
    }
  }
  return results;
}

}  // namespace pleshard
