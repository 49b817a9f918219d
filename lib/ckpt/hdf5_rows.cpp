#include "ckpt/hdf5_rows.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "io/detail/h5_handle.hpp"
#include "io/file_reads.hpp"

namespace pleshard::detail {

namespace {

constexpr std::size_t k_largest_chunk = 16u << 20;

std::string file_name(hid_t file) {
  const ssize_t n = H5Fget_name(file, nullptr, 0);
  if (n <= 0) return {};
  std::string name(static_cast<std::size_t>(n) + 1, '\0');
  H5Fget_name(file, name.data(), name.size());
  name.resize(static_cast<std::size_t>(n));
  return name;
}

// The stored checksum: little-endian. HDF5 before 1.6.3 stored it with the bytes of each
// half swapped on little-endian machines; HDF5 accepts both, and so does this.
bool checksum_matches(std::span<const std::uint8_t> data, const std::uint8_t* stored) {
  const std::uint32_t sum = hdf5_fletcher32(data);
  const std::uint32_t want = stored_fletcher32(stored);
  const std::uint32_t swapped = ((sum & 0x00ff00ffu) << 8) | ((sum >> 8) & 0x00ff00ffu);
  return want == sum || want == swapped;
}

}  // namespace

std::uint32_t hdf5_fletcher32(std::span<const std::uint8_t> bytes) {
  std::uint32_t sum1 = 0;
  std::uint32_t sum2 = 0;
  const auto fold = [](std::uint32_t s) { return (s & 0xffffu) + (s >> 16); };
  const std::uint8_t* p = bytes.data();
  std::size_t words = bytes.size() / 2;
  while (words != 0) {
    // Blocks of 360 words, folded after each as HDF5 folds them. Over a block the running
    // sums end at sum1 + (w1 + ... + wk) and sum2 + k sum1 + (k w1 + (k-1) w2 + ... + wk):
    // two independent sums, which the compiler vectorizes; unsigned arithmetic wraps the
    // same whichever order it adds in, so the result is HDF5's bit for bit.
    const auto block = static_cast<std::uint32_t>(std::min<std::size_t>(words, 360));
    words -= block;
    std::uint32_t plain = 0;
    std::uint32_t weighted = 0;
    for (std::uint32_t i = 0; i < block; ++i) {
      const std::uint32_t w = static_cast<std::uint32_t>(p[2 * i]) << 8 | p[2 * i + 1];
      plain += w;
      weighted += (block - i) * w;
    }
    p += 2 * static_cast<std::size_t>(block);
    sum2 = fold(sum2 + block * sum1 + weighted);
    sum1 = fold(sum1 + plain);
  }
  if (bytes.size() % 2 != 0) {  // a last byte, as the high half of a word
    sum1 += static_cast<std::uint32_t>(*p) << 8;
    sum2 += sum1;
    sum1 = fold(sum1);
    sum2 = fold(sum2);
  }
  return fold(sum2) << 16 | fold(sum1);
}

std::optional<Hdf5Rows> Hdf5Rows::locate(hid_t file, hid_t set, std::int64_t rows, std::size_t width) {
#if H5_VERSION_GE(1, 10, 5)
  if (rows <= 0 || width == 0) return std::nullopt;
  // The offsets HDF5 gives are of the file the dataset lies in: the checkpoint's, not one an
  // external link leads to.
  H5Id home(H5Iget_file_id(set), H5Fclose);
  if (!home.valid() || file_name(home.get()) != file_name(file)) return std::nullopt;
  // A user block would shift every address HDF5 gives by its size.
  H5Id fcpl(H5Fget_create_plist(file), H5Pclose);
  hsize_t user_block = 0;
  if (!fcpl.valid() || H5Pget_userblock(fcpl.get(), &user_block) < 0 || user_block != 0) return std::nullopt;
  // Bytes as stored are what H5Dread gives only for whole unsigned bytes (it converts others).
  H5Id type(H5Dget_type(set), H5Tclose);
  if (!type.valid() || H5Tget_class(type.get()) != H5T_INTEGER || H5Tget_size(type.get()) != 1 ||
      H5Tget_sign(type.get()) != H5T_SGN_NONE || H5Tget_precision(type.get()) != 8 || H5Tget_offset(type.get()) != 0)
    return std::nullopt;
  H5Id dcpl(H5Dget_create_plist(set), H5Pclose);
  if (!dcpl.valid() || H5Pget_external_count(dcpl.get()) != 0) return std::nullopt;
  Hdf5Rows r;
  r.rows_ = rows;
  r.width_ = width;
  const H5D_layout_t layout = H5Pget_layout(dcpl.get());
  if (layout == H5D_CONTIGUOUS) {
    const haddr_t at = H5Dget_offset(set);
    if (at == HADDR_UNDEF) return std::nullopt;
    r.offsets_.push_back(at);
    return r;
  }
  if (layout != H5D_CHUNKED) return std::nullopt;
  std::array<hsize_t, 2> chunk{};
  if (H5Pget_chunk(dcpl.get(), 2, chunk.data()) != 2 || chunk[1] != width || chunk[0] == 0) return std::nullopt;
  const int filters = H5Pget_nfilters(dcpl.get());
  if (filters < 0) return std::nullopt;
  for (int f = 0; f < filters; ++f) {
    unsigned flags = 0;
    std::size_t values = 0;
    unsigned config = 0;
    if (H5Pget_filter2(dcpl.get(), static_cast<unsigned>(f), &flags, &values, nullptr, 0, nullptr, &config) !=
        H5Z_FILTER_FLETCHER32)
      return std::nullopt;
    r.checksummed_ = true;
  }
  r.chunk_rows_ = static_cast<std::int64_t>(chunk[0]);
  const std::size_t stored =
      static_cast<std::size_t>(r.chunk_rows_) * width + (r.checksummed_ ? k_fletcher32_bytes : 0);
  // A chunk that sticks out of a read is read whole into memory of its own: larger chunks
  // (not made here) go through HDF5.
  if (stored > k_largest_chunk) return std::nullopt;
  const std::int64_t chunks = (rows + r.chunk_rows_ - 1) / r.chunk_rows_;
  r.offsets_.reserve(static_cast<std::size_t>(chunks));
  for (std::int64_t k = 0; k < chunks; ++k) {
    const std::array<hsize_t, 2> origin{static_cast<hsize_t>(k * r.chunk_rows_), 0};
    unsigned skipped = 0;
    haddr_t at = HADDR_UNDEF;
    hsize_t size = 0;
    // A chunk never written (fill values), or stored with its checksum skipped.
    if (H5Dget_chunk_info_by_coord(set, origin.data(), &skipped, &at, &size) < 0 || at == HADDR_UNDEF || skipped != 0 ||
        size != stored)
      return std::nullopt;
    r.offsets_.push_back(at);
  }
  return r;
#else
  (void)file, (void)set, (void)rows, (void)width;
  return std::nullopt;
#endif
}

void Hdf5Rows::read(const PreadFile& file, std::span<const Hdf5RowsRead> reads) {
  // Pieces: rows of one chunk (contiguous: of one 1 MiB read) that a read wants.
  struct Piece {
    const Hdf5RowsRead* read;
    std::int64_t first;
    std::int64_t last;
  };
  std::vector<Piece> pieces;
  for (const Hdf5RowsRead& r : reads) {
    const Hdf5Rows& rows = *r.rows;
    const std::int64_t step =
        rows.chunk_rows_ != 0 ? rows.chunk_rows_
                              : std::max<std::int64_t>(1, static_cast<std::int64_t>(k_read_piece_bytes / rows.width_));
    for (std::int64_t first = r.begin; first < r.end;) {
      const std::int64_t last = std::min(r.end, (first / step + 1) * step);
      pieces.push_back({&r, first, last});
      first = last;
    }
  }
  parallel_for(pieces.size(), k_read_threads, 1, [&](std::size_t i) {
    const Piece& p = pieces[i];
    const Hdf5Rows& rows = *p.read->rows;
    const std::size_t width = rows.width_;
    const std::span<std::uint8_t> out{p.read->out + static_cast<std::size_t>(p.first - p.read->begin) * width,
                                      static_cast<std::size_t>(p.last - p.first) * width};
    if (rows.chunk_rows_ == 0) {
      file.read_exact(rows.offsets_.front() + static_cast<std::uint64_t>(p.first) * width, out);
      return;
    }
    const std::int64_t c = rows.chunk_rows_;
    const std::int64_t chunk = p.first / c;
    const std::uint64_t at = rows.offsets_[static_cast<std::size_t>(chunk)];
    const std::size_t data_bytes = static_cast<std::size_t>(c) * width;
    const auto verify = [&](std::span<const std::uint8_t> data, const std::uint8_t* stored) {
      if (rows.checksummed_ && !checksum_matches(data, stored))
        throw InputError(p.read->where + ": cannot read rows [" + std::to_string(chunk * c) + ", " +
                         std::to_string(std::min(rows.rows_, (chunk + 1) * c)) +
                         ") (corrupted data: checksum mismatch)");
    };
    if (out.size() == data_bytes) {  // the whole chunk: in place, its checksum beside it
      std::array<std::uint8_t, k_fletcher32_bytes> sum{};
      file.read_exact(at, out);
      if (rows.checksummed_) file.read_exact(at + data_bytes, sum);
      verify(out, sum.data());
      return;
    }
    std::vector<std::uint8_t> whole(data_bytes + (rows.checksummed_ ? k_fletcher32_bytes : 0));
    file.read_exact(at, whole);
    verify(std::span(whole).first(data_bytes), whole.data() + data_bytes);
    std::memcpy(out.data(), whole.data() + static_cast<std::size_t>(p.first - chunk * c) * width, out.size());
  });
}

void Hdf5Rows::add_reads(const PreadFile& file, std::int64_t first, std::int64_t count, std::span<std::uint8_t> out,
                         std::vector<FileRead>& reads) const {
  if (first < 0 || count < 0 || first + count > rows_ || out.size() < static_cast<std::size_t>(count) * width_)
    throw SystemError(file.path() + ": rows [" + std::to_string(first) + ", " + std::to_string(first + count) +
                      ") outside a dataset of " + std::to_string(rows_) + " rows, or no room for them");
  for (std::int64_t row = first; row < first + count;) {
    // The rows of this chunk (contiguous: of the dataset), from its offset in the file.
    const std::int64_t chunk = chunk_rows_ != 0 ? row / chunk_rows_ : 0;
    const std::int64_t chunk_first = chunk * chunk_rows_;
    const std::int64_t stop = chunk_rows_ != 0 ? std::min(first + count, chunk_first + chunk_rows_) : first + count;
    const std::uint64_t at =
        offsets_[static_cast<std::size_t>(chunk)] + static_cast<std::uint64_t>(row - chunk_first) * width_;
    const std::span<std::uint8_t> bytes =
        out.subspan(static_cast<std::size_t>(row - first) * width_, static_cast<std::size_t>(stop - row) * width_);
    for (std::size_t done = 0; done < bytes.size(); done += k_read_piece_bytes)
      reads.push_back({&file, at + done, bytes.subspan(done, std::min(k_read_piece_bytes, bytes.size() - done))});
    row = stop;
  }
}

}  // namespace pleshard::detail
