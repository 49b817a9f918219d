// The output policy of every writer: places refused before anything is written, and the
// claim that keeps a second job (or ranks of a killed one) off an output.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "../ckpt/checkpoint_fixtures.hpp"
#include "core/error.hpp"
#include "io/output_target.hpp"

namespace {

using namespace pleshard;
using pleshard::testing_support::ScratchDir;
namespace fs = std::filesystem;

// The message of the InputError `f` throws ("" when it throws none).
template <typename F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string check(const OutputTarget& target, std::vector<fs::path> inputs = {}) {
  return refusal([&] { check_output_target(target, inputs); });
}

void touch(const fs::path& path) { std::ofstream(path) << "x"; }

TEST(OutputTarget, PlacesAFileOutputMayTake) {
  ScratchDir dir;
  EXPECT_EQ(check({dir / "new.h5"}), "");
  touch(dir / "old.h5");
  EXPECT_EQ(check({dir / "old.h5"}), "");  // a file of its own kind: the writer decides (resume, --overwrite)
  EXPECT_EQ(check({dir / "new", OutputKind::directory}), "");
  fs::create_directory(dir / "old");
  EXPECT_EQ(check({dir / "old", OutputKind::directory}), "");
}

TEST(OutputTarget, EmptyPathMissingDirectoryAndWrongKind) {
  ScratchDir dir;
  EXPECT_NE(check({""}).find("--out: empty path (an unset variable?)"), std::string::npos);
  EXPECT_NE(check({dir / "no" / "out.h5"}).find("the directory " + (dir / "no").string() + " does not exist"),
            std::string::npos);
  fs::create_directory(dir / "d");
  EXPECT_NE(check({dir / "d", OutputKind::file, "--curve"}).find("d: --curve names a directory, not an output file"),
            std::string::npos);
  touch(dir / "f");
  EXPECT_NE(check({dir / "f", OutputKind::directory}).find("f: --out names a file, not a directory"),
            std::string::npos);
}

TEST(OutputTarget, SpecialFilesAreNeverReplaced) {
  ScratchDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
  EXPECT_NE(check({dir / "fifo"}).find("fifo: --out names a FIFO"), std::string::npos);
  // A FIFO where the partial output goes would block the writer's open for ever.
  ASSERT_EQ(::mkfifo((dir / "out.h5.partial").c_str(), 0644), 0);
  EXPECT_NE(check({dir / "out.h5"}).find("out.h5.partial: --out: the partial output's place holds a FIFO"),
            std::string::npos);

  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string socket_path = (dir / "sock").string();
  ASSERT_LT(socket_path.size(), sizeof address.sun_path);
  std::copy(socket_path.begin(), socket_path.end(), address.sun_path);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  EXPECT_NE(check({dir / "sock"}).find("--out names a socket"), std::string::npos);
  ::close(s);

  if (::mknod((dir / "null").c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0)
    GTEST_SKIP() << "no device node made here (mknod needs root)";
  EXPECT_NE(check({dir / "null"}).find("null: --out names a device"), std::string::npos);
}

TEST(OutputTarget, TheJobsInputsUnderAnySpelling) {
  ScratchDir dir;
  fs::create_directory(dir / "ckpt");
  touch(dir / "ckpt" / "model.safetensors");
  touch(dir / "requests.jsonl");
  const std::vector<fs::path> inputs{dir / "ckpt" / "model.safetensors", dir / "requests.jsonl"};
  EXPECT_NE(check({dir / "ckpt" / ".." / "requests.jsonl"}, inputs).find("is the job's input"), std::string::npos);
  fs::create_hard_link(dir / "requests.jsonl", dir / "link.jsonl");
  EXPECT_NE(check({dir / "link.jsonl"}, inputs).find("is the job's input " + (dir / "requests.jsonl").string()),
            std::string::npos);
  // A directory output holding an input would have its files replaced.
  EXPECT_NE(check({dir / "ckpt", OutputKind::directory}, inputs).find("ckpt: --out holds the job's input"),
            std::string::npos);
  EXPECT_EQ(check({dir / "ckpt" / "profile.h5"}, inputs), "");  // beside an input is fine
}

TEST(OutputClaim, ASecondJobIsRefusedNamingTheFirst) {
  ScratchDir dir;
  const fs::path out = dir / "out.h5";
  {
    const OutputClaim first = OutputClaim::first(out, "pleshard run");
    ASSERT_TRUE(first.held());
    const std::string message = refusal([&] { (void)OutputClaim::first(out, "pleshard run"); });
    EXPECT_NE(message.find("out.h5: another job writes this output: pid " + std::to_string(::getpid()) + " on "),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("(pleshard run) holds " + out.string() + ".lock"), std::string::npos) << message;
    const OutputClaim joined = OutputClaim::join(out);  // the job's other ranks
    EXPECT_TRUE(joined.held());
  }
  EXPECT_FALSE(fs::exists(dir / "out.h5.lock"));
  EXPECT_TRUE(OutputClaim::first(out, "pleshard run").held());
}

// The holder names itself just after it takes the lock: a job refused in between waits for
// the name (two jobs started together met this window).
TEST(OutputClaim, AHolderNamedAMomentLateIsNamed) {
  ScratchDir dir;
  const fs::path out = dir / "out.h5";
  const fs::path lock = claim_lock_path(out);
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  struct flock byte {};
  byte.l_type = F_WRLCK;
  byte.l_whence = SEEK_SET;
  byte.l_len = 1;
  ASSERT_EQ(::fcntl(fd, F_OFD_SETLK, &byte), 0);
  std::thread namer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const std::string text = "pid 7 on elsewhere (pleshard run)\n";
    (void)!::pwrite(fd, text.data(), text.size(), 0);
  });
  const std::string message = refusal([&] { (void)OutputClaim::first(out, "pleshard run"); });
  namer.join();
  ::close(fd);
  EXPECT_NE(message.find("another job writes this output: pid 7 on elsewhere (pleshard run) holds"), std::string::npos)
      << message;
}

