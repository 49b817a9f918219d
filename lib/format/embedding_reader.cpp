#include "format/embedding_reader.hpp"

#include <algorithm>

#include "io/detail/h5_handle.hpp"
#include "io/file_checks.hpp"
#include "io/file_reads.hpp"

namespace pleshard {

namespace {

using detail::h5_check;
using detail::H5Id;

// Where a dataset's values lie in the file, read as they are by pread: contiguous storage in
// the file itself (not an external one), with no user block shifting HDF5's addresses.
std::optional<std::uint64_t> contiguous_offset(hid_t file, hid_t set) {
  H5Id fcpl(H5Fget_create_plist(file), H5Pclose);
  hsize_t user_block = 0;
  if (!fcpl.valid() || H5Pget_userblock(fcpl.get(), &user_block) < 0 || user_block != 0) return std::nullopt;
  H5Id dcpl(H5Dget_create_plist(set), H5Pclose);
  if (!dcpl.valid() || H5Pget_layout(dcpl.get()) != H5D_CONTIGUOUS || H5Pget_external_count(dcpl.get()) != 0)
    return std::nullopt;
  const haddr_t at = H5Dget_offset(set);
  if (at == HADDR_UNDEF) return std::nullopt;
  return static_cast<std::uint64_t>(at);
}

}  // namespace

std::size_t EmbeddingLayerShape::token_bytes() const {
  return static_cast<std::size_t>(width) * kernels::out_bytes(dtype);
}

struct EmbeddingReader::Hdf5 {
  H5Id file;
  std::vector<H5Id> sets;
  std::unique_ptr<PreadFile> preads;
};

EmbeddingReader::EmbeddingReader(const std::filesystem::path& path) : path_(path.string()), hdf5_(new Hdf5) {
  detail::quiet_hdf5();
  require_regular_file(path, "embedding output");
  const auto refused = [&](const std::string& why) { return InputError(path_ + ": not an embedding output: " + why); };
  hdf5_->file = H5Id(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!hdf5_->file.valid()) throw refused("not an HDF5 file");
  const hid_t file = hdf5_->file.get();
  if (H5Lexists(file, "query_start_loc", H5P_DEFAULT) <= 0) throw refused("no /query_start_loc");
  query_start_loc_ = detail::read_int64s(file, "query_start_loc", path_);
  if (query_start_loc_.empty()) throw refused("/query_start_loc is empty");
  if (H5Lexists(file, "request_ids", H5P_DEFAULT) > 0) request_ids_ = detail::read_strings(file, "request_ids", path_);
  for (int d = 0;; ++d) {
    const std::string name = "ple_" + std::to_string(d);
    if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0) break;
    const std::string where = "/" + name;
    H5Id set = h5_check(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose, path_ + ": cannot open " + where);
    H5Id space(H5Dget_space(set.get()), H5Sclose);
    hsize_t dims[2] = {0, 0};
    if (!space.valid() || H5Sget_simple_extent_ndims(space.get()) != 2 ||
        H5Sget_simple_extent_dims(space.get(), dims, nullptr) != 2)
      throw refused(where + " is not [tokens, width]");
    if (H5Aexists(set.get(), "dtype") <= 0) throw refused(where + " has no attribute dtype");
    const std::string dtype = detail::read_string_attribute(set.get(), "dtype", path_);
    const std::optional<OutDtype> named = out_dtype_named(dtype);
    if (!named) throw refused(where + "'s dtype \"" + quoted_value(dtype) + "\" is none of float32, bfloat16, float16");
    EmbeddingLayerShape shape{static_cast<std::int64_t>(dims[0]), static_cast<std::int64_t>(dims[1]), *named};
    H5Id type(H5Dget_type(set.get()), H5Tclose);
    if (!type.valid() || H5Tget_class(type.get()) != H5T_FLOAT || H5Tget_order(type.get()) != H5T_ORDER_LE ||
        H5Tget_size(type.get()) != kernels::out_bytes(shape.dtype))
      throw refused(where + "'s values are not the little-endian " + dtype + " its dtype says");
    if (shape.tokens != query_start_loc_.back())
      throw refused(where + " holds " + std::to_string(shape.tokens) + " tokens, /query_start_loc ends at " +
                    std::to_string(query_start_loc_.back()));
    layers_.push_back(shape);
    offsets_.push_back(shape.tokens > 0 ? contiguous_offset(file, set.get()) : std::nullopt);
    hdf5_->sets.push_back(std::move(set));
  }
  if (layers_.empty()) throw refused("no /ple_0");
  if (std::any_of(offsets_.begin(), offsets_.end(), [](const auto& at) { return at.has_value(); }))
    hdf5_->preads = std::make_unique<PreadFile>(path);
}

