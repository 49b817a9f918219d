#pragma once
// Which GPU each rank drives, and whether any two ranks drive the same one. GPUs are known
// by UUID, not by ordinal: under Slurm's --gpus-per-task or --gpu-bind every rank may see
// one device as ordinal 0 although the devices differ (CUDA_VISIBLE_DEVICES per rank).

#include <mpi.h>

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace pleshard {

// A GPU's UUID (cudaDeviceProp::uuid) as two words.
struct GpuUuid {
  std::array<std::uint64_t, 2> words{};
  friend auto operator<=>(const GpuUuid&, const GpuUuid&) = default;
};

// What the ranks of a job agreed about their GPUs; the same on every rank.
struct GpuBinding {
  bool own_gpu = true;    // no two ranks drive one GPU: NCCL can carry GPU buffers
  int ranks_sharing = 1;  // the most ranks that drive one GPU, over the job
  std::string why;        // empty with own_gpu; otherwise one sentence for the log and the report
};

// The most ranks of one node that drive the same GPU, given each node-local rank's GPU
// (1 when all differ; 0 for no ranks).
[[nodiscard]] int ranks_per_gpu(std::span<const GpuUuid> node_gpus);
[[nodiscard]] inline bool gpus_distinct(std::span<const GpuUuid> node_gpus) { return ranks_per_gpu(node_gpus) <= 1; }

// Collective over `world`: each rank's GPU (nullopt: it has none) is gathered over its node
// (MPI's shared-memory domain) and the nodes agree. SystemError on every rank when a rank has
// no GPU.
[[nodiscard]] GpuBinding agree_gpu_binding(MPI_Comm world, std::optional<GpuUuid> mine);

// Sets this rank's current device to its node-local rank modulo the devices it sees (all of
// the node's, or the one a per-task mask leaves it) and makes the device's NUMA node the
// rank's home (core/numa_home.hpp), then agrees as agree_gpu_binding does (SystemError on
// every rank where one has no GPU, as every rank has in a build without CUDA).
[[nodiscard]] GpuBinding bind_local_gpu(MPI_Comm world);

}  // namespace pleshard
