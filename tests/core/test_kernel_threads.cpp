// --kokkos-threads=N reaches the host kernels where Kokkos' host space is serial (Debian's
// Kokkos): the test main hands its arguments to KokkosRuntime as the apps do. Run once
// without the option (one thread) and once with --kokkos-threads=3 and
// PLESHARD_EXPECT_KERNEL_THREADS=3 (tests/CMakeLists.txt).

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <Kokkos_Core.hpp>

#include "core/parallel.hpp"
#include "kernels/host/kernel_threads.hpp"

namespace {

TEST(KernelThreads, FollowKokkosThreadsWhereKokkosIsSerial) {
  const char* expected = std::getenv("PLESHARD_EXPECT_KERNEL_THREADS");
  const std::size_t asked = expected != nullptr ? std::stoul(expected) : 1;
  if (Kokkos::DefaultHostExecutionSpace::concurrency() > 1) {
    // Kokkos spreads the kernels itself: pleshard's threads stay out of its way.
    EXPECT_EQ(pleshard::kernels::own_kernel_threads(), 1u);
    return;
  }
  EXPECT_EQ(pleshard::kernel_threads(), asked);
  EXPECT_EQ(pleshard::kernels::own_kernel_threads(), asked);
}

TEST(KernelThreads, ZeroCountsAsOne) {
  const std::size_t before = pleshard::kernel_threads();
  pleshard::set_kernel_threads(0);
  EXPECT_EQ(pleshard::kernel_threads(), 1u);
  pleshard::set_kernel_threads(before);
}

}  // namespace
