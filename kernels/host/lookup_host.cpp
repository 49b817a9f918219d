#include "kernels/host/lookup_host.hpp"

#include <Kokkos_Core.hpp>

namespace pleshard::kernels {

void decode_step_host(std::span<const DecodeTask> tasks, OutDtype dtype) {
  using Space = Kokkos::DefaultHostExecutionSpace;
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
