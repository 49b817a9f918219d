#pragma once
// Typed exceptions of the library. Apps catch them at the top, print one line and exit
// together on every rank; library code never prints or exits on its own.

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace pleshard {

// Base of every pleshard error.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A user-supplied file or value is wrong (config, batch, checkpoint, layout).
// The message names the file or option and what was expected versus found.
class InputError : public Error {
 public:
  using Error::Error;
};

// A runtime system (MPI, CUDA, NCCL, HDF5, the OS) reported a failure.
class SystemError : public Error {
 public:
  using Error::Error;
};

// A value the user gave (an option's, a keyword's) as every message quotes it: whole up to
// k_quoted_value_bytes, else its start and its length ("0=host,1=ho... (70000 bytes)"), so
// that a message stays a line that says what is wrong however long the value.
inline constexpr std::size_t k_quoted_value_bytes = 200;
[[nodiscard]] std::string quoted_value(std::string_view value);

// "file.cpp:12: call failed: detail" for the check macros of each runtime.
[[nodiscard]] std::string describe_failed_call(const char* call, const char* file, int line, const std::string& detail);

}  // namespace pleshard
