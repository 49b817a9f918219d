#pragma once
// A Python value as the C++ type an entry point takes, or pleshard's InputError (ValueError in
// Python) naming the argument and what it got — never pybind11's own "Unable to cast Python
// instance to C++ type", which names neither.

#include <string>
#include <type_traits>

#include <pybind11/pybind11.h>

#include "core/error.hpp"
#include "python_names.hpp"

namespace pleshard::python {

// `value` as T; `name` names the argument ("tp", "__dlpack__ stream"), `expected` completes
// "expected ..." ("an int or None"). A bool is True or False only (an int is no bool).
template <typename T>
T argument_as(const pybind11::handle& value, const std::string& name, const char* expected) {
  const auto refused = [&] {
    return InputError(name + ": " + quoted_value(std::string(pybind11::repr(value))) + " (" + type_name(value) +
                      "); expected " + expected);
  };
  if constexpr (std::is_same_v<T, bool>) {
    if (!PyBool_Check(value.ptr())) throw InputError(name + ": " + type_name(value) + "; expected " + expected);
  }
  if constexpr (std::is_base_of_v<pybind11::object, T>) {
    // pybind11 raises a bare TypeError for a Python type that is not T.
    if (!pybind11::isinstance<T>(value)) throw refused();
    return pybind11::reinterpret_borrow<T>(value);
  } else {
    try {
      return value.cast<T>();
    } catch (const pybind11::cast_error&) {
      throw refused();
    }
  }
}

// A path as str, bytes or os.PathLike, its bytes as the file system has them (os.fsencode:
// any bytes but NUL); an empty one is refused as run's options refuse it (an unset variable
// in a script).
inline std::string path_of(const pybind11::handle& path, const char* name) {
  pybind11::object bytes;
  try {
    bytes = pybind11::module_::import("os").attr("fsencode")(path);
  } catch (const pybind11::error_already_set&) {
    throw InputError(std::string(name) + ": " + type_name(path) + "; expected a path (str, bytes or os.PathLike)");
  }
  const std::string text = bytes.cast<std::string>();
  if (text.empty()) throw InputError(std::string(name) + ": empty path");
  if (text.find('\0') != std::string::npos) throw InputError(std::string(name) + ": the path holds a NUL character");
  return text;
}

}  // namespace pleshard::python
