#pragma once
// Host waits for peers that are watched: MPI calls on the step path are made non-blocking and
// their requests polled against the job's stall limit (--collective-timeout), so that a rank
// that stops (SIGSTOP, a hung file system, a node that froze) ends the job on every rank
// with one message, as a stalled GPU does, instead of holding the others for ever.
//
// The limit is the process's, set by the engine for the life of a job's steps (loads before
// them may be skewed across ranks for longer, and wait unwatched); none is set by default.

#include <string>

#include <mpi.h>

namespace pleshard {

// Seconds a watched wait may last; infinity (the default) waits for ever.
void set_stall_limit(double seconds);
[[nodiscard]] double stall_limit();

// Completes `request` (MPI_Test polled, yielding the core after a short spin); past the stall
// limit the job ends on every rank (abort_job) with a message naming `what`.
void wait_watched(MPI_Request& request, const std::string& what);

// A limit for a scope (an engine's life of steps). Engines of one process (Python makes
// several, and closes them in any order) each hold one: the shortest of those alive holds,
// and with none alive waits are unwatched again.
class StallLimitScope {
 public:
  explicit StallLimitScope(double seconds);
  ~StallLimitScope();
  StallLimitScope(const StallLimitScope&) = delete;
  StallLimitScope& operator=(const StallLimitScope&) = delete;

 private:
  double seconds_;
};

}  // namespace pleshard
