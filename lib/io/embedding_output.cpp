#include "io/embedding_output.hpp"

#include <algorithm>

#include "io/detail/h5_handle.hpp"

namespace pleshard {

namespace {

using detail::H5Id;
using detail::h5_check;

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

// Creates a 1-D dataset (collectively when shared) and fills it from one writer.
void write_1d(hid_t file, const char* name, hid_t type, const void* data, hsize_t count,
              const std::string& where, bool fill) {
  H5Id space = h5_check(H5Screate_simple(1, &count, nullptr), H5Sclose, "H5Screate_simple");
  H5Id set = h5_check(H5Dcreate2(file, name, type, space.get(), H5P_DEFAULT, untimed_dcpl().get(), H5P_DEFAULT),
                      H5Dclose, where + ": cannot create /" + name);
  if (fill && count > 0)
    h5_check(H5Dwrite(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), where + ": cannot write /" + name);
}

H5Id string_type(std::size_t size) {
  H5Id type = h5_check(H5Tcopy(H5T_C_S1), H5Tclose, "H5Tcopy");
  h5_check(H5Tset_size(type.get(), std::max<std::size_t>(1, size)), "H5Tset_size");
  return type;
}

}  // namespace

struct EmbeddingWriter::Handles {
  H5Id file;
  H5Id type;
  std::vector<H5Id> sets;
};

EmbeddingWriter::~EmbeddingWriter() = default;

bool EmbeddingWriter::parallel(MPI_Comm comm) {
#if PLESHARD_HDF5_PARALLEL
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  return ranks > 1;
#else
  (void)comm;
  return false;
#endif
}

EmbeddingWriter::EmbeddingWriter(const std::filesystem::path& path, std::span<const std::int64_t> query_start_loc,
                                 std::span<const std::string> request_ids, int layers,
                                 std::int64_t ple_embed_dim, OutDtype dtype, MPI_Comm comm)
    : path_(path),
      partial_(path.string() + ".partial"),
      token_bytes_(static_cast<std::size_t>(ple_embed_dim) * kernels::out_bytes(dtype)),
      comm_(comm),
      h5_(std::make_unique<Handles>()) {
  detail::quiet_hdf5();
  const std::string where = partial_.string();
  H5Id fapl = h5_check(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "H5Pcreate");
#if PLESHARD_HDF5_PARALLEL
  if (parallel(comm)) h5_check(H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL), "H5Pset_fapl_mpio");
#endif
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const bool fill = rank == 0;  // shared files: the small datasets come from rank 0
  h5_->file = h5_check(H5Fcreate(where.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose,
                       where + ": cannot create");
  write_1d(h5_->file.get(), "query_start_loc", H5T_STD_I64LE, query_start_loc.data(), query_start_loc.size(),
           where, fill);
  if (!request_ids.empty()) {
    std::size_t width = 1;
    for (const auto& id : request_ids) width = std::max(width, id.size());
    std::string packed(width * request_ids.size(), '\0');
    for (std::size_t i = 0; i < request_ids.size(); ++i) std::copy(request_ids[i].begin(), request_ids[i].end(), packed.begin() + static_cast<std::ptrdiff_t>(i * width));
    write_1d(h5_->file.get(), "request_ids", string_type(width).get(), packed.data(), request_ids.size(), where,
             fill);
  }
  h5_->type = output_type(dtype);
  const std::int64_t tokens = query_start_loc.empty() ? 0 : query_start_loc.back();
  const hsize_t dims[2] = {static_cast<hsize_t>(tokens), static_cast<hsize_t>(ple_embed_dim)};
  H5Id space = h5_check(H5Screate_simple(2, dims, nullptr), H5Sclose, "H5Screate_simple");
  const std::string dtype_name = to_string(dtype);
  for (int d = 0; d < layers; ++d) {
    const std::string name = "ple_" + std::to_string(d);
    H5Id set = h5_check(H5Dcreate2(h5_->file.get(), name.c_str(), h5_->type.get(), space.get(), H5P_DEFAULT,
                                   untimed_dcpl().get(), H5P_DEFAULT),
                        H5Dclose, where + ": cannot create /" + name);
    detail::write_string_attribute(set.get(), "dtype", dtype_name);
    h5_->sets.push_back(std::move(set));
  }
}

void EmbeddingWriter::write(int layer, std::int64_t first, std::span<const std::uint8_t> bytes) {
  const auto count = static_cast<hsize_t>(bytes.size() / token_bytes_);
  if (count == 0) return;
  const hid_t set = h5_->sets.at(static_cast<std::size_t>(layer)).get();
  H5Id file_space(H5Dget_space(set), H5Sclose);
  const hsize_t start[2] = {static_cast<hsize_t>(first), 0};
  hsize_t dims[2];
  H5Sget_simple_extent_dims(file_space.get(), dims, nullptr);
  const hsize_t size[2] = {count, dims[1]};
  h5_check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, size, nullptr), "hyperslab");
  H5Id memory_space = h5_check(H5Screate_simple(2, size, nullptr), H5Sclose, "H5Screate_simple");
  h5_check(H5Dwrite(set, h5_->type.get(), memory_space.get(), file_space.get(), H5P_DEFAULT, bytes.data()),
           partial_.string() + ": cannot write embeddings (disk full?)");
}

