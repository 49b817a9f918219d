#include "exec/step_kernels.hpp"

#include "kernels/host/lookup_host.hpp"
#include "kernels/host/ngram_ids_host.hpp"
#include "kernels/host/pack_host.hpp"
#include "kernels/host/row_cache_host.hpp"
#if PLESHARD_HAVE_CUDA
#include "exec/cuda_step_space.hpp"
#include "kernels/cuda/lookup_cuda.hpp"
#include "kernels/cuda/ngram_ids_cuda.hpp"
#include "kernels/cuda/pack_cuda.hpp"
#include "kernels/cuda/row_cache_cuda.hpp"
#endif

namespace pleshard {

void hash_step(StepSpace& space, const kernels::NgramHashParams* params, int layers, int heads,
               const kernels::SlotBatchView& batch, std::int64_t* ids, const kernels::IdTally& tally) {
#if PLESHARD_HAVE_CUDA
  if (space.on_device()) {
    kernels::compute_step_ids_cuda(params, layers, heads, batch, ids, stream_of(space), tally);
    return;
  }
#endif
  (void)space;  // the host space needs no handle
  (void)heads;
  hash_step_on_host(params, layers, batch, ids, tally);
}

void hash_step_on_host(const kernels::NgramHashParams* params, int layers, const kernels::SlotBatchView& batch,
                       std::int64_t* ids, const kernels::IdTally& tally) {
  kernels::compute_step_ids_host(params, layers, batch, ids, tally);
}

void decode_step(StepSpace& space, std::span<const kernels::DecodeTask> tasks, kernels::OutDtype dtype) {
#if PLESHARD_HAVE_CUDA
  if (space.on_device()) {
    kernels::decode_step_cuda(tasks, dtype, stream_of(space));
    return;
  }
#endif
  (void)space;
  kernels::decode_step_host(tasks, dtype);
}

void hash_and_decode_step(StepSpace& space, const kernels::StepHash& hash, std::span<const kernels::DecodeTask> tasks,
                          kernels::OutDtype dtype, const kernels::PinnedBlock& pinned) {
#if PLESHARD_HAVE_CUDA
  if (space.on_device()) {
    kernels::hash_and_decode_step_cuda(hash, tasks, dtype, stream_of(space), pinned);
    return;
  }
#endif
  if (pinned.words != nullptr)
    space.copy_from_pinned(const_cast<std::int64_t*>(hash.batch.blocks), pinned.words, pinned.layout);
  hash_step(space, hash.params, hash.layers, hash.heads, hash.batch, hash.ids, hash.tally);
  decode_step(space, tasks, dtype);
}

void pack_rows_step(StepSpace& space, std::span<const kernels::PackTask> tasks) {
#if PLESHARD_HAVE_CUDA
  if (space.on_device()) {
    kernels::pack_rows_cuda(tasks, stream_of(space));
    return;
  }
#endif
  (void)space;
  kernels::pack_rows_host(tasks);
}

void widen_local_ids_step(StepSpace& space, const std::uint8_t* ids, int width, std::int64_t count, std::int64_t first,
                          std::int64_t* out, const kernels::IdTally& tally, int layer) {
#if PLESHARD_HAVE_CUDA
  if (space.on_device()) {
    kernels::widen_local_ids_cuda(ids, width, count, first, out, stream_of(space), tally, layer);
    return;
  }
#endif
  (void)space;
  kernels::widen_local_ids_host(ids, width, count, first, out, tally, layer);
}

void probe_cache_step(StepSpace& space, std::span<const kernels::CacheTask> tasks) {
#if PLESHARD_HAVE_CUDA
  if (space.on_device()) {
    kernels::probe_cache_cuda(tasks, stream_of(space));
    return;
  }
#endif
  (void)space;
  kernels::probe_cache_host(tasks);
}

void fill_cache_step(StepSpace& space, std::span<const kernels::CacheTask> tasks) {
#if PLESHARD_HAVE_CUDA
  if (space.on_device()) {
    kernels::fill_cache_cuda(tasks, stream_of(space));
    return;
  }
#endif
  (void)space;
  kernels::fill_cache_host(tasks);
}

}  // namespace pleshard
