#pragma once
// The module's runtime: MPI and Kokkos initialised on first use where nothing has initialised
// them yet (mpi4py initialises MPI when it is imported), and finalised at the interpreter's
// exit by whoever initialised them, after the engines still open are closed (an engine's
// buffers and communicators must go before Kokkos and MPI do). Engines are made, stepped and
// freed on any thread, the GIL released: what is tracked here is guarded by its own lock.

#include <functional>

namespace pleshard::python {

// Initialises what is not yet; the first call registers finalize_runtime with atexit (so it
// runs before mpi4py's own exit handler, registered when mpi4py was imported before).
// SystemError once finalize_runtime has run: Kokkos cannot start again.
void ensure_runtime();

// An engine being made, from before its first collective to its track_open: finalize_runtime
// waits for it, so that it is closed with the others rather than left to use MPI and Kokkos
// after they are gone. SystemError once finalize_runtime has run.
class EngineMaking {
 public:
  EngineMaking();
  ~EngineMaking();
  EngineMaking(const EngineMaking&) = delete;
  EngineMaking& operator=(const EngineMaking&) = delete;
};

// Engines open now, closed by finalize_runtime: `close` is called once, at exit.
void track_open(const void* owner, std::function<void()> close);
void untrack(const void* owner);

// Waits for engines being made, closes every open engine (each close waits for a step in
// flight on another thread), then finalises Kokkos and MPI where the module initialised them.
void finalize_runtime();

}  // namespace pleshard::python
