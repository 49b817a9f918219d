#pragma once
// The rows of an HDF5 checkpoint's table read past the HDF5 library. HDF5 reads a dataset
// one chunk at a time on one thread (its library is not thread-safe), checking each chunk's
// Fletcher32 checksum on the way: at real size that held loads to 53–65% of the file's read
// rate. Where a dataset's storage allows it — unsigned bytes in the checkpoint's own file,
// contiguous, or chunked in whole rows (at most 16 MiB a chunk) with no filter but
// Fletcher32, no chunk missing — its bytes are located once, when the checkpoint opens, and
// a read of rows is plain reads of the file from threads, each chunk's checksum verified
// on the thread that read it. Other datasets (compressed, chunked across a row, sparse,
// reached through an external link, signed) read through HDF5.

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/file_reads.hpp"
#include "io/pread_file.hpp"

namespace pleshard::detail {

// Bytes of the Fletcher32 checksum HDF5's filter stores after a chunk's data, little-endian.
inline constexpr std::size_t k_fletcher32_bytes = 4;
inline void store_fletcher32(std::uint32_t sum, std::uint8_t* at) {
  for (std::size_t b = 0; b < k_fletcher32_bytes; ++b) at[b] = static_cast<std::uint8_t>(sum >> (8 * b));
}
[[nodiscard]] inline std::uint32_t stored_fletcher32(const std::uint8_t* at) {
  std::uint32_t sum = 0;
  for (std::size_t b = 0; b < k_fletcher32_bytes; ++b) sum |= static_cast<std::uint32_t>(at[b]) << (8 * b);
  return sum;
}

// HDF5's Fletcher32 of `bytes` (16-bit big-endian words, the sums folded every 360 words),
// as its filter stores it after a chunk's data.
[[nodiscard]] std::uint32_t hdf5_fletcher32(std::span<const std::uint8_t> bytes);

class Hdf5Rows;

// Rows [begin, end) of one dataset into `out` (its width in bytes each); `where` names the
// dataset in errors.
struct Hdf5RowsRead {
  const Hdf5Rows* rows = nullptr;
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::uint8_t* out = nullptr;
  std::string where;
};

class Hdf5Rows {
 public:
  // Where dataset `set` of file `file` (`rows` x `width` bytes) keeps its rows, or nothing
  // where they must be read through HDF5.
  static std::optional<Hdf5Rows> locate(hid_t file, hid_t set, std::int64_t rows, std::size_t width);

  // Every read, from `file` (the datasets' file, opened for pread), together: each chunk read
  // by one of up to k_read_threads threads and its checksum verified there, while the other
  // threads read (a chunk inside the read straight into place; one that sticks out whole,
  // then its rows copied out; a contiguous dataset: reads of 1 MiB into place).
  // A chunk whose checksum fails is an InputError naming its dataset and rows.
  static void read(const PreadFile& file, std::span<const Hdf5RowsRead> reads);

  // The file reads of rows [first, first + count) into `out` (count x the width bytes),
  // appended to `reads`: each row's bytes alone, at most 1 MiB a read, none across a chunk,
  // and no chunk's checksum verified — that would read the whole chunk, a step's row of a
  // few hundred bytes thousands of times over. The disk tier's steps read so
  // (io/file_reads.hpp, many in flight); a table's load and `ckpt verify` read whole chunks
  // and verify them (read).
  void add_reads(const PreadFile& file, std::int64_t first, std::int64_t count, std::span<std::uint8_t> out,
                 std::vector<FileRead>& reads) const;

  // Rows of each chunk; 0: contiguous.
  [[nodiscard]] std::int64_t chunk_rows() const { return chunk_rows_; }

 private:
  Hdf5Rows() = default;

  std::int64_t rows_ = 0;
  std::size_t width_ = 0;
  std::int64_t chunk_rows_ = 0;         // 0: contiguous
  bool checksummed_ = false;            // Fletcher32 after each chunk's data
  std::vector<std::uint64_t> offsets_;  // each chunk's file offset (contiguous: one)
};

}  // namespace pleshard::detail
