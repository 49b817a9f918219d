#include "kernels/host/lookup_host.hpp"

#include <Kokkos_Core.hpp>

namespace pleshard::kernels {

void lookup_rows_host(const TableView& table, const std::int64_t* ids, std::int64_t num_ids,
                      OutDtype dtype, void* out) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const std::int64_t dim = table.head_dim;
  Kokkos::parallel_for(
      "pleshard::lookup_rows",
      Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(0, num_ids),
      [=](std::int64_t i) { decode_row(table, ids[i], dtype, out, i * dim); });
  Space().fence();
}

}  // namespace pleshard::kernels
