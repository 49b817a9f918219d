// Every rank reads only its balanced row range of an HDF5 checkpoint, collectively through
// MPI-IO when HDF5 is parallel and independently otherwise, and of a safetensors one;
// each range equals the same rows read on one process. Runs on 1..4 ranks.

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/ple_checkpoint.hpp"
#include "ckpt/synthetic.hpp"
#include "store/host_table.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

TEST(RankRanges, BalancedRangesCoverEveryRowOnce) {
  for (std::int64_t rows : {0, 1, 7, 128, 1001}) {
    for (int parts = 1; parts <= 9; ++parts) {
      std::int64_t next = 0;
      for (int i = 0; i < parts; ++i) {
        const RowRange r = balanced_range(rows, parts, i);
        EXPECT_EQ(r.begin, next);
        EXPECT_LE(r.size() - rows / parts, 1);
        next = r.end;
      }
      EXPECT_EQ(next, rows);
    }
  }
}

TEST(RankRanges, CutsCoverTheRangeOnceOnMultiplesOfTheirRows) {
  for (const RowRange range : {RowRange{0, 0}, RowRange{5, 5}, RowRange{0, 1}, RowRange{0, 12}, RowRange{3, 12},
                               RowRange{3, 13}, RowRange{7, 8}, RowRange{11, 40}}) {
    for (std::int64_t rows = 1; rows <= 13; ++rows) {
      const RowCuts cuts{range, rows};
      std::int64_t next = range.begin;
      for (std::size_t k = 0; k < cuts.count(); ++k) {
        const RowRange part = cuts.at(k);
        EXPECT_EQ(part.begin, next);
        EXPECT_GT(part.size(), 0);
        // Each part lies within one multiple of `rows`, and ends on one unless it is the last.
        EXPECT_EQ(part.begin / rows, (part.end - 1) / rows);
        if (k + 1 < cuts.count()) {
          EXPECT_EQ(part.end % rows, 0);
        }
        next = part.end;
      }
      EXPECT_EQ(next, range.end) << range.begin << ".." << range.end << " by " << rows;
    }
  }
}

TEST(RankRanges, BalancedCutsCoverTheRangeOnceWithoutSplittingACut) {
  for (const RowRange range :
       {RowRange{0, 0}, RowRange{5, 5}, RowRange{0, 1}, RowRange{3, 13}, RowRange{11, 40}, RowRange{0, 1000}}) {
    for (const std::int64_t rows : {0, 1, 4, 7, 64}) {
      const std::int64_t cut = std::max<std::int64_t>(1, rows);
      for (int parts = 1; parts <= 5; ++parts) {
        std::int64_t next = range.begin;
        std::int64_t largest = 0;
        std::int64_t smallest = range.size();
        for (int i = 0; i < parts; ++i) {
          const RowRange part = balanced_cuts(range, rows, parts, i);
          if (part.size() == 0) {
            EXPECT_EQ(part.begin, range.end);
            continue;
          }
          EXPECT_EQ(part.begin, next);
          // Bounds inside the range fall on the cuts.
          if (part.begin != range.begin) {
            EXPECT_EQ(part.begin % cut, 0);
          }
          if (part.end != range.end) {
            EXPECT_EQ(part.end % cut, 0);
          }
          largest = std::max(largest, part.size());
          smallest = std::min(smallest, part.size());
          next = part.end;
        }
        EXPECT_EQ(next, range.end) << range.begin << ".." << range.end << " by " << rows << " in " << parts;
        // Balanced: parts differ by at most one cut and the two partial cuts at the ends.
        if (range.size() >= parts * cut) {
          EXPECT_LE(largest - smallest, 2 * cut) << rows << " in " << parts;
        }
      }
    }
  }
}

TEST(RankRanges, EachRankReadsItsRangeOfEveryTable) {
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const ModelConfig config = small_config("nvfp4", 5);
  const SharedScratchDir dir("pleshard_rank_ranges");
  if (rank == 0) {
    const auto tables = synthetic_tables(config, RowFormat::nvfp4, 11);
    write_checkpoint(dir / "t.h5", config, tables, {CheckpointKind::hdf5});
    write_checkpoint(dir / "st", config, tables, {CheckpointKind::safetensors, 2});
  }
  MPI_Barrier(MPI_COMM_WORLD);

  // The expected rows, read on this process alone; closed before the shared opens,
  // since HDF5 would otherwise reuse this open file instead of opening it through MPI-IO.
  std::vector<std::vector<std::uint8_t>> expected_rows;
  std::vector<std::vector<std::uint8_t>> expected_scales;
  {
    const auto serial = open_ple_checkpoint(dir / "t.h5", config);
    for (const auto& info : serial->tables()) {
      const RowRange range = balanced_range(info.layout.rows, ranks, rank);
      expected_rows.emplace_back(static_cast<std::size_t>(range.size()) * info.layout.row_bytes());
      expected_scales.emplace_back(static_cast<std::size_t>(range.size()) * info.layout.scale_bytes());
      serial->read_rows(info.ple_index, range.begin, range.end, expected_rows.back(), expected_scales.back());
    }
  }
  for (bool collective : {true, false}) {
    CheckpointOptions options;
    options.comm = MPI_COMM_WORLD;
    options.collective_io = collective;
    for (const auto& path : {dir / "t.h5", dir / "st"}) {
      const auto shared = open_ple_checkpoint(path, config, options);
      for (const auto& info : shared->tables()) {
        const RowRange range = balanced_range(info.layout.rows, ranks, rank);
        const auto n = static_cast<std::size_t>(range.size());
        std::vector<std::uint8_t> rows(n * info.layout.row_bytes()), scales(n * info.layout.scale_bytes());
        shared->read_rows(info.ple_index, range.begin, range.end, rows, scales);
        EXPECT_EQ(rows, expected_rows[info.ple_index]) << path << " rank " << rank;
        EXPECT_EQ(scales, expected_scales[info.ple_index]) << path << " rank " << rank;
      }
    }
  }
}

}  // namespace
