// The row cache in front of the disk tier (and, where a GPU is present, the pinned tier)
// against the host tier, bit for bit, step after step: every row format, caches of zero
// rows, of a few rows (evictions in every step), larger than the table, with and without a
// static part; ids repeated within a step and across steps, and outside the rows. On the
// host its hits and repeats are those of a plain reference of the policy (least recently
// used within sets of eight, a step's distinct misses admitted in the order first seen into
// ways no lookup of the step uses).

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/synthetic.hpp"
#include "core/error.hpp"
#include "store/cached_store.hpp"
#include "store/disk_store.hpp"
#include "store/host_table.hpp"
#include "store/row_store_factory.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;
namespace fs = std::filesystem;

// The policy, written plainly: per set, up to eight (id, last step) entries.
class ReferenceCache {
 public:
  ReferenceCache(std::vector<std::int64_t> hot, std::int64_t dynamic_rows)
      : hot_(hot.begin(), hot.end()), sets_(dynamic_rows / kernels::k_cache_ways) {
    ways_.resize(static_cast<std::size_t>(sets_));
  }

  // One step's lookups inside the cache's rows: the hits; `repeats` counts those repeating a
  // miss of the step.
  std::int64_t step(const std::vector<std::int64_t>& ids, std::int64_t& repeats) {
    ++step_;
    std::int64_t hits = 0;
    std::vector<std::int64_t> missed;  // the step's distinct misses, first seen first
    std::set<std::int64_t> missed_set;
    for (const std::int64_t id : ids) {
      if (hot_.count(id) != 0) {
        ++hits;
        continue;
      }
      if (sets_ > 0) {
        auto& set = ways_[static_cast<std::size_t>(kernels::cache_set(id, sets_))];
        const auto it = std::find_if(set.begin(), set.end(), [&](const Way& w) { return w.id == id; });
        if (it != set.end()) {
          it->last = step_;
          ++hits;
          continue;
        }
      }
      if (missed_set.insert(id).second) {
        missed.push_back(id);
      } else {
        ++repeats;
      }
    }
    for (const std::int64_t id : missed) {
      if (sets_ == 0) break;
      auto& set = ways_[static_cast<std::size_t>(kernels::cache_set(id, sets_))];
      if (set.size() < kernels::k_cache_ways) {
        set.push_back({id, step_});
        continue;
      }
      // The least recently used way not used this step (the first of equals, as ways fill in order).
      Way* victim = nullptr;
      for (Way& w : set)
        if (w.last < step_ && (victim == nullptr || w.last < victim->last)) victim = &w;
      if (victim != nullptr) *victim = {id, step_};
    }
    return hits;
  }

 private:
  struct Way {
    std::int64_t id;
    std::uint64_t last;
  };
  std::set<std::int64_t> hot_;
  std::int64_t sets_;
  std::vector<std::vector<Way>> ways_;
  std::uint64_t step_ = 0;
};

std::vector<std::unique_ptr<StepSpace>> spaces() {
  std::vector<std::unique_ptr<StepSpace>> out;
  out.push_back(make_host_space());
  if (gpu_available()) out.push_back(make_tier_space(StorageTier::device));
  return out;
}

// Steps of `n` ids: a hot window that recurs from step to step, a drifting window, ids
// anywhere, and a few outside the table.
std::vector<std::vector<std::int64_t>> make_steps(std::int64_t rows, std::int64_t n, int steps, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<std::int64_t>> out;
  for (int s = 0; s < steps; ++s) {
    std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const auto r = rng();
      ids[i] = i % 3 == 0   ? static_cast<std::int64_t>(r % 24)
               : i % 3 == 1 ? (static_cast<std::int64_t>(r % 64) + 37 * s) % rows
                            : static_cast<std::int64_t>(r % static_cast<std::uint64_t>(rows));
    }
    if (n > 8) {
      ids[1] = -1;
      ids[4] = rows;
    }
    out.push_back(std::move(ids));
  }
  return out;
}

