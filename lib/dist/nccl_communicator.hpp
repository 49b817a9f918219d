#pragma once
// NCCL backend of the collectives: device buffers, the step space's stream, one GPU per
// rank. Calls only enqueue; each is timed by a pair of events around it, read by settle()
// once the stream has passed them. check() polls NCCL's asynchronous error state, so that a
// waiting loop (the engine's watched step wait) can end instead of hanging on a failed or
// stalled peer; abort() gives up on every call in flight (nccl-tests' testStreamSynchronize).
// Built only with NCCL.

#include <vector>

#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include "dist/communicator.hpp"

namespace pleshard {

namespace detail {
[[noreturn]] void throw_nccl_error(ncclResult_t code, const char* call, const char* file, int line);
}  // namespace detail

#define PLESHARD_NCCL_CHECK(call)                                                         \
  do {                                                                                    \
    const ncclResult_t pleshard_nccl_rc_ = (call);                                        \
    if (pleshard_nccl_rc_ != ncclSuccess)                                                 \
      ::pleshard::detail::throw_nccl_error(pleshard_nccl_rc_, #call, __FILE__, __LINE__); \
  } while (0)

class NcclCommunicator final : public Communicator {
 public:
  // Collective over `comm`, whose ranks have each set a different current device: rank 0
  // makes the unique id and broadcasts its bytes over MPI, then ncclCommInitRank.
  NcclCommunicator(MPI_Comm comm, cudaStream_t stream);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] int rank() const override { return rank_; }
  void all_gather(std::span<const std::uint8_t> send, std::span<std::uint8_t> recv) override;
  void all_reduce(void* data, std::size_t count, Element element, ReduceOp op) override;
  void reduce_scatter(const void* send, void* recv, std::size_t count, Element element, ReduceOp op) override;
  void all_to_all_v(const std::uint8_t* send, std::span<const std::int64_t> send_counts,
                    std::span<const std::int64_t> send_offsets, std::uint8_t* recv,
                    std::span<const std::int64_t> recv_counts, std::span<const std::int64_t> recv_offsets,
                    std::size_t unit) override;
  void settle() override;
  void check() override;
  void abort() noexcept override;
  using Communicator::all_reduce;

 private:
  // A call in flight: its counter and the events around it.
  struct Timed {
    const char* name;
    cudaEvent_t begin;
    cudaEvent_t end;
  };
  // Enqueues `enqueue` between two events (none while the stream is being captured into a
  // CUDA graph: the engine counts a replay's collectives itself).
  template <typename F>
  void run(const char* name, double bytes, F&& enqueue);
  [[nodiscard]] cudaEvent_t take_event();

  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_;
  int size_ = 1;
  int rank_ = 0;
  std::vector<Timed> in_flight_;
  std::vector<cudaEvent_t> free_events_;
};

}  // namespace pleshard
