#include "io/embedding_output.hpp"

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

}  // namespace

void write_embeddings_h5(const std::filesystem::path& path, std::span<const std::int64_t> query_start_loc,
                         const std::vector<LayerEmbeddings>& layers, std::int64_t ple_embed_dim,
                         OutDtype dtype) {
  detail::quiet_hdf5();
  const std::filesystem::path partial = path.string() + ".partial";
  {
    H5Id file = h5_check(H5Fcreate(partial.string().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                         H5Fclose, partial.string() + ": cannot create");
    const hsize_t requests = query_start_loc.size();
    H5Id qsl_space = h5_check(H5Screate_simple(1, &requests, nullptr), H5Sclose, "H5Screate_simple");
    H5Id qsl_dcpl = h5_check(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "H5Pcreate");
    h5_check(H5Pset_obj_track_times(qsl_dcpl.get(), 0), "H5Pset_obj_track_times");
    H5Id qsl = h5_check(H5Dcreate2(file.get(), "query_start_loc", H5T_STD_I64LE, qsl_space.get(),
                                   H5P_DEFAULT, qsl_dcpl.get(), H5P_DEFAULT),
                        H5Dclose, partial.string() + ": cannot create /query_start_loc");
    h5_check(H5Dwrite(qsl.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, query_start_loc.data()),
             partial.string() + ": cannot write /query_start_loc");

    // No object timestamps, so that the same embeddings give the same bytes.
    H5Id dcpl = h5_check(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "H5Pcreate");
    h5_check(H5Pset_obj_track_times(dcpl.get(), 0), "H5Pset_obj_track_times");
    const H5Id type = output_type(dtype);
    const std::int64_t tokens = query_start_loc.empty() ? 0 : query_start_loc.back();
    const hsize_t dims[2] = {static_cast<hsize_t>(tokens), static_cast<hsize_t>(ple_embed_dim)};
    H5Id space = h5_check(H5Screate_simple(2, dims, nullptr), H5Sclose, "H5Screate_simple");
    const std::string dtype_name = to_string(dtype);
    for (const auto& layer : layers) {
      const std::string name = "ple_" + std::to_string(layer.ple_index);
      H5Id set = h5_check(H5Dcreate2(file.get(), name.c_str(), type.get(), space.get(), H5P_DEFAULT,
                                     dcpl.get(), H5P_DEFAULT),
                          H5Dclose, partial.string() + ": cannot create /" + name);
      if (tokens > 0)
        h5_check(H5Dwrite(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, layer.data.data()),
                 partial.string() + ": cannot write /" + name + " (disk full?)");
      H5Id str = h5_check(H5Tcopy(H5T_C_S1), H5Tclose, "H5Tcopy");
      h5_check(H5Tset_size(str.get(), dtype_name.size()), "H5Tset_size");
      H5Id scalar = h5_check(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate");
      H5Id attr = h5_check(H5Acreate2(set.get(), "dtype", str.get(), scalar.get(), H5P_DEFAULT, H5P_DEFAULT),
                           H5Aclose, "cannot create attribute dtype");
      h5_check(H5Awrite(attr.get(), str.get(), dtype_name.data()), "cannot write attribute dtype");
    }
  }
  std::filesystem::rename(partial, path);
}

}  // namespace pleshard
