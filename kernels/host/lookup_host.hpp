#pragma once
// Host (Kokkos) lookups: decode the rows of a step's tasks, zeros for keys the rows do not
// hold (DecodeTask).

#include <cstdint>
#include <span>

#include "kernels/common/row_decode.hpp"

namespace pleshard::kernels {

// Every task of a step; returns when the outputs are written.
void decode_step_host(std::span<const DecodeTask> tasks, OutDtype dtype);

// out: num_ids * head_dim elements of `dtype`, row i for ids[i]: one task.
void lookup_rows_host(const TableView& table, const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype, void* out);

}  // namespace pleshard::kernels
