#include "io/output_target.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "core/log.hpp"

namespace pleshard {

namespace fs = std::filesystem;

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISREG(mode)) return "a file";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

std::optional<struct stat> stat_if_present(const fs::path& path) {
  struct stat s {};
  if (::stat(path.c_str(), &s) != 0) return std::nullopt;
  return s;
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// The directory an output's entry lives in ("." for a bare name).
fs::path parent_of(const fs::path& path) { return path.has_parent_path() ? path.parent_path() : fs::path("."); }

// The output's place as the command would write it: `path` exists as the kind it writes, or
// not at all; so does the .partial a file output is written as (opening a FIFO there would
// block for ever).
void check_existing(const OutputTarget& target) {
  const std::string where = target.path.string() + ": " + target.option;
  const auto s = stat_if_present(target.path);
  if (target.kind == OutputKind::file) {
    if (s && !S_ISREG(s->st_mode))
      throw InputError(where + " names " + kind_of(s->st_mode) + ", not an output file (nothing was written)");
    const fs::path partial = target.path.string() + ".partial";
    if (const auto p = stat_if_present(partial); p && !S_ISREG(p->st_mode))
      throw InputError(partial.string() + ": " + target.option + ": the partial output's place holds " +
                       kind_of(p->st_mode) + "; remove it");
  } else if (s && !S_ISDIR(s->st_mode)) {
    throw InputError(where + " names " + kind_of(s->st_mode) + ", not a directory (nothing was written)");
  }
}

void check_not_an_input(const OutputTarget& target, std::span<const fs::path> inputs) {
  const auto out = stat_if_present(target.path);
  if (!out) return;  // a new file or directory cannot be one of the inputs
  for (const fs::path& input : inputs) {
    const auto in = stat_if_present(input);
    if (!in) continue;
    const bool is_input = same_file(*out, *in);
    bool holds_input = false;
    if (!is_input && target.kind == OutputKind::directory) {
      const auto dir = stat_if_present(parent_of(input));
      holds_input = dir && same_file(*out, *dir);
    }
    if (is_input || holds_input)
      throw InputError(target.path.string() + ": " + target.option + (is_input ? " is " : " holds ") +
                       "the job's input " + input.string() + "; write the output elsewhere (nothing was written)");
  }
}

// The lock's text: who holds it, for the refusal of the next job.
std::string holder_text(const std::string& what) {
  char host[256] = "?";
  ::gethostname(host, sizeof host - 1);
  return "pid " + std::to_string(::getpid()) + " on " + host + " (" + what + ")";
}

std::string read_holder_once(int fd) {
  char text[512] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  std::string holder(text, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
  return holder;
}

// A holder writes its name just after taking the lock: a job that finds the lock taken in
// between waits a moment for the name rather than report an anonymous holder.
std::string read_holder(int fd) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (std::string holder = read_holder_once(fd); !holder.empty()) return holder;
    ::usleep(20'000);
  }
  return "a process that has not said who it is";
}

enum class LockResult { taken, busy, unsupported };

// An open-file-description lock of one byte: released when every descriptor of this open
// file is closed, so by the kernel when its process dies.
LockResult lock_byte(int fd, short type, off_t byte) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = byte;
  lock.l_len = 1;
  if (::fcntl(fd, F_OFD_SETLK, &lock) == 0) return LockResult::taken;
  if (errno == EAGAIN || errno == EACCES) return LockResult::busy;
  if (errno == EINVAL || errno == ENOLCK || errno == EOPNOTSUPP || errno == ENOSYS) return LockResult::unsupported;
  throw SystemError("cannot lock: " + std::string(std::strerror(errno)));
}

[[noreturn]] void throw_open_failure(const fs::path& lock) {
  throw InputError(lock.string() + ": cannot create the output's lock file: " + std::strerror(errno));
}

void warn_unlocked(const fs::path& lock) {
  log_warning(lock.string() + ": the file system cannot lock files; a second job on this output would not be refused");
}

}  // namespace

