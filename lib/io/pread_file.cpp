#include "io/pread_file.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.hpp"

namespace pleshard {

PreadFile::PreadFile(const std::filesystem::path& path) : path_(path.string()) {
  // Non-blocking: opening a FIFO would otherwise wait for a writer; it is refused below.
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) throw InputError(path_ + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw InputError(path_ + ": not a regular file");
  }
  // Blocking from here on: io_uring answers reads of a non-blocking file that would wait
  // with EAGAIN instead of doing them.
  (void)::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  // Rows are scattered: readahead would read pages nobody asked for.
  (void)::posix_fadvise(fd_, 0, 0, POSIX_FADV_RANDOM);
  // Refused by some file systems (tmpfs, some FUSE ones): reads then use the page cache.
  direct_open_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_DIRECT);
  if (direct_open_ >= 0) (void)::fcntl(direct_open_, F_SETFL, ::fcntl(direct_open_, F_GETFL) & ~O_NONBLOCK);
  direct_fd_ = direct_open_;
}

PreadFile::~PreadFile() {
  if (direct_open_ >= 0) ::close(direct_open_);
  if (fd_ >= 0) ::close(fd_);
}

std::size_t PreadFile::read_from(int fd, std::uint64_t offset, std::span<std::uint8_t> out) const {
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EINVAL && fd != fd_) {  // an alignment the device does not take
      refuse_direct();
      break;
    }
    if (n < 0)
      throw InputError(path_ + ": read error at byte " + std::to_string(offset + done) + ": " + std::strerror(errno));
    if (n == 0)
      throw InputError(path_ + ": file ends at byte " + std::to_string(offset + done) + ", expected " +
                       std::to_string(out.size() - done) + " more bytes (truncated?)");
    done += static_cast<std::size_t>(n);
  }
  return done;
}

void PreadFile::read_exact(std::uint64_t offset, std::span<std::uint8_t> out) const {
  (void)read_from(fd_, offset, out);
}

void PreadFile::read_exact_past_cache(std::uint64_t offset, std::span<std::uint8_t> out) const {
  constexpr std::uint64_t k_block = k_direct_block_bytes;
  const auto address = reinterpret_cast<std::uintptr_t>(out.data());
  const std::uint64_t head = (k_block - offset % k_block) % k_block;
  const int direct = direct_fd_;
  if (direct < 0 || (address - offset) % k_block != 0 || out.size() < head + k_block) {
    read_exact(offset, out);
    return;
  }
  const std::uint64_t middle = (out.size() - head) / k_block * k_block;
  read_exact(offset, out.first(head));
  // The rest through the page cache from where the direct reads stopped (all of it read,
  // or refused for its alignment).
  const std::size_t done = head + read_from(direct, offset + head, out.subspan(head, middle));
  read_exact(offset + done, out.subspan(done));
}

void drop_cached_pages(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path.string() + ": cannot open: " + std::strerror(errno));
  (void)::fdatasync(fd);
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

}  // namespace pleshard
