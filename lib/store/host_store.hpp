#pragma once
// The host tier: every table's row range in host memory; a step's rows are read in place.

#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "store/host_table.hpp"
#include "store/row_store.hpp"

namespace pleshard {

class HostStore final : public RowStore {
 public:
  // ranges[d]: the rows of table d to hold.
  HostStore(const PleCheckpoint& checkpoint, std::span<const RowRange> ranges);

  void submit(std::span<const RowQuery> queries) override;
  [[nodiscard]] std::span<const kernels::DecodeTask> wait() override { return tasks_; }

 private:
  std::vector<HostTable> tables_;
  std::vector<kernels::DecodeTask> tasks_;
};

}  // namespace pleshard
