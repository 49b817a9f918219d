#pragma once
// NCCL backend of the collectives: device buffers, the step space's stream, one GPU per
// rank. Every call returns when its result is in place; waiting polls the stream and
// NCCL's asynchronous error state, and aborts the communicator on an error or after a
// timeout instead of hanging (nccl-tests' testStreamSynchronize). Built only with NCCL.

#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include "dist/communicator.hpp"

namespace pleshard {

namespace detail {
[[noreturn]] void throw_nccl_error(ncclResult_t code, const char* call, const char* file, int line);
}  // namespace detail

#define PLESHARD_NCCL_CHECK(call)                                                   \
  do {                                                                              \
    const ncclResult_t pleshard_nccl_rc_ = (call);                                  \
    if (pleshard_nccl_rc_ != ncclSuccess)                                           \
      ::pleshard::detail::throw_nccl_error(pleshard_nccl_rc_, #call, __FILE__, __LINE__); \
  } while (0)

class NcclCommunicator final : public Communicator {
 public:
  // Collective over `comm`, whose ranks have each set a different current device: rank 0
  // makes the unique id and broadcasts its bytes over MPI, then ncclCommInitRank.
  NcclCommunicator(MPI_Comm comm, cudaStream_t stream, double timeout_s = 600);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] int rank() const override { return rank_; }
  void all_gather(std::span<const std::uint8_t> send, std::span<std::uint8_t> recv) override;
  void all_reduce(void* data, std::size_t count, Element element, ReduceOp op) override;
  void reduce_scatter(const void* send, void* recv, std::size_t count, Element element,
                      ReduceOp op) override;
  void all_to_all_v(const std::uint8_t* send, std::span<const std::int64_t> send_counts,
                    std::span<const std::int64_t> send_offsets, std::uint8_t* recv,
                    std::span<const std::int64_t> recv_counts,
                    std::span<const std::int64_t> recv_offsets) override;
  using Communicator::all_reduce;

  // While capturing a CUDA graph, calls only enqueue: no wait, no timing.
  void set_capturing(bool capturing) { capturing_ = capturing; }

 private:
  // Enqueues `enqueue`, then (unless capturing) waits and adds the time to `name`.
  template <typename F>
  void run(const char* name, double bytes, F&& enqueue);
  // Waits for the stream; on an NCCL error or the timeout, aborts and throws.
  void wait(const char* what);

  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_;
  int size_ = 1;
  int rank_ = 0;
  double timeout_s_;
  bool capturing_ = false;
};

}  // namespace pleshard
