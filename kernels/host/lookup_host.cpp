#include "kernels/host/lookup_host.hpp"

#include <vector>

#include <Kokkos_Core.hpp>

#include "kernels/host/kernel_threads.hpp"

namespace pleshard::kernels {

namespace {

// Rows a thread decodes at a time: enough to outweigh taking a block, few enough that a
// step of 64 tokens (1024 rows a layer) still spreads.
constexpr std::int64_t k_rows_per_block = 512;

}  // namespace

void decode_step_host(std::span<const DecodeTask> tasks, OutDtype dtype) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  if (const std::size_t threads = own_kernel_threads(); threads > 1) {
    std::vector<std::int64_t> rows;
    for (const DecodeTask& task : tasks) rows.push_back(task.count);
    for_each_block(rows, k_rows_per_block, threads, [&](std::size_t t, std::int64_t first, std::int64_t last) {
      const DecodeTask& task = tasks[t];
      for (std::int64_t i = first; i < last; ++i)
        decode_row(task.rows, task.keys[i], dtype, task.out, i * task.rows.head_dim);
    });
    return;
  }
  for (const DecodeTask& task : tasks) {
    const std::int64_t dim = task.rows.head_dim;
    Kokkos::parallel_for("pleshard::decode_step",
                         Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(0, task.count),
                         [=](std::int64_t i) { decode_row(task.rows, task.keys[i], dtype, task.out, i * dim); });
  }
  Space().fence();
}

void lookup_rows_host(const TableView& table, const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype,
                      void* out) {
  const DecodeTask task{table, ids, num_ids, out};
  decode_step_host({&task, 1}, dtype);
}

}  // namespace pleshard::kernels
