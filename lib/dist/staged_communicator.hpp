#pragma once
// Collectives on a step space's memory carried by a host communicator: each call copies its
// buffers to the host (waiting for the work queued before it) and back. For GPU runs where
// ranks share GPUs (NCCL wants one GPU per rank) or builds without NCCL. The time counted
// is the host collective's alone.

#include <memory>
#include <vector>

#include "dist/communicator.hpp"
#include "exec/step_space.hpp"

namespace pleshard {

class StagedCommunicator final : public Communicator {
 public:
  StagedCommunicator(std::unique_ptr<Communicator> host, StepSpace& space);

  [[nodiscard]] int size() const override { return host_->size(); }
  [[nodiscard]] int rank() const override { return host_->rank(); }
  void all_gather(std::span<const std::uint8_t> send, std::span<std::uint8_t> recv) override;
  void all_reduce(void* data, std::size_t count, Element element, ReduceOp op) override;
  void reduce_scatter(const void* send, void* recv, std::size_t count, Element element, ReduceOp op) override;
  void all_to_all_v(const std::uint8_t* send, std::span<const std::int64_t> send_counts,
                    std::span<const std::int64_t> send_offsets, std::uint8_t* recv,
                    std::span<const std::int64_t> recv_counts, std::span<const std::int64_t> recv_offsets,
                    std::size_t unit) override;
  using Communicator::all_reduce;

 private:
  std::uint8_t* stage_in(std::vector<std::uint8_t>& host, const void* src, std::size_t bytes);
  void stage_out(void* dst, const std::vector<std::uint8_t>& host, std::size_t bytes);

  std::unique_ptr<Communicator> host_;
  StepSpace& space_;
  std::vector<std::uint8_t> send_;
  std::vector<std::uint8_t> recv_;
};

}  // namespace pleshard
