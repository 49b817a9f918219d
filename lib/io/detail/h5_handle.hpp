#pragma once
// RAII for HDF5 identifiers, and the small checked helpers the HDF5 writers share.

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace pleshard::detail {

class H5Id {
 public:
  H5Id() = default;
  H5Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;
  H5Id(H5Id&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)), close_(o.close_) {}
  H5Id& operator=(H5Id&& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(close_, o.close_);
    return *this;
  }
  ~H5Id() {
    if (id_ >= 0 && close_ != nullptr) close_(id_);
  }
  [[nodiscard]] hid_t get() const { return id_; }
  [[nodiscard]] bool valid() const { return id_ >= 0; }
  // Forgets the identifier without closing it: for a file shared through MPI-IO, whose
  // close is collective, on a rank that is failing alone.
  void abandon() { id_ = H5I_INVALID_HID; }

 private:
  hid_t id_ = H5I_INVALID_HID;
  herr_t (*close_)(hid_t) = nullptr;
};

// pleshard reports HDF5 failures by return value; HDF5's own error-stack printing is off.
inline void quiet_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

inline H5Id h5_check(hid_t id, herr_t (*close)(hid_t), const std::string& what) {
  if (id < 0) throw InputError(what);
  return H5Id(id, close);
}

inline void h5_check(herr_t status, const std::string& what) {
  if (status < 0) throw InputError(what);
}

// Whether an attribute or a dataset's dataspace holds exactly one element (scalar, or a
// shape of ones): what a read into one value needs before it may read anything.
[[nodiscard]] bool holds_one_element(hid_t space);

// 64-bit integer attributes (a scalar dataspace); reading one that is missing or not one
// integer is InputError "<where>: attribute <name> ...".
void write_int_attribute(hid_t object, const char* name, std::int64_t value);
[[nodiscard]] std::int64_t read_int_attribute(hid_t object, const char* name, const std::string& where);

// 1-D datasets of 64-bit integers: written contiguous, without timestamps; read whole,
// InputError "<where>: /<name> ..." unless it is one.
void write_int64s(hid_t group, const char* name, const std::vector<std::int64_t>& values, const std::string& where);
[[nodiscard]] std::vector<std::int64_t> read_int64s(hid_t group, const char* name, const std::string& where);

// Fixed-length string attributes (a scalar dataspace).
void write_string_attribute(hid_t object, const char* name, const std::string& value);
[[nodiscard]] std::string read_string_attribute(hid_t object, const char* name, const std::string& where);

// A 1-D dataset of strings, fixed-length (NUL padding removed) or variable-length;
// InputError "<where>: ..." when it is of another kind.
[[nodiscard]] std::vector<std::string> read_strings(hid_t file, const char* name, const std::string& where);

// Writes a 1-D dataset of variable-length strings (each its own length, none padded).
void write_strings(hid_t file, const char* name, const std::vector<std::string>& values, const std::string& where);

}  // namespace pleshard::detail
