#include "bench/load_bench.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <random>

#include "bench/bench_progress.hpp"
#include "bench/timing.hpp"
#include "ckpt/ple_checkpoint.hpp"
#include "core/collective.hpp"
#include "core/host_memory.hpp"
#include "core/mpi_check.hpp"
#include "core/parallel.hpp"
#include "dist/gpu_binding.hpp"
#include "exec/step_space.hpp"
#include "io/pread_file.hpp"
#include "kernels/common/row_decode.hpp"
#include "store/row_range.hpp"
#include "store/row_store_factory.hpp"
#include "store/table_pages.hpp"
#include "store/tier_memory.hpp"

namespace pleshard {

namespace {

std::uint64_t file_size(const std::string& path) {
  struct stat s {};
  if (::stat(path.c_str(), &s) != 0) throw InputError(path + ": cannot stat");
  return static_cast<std::uint64_t>(s.st_size);
}

// The rank's share of every file read into a reused buffer by reads of 4 MiB from 16
// threads: what the disk (or the page cache) gives, with no copy beyond the read.
double read_files(const std::vector<std::string>& files, int ranks, int rank, double& bytes) {
  constexpr std::size_t k_read = 4u << 20;
  constexpr std::size_t k_threads = 16;
  std::vector<std::vector<std::uint8_t>> buffers(k_threads, std::vector<std::uint8_t>(k_read));
  struct Read {
    const PreadFile* file;
    std::uint64_t offset;
    std::size_t bytes;
  };
  std::vector<std::unique_ptr<PreadFile>> opened;
  std::vector<Read> reads;
  bytes = 0;
  for (const auto& path : files) {
    opened.push_back(std::make_unique<PreadFile>(path));
    const std::uint64_t size = file_size(path);
    const RowRange share = balanced_range(static_cast<std::int64_t>(size), ranks, rank);
    for (auto at = static_cast<std::uint64_t>(share.begin); at < static_cast<std::uint64_t>(share.end); at += k_read)
      reads.push_back(
          {opened.back().get(), at, static_cast<std::size_t>(std::min<std::uint64_t>(k_read, share.end - at))});
    bytes += static_cast<double>(share.size());
  }
  return host_seconds([&] {
    parallel_for(k_threads, k_threads, 1, [&](std::size_t t) {
      for (std::size_t i = t; i < reads.size(); i += k_threads)
        reads[i].file->read_exact(reads[i].offset, {buffers[t].data(), reads[i].bytes});
    });
  });
}

// Ids of each table's range, looked up in the tier and compared with rows read from the
// checkpoint and decoded by the shared core.
std::int64_t count_wrong(RowStore& store, StepSpace& space, const PleCheckpoint& checkpoint,
                         std::span<const RowRange> ranges, int check_ids) {
  std::int64_t wrong = 0;
  std::mt19937_64 rng(5);
  for (int d = 0; d < store.layers(); ++d) {
    const RowRange range = ranges[static_cast<std::size_t>(d)];
    if (range.size() == 0) continue;
    std::vector<std::int64_t> ids(static_cast<std::size_t>(check_ids));
    for (auto& id : ids) id = range.begin + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(range.size()));
    ids.front() = range.begin;
    ids.back() = range.end - 1;
    const auto got = lookup_from_host(store, space, d, ids, OutDtype::f32);
    const PleTableInfo& info = checkpoint.table(d);
    const std::size_t out_row = static_cast<std::size_t>(info.layout.head_dim) * sizeof(float);
    std::vector<std::uint8_t> row(info.layout.row_bytes());
    std::vector<std::uint8_t> scales(info.layout.scale_bytes());
    std::vector<float> expected(static_cast<std::size_t>(info.layout.head_dim));
    for (std::size_t i = 0; i < ids.size(); ++i) {
      checkpoint.read_rows(d, ids[i], ids[i] + 1, row, scales);
      const kernels::TableView one{info.layout.format, info.layout.head_dim, ids[i],
                                   ids[i] + 1,         row.data(),           scales.empty() ? nullptr : scales.data(),
                                   info.global_scale};
      kernels::decode_row(one, ids[i], OutDtype::f32, expected.data(), 0);
      wrong += std::memcmp(expected.data(), got.data() + i * out_row, out_row) != 0 ? 1 : 0;
    }
  }
  return wrong;
}

void set_huge_shares(LoadBenchResult& r, const std::vector<HostTablePages>& tables) {
  double bytes = 0;
  double huge = 0;
  for (const HostTablePages& t : tables) {
    if (t.ranks == 0) continue;
    bytes += static_cast<double>(t.bytes);
    huge += static_cast<double>(t.huge_bytes);
    r.huge_share_min = r.huge_share_min < 0 ? t.huge_share_min : std::min(r.huge_share_min, t.huge_share_min);
  }
  if (bytes > 0) r.huge_share = huge / bytes;
}

void drop_pages(const std::vector<std::string>& files) {
  for (const auto& f : files) drop_cached_pages(f);
}

}  // namespace

