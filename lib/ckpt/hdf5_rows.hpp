#pragma once
// The rows of an HDF5 checkpoint's table read past the HDF5 library. HDF5 reads a dataset
// one chunk at a time on one thread (its library is not thread-safe), checking each chunk's
// Fletcher32 checksum on the way: at real size that held loads to 53–65% of the file's read
// rate. Where a dataset's storage allows it — contiguous, or chunked in whole rows with no
// filter but Fletcher32, no chunk missing — its bytes are located once, when the checkpoint
// opens, and a read of rows is plain reads of the file from threads (io/file_reads.hpp),
// each whole chunk straight into place, its checksum verified here on the host's cores.
// Other datasets (compressed, chunked across a row, sparse) read through HDF5.

#include <hdf5.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/pread_file.hpp"

namespace pleshard::detail {

// HDF5's Fletcher32 of `bytes` (16-bit big-endian words, the sums folded every 360 words),
// as its filter stores it after a chunk's data.
[[nodiscard]] std::uint32_t hdf5_fletcher32(std::span<const std::uint8_t> bytes);

class Hdf5Rows {
 public:
  // Where dataset `set` of file `file` (`rows` x `width` bytes) keeps its rows, or nothing
  // where they must be read through HDF5.
  static std::optional<Hdf5Rows> locate(hid_t file, hid_t set, std::int64_t rows, std::size_t width);

  // Rows [begin, end) into `out` (width bytes each), read from `file` (the same file, opened
  // for pread). A chunk whose checksum fails is an InputError naming `where` and its rows.
  void read(const PreadFile& file, std::int64_t begin, std::int64_t end, std::uint8_t* out,
            const std::string& where) const;

 private:
  Hdf5Rows() = default;

  std::int64_t rows_ = 0;
  std::size_t width_ = 0;
  std::int64_t chunk_rows_ = 0;         // 0: contiguous
  bool checksummed_ = false;            // Fletcher32 after each chunk's data
  std::vector<std::uint64_t> offsets_;  // each chunk's file offset (contiguous: one)
};

}  // namespace pleshard::detail
