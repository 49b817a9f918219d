#include "bench/lookup_bench.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <random>

#include <unistd.h>

#include "bench/bench_progress.hpp"
#include "bench/gpu_benches.hpp"
#include "bench/timing.hpp"
#include "ckpt/synthetic.hpp"
#include "core/mpi_check.hpp"
#include "core/parallel.hpp"
#include "dist/gpu_binding.hpp"
#include "exec/step_kernels.hpp"
#include "exec/step_space.hpp"
#include "io/file_reads.hpp"
#include "io/pread_file.hpp"
#include "kernels/common/ngram_hash.hpp"
#include "kernels/host/kernel_threads.hpp"
#include "kernels/host/lookup_host.hpp"
#include "kernels/host/row_gather_host.hpp"
#include "kernels/host/row_plan_host.hpp"
#include "store/disk_store.hpp"
#include "store/host_table.hpp"
#include "store/row_store_factory.hpp"
#include "store/tier_memory.hpp"

namespace pleshard {

ModelConfig bench_config(RowFormat format, std::int64_t rows, int head_dim) {
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
  config.quantization = config_quantization(format);
  return config;
}

constexpr std::uint64_t k_bench_seed = 2024;

TableSource bench_table(const ModelConfig& config, RowFormat format, std::int64_t rows) {
  TableSource source = synthetic_tables(config, format, k_bench_seed).front();
  source.info.layout.rows = rows;
  return source;
}

// Rows of `row_bytes` that differ between a tier's output and the host tier's.
std::int64_t count_wrong_rows(const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& expected,
                              std::size_t row_bytes) {
  std::int64_t wrong = 0;
  for (std::size_t at = 0; at + row_bytes <= expected.size(); at += row_bytes)
    wrong += std::memcmp(got.data() + at, expected.data() + at, row_bytes) != 0 ? 1 : 0;
  return wrong;
}

namespace {

// The disk tier: the table written as a safetensors checkpoint, read back row by row.
class DiskBench {
 public:
  DiskBench(const LookupBenchOptions& o, const ModelConfig& config, RowFormat format, int rank)
      : dir_(o.disk_dir / ("pleshard_bench_" + std::to_string(::getpid()) + "_" + std::to_string(rank))) {
    std::filesystem::remove_all(dir_);
    write_checkpoint(dir_, config, {synthetic_tables(config, format, k_bench_seed).front()}, {});
    checkpoint_ = open_ple_checkpoint(dir_, config);
    if (checkpoint_->table(0).layout.rows < o.rows)
      throw SystemError("bench lookup: the disk table has fewer rows than --rows");
    space_ = make_tier_space(StorageTier::disk);
    stores_[0] = std::make_unique<DiskStore>(*checkpoint_, *space_, PageCache::use);
    stores_[1] = std::make_unique<DiskStore>(*checkpoint_, *space_, PageCache::bypass);
  }
  ~DiskBench() {
    for (auto& store : stores_) store.reset();
    checkpoint_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  DiskBench(const DiskBench&) = delete;
  DiskBench& operator=(const DiskBench&) = delete;

  // Beside the tier, in the same run and cold like it: the same distinct rows read one at a
  // time ("disk-one-by-one", what a plain pread loop does), and the disk's own rate of 4 KiB
  // reads at random aligned offsets of the table's file, as many as the distinct rows and all
  // in flight past the page cache ("disk-probe", fio's randread with O_DIRECT; rows/s there is reads/s).
  void run_baselines(const std::vector<std::int64_t>& ids, const LookupBenchOptions& o, RowFormat format,
                     double row_bytes, std::vector<LookupBenchResult>& results) {
    std::vector<std::int64_t> distinct(ids);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    const PleTableInfo& info = checkpoint_->table(0);
    std::vector<std::uint8_t> row(info.layout.row_bytes()), scales(info.layout.scale_bytes());
    LookupBenchResult one{"disk-one-by-one", format, static_cast<std::int64_t>(distinct.size())};
    one.seconds = median_seconds(
        [&] {
          drop_pages();
          return host_seconds([&] {
            for (const std::int64_t id : distinct) checkpoint_->read_row_set(0, {&id, 1}, row, scales);
          });
        },
        o.min_repeats, o.min_seconds);
    one.bytes = static_cast<double>(distinct.size()) * row_bytes;
    results.push_back(one);

    std::filesystem::path largest;
    for (const auto& entry : std::filesystem::directory_iterator(dir_))
      if (largest.empty() || entry.file_size() > std::filesystem::file_size(largest)) largest = entry.path();
    const PreadFile file(largest);
    const std::uint64_t blocks = std::filesystem::file_size(largest) / 4096;
    std::mt19937_64 rng(11);
    std::vector<std::uint8_t> buffer(distinct.size() * 4096);
    std::vector<FileRead> reads;
    for (std::size_t i = 0; i < distinct.size(); ++i)
      reads.push_back({&file, rng() % std::max<std::uint64_t>(1, blocks) * 4096,
                       std::span<std::uint8_t>(buffer).subspan(i * 4096, 4096)});
    LookupBenchResult probe{"disk-probe", format, static_cast<std::int64_t>(reads.size())};
    probe.seconds = median_seconds(
        [&] {
          drop_pages();
          return host_seconds([&] { read_files(reads, ReadPath::automatic, PageCache::bypass); });
        },
        o.min_repeats, o.min_seconds);
    probe.bytes = static_cast<double>(reads.size()) * 4096;
    results.push_back(probe);
  }

  // The tier, cold, through the page cache ("disk") and past it ("disk-direct").
  void run(const std::vector<std::int64_t>& ids, const std::vector<std::uint8_t>& expected, const LookupBenchOptions& o,
           RowFormat format, double row_bytes, double out_row_bytes, std::vector<LookupBenchResult>& results) {
    const auto n = static_cast<std::int64_t>(ids.size());
    SpaceBuffer space_ids(*space_);
    SpaceBuffer space_out(*space_);
    space_ids.assign(std::span<const std::int64_t>(ids));
    space_out.reserve(std::max<std::size_t>(1, expected.size()));
    for (std::size_t k = 0; k < stores_.size(); ++k) {
      DiskStore& store = *stores_[k];
      LookupBenchResult r{k == 0 ? "disk" : "disk-direct", format, n};
      r.seconds = median_seconds(
          [&] {
            drop_pages();
            return host_seconds([&] {
              const RowQuery query{space_ids.as<std::int64_t>(), n};
              store.submit({&query, 1});
              kernels::DecodeTask task = store.wait().front();
              task.out = space_out.data();
              decode_step(*space_, {&task, 1}, o.out_dtype);
              space_->synchronize();
            });
          },
          o.min_repeats, o.min_seconds);
      r.bytes = static_cast<double>(store.rows_read(0)) * row_bytes + static_cast<double>(n) * out_row_bytes;
      r.wrong = count_wrong_rows(space_out.to_host<std::uint8_t>(expected.size()), expected,
                                 static_cast<std::size_t>(out_row_bytes));
      results.push_back(r);
    }
  }

 private:
  void drop_pages() const {
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) drop_cached_pages(entry.path());
  }

