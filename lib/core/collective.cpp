#include "core/collective.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/mpi_check.hpp"
#include "core/watched_collectives.hpp"

namespace pleshard {

namespace {

// Bytes of a failure message that every rank receives: a line for a person, never more
// than MPI's int counts.
constexpr std::size_t k_max_agreed_message = std::size_t{1} << 16;

// What a stalled agreement waited for: every rank to finish the work before it.
constexpr const char* k_agreement = "agreeing whether any rank failed";

}  // namespace

void agree_on_failure(MPI_Comm comm, const std::exception* failure) {
  int rank = 0;
  int size = 1;
  PLESHARD_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  PLESHARD_MPI_CHECK(MPI_Comm_size(comm, &size));
  // Who failed first, as every rank says; then that rank's message.
  int first = failure != nullptr ? rank : size;
  watched_allreduce(&first, 1, MPI_INT, MPI_MIN, comm, k_agreement);
  if (first == size) return;

  std::string message = rank == first ? failure->what() : std::string();
  // Cut rather than checked: a throw here would leave the other ranks in the broadcast.
  message.resize(std::min(message.size(), k_max_agreed_message));
  // The message's length and whether it is bad input (the failing rank's error may be an
  // AgreedError of an inner agreement).
  const auto* agreed = dynamic_cast<const AgreedError*>(failure);
  const bool input =
      rank == first && (dynamic_cast<const InputError*>(failure) != nullptr || (agreed != nullptr && agreed->input()));
  int header[2] = {static_cast<int>(message.size()), input ? 1 : 0};
  watched_bcast(header, 2, MPI_INT, first, comm, k_agreement);
  message.resize(static_cast<std::size_t>(header[0]));
  watched_bcast(message.data(), header[0], MPI_CHAR, first, comm, k_agreement);
  throw AgreedError(message, first, header[1] != 0);
}

void abort_job(const std::string& message) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "pleshard: rank %d: error: %s\n", rank, message.c_str());
  std::fflush(stderr);
  // MPI_Abort tells the launcher to end every rank, then exits this process through its
  // exit handlers, where the CUDA runtime may wait for the very kernel that stalled; so
  // this thread leaves without them once the abort has had time to get out.
  std::thread([] { MPI_Abort(MPI_COMM_WORLD, 1); }).detach();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  std::_Exit(1);
}

void rethrow_agreed(MPI_Comm comm, const std::exception_ptr& failure) {
  if (!failure) {
    agree_on_failure(comm, nullptr);
    return;
  }
  try {
    std::rethrow_exception(failure);
  } catch (const std::bad_alloc&) {
    const std::runtime_error out_of_memory("out of host memory (an allocation failed)");
    agree_on_failure(comm, &out_of_memory);
  } catch (const std::exception& e) {
    agree_on_failure(comm, &e);
  }
}

}  // namespace pleshard
