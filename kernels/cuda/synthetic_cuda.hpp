#pragma once
// Synthetic tables made on the GPU (kernels/common/synthetic_rows.hpp): the same bytes the
// host makes for checkpoints, at GPU speed, straight into the memory a tier keeps them in.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/common/row_decode.hpp"

namespace pleshard::kernels {

// Where one table's rows go: `count` rows from `first_row`, row r's codes at rows +
// (r - first_row) * pitch and (block-scaled formats) its block scales at scales + (r - first_row) *
// scale_pitch: after the codes in a GPU tier's table, or in an array of their own.
struct SyntheticTarget {
  RowFormat format = RowFormat::bf16;
  int head_dim = 0;
  std::uint64_t seed = 0;
  int ple_index = 0;
  std::int64_t first_row = 0;
  std::int64_t count = 0;
  std::uint8_t* rows = nullptr;  // device memory
  std::size_t pitch = 0;
  std::uint8_t* scales = nullptr;  // device memory; block-scaled formats only
  std::size_t scale_pitch = 0;
};

// Makes the rows on `stream`, one thread per row.
void make_synthetic_rows_cuda(const SyntheticTarget& target, cudaStream_t stream);

}  // namespace pleshard::kernels
