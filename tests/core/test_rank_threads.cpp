// A rank's threads (core/rank_threads.hpp): asked, else SLURM_CPUS_PER_TASK, else
// OMP_NUM_THREADS, else the cores of its CPU affinity mask (one rank here: no other shares
// it); bad values named; the host kernels spread over the count the process uses.

#include <gtest/gtest.h>
#include <sched.h>

#include <cstdlib>
#include <optional>
#include <string>

#include <Kokkos_Core.hpp>

#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "core/rank_threads.hpp"
#include "kernels/host/kernel_threads.hpp"

namespace {

using pleshard::RankThreads;
using pleshard::ThreadSource;

// Sets (or unsets, for nullopt) an environment variable for a scope.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value->c_str(), 1);
    else
      unsetenv(name);
  }
  ~ScopedVariable() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(RankThreads, SlurmThenOpenMp) {
  {
    const ScopedVariable slurm("SLURM_CPUS_PER_TASK", "3");
    const ScopedVariable omp("OMP_NUM_THREADS", "5");
    const auto found = pleshard::threads_from_environment();
    ASSERT_TRUE(found);
    EXPECT_EQ(found->count, 3u);
    EXPECT_EQ(found->source, ThreadSource::slurm);
    EXPECT_EQ(found->how, "SLURM_CPUS_PER_TASK=3");
  }
  {
    const ScopedVariable slurm("SLURM_CPUS_PER_TASK", std::nullopt);
    const ScopedVariable omp("OMP_NUM_THREADS", "6,2");  // a count per nesting level: the outermost
    const auto found = pleshard::threads_from_environment();
    ASSERT_TRUE(found);
    EXPECT_EQ(found->count, 6u);
    EXPECT_EQ(found->source, ThreadSource::omp);
  }
  {
    const ScopedVariable slurm("SLURM_CPUS_PER_TASK", "");
    const ScopedVariable omp("OMP_NUM_THREADS", std::nullopt);
    EXPECT_FALSE(pleshard::threads_from_environment());
  }
}

TEST(RankThreads, BadValuesNameTheVariable) {
  const ScopedVariable slurm("SLURM_CPUS_PER_TASK", std::nullopt);
  for (const char* bad : {"abc", "0", "4097", "2x", "-1"}) {
    const ScopedVariable omp("OMP_NUM_THREADS", bad);
    try {
      (void)pleshard::threads_from_environment();
      ADD_FAILURE() << "OMP_NUM_THREADS=" << bad << " accepted";
    } catch (const pleshard::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("OMP_NUM_THREADS=") + bad + ": expected a whole number"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(RankThreads, AskedBeforeTheEnvironment) {
  const ScopedVariable slurm("SLURM_CPUS_PER_TASK", "5");
  const RankThreads threads = pleshard::agree_rank_threads(MPI_COMM_WORLD, 3, "--threads ");
  EXPECT_EQ(threads.count, 3u);
  EXPECT_EQ(threads.source, ThreadSource::asked);
  EXPECT_EQ(threads.how, "--threads 3");
  EXPECT_THROW((void)pleshard::agree_rank_threads(MPI_COMM_WORLD, 0, "--threads "), pleshard::AgreedError);
}

TEST(RankThreads, TheAffinityMaskWithoutTheEnvironment) {
  const ScopedVariable slurm("SLURM_CPUS_PER_TASK", std::nullopt);
  const ScopedVariable omp("OMP_NUM_THREADS", std::nullopt);
  cpu_set_t mask;
  CPU_ZERO(&mask);
  ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
  const RankThreads threads = pleshard::agree_rank_threads(MPI_COMM_WORLD, std::nullopt, "--threads ");
  EXPECT_EQ(threads.count, static_cast<std::size_t>(CPU_COUNT(&mask)));
  EXPECT_EQ(threads.source, ThreadSource::affinity);
}

TEST(RankThreads, TheHostKernelsSpreadOverThem) {
  const RankThreads before = pleshard::rank_threads();
  pleshard::use_rank_threads({3, ThreadSource::asked, "--threads 3"});
  EXPECT_EQ(pleshard::host_threads(), 3u);
  EXPECT_EQ(pleshard::rank_threads().how, "--threads 3");
  // A Kokkos with threads of its own spreads the kernels itself, on the count it started with.
  EXPECT_EQ(pleshard::kernels::own_kernel_threads(), Kokkos::DefaultHostExecutionSpace::concurrency() > 1 ? 1u : 3u);
  pleshard::use_rank_threads(before);
}

}  // namespace
