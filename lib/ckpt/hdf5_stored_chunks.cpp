#include "ckpt/hdf5_stored_chunks.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "ckpt/hdf5_rows.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"

#if !H5_VERSION_GE(1, 10, 3)
#error "pleshard needs HDF5 1.10.3 or later (H5Dwrite_chunk)"
#endif

namespace pleshard::detail {

namespace {
constexpr std::uint64_t k_index_entry_bytes = 32;  // a chunk's address, size and filter mask, with room
}  // namespace

std::uint64_t Hdf5StoredChunks::file_bytes(std::int64_t rows, std::int64_t chunk_rows, std::size_t width) {
  if (rows <= 0 || width == 0) return 0;
  const auto chunks = static_cast<std::uint64_t>((rows + chunk_rows - 1) / chunk_rows);
  return chunks * (static_cast<std::uint64_t>(chunk_rows) * width + k_fletcher32_bytes + k_index_entry_bytes);
}

void Hdf5StoredChunks::stage(std::int64_t rows, std::int64_t chunk_rows, std::size_t width, std::int64_t begin,
                             std::int64_t end, std::span<const std::uint8_t> data) {
  if (chunk_rows <= 0 || begin < 0 || begin > end || end > rows || begin % chunk_rows != 0 ||
      (end % chunk_rows != 0 && end != rows) || data.size() != static_cast<std::size_t>(end - begin) * width)
    throw SystemError("HDF5 chunks: rows [" + std::to_string(begin) + ", " + std::to_string(end) +
                      ") are not whole chunks of " + std::to_string(chunk_rows) + " rows");
  rows_ = rows;
  chunk_rows_ = chunk_rows;
  first_chunk_ = begin / chunk_rows;
  chunks_ = static_cast<std::size_t>((end - begin + chunk_rows - 1) / chunk_rows);
  const std::size_t data_bytes = static_cast<std::size_t>(chunk_rows) * width;
  stored_bytes_ = data_bytes + k_fletcher32_bytes;
  bytes_.resize(chunks_ * stored_bytes_);
  parallel_for(chunks_, host_threads(), 1, [&](std::size_t k) {
    std::uint8_t* chunk = bytes_.data() + k * stored_bytes_;
    const std::size_t offset = k * data_bytes;
    const std::size_t n = std::min(data_bytes, data.size() - offset);
    std::memcpy(chunk, data.data() + offset, n);
    std::memset(chunk + n, 0, data_bytes - n);  // past the dataset's last row, as HDF5 fills it
    store_fletcher32(hdf5_fletcher32(std::span<const std::uint8_t>(chunk, data_bytes)), chunk + data_bytes);
  });
}

void Hdf5StoredChunks::write(hid_t set, const char* where) const {
  for (std::size_t k = 0; k < chunks_; ++k) {
    const auto first = (first_chunk_ + static_cast<std::int64_t>(k)) * chunk_rows_;
    const std::array<hsize_t, 2> origin{static_cast<hsize_t>(first), 0};
    // Filter mask 0: every filter of the dataset (Fletcher32) was applied.
    if (H5Dwrite_chunk(set, H5P_DEFAULT, 0, origin.data(), stored_bytes_, bytes_.data() + k * stored_bytes_) < 0)
      throw SystemError(std::string(where) + ": writing rows [" + std::to_string(first) + ", " +
                        std::to_string(std::min(rows_, first + chunk_rows_)) + ") failed (disk full?)");
  }
}

}  // namespace pleshard::detail
