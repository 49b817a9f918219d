#pragma once
// Host waits for peers that are watched: MPI calls are made non-blocking and their requests
// polled against the job's stall limit (--collective-timeout), so that a rank that stops
// (SIGSTOP, a hung file system, a node that froze) ends the job on every rank with one
// message, as a stalled GPU does, instead of holding the others for ever.
//
// The limit is the command's (set once its options are parsed, for every wait until
// MPI_Finalize), or an engine's for the life of its steps (Python, which has no command);
// none is set by default. core/watched_collectives.hpp holds the collectives so waited for.

#include <string>
#include <utility>

#include <mpi.h>

namespace pleshard {

// The command's limit in seconds, for every watched wait of the process from now on;
// infinity (the default) waits for ever.
void set_stall_limit(double seconds);
// Seconds a watched wait may last: the shortest of the command's and the scopes' alive.
[[nodiscard]] double stall_limit();

// Completes `request` (MPI_Test polled, yielding the core after a short spin); past the stall
// limit the job ends on every rank (abort_job) with a message naming `what`, and the part
// of the job the wait belongs to (WaitContext).
void wait_watched(MPI_Request& request, const std::string& what);

// A limit for a scope (an engine's life of steps). Engines of one process (Python makes
// several, and closes them in any order) each hold one: the shortest of those alive holds,
// and with none alive only the command's limit does.
class StallLimitScope {
 public:
  explicit StallLimitScope(double seconds);
  ~StallLimitScope();
  StallLimitScope(const StallLimitScope&) = delete;
  StallLimitScope& operator=(const StallLimitScope&) = delete;

 private:
  double seconds_;
};

// Names the part of a job that the waits of its scope (on this thread) belong to, in the
// message of one that stalls: "agreeing whether any rank failed (loading the tables): no
// progress ...". Scopes nest; the innermost names the wait.
class WaitContext {
 public:
  explicit WaitContext(std::string what);
  ~WaitContext();
  // The next part of the job, in the same scope.
  void enter(std::string what) { what_ = std::move(what); }
  WaitContext(const WaitContext&) = delete;
  WaitContext& operator=(const WaitContext&) = delete;

 private:
  std::string what_;
  const std::string* outer_;  // the enclosing scope's name, or null
};

}  // namespace pleshard
