#include "dist/gpu_binding.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "core/mpi_check.hpp"
#include "core/numa_home.hpp"
#include "core/watched_collectives.hpp"
#include "kernels/gpu_device.hpp"

namespace pleshard {

namespace {

int distinct_gpus(std::vector<GpuUuid> gpus) {
  std::sort(gpus.begin(), gpus.end());
  return static_cast<int>(std::unique(gpus.begin(), gpus.end()) - gpus.begin());
}

}  // namespace

int ranks_per_gpu(std::span<const GpuUuid> node_gpus) {
  std::vector<GpuUuid> sorted(node_gpus.begin(), node_gpus.end());
  std::sort(sorted.begin(), sorted.end());
  int most = 0;
  for (std::size_t i = 0; i < sorted.size();) {
    const std::size_t first = i;
    while (i < sorted.size() && sorted[i] == sorted[first]) ++i;
    most = std::max(most, static_cast<int>(i - first));
  }
  return most;
}

GpuBinding agree_gpu_binding(MPI_Comm world, std::optional<GpuUuid> mine) {
  int rank = 0;
  PLESHARD_MPI_CHECK(MPI_Comm_rank(world, &rank));
  // Agreed first, so that every rank throws or none does.
  struct {
    int has_gpu;
    int rank;
  } lacking{mine.has_value() ? 1 : 0, rank};
  const std::string what = "the GPU binding of every rank";
  watched_allreduce(&lacking, 1, MPI_2INT, MPI_MINLOC, world, what);
  if (lacking.has_gpu == 0)
    throw SystemError("GPU binding: world rank " + std::to_string(lacking.rank) + " sees no CUDA device");

  MPI_Comm node = watched_split_shared(world, 0, what);
  int local_ranks = 1;
  PLESHARD_MPI_CHECK(MPI_Comm_size(node, &local_ranks));
  std::vector<GpuUuid> node_gpus(static_cast<std::size_t>(local_ranks));
  static_assert(sizeof(GpuUuid) == 2 * sizeof(std::uint64_t));
  watched_allgather(mine->words.data(), node_gpus.data()->words.data(), 2, MPI_UINT64_T, node, what);
  PLESHARD_MPI_CHECK(MPI_Comm_free(&node));

  struct {
    int sharing;
    int rank;
  } worst{ranks_per_gpu(node_gpus), rank};
  watched_allreduce(&worst, 1, MPI_2INT, MPI_MAXLOC, world, what);
  GpuBinding binding;
  binding.ranks_sharing = worst.sharing;
  binding.own_gpu = worst.sharing <= 1;
  if (binding.own_gpu) return binding;
  // The node where most ranks share a GPU describes itself to every rank.
  char why[512] = {};
  if (rank == worst.rank) {
    const int gpus = distinct_gpus(node_gpus);
    const std::string text = "GPUs are shared: on " + processor_name() + ", " + std::to_string(local_ranks) +
                             " ranks drive " + std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs") + ", up to " +
                             std::to_string(worst.sharing) + " ranks on one (GPUs compared by UUID)";
    std::strncpy(why, text.c_str(), sizeof why - 1);
  }
  watched_bcast(why, sizeof why, MPI_CHAR, worst.rank, world, what);
  binding.why = why;
  return binding;
}

GpuBinding bind_local_gpu(MPI_Comm world) {
  MPI_Comm node = watched_split_shared(world, 0, "the GPU binding of every rank");
  int local_rank = 0;
  PLESHARD_MPI_CHECK(MPI_Comm_rank(node, &local_rank));
  PLESHARD_MPI_CHECK(MPI_Comm_free(&node));
  const int devices = kernels::gpu_count();
  std::optional<GpuUuid> mine;
  if (devices != 0) {
    kernels::set_current_gpu(local_rank % devices);
    mine = GpuUuid{kernels::gpu_uuid()};
    // The rank's tables' pages, and its threads, go to the GPU's NUMA node.
    (void)set_numa_home(pci_device_numa_node(kernels::gpu_pci_bus_id(local_rank % devices)));
  }
  return agree_gpu_binding(world, mine);
}

}  // namespace pleshard
