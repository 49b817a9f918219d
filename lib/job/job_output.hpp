#pragma once
// The output of a batch job (`pleshard run --out OUT`): one HDF5 file created by rank 0 and
// written in place by every rank that holds rows (io/embedding_output.hpp), as
// OUT.partial, beside a progress record OUT.progress. The record names the job by what
// decides the output's bytes (its fingerprint: config, checkpoint content, requests,
// options) and holds a digest of each completed part's rows and the state of the checkpoint
// files each rank read (their inode, size and times). A rerun of the same job, under any
// spelling of its paths, verifies those parts against their digests and resumes after the
// last intact one, ending with the same bytes; where a rank's checkpoint files are not as a
// rank of the job that wrote the parts found them (written in place, replaced, copied), the
// parts are computed again, since no tier checks every row it reads against the file; OUT appears only when complete,
// carrying the fingerprint. An OUT of another job is refused unless overwriting. The output's place follows the policy
// of every writer (io/output_target.hpp), checked before the first step, and the job holds its claim on it for its
// life: a second job on OUT, or a rerun while ranks of a killed one still run, is refused with one line naming the
// holder.

#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dist/topology.hpp"
#include "format/embedding_output.hpp"
#include "io/output_target.hpp"

namespace pleshard {

struct JobOutputOptions {
  std::filesystem::path out;
  std::string fingerprint;
  bool overwrite = false;                     // replace an output of another job at `out`
  std::vector<std::filesystem::path> inputs;  // the job's input files, never written over
  // First output row of each part, then the row count: the rows each part's digest covers.
  std::vector<std::int64_t> part_rows;
  // This rank's PleCheckpoint::file_state(), and the checkpoint's name for messages.
  std::uint64_t checkpoint_state = 0;
  std::string checkpoint_name;
};

class JobOutput {
 public:
  // Collective over comms.world(): rank 0 claims the output, then resumes the partial output
  // of this job (its intact parts) or creates a fresh one; `writer`: this rank writes rows.
  JobOutput(const Communicators& comms, const JobOutputOptions& options, const EmbeddingFileSpec& spec, bool writer);
  ~JobOutput();
  JobOutput(const JobOutput&) = delete;
  JobOutput& operator=(const JobOutput&) = delete;

  // Parts already complete (resumed).
  [[nodiscard]] std::size_t parts_done() const { return parts_done_; }
  // Whether OUT already holds this job's whole output (nothing to do).
  [[nodiscard]] bool complete() const { return complete_; }

  // Tokens [first, ...) of layer d, of the part being written. A failure is kept for
  // finish_part(), so that this rank goes on stepping with the others rather than leaving
  // them in a collective.
  void write(int layer, std::int64_t first, std::span<const std::uint8_t> bytes);
  // Collective over the world: every rank's rows so far are on disk and the record says
  // `parts` parts are done, with the digest of the last; a write failure on any rank ends
  // the job on every rank here.
  void finish_part(std::size_t parts);
  // Collective over the world, after the last part: the output takes its final name.
  void commit();

  [[nodiscard]] std::uint64_t bytes_written() const { return bytes_written_; }
  [[nodiscard]] double write_seconds() const { return write_seconds_; }

 private:
  // Collective: the digests of the parts [0, parts) of the partial output as read back, each
  // rank reading its share of their rows.
  [[nodiscard]] std::vector<std::uint64_t> read_part_digests(std::size_t parts,
                                                             std::span<const std::uint64_t> offsets) const;

  const Communicators& comms_;
  JobOutputOptions options_;
  std::filesystem::path partial_;
  std::filesystem::path record_;
  int layers_ = 0;
  std::size_t token_bytes_ = 0;
  std::optional<OutputClaim> claim_;
  std::size_t parts_done_ = 0;
  bool complete_ = false;
  std::vector<std::uint64_t> part_digests_;       // of the parts done (rank 0)
  std::vector<std::uint64_t> checkpoint_states_;  // those of the ranks that wrote them, sorted (rank 0)
  std::uint64_t part_digest_ = 0;                 // of this rank's rows of the part being written
  std::unique_ptr<EmbeddingRows> rows_;
  std::exception_ptr failure_;
  double write_seconds_ = 0;
  std::uint64_t bytes_written_ = 0;
};

// The digest of one output row: a part's digest is the sum of its rows' (mod 2^64), so ranks
// that write its rows in any share and order add up to the same value.
[[nodiscard]] std::uint64_t output_row_digest(int layer, std::int64_t row, std::span<const std::uint8_t> bytes);

}  // namespace pleshard
