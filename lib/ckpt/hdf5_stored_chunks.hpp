#pragma once
// A table's rows laid out by threads as HDF5 stores its chunks (rows, zero padding, Fletcher32)
// and placed by HDF5's direct chunk write: HDF5 itself checksums on one thread.

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace pleshard::detail {

// For datasets of one-byte elements, the default fill value (zero) and Fletcher32 as their
// only filter, as ckpt/hdf5_ple creates them: other settings store chunks otherwise.
class Hdf5StoredChunks {
 public:
  // Bytes a dataset of `rows` x `width` bytes in chunks of `chunk_rows` rows takes in the
  // file: its chunks as stored, and room for their index entries.
  [[nodiscard]] static std::uint64_t file_bytes(std::int64_t rows, std::int64_t chunk_rows, std::size_t width);

  // Rows [begin, end) of a dataset of `rows` rows of `width` bytes, chunked in `chunk_rows`
  // rows with Fletcher32; `begin` starts a chunk, `end` ends one or the dataset. `data`:
  // the rows, one after the other.
  void stage(std::int64_t rows, std::int64_t chunk_rows, std::size_t width, std::int64_t begin, std::int64_t end,
             std::span<const std::uint8_t> data);

  // The staged chunks into dataset `set`, in order; a failure is a SystemError naming `where`.
  void write(hid_t set, const char* where) const;

 private:
  std::int64_t rows_ = 0;
  std::int64_t chunk_rows_ = 0;
  std::int64_t first_chunk_ = 0;
  std::size_t chunks_ = 0;
  std::size_t stored_bytes_ = 0;  // one chunk with its checksum
  std::vector<std::uint8_t> bytes_;
};

}  // namespace pleshard::detail
