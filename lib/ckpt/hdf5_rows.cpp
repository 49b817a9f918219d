#include "ckpt/hdf5_rows.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "io/detail/h5_handle.hpp"
#include "io/file_reads.hpp"

namespace pleshard::detail {

namespace {

constexpr std::size_t k_sum_bytes = 4;          // Fletcher32 after a chunk's data
constexpr std::size_t k_read_bytes = 1u << 20;  // one read at most

// The stored checksum: little-endian. HDF5 before 1.6.3 stored it with the bytes of each
// half swapped on little-endian machines; HDF5 accepts both, and so does this.
bool checksum_matches(std::span<const std::uint8_t> data, const std::uint8_t* stored) {
  const std::uint32_t sum = hdf5_fletcher32(data);
  const std::uint32_t want = static_cast<std::uint32_t>(stored[0]) | static_cast<std::uint32_t>(stored[1]) << 8 |
                             static_cast<std::uint32_t>(stored[2]) << 16 | static_cast<std::uint32_t>(stored[3]) << 24;
  const std::uint32_t swapped = ((sum & 0x00ff00ffu) << 8) | ((sum >> 8) & 0x00ff00ffu);
  return want == sum || want == swapped;
}

void add_reads(const PreadFile& file, std::uint64_t offset, std::span<std::uint8_t> out, std::vector<FileRead>& reads) {
  for (std::size_t done = 0; done < out.size(); done += k_read_bytes)
    reads.push_back({&file, offset + done, out.subspan(done, std::min(k_read_bytes, out.size() - done))});
}

}  // namespace

std::uint32_t hdf5_fletcher32(std::span<const std::uint8_t> bytes) {
  std::uint32_t sum1 = 0;
  std::uint32_t sum2 = 0;
  const auto fold = [](std::uint32_t s) { return (s & 0xffffu) + (s >> 16); };
  const std::uint8_t* p = bytes.data();
  std::size_t words = bytes.size() / 2;
  while (words != 0) {
    const std::size_t block = std::min<std::size_t>(words, 360);  // sums that cannot overflow
    words -= block;
    for (std::size_t i = 0; i < block; ++i, p += 2) {
      sum1 += static_cast<std::uint32_t>(p[0]) << 8 | p[1];
      sum2 += sum1;
    }
    sum1 = fold(sum1);
    sum2 = fold(sum2);
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
  // A user block would shift every address HDF5 gives by its size.
  H5Id fcpl(H5Fget_create_plist(file), H5Pclose);
  hsize_t user_block = 0;
  if (!fcpl.valid() || H5Pget_userblock(fcpl.get(), &user_block) < 0 || user_block != 0) return std::nullopt;
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
  const std::size_t stored = static_cast<std::size_t>(r.chunk_rows_) * width + (r.checksummed_ ? k_sum_bytes : 0);
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

void Hdf5Rows::read(const PreadFile& file, std::int64_t begin, std::int64_t end, std::uint8_t* out,
                    const std::string& where) const {
  if (end <= begin) return;
  const auto bytes_of = [this](std::int64_t n) { return static_cast<std::size_t>(n) * width_; };
  std::vector<FileRead> reads;
  if (chunk_rows_ == 0) {
    add_reads(file, offsets_.front() + bytes_of(begin), {out, bytes_of(end - begin)}, reads);
    read_files(reads, ReadPath::threads);
    return;
  }
  // Chunks inside [begin, end) land in place, their checksums beside them; the (at most
  // two) chunks that stick out land whole in a buffer of their own.
  struct Chunk {
    std::int64_t first = 0;        // its first row
    std::span<std::uint8_t> data;  // where its data lands
    std::array<std::uint8_t, k_sum_bytes> sum{};
    std::vector<std::uint8_t> whole;  // a chunk that sticks out: data and checksum
  };
  const std::int64_t c = chunk_rows_;
  const std::size_t data_bytes = bytes_of(c);
  std::vector<Chunk> chunks(static_cast<std::size_t>((end - 1) / c - begin / c + 1));
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    Chunk& k = chunks[i];
    k.first = (begin / c + static_cast<std::int64_t>(i)) * c;
    const std::uint64_t at = offsets_[static_cast<std::size_t>(k.first / c)];
    if (k.first >= begin && k.first + c <= end) {
      k.data = {out + bytes_of(k.first - begin), data_bytes};
      add_reads(file, at, k.data, reads);
      if (checksummed_) add_reads(file, at + data_bytes, k.sum, reads);
    } else {
      k.whole.resize(data_bytes + (checksummed_ ? k_sum_bytes : 0));
      k.data = std::span(k.whole).first(data_bytes);
      add_reads(file, at, k.whole, reads);
    }
  }
  read_files(reads, ReadPath::threads);
  parallel_for(chunks.size(), host_cores(), 1, [&](std::size_t i) {
    Chunk& k = chunks[i];
    const std::uint8_t* stored = k.whole.empty() ? k.sum.data() : k.whole.data() + data_bytes;
    if (checksummed_ && !checksum_matches(k.data, stored))
      throw InputError(where + ": cannot read rows [" + std::to_string(k.first) + ", " +
                       std::to_string(std::min(rows_, k.first + c)) + ") (corrupted data: checksum mismatch)");
    if (!k.whole.empty()) {
      const std::int64_t from = std::max(begin, k.first);
      const std::int64_t to = std::min(end, k.first + c);
      std::memcpy(out + bytes_of(from - begin), k.whole.data() + bytes_of(from - k.first), bytes_of(to - from));
    }
  });
}

}  // namespace pleshard::detail
