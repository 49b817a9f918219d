#include "io/detail/h5_handle.hpp"

namespace pleshard::detail {

void write_int_attribute(hid_t object, const char* name, std::int64_t value) {
  H5Id space = h5_check(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate");
  H5Id attr = h5_check(H5Acreate2(object, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                       std::string("cannot create attribute ") + name);
  h5_check(H5Awrite(attr.get(), H5T_NATIVE_INT64, &value), std::string("cannot write attribute ") + name);
}

std::int64_t read_int_attribute(hid_t object, const char* name, const std::string& where) {
  if (H5Aexists(object, name) <= 0) throw InputError(where + ": attribute " + name + " is missing");
  H5Id attr = h5_check(H5Aopen(object, name, H5P_DEFAULT), H5Aclose, where + ": attribute " + name);
  H5Id type = h5_check(H5Aget_type(attr.get()), H5Tclose, where + ": attribute " + name);
  H5Id space = h5_check(H5Aget_space(attr.get()), H5Sclose, where + ": attribute " + name);
  if (H5Tget_class(type.get()) != H5T_INTEGER || !holds_one_element(space.get()))
    throw InputError(where + ": attribute " + name + " is not one integer");
  std::int64_t value = 0;
  h5_check(H5Aread(attr.get(), H5T_NATIVE_INT64, &value), where + ": cannot read attribute " + name);
  return value;
}

void write_int64s(hid_t group, const char* name, const std::vector<std::int64_t>& values, const std::string& where) {
  const hsize_t count = values.size();
  H5Id space = h5_check(H5Screate_simple(1, &count, nullptr), H5Sclose, "H5Screate_simple");
  H5Id dcpl = h5_check(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "H5Pcreate");
  h5_check(H5Pset_obj_track_times(dcpl.get(), 0), "H5Pset_obj_track_times");
  H5Id set = h5_check(H5Dcreate2(group, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                      H5Dclose, where + ": cannot create /" + name);
  if (count > 0)
    h5_check(H5Dwrite(set.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
             where + ": cannot write /" + name);
}

std::vector<std::int64_t> read_int64s(hid_t group, const char* name, const std::string& where) {
  if (H5Lexists(group, name, H5P_DEFAULT) <= 0) throw InputError(where + ": /" + name + " is missing");
  H5Id set = h5_check(H5Dopen2(group, name, H5P_DEFAULT), H5Dclose, where + ": /" + name + " is not a dataset");
  H5Id type = h5_check(H5Dget_type(set.get()), H5Tclose, where + ": /" + name);
  H5Id space = h5_check(H5Dget_space(set.get()), H5Sclose, where + ": /" + name);
  if (H5Tget_class(type.get()) != H5T_INTEGER || H5Sget_simple_extent_ndims(space.get()) != 1)
    throw InputError(where + ": /" + name + " is not a 1-D dataset of integers");
  hsize_t count = 0;
  h5_check(H5Sget_simple_extent_dims(space.get(), &count, nullptr), where + ": /" + name);
  std::vector<std::int64_t> values(count);
  if (count > 0)
    h5_check(H5Dread(set.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
             where + ": cannot read /" + name);
  return values;
}

}  // namespace pleshard::detail