std::vector<LoadBenchResult> run_load_bench(MPI_Comm comm, const LoadBenchOptions& o) {
  int rank = 0;
  int ranks = 1;
  PLESHARD_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  PLESHARD_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  const auto checkpoint = collective_try(comm, [&] {
    return std::shared_ptr<PleCheckpoint>(
        open_ple_checkpoint(o.checkpoint, load_checkpoint_config(o.checkpoint, o.config)));  // independent reads
  });
  if (std::any_of(o.tiers.begin(), o.tiers.end(), tier_uses_gpu)) (void)bind_local_gpu(comm);
  const std::vector<std::string> files = checkpoint->files();
  std::vector<RowRange> ranges;
  std::vector<TableLayout> layouts;
  for (const auto& info : checkpoint->tables()) {
    ranges.push_back(balanced_range(info.layout.rows, ranks, rank));
    layouts.push_back(info.layout);
  }
  std::vector<LoadBenchResult> results;
  const auto finish = [&](LoadBenchResult r) {
    r.peak_resident = static_cast<double>(peak_resident_bytes());
    double maxima[2] = {r.seconds, r.peak_resident};
    PLESHARD_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, maxima, 2, MPI_DOUBLE, MPI_MAX, comm));
    double sums[2] = {r.bytes, static_cast<double>(r.wrong)};
    PLESHARD_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, comm));
    r.seconds = maxima[0];
    r.peak_resident = maxima[1];
    r.bytes = sums[0];
    r.wrong = static_cast<std::int64_t>(sums[1]);
    results.push_back(r);
  };

  BenchProgress progress("load", 1 + static_cast<int>(o.tiers.size()), rank == 0);
  progress.next("the files' read rate");
  LoadBenchResult read{"files"};
  if (o.cold) drop_pages(files);
  PLESHARD_MPI_CHECK(MPI_Barrier(comm));
  read.seconds = read_files(files, ranks, rank, read.bytes);
  finish(read);

  for (const StorageTier tier : o.tiers) {
    progress.next(std::string("the ") + to_string(tier) + " tier");
    LoadBenchResult r{to_string(tier)};
    r.bytes = static_cast<double>(load_bytes(tier, layouts, ranges));
    require_table_memory(comm, tier, tier_bytes(tier, layouts, ranges));
    const std::unique_ptr<StepSpace> space = make_tier_space(tier);
    if (o.cold) drop_pages(files);
    PLESHARD_MPI_CHECK(MPI_Barrier(comm));
    std::unique_ptr<RowStore> store;
    r.seconds = host_seconds([&] { store = make_row_store(tier, *checkpoint, ranges, *space); });
    r.wrong = count_wrong(*store, *space, *checkpoint, ranges, o.check_ids);
    set_huge_shares(r, measure_host_tables(comm, *store, std::vector<StorageTier>(layouts.size(), tier)));
    finish(r);
  }
  return results;
}

}  // namespace pleshard
