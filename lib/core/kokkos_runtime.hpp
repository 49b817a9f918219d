#pragma once
// Kokkos lifetime for executables: initialized from the --kokkos-* arguments only, so that
// Kokkos never reacts to the program's own options (a bare --help prints Kokkos' help), and
// from the rank's threads (core/rank_threads.hpp), which a Kokkos whose host space has
// threads of its own (OpenMP, Threads) starts on. A Serial Kokkos (Debian's) runs on one;
// pleshard's host kernels then spread over host_threads() themselves.

#include <cstddef>
#include <optional>

namespace pleshard {

// --kokkos-threads=N or --kokkos-num-threads=N among the arguments: another name of
// --threads N (the thread count is pleshard's, which hands it to Kokkos). InputError for a
// value that is no number.
[[nodiscard]] std::optional<std::size_t> kokkos_threads_option(int argc, char** argv);

class KokkosRuntime {
 public:
  // InputError for a --kokkos-* option whose number is no number; Kokkos' own errors pass.
  // `threads`: the count a threaded host space starts on (none: Kokkos' own choice); the
  // --kokkos-threads arguments are left to kokkos_threads_option.
  KokkosRuntime(int argc, char** argv, std::optional<std::size_t> threads = std::nullopt);
  ~KokkosRuntime();
  KokkosRuntime(const KokkosRuntime&) = delete;
  KokkosRuntime& operator=(const KokkosRuntime&) = delete;
};

}  // namespace pleshard
