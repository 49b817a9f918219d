#pragma once
// Many reads of files at random offsets, the disk tier's rows, many in flight at once.
// Through the page cache, 16 at a time from threads of pread: a read the cache holds is a
// copy on the reading thread, and on the H200 machine one io_uring ring's thread made the
// disk tier's warm steps 1.6-1.9x slower than 16 threads (cold, the real table's job read
// at the disk's rate either way: docs/performance-log.md). Past the page cache (files opened
// with O_DIRECT), up to k_reads_in_flight at a time on io_uring (liburing) where there is
// one, queued on a ring of the calling thread, small ones through registered, aligned
// bounce blocks (any offset and length: the aligned blocks around them are read and the
// bytes copied out). Where io_uring is not built, or the kernel or a seccomp filter refuses
// it (said once in the log), or PLESHARD_IO_URING=0, those too run from threads of pread.
// Either way every read is whole: a short read is continued, and a file that ends before a
// read's last byte is an InputError naming it.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "io/pread_file.hpp"

namespace pleshard {

struct FileRead {
  const PreadFile* file = nullptr;
  std::uint64_t offset = 0;
  std::span<std::uint8_t> out;
};

inline constexpr unsigned k_reads_in_flight = 256;
// Threads of pread that reads from threads use: enough reads in flight for the disk and page
// cache, whatever the number of cores.
inline constexpr std::size_t k_read_threads = 16;
// Ranges of a file are read in pieces of at most this many bytes, many in flight.
inline constexpr std::size_t k_read_piece_bytes = std::size_t{1} << 20;
// Past the page cache io_uring reads through registered bounce blocks of this size; a read
// whose 4 KiB-aligned extent is longer goes through the cache. Reads of at most
// k_direct_read_bytes fit one block at any offset.
inline constexpr std::size_t k_bounce_block_bytes = 64 * 1024;
inline constexpr std::size_t k_direct_read_bytes = k_bounce_block_bytes - 2 * k_direct_block_bytes;

// automatic: past the page cache io_uring where there is one, through it threads of pread;
// threads: threads of pread whatever the build and the cache (bulk reads of a table's load:
// past the cache they read into place, PreadFile::read_exact_past_cache, unless
// PLESHARD_DIRECT_LOADS=0).
enum class ReadPath { automatic, threads };

// use: reads through the page cache, which keeps what they read for the next (on the H200
// machine the disk tier served its table 4x faster so, cold, than past it); bypass: past
// it where the file allows O_DIRECT — io_uring's reads of at most a bounce block, and
// threads' reads into memory at the file offset's alignment (PreadFile::
// read_exact_past_cache: a load into host memory that keeps the rows; PLESHARD_DIRECT_LOADS=0
// keeps those in the cache), the rest through the cache.
enum class PageCache { use, bypass };
[[nodiscard]] const char* to_string(PageCache cache);  // "cached", "direct": `--disk-reads`' names
// InputError naming the option for another name.
[[nodiscard]] PageCache parse_page_cache(std::string_view name);

// Returns when every read is done; on an error, once none is left in flight.
void read_files(std::span<const FileRead> reads, ReadPath path = ReadPath::automatic, PageCache cache = PageCache::use);

// How read_files reads past the page cache in this thread: "io_uring" or "pread threads".
[[nodiscard]] const char* file_read_path();

}  // namespace pleshard
