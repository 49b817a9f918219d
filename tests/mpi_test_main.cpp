// MPI-aware GoogleTest main: MPI, then Kokkos, then the tests, finalized in reverse. MPI
// allows calls from one thread at a time, any thread (as the Python module asks), so that
// tests can step engines from the engine's own thread (PleEngine::start).
// Rank 0 prints the usual report; other ranks print only their failures. The exit code
// is the maximum over ranks, so ctest fails when any rank fails.

#include <cstdio>

#include <gtest/gtest.h>
#include <mpi.h>

#include "core/kokkos_runtime.hpp"

namespace {

class RankFailurePrinter : public testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                 result.file_name() != nullptr ? result.file_name() : "?", result.line_number(), result.message());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int result = 0;
  {
    pleshard::KokkosRuntime kokkos(argc, argv);
    testing::InitGoogleTest(&argc, argv);
    if (rank != 0) {
      auto& listeners = testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
      listeners.Append(new RankFailurePrinter(rank));
    }
    result = RUN_ALL_TESTS();
  }
  int worst = 0;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && worst != result) std::fprintf(stderr, "pleshard tests: another rank failed (exit %d)\n", worst);
  MPI_Finalize();
  return worst;
}
