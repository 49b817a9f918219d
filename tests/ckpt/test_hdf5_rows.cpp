// Rows of HDF5 datasets read past the library (ckpt/hdf5_rows): the Fletcher32 checksum
// against the one HDF5's filter stored, and reads of every storage a table may have — chunked
// with and without the checksum, contiguous, chunk counts that do not divide the rows —
// against H5Dread of the same rows, over ranges that start and end inside chunks, several
// at once. Storage that must go through HDF5 (compressed, chunked across a row, chunks never
// written or stored without their checksum, signed bytes, a user block, another file behind
// an external link) is not located; a checkpoint with such a table still reads the same
// bytes; a flipped byte fails its checksum, a truncated file is an error naming it. Chunks
// laid out here and placed by HDF5's direct chunk write (ckpt/hdf5_stored_chunks) are stored
// byte for byte as H5Dwrite stores them, and read back through HDF5's own filter.

#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/hdf5_rows.hpp"
#include "ckpt/hdf5_stored_chunks.hpp"
#include "ckpt/ple_checkpoint.hpp"
#include "ckpt/synthetic.hpp"
#include "core/error.hpp"
#include "io/file_reads.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;
using pleshard::detail::Hdf5Rows;
namespace fs = std::filesystem;

std::vector<std::uint8_t> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(gen());
  return v;
}

std::vector<std::uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_file(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void read_one(const PreadFile& file, const Hdf5Rows& rows, std::int64_t begin, std::int64_t end, std::uint8_t* out,
              const std::string& where) {
  const detail::Hdf5RowsRead read{&rows, begin, end, out, where};
  Hdf5Rows::read(file, {&read, 1});
}

// A file with one u8 dataset "rows" of rows x width bytes, stored as `dcpl` says.
class OneDataset {
 public:
  OneDataset(const fs::path& path, std::int64_t rows, std::size_t width, hid_t dcpl, bool write = true)
      : OneDataset(path, rows, width, dcpl, random_bytes(static_cast<std::size_t>(rows) * width, 7), write) {}
  OneDataset(const fs::path& path, std::int64_t rows, std::size_t width, hid_t dcpl, std::vector<std::uint8_t> bytes,
             bool write = true, hid_t type = H5T_STD_U8LE, hid_t fcpl = H5P_DEFAULT)
      : path_(path), rows_(rows), width_(width), bytes_(std::move(bytes)) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    const hsize_t dims[2] = {static_cast<hsize_t>(rows), width};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t set = H5Dcreate2(file, "rows", type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    EXPECT_GE(set, 0);
    if (write) {
      EXPECT_GE(H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes_.data()), 0);
    }
    H5Dclose(set);
    H5Sclose(space);
    H5Fclose(file);
    file_ = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    set_ = H5Dopen2(file_, "rows", H5P_DEFAULT);
  }
  ~OneDataset() {
    H5Dclose(set_);
    H5Fclose(file_);
  }
  OneDataset(const OneDataset&) = delete;
  OneDataset& operator=(const OneDataset&) = delete;

  [[nodiscard]] std::optional<Hdf5Rows> locate() const { return Hdf5Rows::locate(file_, set_, rows_, width_); }
  [[nodiscard]] hid_t set() const { return set_; }
  [[nodiscard]] const std::vector<std::uint8_t>& bytes() const { return bytes_; }

  // Rows [begin, end) read past HDF5 match the bytes written, over many ranges.
  void expect_reads_match(const Hdf5Rows& rows) const {
    const PreadFile file(path_);
    std::mt19937 gen(3);
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges{{0, rows_}, {0, 1}, {rows_ - 1, rows_}, {5, 5}};
    for (int i = 0; i < 40; ++i) {
      const std::int64_t a = std::uniform_int_distribution<std::int64_t>(0, rows_)(gen);
      const std::int64_t b = std::uniform_int_distribution<std::int64_t>(0, rows_)(gen);
      ranges.emplace_back(std::min(a, b), std::max(a, b));
    }
    for (const auto& [begin, end] : ranges) {
      std::vector<std::uint8_t> out(static_cast<std::size_t>(end - begin) * width_ + 1, 0xee);
      read_one(file, rows, begin, end, out.data(), "rows");
      const auto from = bytes_.begin() + begin * static_cast<std::int64_t>(width_);
      ASSERT_TRUE(std::equal(from, from + (end - begin) * static_cast<std::int64_t>(width_), out.begin()))
          << "[" << begin << ", " << end << ")";
      EXPECT_EQ(out.back(), 0xee) << "wrote past [" << begin << ", " << end << ")";
      // The same rows as plain file reads (the disk tier's steps): none across a chunk, whose
      // checksum lies between it and the next, and none past the range.
      std::fill(out.begin(), out.end(), 0xee);
      std::vector<FileRead> reads;
      rows.add_reads(file, begin, end - begin, {out.data(), out.size() - 1}, reads);
      read_files(reads);
      ASSERT_TRUE(std::equal(from, from + (end - begin) * static_cast<std::int64_t>(width_), out.begin()))
          << "[" << begin << ", " << end << ") as file reads";
      EXPECT_EQ(out.back(), 0xee) << "file reads wrote past [" << begin << ", " << end << ")";
    }
  }

 private:
  fs::path path_;
  std::int64_t rows_;
  std::size_t width_;
  std::vector<std::uint8_t> bytes_;
  hid_t file_ = -1;
  hid_t set_ = -1;
};

