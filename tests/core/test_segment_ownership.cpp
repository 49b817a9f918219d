// Who owns a name under /dev/shm: a segment whose maker lives is kept by a cleanup run from
// any PID namespace (a container sharing the node's /dev/shm), also in the moment before its
// maker has locked it; a segment whose maker was killed is removed by the next cleanup; names
// pleshard did not make (another program's, an older pleshard's) are never removed.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/segment_ownership.hpp"

namespace {

using namespace pleshard;

bool named(const std::string& name) { return std::filesystem::exists("/dev/shm" + name); }

struct CommandRun {
  std::string output;  // stdout and stderr
  int status = -1;     // as pclose gives it
};

CommandRun run_command(const std::string& command) {
  CommandRun run;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {"cannot start: " + command, -1};
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) run.output += buffer;
  run.status = ::pclose(pipe);
  return run;
}

TEST(SegmentOwnership, LiveSegmentSurvivesACleanupFromAnotherPidNamespace) {
  // Made and being sized, as a job's first rank holds it until every rank has mapped it.
  const OwnedSegment live("test segment");
  ASSERT_EQ(::posix_fallocate(live.fd(), 0, 4096), 0);
  const std::string pid = std::to_string(::getpid());
  const CommandRun cleaner = run_command("unshare --pid --fork --mount-proc " PLESHARD_SEGMENT_CLEANER " " + pid);
  // Where no PID namespace can be made the case goes untested: that is a failure, never a pass.
  ASSERT_EQ(cleaner.status, 0) << "unshare --pid --fork --mount-proc could not run the cleaner (a PID namespace "
                                  "needs root, CAP_SYS_ADMIN):\n"
                               << cleaner.output;
  ASSERT_NE(cleaner.output.find("process " + pid + ": not seen"), std::string::npos)
      << "the cleaner saw this process, so it did not run in another PID namespace:\n"
      << cleaner.output;
  EXPECT_TRUE(named(live.name())) << live.name() << ": a live segment removed by a cleanup in another PID namespace";
}

TEST(SegmentOwnership, LiveSegmentSurvivesACleanupOfItsOwnProcess) {
  const OwnedSegment live("test segment");
  (void)remove_stale_segments();
  EXPECT_TRUE(named(live.name()));
}

TEST(SegmentOwnership, SegmentOfAKilledMakerIsRemoved) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A job's first rank killed while it sizes the node's segment: made, sized, held.
    ::close(pipe_fds[0]);
    try {
      const OwnedSegment made("test segment");
      if (::posix_fallocate(made.fd(), 0, 4096) == 0 &&
          ::write(pipe_fds[1], made.name().data(), made.name().size()) == static_cast<ssize_t>(made.name().size()))
        for (;;) ::pause();
    } catch (...) {
    }
    ::_exit(1);
  }
  ::close(pipe_fds[1]);
  char text[128] = {};
  const ssize_t got = ::read(pipe_fds[0], text, sizeof text - 1);
  ::close(pipe_fds[0]);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_GT(got, 0) << "the child made no segment";
  const std::string name(text, static_cast<std::size_t>(got));
  ASSERT_TRUE(named(name)) << name << ": its killed maker left no name to remove";
  // Another job on the node may run a cleanup at the same time: the name's going is the check.
  (void)remove_stale_segments();
  EXPECT_FALSE(named(name)) << name << ": a segment of a killed maker left behind";
}

TEST(SegmentOwnership, NamesPleshardDidNotMakeAreKept) {
  const std::string pid = std::to_string(::getpid());
  // Another program's (Python's multiprocessing.shared_memory takes any name); the form of
  // an older pleshard, "<pid>.<n>", of a gone process (2^22 + 1 is past Linux's largest
  // process id): it holds no lock, so whether its maker lives cannot be told; and a near miss
  // of pleshard's own form.
  const std::vector<std::string> foreign = {"/pleshard.foo." + pid, "/pleshard.4194305." + pid, "/pleshard-seg." + pid};
  for (const std::string& name : foreign) {
    const int fd = ::shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0) << name;
    EXPECT_EQ(::posix_fallocate(fd, 0, 4096), 0) << name;
    ::close(fd);
  }
  (void)remove_stale_segments();
  for (const std::string& name : foreign) {
    EXPECT_TRUE(named(name)) << name << ": another program's shared memory removed";
    ::shm_unlink(name.c_str());
  }
}

TEST(SegmentOwnership, SegmentNotYetLockedIsKept) {
  // A name of pleshard's form as its maker has it between making it and locking it: no
  // permissions yet (they are given under the lock), no lock, no bytes.
  char name[64];
  std::snprintf(name, sizeof name, "/pleshard-seg.%032x", static_cast<unsigned>(::getpid()));
  const int fd = ::shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0);
  ASSERT_GE(fd, 0) << name;
  (void)remove_stale_segments();
  EXPECT_TRUE(named(name)) << name << ": a segment being made removed";
  ::shm_unlink(name);
  ::close(fd);
}

}  // namespace