TEST(RowCache, EqualsTheHostTierStepAfterStep) {
  const ScratchDir dir;
  struct Format {
    const char* dtype;
    RowFormat format;
  };
  const Format formats[] = {{nullptr, RowFormat::bf16},
                            {nullptr, RowFormat::f32},
                            {"float8_e4m3fn", RowFormat::fp8},
                            {"nvfp4", RowFormat::nvfp4},
                            {"float8_e4m3fn", RowFormat::fp8_e8m0}};
  for (const auto& f : formats) {
    const ModelConfig config = small_config(f.dtype, 3);
    const fs::path path = dir / to_string(f.format);
    write_checkpoint(path, config, synthetic_tables(config, f.format, 4), {CheckpointKind::safetensors, 1});
    const auto checkpoint = open_ple_checkpoint(path, config);
    const int layers = config.num_ple_layers();
    for (const auto& space : spaces()) {
      std::vector<StorageTier> backings{StorageTier::disk};
      if (space->on_device()) backings.push_back(StorageTier::pinned);
      for (const StorageTier backing : backings) {
        // The disk tier holds whole tables; a pinned rank a share (here the last two thirds).
        std::vector<RowRange> ranges;
        for (int d = 0; d < layers; ++d) {
          const std::int64_t table_rows = checkpoint->table(d).layout.rows;
          ranges.push_back({backing == StorageTier::disk ? 0 : table_rows / 3, table_rows});
        }
        const std::int64_t rows = ranges[0].size();
        // Slots: none; a few (evictions every step); some with a static part; more than the table.
        for (const std::int64_t slots : {std::int64_t{0}, std::int64_t{16}, std::int64_t{120}, 3 * rows}) {
          for (const bool with_hot : {false, true}) {
            if (with_hot && slots < 40) continue;
            SCOPED_TRACE(std::string(to_string(f.format)) + (space->on_device() ? " gpu " : " host ") +
                         to_string(backing) + " slots " + std::to_string(slots) + (with_hot ? " with hot" : ""));
            std::vector<LayerCache> caches;
            std::vector<ReferenceCache> references;
            for (int d = 0; d < layers; ++d) {
              std::vector<std::int64_t> hot;
              if (with_hot)
                for (std::int64_t id = ranges[static_cast<std::size_t>(d)].begin + 5;
                     id < ranges[static_cast<std::size_t>(d)].end && hot.size() < 30; id += 3)
                  hot.push_back(id);
              references.emplace_back(hot, slots - static_cast<std::int64_t>(hot.size()));
              caches.push_back({slots, hot});
            }
            CachedStore cached(make_row_store(backing, *checkpoint, ranges, *space), *space, caches);
            const std::int64_t n = 300;
            cached.reserve(n);
            std::vector<std::int64_t> expected_hits(static_cast<std::size_t>(layers), 0), in_rows(expected_hits),
                expected_repeats(expected_hits);
            for (int d = 0; d < layers; ++d) {
              const HostTable host(*checkpoint, d, ranges[static_cast<std::size_t>(d)]);
              const std::size_t width = static_cast<std::size_t>(config.head_dim()) * kernels::out_bytes(OutDtype::f32);
              int s = 0;
              for (const auto& ids :
                   make_steps(checkpoint->table(d).layout.rows, n, 12, 31 + static_cast<std::uint64_t>(d))) {
                std::vector<std::uint8_t> expected(ids.size() * width);
                host.lookup(ids, OutDtype::f32, expected.data());
                // Other layers look nothing up in these steps: only layer d's cache moves.
                ASSERT_EQ(lookup_from_host(cached, *space, d, ids, OutDtype::f32), expected) << "step " << s;
                std::vector<std::int64_t> inside;
                for (const auto id : ids)
                  if (id >= host.range().begin && id < host.range().end) inside.push_back(id);
                expected_hits[static_cast<std::size_t>(d)] +=
                    references[static_cast<std::size_t>(d)].step(inside, expected_repeats[static_cast<std::size_t>(d)]);
                in_rows[static_cast<std::size_t>(d)] += static_cast<std::int64_t>(inside.size());
                // An empty step of every other layer keeps the references' clocks in step.
                std::int64_t none = 0;
                for (int e = 0; e < layers; ++e)
                  if (e != d) (void)references[static_cast<std::size_t>(e)].step({}, none);
                ++s;
              }
            }
            for (int d = 0; d < layers; ++d) {
              const CacheCounts counts = cached.counts(d);
              EXPECT_EQ(counts.hits + counts.misses + counts.repeats, in_rows[static_cast<std::size_t>(d)])
                  << "layer " << d;
              if (slots == 0) {
                EXPECT_EQ(counts.hits, 0);
              }
              if (with_hot) {
                EXPECT_GT(counts.hits, 0);
              }
              // The GPU admits a step's misses in parallel (any order among them): only the host's
              // hits are the reference's exactly.
              if (!space->on_device()) {
                EXPECT_EQ(counts.hits, expected_hits[static_cast<std::size_t>(d)]) << "layer " << d;
                EXPECT_EQ(counts.repeats, expected_repeats[static_cast<std::size_t>(d)]) << "layer " << d;
              }
            }
          }
        }
      }
    }
  }
}

