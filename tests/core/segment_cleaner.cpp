// The cleanup of stale shared-memory segments as another process on the node runs it (the
// tests run it in another PID namespace): `segment_cleaner [PID]` removes them and prints how
// many, then whether process PID of the caller's namespace is in sight from here.

#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "core/segment_ownership.hpp"

int main(int argc, char** argv) {
  std::printf("removed %d\n", pleshard::remove_stale_segments());
  if (argc > 1) {
    const long pid = std::strtol(argv[1], nullptr, 10);
    const bool seen = ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
    std::printf("process %ld: %s\n", pid, seen ? "seen" : "not seen");
  }
  return 0;
}
