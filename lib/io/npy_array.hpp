#pragma once
// One-dimensional integer arrays from NumPy .npy files (format versions 1.0, 2.0 and 3.0),
// such as Engram's token map: little-endian int32 or int64 ('<i4', '<i8'), C order.

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

namespace pleshard {

// The array's values, widened to int64. Throws InputError("<path>: ...") for a file that is
// not .npy, another dtype or byte order, Fortran order, a shape that is not 1-D, or data
// that is shorter or longer than the header says.
[[nodiscard]] std::vector<std::int64_t> read_npy_integers(const std::filesystem::path& path);

// Writes `values` as a 1-D .npy file (format 1.0, '<i4' where every value fits int32, else
// '<i8'), durably: as <path>.partial, renamed when complete.
void write_npy_integers(const std::filesystem::path& path, std::span<const std::int64_t> values);

}  // namespace pleshard