  std::filesystem::path dir_;
  std::unique_ptr<PleCheckpoint> checkpoint_;
  std::unique_ptr<StepSpace> space_;
  std::array<std::unique_ptr<DiskStore>, 2> stores_;  // through the page cache, past it
};

}  // namespace

// The output a lookup of `ids` must give: each row made alone by the table's source (a
// synthetic row is a function of its index) and decoded by the shared core. No copy of the
// table: the reference holds at any size.
std::vector<std::uint8_t> expected_output(const TableSource& source, const std::vector<std::int64_t>& ids,
                                          OutDtype dtype) {
  const TableLayout& layout = source.info.layout;
  const std::size_t out_row = static_cast<std::size_t>(layout.head_dim) * kernels::out_bytes(dtype);
  std::vector<std::uint8_t> out(ids.size() * out_row);
  std::vector<std::uint8_t> row(layout.row_bytes());
  std::vector<std::uint8_t> scales(layout.scale_bytes());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    source.rows(ids[i], ids[i] + 1, row, scales);
    const kernels::TableView one{layout.format,
                                 layout.head_dim,
                                 ids[i],
                                 ids[i] + 1,
                                 row.data(),
                                 scales.empty() ? nullptr : scales.data(),
                                 source.info.global_scale};
    kernels::decode_row(one, ids[i], dtype, out.data() + i * out_row, 0);
  }
  return out;
}