void EmbeddingWriter::finish() {
  h5_->sets.clear();
  h5_->type = {};
  if (H5Fflush(h5_->file.get(), H5F_SCOPE_GLOBAL) < 0) throw SystemError(partial_.string() + ": flush failed");
  h5_->file = {};  // collective close
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  if (rank == 0) std::filesystem::rename(partial_, path_);
  MPI_Barrier(comm_);  // nobody returns before the file carries its final name
}

void write_embeddings_h5(const std::filesystem::path& path, std::span<const std::int64_t> query_start_loc,
                         const std::vector<LayerEmbeddings>& layers, std::int64_t ple_embed_dim,
                         OutDtype dtype) {
  EmbeddingWriter writer(path, query_start_loc, {}, static_cast<int>(layers.size()), ple_embed_dim, dtype);
  for (std::size_t d = 0; d < layers.size(); ++d) writer.write(static_cast<int>(d), 0, layers[d].data);
  writer.finish();
}

EmbeddingFile read_embeddings_h5(const std::filesystem::path& path, int layers, OutDtype dtype) {
  detail::quiet_hdf5();
  const std::string p = path.string();
  H5Id file = h5_check(H5Fopen(p.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, p + ": cannot open");
  EmbeddingFile out;
  const auto read_1d = [&](const char* name, auto& values, hid_t memory_type) {
    H5Id set = h5_check(H5Dopen2(file.get(), name, H5P_DEFAULT), H5Dclose, p + ": /" + name + " is missing");
    H5Id space(H5Dget_space(set.get()), H5Sclose);
    hsize_t n = 0;
    H5Sget_simple_extent_dims(space.get(), &n, nullptr);
    values.resize(n);
    if (n > 0) h5_check(H5Dread(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), p + ": /" + name);
    return set;
  };
  read_1d("query_start_loc", out.query_start_loc, H5T_NATIVE_INT64);
  if (H5Lexists(file.get(), "request_ids", H5P_DEFAULT) > 0)
    out.request_ids = detail::read_fixed_strings(file.get(), "request_ids", p);
  const H5Id type = output_type(dtype);
  for (int d = 0; d < layers; ++d) {
    const std::string name = "ple_" + std::to_string(d);
    H5Id set = h5_check(H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT), H5Dclose, p + ": /" + name + " is missing");
    out.layers.emplace_back(static_cast<std::size_t>(H5Dget_storage_size(set.get())));
    H5Id space(H5Dget_space(set.get()), H5Sclose);
    hsize_t dims[2] = {0, 0};
    H5Sget_simple_extent_dims(space.get(), dims, nullptr);
    out.layers.back().resize(dims[0] * dims[1] * kernels::out_bytes(dtype));
    if (dims[0] > 0)
      h5_check(H5Dread(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.layers.back().data()), p + ": /" + name);
  }
  return out;
}

}  // namespace pleshard
