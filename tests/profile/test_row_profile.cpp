// Row profiles: counted on any number of ranks, they are the plain count of every lookup of
// the corpus (most looked up first); they round-trip through their file; files that are not
// such profiles are refused naming the file; a cache's hot rows come from them in range.
// The miss-ratio curve keeps its yardsticks in order. Runs on 1..3 ranks.

#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/synthetic.hpp"
#include "core/error.hpp"
#include "hash/ngram_ids.hpp"
#include "model/table_spec.hpp"
#include "profile/miss_curve.hpp"
#include "profile/profile_job.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;
namespace fs = std::filesystem;

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

std::vector<Request> corpus(const ModelConfig& config, std::int64_t count, std::uint64_t seed) {
  SyntheticRequestsSpec spec;
  spec.count = count;
  spec.min_tokens = 1;
  spec.max_tokens = 300;
  spec.vocab_size = config.vocab_size;
  spec.seed = seed;
  return make_synthetic_requests(spec);
}

TEST(RowProfile, CountsEveryLookupOnAnyNumberOfRanks) {
  const ModelConfig config = small_config("float8_e4m3fn", 3);
  const auto checkpoint = synthetic_checkpoint(config, RowFormat::fp8, 1);
  const std::vector<Request> requests = corpus(config, 40, 7);
  ProfileOptions options;
  options.batch_tokens = 500;  // several batches
  const RowProfile profile = profile_rows(MPI_COMM_WORLD, config, *checkpoint, requests, "corpus", options);
  if (world_rank() != 0) {
    EXPECT_TRUE(profile.tables.empty());
    return;
  }
  ASSERT_EQ(profile.tables.size(), static_cast<std::size_t>(config.num_ple_layers()));
  EXPECT_EQ(profile.requests, 40);
  EXPECT_EQ(profile.tokens, total_tokens(requests));
  for (int d = 0; d < config.num_ple_layers(); ++d) {
    // The plain count: every request hashed alone.
    const TableSpec spec = derive_table_spec(config, d);
    std::map<std::int64_t, std::int64_t> counts;
    std::int64_t lookups = 0;
    for (const Request& r : requests) {
      TokenBatch batch(config.ngram_size);
      batch.add_request(r.tokens, fresh_context(config.ngram_size));
      for (const std::int64_t id : compute_ngram_ids(spec, batch)) {
        ++counts[id];
        ++lookups;
      }
    }
    std::vector<std::pair<std::int64_t, std::int64_t>> expected;  // (-count, row)
    for (const auto& [row, n] : counts) expected.emplace_back(-n, row);
    std::sort(expected.begin(), expected.end());
    const TableProfile& t = profile.tables[static_cast<std::size_t>(d)];
    EXPECT_EQ(t.table_rows, checkpoint->table(d).layout.rows);
    EXPECT_EQ(t.lookups, lookups);
    ASSERT_EQ(t.rows.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      ASSERT_EQ(t.rows[i], expected[i].second) << "entry " << i;
      ASSERT_EQ(t.counts[i], -expected[i].first) << "entry " << i;
    }
  }
}

TEST(RowProfile, RoundTripsAndGivesHotRowsInRange) {
  if (world_rank() != 0) return;
  const ScratchDir dir;
  RowProfile p;
  p.corpus = "c.jsonl";
  p.requests = 3;
  p.tokens = 12;
  p.tables.push_back({100, 9, {40, 7, 90, 3}, {4, 2, 2, 1}});
  p.tables.push_back({50, 0, {}, {}});
  write_row_profile(dir / "p.h5", p);
  EXPECT_FALSE(fs::exists(dir / "p.h5.partial"));
  const RowProfile q = read_row_profile(dir / "p.h5");
  EXPECT_EQ(q.corpus, "c.jsonl");
  EXPECT_EQ(q.tokens, 12);
  ASSERT_EQ(q.tables.size(), 2u);
  EXPECT_EQ(q.tables[0].rows, p.tables[0].rows);
  EXPECT_EQ(q.tables[0].counts, p.tables[0].counts);
  EXPECT_TRUE(q.tables[1].rows.empty());
  // The three hottest in [5, 95): 40, 7, 90 (3 is outside), ascending.
  EXPECT_EQ(hot_rows(q.tables[0], {5, 95}, 3), (std::vector<std::int64_t>{7, 40, 90}));
  EXPECT_EQ(hot_rows(q.tables[0], {0, 100}, 2), (std::vector<std::int64_t>{7, 40}));
  EXPECT_TRUE(hot_rows(q.tables[0], {0, 100}, 0).empty());
}