namespace {

// Element-by-element check with a plain loop over the decode core.
std::int64_t count_wrong(const kernels::TableView& view, const std::vector<std::int64_t>& ids, OutDtype dtype,
                         const std::vector<std::uint8_t>& out) {
  std::vector<std::uint8_t> row(static_cast<std::size_t>(view.head_dim) * kernels::out_bytes(dtype));
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    kernels::decode_row(view, ids[i], dtype, row.data(), 0);
    wrong += std::memcmp(row.data(), out.data() + i * row.size(), row.size()) != 0 ? 1 : 0;
  }
  return wrong;
}

// The host's share of the pinned tier's host gathers, on the host tier's table: the step's
// row plan, its distinct rows gathered into a packed block on every core, then decoded from
// there as the GPU would (here by the host's decode), checked against the reference.
LookupBenchResult bench_host_gather(const kernels::TableView& table, const std::vector<std::int64_t>& ids,
                                    const std::vector<std::uint8_t>& expected, const LookupBenchOptions& o,
                                    RowFormat format, double row_bytes, double out_row_bytes) {
  const auto n = static_cast<std::int64_t>(ids.size());
  LookupBenchResult r{"host-gather", format, n};
  r.ceiling = "host-memcpy";
  const std::int64_t bounds[2] = {table.row_begin, table.row_end};
  const std::size_t stored = kernels::stored_row_bytes(format, o.head_dim);
  const std::size_t scale_bytes = table.block_scales != nullptr ? kernels::scale_row_bytes(format, o.head_dim) : 0;
  kernels::HostRowPlan plan;
  std::vector<std::uint32_t> offsets;
  std::vector<std::uint8_t> rows(ids.size() * stored);
  std::vector<std::uint8_t> scales(ids.size() * scale_bytes);
  std::vector<std::uint8_t> out(expected.size());
  const auto step = [&] {
    kernels::plan_rows(ids, bounds, plan);
    offsets.resize(plan.distinct.size());
    for (std::size_t i = 0; i < offsets.size(); ++i)
      offsets[i] = static_cast<std::uint32_t>(plan.distinct[i] - table.row_begin);
    kernels::gather_rows_host(table, offsets.data(), plan.count(), rows.data(), scales.data(), host_cores());
    const kernels::TableView packed{format,
                                    o.head_dim,
                                    0,
                                    plan.count(),
                                    rows.data(),
                                    scale_bytes != 0 ? scales.data() : nullptr,
                                    table.global_scale};
    const kernels::DecodeTask task{packed, plan.keys.data(), n, out.data()};
    kernels::decode_step_host({&task, 1}, o.out_dtype);
  };
  r.seconds = median_seconds([&] { return host_seconds(step); }, o.min_repeats, o.min_seconds);
  r.bytes = static_cast<double>(n) * (row_bytes + out_row_bytes);
  r.wrong = count_wrong_rows(out, expected, static_cast<std::size_t>(out_row_bytes));
  return r;
}

// The host tier's ceiling: one memcpy of as many bytes as the ids' stored rows, cut into a
// piece per thread of the host lookup, from and to buffers of their own (cold for a large
// step, as the table's rows are). GB/s counts the bytes read and written, as the lookups' do.
LookupBenchResult bench_host_memcpy(std::int64_t n, const LookupBenchOptions& o, RowFormat format, double row_bytes) {
  const auto bytes = static_cast<std::size_t>(static_cast<double>(n) * row_bytes);
  std::vector<std::uint8_t> from(bytes, 0x5a);
  std::vector<std::uint8_t> to(bytes);
  const std::size_t threads = host_lookup_threads();
  const std::size_t piece = (bytes + threads - 1) / threads;
  LookupBenchResult r{"host-memcpy", format, n};
  r.seconds = median_seconds(
      [&] {
        return host_seconds([&] {
          parallel_for(threads, threads, 1, [&](std::size_t t) {
            const std::size_t first = std::min(bytes, t * piece);
            std::memcpy(to.data() + first, from.data() + first, std::min(bytes, first + piece) - first);
          });
        });
      },
      o.min_repeats, o.min_seconds);
  r.bytes = 2.0 * static_cast<double>(bytes);
  r.wrong = to == from ? 0 : 1;
  return r;
}

}  // namespace

std::size_t host_lookup_threads() {
  return std::max<std::size_t>(static_cast<std::size_t>(Kokkos::DefaultHostExecutionSpace::concurrency()),
                               kernels::own_kernel_threads());
}

