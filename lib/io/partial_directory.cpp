#include "io/partial_directory.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "core/error.hpp"

namespace pleshard {

namespace fs = std::filesystem;

namespace {

void sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw SystemError(dir.string() + ": cannot open: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (rc != 0) throw SystemError(dir.string() + ": cannot sync to disk: " + std::strerror(error));
}

fs::path parent_of(const fs::path& path) { return path.has_parent_path() ? path.parent_path() : fs::path("."); }

}  // namespace

PartialDirectory::PartialDirectory(fs::path path, std::function<bool(const std::string&)> replaceable,
                                   std::string option)
    : path_(std::move(path)),
      partial_(path_.string() + ".partial"),
      replaceable_(std::move(replaceable)),
      option_(std::move(option)) {
  check_target();
  std::error_code error;
  fs::remove_all(partial_, error);
  if (error) throw SystemError(partial_.string() + ": cannot remove a killed writer's leftover: " + error.message());
  if (!fs::create_directory(partial_, error) || error)
    throw SystemError(partial_.string() + ": cannot create: " + error.message());
}

PartialDirectory::~PartialDirectory() {
  if (committed_) return;
  std::error_code ignored;
  fs::remove_all(partial_, ignored);
}

void PartialDirectory::check_target() const {
  std::error_code error;
  if (!fs::exists(path_, error)) return;
  for (const auto& entry : fs::directory_iterator(path_, error)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || !replaceable_(name))
      throw InputError(path_.string() + ": " + option_ + " holds " + name +
                       ", which is not a file of the output it would replace; write to a new or empty directory "
                       "(nothing was written)");
  }
  if (error) throw InputError(path_.string() + ": " + option_ + ": cannot list: " + error.message());
}

void PartialDirectory::commit() {
  check_target();
  sync_directory(partial_);
  std::error_code error;
  const bool exists = fs::exists(path_, error);
  const bool empty = exists && fs::is_empty(path_, error);
  if (!exists || empty) {
    // rename(2) takes the place of a missing or empty directory at once.
    fs::rename(partial_, path_, error);
    if (error) throw SystemError(partial_.string() + ": cannot rename to " + path_.string() + ": " + error.message());
  } else if (::renameat2(AT_FDCWD, partial_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) != 0) {
    // A file system that cannot exchange (some network ones): the old output moves aside
    // first, so a reader may find no checkpoint for that moment, but never a mix.
    const fs::path aside = path_.string() + ".replaced";
    fs::remove_all(aside, error);
    fs::rename(path_, aside, error);
    if (error) throw SystemError(path_.string() + ": cannot move aside to replace it: " + error.message());
    fs::rename(partial_, path_, error);
    if (error) {
      std::error_code ignored;
      fs::rename(aside, path_, ignored);  // the earlier output back in its place
      throw SystemError(partial_.string() + ": cannot rename to " + path_.string() + ": " + error.message());
    }
    fs::remove_all(aside, error);
  } else {
    fs::remove_all(partial_, error);  // now the earlier output
  }
  committed_ = true;
  sync_directory(parent_of(path_));
}

}  // namespace pleshard