TEST(OutputClaim, ALockFileNobodyHoldsIsTaken) {
  ScratchDir dir;
  std::ofstream(dir / "out.h5.lock") << "pid 1 on somewhere (a job that was killed)\n";
  EXPECT_TRUE(OutputClaim::first(dir / "out.h5", "pleshard run").held());
}

// Ranks of a killed job that outlive its first rank: a child process claims the output
// (as the job's first rank) and a grandchild joins (as another rank); the child then dies
// without releasing anything, as a killed rank does, and the grandchild lives on.
TEST(OutputClaim, RanksOfAKilledJobKeepTheOutputUntilTheyEnd) {
  ScratchDir dir;
  const fs::path out = dir / "out.h5";
  int ready[2];
  int claimed[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(claimed), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The other rank is started before the first claims, as ranks are: it shares none of
    // the first rank's open files.
    if (::fork() == 0) {
      char go = 0;
      if (::read(claimed[0], &go, 1) != 1) ::_exit(3);
      try {
        const OutputClaim joined = OutputClaim::join(out);
        const pid_t me = ::getpid();
        (void)!::write(ready[1], &me, sizeof me);
        ::pause();  // until killed
      } catch (const std::exception& e) {
        std::fprintf(stderr, "join in a child process: %s\n", e.what());
      }
      ::_exit(2);
    }
    try {
      const OutputClaim first = OutputClaim::first(out, "pleshard run");
      (void)!::write(claimed[1], "c", 1);
      ::_exit(0);  // with the claim in scope and no destructors: as a killed rank leaves it
    } catch (const std::exception& e) {
      std::fprintf(stderr, "claim in a child process: %s\n", e.what());
      ::_exit(2);
    }
  }
  pid_t surviving_rank = 0;
  ASSERT_EQ(::read(ready[0], &surviving_rank, sizeof surviving_rank), static_cast<ssize_t>(sizeof surviving_rank));
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const std::string message = refusal([&] { (void)OutputClaim::first(out, "pleshard run"); });
  EXPECT_NE(message.find("out.h5: ranks of an earlier job on this output still run"), std::string::npos) << message;
  ::kill(surviving_rank, SIGKILL);
  bool taken = false;
  for (int i = 0; i < 200 && !taken; ++i) {
    taken = refusal([&] { (void)OutputClaim::first(out, "pleshard run"); }).empty();
    if (!taken) ::usleep(10000);
  }
  EXPECT_TRUE(taken) << "the claim stayed after the last rank of the killed job ended";
}

}  // namespace
