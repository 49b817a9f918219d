#pragma once
// pleshard.read_output: one table's rows of an embedding output (docs/output.md) as a NumPy
// array or a PyTorch tensor, read at the file system's speed with the GIL released, with the
// requests' boundaries and ids beside them.

#include <pybind11/pybind11.h>

namespace pleshard::python {

void bind_read_output(pybind11::module_& m);

}  // namespace pleshard::python
