#include "ckpt/row_set_reads.hpp"

#include <cstring>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace pleshard {

namespace {

// Runs [first, last) of a sorted row set read as one span of the file, at byte `at` of a
// buffer.
struct RunSpan {
  std::size_t first = 0;
  std::size_t last = 0;
  std::size_t at = 0;
  [[nodiscard]] std::int64_t rows(std::span<const RowRun> runs) const {
    return runs[last - 1].first + runs[last - 1].count - runs[first].first;
  }
};

// The spans of runs that lie at most `gap_bytes` of row bytes apart, each at most
// `span_bytes` long; runs of no span are read alone.
std::vector<RunSpan> close_runs(std::span<const RowRun> runs, std::size_t row_bytes, std::size_t span_bytes,
                                std::size_t gap_bytes) {
  std::vector<RunSpan> spans;
  for (std::size_t a = 0; a < runs.size();) {
    RunSpan span{a, a + 1, 0};
    const auto end_of = [&](std::size_t k) { return runs[k].first + runs[k].count; };
    const auto bytes = [&](std::size_t last) {
      return static_cast<std::size_t>(end_of(last - 1) - runs[a].first) * row_bytes;
    };
    while (span.last < runs.size() &&
           static_cast<std::size_t>(runs[span.last].first - end_of(span.last - 1)) * row_bytes <= gap_bytes &&
           bytes(span.last + 1) <= span_bytes)
      ++span.last;
    if (span.last - span.first > 1) spans.push_back(span);
    a = span.last;
  }
  return spans;
}

}  // namespace

void read_row_sets_as_file_reads(const PleCheckpoint& checkpoint, std::span<const PleCheckpoint::RowSet> sets,
                                 PageCache cache, const AddRowReads& add_reads) {
  // Codes of rows close together are read as one span into a buffer of the calling
  // thread's, then copied out: one read where there were many (the hot rows a cached job
  // fills its cache with at the start lie a few rows apart). The buffer holds at most 64
  // MiB (kept), so spans of more are read in rounds, each round's reads in flight together;
  // the rows read alone and the scales (run by run) go with the first. Past the page cache
  // a span fits one of io_uring's bounce blocks, so that it stays past it.
  //
  // A step's spans join rows at most a page apart, a bulk set's (a cache's static fill)
  // rows at most 16 KiB apart: wider gaps trade reads for bytes, which pays on a cold disk
  // and costs where the page cache holds the rows. On the H200 machine 16 KiB took the
  // static fill of 8M hot rows, cold, from 24-25 s to 16-18 s, but here the warm steps of a
  // 16M-row table (rows about 10 KiB apart) fetched in 9.0-9.2 s against 6.2-6.5 s at a
  // page (docs/performance-log.md).
  constexpr std::size_t k_buffer_bytes = std::size_t{64} << 20;
  constexpr std::size_t k_step_gap_bytes = 4096;
  constexpr std::size_t k_bulk_gap_bytes = 16 * 1024;
  const std::size_t span_bytes = cache == PageCache::bypass ? k_direct_read_bytes : k_buffer_bytes;
  std::vector<std::vector<RowRun>> runs;
  std::vector<std::vector<RunSpan>> spans;
  std::vector<FileRead> reads;
  for (const PleCheckpoint::RowSet& s : sets) {
    const PleTableInfo& info = checkpoint.table(s.ple_index);
    if (!s.sorted_rows.empty() && (s.sorted_rows.front() < 0 || s.sorted_rows.back() >= info.layout.rows))
      throw InputError(checkpoint.path() + ": read_row_set rows outside [0, " + std::to_string(info.layout.rows) + ")");
    if (s.rows.size() < s.sorted_rows.size() * info.layout.row_bytes() ||
        (!s.scales.empty() && s.scales.size() < s.sorted_rows.size() * info.layout.scale_bytes()))
      throw SystemError(checkpoint.path() + ": read_row_set output too small");
    const std::vector<RowRun>& r = runs.emplace_back(row_runs(s.sorted_rows));
    spans.push_back(close_runs(r, info.layout.row_bytes(), span_bytes, s.bulk ? k_bulk_gap_bytes : k_step_gap_bytes));
    std::vector<RowRun> alone;  // runs read straight into place
    std::size_t a = 0;
    for (const RunSpan& span : spans.back()) {
      alone.insert(alone.end(), r.begin() + static_cast<std::ptrdiff_t>(a),
                   r.begin() + static_cast<std::ptrdiff_t>(span.first));
      a = span.last;
    }
    alone.insert(alone.end(), r.begin() + static_cast<std::ptrdiff_t>(a), r.end());
    add_reads(s.ple_index, alone, s.rows, {}, reads);
    if (!s.scales.empty()) add_reads(s.ple_index, r, {}, s.scales, reads);
  }
  thread_local std::vector<std::uint8_t> buffer;
  std::size_t set = 0;  // the next span: spans[set][next]
  std::size_t next = 0;
  for (bool first = true; first || set < sets.size(); first = false) {
    // This round's spans: as many of the next as the buffer holds (any one span fits).
    std::vector<std::pair<std::size_t, RunSpan>> round;
    std::size_t buffered = 0;
    for (; set < sets.size(); ++set, next = 0) {
      const std::size_t row_bytes = checkpoint.table(sets[set].ple_index).layout.row_bytes();
      for (; next < spans[set].size(); ++next) {
        RunSpan span = spans[set][next];
        const std::size_t bytes = static_cast<std::size_t>(span.rows(runs[set])) * row_bytes;
        if (buffered + bytes > k_buffer_bytes) break;
        span.at = buffered;
        buffered += bytes;
        round.emplace_back(set, span);
      }
      if (next < spans[set].size()) break;
    }
    if (buffer.size() < buffered) buffer.resize(buffered);  // grown only: zeroed once
    for (const auto& [i, span] : round) {
      const RowRun whole{runs[i][span.first].first, span.rows(runs[i]), 0};
      add_reads(sets[i].ple_index, {&whole, 1},
                {buffer.data() + span.at,
                 static_cast<std::size_t>(whole.count) * checkpoint.table(sets[i].ple_index).layout.row_bytes()},
                {}, reads);
    }
    read_files(reads, ReadPath::automatic, cache);  // a step's rows: small reads (past the cache: io_uring)
    reads.clear();
    for (const auto& [i, span] : round) {
      const std::vector<RowRun>& r = runs[i];
      const std::size_t row_bytes = checkpoint.table(sets[i].ple_index).layout.row_bytes();
      for (std::size_t k = span.first; k < span.last; ++k)
        std::memcpy(sets[i].rows.data() + static_cast<std::size_t>(r[k].at) * row_bytes,
                    buffer.data() + span.at + static_cast<std::size_t>(r[k].first - r[span.first].first) * row_bytes,
                    static_cast<std::size_t>(r[k].count) * row_bytes);
    }
  }
}

}  // namespace pleshard
