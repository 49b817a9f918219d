// The disk tier against the host tier, bit for bit: every row format, safetensors in one
// and several files and HDF5, ids repeated, outside the table and crossing shard
// boundaries, empty lookups, reads through the page cache and past it; in the host space,
// and in the CUDA space where a GPU is present (the rows planned there, or on the host). A
// checkpoint file changed under a running store gives an error naming it.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <random>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/synthetic.hpp"
#include "core/error.hpp"
#include "exec/step_kernels.hpp"
#include "store/disk_store.hpp"
#include "store/host_table.hpp"
#include "store/row_store_factory.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;
namespace fs = std::filesystem;

// The host space, and a GPU's where there is one.
std::vector<std::unique_ptr<StepSpace>> spaces() {
  std::vector<std::unique_ptr<StepSpace>> out;
  out.push_back(make_host_space());
  if (gpu_available()) out.push_back(make_tier_space(StorageTier::device));
  return out;
}

// A small model's NVFP4 tables in two safetensors files.
struct Nvfp4OnDisk {
  Nvfp4OnDisk() {
    write_checkpoint(dir / "nvfp4", config, synthetic_tables(config, RowFormat::nvfp4, 9),
                     {CheckpointKind::safetensors, 2});
    checkpoint = open_ple_checkpoint(dir / "nvfp4", config);
  }
  // Whether the tasks a wait() handed out (in the host space) decode `ids` of every layer as
  // the host tier looks them up.
  [[nodiscard]] testing::AssertionResult decode_as_the_host_tier(StepSpace& space,
                                                                 std::span<const kernels::DecodeTask> fetched,
                                                                 const std::vector<std::int64_t>& ids) const {
    if (fetched.size() != static_cast<std::size_t>(config.num_ple_layers()))
      return testing::AssertionFailure() << fetched.size() << " tasks for " << config.num_ple_layers() << " layers";
    const std::size_t out_bytes = ids.size() * static_cast<std::size_t>(config.head_dim()) * sizeof(float);
    for (int d = 0; d < config.num_ple_layers(); ++d) {
      std::vector<std::uint8_t> expected(out_bytes);
      HostTable(*checkpoint, d, {0, checkpoint->table(d).layout.rows}).lookup(ids, OutDtype::f32, expected.data());
      std::vector<std::uint8_t> got(out_bytes);
      kernels::DecodeTask task = fetched[static_cast<std::size_t>(d)];
      task.out = got.data();  // the host space decodes into host memory
      decode_step(space, {&task, 1}, OutDtype::f32);
      if (got != expected) return testing::AssertionFailure() << "layer " << d << " differs";
    }
    return testing::AssertionSuccess();
  }

  ScratchDir dir;
  ModelConfig config = small_config("nvfp4", 7);
  std::unique_ptr<PleCheckpoint> checkpoint;
};

TEST(DiskTable, EqualsTheHostTierBitForBit) {
  const ScratchDir dir;
  std::mt19937_64 rng(5);
  struct Case {
    const char* dtype;
    RowFormat format;
    CheckpointKind kind;
    int files;
  };
  const Case cases[] = {{nullptr, RowFormat::bf16, CheckpointKind::safetensors, 1},
                        {nullptr, RowFormat::f32, CheckpointKind::safetensors, 3},
                        {nullptr, RowFormat::f16, CheckpointKind::hdf5, 1},
                        {"float8_e4m3fn", RowFormat::fp8, CheckpointKind::safetensors, 2},
                        {"nvfp4", RowFormat::nvfp4, CheckpointKind::safetensors, 2},
                        {"nvfp4", RowFormat::nvfp4, CheckpointKind::hdf5, 1},
                        {"float8_e4m3fn", RowFormat::fp8_e8m0, CheckpointKind::safetensors, 3},
                        {"float8_e4m3fn", RowFormat::fp8_e8m0, CheckpointKind::hdf5, 1}};
  for (const auto& c : cases) {
    const auto case_index = static_cast<int>(&c - cases);
    const ModelConfig config = small_config(c.dtype, 7);
    const fs::path path = dir / (std::string(to_string(c.format)) + "_" + to_string(c.kind) +
                                 (c.kind == CheckpointKind::hdf5 ? ".h5" : ""));
    write_checkpoint(path, config, synthetic_tables(config, c.format, 9), {c.kind, c.files});
    const auto checkpoint = open_ple_checkpoint(path, config);
    for (const auto& space : spaces())
      for (const PageCache reads : {PageCache::use, PageCache::bypass}) {
        DiskStore disk(*checkpoint, *space, reads);
        // Reserved for the steps below but the largest, a GPU's store plans their rows on the
        // GPU and the largest on the host; a store not reserved plans every step on the host.
        // Every case in turn, so that both kinds read through the page cache and past it.
        const bool reserved = (case_index + (reads == PageCache::use ? 0 : 1)) % 2 == 0;
        const std::int64_t reserved_ids = 2000;
        if (reserved) disk.reserve(reserved_ids);
        for (int d = 0; d < config.num_ple_layers(); ++d) {
          const std::int64_t rows = checkpoint->table(d).layout.rows;
          const HostTable host(*checkpoint, d, {0, rows});
          SCOPED_TRACE(path.filename().string() + " layer " + std::to_string(d) +
                       (space->on_device() ? " gpu" : " host") + (reads == PageCache::use ? " cached" : " direct"));
          for (std::int64_t n : {0, 1, 64, 3000}) {
            std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
            // Half from a narrow window (repeats and runs of neighbours), half anywhere.
            for (std::size_t i = 0; i < ids.size(); ++i)
              ids[i] = i % 2 == 0 ? static_cast<std::int64_t>(rng() % 40) + rows / 3
                                  : static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows));
            if (n >= 64) {
              ids[3] = -1;    // outside the table: zeros
              ids[5] = rows;  // just past the end
              ids[7] = rows - 1;
              ids[9] = 0;
            }
            std::vector<std::int64_t> distinct;
            for (const auto id : ids)
              if (id >= 0 && id < rows) distinct.push_back(id);
            std::sort(distinct.begin(), distinct.end());
            distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
            for (OutDtype dtype : {OutDtype::f32, OutDtype::bf16}) {
              std::vector<std::uint8_t> expected(ids.size() * static_cast<std::size_t>(config.head_dim()) *
                                                 kernels::out_bytes(dtype));
              host.lookup(ids, dtype, expected.data());
              ASSERT_EQ(lookup_from_host(disk, *space, d, ids, dtype), expected) << n << " ids";
              EXPECT_EQ(disk.rows_read(d), static_cast<std::int64_t>(distinct.size()));
              EXPECT_EQ(disk.planned_on_gpu(), reserved && space->on_device() && n <= reserved_ids);
            }
          }
        }
      }
  }
}

