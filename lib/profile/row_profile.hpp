#pragma once
// How often a token corpus looks up each row of every PLE table (`pleshard profile`), as an
// HDF5 file, and the hot rows a row cache's static part takes from it. The file holds, per
// table (/ple_{d}), every row the corpus looked up with its count, most looked up first
// (ties: ascending id), and the table's rows, so that a profile is never applied to a table
// of another size.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "store/row_range.hpp"

namespace pleshard {

struct TableProfile {
  std::int64_t table_rows = 0;
  std::int64_t lookups = 0;          // the corpus's lookups of the table (ids inside it)
  std::vector<std::int64_t> rows;    // rows looked up, most often first
  std::vector<std::int64_t> counts;  // and how often
};

struct RowProfile {
  std::string corpus;  // the requests file profiled
  std::int64_t requests = 0;
  std::int64_t tokens = 0;
  std::vector<TableProfile> tables;  // by PLE index
};

// Written as <path>.partial and renamed when complete.
void write_row_profile(const std::filesystem::path& path, const RowProfile& profile);
// InputError naming the file for anything that is not such a profile.
[[nodiscard]] RowProfile read_row_profile(const std::filesystem::path& path);

// read_row_profile, and InputError naming the file unless it has a table of the same rows
// for every table of `checkpoint` (a profile of other tables).
[[nodiscard]] RowProfile read_row_profile_for(const std::filesystem::path& path, const PleCheckpoint& checkpoint);

// The `most` most looked-up rows of `table` inside `range`, ascending.
[[nodiscard]] std::vector<std::int64_t> hot_rows(const TableProfile& table, RowRange range, std::int64_t most);

}  // namespace pleshard