hid_t chunked(hsize_t chunk_rows, hsize_t chunk_width, bool fletcher, bool deflate = false) {
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  const hsize_t chunk[2] = {chunk_rows, chunk_width};
  H5Pset_chunk(dcpl, 2, chunk);
  if (fletcher) H5Pset_fletcher32(dcpl);
  if (deflate) H5Pset_deflate(dcpl, 1);
  return dcpl;
}

class Hdf5RowsTest : public ::testing::Test {
 protected:
  // A file of 64 rows of 10 random bytes (seed 7) in checksummed chunks of 16 rows, closed
  // again: where its rows lie.
  static std::optional<Hdf5Rows> closed_file(const fs::path& path) {
    const hid_t dcpl = chunked(16, 10, true);
    const OneDataset data(path, 64, 10, dcpl);
    H5Pclose(dcpl);
    return data.locate();
  }

  static void expect_located_reads_match(const fs::path& path, std::int64_t rows, std::size_t width, hid_t dcpl) {
    SCOPED_TRACE(path.filename().string() + ", " + std::to_string(rows) + " x " + std::to_string(width));
    const OneDataset data(path, rows, width, dcpl);
    const auto located = data.locate();
    ASSERT_TRUE(located.has_value());
    data.expect_reads_match(*located);
  }

  ScratchDir dir_;
};

TEST(Hdf5Fletcher32, MatchesTheChecksumHdf5Stored) {
  ScratchDir dir;
  // Chunks of odd and even byte counts, of fewer and more than 360 words.
  for (const auto& [rows, width] :
       std::vector<std::pair<hsize_t, std::size_t>>{{3, 7}, {4, 9}, {64, 33}, {1, 2}, {1000, 17}, {4096, 256}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(width));
    const hid_t dcpl = chunked(rows, width, true);
    // Random bytes, then all ones: the sums at their largest.
    for (const bool ones : {false, true}) {
      auto bytes = random_bytes(rows * 5 * width, 11);
      if (ones) std::fill(bytes.begin(), bytes.end(), 0xff);
      const OneDataset data(dir / "f.h5", static_cast<std::int64_t>(rows * 5), width, dcpl, bytes);
      for (hsize_t k = 0; k < 5; ++k) {
        const hsize_t origin[2] = {k * rows, 0};
        std::vector<std::uint8_t> stored(rows * width + 4);
        std::uint32_t mask = 0;
        ASSERT_GE(H5Dread_chunk(data.set(), H5P_DEFAULT, origin, &mask, stored.data()), 0);
        const std::uint32_t sum = detail::hdf5_fletcher32(std::span(stored).first(rows * width));
        const std::uint32_t want = stored[rows * width] | stored[rows * width + 1] << 8 |
                                   stored[rows * width + 2] << 16 |
                                   static_cast<std::uint32_t>(stored[rows * width + 3]) << 24;
        EXPECT_EQ(sum, want) << "chunk " << k << (ones ? " of ones" : "");
      }
    }
    H5Pclose(dcpl);
  }
}

