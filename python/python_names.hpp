#pragma once
// How the module names a Python value's type and a Python error in pleshard's one-line
// messages.

#include <string>

#include <pybind11/pybind11.h>

namespace pleshard::python {

// The value's type as Python names it ("str", "NoneType").
inline std::string type_name(const pybind11::handle& value) {
  return pybind11::str(pybind11::type::of(value).attr("__name__"));
}

// The first line of a Python exception's text (pybind11 appends the traceback after it).
inline std::string error_line(const pybind11::error_already_set& error) {
  const std::string what = error.what();
  return what.substr(0, what.find('\n'));
}

}  // namespace pleshard::python
