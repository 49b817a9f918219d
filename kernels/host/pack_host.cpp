#include "kernels/host/pack_host.hpp"

#include <Kokkos_Core.hpp>

namespace pleshard::kernels {

namespace {
using Space = Kokkos::DefaultHostExecutionSpace;
using Range = Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>;
}  // namespace

void pack_rows_host(std::span<const PackTask> tasks) {
  for (const PackTask& task : tasks) {
    const std::size_t pitch = packed_row_bytes(task.table.format, task.table.head_dim);
    Kokkos::parallel_for("pleshard::pack_rows", Range(0, task.count), [=](std::int64_t i) {
      pack_stored_row(task.table, task.keys[i], task.out + i * pitch, HostBytes{});
    });
  }
  Space().fence();
}

void widen_local_ids_host(const std::uint8_t* ids, int width, std::int64_t count, std::int64_t first, std::int64_t* out,
                          const IdTally& tally, int layer) {
  Kokkos::parallel_for("pleshard::widen_local_ids", Range(0, count),
                       [=](std::int64_t i) { out[i] = widen_local_id(ids, width, i, first); });
  Space().fence();
  if (tally.outside == nullptr) return;
  unsigned long long outside = 0;
  for (std::int64_t i = 0; i < count; ++i) outside += tally.counts(layer, i, out[i]) ? 1 : 0;
  tally.outside[layer] += outside;
}

}  // namespace pleshard::kernels
