#include <algorithm>
#include <type_traits>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/lookup_cuda.hpp"

namespace pleshard::kernels {

namespace {

constexpr int k_warps_per_block = 8;

// Bytes one lane loads at a time: 16, except NVFP4's 8 (one block of 16 values, so a lane
// decodes one block scale and holds 16 values, not 32: fewer registers, more rows in flight).
template <RowFormat F>
constexpr int chunk_bytes() {
  return F == RowFormat::nvfp4 ? 8 : 16;
}

// Values in one chunk of a stored row: fixed by the format, so the decode loop unrolls and
// the chunk stays in registers.
template <RowFormat F>
constexpr int values_per_chunk() {
  if constexpr (F == RowFormat::f32) return 4;
  else if constexpr (F == RowFormat::bf16 || F == RowFormat::f16) return 8;
  else return 16;
}

template <int Bytes>
using ChunkVector = std::conditional_t<Bytes == 16, uint4, uint2>;

// E4M3 codes decoded once per block into shared memory, by the shared decode core.
struct E4m3Table {
  const float* values;
  __device__ float operator()(std::uint8_t b) const { return values[b]; }
};

// Writes N consecutive output values with the widest stores their alignment allows.
template <OutDtype O, int N>
__device__ void store_chunk(void* out, std::int64_t first, const float (&values)[N]) {
  constexpr int bytes = N * static_cast<int>(out_bytes(O));
  union {
    std::uint8_t raw[bytes];
    uint4 vectors[(bytes + 15) / 16];
  } packed;
#pragma unroll
  for (int k = 0; k < N; ++k) store_value_as<O>(packed.raw, k, values[k]);
  auto* dst = static_cast<std::uint8_t*>(out) + first * static_cast<std::int64_t>(out_bytes(O));
  if constexpr (bytes % 16 == 0) {
    if (reinterpret_cast<std::uintptr_t>(dst) % 16 == 0) {
#pragma unroll
      for (int v = 0; v < bytes / 16; ++v) reinterpret_cast<uint4*>(dst)[v] = packed.vectors[v];
      return;
    }
  }
#pragma unroll
  for (int k = 0; k < N; ++k) store_value_as<O>(out, first + k, values[k]);
}

// One warp per output row. Each lane loads chunks of the stored row (read-only
// path), decodes them with the shared decode core and stores the values in 16-byte
// vectors; a row's chunks are contiguous across the lanes, so loads and stores coalesce.
template <RowFormat F, OutDtype O>
__global__ void __launch_bounds__(k_warps_per_block * 32)
    lookup_kernel(const TableView table, const std::int64_t* __restrict__ ids, std::int64_t num_ids,
                  void* __restrict__ out) {
  __shared__ float e4m3_values[256];
  // NVFP4: every (block scale, code) product of the decode core, decode_e2m1(code) *
  // decode_e4m3(scale), exact in float; a value is then one shared load and the global
  // scale, as for FP8, instead of the E2M1 arithmetic.
  __shared__ float nvfp4_products[F == RowFormat::nvfp4 ? 256 * 16 : 1];
  if constexpr (F == RowFormat::fp8 || F == RowFormat::nvfp4) {
    for (int b = threadIdx.x; b < 256; b += blockDim.x) e4m3_values[b] = decode_e4m3(static_cast<std::uint8_t>(b));
  }
  if constexpr (F == RowFormat::nvfp4) {
    for (int e = threadIdx.x; e < 256 * 16; e += blockDim.x)
      nvfp4_products[e] = decode_e2m1(static_cast<std::uint8_t>(e & 15)) * decode_e4m3(static_cast<std::uint8_t>(e >> 4));
  }
  if constexpr (F == RowFormat::fp8 || F == RowFormat::nvfp4) __syncthreads();
  const E4m3Table e4m3{e4m3_values};
  const int dim = table.head_dim;
  const int row_bytes = static_cast<int>(stored_row_bytes(F, dim));
  constexpr int bytes = chunk_bytes<F>();
  const int chunks = row_bytes / bytes;
  constexpr int per_chunk = values_per_chunk<F>();
  // Short rows (FP8, NVFP4) leave most lanes idle at one row per warp: a warp takes as many
  // rows as it has groups of `chunks` lanes.
  const int rows_per_warp = chunks < 32 ? 32 / chunks : 1;
  const int group_lanes = chunks < 32 ? chunks : 32;
  const int lane = threadIdx.x & 31;
  const int group = lane / group_lanes;
  const int group_lane = lane - group * group_lanes;
  const std::int64_t warp = static_cast<std::int64_t>(blockIdx.x) * k_warps_per_block + (threadIdx.x >> 5);
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * k_warps_per_block;
  if (group >= rows_per_warp) return;  // lanes left over by the grouping; no barrier follows
  for (std::int64_t i = warp * rows_per_warp + group; i < num_ids; i += warps * rows_per_warp) {
    const std::int64_t id = ids[i];
    const std::int64_t base = i * dim;
    if (!table.owns(id)) {
      for (int j = group_lane; j < dim; j += group_lanes) store_value_as<O>(out, base + j, 0.0f);
      continue;
    }
    const auto local = static_cast<std::size_t>(id - table.row_begin);
    const std::uint8_t* row = table.row_at(local);
    const std::uint8_t* scales = F == RowFormat::nvfp4 ? table.scales_at(local) : nullptr;
    for (int c = group_lane; c < chunks; c += group_lanes) {
      union {
        ChunkVector<bytes> vector;
        std::uint8_t bytes[bytes];
      } chunk;
      chunk.vector = __ldg(reinterpret_cast<const ChunkVector<bytes>*>(row) + c);
      const std::uint8_t* chunk_scales =
          F == RowFormat::nvfp4 ? scales + c * per_chunk / k_nvfp4_block : nullptr;
      float values[per_chunk];
      if constexpr (F == RowFormat::nvfp4) {
        // One block per chunk: (e2m1 * block scale) * global, as decode_value_as computes it.
        const float* products = nvfp4_products + (static_cast<unsigned>(chunk_scales[0]) << 4);
#pragma unroll
        for (int k = 0; k < per_chunk; ++k)
          values[k] = products[(chunk.bytes[k / 2] >> ((k & 1) * 4)) & 0xFu] * table.global_scale;
      } else {
#pragma unroll
        for (int k = 0; k < per_chunk; ++k)
          values[k] = decode_value_as<F>(chunk.bytes, chunk_scales, table.global_scale, k, e4m3);
      }
      store_chunk<O>(out, base + c * per_chunk, values);
    }
  }
}

// Rows whose bytes do not split into 16-byte chunks: one value per lane.
template <RowFormat F, OutDtype O>
__global__ void __launch_bounds__(k_warps_per_block * 32)
    lookup_kernel_unaligned(const TableView table, const std::int64_t* __restrict__ ids, std::int64_t num_ids,
                            void* __restrict__ out) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warp = static_cast<std::int64_t>(blockIdx.x) * k_warps_per_block + (threadIdx.x >> 5);
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * k_warps_per_block;
  for (std::int64_t i = warp; i < num_ids; i += warps) {
    const std::int64_t id = ids[i];
    const bool owned = table.owns(id);
    const auto local = static_cast<std::size_t>(owned ? id - table.row_begin : 0);
    const std::uint8_t* row = table.row_at(local);
    const std::uint8_t* scales = F == RowFormat::nvfp4 ? table.scales_at(local) : nullptr;
    for (int j = lane; j < table.head_dim; j += 32)
      store_value_as<O>(out, i * table.head_dim + j,
                        owned ? decode_value_as<F>(row, scales, table.global_scale, j) : 0.0f);
  }
}

int grid_for(std::int64_t rows) {
  const std::int64_t blocks = (rows + k_warps_per_block - 1) / k_warps_per_block;
  return static_cast<int>(std::min<std::int64_t>(blocks, 1 << 16));
}

// NVFP4 blocks fill a 16 KB product table first, so they stay resident and loop over rows:
// a few blocks per SM instead of one block per few rows.
int persistent_grid(std::int64_t rows) {
  int device = 0;
  int sms = 0;
  PLESHARD_CUDA_CHECK(cudaGetDevice(&device));
  PLESHARD_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return std::min(grid_for(rows), 8 * sms);
}

template <RowFormat F, OutDtype O>
void launch(const TableView& t, const std::int64_t* ids, std::int64_t n, void* out, cudaStream_t stream) {
  const bool aligned = stored_row_bytes(F, t.head_dim) % chunk_bytes<F>() == 0 &&
                       t.row_stride() % chunk_bytes<F>() == 0 &&
                       reinterpret_cast<std::uintptr_t>(t.rows) % chunk_bytes<F>() == 0;
  if (aligned) {
    const int grid = F == RowFormat::nvfp4 ? persistent_grid(n) : grid_for(n);
    lookup_kernel<F, O><<<grid, k_warps_per_block * 32, 0, stream>>>(t, ids, n, out);
  } else {
    lookup_kernel_unaligned<F, O><<<grid_for(n), k_warps_per_block * 32, 0, stream>>>(t, ids, n, out);
  }
  PLESHARD_CUDA_CHECK_LAUNCH();
}

template <RowFormat F>
void launch_format(const TableView& t, const std::int64_t* ids, std::int64_t n, OutDtype dtype, void* out,
                   cudaStream_t stream) {
  switch (dtype) {
    case OutDtype::f32: launch<F, OutDtype::f32>(t, ids, n, out, stream); break;
    case OutDtype::bf16: launch<F, OutDtype::bf16>(t, ids, n, out, stream); break;
    case OutDtype::f16: launch<F, OutDtype::f16>(t, ids, n, out, stream); break;
  }
}

__global__ void __launch_bounds__(k_warps_per_block * 32)
    gather_plain_kernel(const std::uint8_t* __restrict__ rows, std::size_t row_bytes,
                        const std::int64_t* __restrict__ ids, std::int64_t num_ids, std::uint8_t* __restrict__ out) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warp = static_cast<std::int64_t>(blockIdx.x) * k_warps_per_block + (threadIdx.x >> 5);
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * k_warps_per_block;
  const std::size_t words = row_bytes / 4;
  for (std::int64_t i = warp; i < num_ids; i += warps) {
    const auto* src = reinterpret_cast<const std::uint32_t*>(rows + static_cast<std::size_t>(ids[i]) * row_bytes);
    auto* dst = reinterpret_cast<std::uint32_t*>(out + static_cast<std::size_t>(i) * row_bytes);
    for (std::size_t w = static_cast<std::size_t>(lane); w < words; w += 32) dst[w] = src[w];
  }
}

}  // namespace

void lookup_rows_cuda(const TableView& table, const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype,
                      void* out, cudaStream_t stream) {
  if (num_ids == 0) return;
  switch (table.format) {
    case RowFormat::f32: launch_format<RowFormat::f32>(table, ids, num_ids, dtype, out, stream); break;
    case RowFormat::bf16: launch_format<RowFormat::bf16>(table, ids, num_ids, dtype, out, stream); break;
    case RowFormat::f16: launch_format<RowFormat::f16>(table, ids, num_ids, dtype, out, stream); break;
    case RowFormat::fp8: launch_format<RowFormat::fp8>(table, ids, num_ids, dtype, out, stream); break;
    case RowFormat::nvfp4: launch_format<RowFormat::nvfp4>(table, ids, num_ids, dtype, out, stream); break;
  }
}

void gather_rows_plain_cuda(const std::uint8_t* rows, std::size_t row_bytes, const std::int64_t* ids,
                            std::int64_t num_ids, std::uint8_t* out, cudaStream_t stream) {
  if (num_ids == 0) return;
  gather_plain_kernel<<<grid_for(num_ids), k_warps_per_block * 32, 0, stream>>>(rows, row_bytes, ids, num_ids, out);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

}  // namespace pleshard::kernels
