#include "dist/nccl_communicator.hpp"

#include <exception>
#include <string>

#include "core/error.hpp"
#include "core/mpi_check.hpp"
#include "core/watched_collectives.hpp"
#include "kernels/cuda/cuda_check.hpp"

namespace pleshard {

namespace detail {

void throw_nccl_error(ncclResult_t code, const char* call, const char* file, int line) {
  throw SystemError(std::string("NCCL error ") + ncclGetErrorString(code) + " in " + call + " at " + file + ":" +
                    std::to_string(line));
}

}  // namespace detail

namespace {

struct Reduction {
  ncclDataType_t type;
  ncclRedOp_t op;
  std::size_t count;
};

// NCCL's type and operation for `count` elements. Owned data is reduced as bytes (or
// words) with a sum: one rank's bits plus zeros elsewhere are that rank's bits.
Reduction reduction(std::size_t count, Element element, ReduceOp op) {
  const std::size_t bytes = count * element_bytes(element);
  if (op == ReduceOp::owned) {
    if (element == Element::f32) throw SystemError("owned reductions need an unsigned element type");
    if (bytes % 4 == 0) return {ncclUint32, ncclSum, bytes / 4};
    return {ncclUint8, ncclSum, bytes};
  }
  if (op == ReduceOp::bitwise_or) throw SystemError("NCCL has no bitwise OR; use ReduceOp::owned");
  const ncclRedOp_t nccl_op = op == ReduceOp::max ? ncclMax : ncclSum;
  switch (element) {
    case Element::u8:
      return {ncclUint8, nccl_op, count};
    case Element::u32:
      return {ncclUint32, nccl_op, count};
    case Element::i64:
      return {ncclInt64, nccl_op, count};
    case Element::f32:
      return {ncclFloat32, nccl_op, count};
    case Element::u16:
      break;
  }
  throw SystemError("NCCL has no 16-bit unsigned type for sum or max");
}

}  // namespace

NcclCommunicator::NcclCommunicator(MPI_Comm comm, cudaStream_t stream) : stream_(stream) {
  PLESHARD_MPI_CHECK(MPI_Comm_size(comm, &size_));
  PLESHARD_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
  ncclUniqueId id{};
  if (rank_ == 0) PLESHARD_NCCL_CHECK(ncclGetUniqueId(&id));
  watched_bcast(&id, sizeof(id), MPI_BYTE, 0, comm, "NCCL's unique id");
  // ncclCommInitRank blocks until every rank joins: every rank is known to be here first.
  watched_barrier(comm, "NCCL's communicator");
  PLESHARD_NCCL_CHECK(ncclCommInitRank(&comm_, size_, id, rank_));
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_ != nullptr && std::uncaught_exceptions() > 0) {
    // A rank unwinding from a failure: its peers may never join a destroy, and work still
    // queued may wait on them; abort instead.
    ncclCommAbort(comm_);
  } else if (comm_ != nullptr) {
    // Mirror order of the bootstrap: drain our work, then destroy.
    cudaStreamSynchronize(stream_);
    ncclCommDestroy(comm_);
  }
  for (const Timed& t : in_flight_) {
    cudaEventDestroy(t.begin);
    cudaEventDestroy(t.end);
  }
  for (cudaEvent_t e : free_events_) cudaEventDestroy(e);
}

cudaEvent_t NcclCommunicator::take_event() {
  if (free_events_.empty()) {
    cudaEvent_t e = nullptr;
    PLESHARD_CUDA_CHECK(cudaEventCreate(&e));
    return e;
  }
  cudaEvent_t e = free_events_.back();
  free_events_.pop_back();
  return e;
}

void NcclCommunicator::settle() {
  // In call order, as far as the stream has got.
  std::size_t settled = 0;
  for (; settled < in_flight_.size(); ++settled) {
    const Timed& t = in_flight_[settled];
    const cudaError_t state = cudaEventQuery(t.end);
    if (state == cudaErrorNotReady) break;
    PLESHARD_CUDA_CHECK(state);
    float ms = 0;
    PLESHARD_CUDA_CHECK(cudaEventElapsedTime(&ms, t.begin, t.end));
    counters_[t.name].seconds += ms * 1e-3;
    free_events_.push_back(t.begin);
    free_events_.push_back(t.end);
  }
  in_flight_.erase(in_flight_.begin(), in_flight_.begin() + static_cast<std::ptrdiff_t>(settled));
}

