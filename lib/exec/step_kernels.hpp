#pragma once
// The kernels of a step, launched where the space runs them: the Kokkos kernels on the
// host, the CUDA kernels on the space's stream. Arguments live in the space's memory.

#include <cstdint>
#include <span>

#include "exec/step_space.hpp"
#include "kernels/common/id_tally.hpp"
#include "kernels/common/ngram_hash.hpp"
#include "kernels/common/row_cache.hpp"
#include "kernels/common/row_decode.hpp"
#include "kernels/common/row_pack.hpp"

namespace pleshard {

// ids of every layer (params[d], in the space) for every token of `batch`: `layers`
// blocks of batch.tokens() x heads ids, counted into `tally` (in the space) where given.
void hash_step(StepSpace& space, const kernels::NgramHashParams* params, int layers, int heads,
               const kernels::SlotBatchView& batch, std::int64_t* ids, const kernels::IdTally& tally = {});

// As hash_step, on the host whatever the space; arguments in host memory.
void hash_step_on_host(const kernels::NgramHashParams* params, int layers, const kernels::SlotBatchView& batch,
                       std::int64_t* ids, const kernels::IdTally& tally = {});

// Every task of a step in one launch (tasks are described from the host).
void decode_step(StepSpace& space, std::span<const kernels::DecodeTask> tasks, kernels::OutDtype dtype);

// hash_step into hash.ids (counted into hash.tally where given), then decode_step of tasks
// keyed by those ids (task d's keys at layer d's block) — on the GPU in one launch where the
// tasks allow it: the decode hashes each row's key itself (and counts it), and the ids are
// not written. A one-slot step's block still in
// pinned memory (`pinned`) reaches that launch in its parameters where it can (eager
// launches of short steps), else is copied to hash.batch.blocks first.
void hash_and_decode_step(StepSpace& space, const kernels::StepHash& hash, std::span<const kernels::DecodeTask> tasks,
                          kernels::OutDtype dtype, const kernels::PinnedBlock& pinned = {});

// The owner exchange's packing (kernels/common/row_pack.hpp): stored rows packed for peers.
void pack_rows_step(StepSpace& space, std::span<const kernels::PackTask> tasks);

// The owner exchange's ids asked of this rank (owner-local indexes of `width` bytes, in the
// space) as global ids from `first` into `out` (in the space): its store's queries, counted
// in `tally` (in the space) as layer `layer`'s.
void widen_local_ids_step(StepSpace& space, const std::uint8_t* ids, int width, std::int64_t count, std::int64_t first,
                          std::int64_t* out, const kernels::IdTally& tally = {}, int layer = 0);

// The row cache's probe and fill of every layer (kernels/common/row_cache.hpp).
void probe_cache_step(StepSpace& space, std::span<const kernels::CacheTask> tasks);
void fill_cache_step(StepSpace& space, std::span<const kernels::CacheTask> tasks);

}  // namespace pleshard
