#pragma once
// The module's runtime: MPI and Kokkos initialised on first use where nothing has initialised
// them yet (mpi4py initialises MPI when it is imported), and finalised at the interpreter's
// exit by whoever initialised them, after the engines still open are closed (an engine's
// buffers and communicators must go before Kokkos and MPI do).

#include <functional>

namespace pleshard::python {

// Initialises what is not yet; the first call registers finalize_runtime with atexit (so it
// runs before mpi4py's own exit handler, registered when mpi4py was imported before).
void ensure_runtime();

// Engines open now, closed by finalize_runtime: `close` is called once, at exit.
void track_open(const void* owner, std::function<void()> close);
void untrack(const void* owner);

void finalize_runtime();

}  // namespace pleshard::python
