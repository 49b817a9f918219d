#include "core/mpi_check.hpp"

#include <limits>

namespace pleshard {

std::string processor_name() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  PLESHARD_MPI_CHECK(MPI_Get_processor_name(name, &length));
  return std::string(name, static_cast<std::size_t>(length));
}

}  // namespace pleshard

namespace pleshard::detail {

void throw_mpi_count(std::string_view what, const std::string& count) {
  throw SystemError(std::string(what) + ": " + count + " is outside MPI's int counts (0.." +
                    std::to_string(std::numeric_limits<int>::max()) + ")");
}

void throw_mpi_error(int code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  throw SystemError(describe_failed_call(call, file, line,
                                         length > 0 ? std::string(text, length) : "MPI error " + std::to_string(code)));
}

}  // namespace pleshard::detail
