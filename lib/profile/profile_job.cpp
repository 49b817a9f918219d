#include "profile/profile_job.hpp"

#include <algorithm>
#include <limits>

#include "core/error.hpp"
#include "core/mpi_check.hpp"
#include "core/watched_collectives.hpp"
#include "hash/ngram_ids.hpp"
#include "model/table_spec.hpp"
#include "store/row_range.hpp"

namespace pleshard {

namespace {

// One table's counts of my share of its rows.
struct Share {
  TableSpec spec;
  std::int64_t table_rows = 0;
  RowRange range;
  std::vector<std::uint32_t> counts;
  std::int64_t lookups = 0;  // of the whole table, as every rank hashes everything
  bool saturated = false;    // a row looked up 2^32 - 1 times (its count stops there)
};

void count(Share& s, const TokenBatch& batch) {
  for (const std::int64_t id : compute_ngram_ids(s.spec, batch)) {
    if (id < 0 || id >= s.table_rows) continue;
    ++s.lookups;
    if (id < s.range.begin || id >= s.range.end) continue;
    std::uint32_t& c = s.counts[static_cast<std::size_t>(id - s.range.begin)];
    if (c == std::numeric_limits<std::uint32_t>::max()) {
      s.saturated = true;
    } else {
      ++c;
    }
  }
}

// Every rank's (count, row) pairs of `s` on rank 0, most looked up first.
TableProfile gather(MPI_Comm comm, const Share& s) {
  std::vector<std::int64_t> rows, counts;
  for (std::size_t i = 0; i < s.counts.size(); ++i)
    if (s.counts[i] != 0) {
      rows.push_back(s.range.begin + static_cast<std::int64_t>(i));
      counts.push_back(s.counts[i]);
    }
  int ranks = 1, rank = 0;
  PLESHARD_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  PLESHARD_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  // What could stop the gather, agreed by every rank before it starts (MPI counts are int).
  std::int64_t agreed[2] = {static_cast<std::int64_t>(rows.size()), s.saturated ? 1 : 0};
  const std::string what = "every rank's counts of the table's rows";
  watched_allreduce(agreed, 2, MPI_INT64_T, MPI_SUM, comm, what);
  if (agreed[1] != 0)
    throw InputError("profile: a row is looked up 2^32 times: the corpus is too large to profile in one run");
  if (agreed[0] > std::numeric_limits<int>::max())
    throw InputError("profile: " + std::to_string(agreed[0]) + " rows looked up in one table; at most 2^31 - 1");
  const int mine = static_cast<int>(rows.size());
  std::vector<int> sizes(static_cast<std::size_t>(ranks)), offsets(sizes.size());
  watched_gather(&mine, sizes.data(), 1, MPI_INT, 0, comm, what);
  std::int64_t total = 0;
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    offsets[r] = static_cast<int>(total);
    total += sizes[r];
  }
  TableProfile t;
  t.table_rows = s.table_rows;
  t.lookups = s.lookups;
  std::vector<std::int64_t> all_rows(rank == 0 ? static_cast<std::size_t>(total) : 0), all_counts(all_rows.size());
  watched_gatherv(rows.data(), mine, all_rows.data(), sizes.data(), offsets.data(), MPI_INT64_T, 0, comm, what);
  watched_gatherv(counts.data(), mine, all_counts.data(), sizes.data(), offsets.data(), MPI_INT64_T, 0, comm, what);
  if (rank != 0) return t;
  std::vector<std::size_t> order(all_rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return all_counts[a] != all_counts[b] ? all_counts[a] > all_counts[b] : all_rows[a] < all_rows[b];
  });
  t.rows.reserve(order.size());
  t.counts.reserve(order.size());
  for (const std::size_t i : order) {
    t.rows.push_back(all_rows[i]);
    t.counts.push_back(all_counts[i]);
  }
  return t;
}

}  // namespace

void for_each_request_batch(const ModelConfig& config, const std::vector<Request>& requests, std::int64_t batch_tokens,
                            const std::function<void(const TokenBatch&)>& visit) {
  const std::vector<std::int64_t> context = fresh_context(config.ngram_size);
  for (std::size_t next = 0; next < requests.size();) {
    TokenBatch batch(config.ngram_size);
    while (next < requests.size() && (batch.num_tokens() == 0 || batch.num_tokens() < batch_tokens)) {
      batch.add_request(requests[next].tokens, context);
      ++next;
    }
    visit(batch);
  }
}

RowProfile profile_rows(MPI_Comm comm, const ModelConfig& config, const PleCheckpoint& checkpoint,
                        const std::vector<Request>& requests, const std::string& corpus,
                        const ProfileOptions& options) {
  int ranks = 1, rank = 0;
  PLESHARD_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  PLESHARD_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  std::vector<Share> shares;
  for (const TableSpec& derived : derive_table_specs(config)) {
    const PleTableInfo& info = checkpoint.table(derived.ple_index);
    Share s;
    s.spec = hashing_spec(derived, info, checkpoint.path(), false);
    s.table_rows = info.layout.rows;
    s.range = balanced_range(s.table_rows, ranks, rank);
    s.counts.assign(static_cast<std::size_t>(s.range.size()), 0);
    shares.push_back(std::move(s));
  }
  const std::int64_t total = total_tokens(requests);
  std::int64_t done = 0;
  for_each_request_batch(config, requests, options.batch_tokens, [&](const TokenBatch& batch) {
    for (Share& s : shares) count(s, batch);
    done += batch.num_tokens();
    if (rank == 0 && options.progress) options.progress(done, total);
  });
  RowProfile profile;
  profile.corpus = corpus;
  profile.requests = static_cast<std::int64_t>(requests.size());
  profile.tokens = total;
  for (const Share& s : shares) profile.tables.push_back(gather(comm, s));
  if (rank != 0) profile.tables.clear();
  return profile;
}

}  // namespace pleshard