std::vector<LookupBenchResult> run_lookup_bench(MPI_Comm comm, const LookupBenchOptions& options) {
  int rank = 0;
  PLESHARD_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  std::vector<LookupBenchResult> results;
  if (std::any_of(options.tiers.begin(), options.tiers.end(), tier_uses_gpu)) (void)bind_local_gpu(comm);
  BenchProgress progress("lookup",
                         static_cast<int>(options.formats.size() * options.ids_per_step.size() * options.tiers.size()),
                         rank == 0);
  for (RowFormat format : options.formats) {
    const ModelConfig config = bench_config(format, options.rows, options.head_dim);
    const TableSource source = bench_table(config, format, options.rows);
    // Every rank holds the whole table in each tier it benchmarks (the pinned tier's case
    // beside the device tier holds both): refused before anything is allocated.
    const TableLayout layout = source.info.layout;
    const RowRange whole{0, options.rows};
    for (const StorageTier tier : options.tiers) {
      require_table_memory(comm, tier, tier_bytes(tier, {&layout, 1}, {&whole, 1}));
      if (tier == StorageTier::pinned) {
        const RowRange beside{0, options.device_rows_beside()};
        require_table_memory(comm, StorageTier::device, tier_bytes(StorageTier::device, {&layout, 1}, {&beside, 1}));
      }
    }
    const bool host_tier =
        std::find(options.tiers.begin(), options.tiers.end(), StorageTier::host) != options.tiers.end();
    // The host tier holds the whole table in host memory: made only when it is benchmarked.
    std::unique_ptr<HostTable> table =
        host_tier ? std::make_unique<HostTable>(source, RowRange{0, options.rows}) : nullptr;
    std::unique_ptr<DiskBench> disk;
    if (std::find(options.tiers.begin(), options.tiers.end(), StorageTier::disk) != options.tiers.end())
      disk = std::make_unique<DiskBench>(options, config, format, rank);
    const double row_bytes = static_cast<double>(source.info.layout.bytes_per_row());
    const double out_row_bytes =
        static_cast<double>(options.head_dim) * static_cast<double>(kernels::out_bytes(options.out_dtype));
    std::mt19937_64 rng(7 + static_cast<std::uint64_t>(rank));
    for (std::int64_t n : options.ids_per_step) {
      std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
      for (auto& id : ids) id = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(options.rows));
      const std::vector<std::uint8_t> expected = expected_output(source, ids, options.out_dtype);
      const std::size_t first = results.size();
      for (const StorageTier tier : options.tiers) {
        progress.next(std::string(to_string(tier)) + ", " + to_string(format) + ", " + std::to_string(n) + " ids");
        PLESHARD_MPI_CHECK(MPI_Barrier(comm));
        if (tier == StorageTier::host) {
          std::vector<std::uint8_t> out(expected.size());
          LookupBenchResult r{"host", format, n};
          r.ceiling = "host-memcpy";
          r.seconds =
              median_seconds([&] { return host_seconds([&] { table->lookup(ids, options.out_dtype, out.data()); }); },
                             options.min_repeats, options.min_seconds);
          r.bytes = static_cast<double>(n) * (row_bytes + out_row_bytes);
          r.wrong = count_wrong(table->view(), ids, options.out_dtype, out) +
                    count_wrong_rows(out, expected, static_cast<std::size_t>(out_row_bytes));
          results.push_back(r);
          results.push_back(bench_host_gather(table->view(), ids, expected, options, format, row_bytes, out_row_bytes));
          results.push_back(bench_host_memcpy(n, options, format, row_bytes));
          continue;
        }
        if (tier == StorageTier::disk) {
          disk->run(ids, expected, options, format, row_bytes, out_row_bytes, results);
          disk->run_baselines(ids, options, format, row_bytes, results);
          continue;
        }
        bench_gpu_tier(tier, source, ids, expected, options, format, row_bytes, out_row_bytes, results);
      }
      for (std::size_t i = first; i < results.size(); ++i) {
        LookupBenchResult& r = results[i];
        PLESHARD_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &r.seconds, 1, MPI_DOUBLE, MPI_MAX, comm));
        PLESHARD_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &r.wrong, 1, MPI_INT64_T, MPI_SUM, comm));
      }
    }
  }
  return results;
}

}  // namespace pleshard
