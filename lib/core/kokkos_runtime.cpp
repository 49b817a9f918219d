#include "core/kokkos_runtime.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <Kokkos_Core.hpp>

#include "core/error.hpp"
#include "core/parallel.hpp"

namespace pleshard {

namespace {

constexpr std::string_view k_threads_option = "--kokkos-threads=";

// Kokkos' options that take a number; Kokkos would throw std::invalid_argument on others.
void check_numeric(std::string_view arg) {
  for (const std::string_view name : {"--kokkos-threads=", "--kokkos-numa=", "--kokkos-device-id=",
                                      "--kokkos-num-devices=", "--kokkos-skip-device="}) {
    if (!arg.starts_with(name)) continue;
    const std::string_view value = arg.substr(name.size());
    if (value.empty() || value.size() > 9 ||
        !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw InputError(std::string(arg) + ": expected a non-negative integer");
  }
}

}  // namespace

KokkosRuntime::KokkosRuntime(int argc, char** argv) {
  std::vector<char*> kokkos_args{argv[0]};
  std::size_t threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (!arg.starts_with("--kokkos-")) continue;
    check_numeric(arg);
    if (arg.starts_with(k_threads_option)) threads = std::stoul(std::string(arg.substr(k_threads_option.size())));
    kokkos_args.push_back(argv[i]);
  }
  int kokkos_argc = static_cast<int>(kokkos_args.size());
  kokkos_args.push_back(nullptr);
  Kokkos::initialize(kokkos_argc, kokkos_args.data());
  // A Serial-only Kokkos accepts --kokkos-threads and runs on one thread: the host kernels
  // then spread over threads of their own.
  if (threads > 1 && Kokkos::DefaultHostExecutionSpace::concurrency() == 1) set_kernel_threads(threads);
}

KokkosRuntime::~KokkosRuntime() { Kokkos::finalize(); }

}  // namespace pleshard