// submit() returns with the reads in flight and wait() hands out the rows: a submit that was
// never waited for gives way to the next, whose rows are the ones handed out.
TEST(DiskTable, ASubmitNotWaitedForGivesWayToTheNext) {
  const Nvfp4OnDisk files;
  const ModelConfig& config = files.config;
  const auto& checkpoint = files.checkpoint;
  const auto space = make_host_space();
  DiskStore disk(*checkpoint, *space);
  const int layers = config.num_ple_layers();
  const std::int64_t rows = checkpoint->table(0).layout.rows;
  std::mt19937_64 rng(11);
  const auto some_ids = [&] {
    std::vector<std::int64_t> ids(500);
    for (auto& id : ids) id = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows));
    return ids;
  };
  const std::vector<std::int64_t> first = some_ids();
  const std::vector<std::int64_t> second = some_ids();
  SpaceBuffer first_ids(*space);
  SpaceBuffer second_ids(*space);
  first_ids.assign(std::span<const std::int64_t>(first));
  second_ids.assign(std::span<const std::int64_t>(second));
  const auto queries = [&](const SpaceBuffer& ids, std::int64_t count) {
    return std::vector<RowQuery>(static_cast<std::size_t>(layers), RowQuery{ids.as<std::int64_t>(), count});
  };
  disk.submit(queries(first_ids, static_cast<std::int64_t>(first.size())));
  disk.submit(queries(second_ids, static_cast<std::int64_t>(second.size())));
  EXPECT_TRUE(files.decode_as_the_host_tier(*space, disk.wait(), second));
}

// The rows a wait() hands out stay valid until the submit after next (the fetch ahead's
// order: submit, wait, the next submit, then the decode), and a reserve() for no more ids
// than before changes nothing under them.
TEST(DiskTable, RowsHandedOutOutliveTheNextSubmitAndAReserveAgain) {
  const Nvfp4OnDisk files;
  const ModelConfig& config = files.config;
  const auto& checkpoint = files.checkpoint;
  const auto space = make_host_space();
  DiskStore disk(*checkpoint, *space);
  disk.reserve(4000);
  const int layers = config.num_ple_layers();
  const std::int64_t rows = checkpoint->table(0).layout.rows;
  std::mt19937_64 rng(12);
  std::vector<std::vector<std::int64_t>> steps(3, std::vector<std::int64_t>(4000));
  for (auto& step : steps)
    for (auto& id : step) id = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows));
  std::vector<SpaceBuffer> ids;
  for (const auto& step : steps) {
    ids.emplace_back(*space);
    ids.back().assign(std::span<const std::int64_t>(step));
  }
  const auto submit = [&](std::size_t s) {
    disk.submit(std::vector<RowQuery>(static_cast<std::size_t>(layers),
                                      RowQuery{ids[s].as<std::int64_t>(), static_cast<std::int64_t>(steps[s].size())}));
  };
  const auto handed_out = [&] {
    const std::span<const kernels::DecodeTask> fetched = disk.wait();
    return std::vector<kernels::DecodeTask>(fetched.begin(), fetched.end());
  };
  submit(0);
  const std::vector<kernels::DecodeTask> first = handed_out();
  submit(1);  // begun ahead, before the first step's decode
  disk.reserve(4000);
  disk.reserve(100);
  EXPECT_TRUE(files.decode_as_the_host_tier(*space, first, steps[0]));
  const std::vector<kernels::DecodeTask> second = handed_out();
  submit(2);
  EXPECT_TRUE(files.decode_as_the_host_tier(*space, second, steps[1]));
  EXPECT_TRUE(files.decode_as_the_host_tier(*space, disk.wait(), steps[2]));
}

