#pragma once
// Rows of an HDF5 checkpoint's table written past HDF5's filter pipeline. Through H5Dwrite,
// HDF5 copies each chunk and computes its Fletcher32 checksum on the one thread that calls
// it (its library is not thread-safe): at real size that held `ckpt make --kind hdf5` to
// 0.8-0.9 GB/s. Here a band's chunks are laid out as HDF5 stores them — each chunk's rows,
// the last one padded with zeros to a whole chunk, then its checksum — by threads, and
// handed to HDF5's direct chunk write, which only places them in the file.

#include <hdf5.h>

#include <cstdint>
#include <span>
#include <vector>

namespace pleshard::detail {

class Hdf5StoredChunks {
 public:
  // Rows [begin, end) of a dataset of `rows` rows of `width` bytes, chunked in `chunk_rows`
  // rows with Fletcher32; `begin` starts a chunk, `end` ends one or the dataset. `data`:
  // the rows, one after the other.
  void stage(std::int64_t rows, std::int64_t chunk_rows, std::size_t width, std::int64_t begin, std::int64_t end,
             std::span<const std::uint8_t> data);

  // The staged chunks into dataset `set`, in order; a failure is a SystemError naming `where`.
  void write(hid_t set, const char* where) const;

 private:
  std::int64_t chunk_rows_ = 0;
  std::int64_t first_chunk_ = 0;
  std::size_t chunks_ = 0;
  std::size_t stored_bytes_ = 0;  // one chunk with its checksum
  std::vector<std::uint8_t> bytes_;
};

}  // namespace pleshard::detail
