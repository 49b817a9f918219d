#pragma once
// MPI datatypes from C++ types; an unknown type is a compile-time error.

#include <cstdint>

#include <mpi.h>

namespace pleshard {

template <typename T>
struct MpiType {
  static_assert(sizeof(T) == 0, "no MPI datatype for this type");
};

#define PLESHARD_MPI_TYPE(T, M)             \
  template <>                               \
  struct MpiType<T> {                       \
    static MPI_Datatype get() { return M; } \
  }

PLESHARD_MPI_TYPE(std::int8_t, MPI_INT8_T);
PLESHARD_MPI_TYPE(std::uint8_t, MPI_UINT8_T);
PLESHARD_MPI_TYPE(std::int16_t, MPI_INT16_T);
PLESHARD_MPI_TYPE(std::uint16_t, MPI_UINT16_T);
PLESHARD_MPI_TYPE(std::int32_t, MPI_INT32_T);
PLESHARD_MPI_TYPE(std::uint32_t, MPI_UINT32_T);
PLESHARD_MPI_TYPE(std::int64_t, MPI_INT64_T);
PLESHARD_MPI_TYPE(std::uint64_t, MPI_UINT64_T);
PLESHARD_MPI_TYPE(float, MPI_FLOAT);
PLESHARD_MPI_TYPE(double, MPI_DOUBLE);
PLESHARD_MPI_TYPE(char, MPI_CHAR);

#undef PLESHARD_MPI_TYPE

template <typename T>
MPI_Datatype mpi_type() {
  return MpiType<T>::get();
}

}  // namespace pleshard
