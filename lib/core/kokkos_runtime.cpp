#include "core/kokkos_runtime.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include <Kokkos_Core.hpp>

#include "core/error.hpp"

namespace pleshard {

namespace {

// Kokkos' names of the host space's thread count (the second since Kokkos 3.7).
constexpr std::array<std::string_view, 2> k_thread_options = {"--kokkos-threads=", "--kokkos-num-threads="};

// Kokkos' options that take a number; Kokkos would throw std::invalid_argument on others.
void check_numeric(std::string_view arg) {
  for (const std::string_view name : {"--kokkos-threads=", "--kokkos-num-threads=", "--kokkos-numa=",
                                      "--kokkos-device-id=", "--kokkos-num-devices=", "--kokkos-skip-device="}) {
    if (!arg.starts_with(name)) continue;
    const std::string_view value = arg.substr(name.size());
    if (value.empty() || value.size() > 9 ||
        !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw InputError(std::string(arg) + ": expected a non-negative integer");
  }
}

const std::string_view* thread_option(std::string_view arg) {
  for (const std::string_view& name : k_thread_options)
    if (arg.starts_with(name)) return &name;
  return nullptr;
}

}  // namespace

std::optional<std::size_t> kokkos_threads_option(int argc, char** argv) {
  std::optional<std::size_t> threads;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    const std::string_view* name = thread_option(arg);
    if (name == nullptr) continue;
    check_numeric(arg);
    threads = std::stoul(std::string(arg.substr(name->size())));
  }
  return threads;
}

KokkosRuntime::KokkosRuntime(int argc, char** argv, std::optional<std::size_t> threads) {
  std::vector<char*> kokkos_args{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (!arg.starts_with("--kokkos-") || thread_option(arg) != nullptr) continue;
    check_numeric(arg);
    kokkos_args.push_back(argv[i]);
  }
  // A threaded host space (Kokkos makes it the default where one is built) starts on the
  // rank's threads; a Serial one has no count to take.
  std::string threads_arg;
#if defined(KOKKOS_ENABLE_OPENMP) || defined(KOKKOS_ENABLE_THREADS) || defined(KOKKOS_ENABLE_HPX)
  if (threads) {
    threads_arg =
        std::string(KOKKOS_VERSION >= 30700 ? k_thread_options[1] : k_thread_options[0]) + std::to_string(*threads);
    kokkos_args.push_back(threads_arg.data());
  }
#else
  (void)threads;
#endif
  int kokkos_argc = static_cast<int>(kokkos_args.size());
  kokkos_args.push_back(nullptr);
  Kokkos::initialize(kokkos_argc, kokkos_args.data());
}

KokkosRuntime::~KokkosRuntime() { Kokkos::finalize(); }

}  // namespace pleshard