TEST_F(Hdf5RowsTest, ChunkedWithChecksumsReadsAsWritten) {
  const hid_t dcpl = chunked(16, 10, true);
  expect_located_reads_match(dir_ / "c.h5", 16 * 9 + 5, 10, dcpl);  // the last chunk sticks out
  H5Pclose(dcpl);
}

TEST_F(Hdf5RowsTest, ChunkedWithoutChecksumsAndContiguousReadAsWritten) {
  const hid_t plain = chunked(7, 12, false);
  expect_located_reads_match(dir_ / "u.h5", 100, 12, plain);
  H5Pclose(plain);
  // Contiguous: small, and 3 MB of rows of 1000 bytes (reads of 1 MiB that end inside rows).
  const hid_t contiguous = H5Pcreate(H5P_DATASET_CREATE);
  expect_located_reads_match(dir_ / "w.h5", 100, 12, contiguous);
  expect_located_reads_match(dir_ / "w.h5", 3000, 1000, contiguous);
  H5Pclose(contiguous);
}

TEST_F(Hdf5RowsTest, SeveralReadsInOneCallEachGetTheirRows) {
  const hid_t dcpl = chunked(16, 10, true);
  const OneDataset data(dir_ / "two.h5", 200, 10, dcpl);
  H5Pclose(dcpl);
  const auto rows = data.locate();
  ASSERT_TRUE(rows.has_value());
  std::vector<std::uint8_t> a(70 * 10), b(33 * 10);
  const std::vector<detail::Hdf5RowsRead> reads{{&*rows, 5, 75, a.data(), "a"}, {&*rows, 160, 193, b.data(), "b"}};
  Hdf5Rows::read(PreadFile(dir_ / "two.h5"), reads);
  EXPECT_TRUE(std::equal(a.begin(), a.end(), data.bytes().begin() + 50));
  EXPECT_TRUE(std::equal(b.begin(), b.end(), data.bytes().begin() + 1600));
}

