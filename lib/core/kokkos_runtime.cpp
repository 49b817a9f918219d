#include "core/kokkos_runtime.hpp"

#include <string_view>
#include <vector>

#include <Kokkos_Core.hpp>

namespace pleshard {

KokkosRuntime::KokkosRuntime(int argc, char** argv) {
  std::vector<char*> kokkos_args{argv[0]};
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]).starts_with("--kokkos-")) kokkos_args.push_back(argv[i]);
  int kokkos_argc = static_cast<int>(kokkos_args.size());
  kokkos_args.push_back(nullptr);
  Kokkos::initialize(kokkos_argc, kokkos_args.data());
}

KokkosRuntime::~KokkosRuntime() { Kokkos::finalize(); }

}  // namespace pleshard
