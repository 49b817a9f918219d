#pragma once
// Kokkos lifetime for executables: initialized from the --kokkos-* arguments only, so that
// Kokkos never reacts to the program's own options (a bare --help prints Kokkos' help).

namespace pleshard {

class KokkosRuntime {
 public:
  // InputError for a --kokkos-* option whose number is no number; Kokkos' own errors pass.
  KokkosRuntime(int argc, char** argv);
  ~KokkosRuntime();
  KokkosRuntime(const KokkosRuntime&) = delete;
  KokkosRuntime& operator=(const KokkosRuntime&) = delete;
};

}  // namespace pleshard