// A one-file checkpoint of small_config's tables on the host, whole, and caches over the
// disk tier in front of it.
struct DiskTables {
  DiskTables(const char* dtype, std::int64_t parts, RowFormat format, std::uint64_t seed)
      : config(small_config(dtype, parts)) {
    write_checkpoint(dir / "t", config, synthetic_tables(config, format, seed), {CheckpointKind::safetensors, 1});
    checkpoint = open_ple_checkpoint(dir / "t", config);
    for (int d = 0; d < config.num_ple_layers(); ++d) ranges.push_back({0, checkpoint->table(d).layout.rows});
  }
  // The same cache for every layer.
  [[nodiscard]] CachedStore cache(const LayerCache& each) const {
    return CachedStore(make_row_store(StorageTier::disk, *checkpoint, ranges, *space), *space,
                       std::vector<LayerCache>(ranges.size(), each));
  }

  ScratchDir dir;
  ModelConfig config;
  std::unique_ptr<PleCheckpoint> checkpoint;
  std::unique_ptr<StepSpace> space = make_host_space();
  std::vector<RowRange> ranges;
};

// Hot rows are found from the first step on, whatever the dynamic part does.
TEST(RowCache, StaticRowsHitFromTheFirstStep) {
  const DiskTables t("float8_e4m3fn", 1, RowFormat::fp8, 2);
  CachedStore cached = t.cache({10, {2, 3, 7, 11}});
  cached.reserve(64);
  EXPECT_EQ(cached.static_rows(0), 4);
  EXPECT_EQ(cached.dynamic_rows(0), 0);  // 6 slots left: less than one set of eight
  const HostTable host(*t.checkpoint, 0, t.ranges[0]);
  const std::vector<std::int64_t> ids{7, 2, 7, 100, 11, 3, 100};
  std::vector<std::uint8_t> expected(ids.size() * static_cast<std::size_t>(t.config.head_dim()) * 4);
  host.lookup(ids, OutDtype::f32, expected.data());
  EXPECT_EQ(lookup_from_host(cached, *t.space, 0, ids, OutDtype::f32), expected);
  EXPECT_EQ(cached.counts(0).hits, 5);
  EXPECT_EQ(cached.counts(0).misses, 1);  // row 100, read once
  EXPECT_EQ(cached.counts(0).repeats, 1);
}

// A static part larger than a step is filled a step's worth at a time, and again when the
// cache is reserved for larger steps.
TEST(RowCache, StaticPartsLargerThanAStepFillInChunks) {
  const DiskTables t("nvfp4", 2, RowFormat::nvfp4, 5);
  std::vector<std::int64_t> hot;
  for (std::int64_t id = 1; id < 200; id += 7) hot.push_back(id);  // 29 rows
  CachedStore cached = t.cache({40, hot});
  const HostTable host(*t.checkpoint, 1, t.ranges[1]);
  const auto check = [&](std::int64_t step) {
    for (std::size_t at = 0; at < hot.size(); at += static_cast<std::size_t>(step)) {
      const std::vector<std::int64_t> ids(
          hot.begin() + static_cast<std::ptrdiff_t>(at),
          hot.begin() + static_cast<std::ptrdiff_t>(std::min(hot.size(), at + static_cast<std::size_t>(step))));
      std::vector<std::uint8_t> expected(ids.size() * static_cast<std::size_t>(t.config.head_dim()) * 4);
      host.lookup(ids, OutDtype::f32, expected.data());
      ASSERT_EQ(lookup_from_host(cached, *t.space, 1, ids, OutDtype::f32), expected) << "from " << at;
    }
  };
  cached.reserve(8);  // the static part in four chunks
  check(8);
  EXPECT_EQ(cached.counts(1).hits, 29);
  cached.reserve(8);   // nothing to do
  cached.reserve(16);  // made again, the static part filled again
  check(16);
  EXPECT_EQ(cached.counts(1).hits, 58);
  EXPECT_EQ(cached.counts(1).misses, 0);
}

TEST(RowCache, SizesShareTheCacheByRows) {
  const TableLayout a{RowFormat::fp8, 160, 3000};
  const TableLayout b{RowFormat::nvfp4, 160, 1000};
  const std::vector<TableLayout> layouts{a, b};
  const std::vector<RowRange> ranges{{0, 3000}, {0, 1000}};
  EXPECT_EQ(cache_rows_per_layer(400, 0, layouts, ranges), (std::vector<std::int64_t>{300, 100}));
  // 1e5 bytes: 75,000 over 160-byte FP8 rows, 25,000 over 90-byte NVFP4 rows.
  EXPECT_EQ(cache_rows_per_layer(0, 1e5, layouts, ranges), (std::vector<std::int64_t>{468, 277}));
  EXPECT_THROW((void)cache_rows_per_layer(10, 1e5, layouts, ranges), InputError);
}

}  // namespace
