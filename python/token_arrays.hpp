#pragma once
// Integer arrays from Python as the engine takes them (token ids, request boundaries,
// contexts): anything with __dlpack__ (PyTorch, CuPy, NumPy; host or GPU memory), a DLPack
// capsule, an object with the buffer protocol, or a list of ints. Elements are int32 or
// int64, laid out densely (row-major); anything else is refused with a ValueError naming
// the argument and what was found. GPU arrays are copied to the host: the engine packs each
// step's batch there.

#include <cstdint>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

namespace pleshard::python {

struct IntArray {
  std::vector<std::int64_t> values;
  std::vector<std::int64_t> shape;
};

// `name` names the argument in messages; `ndim` the dimensions it must have (1 or 2).
[[nodiscard]] IntArray read_int_array(const pybind11::handle& object, const std::string& name, int ndim);

}  // namespace pleshard::python