void check_output_target(const OutputTarget& target, std::span<const fs::path> inputs) {
  if (target.path.empty())
    throw InputError(target.option + ": empty path (an unset variable?); name the output to write");
  const fs::path parent = parent_of(target.path);
  if (!fs::is_directory(parent))
    throw InputError(target.path.string() + ": " + target.option + ": the directory " + parent.string() +
                     " does not exist");
  // A read-only file system or a directory of another user's: said now, with the reason.
  if (::access(parent.c_str(), W_OK | X_OK) != 0)
    throw InputError(target.path.string() + ": " + target.option + ": cannot write in " + parent.string() + ": " +
                     std::strerror(errno));
  check_existing(target);
  check_not_an_input(target, inputs);
}

fs::path claim_lock_path(const fs::path& output) {
  const fs::path named = output.has_filename() ? output : output.parent_path();  // "dir/" is "dir"
  return named.string() + ".lock";
}

OutputClaim OutputClaim::first(const fs::path& path, const std::string& what) {
  const fs::path lock = claim_lock_path(path);
  // A claim on a lock file that its last holder removed would guard nothing: the lock is
  // taken on the file the path names when it is taken, or taken again.
  for (int attempt = 0;; ++attempt) {
    const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw_open_failure(lock);
    // Closed, never removed, until the claim is whole: the file may be another job's.
    struct Closer {
      int fd;
      ~Closer() {
        if (fd >= 0) ::close(fd);
      }
    } open_lock{fd};
    const LockResult job = lock_byte(fd, F_WRLCK, 0);
    if (job == LockResult::unsupported) {
      warn_unlocked(lock);
      ::unlink(lock.c_str());  // nobody can lock it: it claims nothing
      return OutputClaim(lock, -1, true);
    }
    if (job == LockResult::busy)
      throw InputError(path.string() + ": another job writes this output: " + read_holder(fd) + " holds " +
                       lock.string());
    struct stat held {};
    const auto named = stat_if_present(lock);
    if (::fstat(fd, &held) != 0 || !named || !same_file(held, *named)) {
      if (attempt < 8) continue;
      throw InputError(lock.string() + ": the lock file keeps being replaced by another job");
    }
    // Ranks of a killed job can outlive its first rank and go on writing: their byte.
    if (lock_byte(fd, F_WRLCK, 1) != LockResult::taken)
      throw InputError(path.string() + ": ranks of an earlier job on this output still run (" + read_holder(fd) +
                       " started it; they hold " + lock.string() + "); wait until they have ended");
    (void)lock_byte(fd, F_RDLCK, 1);  // shared with this job's other ranks
    const std::string text = holder_text(what) + "\n";
    // Written before the old text's tail is cut, so a reader never finds the file empty
    // once a holder has named itself.
    if (::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()) ||
        ::ftruncate(fd, static_cast<off_t>(text.size())) != 0)
      throw InputError(lock.string() + ": cannot write the output's lock file: " + std::strerror(errno));
    return OutputClaim(lock, std::exchange(open_lock.fd, -1), true);
  }
}

OutputClaim OutputClaim::join(const fs::path& path) {
  const fs::path lock = claim_lock_path(path);
  const int fd = ::open(lock.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0)
    throw InputError(lock.string() + ": cannot open the lock file the first rank made: " + std::strerror(errno) +
                     " (is the output's directory on a file system every rank shares?)");
  OutputClaim claim(lock, fd, false);
  const LockResult result = lock_byte(fd, F_RDLCK, 1);
  if (result == LockResult::unsupported) return OutputClaim(lock, -1, false);
  if (result == LockResult::busy) throw InputError(path.string() + ": the output was claimed by another job");
  return claim;
}

std::string OutputClaim::holder() const { return fd_ >= 0 ? read_holder_once(fd_) : std::string(); }

OutputClaim::OutputClaim(OutputClaim&& other) noexcept
    : lock_(std::move(other.lock_)), fd_(std::exchange(other.fd_, -1)), first_(other.first_) {}

OutputClaim::~OutputClaim() {
  if (fd_ < 0) return;
  // Removed while still held: a job that opened it meanwhile finds its lock on a file no
  // longer at the path, and takes the lock again on a new one.
  if (first_) ::unlink(lock_.c_str());
  ::close(fd_);
}

OutputGuard::OutputGuard(const OutputTarget& target, std::span<const fs::path> inputs, const std::string& what)
    : claim_((check_output_target(target, inputs), OutputClaim::first(target.path, what))) {}

}  // namespace pleshard
