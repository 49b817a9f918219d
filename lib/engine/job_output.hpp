#pragma once
// The output of a batch job (`pleshard run --out OUT`): one HDF5 file created by rank 0 and
// written in place by every rank that holds rows (io/embedding_output.hpp), as
// OUT.partial, beside a progress record OUT.progress naming the job and the parts whose
// rows are all on disk. A rerun of the same job resumes after those parts and ends with the
// same bytes; OUT appears only when complete, carrying the job's fingerprint. An OUT of
// another job is refused (its place could hold nothing else) unless overwriting, which
// removes it and any partial output first; the place is checked before the first step: not
// a directory, a parent that exists, room for every row.

#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

#include "dist/topology.hpp"
#include "io/embedding_output.hpp"

namespace pleshard {

class JobOutput {
 public:
  // Collective over comms.world(): rank 0 resumes the partial output of the job
  // `fingerprint` names, or creates a fresh one; `writer`: this rank writes rows.
  JobOutput(const Communicators& comms, const std::filesystem::path& out, const std::string& fingerprint,
            const EmbeddingFileSpec& spec, bool writer, bool overwrite);
  ~JobOutput();
  JobOutput(const JobOutput&) = delete;
  JobOutput& operator=(const JobOutput&) = delete;

  // Parts already complete (resumed).
  [[nodiscard]] std::size_t parts_done() const { return parts_done_; }
  // Whether OUT already holds this job's whole output (nothing to do).
  [[nodiscard]] bool complete() const { return complete_; }

  // Tokens [first, ...) of layer d. A failure is kept for finish_part(), so that this rank
  // goes on stepping with the others rather than leaving them in a collective.
  void write(int layer, std::int64_t first, std::span<const std::uint8_t> bytes);
  // Collective over the world: every rank's rows so far are on disk and the record says
  // `parts` parts are done; a write failure on any rank ends the job on every rank here.
  void finish_part(std::size_t parts);
  // Collective over the world, after the last part: the output takes its final name.
  void commit();

  [[nodiscard]] std::uint64_t bytes_written() const { return bytes_written_; }
  [[nodiscard]] double write_seconds() const { return write_seconds_; }

 private:
  const Communicators& comms_;
  std::filesystem::path out_;
  std::filesystem::path partial_;
  std::filesystem::path record_;
  std::string fingerprint_;
  std::size_t parts_done_ = 0;
  bool complete_ = false;
  std::unique_ptr<EmbeddingRows> rows_;
  std::exception_ptr failure_;
  double write_seconds_ = 0;
  std::uint64_t bytes_written_ = 0;
};

}  // namespace pleshard
