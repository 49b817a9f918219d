#include "job/job_output.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include <mpi.h>

#include "core/collective.hpp"
#include "core/digest.hpp"
#include "core/error.hpp"
#include "core/fault_plan.hpp"
#include "core/log.hpp"
#include "core/mpi_check.hpp"
#include "core/watched_collectives.hpp"
#include "io/durable_file.hpp"
#include "io/pread_file.hpp"

namespace pleshard {

namespace fs = std::filesystem;

namespace {

void append_hex(std::string& text, std::span<const std::uint64_t> values) {
  text += " " + std::to_string(values.size());
  char hex[24];
  for (const std::uint64_t v : values) {
    std::snprintf(hex, sizeof hex, " %016llx", static_cast<unsigned long long>(v));
    text += hex;
  }
}

// "<fingerprint> <parts done> <digest of each part, hex>" and on a second line
// "checkpoint <count> <file state, hex>...", written whole or not at all.
void write_record(const fs::path& record, const std::string& fingerprint, std::span<const std::uint64_t> digests,
                  std::span<const std::uint64_t> checkpoint_states) {
  std::string text = fingerprint;
  append_hex(text, digests);
  text += "\ncheckpoint";
  append_hex(text, checkpoint_states);
  write_text_file(record, text + "\n");
}

struct Record {
  std::string fingerprint;
  std::optional<std::vector<std::uint64_t>> digests;  // of the parts done; none where unreadable
  std::vector<std::uint64_t> checkpoint_states;       // of the ranks that wrote them, sorted
};

// "<count> <hex>..." to the end of `line`, nullopt where the words are not exactly that.
std::optional<std::vector<std::uint64_t>> read_hex(std::istringstream& line) {
  std::int64_t count = -1;
  if (!(line >> count) || count < 0) return std::nullopt;
  std::vector<std::uint64_t> values;
  for (std::string word; line >> word;) {
    char* end = nullptr;
    values.push_back(std::strtoull(word.c_str(), &end, 16));
    if (word.size() != 16 || *end != '\0') return std::nullopt;
  }
  if (values.size() != static_cast<std::size_t>(count)) return std::nullopt;
  return values;
}

// A first line that cannot be read whole names no digests (the job starts afresh); a second
// that cannot (or none: an older record), no checkpoint states (its parts are computed again).
Record read_record(const fs::path& record) {
  if (!fs::is_regular_file(record))
    throw InputError(record.string() + ": the progress record's place holds something that is not a file; remove it");
  std::ifstream in(record);
  Record r;
  std::string text;
  std::getline(in, text);
  std::istringstream first(text);
  first >> r.fingerprint;
  r.digests = read_hex(first);
  std::getline(in, text);
  std::istringstream second(text);
  if (std::string word; second >> word && word == "checkpoint") {
    r.checkpoint_states = read_hex(second).value_or(std::vector<std::uint64_t>{});
    std::sort(r.checkpoint_states.begin(), r.checkpoint_states.end());  // as written, unless edited
  }
  return r;
}

}  // namespace

std::uint64_t output_row_digest(int layer, std::int64_t row, std::span<const std::uint8_t> bytes) {
  return Digest(static_cast<std::uint64_t>(row) * 1024 + static_cast<std::uint64_t>(layer)).add(bytes).value();
}

namespace {

// Why an output at `file` is another job's: the attributes that differ from this job's
// (config, token_map_sha256, checkpoint_identity, ...), or every input where it cannot tell.
std::string what_differs(const fs::path& file, const EmbeddingFileSpec& spec) {
  std::vector<OutputAttribute> decisive;
  for (const OutputAttribute& a : spec.description.file)
    if (a.name != "pleshard_version" && a.name != "writer") decisive.push_back(a);
  const std::vector<std::string> differ = differing_attributes(file, decisive);
  if (differ.empty()) return "config, token map, checkpoint, requests, --out-dtype or --part-tokens differ";
  std::string text = "its ";
  for (std::size_t i = 0; i < differ.size(); ++i) text += (i > 0 ? ", " : "") + differ[i];
  return text + (differ.size() > 1 ? " differ" : " differs");
}

}  // namespace

JobOutput::JobOutput(const Communicators& comms, const JobOutputOptions& options, const EmbeddingFileSpec& spec,
                     bool writer)
    : comms_(comms),
      options_(options),
      partial_(options.out.string() + ".partial"),
      record_(options.out.string() + ".progress"),
      layers_(spec.layers),
      token_bytes_(static_cast<std::size_t>(spec.width) * kernels::out_bytes(spec.dtype)) {
  const bool root = comms.topology().rank == 0;
  const fs::path& out = options_.out;
  // The place and the claim on it first: nothing is read or removed there before. Every
  // rank must then open the files rank 0 opens: one file system under --out, not each node's
  // own disk at the same path (rows written there would be lost, or mixed into another job's
  // files). The holder rank 0 wrote into the lock file tells: {held, its holder's digest}.
  std::uint64_t claim[2] = {0, 0};
  collective_try(comms.world(), [&] {
    if (!root) return;
    check_output_target({out, OutputKind::file, "--out"}, options_.inputs);
    claim_.emplace(OutputClaim::first(out, "pleshard run"));
    if (claim_->held()) {
      claim[0] = 1;
      claim[1] = Digest().add(claim_->holder()).value();
    }
  });
  const std::string what = "the output's state from rank 0";
  watched_bcast(claim, 2, MPI_UINT64_T, 0, comms.world(), what);
  const bool held = claim[0] != 0;
  const std::uint64_t holder = claim[1];
  collective_try(comms.world(), [&] {
    if (root || !held) return;
    claim_.emplace(OutputClaim::join(out));
    if (claim_->held() && Digest().add(claim_->holder()).value() != holder)
      throw InputError(claim_->lock_path().string() + ": rank " + std::to_string(comms.topology().rank) +
                       " finds another job's lock file than rank 0 made (is the output's directory on a file "
                       "system every rank shares?)");
  });

  // Every rank's checkpoint file state, for the record and the check of a resume.
  std::vector<std::uint64_t> states(root ? static_cast<std::size_t>(comms.topology().world) : 0);
  watched_gather(&options_.checkpoint_state, states.data(), 1, MPI_UINT64_T, 0, comms.world(),
                 "every rank's checkpoint file state");
  std::sort(states.begin(), states.end());
  states.erase(std::unique(states.begin(), states.end()), states.end());

  std::vector<std::uint64_t> offsets(static_cast<std::size_t>(spec.layers));
  std::int64_t done = 0;
  std::int64_t complete = 0;
  EmbeddingFileSpec file_spec = spec;
  file_spec.job = options_.fingerprint;
  collective_try(comms.world(), [&] {
    if (!root) return;
    if (fs::exists(out) && !options_.overwrite) {
      if (embedding_file_job(out) != options_.fingerprint)
        throw InputError(out.string() + ": holds the output of another job (" + what_differs(out, spec) +
                         "); --overwrite replaces it");
      complete = 1;  // this very job's output, complete
      return;
    }
    if (options_.overwrite)
      for (const fs::path& stale : {out, partial_, record_}) fs::remove(stale);
    if (fs::exists(record_) || fs::is_symlink(record_)) {
      const Record found = read_record(record_);
      if (found.fingerprint != options_.fingerprint)
        throw InputError(record_.string() + ": records the progress of a different job (" +
                         what_differs(partial_, spec) + "); remove it and " + partial_.string() + " to start afresh");
      if (!found.digests)
        log_warning(record_.string() + ": its completed parts cannot be read (a damaged record): starting afresh");
      else if (fs::exists(partial_))
        part_digests_ = *found.digests;
      done = static_cast<std::int64_t>(part_digests_.size());
      checkpoint_states_ = found.checkpoint_states;
      // Resumed only by ranks whose checkpoint files are each as some rank of the job found them.
      if (done > 0 &&
          !std::includes(checkpoint_states_.begin(), checkpoint_states_.end(), states.begin(), states.end())) {
        const std::string parts = std::to_string(done) + " completed parts";
        log_warning(checkpoint_states_.empty()
                        ? record_.string() + ": records no state of the checkpoint's files (an older or damaged " +
                              "record): computing its " + parts + " again"
                        : options_.checkpoint_name + ": the checkpoint's files are not as they were when the " + parts +
                              " of " + partial_.string() + " were written (written in place, replaced, copied " +
                              "over, renamed, linked or their mode changed since): computing them again");
        done = 0;
        part_digests_.clear();
      }
    }
    if (done > 0) {
      try {
        offsets = embedding_file_offsets(partial_, spec.layers);
      } catch (const InputError& e) {
        // Only this job's own unfinished work is lost: it is done again.
        log_warning(std::string(e.what()) + ": the partial output cannot be read; starting afresh");
        done = 0;
        part_digests_.clear();
      }
    }
    if (done == 0) {
      // Room for every row now rather than a full disk hours into the job.
      require_free_space(partial_, spec.row_bytes() + (1u << 20), "the output");
      offsets = create_embedding_file(partial_, file_spec);
      checkpoint_states_ = states;
      write_record(record_, options_.fingerprint, {}, checkpoint_states_);
    }
  });
  watched_bcast(&complete, 1, MPI_INT64_T, 0, comms.world(), what);
  complete_ = complete != 0;
  if (complete_) return;
  watched_bcast(&done, 1, MPI_INT64_T, 0, comms.world(), what);
  watched_bcast(offsets.data(), mpi_count(offsets.size(), "output layers"), MPI_UINT64_T, 0, comms.world(), what);

  // The parts a killed job completed are trusted only as far as their rows still match.
  if (done > 0) {
    if (root)
      log_info("verifying the " + std::to_string(done) + " completed parts of " + partial_.string() +
               " before resuming");
    const std::vector<std::uint64_t> found =
        collective_try(comms.world(), [&] { return read_part_digests(static_cast<std::size_t>(done), offsets); });
    collective_try(comms.world(), [&] {
      if (!root) return;
      // `found` ends before the first part some rank could not read whole.
      const auto intact = static_cast<std::int64_t>(
          std::mismatch(found.begin(), found.end(), part_digests_.begin()).first - found.begin());
      if (intact == done) return;
      log_warning(partial_.string() + ": the rows of part " + std::to_string(intact + 1) + " of " +
                  std::to_string(done) + " do not match the digest recorded when they were written (the file " +
                  "was changed); resuming from there");
      done = intact;
      part_digests_.resize(static_cast<std::size_t>(done));
      write_record(record_, options_.fingerprint, part_digests_, checkpoint_states_);
    });
    watched_bcast(&done, 1, MPI_INT64_T, 0, comms.world(), what);
  }
  parts_done_ = static_cast<std::size_t>(done);
  collective_try(comms.world(), [&] {
    if (writer) rows_ = std::make_unique<EmbeddingRows>(partial_, offsets, token_bytes_);
  });
}

JobOutput::~JobOutput() = default;

std::vector<std::uint64_t> JobOutput::read_part_digests(std::size_t parts,
                                                        std::span<const std::uint64_t> offsets) const {
  if (options_.part_rows.size() < parts + 1) throw SystemError("JobOutput: part rows not given for every part");
  const PreadFile file(partial_);
  const Topology& t = comms_.topology();
  std::vector<std::uint64_t> digests(parts, 0);
  constexpr std::int64_t k_block_bytes = 8 << 20;
  const std::int64_t block_rows = std::max<std::int64_t>(1, k_block_bytes / static_cast<std::int64_t>(token_bytes_));
  std::vector<std::uint8_t> block;
  // Parts of a file cut short cannot match: from the first this rank cannot read whole, the
  // parts are counted unreadable on every rank.
  std::size_t readable = parts;
  for (std::size_t p = 0; p < readable; ++p) {
    const std::int64_t first = options_.part_rows[p];
    const std::int64_t rows = options_.part_rows[p + 1] - first;
    // My share of the part's rows, in every layer.
    const std::int64_t begin = first + rows * t.rank / t.world;
    const std::int64_t end = first + rows * (t.rank + 1) / t.world;
    for (int d = 0; d < layers_; ++d)
      for (std::int64_t row = begin; row < end; row += block_rows) {
        const std::int64_t n = std::min(block_rows, end - row);
        block.resize(static_cast<std::size_t>(n) * token_bytes_);
        try {
          file.read_exact(offsets[static_cast<std::size_t>(d)] + static_cast<std::uint64_t>(row) * token_bytes_, block);
        } catch (const InputError&) {  // a file cut short
          readable = p;
          break;
        }
        for (std::int64_t i = 0; i < n; ++i)
          digests[p] += output_row_digest(
              d, row + i,
              std::span<const std::uint8_t>(block).subspan(static_cast<std::size_t>(i) * token_bytes_, token_bytes_));
      }
  }
  auto first_unreadable = static_cast<std::uint64_t>(readable);
  const std::string what = "every rank's digests of the completed parts";
  watched_allreduce(&first_unreadable, 1, MPI_UINT64_T, MPI_MIN, comms_.world(), what);
  watched_allreduce(digests.data(), mpi_count(digests.size(), "output parts"), MPI_UINT64_T, MPI_SUM, comms_.world(),
                    what);
  digests.resize(static_cast<std::size_t>(first_unreadable));
  return digests;
}

void JobOutput::write(int layer, std::int64_t first, std::span<const std::uint8_t> bytes) {
  if (failure_ || !rows_) return;
  const double t0 = MPI_Wtime();
  try {
    rows_->write(layer, first, bytes);
    bytes_written_ += bytes.size();
    for (std::size_t at = 0; at + token_bytes_ <= bytes.size(); at += token_bytes_)
      part_digest_ += output_row_digest(layer, first + static_cast<std::int64_t>(at / token_bytes_),
                                        bytes.subspan(at, token_bytes_));
  } catch (const Error&) {
    failure_ = std::current_exception();
  }
  write_seconds_ += MPI_Wtime() - t0;
}

void JobOutput::finish_part(std::size_t parts) {
  collective_try(comms_.world(), [&] {
    if (failure_) std::rethrow_exception(failure_);
    const double t0 = MPI_Wtime();
    if (rows_) rows_->sync();
    write_seconds_ += MPI_Wtime() - t0;
  });
  std::uint64_t digest = 0;
  watched_reduce(&part_digest_, &digest, 1, MPI_UINT64_T, MPI_SUM, 0, comms_.world(), "the output part's digest");
  part_digest_ = 0;
  collective_try(comms_.world(), [&] {
    if (comms_.topology().rank != 0) return;
    part_digests_.push_back(digest);
    if (part_digests_.size() != parts) throw SystemError("JobOutput: parts finished out of order");
    write_record(record_, options_.fingerprint, part_digests_, checkpoint_states_);
    if (fault_plan().kill_after_parts == parts) {
      std::fprintf(stderr, "pleshard: fault injection: killed after part %zu\n", parts);
      std::raise(SIGKILL);
    }
  });
}

void JobOutput::commit() {
  rows_.reset();
  collective_try(comms_.world(), [&] {
    if (comms_.topology().rank != 0) return;
    commit_file(partial_, options_.out);
    fs::remove(record_);
  });
}

}  // namespace pleshard
