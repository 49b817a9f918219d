#pragma once
// PLESHARD_MPI_CHECK(call): throws SystemError with MPI's error string and the call site.

#include <mpi.h>

#include "core/error.hpp"

namespace pleshard::detail {
[[noreturn]] void throw_mpi_error(int code, const char* call, const char* file, int line);
}  // namespace pleshard::detail

#define PLESHARD_MPI_CHECK(call)                                                        \
  do {                                                                                  \
    const int pleshard_mpi_rc_ = (call);                                                \
    if (pleshard_mpi_rc_ != MPI_SUCCESS)                                                \
      ::pleshard::detail::throw_mpi_error(pleshard_mpi_rc_, #call, __FILE__, __LINE__); \
  } while (0)
