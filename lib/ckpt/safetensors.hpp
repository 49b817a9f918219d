#pragma once
// safetensors files: a validating, memory-mapped reader and a streaming writer.
// Validation follows the reference parser: header length <= 100 MB and inside the file,
// header begins with '{' and is a JSON object, known dtypes only, byte sizes equal to
// shape * dtype size (checked arithmetic), and tensors that tile the data area exactly
// (sorted by offset: no overlap, no hole, nothing past the end).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/mapped_file.hpp"

namespace pleshard {

enum class StDtype { BOOL, U8, I8, U16, I16, F16, BF16, U32, I32, F32, U64, I64, F64, F8_E4M3, F8_E5M2, F8_E8M0 };

[[nodiscard]] const char* to_string(StDtype dtype);
// The dtype named `name` ("F8_E4M3"), or nothing.
[[nodiscard]] std::optional<StDtype> st_dtype_named(std::string_view name);
[[nodiscard]] std::size_t dtype_size(StDtype dtype);

inline constexpr std::uint64_t k_safetensors_max_header = 100'000'000;

struct StTensor {
  std::string name;
  StDtype dtype = StDtype::U8;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0;  // offsets within the data area
  std::uint64_t end = 0;

  [[nodiscard]] std::uint64_t bytes() const { return end - begin; }
  [[nodiscard]] std::string shape_string() const;
};

class SafetensorsFile {
 public:
  // Maps and validates; throws InputError("<path>: ...") naming the tensor when one is bad.
  explicit SafetensorsFile(const std::filesystem::path& path);

  [[nodiscard]] const std::string& path() const { return file_.path(); }
  [[nodiscard]] const std::vector<StTensor>& tensors() const { return tensors_; }
  [[nodiscard]] const StTensor* find(const std::string& name) const;
  [[nodiscard]] std::span<const std::uint8_t> data(const StTensor& tensor) const;
  // Byte offset of the tensor's data in the file.
  [[nodiscard]] std::uint64_t file_offset(const StTensor& tensor) const { return data_start_ + tensor.begin; }
  [[nodiscard]] const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  MappedFile file_;
  std::uint64_t data_start_ = 0;
  std::vector<StTensor> tensors_;
  std::map<std::string, std::size_t> by_name_;
  std::map<std::string, std::string> metadata_;
};

// One tensor to write: its bytes come from `fill(offset, chunk)`, called with offsets
// that are multiples of `granule` bytes (a row) and chunks of whole granules.
struct StTensorSource {
  std::string name;
  StDtype dtype = StDtype::U8;
  std::vector<std::int64_t> shape;
  std::size_t granule = 1;
  std::function<void(std::uint64_t offset, std::span<std::uint8_t> chunk)> fill;
  // Written band by band together with the tensor before it (the same number of granules,
  // the same granules in each band, filled right after it): a source that makes both from
  // one computation (NVFP4 codes and their block scales) can keep one band for the second.
  bool banded_with_previous = false;
};

// Writes `tensors` in the given order with bounded memory (two bands of about 64 MiB), the
// filling of one band overlapping the writing of the one before; chunks of zeros are left
// as holes (a sparse file). The file appears under its name only once complete (written as
// <path>.partial, then renamed). `progress(bytes_done)` is called after each band.
void write_safetensors(const std::filesystem::path& path, const std::vector<StTensorSource>& tensors,
                       const std::map<std::string, std::string>& metadata,
                       const std::function<void(std::uint64_t)>& progress = {});

}  // namespace pleshard
