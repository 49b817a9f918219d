#pragma once
// Failure agreement: every rank learns when any rank failed, so all exit together with
// one message instead of some ranks hanging in a collective.

#include <exception>
#include <string>
#include <type_traits>
#include <utility>

#include <mpi.h>

#include "core/error.hpp"

namespace pleshard {

// Thrown on every rank once the ranks agree that one failed; carries the message of the
// lowest failing rank, and whether its error was bad input (an InputError).
class AgreedError : public Error {
 public:
  AgreedError(const std::string& message, int failing_rank, bool input = false)
      : Error(message), failing_rank_(failing_rank), input_(input) {}
  [[nodiscard]] int failing_rank() const { return failing_rank_; }
  [[nodiscard]] bool input() const { return input_; }

 private:
  int failing_rank_;
  bool input_;
};

// Collective over `comm`: returns normally when `failure` is null on every rank, otherwise
// throws AgreedError on every rank.
void agree_on_failure(MPI_Comm comm, const std::exception* failure);

// agree_on_failure for a caught exception (null when this rank succeeded).
void rethrow_agreed(MPI_Comm comm, const std::exception_ptr& failure);

// For failures that unwinding cannot survive (a GPU that makes no progress: every later
// wait and free would block): prints "pleshard: rank R: error: <message>" and ends the job
// on every rank with MPI_Abort.
[[noreturn]] void abort_job(const std::string& message);

// Runs `body` on every rank of `comm` and agrees on failure afterwards (any std::exception:
// a file system error or an exhausted memory is agreed like an InputError).
// `body` must not call collectives on `comm` that a failing rank could skip.
template <typename Body>
decltype(auto) collective_try(MPI_Comm comm, Body&& body) {
  std::exception_ptr failure;
  using Result = decltype(body());
  if constexpr (std::is_void_v<Result>) {
    try {
      std::forward<Body>(body)();
    } catch (const std::exception&) {
      failure = std::current_exception();
    }
    rethrow_agreed(comm, failure);
  } else {
    Result result{};
    try {
      result = std::forward<Body>(body)();
    } catch (const std::exception&) {
      failure = std::current_exception();
    }
    rethrow_agreed(comm, failure);
    return result;
  }
}

}  // namespace pleshard
