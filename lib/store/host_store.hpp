#pragma once
// The host tier: every table's row range in host memory; a step's rows are read in place.

#include <vector>

#include <mpi.h>

#include "ckpt/ple_checkpoint.hpp"
#include "store/host_table.hpp"
#include "store/row_store.hpp"

namespace pleshard {

class HostStore final : public RowStore {
 public:
  // ranges[d]: the rows of table d to hold. `share`: the ranks of my node that hold the same
  // ranges (MPI_COMM_NULL, or a group of one: none), which then keep one copy of them in
  // memory they share (core/node_segment.hpp), each rank reading a balanced part of every
  // table; collective over `share`.
  HostStore(const PleCheckpoint& checkpoint, std::span<const RowRange> ranges, MPI_Comm share = MPI_COMM_NULL);

  [[nodiscard]] bool reads_in_place(std::int64_t /*count*/) const override { return true; }
  void submit(std::span<const RowQuery> queries) override;
  [[nodiscard]] std::span<const kernels::DecodeTask> wait() override { return tasks_; }
  [[nodiscard]] std::span<const std::uint8_t> host_rows(int layer) const override {
    return tables_.at(static_cast<std::size_t>(layer)).bytes();
  }

 private:
  std::vector<HostTable> tables_;
  std::vector<kernels::DecodeTask> tasks_;
};

}  // namespace pleshard
