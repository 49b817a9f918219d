#include "io/durable_file.hpp"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

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

void write_text_file(const std::filesystem::path& path, std::string_view text) {
  const std::filesystem::path partial = path.string() + ".partial";
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw_errno(partial.string() + ": cannot create");
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      ::close(fd);
      errno = error;
      throw_errno(partial.string() + ": cannot write");
    }
    done += static_cast<std::size_t>(n);
  }
  sync_fd(fd, partial.string());
  commit_file(partial, path);
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

}  // namespace pleshard
