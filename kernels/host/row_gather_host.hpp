#pragma once
// A step's distinct rows copied by host threads out of a table in host memory into a packed
// block (the pinned tier's host reads: store/host_reads.hpp), so that they cross to the GPU
// in one contiguous copy instead of one UVA read per row. The block is laid out as the GPU's
// distinct-row gather lays it out (kernels/cuda/distinct_rows.hpp): row r's codes at
// rows + r * row_bytes, its block scales at scales + r * scale_bytes.

#include <cstddef>
#include <cstdint>

#include "kernels/common/row_decode.hpp"

namespace pleshard::kernels {

// Rows `offsets[0, count)` of `table` (offsets from its row_begin; host-readable memory) into
// `rows` and, for block-scaled formats, `scales`, on up to `threads` threads.
void gather_rows_host(const TableView& table, const std::uint32_t* offsets, std::int64_t count, std::uint8_t* rows,
                      std::uint8_t* scales, std::size_t threads);

}  // namespace pleshard::kernels
