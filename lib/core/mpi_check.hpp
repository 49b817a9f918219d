#pragma once
// PLESHARD_MPI_CHECK(call): throws SystemError with MPI's error string and the call site.
// MPI's counts and displacements are int: mpi_count checks a 64-bit size before it becomes
// one, and for_each_mpi_chunk splits a large buffer into calls MPI can take.

#include <mpi.h>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "core/error.hpp"

namespace pleshard {

// The most elements one MPI call carries when a buffer is split: 1 GiB of 8-byte elements,
// so that a call's bytes fit an int too (some implementations count them in int).
inline constexpr std::size_t k_mpi_max_chunk = std::size_t{1} << 27;

namespace detail {
[[noreturn]] void throw_mpi_count(std::string_view what, const std::string& count);
}  // namespace detail

// `count` (a count or a displacement) as MPI's int; SystemError naming `what` when it is
// negative or past INT_MAX.
template <std::integral T>
[[nodiscard]] int mpi_count(T count, std::string_view what) {
  if (std::cmp_less(count, 0) || !std::in_range<int>(count)) detail::throw_mpi_count(what, std::to_string(count));
  return static_cast<int>(count);
}

// body(first, count) for consecutive pieces [first, first + count) of [0, total) of at most
// `max_chunk` (1..k_mpi_max_chunk) elements each, in order; no call for an empty buffer.
// Every rank of a collective passes the same total, so all make the same calls.
template <typename Body>
void for_each_mpi_chunk(std::size_t total, std::size_t max_chunk, Body&& body) {
  if (max_chunk == 0 || max_chunk > k_mpi_max_chunk)
    throw SystemError("MPI chunks of " + std::to_string(max_chunk) + " elements; expected 1.." +
                      std::to_string(k_mpi_max_chunk));
  for (std::size_t first = 0; first < total; first += max_chunk)
    body(first, static_cast<int>(std::min(max_chunk, total - first)));
}

// This machine's name as MPI knows it (MPI_Get_processor_name), for messages about a node.
[[nodiscard]] std::string processor_name();

}  // namespace pleshard

namespace pleshard::detail {
[[noreturn]] void throw_mpi_error(int code, const char* call, const char* file, int line);
}  // namespace pleshard::detail

#define PLESHARD_MPI_CHECK(call)                                                        \
  do {                                                                                  \
    const int pleshard_mpi_rc_ = (call);                                                \
    if (pleshard_mpi_rc_ != MPI_SUCCESS)                                                \
      ::pleshard::detail::throw_mpi_error(pleshard_mpi_rc_, #call, __FILE__, __LINE__); \
  } while (0)
