#include <algorithm>
#include <type_traits>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/launch_tasks.cuh"
#include "kernels/cuda/lookup_cuda.hpp"
#include "kernels/cuda/ngram_ids_cuda.hpp"
#include "kernels/cuda/pinned_pull.hpp"

namespace pleshard::kernels {

namespace {

constexpr int k_warps_per_block = 8;

// Bytes one lane loads at a time: 16, except a block-scaled format's 8, so that a chunk lies
// within one block (NVFP4: one block of 16 values, so a lane decodes one block scale and holds
// 16 values, not 32: fewer registers, more rows in flight) and packed rows (codes, then
// head_dim/32 E8M0 scales: 264 bytes for 256 values) still split into aligned chunks.
__host__ __device__ constexpr int chunk_bytes(RowFormat format) { return block_scaling(format).scaled() ? 8 : 16; }

// Short rows (FP8, block-scaled) would leave most lanes idle at one row per warp: a warp
// takes as many rows as it has groups of `chunks` lanes. The launch sizes its grid by the
// same numbers the kernel groups its lanes by.
__host__ __device__ constexpr int rows_per_warp(int chunks) { return chunks < 32 ? 32 / chunks : 1; }
__host__ __device__ constexpr int group_lanes(int chunks) { return chunks < 32 ? chunks : 32; }

// Values in one chunk of a stored row: fixed by the format, so the decode loop unrolls and
// the chunk stays in registers.
template <RowFormat F>
constexpr int values_per_chunk() {
  constexpr auto pair_bytes = static_cast<int>(stored_row_bytes(F, 2));
  static_assert(!block_scaling(F).scaled() || block_scaling(F).block % (chunk_bytes(F) * 2 / pair_bytes) == 0,
                "a chunk lies within one block");
  return chunk_bytes(F) * 2 / pair_bytes;
}

template <int Bytes>
using ChunkVector = std::conditional_t<Bytes == 16, uint4, uint2>;

// Which shared-memory tables a launch fills: none (16- and 32-bit rows), the 256 E4M3
// values (FP8 codes, FP8-E8M0 codes), or those and every NVFP4 (block scale, code) product.
// A launch takes the smallest set that covers all its tasks' formats.
enum class Tables { none, e4m3, products };

template <typename Format>
constexpr Tables tables_of(Format) {
  return Format::element == ElementCode::e2m1   ? Tables::products
         : Format::element == ElementCode::e4m3 ? Tables::e4m3
                                                : Tables::none;
}

constexpr Tables tables_for(RowFormat format) {
  Tables tables = Tables::products;
  visit_format(format, [&tables](auto f) { tables = tables_of(f); });
  return tables;
}

template <Tables T>
struct SharedTables {
  float e4m3[T == Tables::none ? 1 : 256];
  // NVFP4: decode_e2m1(code) * decode_e4m3(scale) for every pair, exact in float; a value is
  // then one shared load and the global scale, as for FP8, instead of the E2M1 arithmetic.
  // (E8M0 scales with E4M3 codes would need 256 x 256 products: those multiply instead.)
  float products[T == Tables::products ? 256 * 16 : 1];
};

// E4M3 codes decoded once per block into shared memory, by the shared decode core.
struct E4m3Table {
  const float* values;
  __device__ float operator()(std::uint8_t b) const { return values[b]; }
};

// The tasks of one launch, passed by value (a few hundred bytes of kernel parameters); a
// task's index is its layer in the step (tasks without rows are left out).
struct StepTasks : LaunchTasks<DecodeTask> {
  // Whether a task's rows split into the format's chunks at aligned addresses.
  bool aligned[k_max_step_layers] = {};
  int in_flight = 1;  // rows a group of lanes holds in flight: 1 or 2
  StepHash hash;      // where the launch hashes its keys (Hashed): the step's tokens
};

// The parameters of a hashing launch that carries the step's one slot block itself, where
// it is still in pinned host memory (PinnedBlock) and fits: the block reaches the GPU with
// the launch instead of by a pull of its own, a launch fewer (on the H200, eager steps of 1
// and 64 tokens 2-6 us shorter: docs/performance.md). Only outside CUDA graphs: a graph's
// decode node set to another block before each launch made replays slower and bimodal there
// (p50 8.5-12.8 us against 8.8-9.4 with the pull), so captured steps read the block in place
// or pull it (place_block). The whole stays within the 4 KB of parameters every CUDA 12
// toolkit takes.
constexpr std::size_t k_max_launch_parameters = 4096;

struct CarriedTasks : StepTasks {
  static constexpr std::size_t capacity =
      (k_max_launch_parameters - sizeof(StepTasks) - sizeof(std::int64_t)) / sizeof(std::uint64_t);
  std::int64_t words = 0;  // of block, which holds the slot's block as the pull would leave it
  std::uint64_t block[capacity];
};
static_assert(sizeof(CarriedTasks) <= k_max_launch_parameters, "a launch's parameters fit in 4 KB");

}  // namespace

std::int64_t carried_block_words() { return static_cast<std::int64_t>(CarriedTasks::capacity); }

namespace {

template <bool Carried>
using KernelTasks = std::conditional_t<Carried, CarriedTasks, StepTasks>;

// A hashing launch's tasks hold at most this many ids each: see hash_and_decode_step_cuda.
constexpr std::int64_t k_hashing_decode_max_ids = 4096;
// And the shared memory its block copies its layer's hashing into (below) at most this much:
// with the NVFP4 products (17 KB) within the 48 KB a block has without opting in.
constexpr std::size_t k_max_staged_bytes = 16 * 1024;

// What a hashing launch's block hashes from: its layer's parameters and the step's slot
// blocks, copied into shared memory once, with every thread's loads side by side, so that
// a group's walk (the binary search for its token's request, the tokens, the context, the
// head's modulus) is a chain of shared loads instead of dependent global ones.
struct LayerHash {
  const NgramHashParams* params = nullptr;
  SlotBatchView batch;
  int heads = 0;
  int layer = 0;
  IdTally tally;  // the step's (StepHash::tally)
};

static_assert(sizeof(NgramHashParams) % sizeof(std::uint64_t) == 0 && alignof(NgramHashParams) <= 8,
              "the parameters copy as 8-byte words");

std::size_t staged_bytes(const StepHash& hash) {
  return sizeof(NgramHashParams) +
         static_cast<std::size_t>(hash.batch.slots) *
             static_cast<std::size_t>(SlotBatchView::block_size(hash.batch.slot_tokens, hash.batch.context_width)) *
             sizeof(std::int64_t);
}

__device__ void copy_words(std::uint64_t* to, const std::uint64_t* from, std::int64_t words) {
  for (std::int64_t w = threadIdx.x; w < words; w += blockDim.x) to[w] = __ldg(from + w);
}

// Copies layer `layer`'s hashing into `staged` (staged_bytes(hash)), the slot blocks from the
// launch's parameters where it carries them; the caller's barrier publishes it.
template <bool Carried>
__device__ LayerHash stage_layer_hash(const KernelTasks<Carried>& step, int layer, std::uint64_t* staged) {
  const StepHash& hash = step.hash;
  constexpr std::int64_t param_words = sizeof(NgramHashParams) / sizeof(std::uint64_t);
  copy_words(staged, reinterpret_cast<const std::uint64_t*>(hash.params + layer), param_words);
  std::uint64_t* blocks = staged + param_words;
  if constexpr (Carried) {
    // Parameter space, not global memory: no __ldg. A warp's distinct words are served by
    // the constant cache one after another; a carried block is at most a few hundred.
    for (std::int64_t w = threadIdx.x; w < step.words; w += blockDim.x) blocks[w] = step.block[w];
  } else {
    copy_words(blocks, reinterpret_cast<const std::uint64_t*>(hash.batch.blocks),
               hash.batch.slots * SlotBatchView::block_size(hash.batch.slot_tokens, hash.batch.context_width));
  }
  SlotBatchView batch = hash.batch;
  batch.blocks = reinterpret_cast<const std::int64_t*>(blocks);
  return {reinterpret_cast<const NgramHashParams*>(staged), batch, hash.heads, layer, hash.tally};
}

// Where a task's keys come from: memory (`keys`), or the step's tokens, hashed by each group
// of lanes for its row (every lane computes the same id: no shuffle, and the loads of the
// tokens hit the same lines).
template <bool Hashed>
__device__ std::int64_t key_of(const DecodeTask& task, const LayerHash& hash, std::int64_t i) {
  if constexpr (Hashed) {
    const int entry = static_cast<int>(i);  // i < k_hashing_decode_max_ids: 32-bit division
    const int t = entry / hash.heads;
    return ngram_id_of_slot_token(*hash.params, hash.batch, t, entry - t * hash.heads);
  } else {
    (void)hash;
    return task.keys[i];
  }
}

// A hashing launch's bounds of its layer's tally (IdTally::counts_within), read once into
// registers through the global read-only path, where a tally is given. Read through the
// generic pointer beside the hashing staged in shared memory, nvcc 13.0 compiled these loads
// as shared-memory loads (cvta.to.shared): a fault on the GPU in every launch with a tally.
template <bool Hashed>
__device__ void load_tally_bounds(const LayerHash& hash, std::int64_t (&bounds)[4]) {
  if constexpr (Hashed) {
    if (hash.tally.outside == nullptr) return;
    const std::int64_t* layer_bounds = hash.tally.bounds + 4 * static_cast<std::int64_t>(hash.layer);
#pragma unroll
    for (int k = 0; k < 4; ++k) bounds[k] = __ldg(layer_bounds + k);
  } else {
    (void)hash, (void)bounds;
  }
}

// What row i (key `id`) adds to a hashing launch's tally, counted by one lane of its group.
template <bool Hashed>
__device__ unsigned long long tallied(const LayerHash& hash, const std::int64_t (&bounds)[4], std::int64_t i,
                                      std::int64_t id, int group_lane) {
  if constexpr (Hashed) {
    const int t = static_cast<int>(i) / hash.heads;  // as key_of: i < k_hashing_decode_max_ids
    return group_lane == 0 && hash.tally.outside != nullptr && hash.tally.counts_within(bounds, t, id) ? 1 : 0;
  } else {
    (void)hash, (void)bounds, (void)i, (void)id, (void)group_lane;
    return 0;
  }
}

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

// Tasks of up to this many rows are decoded with two rows in flight per group of lanes (each
// group issues the loads of both before it decodes either, so a warp waits for memory once
// per two rows); longer ones with one. On the H200 (rows of 256 values) the V4.1 steps were
// measured with two (docs/performance.md); at 1M ids two gave 2-11% fewer rows/s than one,
// each against the plain gather beside it (fp8_e8m0, bf16, fp8): there the grid already
// keeps every SM full, and the second row's registers leave fewer warps resident (the likely
// cause; not profiled). At 8,192 ids two were within 4% of one so compared. Launches that
// hash their keys hold one: a group's second row is a second n-gram walk before its loads,
// and with the grid sized by the rows a block takes (grid_for), Qwen's FP8 rows (three
// groups a warp) at B = 64 took 20.1-22.7 us a graph step with two against 12.8 with one.
constexpr std::int64_t k_two_in_flight_max_rows = std::int64_t{1} << 19;

// Steps of up to k_hashing_decode_max_ids ids a layer hash their keys in the decode. Every
// group of lanes walks its row's n-gram alone, where the hash kernel walks a token's once for
// all its heads: H x (lanes a row) times the hashing, cheaper than a launch of its own only
// while a step is short. On the H200, graph steps of V4.1's shape (2 layers x 24 heads, rows
// of 264 bytes, 32 lanes a row) with and without it in one run: 1 token 10.9 against 13.5 us,
// 64 tokens 19.2 against 21.3, 1,024 tokens (24,576 ids a layer) 73.6 against 43.1.

// One chunk of a stored row of format F decoded with the shared decode core: values in
// float32, `scale` the chunk's block scale byte where the format has them.
template <RowFormat F, Tables T, int Bytes, int N>
__device__ void decode_chunk(const std::uint8_t (&bytes)[Bytes], std::uint8_t scale, float global_scale,
                             const SharedTables<T>& tables, float (&values)[N]) {
  if constexpr (block_scaling(F).scaled()) {
    // The chunk's one block scale: (element * block scale) * global, as decode_value_as
    // computes it, the product read from the table where the format has one.
    if constexpr (tables_for(F) == Tables::products) {
      const float* products = tables.products + (static_cast<unsigned>(scale) << 4);
#pragma unroll
      for (int k = 0; k < N; ++k) values[k] = products[(bytes[k / 2] >> ((k & 1) * 4)) & 0xFu] * global_scale;
    } else {
      const E4m3Table e4m3{tables.e4m3};
      const float block_scale = block_scale_as<F>(scale, e4m3);
#pragma unroll
      for (int k = 0; k < N; ++k) values[k] = (block_element_as<F>(bytes, k, e4m3) * block_scale) * global_scale;
    }
  } else if constexpr (FormatTraits<F>::element == ElementCode::e4m3) {
    const E4m3Table e4m3{tables.e4m3};
#pragma unroll
    for (int k = 0; k < N; ++k) values[k] = decode_value_as<F>(bytes, nullptr, global_scale, k, e4m3);
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k) values[k] = decode_value_as<F>(bytes, nullptr, global_scale, k);
  }
}

// One group of lanes per output row (a warp, or several groups of a warp where rows are
// short). Each lane loads chunks of the stored row (read-only path), decodes them with the
// shared decode core and stores the values in 16-byte vectors; a row's chunks are
// contiguous across the lanes, so loads and stores coalesce. Rows the view does not hold
// are written as zeros. A hashing launch counts its rows into its tally: each group of lanes
// its own rows, then one atomic add where it counted any (no collective of the warp: its
// lanes left over by the grouping have returned).
template <RowFormat F, OutDtype O, Tables T, int InFlight, bool Hashed>
__device__ void decode_task_aligned(const DecodeTask task, const LayerHash& hash, const SharedTables<T>& tables) {
  const TableView table = task.rows;
  const int dim = table.head_dim;
  const int row_bytes = static_cast<int>(stored_row_bytes(F, dim));
  constexpr int bytes = chunk_bytes(F);
  const int chunks = row_bytes / bytes;
  constexpr int per_chunk = values_per_chunk<F>();
  constexpr int block = block_scaling(F).scaled() ? block_scaling(F).block : 1;
  const int warp_rows = rows_per_warp(chunks);
  const int lanes = group_lanes(chunks);
  const int lane = threadIdx.x & 31;
  const int group = lane / lanes;
  const int group_lane = lane - group * lanes;
  const std::int64_t warp = static_cast<std::int64_t>(blockIdx.x) * k_warps_per_block + (threadIdx.x >> 5);
  const std::int64_t groups = static_cast<std::int64_t>(gridDim.x) * k_warps_per_block * warp_rows;
  if (group >= warp_rows) return;  // lanes left over by the grouping; no barrier follows
  unsigned long long outside = 0;  // a hashing launch's rows of the tally, counted by the group's first lane
  std::int64_t bounds[4] = {};
  load_tally_bounds<Hashed>(hash, bounds);
  // Group g takes rows g, g + groups, g + 2 groups, ...: InFlight of them at a time.
  for (std::int64_t first = warp * warp_rows + group; first < task.count; first += groups * InFlight) {
    const std::uint8_t* row[InFlight];
    const std::uint8_t* scales[InFlight];
#pragma unroll
    for (int u = 0; u < InFlight; ++u) {
      const std::int64_t i = first + u * groups;
      const std::int64_t id = i < task.count ? key_of<Hashed>(task, hash, i) : table.row_end;
      if (i < task.count) outside += tallied<Hashed>(hash, bounds, i, id, group_lane);
      const bool owned = table.owns(id);
      const auto local = static_cast<std::size_t>(owned ? id - table.row_begin : 0);
      row[u] = owned ? table.row_at(local) : nullptr;
      scales[u] = owned && block_scaling(F).scaled() ? table.scales_at(local) : nullptr;
    }
    for (int c = group_lane; c < chunks; c += lanes) {
      union Chunk {
        ChunkVector<bytes> vector;
        std::uint8_t bytes[bytes];
      };
      Chunk chunk[InFlight];
      std::uint8_t scale[InFlight] = {};
#pragma unroll
      for (int u = 0; u < InFlight; ++u) {
        if (row[u] == nullptr) continue;
        chunk[u].vector = __ldg(reinterpret_cast<const ChunkVector<bytes>*>(row[u]) + c);
        if constexpr (block_scaling(F).scaled()) scale[u] = scales[u][c * per_chunk / block];
      }
#pragma unroll
      for (int u = 0; u < InFlight; ++u) {
        const std::int64_t i = first + u * groups;
        if (i >= task.count) break;
        float values[per_chunk] = {};
        if (row[u] != nullptr) decode_chunk<F, T>(chunk[u].bytes, scale[u], table.global_scale, tables, values);
        store_chunk<O>(task.out, i * dim + c * per_chunk, values);
      }
    }
  }
  if constexpr (Hashed) {
    if (outside != 0) atomicAdd(hash.tally.outside + hash.layer, outside);
  }
}

// Rows whose bytes do not split into chunks at aligned addresses: one value per lane.
template <RowFormat F, OutDtype O>
__device__ void decode_task_unaligned(const DecodeTask task) {
  const TableView table = task.rows;
  const int lane = threadIdx.x & 31;
  const std::int64_t warp = static_cast<std::int64_t>(blockIdx.x) * k_warps_per_block + (threadIdx.x >> 5);
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * k_warps_per_block;
  for (std::int64_t i = warp; i < task.count; i += warps) {
    const std::int64_t id = task.keys[i];
    const bool owned = table.owns(id);
    const auto local = static_cast<std::size_t>(owned ? id - table.row_begin : 0);
    const std::uint8_t* row = table.row_at(local);
    const std::uint8_t* scales = block_scaling(F).scaled() ? table.scales_at(local) : nullptr;
    for (int j = lane; j < table.head_dim; j += 32)
      store_value_as<O>(task.out, i * table.head_dim + j,
                        owned ? decode_value_as<F>(row, scales, table.global_scale, j) : 0.0f);
  }
}

// A hashing launch has only aligned tasks (hash_and_decode_step_cuda).
template <RowFormat F, OutDtype O, Tables T, int InFlight, bool Hashed>
__device__ void decode_task(const DecodeTask task, bool aligned, const LayerHash& hash, const SharedTables<T>& tables) {
  if constexpr (Hashed) {
    decode_task_aligned<F, O, T, InFlight, true>(task, hash, tables);
  } else if (aligned) {
    decode_task_aligned<F, O, T, InFlight, false>(task, hash, tables);
  } else {
    decode_task_unaligned<F, O>(task);
  }
}

// decode_task where the launch compiles format F and fills the tables it reads; nothing
// otherwise (the host never hands such a launch a task of F).
template <RowFormat F, OutDtype O, Tables T, int InFlight, bool Hashed, bool Compiled>
__device__ void decode_task_if(const DecodeTask task, bool aligned, const LayerHash& hash,
                               const SharedTables<T>& tables) {
  if constexpr (Compiled && static_cast<int>(T) >= static_cast<int>(tables_for(F)))
    decode_task<F, O, T, InFlight, Hashed>(task, aligned, hash, tables);
}

// One row of blocks per task (blockIdx.y): a step's layers run side by side, each row of a
// step one chain of loads deep, and a warp needs no search for which layer a row belongs to.
// Blocks past a shorter task's rows return at once. `Only` >= 0 compiles the one format every
// task has (the usual step: one format for the whole model), so the kernel takes no more
// registers than that format needs; -1 compiles them all. `Hashed` launches compute their
// keys from the step's tokens (one format only), staged in dynamic shared memory
// (staged_bytes), from the launch's parameters where it carries them (`Carried`).
template <OutDtype O, Tables T, int Only, int InFlight, bool Hashed, bool Carried = false>
__global__ void __launch_bounds__(k_warps_per_block * 32)
    decode_step_kernel(const __grid_constant__ KernelTasks<Carried> step) {
  // A copy in registers: the row loop then reads no kernel parameter through an index.
  const DecodeTask task = step.tasks[blockIdx.y];
  const bool aligned = step.aligned[blockIdx.y];
  // A warp's first row is at least its index: a block past the task's rows has none (the
  // test is the same for the whole block, before its barrier).
  if (static_cast<std::int64_t>(blockIdx.x) * k_warps_per_block >= task.count) return;
  __shared__ SharedTables<T> tables;
  extern __shared__ std::uint64_t staged[];
  LayerHash hash;
  if constexpr (Hashed) hash = stage_layer_hash<Carried>(step, step.index[blockIdx.y], staged);
  if constexpr (T != Tables::none) {
    for (int b = threadIdx.x; b < 256; b += blockDim.x) tables.e4m3[b] = decode_e4m3(static_cast<std::uint8_t>(b));
  }
  if constexpr (T == Tables::products) {
    for (int e = threadIdx.x; e < 256 * 16; e += blockDim.x)
      tables.products[e] =
          decode_e2m1(static_cast<std::uint8_t>(e & 15)) * decode_e4m3(static_cast<std::uint8_t>(e >> 4));
  }
  if constexpr (T != Tables::none || Hashed) __syncthreads();
  // The one dispatch on formats that instantiates kernels: each built-in format's decode.
  visit_format(task.rows.format, [&](auto f) {
    constexpr RowFormat format = decltype(f)::id;
    constexpr bool compiled = Only < 0 || Only == static_cast<int>(format);
    decode_task_if<format, O, T, InFlight, Hashed, compiled>(task, aligned, hash, tables);
  });
}

int grid_for(std::int64_t rows) {
  const std::int64_t blocks = (rows + k_warps_per_block - 1) / k_warps_per_block;
  return static_cast<int>(std::min<std::int64_t>(blocks, 1 << 16));
}

// Blocks for the step's longest task: an aligned task's block takes k_warps_per_block x
// rows_per_warp groups of lanes at once, each with step.in_flight rows; an unaligned task's a
// row a warp.
int grid_for(const StepTasks& step) {
  std::int64_t blocks = 1;
  for (int d = 0; d < step.count; ++d) {
    const TableView& rows = step.tasks[d].rows;
    const int chunks = static_cast<int>(stored_row_bytes(rows.format, rows.head_dim)) / chunk_bytes(rows.format);
    const std::int64_t per_block =
        step.aligned[d] ? std::int64_t{k_warps_per_block} * rows_per_warp(chunks) * step.in_flight : k_warps_per_block;
    blocks = std::max(blocks, (step.tasks[d].count + per_block - 1) / per_block);
  }
  return static_cast<int>(std::min<std::int64_t>(blocks, 1 << 16));
}

bool aligned_for(const TableView& t) {
  const int bytes = chunk_bytes(t.format);
  return stored_row_bytes(t.format, t.head_dim) % bytes == 0 && t.row_stride() % bytes == 0 &&
         reinterpret_cast<std::uintptr_t>(t.rows) % bytes == 0;
}

// A hashing launch holds one row a group (k_two_in_flight_max_rows says why), and takes the
// slot block in its parameters where `step` carries one.
template <OutDtype O, Tables T, int Only, bool Hashed = false>
void launch(const CarriedTasks& step, int grid, cudaStream_t stream) {
  const dim3 blocks = launch_grid(grid, step);
  const StepTasks& tasks = step;
  if constexpr (Hashed) {
    const std::size_t shared = staged_bytes(step.hash);
    if (step.words > 0) {
      decode_step_kernel<O, T, Only, 1, true, true><<<blocks, k_warps_per_block * 32, shared, stream>>>(step);
    } else {
      decode_step_kernel<O, T, Only, 1, true><<<blocks, k_warps_per_block * 32, shared, stream>>>(tasks);
    }
  } else if (step.in_flight == 2) {
    decode_step_kernel<O, T, Only, 2, false><<<blocks, k_warps_per_block * 32, 0, stream>>>(tasks);
  } else {
    decode_step_kernel<O, T, Only, 1, false><<<blocks, k_warps_per_block * 32, 0, stream>>>(tasks);
  }
}

template <OutDtype O, RowFormat F>
void launch_one(const CarriedTasks& step, bool hashed, int grid, cudaStream_t stream) {
  if (hashed) {
    launch<O, tables_for(F), static_cast<int>(F), true>(step, grid, stream);
  } else {
    launch<O, tables_for(F), static_cast<int>(F)>(step, grid, stream);
  }
}

bool one_format(const StepTasks& step) {
  for (int d = 1; d < step.count; ++d)
    if (step.tasks[d].rows.format != step.tasks[0].rows.format) return false;
  return true;
}

// The instantiation for the tasks' formats: one format alone (hashing its keys where asked),
// or all of them with the `tables` that cover them.
template <OutDtype O>
void launch(const CarriedTasks& step, Tables tables, bool hashed, int grid, cudaStream_t stream) {
  if (!one_format(step)) {
    switch (tables) {
      case Tables::none:
        launch<O, Tables::none, -1>(step, grid, stream);
        break;
      case Tables::e4m3:
        launch<O, Tables::e4m3, -1>(step, grid, stream);
        break;
      case Tables::products:
        launch<O, Tables::products, -1>(step, grid, stream);
        break;
    }
    return;
  }
  visit_format(step.tasks[0].rows.format, [&](auto f) { launch_one<O, decltype(f)::id>(step, hashed, grid, stream); });
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

namespace {

// Where a hashing's block is still in pinned memory, copies it to batch.blocks, for the
// launches that read it from GPU memory.
void pull_block(const StepHash& hash, const PinnedBlock& pinned, cudaStream_t stream) {
  if (pinned.words == nullptr) return;
  pull_pinned_cuda(const_cast<std::int64_t*>(hash.batch.blocks), pinned.words, pinned.layout, stream);
}

// Writes the block `pinned` holds, laid out as `layout`, into the launch's parameters, as the
// pull would leave it in GPU memory; false, nothing written, where it does not fit.
bool carry_block(CarriedTasks& step, const PinnedBlock& pinned) {
  const std::int64_t words = pinned.layout.total_words();
  if (words > static_cast<std::int64_t>(CarriedTasks::capacity)) return false;
  const auto* data = reinterpret_cast<const std::uint64_t*>(pinned.words);
  for (std::int64_t w = 0; w < words; ++w) step.block[w] = pinned.layout.word(data, w);
  step.words = words;
  return true;
}

// A captured launch of at most this many blocks that is handed its slot block in pinned
// memory has each block read it there through UVA (a round trip over PCIe, the padding read
// too: pack_slot writes it) instead of pulling it first: the pull's node costs a graph step
// more than the reads. On the H200, graph steps of Qwen's shape (FP8, 16 heads, a block per
// 24 rows): 1 to 8 tokens (1 to 6 blocks) 8.4-9.5 us with the pull, 6.7-7.9 read in place;
// 16 tokens (11 blocks) 9.1-9.5 against 7.9-8.3; 32 tokens (22 blocks) no gain; 64 tokens
// (43 blocks) 13.2-15.3 against 9.5 (docs/performance.md).
constexpr std::int64_t k_in_place_max_blocks = 16;

// Where the launch of `grid` blocks a task finds the slot block that `pinned` holds: carried
// in its parameters (eager launches, where it fits), read in place (captured launches of a
// few blocks) or pulled into the space first. A captured launch never carries the block:
// every replay would decode the captured batch.
void place_block(CarriedTasks& step, const PinnedBlock& pinned, int grid, cudaStream_t stream) {
  if (pinned.words == nullptr) return;
  const SlotBatchView& batch = step.hash.batch;
  if (!pinned.layout.valid() || batch.slots != 1 ||
      pinned.layout.total_words() != SlotBatchView::block_size(batch.slot_tokens, batch.context_width))
    throw SystemError("decode_step_cuda: a pinned block that is not the step's one slot");
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  PLESHARD_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  if (capture == cudaStreamCaptureStatusNone) {
    if (carry_block(step, pinned)) return;
  } else if (static_cast<std::int64_t>(grid) * step.count <= k_in_place_max_blocks) {
    step.hash.batch.blocks = pinned.words;
    return;
  }
  pull_block(step.hash, pinned, stream);
}

// The step's tasks with rows, in one launch; `hash` where it hashes its own keys (from
// `pinned` where the block is still there).
void launch_step(std::span<const DecodeTask> tasks, OutDtype dtype, const StepHash* hash, cudaStream_t stream,
                 const PinnedBlock& pinned = {}) {
  std::int64_t most = 0;
  CarriedTasks step;
  static_cast<LaunchTasks<DecodeTask>&>(step) = launch_tasks(tasks, "decode_step_cuda", most);
  if (step.count == 0) return;
  Tables tables = Tables::none;
  for (int d = 0; d < step.count; ++d) {
    step.aligned[d] = aligned_for(step.tasks[d].rows);
    tables = std::max(tables, tables_for(step.tasks[d].rows.format));
  }
  // With the product table, blocks fill 16 KB of shared memory first, so they stay resident
  // and loop over rows: a few blocks per SM (for all tasks together) instead of one block per
  // few rows.
  step.in_flight = hash == nullptr && most <= k_two_in_flight_max_rows ? 2 : 1;
  int grid = grid_for(step);
  if (tables == Tables::products) grid = std::min(grid, std::max(1, 8 * multiprocessors() / step.count));
  if (hash != nullptr) {
    step.hash = *hash;
    place_block(step, pinned, grid, stream);
  }
  const bool hashed = hash != nullptr;
  switch (dtype) {
    case OutDtype::f32:
      launch<OutDtype::f32>(step, tables, hashed, grid, stream);
      break;
    case OutDtype::bf16:
      launch<OutDtype::bf16>(step, tables, hashed, grid, stream);
      break;
    case OutDtype::f16:
      launch<OutDtype::f16>(step, tables, hashed, grid, stream);
      break;
  }
  PLESHARD_CUDA_CHECK_LAUNCH();
}

}  // namespace

void decode_step_cuda(std::span<const DecodeTask> tasks, OutDtype dtype, cudaStream_t stream) {
  launch_step(tasks, dtype, nullptr, stream);
}

void hash_and_decode_step_cuda(const StepHash& hash, std::span<const DecodeTask> tasks, OutDtype dtype,
                               cudaStream_t stream, const PinnedBlock& pinned) {
  if (tasks.size() != static_cast<std::size_t>(hash.layers))
    throw SystemError("hash_and_decode_step_cuda: " + std::to_string(tasks.size()) + " tasks for " +
                      std::to_string(hash.layers) + " layers");
  const std::int64_t per_layer = hash.batch.tokens() * hash.heads;
  bool fused = per_layer <= k_hashing_decode_max_ids && staged_bytes(hash) <= k_max_staged_bytes;
  for (std::size_t layer = 0; layer < tasks.size(); ++layer) {
    const DecodeTask& task = tasks[layer];
    if (task.keys != hash.ids + static_cast<std::int64_t>(layer) * per_layer || task.count != per_layer)
      throw SystemError("hash_and_decode_step_cuda: layer " + std::to_string(layer) + "'s keys are not its ids");
    if (task.count == 0) continue;
    fused = fused && aligned_for(task.rows) && task.rows.format == tasks[0].rows.format;
  }
  if (fused) {
    launch_step(tasks, dtype, &hash, stream, pinned);
    return;
  }
  pull_block(hash, pinned, stream);
  compute_step_ids_cuda(hash.params, hash.layers, hash.heads, hash.batch, hash.ids, stream, hash.tally);
  launch_step(tasks, dtype, nullptr, stream);
}

void lookup_rows_cuda(const TableView& table, const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype, void* out,
                      cudaStream_t stream) {
  const DecodeTask task{table, ids, num_ids, out};
  decode_step_cuda({&task, 1}, dtype, stream);
}

void gather_rows_plain_cuda(const std::uint8_t* rows, std::size_t row_bytes, const std::int64_t* ids,
                            std::int64_t num_ids, std::uint8_t* out, cudaStream_t stream) {
  if (num_ids == 0) return;
  gather_plain_kernel<<<grid_for(num_ids), k_warps_per_block * 32, 0, stream>>>(rows, row_bytes, ids, num_ids, out);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

}  // namespace pleshard::kernels
