#pragma once
// The one output policy of every command that writes (run, embed, ckpt make and convert,
// profile): where it may write, and the claim it holds on that place while it writes.
//
// An output is refused before anything is read or written when its path is empty (an unset
// variable), names something that exists and is not what the command writes (a device, a
// FIFO, a socket, a directory where a file goes or a file where a directory goes), lies in a
// directory that does not exist, or is one of the job's inputs (by device and inode, so no
// spelling of the path gets past it). Writers then write <path>.partial and rename it when
// complete (io/durable_file.hpp), holding an OutputClaim on <path> for the job's life.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

namespace pleshard {

enum class OutputKind {
  file,       // one file (HDF5 outputs, profiles, CSV, HDF5 checkpoints)
  directory,  // a directory the command fills (safetensors checkpoints)
};

struct OutputTarget {
  std::filesystem::path path;
  OutputKind kind = OutputKind::file;
  std::string option = "--out";  // names the target in messages
};

// InputError "<path>: <option> ..." (or "<option>: empty path ...") when `target` may not be
// written, as above. `inputs` are files or directories the job reads; a directory output
// that holds one of them is refused too (its files would be replaced).
void check_output_target(const OutputTarget& target, std::span<const std::filesystem::path> inputs);

// Exclusive claim on an output for a job's life, so that two jobs never write one output and
// a rerun cannot start while ranks of a killed job still write it. The claim is an
// open-file-description lock on <path>.lock, which the kernel drops when the last process
// holding it dies, however it dies; the file names the holder for the refusal message.
// Byte 0 is the job's (its first rank holds it for writing); byte 1 is every rank's (held
// for reading), so that ranks of a killed job that outlive its first rank still hold it.
class OutputClaim {
 public:
  // The first rank's claim: InputError naming the holder when another job holds the output,
  // or when ranks of an earlier job on it still run. `what` names the job in the lock file.
  static OutputClaim first(const std::filesystem::path& path, const std::string& what);
  // Every other rank's, after the first rank's claim succeeded.
  static OutputClaim join(const std::filesystem::path& path);

  OutputClaim(OutputClaim&& other) noexcept;
  OutputClaim& operator=(OutputClaim&&) = delete;
  OutputClaim(const OutputClaim&) = delete;
  ~OutputClaim();

  // The file system could not lock (some network file systems): the claim holds nothing.
  [[nodiscard]] bool held() const { return fd_ >= 0; }
  [[nodiscard]] const std::filesystem::path& lock_path() const { return lock_; }
  // Who holds the claim, as the first rank wrote it into the lock file ("pid 12 on node3
  // (pleshard run)"; empty where the claim holds nothing): ranks that read another holder
  // than the first rank's see another file at the same path (a node's own disk).
  [[nodiscard]] std::string holder() const;

 private:
  OutputClaim(std::filesystem::path lock, int fd, bool first) : lock_(std::move(lock)), fd_(fd), first_(first) {}
  std::filesystem::path lock_;
  int fd_ = -1;
  bool first_ = false;
};

// The path of the claim's lock file for an output.
[[nodiscard]] std::filesystem::path claim_lock_path(const std::filesystem::path& output);

// A single-process command's output: checked, then claimed (both as above).
class OutputGuard {
 public:
  OutputGuard(const OutputTarget& target, std::span<const std::filesystem::path> inputs, const std::string& what);

 private:
  OutputClaim claim_;
};

}  // namespace pleshard
