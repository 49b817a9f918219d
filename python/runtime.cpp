#include "runtime.hpp"

#include <map>
#include <memory>

#include <mpi.h>
#include <pybind11/pybind11.h>

#include "core/kokkos_runtime.hpp"
#include "core/mpi_check.hpp"

#include <Kokkos_Core.hpp>

namespace py = pybind11;

namespace pleshard::python {

namespace {

struct Runtime {
  bool registered = false;
  bool owns_mpi = false;
  std::unique_ptr<KokkosRuntime> kokkos;  // only where the module initialised Kokkos
  std::map<const void*, std::function<void()>> open;
};

Runtime& runtime() {
  static Runtime r;
  return r;
}

}  // namespace

void ensure_runtime() {
  Runtime& r = runtime();
  int initialized = 0;
  PLESHARD_MPI_CHECK(MPI_Initialized(&initialized));
  if (initialized == 0) {
    // Python threads may take turns calling the engine, never at once (it holds the GIL
    // between calls and one engine runs one step at a time).
    int provided = 0;
    PLESHARD_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided));
    r.owns_mpi = true;
  }
  if (!Kokkos::is_initialized()) {
    char name[] = "pleshard";
    char* argv[] = {name, nullptr};
    r.kokkos = std::make_unique<KokkosRuntime>(1, argv);
  }
  if (!r.registered) {
    py::module_::import("atexit").attr("register")(py::cpp_function(&finalize_runtime));
    r.registered = true;
  }
}

void track_open(const void* owner, std::function<void()> close) { runtime().open[owner] = std::move(close); }

void untrack(const void* owner) { runtime().open.erase(owner); }

void finalize_runtime() {
  Runtime& r = runtime();
  for (auto open = std::exchange(r.open, {}); auto& [owner, close] : open) close();
  r.kokkos.reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (r.owns_mpi && finalized == 0) MPI_Finalize();
  r.owns_mpi = false;
}

}  // namespace pleshard::python
