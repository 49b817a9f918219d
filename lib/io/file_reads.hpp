#pragma once
// Many reads of files at random offsets, all in flight together: the disk tier's rows. With
// io_uring (liburing), up to k_reads_in_flight reads are queued on a ring of the calling
// thread; reads of files opened with O_DIRECT go past the page cache through registered,
// aligned bounce blocks (any offset and length: the aligned blocks around them are read and
// the bytes copied out), other reads straight into place. Where io_uring is not built, or
// the kernel or a seccomp filter refuses it (said once in the log), or PLESHARD_IO_URING=0,
// the reads run from up to 16 threads of pread. Either way every read is whole: a short read
// is continued, and a file that ends before a read's last byte is an InputError naming it.

#include <cstdint>
#include <span>

#include "io/pread_file.hpp"

namespace pleshard {

struct FileRead {
  const PreadFile* file = nullptr;
  std::uint64_t offset = 0;
  std::span<std::uint8_t> out;
};

inline constexpr unsigned k_reads_in_flight = 256;

// automatic: io_uring where there is one; threads: threads of pread whatever the build (bulk
// reads of a table's load, which the page cache serves faster that way: docs/performance.md);
// past_cache: threads of PreadFile::read_exact_past_cache (a load into host memory that
// keeps the rows: the pinned tier's), unless PLESHARD_DIRECT_LOADS=0, then threads.
enum class ReadPath { automatic, threads, past_cache };

// Returns when every read is done; on an error, once none is left in flight.
void read_files(std::span<const FileRead> reads, ReadPath path = ReadPath::automatic);

// How read_files reads in this thread: "io_uring" or "pread threads".
[[nodiscard]] const char* file_read_path();

}  // namespace pleshard
