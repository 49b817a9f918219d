#include "dist/staged_communicator.hpp"

#include <algorithm>
#include <numeric>

namespace pleshard {

StagedCommunicator::StagedCommunicator(std::unique_ptr<Communicator> host, StepSpace& space)
    : host_(std::move(host)), space_(space) {}

std::uint8_t* StagedCommunicator::stage_in(std::vector<std::uint8_t>& host, const void* src, std::size_t bytes) {
  host.resize(bytes);
  space_.copy_to_host(host.data(), src, bytes);
  return host.data();
}

void StagedCommunicator::stage_out(void* dst, const std::vector<std::uint8_t>& host, std::size_t bytes) {
  // From pageable memory: the host bytes have been read when this returns.
  space_.copy_from_host(dst, host.data(), bytes);
}

void StagedCommunicator::all_gather(std::span<const std::uint8_t> send, std::span<std::uint8_t> recv) {
  const std::uint8_t* s = stage_in(send_, send.data(), send.size());
  recv_.resize(recv.size());
  timed("all_gather", static_cast<double>(recv.size()), [&] { host_->all_gather({s, send.size()}, recv_); });
  stage_out(recv.data(), recv_, recv.size());
}

void StagedCommunicator::all_reduce(void* data, std::size_t count, Element element, ReduceOp op) {
  const std::size_t bytes = count * element_bytes(element);
  std::uint8_t* staged = stage_in(send_, data, bytes);
  timed("all_reduce", static_cast<double>(bytes), [&] { host_->all_reduce(staged, count, element, op); });
  stage_out(data, send_, bytes);
}

void StagedCommunicator::reduce_scatter(const void* send, void* recv, std::size_t count, Element element, ReduceOp op) {
  const std::size_t block = count * element_bytes(element);
  const std::size_t total = block * static_cast<std::size_t>(size());
  const std::uint8_t* s = stage_in(send_, send, total);
  recv_.resize(block);
  timed("reduce_scatter", static_cast<double>(total),
        [&] { host_->reduce_scatter(s, recv_.data(), count, element, op); });
  stage_out(recv, recv_, block);
}

void StagedCommunicator::all_to_all_v(const std::uint8_t* send, std::span<const std::int64_t> send_counts,
                                      std::span<const std::int64_t> send_offsets, std::uint8_t* recv,
                                      std::span<const std::int64_t> recv_counts,
                                      std::span<const std::int64_t> recv_offsets, std::size_t unit) {
  std::size_t send_bytes = 0;
  std::size_t recv_bytes = 0;
  for (std::size_t r = 0; r < send_counts.size(); ++r) {
    send_bytes = std::max(send_bytes, static_cast<std::size_t>(send_offsets[r] + send_counts[r]) * unit);
    recv_bytes = std::max(recv_bytes, static_cast<std::size_t>(recv_offsets[r] + recv_counts[r]) * unit);
  }
  const double bytes = std::accumulate(send_counts.begin(), send_counts.end(), 0.0) * static_cast<double>(unit);
  const std::uint8_t* s = stage_in(send_, send, send_bytes);
  recv_.resize(recv_bytes);
  timed("all_to_all", bytes,
        [&] { host_->all_to_all_v(s, send_counts, send_offsets, recv_.data(), recv_counts, recv_offsets, unit); });
  stage_out(recv, recv_, recv_bytes);
}

}  // namespace pleshard
