#pragma once
// A directory output (a safetensors checkpoint) that appears whole or not at all: its files
// are written into <path>.partial, and commit() puts that directory in <path>'s place in one
// step. Where <path> already holds an earlier output of the same kind, the two are exchanged
// at once (renameat2 RENAME_EXCHANGE) and the earlier one removed, so a reader finds either
// the old checkpoint or the new one, never a mix (an old index beside new tensors). Where it
// holds anything else, the output is refused before a byte is written: a user's other files
// are never removed.

#include <filesystem>
#include <functional>
#include <string>

namespace pleshard {

class PartialDirectory {
 public:
  // `replaceable(name)`: whether a file of that name in an existing <path> belongs to an
  // earlier output of this kind. InputError naming <path> and the first other entry when
  // <path> holds one. Removes a <path>.partial a killed writer left (the caller holds the
  // output's claim, so no writer is alive there).
  PartialDirectory(std::filesystem::path path, std::function<bool(const std::string&)> replaceable,
                   std::string option = "--out");
  ~PartialDirectory();  // removes <path>.partial unless committed
  PartialDirectory(const PartialDirectory&) = delete;
  PartialDirectory& operator=(const PartialDirectory&) = delete;

  // Where the files go until commit().
  [[nodiscard]] const std::filesystem::path& partial() const { return partial_; }
  // Syncs the directory and puts it in place (checked again: InputError if <path> came to
  // hold another entry meanwhile).
  void commit();

 private:
  void check_target() const;

  std::filesystem::path path_;
  std::filesystem::path partial_;
  std::function<bool(const std::string&)> replaceable_;
  std::string option_;
  bool committed_ = false;
};

}  // namespace pleshard
