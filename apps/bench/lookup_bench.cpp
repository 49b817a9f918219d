#include "bench/lookup_bench.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <random>

#include <unistd.h>

#include "bench/bench_progress.hpp"
#include "bench/timing.hpp"
#include "ckpt/synthetic.hpp"
#include "core/mpi_check.hpp"
#include "core/parallel.hpp"
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
#if PLESHARD_HAVE_CUDA
#include "bench/gpu_timing.hpp"
#include "dist/gpu_binding.hpp"
#include "exec/cuda_step_space.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/lookup_cuda.hpp"
#include "store/gpu_store.hpp"
#include "store/gpu_table.hpp"
#endif

namespace pleshard {

namespace {

// A one-table config whose rows are synthetic values of `format`.
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

// Exactly `rows` rows, not the prime the config implies (rows are a function of their index).
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

#if PLESHARD_HAVE_CUDA
// How the pinned tier reads: through UVA, or gathered by the host on every core.
PinnedReads pinned_reads(const LookupBenchOptions& o, HostReads host) {
  PinnedReads reads;
  reads.host = host;
  reads.uva_blocks_per_sm = o.uva_blocks_per_sm >= 0 ? o.uva_blocks_per_sm : kernels::k_uva_gather_blocks_per_sm;
  reads.host_threads = host_cores();
  return reads;
}

// Device-tier lookups of the step's ids run beside the pinned lookup in the overlap case.
constexpr int k_device_lookups_beside = 8;

// The pinned tier's fetch started on its side stream (submit) while the device tier looks
// the step's ids up k_device_lookups_beside times on the space's stream, then joined and
// decoded (wait), as a step overlaps them; each side is also timed alone, which gives the
// share of the device work hidden behind the pinned fetch. The device table has
// o.beside_rows rows (0: as many as the pinned one) and is looked up at the ids modulo
// that, so that a large table beside a small one shows what the two sizes cost together.
// Both outputs are checked.
LookupBenchResult bench_pinned_beside_device(const TableSource& source, const std::vector<std::int64_t>& ids,
                                             const std::vector<std::uint8_t>& expected, const LookupBenchOptions& o,
                                             RowFormat format, double row_bytes, double out_row_bytes) {
  const std::unique_ptr<StepSpace> space = make_cuda_space();
  const RowRange whole{0, o.rows};
  const std::int64_t beside_rows = o.device_rows_beside();
  const TableSource beside_source = bench_table(bench_config(format, beside_rows, o.head_dim), format, beside_rows);
  std::vector<std::int64_t> beside_ids(ids);
  for (auto& id : beside_ids) id %= beside_rows;
  const std::vector<std::uint8_t> beside_expected =
      beside_rows == o.rows ? expected : expected_output(beside_source, beside_ids, o.out_dtype);
  GpuStore pinned({&source, 1}, {&whole, 1}, StorageTier::pinned, *space, MPI_COMM_NULL,
                  pinned_reads(o, HostReads::uva));
  GpuTable device(beside_source, {0, beside_rows}, StorageTier::device);
  const auto n = static_cast<std::int64_t>(ids.size());
  SpaceBuffer d_ids(*space);
  SpaceBuffer d_beside_ids(*space);
  SpaceBuffer pinned_out(*space);
  SpaceBuffer device_out(*space);
  d_ids.assign(std::span<const std::int64_t>(ids));
  d_beside_ids.assign(std::span<const std::int64_t>(beside_ids));
  pinned_out.reserve(std::max<std::size_t>(1, expected.size()));
  device_out.reserve(std::max<std::size_t>(1, expected.size()));
  pinned.reserve(n);
  const auto* d = d_ids.as<std::int64_t>();
  const auto* d_beside = d_beside_ids.as<std::int64_t>();
  const cudaStream_t stream = stream_of(*space);
  const auto device_work = [&] {
    for (int i = 0; i < k_device_lookups_beside; ++i)
      device.lookup(d_beside, n, o.out_dtype, device_out.data(), stream);
  };
  const RowQuery query{d, n};
  const auto pinned_finish = [&] {
    kernels::DecodeTask task = pinned.wait().front();
    task.out = pinned_out.data();
    decode_step(*space, {&task, 1}, o.out_dtype);
  };
  const double pinned_alone = gpu_median_seconds(
      [&] {
        pinned.submit({&query, 1});
        pinned_finish();
      },
      o.min_repeats, o.min_seconds, nullptr, stream);
  const double device_alone = gpu_median_seconds(device_work, o.min_repeats, o.min_seconds, nullptr, stream);
  LookupBenchResult r{"pinned|device", format, (1 + k_device_lookups_beside) * n};
  r.seconds = gpu_median_seconds(
      [&] {
        pinned.submit({&query, 1});
        device_work();
        pinned_finish();
      },
      o.min_repeats, o.min_seconds, nullptr, stream);
  r.hidden = device_alone > 0 ? (pinned_alone + device_alone - r.seconds) / device_alone : 0;
  r.bytes = static_cast<double>(r.ids) * (row_bytes + out_row_bytes);
  r.wrong = count_wrong_rows(pinned_out.to_host<std::uint8_t>(expected.size()), expected,
                             static_cast<std::size_t>(out_row_bytes)) +
            count_wrong_rows(device_out.to_host<std::uint8_t>(beside_expected.size()), beside_expected,
                             static_cast<std::size_t>(out_row_bytes));
  return r;
}

// The GPU tier's lookup and a plain byte gather of the same rows, checked against the
// reference row by row.
void bench_gpu_table(StorageTier tier, const TableSource& source, const std::vector<std::int64_t>& ids,
                     const std::vector<std::uint8_t>& expected, const LookupBenchOptions& o, RowFormat format,
                     double row_bytes, double out_row_bytes, std::vector<LookupBenchResult>& results,
                     HostReads host = HostReads::uva) {
  const GpuTable table(source, {0, o.rows}, tier, pinned_reads(o, host));
  kernels::DeviceBuffer<std::int64_t> d_ids(ids.size());
  kernels::DeviceBuffer<std::uint8_t> d_out(expected.size());
  d_ids.copy_from_host(std::span<const std::int64_t>(ids));
  PLESHARD_CUDA_CHECK(cudaMemset(d_out.data(), 0xCD, d_out.bytes()));
  const auto n = static_cast<std::int64_t>(ids.size());
  const bool gathered = host == HostReads::gather;
  LookupBenchResult r{std::string(to_string(tier)) + (gathered ? "-gather" : ""), format, n};
  r.ceiling = std::string(to_string(tier)) + "-plain";
  r.seconds = gpu_median_seconds([&] { table.lookup(d_ids.data(), n, o.out_dtype, d_out.data(), nullptr); },
                                 o.min_repeats, o.min_seconds);
  r.bytes = static_cast<double>(n) * (row_bytes + out_row_bytes);
  std::vector<std::uint8_t> got(expected.size());
  d_out.copy_to_host(std::span<std::uint8_t>(got));
  PLESHARD_CUDA_CHECK(cudaDeviceSynchronize());
  r.wrong = count_wrong_rows(got, expected, static_cast<std::size_t>(out_row_bytes));
  results.push_back(r);
  if (gathered) return;

  // Baseline: the stored row bytes, gathered one warp per row without decoding.
  const kernels::TableView view = table.view();
  const std::size_t stored = view.row_stride();  // codes and, interleaved, NVFP4 block scales
  kernels::DeviceBuffer<std::uint8_t> d_raw(ids.size() * stored);
  LookupBenchResult plain{std::string(to_string(tier)) + "-plain", format, n};
  plain.seconds = gpu_median_seconds(
      [&] { kernels::gather_rows_plain_cuda(view.rows, stored, d_ids.data(), n, d_raw.data(), nullptr); },
      o.min_repeats, o.min_seconds);
  plain.bytes = 2.0 * static_cast<double>(n) * static_cast<double>(stored);
  results.push_back(plain);
}

void bench_gpu_tier(StorageTier tier, const TableSource& source, const std::vector<std::int64_t>& ids,
                    const std::vector<std::uint8_t>& expected, const LookupBenchOptions& o, RowFormat format,
                    double row_bytes, double out_row_bytes, std::vector<LookupBenchResult>& results) {
  bench_gpu_table(tier, source, ids, expected, o, format, row_bytes, out_row_bytes, results);
  if (tier != StorageTier::pinned) return;
  // The same lookups with the rows gathered by the host and copied up at once.
  bench_gpu_table(tier, source, ids, expected, o, format, row_bytes, out_row_bytes, results, HostReads::gather);
  // After the tables above are freed: the case holds a pinned and a device copy of its own.
  results.push_back(bench_pinned_beside_device(source, ids, expected, o, format, row_bytes, out_row_bytes));
}
#endif

}  // namespace

std::size_t host_lookup_threads() {
  return std::max<std::size_t>(static_cast<std::size_t>(Kokkos::DefaultHostExecutionSpace::concurrency()),
                               kernels::own_kernel_threads());
}

std::vector<LookupBenchResult> run_lookup_bench(MPI_Comm comm, const LookupBenchOptions& options) {
  int rank = 0;
  PLESHARD_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  std::vector<LookupBenchResult> results;
#if PLESHARD_HAVE_CUDA
  if (std::any_of(options.tiers.begin(), options.tiers.end(), tier_uses_gpu)) (void)bind_local_gpu(comm);
#endif
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
#if PLESHARD_HAVE_CUDA
        bench_gpu_tier(tier, source, ids, expected, options, format, row_bytes, out_row_bytes, results);
#endif
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