EmbeddingReader::~EmbeddingReader() = default;

const EmbeddingLayerShape& EmbeddingReader::layer(int d) const {
  if (d < 0 || d >= layers())
    throw InputError(path_ + ": no table " + std::to_string(d) + "; the output holds " + std::to_string(layers()) +
                     " (0 to " + std::to_string(layers() - 1) + ")");
  return layers_[static_cast<std::size_t>(d)];
}

bool EmbeddingReader::read_past_hdf5(int d) const {
  return layer(d).tokens == 0 || offsets_[static_cast<std::size_t>(d)].has_value();
}

void EmbeddingReader::read_rows(int d, std::int64_t first, std::span<std::uint8_t> out) const {
  const EmbeddingLayerShape& shape = layer(d);
  const std::size_t token_bytes = shape.token_bytes();
  const auto count = static_cast<std::int64_t>(out.size() / token_bytes);
  if (out.size() % token_bytes != 0 || first < 0 || count > shape.tokens - first)
    throw InputError(path_ + ": /ple_" + std::to_string(d) + " holds tokens 0 to " + std::to_string(shape.tokens) +
                     ", not " + std::to_string(first) + " to " + std::to_string(first + count));
  if (count == 0) return;
  if (const auto& at = offsets_[static_cast<std::size_t>(d)]) {
    const std::uint64_t offset = *at + static_cast<std::uint64_t>(first) * token_bytes;
    std::vector<FileRead> reads;
    for (std::size_t done = 0; done < out.size(); done += k_read_piece_bytes)
      reads.push_back(
          {hdf5_->preads.get(), offset + done, out.subspan(done, std::min(k_read_piece_bytes, out.size() - done))});
    read_files(reads, ReadPath::threads);
    return;
  }
  // The dataset's own type in memory: HDF5 copies the values as stored.
  const hid_t set = hdf5_->sets[static_cast<std::size_t>(d)].get();
  H5Id type = h5_check(H5Dget_type(set), H5Tclose, path_ + ": /ple_" + std::to_string(d));
  H5Id file_space = h5_check(H5Dget_space(set), H5Sclose, path_ + ": /ple_" + std::to_string(d));
  const hsize_t start[2] = {static_cast<hsize_t>(first), 0};
  const hsize_t rows[2] = {static_cast<hsize_t>(count), static_cast<hsize_t>(shape.width)};
  h5_check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, rows, nullptr), "H5Sselect_hyperslab");
  H5Id memory_space = h5_check(H5Screate_simple(2, rows, nullptr), H5Sclose, "H5Screate_simple");
  h5_check(H5Dread(set, type.get(), memory_space.get(), file_space.get(), H5P_DEFAULT, out.data()),
           path_ + ": cannot read /ple_" + std::to_string(d));
}

EmbeddingFile read_embeddings_h5(const std::filesystem::path& path, int layers, OutDtype dtype) {
  const EmbeddingReader reader(path);
  if (reader.layers() < layers)
    throw InputError(reader.path() + ": holds " + std::to_string(reader.layers()) + " tables, expected " +
                     std::to_string(layers));
  EmbeddingFile out;
  out.query_start_loc = reader.query_start_loc();
  out.request_ids = reader.request_ids().value_or(std::vector<std::string>());
  for (int d = 0; d < layers; ++d) {
    const EmbeddingLayerShape& shape = reader.layer(d);
    if (shape.dtype != dtype)
      throw InputError(reader.path() + ": /ple_" + std::to_string(d) + " is " + to_string(shape.dtype) + ", expected " +
                       to_string(dtype));
    out.layers.emplace_back(static_cast<std::size_t>(shape.tokens) * shape.token_bytes());
    reader.read_rows(d, 0, out.layers.back());
  }
  return out;
}

}  // namespace pleshard
