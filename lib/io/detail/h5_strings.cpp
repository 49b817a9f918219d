#include <algorithm>

#include "io/detail/h5_handle.hpp"

namespace pleshard::detail {

namespace {

std::string without_padding(std::string text) {
  text.erase(std::find(text.begin(), text.end(), '\0'), text.end());
  return text;
}

}  // namespace

void write_string_attribute(hid_t object, const char* name, const std::string& value) {
  H5Id type = h5_check(H5Tcopy(H5T_C_S1), H5Tclose, "H5Tcopy");
  h5_check(H5Tset_size(type.get(), std::max<std::size_t>(1, value.size())), "H5Tset_size");
  H5Id space = h5_check(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate");
  H5Id attr = h5_check(H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                       std::string("cannot create attribute ") + name);
  h5_check(H5Awrite(attr.get(), type.get(), value.data()), std::string("cannot write attribute ") + name);
}

bool holds_one_element(hid_t space) {
  const H5S_class_t kind = H5Sget_simple_extent_type(space);
  return kind == H5S_SCALAR || (kind == H5S_SIMPLE && H5Sget_simple_extent_npoints(space) == 1);
}

std::string read_string_attribute(hid_t object, const char* name, const std::string& where) {
  if (H5Aexists(object, name) <= 0) throw InputError(where + ": attribute " + name + " is missing");
  H5Id attr = h5_check(H5Aopen(object, name, H5P_DEFAULT), H5Aclose, where + ": cannot open attribute " + name);
  H5Id type = h5_check(H5Aget_type(attr.get()), H5Tclose, where + ": attribute " + name);
  H5Id space = h5_check(H5Aget_space(attr.get()), H5Sclose, where + ": attribute " + name);
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) > 0 || !holds_one_element(space.get()))
    throw InputError(where + ": attribute " + name + " is not one fixed-length string");
  std::string value(H5Tget_size(type.get()), '\0');
  h5_check(H5Aread(attr.get(), type.get(), value.data()), where + ": cannot read attribute " + name);
  return without_padding(std::move(value));
}

std::vector<std::string> read_strings(hid_t file, const char* name, const std::string& where) {
  const std::string what = where + ": /" + name;
  H5Id set = h5_check(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose, what + " cannot be opened");
  H5Id type(H5Dget_type(set.get()), H5Tclose);
  H5Id space(H5Dget_space(set.get()), H5Sclose);
  if (H5Tget_class(type.get()) != H5T_STRING || H5Sget_simple_extent_ndims(space.get()) != 1)
    throw InputError(what + " must be a 1-D list of strings");
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space.get(), &n, nullptr);
  std::vector<std::string> values;
  if (H5Tis_variable_str(type.get()) > 0) {
    H5Id memory = h5_check(H5Tcopy(H5T_C_S1), H5Tclose, "H5Tcopy");
    h5_check(H5Tset_size(memory.get(), H5T_VARIABLE), "H5Tset_size");
    // The file's character set (h5py writes UTF-8): HDF5 converts none into another.
    h5_check(H5Tset_cset(memory.get(), H5Tget_cset(type.get())), "H5Tset_cset");
    std::vector<char*> pointers(n, nullptr);
    if (n > 0)
      h5_check(H5Dread(set.get(), memory.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()),
               what + " cannot be read");
    for (char* p : pointers) values.emplace_back(p != nullptr ? p : "");
    if (n > 0) H5Dvlen_reclaim(memory.get(), space.get(), H5P_DEFAULT, pointers.data());
    return values;
  }
  const std::size_t width = H5Tget_size(type.get());
  std::string packed(width * n, '\0');
  if (n > 0)
    h5_check(H5Dread(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, packed.data()), what + " cannot be read");
  for (hsize_t i = 0; i < n; ++i) values.push_back(without_padding(packed.substr(i * width, width)));
  return values;
}

void write_strings(hid_t file, const char* name, const std::vector<std::string>& values, const std::string& where) {
  H5Id type = h5_check(H5Tcopy(H5T_C_S1), H5Tclose, "H5Tcopy");
  h5_check(H5Tset_size(type.get(), H5T_VARIABLE), "H5Tset_size");
  const hsize_t n = values.size();
  H5Id space = h5_check(H5Screate_simple(1, &n, nullptr), H5Sclose, "H5Screate_simple");
  H5Id dcpl = h5_check(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "H5Pcreate");
  h5_check(H5Pset_obj_track_times(dcpl.get(), 0), "H5Pset_obj_track_times");
  H5Id set = h5_check(H5Dcreate2(file, name, type.get(), space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT), H5Dclose,
                      where + ": cannot create /" + name);
  std::vector<const char*> pointers;
  for (const auto& v : values) pointers.push_back(v.c_str());
  if (n > 0)
    h5_check(H5Dwrite(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()),
             where + ": cannot write /" + name);
}

}  // namespace pleshard::detail
