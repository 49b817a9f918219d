#pragma once
// One-dimensional integer arrays from NumPy .npy files (format versions 1.0, 2.0 and 3.0),
// such as Engram's token map: little-endian int32 or int64 ('<i4', '<i8'), C order.

#include <cstdint>
#include <filesystem>
#include <vector>

namespace pleshard {

// The array's values, widened to int64. Throws InputError("<path>: ...") for a file that is
// not .npy, another dtype or byte order, Fortran order, a shape that is not 1-D, or data
// that is shorter or longer than the header says.
[[nodiscard]] std::vector<std::int64_t> read_npy_integers(const std::filesystem::path& path);

}  // namespace pleshard