TEST_F(Hdf5RowsTest, StorageThatNeedsHdf5IsNotLocated) {
  if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {
    const hid_t deflated = chunked(8, 10, true, true);
    const OneDataset d(dir_ / "d.h5", 64, 10, deflated);
    H5Pclose(deflated);
    EXPECT_FALSE(d.locate().has_value());
  }
  const hid_t split = chunked(8, 5, true);  // a chunk holds half a row
  const OneDataset s(dir_ / "s.h5", 64, 10, split);
  H5Pclose(split);
  EXPECT_FALSE(s.locate().has_value());
  const hid_t unwritten = chunked(8, 10, true);  // no chunk allocated
  const OneDataset n(dir_ / "n.h5", 64, 10, unwritten, false);
  EXPECT_FALSE(n.locate().has_value());
  // Signed bytes: H5Dread converts them.
  const OneDataset i8(dir_ / "i8.h5", 64, 10, unwritten, random_bytes(640, 5), true, H5T_STD_I8LE);
  EXPECT_FALSE(i8.locate().has_value());
  // A user block shifts the file's addresses.
  const hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  H5Pset_userblock(fcpl, 512);
  const OneDataset user(dir_ / "ub.h5", 64, 10, unwritten, random_bytes(640, 5), true, H5T_STD_U8LE, fcpl);
  H5Pclose(fcpl);
  EXPECT_FALSE(user.locate().has_value());
  // A chunk stored with its checksum skipped (filter mask 1, no checksum after it).
  {
    const hid_t file = H5Fcreate((dir_ / "sk.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t dims[2] = {64, 10};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t set = H5Dcreate2(file, "rows", H5T_STD_U8LE, space, H5P_DEFAULT, unwritten, H5P_DEFAULT);
    const std::vector<std::uint8_t> chunk(80, 7);
    for (hsize_t k = 0; k < 8; ++k) {
      const hsize_t origin[2] = {k * 8, 0};
      EXPECT_GE(H5Dwrite_chunk(set, H5P_DEFAULT, 1, origin, chunk.size(), chunk.data()), 0);
    }
    EXPECT_FALSE(Hdf5Rows::locate(file, set, 64, 10).has_value());
    H5Dclose(set);
    H5Sclose(space);
    H5Fclose(file);
  }
  H5Pclose(unwritten);
}

TEST_F(Hdf5RowsTest, ADatasetReachedThroughAnExternalLinkIsNotLocated) {
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);  // contiguous: the offset is the other file's
  { const OneDataset target(dir_ / "target.h5", 64, 10, dcpl); }
  H5Pclose(dcpl);
  const hid_t file = H5Fcreate((dir_ / "link.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(H5Lcreate_external((dir_ / "target.h5").c_str(), "rows", file, "rows", H5P_DEFAULT, H5P_DEFAULT), 0);
  const hid_t set = H5Dopen2(file, "rows", H5P_DEFAULT);
  ASSERT_GE(set, 0);
  EXPECT_FALSE(Hdf5Rows::locate(file, set, 64, 10).has_value());
  H5Dclose(set);
  H5Fclose(file);
}

TEST_F(Hdf5RowsTest, AFileTruncatedAfterItOpenedIsAnErrorNamingIt) {
  const fs::path path = dir_ / "t.h5";
  const std::optional<Hdf5Rows> rows = closed_file(path);
  ASSERT_TRUE(rows.has_value());
  const PreadFile pread(path);
  fs::resize_file(path, fs::file_size(path) / 2);
  std::vector<std::uint8_t> out(64 * 10);
  try {
    read_one(pread, *rows, 0, 64, out.data(), "t.h5: /rows");
    ADD_FAILURE() << "read a truncated file";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

TEST_F(Hdf5RowsTest, AFlippedByteFailsItsChunksChecksumNamingTheRows) {
  const fs::path path = dir_ / "x.h5";
  const std::optional<Hdf5Rows> rows = closed_file(path);
  ASSERT_TRUE(rows.has_value());
  // Row 37 lies in the third chunk, rows [32, 48).
  const std::vector<std::uint8_t> bytes = random_bytes(64 * 10, 7);
  std::vector<std::uint8_t> file = read_file(path);
  const auto at = std::search(file.begin(), file.end(), bytes.begin() + 370, bytes.begin() + 380);
  ASSERT_NE(at, file.end());
  *(at + 3) ^= 0x10;
  write_file(path, file);
  const PreadFile pread(path);
  std::vector<std::uint8_t> out(64 * 10);
  EXPECT_NO_THROW(read_one(pread, *rows, 0, 32, out.data(), "x.h5: /rows"));
  try {
    read_one(pread, *rows, 30, 40, out.data(), "x.h5: /rows");
    ADD_FAILURE() << "read a corrupted chunk";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("x.h5: /rows: cannot read rows [32, 48) (corrupted data: checksum mismatch)"),
              std::string::npos)
        << e.what();
  }
}

// A checkpoint whose table went through another tool (rows deflated, or stored as signed
// bytes): read through HDF5, the same bytes as from the file as made.
TEST_F(Hdf5RowsTest, ACheckpointWithATableStoredOtherwiseReadsTheSameBytes) {
  const ModelConfig config = small_config("float8_e4m3fn");
  const fs::path made = dir_ / "made.h5";
  write_checkpoint(made, config, synthetic_tables(config, RowFormat::fp8, 1), {CheckpointKind::hdf5});
  std::int64_t rows = 0;
  std::size_t width = 0;
  // A step's rows (the disk tier's read_row_sets): runs, rows a few apart (read as one span)
  // and far apart; each checkpoint's must be the table's rows.
  std::vector<std::int64_t> step_rows;
  const auto expect_step_rows = [&](const PleCheckpoint& c, const std::vector<std::uint8_t>& all) {
    std::vector<std::uint8_t> got(step_rows.size() * width);
    const PleCheckpoint::RowSet set{0, step_rows, got, {}};
    for (const PageCache cache : {PageCache::use, PageCache::bypass}) {
      std::fill(got.begin(), got.end(), 0xee);
      c.read_row_sets({&set, 1}, cache);
      for (std::size_t i = 0; i < step_rows.size(); ++i)
        ASSERT_TRUE(std::equal(got.begin() + static_cast<std::ptrdiff_t>(i * width),
                               got.begin() + static_cast<std::ptrdiff_t>((i + 1) * width),
                               all.begin() + step_rows[i] * static_cast<std::int64_t>(width)))
            << "row " << step_rows[i] << ", " << to_string(cache);
    }
  };
  {
    const auto c = open_ple_checkpoint(made, config);
    rows = c->table(0).layout.rows;
    width = c->table(0).layout.row_bytes();
    EXPECT_GT(c->table_source(0).chunk_rows, 0);  // located: its chunks are known
    // Its steps' rows read as plain reads of the file, from any thread.
    EXPECT_TRUE(c->reads_row_sets_on_any_thread());
    std::mt19937_64 rng(17);
    for (std::int64_t r = 0; r < rows; r += 1 + static_cast<std::int64_t>(rng() % 40))
      for (std::int64_t k = 0; k < 1 + static_cast<std::int64_t>(rng() % 3) && r < rows; ++k) step_rows.push_back(r++);
    std::vector<std::uint8_t> all(static_cast<std::size_t>(rows) * width);
    c->read_rows(0, 0, rows, all, {});
    expect_step_rows(*c, all);
  }
  const bool deflate = H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0;
  for (const bool signed_bytes : {false, true}) {
    if (!signed_bytes && !deflate) continue;  // HDF5 built without deflate
    SCOPED_TRACE(signed_bytes ? "signed bytes" : "deflated");
    const fs::path other = dir_ / "other.h5";
    fs::remove(other);
    fs::copy_file(made, other);
    std::vector<std::uint8_t> all(static_cast<std::size_t>(rows) * width);
    {
      H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
      const hid_t file = H5Fopen(other.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
      const hid_t old = H5Dopen2(file, "/ple/0/weight", H5P_DEFAULT);
      ASSERT_GE(H5Dread(old, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, all.data()), 0);
      H5Dclose(old);
      H5Ldelete(file, "/ple/0/weight", H5P_DEFAULT);
      const hsize_t dims[2] = {static_cast<hsize_t>(rows), width};
      const hid_t space = H5Screate_simple(2, dims, nullptr);
      const hid_t dcpl = chunked(100, width, true, !signed_bytes);
      const hid_t type = signed_bytes ? H5T_STD_I8LE : H5T_STD_U8LE;
      const hid_t set = H5Dcreate2(file, "/ple/0/weight", type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
      ASSERT_GE(H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, all.data()), 0);  // the bytes, unconverted
      H5Dclose(set);
      H5Pclose(dcpl);
      H5Sclose(space);
      H5Fclose(file);
    }
    const auto c = open_ple_checkpoint(other, config);
    EXPECT_EQ(c->table_source(0).chunk_rows, 0);  // read through HDF5
    EXPECT_FALSE(c->reads_row_sets_on_any_thread());
    expect_step_rows(*c, all);
    std::vector<std::uint8_t> out(all.size());
    std::vector<std::uint8_t> none;
    c->read_rows(0, 0, rows, out, none);
    EXPECT_EQ(out, all);
    c->read_rows(0, 150, 333, std::span(out).first(183 * width), none);
    EXPECT_TRUE(std::equal(out.begin(), out.begin() + 183 * static_cast<std::int64_t>(width),
                           all.begin() + 150 * static_cast<std::int64_t>(width)));
  }
}

// Rows written in bands as staged chunks (the last chunk short of rows) against the same
// rows through H5Dwrite: every stored chunk, checksum and zero padding included, the same;
// H5Dread, which verifies each checksum in HDF5's filter, gives the rows back.
TEST(Hdf5StoredChunks, AreStoredAsH5DwriteStoresThem) {
  ScratchDir dir;
  for (const auto& [rows, width, chunk] : std::vector<std::tuple<std::int64_t, std::size_t, hsize_t>>{
           {1000, 33, 64}, {640, 10, 64}, {5, 7, 5}, {7, 3, 4}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(width) + " in chunks of " + std::to_string(chunk));
    const auto bytes = random_bytes(static_cast<std::size_t>(rows) * width, 5);
    const hid_t dcpl = chunked(chunk, width, true);
    const OneDataset reference(dir / "reference.h5", rows, width, dcpl, bytes);
    const fs::path staged = dir / "staged.h5";
    { const OneDataset empty(staged, rows, width, dcpl, bytes, false); }
    {
      const hid_t file = H5Fopen(staged.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
      const hid_t set = H5Dopen2(file, "rows", H5P_DEFAULT);
      const auto c = static_cast<std::int64_t>(chunk);
      const std::int64_t band = 3 * c;
      detail::Hdf5StoredChunks chunks;
      for (std::int64_t begin = 0; begin < rows; begin += band) {
        const std::int64_t end = std::min(rows, begin + band);
        chunks.stage(rows, c, width, begin, end,
                     std::span(bytes).subspan(static_cast<std::size_t>(begin) * width,
                                              static_cast<std::size_t>(end - begin) * width));
        chunks.write(set, "staged");
      }
      H5Dclose(set);
      H5Fclose(file);
    }
    const hid_t file = H5Fopen(staged.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t set = H5Dopen2(file, "rows", H5P_DEFAULT);
    const auto chunks = static_cast<hsize_t>((rows + static_cast<std::int64_t>(chunk) - 1) / chunk);
    for (hsize_t k = 0; k < chunks; ++k) {
      const hsize_t origin[2] = {k * chunk, 0};
      std::vector<std::uint8_t> want(chunk * width + 4, 1), got(chunk * width + 4, 2);
      std::uint32_t want_mask = 9, got_mask = 9;
      ASSERT_GE(H5Dread_chunk(reference.set(), H5P_DEFAULT, origin, &want_mask, want.data()), 0);
      ASSERT_GE(H5Dread_chunk(set, H5P_DEFAULT, origin, &got_mask, got.data()), 0);
      EXPECT_EQ(got_mask, want_mask);
      EXPECT_TRUE(got == want) << "chunk " << k;
    }
    std::vector<std::uint8_t> back(bytes.size());
    EXPECT_GE(H5Dread(set, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()), 0);
    EXPECT_EQ(back, bytes);
    // What the free-space check counts covers the chunks as stored.
    EXPECT_EQ(H5Dget_storage_size(set), chunks * (chunk * width + detail::k_fletcher32_bytes));
    EXPECT_GE(detail::Hdf5StoredChunks::file_bytes(rows, static_cast<std::int64_t>(chunk), width),
              H5Dget_storage_size(set));
    const auto located = Hdf5Rows::locate(file, set, rows, width);
    ASSERT_TRUE(located.has_value());
    const PreadFile pread(staged);
    for (const auto& [begin, end] : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, rows}, {1, rows - 1}}) {
      std::vector<std::uint8_t> part(static_cast<std::size_t>(end - begin) * width);
      read_one(pread, *located, begin, end, part.data(), "staged");
      EXPECT_TRUE(std::equal(part.begin(), part.end(), bytes.begin() + begin * static_cast<std::int64_t>(width)))
          << "[" << begin << ", " << end << ")";
    }
    H5Dclose(set);
    H5Fclose(file);
    H5Pclose(dcpl);
  }
}

// Rows that are not whole chunks of the dataset (a band starting or ending inside one, or
// outside the dataset) cannot be staged.
TEST(Hdf5StoredChunks, RowsThatAreNotWholeChunksAreRefused) {
  detail::Hdf5StoredChunks chunks;
  const std::vector<std::uint8_t> bytes(100 * 4);
  EXPECT_THROW(chunks.stage(200, 16, 4, 8, 108, bytes), SystemError);                        // starts inside a chunk
  EXPECT_THROW(chunks.stage(200, 16, 4, 0, 100, bytes), SystemError);                        // ends inside one
  EXPECT_THROW(chunks.stage(100, 16, 4, 0, 100, std::span(bytes).first(396)), SystemError);  // bytes short
  const std::vector<std::uint8_t> chunk(16 * 4);
  EXPECT_THROW(chunks.stage(100, 16, 4, 96, 112, chunk), SystemError);  // past the dataset's end
  EXPECT_THROW(chunks.stage(100, 16, 4, -16, 0, chunk), SystemError);   // before its start
  EXPECT_NO_THROW(chunks.stage(100, 16, 4, 0, 100, bytes));             // ends with the dataset
}

}  // namespace
