#include "engine/job_output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <mpi.h>

#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/mpi_check.hpp"
#include "io/durable_file.hpp"

namespace pleshard {

namespace fs = std::filesystem;

namespace {

// "<fingerprint> <parts done>", written whole or not at all.
void write_record(const fs::path& record, const std::string& fingerprint, std::size_t parts) {
  write_text_file(record, fingerprint + " " + std::to_string(parts) + "\n");
}

}  // namespace

JobOutput::JobOutput(const Communicators& comms, const fs::path& out, const std::string& fingerprint,
                     const EmbeddingFileSpec& spec, bool writer, bool overwrite)
    : comms_(comms),
      out_(out),
      partial_(out.string() + ".partial"),
      record_(out.string() + ".progress"),
      fingerprint_(fingerprint) {
  std::vector<std::uint64_t> offsets(static_cast<std::size_t>(spec.layers));
  std::int64_t done = 0;
  std::int64_t complete = 0;
  EmbeddingFileSpec file_spec = spec;
  file_spec.job = fingerprint;
  collective_try(comms.world(), [&] {
    if (comms.topology().rank != 0) return;
    const fs::path parent = out_.has_parent_path() ? out_.parent_path() : fs::path(".");
    if (!fs::is_directory(parent))
      throw InputError(out_.string() + ": --out: the directory " + parent.string() + " does not exist");
    if (fs::is_directory(out_)) throw InputError(out_.string() + ": --out names a directory, not an output file");
    if (fs::exists(out_) && !overwrite) {
      if (embedding_file_job(out_) != fingerprint)
        throw InputError(out_.string() +
                         ": holds the output of another job (config, checkpoint, requests, "
                         "--out-dtype or --part-tokens differ); --overwrite replaces it");
      complete = 1;  // this very job's output, complete
      return;
    }
    if (overwrite) {
      for (const fs::path& stale : {out_, partial_, record_}) fs::remove(stale);
    }
    if (fs::exists(record_)) {
      std::ifstream in(record_);
      std::string found;
      in >> found >> done;
      if (found != fingerprint)
        throw InputError(record_.string() +
                         ": records the progress of a different job (config, checkpoint, "
                         "requests, --out-dtype or --part-tokens differ); remove it and " +
                         partial_.string() + " to start afresh");
      if (!fs::exists(partial_)) done = 0;
    }
    if (done > 0) {
      offsets = embedding_file_offsets(partial_, spec.layers);
    } else {
      // Room for every row now rather than a full disk hours into the job.
      require_free_space(partial_, spec.row_bytes() + (1u << 20), "the output");
      offsets = create_embedding_file(partial_, file_spec);
      write_record(record_, fingerprint_, 0);
    }
  });
  PLESHARD_MPI_CHECK(MPI_Bcast(&complete, 1, MPI_INT64_T, 0, comms.world()));
  complete_ = complete != 0;
  if (complete_) return;
  PLESHARD_MPI_CHECK(MPI_Bcast(&done, 1, MPI_INT64_T, 0, comms.world()));
  PLESHARD_MPI_CHECK(
      MPI_Bcast(offsets.data(), mpi_count(offsets.size(), "output layers"), MPI_UINT64_T, 0, comms.world()));
  parts_done_ = static_cast<std::size_t>(done);
  collective_try(comms.world(), [&] {
    if (writer)
      rows_ = std::make_unique<EmbeddingRows>(partial_, offsets,
                                              static_cast<std::size_t>(spec.width) * kernels::out_bytes(spec.dtype));
  });
}

JobOutput::~JobOutput() = default;

void JobOutput::write(int layer, std::int64_t first, std::span<const std::uint8_t> bytes) {
  if (failure_ || !rows_) return;
  const double t0 = MPI_Wtime();
  try {
    rows_->write(layer, first, bytes);
    bytes_written_ += bytes.size();
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
  collective_try(comms_.world(), [&] {
    if (comms_.topology().rank != 0) return;
    write_record(record_, fingerprint_, parts);
    if (const char* kill_after = std::getenv("PLESHARD_FAULT_KILL_AFTER_PARTS");
        kill_after != nullptr && static_cast<std::size_t>(std::atoll(kill_after)) == parts) {
      std::fprintf(stderr, "pleshard: fault injection: killed after part %zu\n", parts);
      std::raise(SIGKILL);
    }
  });
}

void JobOutput::commit() {
  rows_.reset();
  collective_try(comms_.world(), [&] {
    if (comms_.topology().rank != 0) return;
    commit_file(partial_, out_);
    fs::remove(record_);
  });
}

}  // namespace pleshard
