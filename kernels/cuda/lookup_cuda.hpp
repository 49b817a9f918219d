#pragma once
// CUDA lookups: one fused gather + decode launch for every layer of a step (rows in device
// memory, or in pinned host memory read through UVA), and a plain warp-per-row byte gather
// as a baseline for benchmarks.

#include <cstddef>
#include <cstdint>
#include <span>

#include <cuda_runtime_api.h>

#include "kernels/common/ngram_hash.hpp"
#include "kernels/common/row_decode.hpp"

namespace pleshard::kernels {

// Every task of a step (at most k_max_step_layers, any mix of formats) in one launch. The
// tasks' rows, keys and outputs must be device-accessible (device or mapped pinned memory).
void decode_step_cuda(std::span<const DecodeTask> tasks, OutDtype dtype, cudaStream_t stream);

// decode_step_cuda for tasks whose keys are hash.ids (task d's at layer d's block): one
// launch that hashes and decodes, where it can (tasks of one format, rows at aligned
// addresses); else the hash kernel into hash.ids, then the decode. A one-slot step's block
// still in pinned memory (`pinned`) goes in that launch's parameters where it fits and the
// stream is not being captured, else is pulled to hash.batch.blocks first.
void hash_and_decode_step_cuda(const StepHash& hash, std::span<const DecodeTask> tasks, OutDtype dtype,
                               cudaStream_t stream, const PinnedBlock& pinned = {});

// The most words of a slot block that hash_and_decode_step_cuda carries in its launch's
// parameters (what 4 KB leave beside the tasks).
[[nodiscard]] std::int64_t carried_block_words();

// out[i] = decode(row ids[i]) as `dtype`, zeros for ids outside the view: one task.
void lookup_rows_cuda(const TableView& table, const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype, void* out,
                      cudaStream_t stream);

// out[i] = raw bytes of row ids[i] (row_bytes each), one warp per row: the reference point
// for a gather without decoding.
void gather_rows_plain_cuda(const std::uint8_t* rows, std::size_t row_bytes, const std::int64_t* ids,
                            std::int64_t num_ids, std::uint8_t* out, cudaStream_t stream);

}  // namespace pleshard::kernels
