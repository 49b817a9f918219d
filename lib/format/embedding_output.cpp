#include "format/embedding_output.hpp"

#include <algorithm>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/fault_plan.hpp"
#include "io/detail/h5_handle.hpp"
#include "io/durable_file.hpp"
#include "io/file_checks.hpp"

namespace pleshard {

namespace {

using detail::h5_check;
using detail::H5Id;

// HDF5 type of the output dtype, in file and memory alike (no conversion on write).
H5Id output_type(OutDtype dtype) {
  H5Id type = h5_check(H5Tcopy(H5T_IEEE_F32LE), H5Tclose, "H5Tcopy");
  if (dtype == OutDtype::f16) {
    h5_check(H5Tset_fields(type.get(), 15, 10, 5, 0, 10), "H5Tset_fields");
    h5_check(H5Tset_size(type.get(), 2), "H5Tset_size");
    h5_check(H5Tset_ebias(type.get(), 15), "H5Tset_ebias");
  } else if (dtype == OutDtype::bf16) {
    h5_check(H5Tset_fields(type.get(), 15, 7, 8, 0, 7), "H5Tset_fields");
    h5_check(H5Tset_size(type.get(), 2), "H5Tset_size");
    h5_check(H5Tset_ebias(type.get(), 127), "H5Tset_ebias");
  }
  return type;
}

// Dataset creation without timestamps: equal contents, equal bytes.
H5Id untimed_dcpl() {
  H5Id dcpl = h5_check(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "H5Pcreate");
  h5_check(H5Pset_obj_track_times(dcpl.get(), 0), "H5Pset_obj_track_times");
  return dcpl;
}

// Creates and fills a 1-D dataset.
void write_1d(hid_t file, const char* name, hid_t type, const void* data, hsize_t count, const std::string& where) {
  H5Id space = h5_check(H5Screate_simple(1, &count, nullptr), H5Sclose, "H5Screate_simple");
  H5Id set = h5_check(H5Dcreate2(file, name, type, space.get(), H5P_DEFAULT, untimed_dcpl().get(), H5P_DEFAULT),
                      H5Dclose, where + ": cannot create /" + name);
  if (count > 0)
    h5_check(H5Dwrite(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), where + ": cannot write /" + name);
}

// Contiguous storage allocated when the dataset is made and never filled: the rows are
// written later, in place, by whoever computes them.
H5Id row_dcpl() {
  H5Id dcpl = untimed_dcpl();
  h5_check(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), "H5Pset_layout");
  h5_check(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
  h5_check(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
  return dcpl;
}

[[noreturn]] void throw_errno(const std::string& what) { throw SystemError(what + ": " + std::strerror(errno)); }

void write_attributes(hid_t object, const std::vector<OutputAttribute>& attributes) {
  for (const OutputAttribute& a : attributes) {
    if (const auto* text = std::get_if<std::string>(&a.value))
      detail::write_string_attribute(object, a.name.c_str(), *text);
    else
      detail::write_int_attribute(object, a.name.c_str(), std::get<std::int64_t>(a.value));
  }
}

}  // namespace

std::uint64_t EmbeddingFileSpec::row_bytes() const {
  const std::uint64_t tokens = query_start_loc.empty() ? 0 : static_cast<std::uint64_t>(query_start_loc.back());
  return tokens * static_cast<std::uint64_t>(width) * kernels::out_bytes(dtype) * static_cast<std::uint64_t>(layers);
}

std::string embedding_file_job(const std::filesystem::path& path) {
  detail::quiet_hdf5();
  const std::string where = path.string();
  require_regular_file(path, "output");
  H5Id file = h5_check(H5Fopen(where.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, where + ": not an HDF5 file");
  if (H5Aexists(file.get(), "job") <= 0) return "";
  return detail::read_string_attribute(file.get(), "job", where);
}

std::vector<std::string> differing_attributes(const std::filesystem::path& path,
                                              const std::vector<OutputAttribute>& expected) {
  detail::quiet_hdf5();
  const std::string where = path.string();
  std::vector<std::string> differ;
  try {
    require_regular_file(path, "output");
    H5Id file = h5_check(H5Fopen(where.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, where + ": not an HDF5 file");
    for (const OutputAttribute& a : expected) {
      const char* name = a.name.c_str();
      bool same = H5Aexists(file.get(), name) > 0;
      if (same && std::holds_alternative<std::string>(a.value))
        same = detail::read_string_attribute(file.get(), name, where) == std::get<std::string>(a.value);
      else if (same)
        same = detail::read_int_attribute(file.get(), name, where) == std::get<std::int64_t>(a.value);
      if (!same) differ.push_back(a.name);
    }
  } catch (const InputError&) {
    return {};  // a file that cannot tell
  }
  return differ;
}

std::vector<std::uint64_t> create_embedding_file(const std::filesystem::path& path, const EmbeddingFileSpec& spec) {
  detail::quiet_hdf5();
  const std::string where = path.string();
  H5Id file =
      h5_check(H5Fcreate(where.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose, where + ": cannot create");
  if (!spec.job.empty()) detail::write_string_attribute(file.get(), "job", spec.job);
  write_attributes(file.get(), spec.description.file);
  write_1d(file.get(), "query_start_loc", H5T_STD_I64LE, spec.query_start_loc.data(), spec.query_start_loc.size(),
           where);
  if (!spec.request_ids.empty())
    detail::write_strings(file.get(), "request_ids", {spec.request_ids.begin(), spec.request_ids.end()}, where);
  const H5Id type = output_type(spec.dtype);
  const std::int64_t tokens = spec.query_start_loc.empty() ? 0 : spec.query_start_loc.back();
  const hsize_t dims[2] = {static_cast<hsize_t>(tokens), static_cast<hsize_t>(spec.width)};
  H5Id space = h5_check(H5Screate_simple(2, dims, nullptr), H5Sclose, "H5Screate_simple");
  const std::string dtype_name = to_string(spec.dtype);
  std::vector<std::uint64_t> offsets;
  for (int d = 0; d < spec.layers; ++d) {
    const std::string name = "ple_" + std::to_string(d);
    H5Id set = h5_check(
        H5Dcreate2(file.get(), name.c_str(), type.get(), space.get(), H5P_DEFAULT, row_dcpl().get(), H5P_DEFAULT),
        H5Dclose, where + ": cannot create /" + name);
    detail::write_string_attribute(set.get(), "dtype", dtype_name);
    if (static_cast<std::size_t>(d) < spec.description.layers.size())
      write_attributes(set.get(), spec.description.layers[static_cast<std::size_t>(d)]);
    const haddr_t at = H5Dget_offset(set.get());
    // A dataset of no rows has no storage; nothing is ever written there.
    offsets.push_back(at == HADDR_UNDEF ? 0 : static_cast<std::uint64_t>(at));
  }
  if (H5Fflush(file.get(), H5F_SCOPE_GLOBAL) < 0) throw SystemError(where + ": flush failed (disk full?)");
  file = {};
  return offsets;
}

std::vector<std::uint64_t> embedding_file_offsets(const std::filesystem::path& path, int layers) {
  detail::quiet_hdf5();
  const std::string where = path.string();
  H5Id file = h5_check(H5Fopen(where.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, where + ": cannot open");
  std::vector<std::uint64_t> offsets;
  for (int d = 0; d < layers; ++d) {
    const std::string name = "ple_" + std::to_string(d);
    H5Id set =
        h5_check(H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT), H5Dclose, where + ": /" + name + " is missing");
    const haddr_t at = H5Dget_offset(set.get());
    offsets.push_back(at == HADDR_UNDEF ? 0 : static_cast<std::uint64_t>(at));
  }
  return offsets;
}

EmbeddingRows::EmbeddingRows(const std::filesystem::path& path, std::vector<std::uint64_t> layer_offsets,
                             std::size_t token_bytes)
    : path_(path.string()), offsets_(std::move(layer_offsets)), token_bytes_(token_bytes) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd_ < 0) throw_errno(path_ + ": cannot open for writing");
}

EmbeddingRows::~EmbeddingRows() {
  if (fd_ >= 0) ::close(fd_);
}

void EmbeddingRows::write(int layer, std::int64_t first, std::span<const std::uint8_t> bytes) {
  // Tests: writes past the fault plan's limit fail as on a full disk.
  if (const auto limit = fault_plan().write_limit; limit && bytes_written_ + bytes.size() > *limit) {
    errno = ENOSPC;
    throw_errno(path_ + ": cannot write embeddings (fault injection)");
  }
  auto offset = static_cast<off_t>(offsets_.at(static_cast<std::size_t>(layer)) +
                                   static_cast<std::uint64_t>(first) * token_bytes_);
  const std::uint8_t* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::pwrite(fd_, p, left, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw_errno(path_ + ": cannot write embeddings");
    p += n;
    left -= static_cast<std::size_t>(n);
    offset += n;
  }
  bytes_written_ += bytes.size();
}

void EmbeddingRows::sync() {
  if (::fdatasync(fd_) != 0) throw_errno(path_ + ": cannot sync embeddings to disk");
}

void write_embeddings_h5(const std::filesystem::path& path, std::span<const std::int64_t> query_start_loc,
                         const std::vector<LayerEmbeddings>& layers, std::int64_t ple_embed_dim, OutDtype dtype,
                         const OutputDescription& description) {
  const std::filesystem::path partial = path.string() + ".partial";
  const EmbeddingFileSpec spec{query_start_loc, {}, static_cast<int>(layers.size()), ple_embed_dim, dtype, {},
                               description};
  {
    EmbeddingRows rows(partial, create_embedding_file(partial, spec),
                       static_cast<std::size_t>(ple_embed_dim) * kernels::out_bytes(dtype));
    for (std::size_t d = 0; d < layers.size(); ++d) rows.write(static_cast<int>(d), 0, layers[d].data);
    rows.sync();
  }
  commit_file(partial, path);
}

}  // namespace pleshard