TEST(RowProfile, RefusesFilesThatAreNotProfilesNamingThem) {
  if (world_rank() != 0) return;
  const ScratchDir dir;
  const auto refused = [](const fs::path& path, const std::string& what) {
    try {
      (void)read_row_profile(path);
      ADD_FAILURE() << path << ": read";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused(dir / "missing.h5", "row profile not found");
  // What a path names when it is no file, said as every other input says it.
  refused(dir.path(), "row profile is a directory, not a file");
  ASSERT_EQ(::mkfifo((dir / "fifo.h5").c_str(), 0600), 0);
  refused(dir / "fifo.h5", "row profile is a FIFO, not a file");
  refused("/dev/null", "row profile is a device, not a file");
  const ModelConfig config = small_config(nullptr, 1);  // an HDF5 checkpoint is no profile
  write_checkpoint(dir / "other.h5", config, synthetic_tables(config, RowFormat::bf16, 1), {CheckpointKind::hdf5});
  refused(dir / "other.h5", "not a pleshard row profile");
  RowProfile p;
  p.tables.push_back({100, 6, {40, 7}, {2, 4}});  // counts ascending
  write_row_profile(dir / "ascending.h5", p);
  refused(dir / "ascending.h5", "descending");
  p.tables[0] = {100, 6, {40, 700}, {4, 2}};  // a row outside the table
  write_row_profile(dir / "outside.h5", p);
  refused(dir / "outside.h5", "outside the table");
  p.tables[0] = {100, 7, {40, 7}, {4, 2}};  // counts that do not add up
  write_row_profile(dir / "sum.h5", p);
  refused(dir / "sum.h5", "add up");
}

TEST(MissCurve, YardsticksStayInOrder) {
  if (world_rank() != 0) return;
  const ModelConfig config = small_config(nullptr, 1);
  const auto checkpoint = synthetic_checkpoint(config, RowFormat::bf16, 1);
  const std::vector<Request> profiled = corpus(config, 30, 3), stream = corpus(config, 30, 4);
  const RowProfile profile = profile_rows(MPI_COMM_SELF, config, *checkpoint, profiled, "p", {});
  const std::int64_t rows = checkpoint->table(0).layout.rows;
  CurveOptions options;
  options.slots = {0, 16, 64, 256, rows};
  options.step_tokens = 64;
  const auto curve = miss_ratio_curve(config, *checkpoint, stream, 0, &profile.tables[0], options);
  ASSERT_EQ(curve.size(), options.slots.size());
  double last_optimal = 0;
  for (const CurvePoint& p : curve) {
    SCOPED_TRACE(p.slots);
    EXPECT_GE(p.bound + 1e-12, p.optimal);
    EXPECT_GE(p.bound + 1e-12, p.mixed);
    EXPECT_GE(p.bound + 1e-12, p.fixed);
    EXPECT_GE(p.bound + 1e-12, p.dynamic);
    EXPECT_GE(p.optimal + 1e-12, p.dynamic);     // no online cache beats the offline one
    EXPECT_GE(p.optimal + 1e-12, last_optimal);  // more slots never hit less
    last_optimal = p.optimal;
  }
  // No slots: only a step's repeats of its own misses are served, by every kind alike.
  EXPECT_EQ(curve.front().optimal, curve.front().dynamic);
  EXPECT_EQ(curve.front().fixed, curve.front().dynamic);
  EXPECT_GT(curve.front().dynamic, 0);
  // Every row fits: Belady's serves every repeat of the stream.
  const auto no_profile = miss_ratio_curve(config, *checkpoint, stream, 0, nullptr, options);
  EXPECT_DOUBLE_EQ(no_profile.back().optimal, no_profile.back().bound);
  EXPECT_GT(no_profile.back().optimal, 0.1);
}

}  // namespace
