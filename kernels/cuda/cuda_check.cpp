#include "kernels/cuda/cuda_check.hpp"

#include <string>

namespace pleshard::detail {

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  throw SystemError(
      describe_failed_call(call, file, line, std::string(cudaGetErrorName(code)) + ": " + cudaGetErrorString(code)));
}

}  // namespace pleshard::detail
