#pragma once
// Host (Kokkos) lookup: decode the rows of `ids` into `out`, zeros for ids the view
// does not hold.

#include <cstdint>

#include "kernels/common/row_decode.hpp"

namespace pleshard::kernels {

// out: num_ids * head_dim elements of `dtype`, row i for ids[i].
void lookup_rows_host(const TableView& table, const std::int64_t* ids, std::int64_t num_ids,
                      OutDtype dtype, void* out);

}  // namespace pleshard::kernels
