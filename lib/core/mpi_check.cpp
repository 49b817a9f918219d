#include "core/mpi_check.hpp"

namespace pleshard::detail {

void throw_mpi_error(int code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  throw SystemError(describe_failed_call(call, file, line,
                                         length > 0 ? std::string(text, length) : "MPI error " + std::to_string(code)));
}

}  // namespace pleshard::detail
