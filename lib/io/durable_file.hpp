#pragma once
// Files that appear under their final name only when complete and on the disk: written as
// <name>.partial, synced, renamed, and the directory entry synced. Every write is checked,
// so a full disk is an error naming the file, never a short file that looks complete.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace pleshard {

// Flushes a written file's data to the disk (SystemError naming it on failure).
void sync_file(const std::filesystem::path& path);

// Renames a complete, synced file to its final name, durably.
void commit_file(const std::filesystem::path& from, const std::filesystem::path& to);

// A file written at offsets as <path>.partial and renamed to <path> by commit() (synced,
// directory entry too); removed when destroyed uncommitted. Bulk writers (safetensors
// checkpoints) write it from any thread, one write at a time or at disjoint offsets.
class PartialFile {
 public:
  explicit PartialFile(std::filesystem::path path);
  ~PartialFile();
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;

  [[nodiscard]] const std::filesystem::path& partial() const { return partial_; }
  // SystemError "<partial>: cannot write: <reason>" unless every byte is written.
  void write_at(std::uint64_t offset, std::span<const std::uint8_t> bytes);
  // Sets the size (a trailing hole reads as zeros).
  void resize(std::uint64_t bytes);
  void commit();

 private:
  std::filesystem::path path_;
  std::filesystem::path partial_;
  int fd_ = -1;
};

// `text` as the whole of `path`, durably (a config, an index, a progress record).
void write_text_file(const std::filesystem::path& path, std::string_view text);

// InputError "<path>: <what> needs N bytes, the file system has M free" unless the file
// system that will hold `path` has `bytes` free: checked before a long write starts.
void require_free_space(const std::filesystem::path& path, std::uint64_t bytes, const std::string& what);

// Allocates the disk blocks of the first `bytes` of the file at `path` (fallocate; its size
// becomes at least `bytes`), so that a disk that fills while a writer that cannot recover from
// a failed write (HDF5) writes it fails here, before the first row, as an InputError naming
// the file, `what` and the reason (no space, a quota, the file size limit). Nothing on a
// file system that cannot allocate ahead.
void reserve_file_space(const std::filesystem::path& path, std::uint64_t bytes, const std::string& what);

}  // namespace pleshard
