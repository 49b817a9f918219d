#include "io/durable_file.hpp"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace pleshard {

namespace {

[[noreturn]] void throw_errno(const std::string& what) { throw SystemError(what + ": " + std::strerror(errno)); }

void sync_fd(int fd, const std::string& what) {
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  errno = error;
  if (rc != 0) throw_errno(what + ": cannot sync to disk");
}

}  // namespace

void sync_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_errno(path.string() + ": cannot open");
  sync_fd(fd, path.string());
}

void commit_file(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::error_code error;
  std::filesystem::rename(from, to, error);
  if (error) throw SystemError(from.string() + ": cannot rename to " + to.string() + ": " + error.message());
  const std::filesystem::path dir = to.has_parent_path() ? to.parent_path() : std::filesystem::path(".");
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw_errno(dir.string() + ": cannot open");
  sync_fd(fd, dir.string());
}

PartialFile::PartialFile(std::filesystem::path path) : path_(std::move(path)), partial_(path_.string() + ".partial") {
  fd_ = ::open(partial_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw_errno(partial_.string() + ": cannot create");
}

PartialFile::~PartialFile() {
  if (fd_ < 0) return;
  ::close(fd_);
  std::error_code ignored;
  std::filesystem::remove(partial_, ignored);
}

void PartialFile::write_at(std::uint64_t offset, std::span<const std::uint8_t> bytes) {
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) throw SystemError(partial_.string() + ": cannot write: no byte written (disk full?)");
    if (n < 0) throw_errno(partial_.string() + ": cannot write");
    done += static_cast<std::size_t>(n);
  }
}

void PartialFile::resize(std::uint64_t bytes) {
  if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0) throw_errno(partial_.string() + ": cannot extend");
}

void PartialFile::commit() {
  const int fd = std::exchange(fd_, -1);
  try {
    sync_fd(fd, partial_.string());  // closes it
    commit_file(partial_, path_);
  } catch (...) {
    // A sync that fails (ENOSPC and EIO often show only here) leaves nothing behind either.
    std::error_code ignored;
    std::filesystem::remove(partial_, ignored);
    throw;
  }
}

void write_text_file(const std::filesystem::path& path, std::string_view text) {
  PartialFile file(path);
  file.write_at(0, {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
  file.commit();
}

void require_free_space(const std::filesystem::path& path, std::uint64_t bytes, const std::string& what) {
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::current_path();
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0) throw_errno(dir.string() + ": cannot query the file system");
  const std::uint64_t free = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (free < bytes)
    throw InputError(path.string() + ": " + what + " needs " + std::to_string(bytes) + " bytes, the file system has " +
                     std::to_string(free) + " free");
}

void reserve_file_space(const std::filesystem::path& path, std::uint64_t bytes, const std::string& what) {
  if (bytes == 0) return;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw_errno(path.string() + ": cannot open to reserve space");
  const int rc = ::fallocate(fd, 0, 0, static_cast<off_t>(bytes));
  const int error = errno;
  ::close(fd);
  if (rc == 0 || error == EOPNOTSUPP || error == ENOSYS) return;  // reserved, or the file system cannot
  throw InputError(path.string() + ": cannot reserve the " + std::to_string(bytes) + " bytes " + what +
                   " needs: " + std::strerror(error));
}

}  // namespace pleshard