void NcclCommunicator::check() {
  if (comm_ == nullptr) throw SystemError("NCCL communicator already aborted");
  ncclResult_t async = ncclSuccess;
  PLESHARD_NCCL_CHECK(ncclCommGetAsyncError(comm_, &async));
  if (async == ncclSuccess || async == ncclInProgress) return;
  abort();
  throw SystemError(std::string("NCCL reported ") + ncclGetErrorString(async) + "; communicator aborted");
}

void NcclCommunicator::abort() noexcept {
  if (comm_ == nullptr) return;
  ncclCommAbort(comm_);
  comm_ = nullptr;
}

template <typename F>
void NcclCommunicator::run(const char* name, double bytes, F&& enqueue) {
  if (comm_ == nullptr) throw SystemError(std::string(name) + " on an aborted NCCL communicator");
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  PLESHARD_CUDA_CHECK(cudaStreamIsCapturing(stream_, &capture));
  if (capture != cudaStreamCaptureStatusNone) {
    enqueue();
    captured_.emplace_back(name, bytes);
    return;
  }
  const Timed t{name, take_event(), take_event()};
  try {
    PLESHARD_CUDA_CHECK(cudaEventRecord(t.begin, stream_));
    enqueue();
    PLESHARD_CUDA_CHECK(cudaEventRecord(t.end, stream_));
  } catch (...) {
    free_events_.push_back(t.begin);
    free_events_.push_back(t.end);
    throw;
  }
  in_flight_.push_back(t);
  CollectiveCounter& c = counters_[name];
  c.calls += 1;
  c.bytes += bytes;
}

void NcclCommunicator::all_gather(std::span<const std::uint8_t> send, std::span<std::uint8_t> recv) {
  if (recv.size() != send.size() * static_cast<std::size_t>(size_))
    throw SystemError("all_gather: receive buffer is not size() blocks");
  run("all_gather", static_cast<double>(recv.size()),
      [&] { PLESHARD_NCCL_CHECK(ncclAllGather(send.data(), recv.data(), send.size(), ncclUint8, comm_, stream_)); });
}

void NcclCommunicator::all_reduce(void* data, std::size_t count, Element element, ReduceOp op) {
  const Reduction r = reduction(count, element, op);
  run("all_reduce", static_cast<double>(count * element_bytes(element)),
      [&] { PLESHARD_NCCL_CHECK(ncclAllReduce(data, data, r.count, r.type, r.op, comm_, stream_)); });
}

void NcclCommunicator::reduce_scatter(const void* send, void* recv, std::size_t count, Element element, ReduceOp op) {
  const Reduction r = reduction(count, element, op);
  run("reduce_scatter", static_cast<double>(count * element_bytes(element) * static_cast<std::size_t>(size_)),
      [&] { PLESHARD_NCCL_CHECK(ncclReduceScatter(send, recv, r.count, r.type, r.op, comm_, stream_)); });
}

void NcclCommunicator::all_to_all_v(const std::uint8_t* send, std::span<const std::int64_t> send_counts,
                                    std::span<const std::int64_t> send_offsets, std::uint8_t* recv,
                                    std::span<const std::int64_t> recv_counts,
                                    std::span<const std::int64_t> recv_offsets, std::size_t unit) {
  double bytes = 0;
  for (const std::int64_t c : send_counts) bytes += static_cast<double>(c) * static_cast<double>(unit);
  const auto in_bytes = [unit](std::int64_t entries) { return static_cast<std::size_t>(entries) * unit; };
  run("all_to_all", bytes, [&] {
    PLESHARD_NCCL_CHECK(ncclGroupStart());
    for (int peer = 0; peer < size_; ++peer) {
      const auto p = static_cast<std::size_t>(peer);
      if (send_counts[p] > 0)
        PLESHARD_NCCL_CHECK(
            ncclSend(send + in_bytes(send_offsets[p]), in_bytes(send_counts[p]), ncclUint8, peer, comm_, stream_));
      if (recv_counts[p] > 0)
        PLESHARD_NCCL_CHECK(
            ncclRecv(recv + in_bytes(recv_offsets[p]), in_bytes(recv_counts[p]), ncclUint8, peer, comm_, stream_));
    }
    PLESHARD_NCCL_CHECK(ncclGroupEnd());
  });
}

}  // namespace pleshard
