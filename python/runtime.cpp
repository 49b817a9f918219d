#include "runtime.hpp"

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>

#include <mpi.h>
#include <pybind11/pybind11.h>

#include "core/error.hpp"
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
  std::mutex mutex;                       // guards what follows
  std::condition_variable made;           // signalled when `making` drops
  int making = 0;
  bool finalized = false;
  std::map<const void*, std::function<void()>> open;
};

Runtime& runtime() {
  static Runtime r;
  return r;
}

void refuse_when_finalized(const Runtime& r) {
  if (r.finalized) throw SystemError("pleshard: the interpreter is exiting; its MPI and Kokkos are finalized");
}

}  // namespace

void ensure_runtime() {
  Runtime& r = runtime();
  {
    const std::lock_guard lock(r.mutex);
    refuse_when_finalized(r);
  }
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

EngineMaking::EngineMaking() {
  Runtime& r = runtime();
  const std::lock_guard lock(r.mutex);
  refuse_when_finalized(r);
  ++r.making;
}

EngineMaking::~EngineMaking() {
  Runtime& r = runtime();
  {
    const std::lock_guard lock(r.mutex);
    --r.making;
  }
  r.made.notify_all();
}

void track_open(const void* owner, std::function<void()> close) {
  Runtime& r = runtime();
  const std::lock_guard lock(r.mutex);
  r.open[owner] = std::move(close);
}

void untrack(const void* owner) {
  Runtime& r = runtime();
  const std::lock_guard lock(r.mutex);
  r.open.erase(owner);
}

void finalize_runtime() {
  Runtime& r = runtime();
  std::map<const void*, std::function<void()>> open;
  {
    std::unique_lock lock(r.mutex);
    r.made.wait(lock, [&] { return r.making == 0; });
    r.finalized = true;
    open = std::exchange(r.open, {});
  }
  for (auto& [owner, close] : open) close();
  r.kokkos.reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (r.owns_mpi && finalized == 0) MPI_Finalize();
  r.owns_mpi = false;
}

}  // namespace pleshard::python