// reserve() allocates what step_buffer_bytes() said it would (what the engine checks against
// the space's memory), and no step of up to the ids reserved allocates more: a store of
// whole tables and one holding rows of some layers only, in every space.
TEST(DiskTable, ReserveTakesWhatItSaidAndStepsTakeNoMore) {
  const Nvfp4OnDisk files;
  const auto& checkpoint = files.checkpoint;
  const int layers = files.config.num_ple_layers();
  const std::int64_t rows = checkpoint->table(0).layout.rows;
  std::vector<RowRange> some = DiskStore::whole_tables(*checkpoint);
  some[0] = {0, 0};                    // a layer another tier holds
  some[1] = {rows / 3, rows / 3 + 5};  // a range narrower than a step's ids
  for (const auto& space : spaces()) {
    for (const std::vector<RowRange>& ranges : {DiskStore::whole_tables(*checkpoint), some}) {
      SCOPED_TRACE(std::string(space->on_device() ? "gpu" : "host") + (ranges[0].size() == 0 ? ", ranged" : ""));
      DiskStore disk(*checkpoint, ranges, *space);
      const std::int64_t reserved = 3000;
      const std::uint64_t said = disk.step_buffer_bytes(reserved);
      // Each layer's distinct rows of both turns at least, 3 bytes a row of NVFP4 codes or more.
      std::uint64_t least = 0;
      for (const RowRange& range : ranges)
        least += 2 * 3 * static_cast<std::uint64_t>(std::min(reserved, range.size()));
      EXPECT_GE(said, least);
      disk.reserve(reserved);
      EXPECT_EQ(disk.step_bytes_held(), said);
      std::mt19937_64 rng(31);
      for (int step = 0; step < 4; ++step) {
        // Every id distinct where the table has the rows: the largest staging a step can need.
        std::vector<std::int64_t> ids(static_cast<std::size_t>(step == 0 ? reserved : 1 + rng() % reserved));
        for (std::size_t i = 0; i < ids.size(); ++i)
          ids[i] = step == 0 ? static_cast<std::int64_t>(i) % rows : static_cast<std::int64_t>(rng() % rows);
        SpaceBuffer in_space(*space);
        in_space.assign(std::span<const std::int64_t>(ids));
        std::vector<RowQuery> queries(static_cast<std::size_t>(layers));
        for (int d = 0; d < layers; ++d)
          queries[static_cast<std::size_t>(d)] = {
              in_space.as<std::int64_t>(),
              ranges[static_cast<std::size_t>(d)].size() == 0 ? 0 : static_cast<std::int64_t>(ids.size())};
        disk.submit(queries);
        (void)disk.wait();
        space->synchronize();
        EXPECT_EQ(disk.step_bytes_held(), said) << "step " << step;
      }
    }
  }
}

// A file changed under a running store — truncated, rewritten in place, replaced by
// another — is an error naming it at the next step, even where the rows asked for are cached.
TEST(DiskTable, FileChangedUnderTheStoreIsAnErrorNamingIt) {
  const ScratchDir dir;
  const ModelConfig config = small_config(nullptr, 1);
  enum class Change { truncate, rewrite, replace };
  for (const CheckpointKind kind : {CheckpointKind::safetensors, CheckpointKind::hdf5}) {
    for (const Change change : {Change::truncate, Change::rewrite, Change::replace}) {
      const fs::path path = dir / (kind == CheckpointKind::hdf5 ? "t.h5" : "t");
      fs::remove_all(path);
      write_checkpoint(path, config, synthetic_tables(config, RowFormat::bf16, 3), {kind});
      const auto checkpoint = open_ple_checkpoint(path, config);
      const auto space = make_host_space();
      DiskStore disk(*checkpoint, *space);  // layer 1, the last table: its rows end the file
      const std::int64_t rows = checkpoint->table(1).layout.rows;
      const std::vector<std::int64_t> last{rows - 1};
      EXPECT_NO_THROW((void)lookup_from_host(disk, *space, 1, last, OutDtype::f32));
      const fs::path file = kind == CheckpointKind::hdf5 ? path : *fs::directory_iterator(path);
      const auto size = fs::file_size(file);
      if (change == Change::truncate) {
        fs::resize_file(file, size / 2);
      } else if (change == Change::rewrite) {
        // The same size, written again a moment later.
        const auto when = fs::last_write_time(file);
        fs::last_write_time(file, when + std::chrono::seconds(1));
      } else {
        fs::copy_file(file, file.string() + ".copy");
        fs::rename(file.string() + ".copy", file);
      }
      try {
        (void)lookup_from_host(disk, *space, 1, last, OutDtype::f32);
        ADD_FAILURE() << to_string(kind) << ": a lookup after the file changed succeeded";
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(file.filename().string()), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("under the running job"), std::string::npos) << e.what();
      }
    }
  }
}

}  // namespace
