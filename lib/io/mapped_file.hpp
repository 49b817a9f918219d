#pragma once
// A read-only memory map of a whole file (RAII).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

namespace pleshard {

class MappedFile {
 public:
  // Throws InputError("<path>: ...") when the file cannot be opened or mapped.
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  [[nodiscard]] std::span<const std::uint8_t> bytes() const { return {data_, size_}; }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace pleshard
