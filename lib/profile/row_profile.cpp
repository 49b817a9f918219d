#include "profile/row_profile.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "io/detail/h5_handle.hpp"
#include "io/durable_file.hpp"
#include "io/file_checks.hpp"

namespace pleshard {

namespace {

using detail::h5_check;
using detail::H5Id;

constexpr const char* k_kind = "pleshard row profile 1";

std::string table_group(std::size_t d) { return "ple_" + std::to_string(d); }

}  // namespace

void write_row_profile(const std::filesystem::path& path, const RowProfile& profile) {
  detail::quiet_hdf5();
  const std::filesystem::path partial = path.string() + ".partial";
  const std::string where = partial.string();
  try {
    H5Id file = h5_check(H5Fcreate(where.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose,
                         where + ": cannot create");
    detail::write_string_attribute(file.get(), "kind", k_kind);
    detail::write_string_attribute(file.get(), "corpus", profile.corpus);
    detail::write_int_attribute(file.get(), "requests", profile.requests);
    detail::write_int_attribute(file.get(), "tokens", profile.tokens);
    detail::write_int_attribute(file.get(), "tables", static_cast<std::int64_t>(profile.tables.size()));
    for (std::size_t d = 0; d < profile.tables.size(); ++d) {
      const TableProfile& t = profile.tables[d];
      H5Id group = h5_check(H5Gcreate2(file.get(), table_group(d).c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                            H5Gclose, where + ": cannot create /" + table_group(d));
      detail::write_int_attribute(group.get(), "table_rows", t.table_rows);
      detail::write_int_attribute(group.get(), "lookups", t.lookups);
      detail::write_int64s(group.get(), "rows", t.rows, where + ": /" + table_group(d));
      detail::write_int64s(group.get(), "counts", t.counts, where + ": /" + table_group(d));
    }
    h5_check(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), where + ": cannot write");
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);  // nothing left that looks like a profile
    throw;
  }
  sync_file(partial);
  commit_file(partial, path);
}

RowProfile read_row_profile(const std::filesystem::path& path) {
  detail::quiet_hdf5();
  const std::string where = path.string();
  require_regular_file(path, "row profile");
  H5Id file = h5_check(H5Fopen(where.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, where + ": not an HDF5 file");
  if (H5Aexists(file.get(), "kind") <= 0 || detail::read_string_attribute(file.get(), "kind", where) != k_kind)
    throw InputError(where + ": not a pleshard row profile (pleshard profile writes them)");
  RowProfile profile;
  profile.corpus = detail::read_string_attribute(file.get(), "corpus", where);
  profile.requests = detail::read_int_attribute(file.get(), "requests", where);
  profile.tokens = detail::read_int_attribute(file.get(), "tokens", where);
  const std::int64_t tables = detail::read_int_attribute(file.get(), "tables", where);
  if (tables < 0 || tables > 1024) throw InputError(where + ": " + std::to_string(tables) + " tables");
  for (std::int64_t d = 0; d < tables; ++d) {
    const std::string name = table_group(static_cast<std::size_t>(d));
    const std::string at = where + ": /" + name;
    if (H5Lexists(file.get(), name.c_str(), H5P_DEFAULT) <= 0) throw InputError(at + " is missing");
    H5Id group = h5_check(H5Gopen2(file.get(), name.c_str(), H5P_DEFAULT), H5Gclose, at + " is not a group");
    TableProfile t;
    t.table_rows = detail::read_int_attribute(group.get(), "table_rows", at);
    t.lookups = detail::read_int_attribute(group.get(), "lookups", at);
    t.rows = detail::read_int64s(group.get(), "rows", at);
    t.counts = detail::read_int64s(group.get(), "counts", at);
    if (t.rows.size() != t.counts.size())
      throw InputError(at + ": " + std::to_string(t.rows.size()) + " rows but " + std::to_string(t.counts.size()) +
                       " counts");
    std::int64_t total = 0;
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      if (t.rows[i] < 0 || t.rows[i] >= t.table_rows)
        throw InputError(at + ": row " + std::to_string(t.rows[i]) + " outside the table's " +
                         std::to_string(t.table_rows));
      if (t.counts[i] < 1 || (i > 0 && t.counts[i] > t.counts[i - 1]))
        throw InputError(at + ": counts not positive and descending at entry " + std::to_string(i));
      if (t.counts[i] > t.lookups - total)
        throw InputError(at + ": counts add up to more than its " + std::to_string(t.lookups) + " lookups");
      total += t.counts[i];
    }
    if (total != t.lookups)
      throw InputError(at + ": counts add up to " + std::to_string(total) + ", not its " + std::to_string(t.lookups) +
                       " lookups");
    profile.tables.push_back(std::move(t));
  }
  return profile;
}

RowProfile read_row_profile_for(const std::filesystem::path& path, const PleCheckpoint& checkpoint) {
  RowProfile p = read_row_profile(path);
  for (const PleTableInfo& info : checkpoint.tables()) {
    const auto d = static_cast<std::size_t>(info.ple_index);
    if (d >= p.tables.size() || p.tables[d].table_rows != info.layout.rows)
      throw InputError(path.string() + ": made for other tables (table " + std::to_string(d) +
                       (d < p.tables.size() ? " of " + std::to_string(p.tables[d].table_rows) + " rows" : " absent") +
                       "; the checkpoint's has " + std::to_string(info.layout.rows) + ")");
  }
  return p;
}

std::vector<std::int64_t> hot_rows(const TableProfile& table, RowRange range, std::int64_t most) {
  std::vector<std::int64_t> hot;
  for (std::size_t i = 0; i < table.rows.size() && static_cast<std::int64_t>(hot.size()) < most; ++i)
    if (table.rows[i] >= range.begin && table.rows[i] < range.end) hot.push_back(table.rows[i]);
  std::sort(hot.begin(), hot.end());
  hot.erase(std::unique(hot.begin(), hot.end()), hot.end());  // a profile lists each row once; be safe
  return hot;
}

}  // namespace pleshard
