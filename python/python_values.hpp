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

}  // namespace pleshard::python
