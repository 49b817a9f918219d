#include <algorithm>

#include "io/detail/h5_handle.hpp"
#include "io/file_checks.hpp"
#include "io/requests.hpp"

namespace pleshard {

std::vector<Request> load_requests_h5(const std::filesystem::path& path) {
  using detail::h5_check;
  using detail::H5Id;
  detail::quiet_hdf5();
  const std::string p = path.string();
  require_regular_file(path, "requests file");
  H5Id file = h5_check(H5Fopen(p.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, p + ": not a readable HDF5 file");
  const auto read = [&](const char* name) {
    if (H5Lexists(file.get(), name, H5P_DEFAULT) <= 0) throw InputError(p + ": /" + std::string(name) + " is missing");
    H5Id set = h5_check(H5Dopen2(file.get(), name, H5P_DEFAULT), H5Dclose, p + ": cannot open /" + name);
    H5Id space(H5Dget_space(set.get()), H5Sclose);
    if (H5Sget_simple_extent_ndims(space.get()) != 1) throw InputError(p + ": /" + std::string(name) + " is not 1-D");
    hsize_t n = 0;
    H5Sget_simple_extent_dims(space.get(), &n, nullptr);
    // Integers only, read at their own width: HDF5 would round floats and clip values past
    // int64 without a word.
    H5Id type(H5Dget_type(set.get()), H5Tclose);
    if (H5Tget_class(type.get()) != H5T_INTEGER)
      throw InputError(
          p + ": /" + std::string(name) + " holds " +
          (H5Tget_class(type.get()) == H5T_FLOAT ? "floating-point numbers" : "values that are not integers") +
          "; expected integers");
    const bool is_unsigned = H5Tget_sign(type.get()) == H5T_SGN_NONE;
    std::vector<std::int64_t> values(n);
    if (n > 0)
      h5_check(H5Dread(set.get(), is_unsigned ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                       values.data()),
               p + ": cannot read /" + name + " as integers");
    if (is_unsigned)
      for (std::size_t i = 0; i < values.size(); ++i)
        if (values[i] < 0)
          throw InputError(p + ": /" + std::string(name) + "[" + std::to_string(i) +
                           "] = " + std::to_string(static_cast<std::uint64_t>(values[i])) + " does not fit int64");
    return values;
  };
  // A batch's contexts would be silently ignored here: a run's request is whole.
  for (const char* batch_key : {"context", "contexts"})
    if (H5Lexists(file.get(), batch_key, H5P_DEFAULT) > 0)
      throw InputError(p + ": /" + batch_key +
                       ": a run's request is whole, hashed from its first token; only /tokens, /query_start_loc "
                       "and /request_ids are read");
  const std::vector<std::int64_t> tokens = read("tokens");
  const std::vector<std::int64_t> qsl = read("query_start_loc");
  if (qsl.empty() || qsl.front() != 0 || qsl.back() != static_cast<std::int64_t>(tokens.size()) ||
      !std::is_sorted(qsl.begin(), qsl.end()))
    throw InputError(p + ": /query_start_loc must rise from 0 to the " + std::to_string(tokens.size()) + " tokens");
  if (qsl.size() < 2) throw InputError(p + ": holds no requests");
  std::vector<Request> requests(qsl.size() - 1);
  for (std::size_t r = 0; r < requests.size(); ++r) {
    requests[r].id = std::to_string(r);
    requests[r].where = p + ": request " + std::to_string(r);
    requests[r].tokens.assign(tokens.begin() + qsl[r], tokens.begin() + qsl[r + 1]);
  }
  if (H5Lexists(file.get(), "request_ids", H5P_DEFAULT) > 0) {
    const std::vector<std::string> ids = detail::read_strings(file.get(), "request_ids", p);
    if (ids.size() != requests.size())
      throw InputError(p + ": /request_ids holds " + std::to_string(ids.size()) + " ids for " +
                       std::to_string(requests.size()) + " requests");
    for (std::size_t r = 0; r < requests.size(); ++r) requests[r].id = ids[r];
  }
  check_unique_ids(requests);
  return requests;
}

std::vector<Request> load_requests(const std::filesystem::path& path) {
  const auto ext = path.extension();
  return ext == ".h5" || ext == ".hdf5" ? load_requests_h5(path) : load_requests_jsonl(path);
}

}  // namespace pleshard
