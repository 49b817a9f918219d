// How fast a process reads rows of another process's GPU memory on the same GPU, by how the
// memory is shared: random 176-byte rows (a Qwen FP8 row) of a 3 GB table, 131,072 reads a
// launch (a 8,192-token step), median µs over 200 launches, for
//   the maker reading its own cudaMalloc;
//   a peer reading it through cudaIpcOpenMemHandle;
//   the maker reading a cuMemCreate allocation, and a peer reading it mapped from a POSIX
//   file descriptor (passed by pidfd_getfd, else noted as not passed).
// Two ranks under MPI, one GPU (I: the -I flags of `mpicxx --showme:incdirs`):
//   nvcc -O2 -arch=sm_90 -o /tmp/pmp jobs/device/peer_map_probe.cu $I \
//     -L$(mpicxx --showme:libdirs) -lmpi -lcuda && mpirun -n 2 /tmp/pmp
#include <cuda.h>
#include <cuda_runtime.h>
#include <mpi.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "probe_check.cuh"

#define CHECK_CU(x)                              \
  do {                                           \
    const CUresult rc = (x);                     \
    if (rc != CUDA_SUCCESS) {                    \
      const char* s = nullptr;                   \
      cuGetErrorString(rc, &s);                  \
      std::printf("line %d: %s\n", __LINE__, s); \
      std::exit(1);                              \
    }                                            \
  } while (0)

namespace {

constexpr std::size_t k_pitch = 176;
constexpr std::size_t k_rows = std::size_t{1} << 24;
constexpr int k_reads = 131072;

__global__ void read_rows(const std::uint8_t* table, const std::uint32_t* ids, int n, unsigned* sink) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint4* row = reinterpret_cast<const uint4*>(table + static_cast<std::size_t>(ids[i]) * k_pitch);
  unsigned acc = 0;
  for (int k = 0; k < 11; ++k) {
    const uint4 v = row[k];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) atomicAdd(sink, 1u);
}

double median_us(const std::uint8_t* table, const std::uint32_t* ids, unsigned* sink) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int r = 0; r < 220; ++r) {
    CHECK(cudaEventRecord(a));
    read_rows<<<(k_reads + 255) / 256, 256>>>(table, ids, k_reads, sink);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    if (r >= 20) t.push_back(ms * 1000);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CHECK(cudaSetDevice(0));
  CHECK_CU(cuInit(0));
  std::vector<std::uint32_t> host_ids(k_reads);
  std::srand(7);
  for (auto& id : host_ids)
    id = static_cast<std::uint32_t>(((std::uint64_t(std::rand()) << 16) ^ std::rand()) % k_rows);
  std::uint32_t* ids = nullptr;
  unsigned* sink = nullptr;
  CHECK(cudaMalloc(&ids, k_reads * sizeof(std::uint32_t)));
  CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  CHECK(cudaMemcpy(ids, host_ids.data(), k_reads * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  const std::size_t bytes = k_rows * k_pitch;

  // Legacy IPC.
  std::uint8_t* table = nullptr;
  cudaIpcMemHandle_t handle{};
  if (rank == 0) {
    CHECK(cudaMalloc(&table, bytes));
    CHECK(cudaMemset(table, 1, bytes));
    CHECK(cudaIpcGetMemHandle(&handle, table));
  }
  MPI_Bcast(&handle, sizeof handle, MPI_BYTE, 0, MPI_COMM_WORLD);
  {
    // cudaIpcMemLazyEnablePeerAccess is the one flag the runtime accepts.
    std::uint8_t* mine = table;
    if (rank == 1) CHECK(cudaIpcOpenMemHandle(reinterpret_cast<void**>(&mine), handle, cudaIpcMemLazyEnablePeerAccess));
    for (int reader = 0; reader < 2; ++reader) {
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == reader)
        std::printf("cudaMalloc + IPC, %s: %.1f us\n", reader == 0 ? "maker" : "peer", median_us(mine, ids, sink));
      std::fflush(stdout);
      MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 1) CHECK(cudaIpcCloseMemHandle(mine));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) CHECK(cudaFree(table));

  // The virtual memory API, a POSIX file descriptor.
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  std::size_t gran = 0;
  CHECK_CU(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  const std::size_t size = (bytes + gran - 1) / gran * gran;
  CUmemGenericAllocationHandle alloc{};
  int fd = -1;
  int pid = getpid();
  if (rank == 0) {
    CHECK_CU(cuMemCreate(&alloc, size, &prop, 0));
    CHECK_CU(cuMemExportToShareableHandle(&fd, alloc, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  }
  int sent[2] = {pid, fd};
  MPI_Bcast(sent, 2, MPI_INT, 0, MPI_COMM_WORLD);
  int ok = 1;
  if (rank == 1) {
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, sent[0], 0));
    const int got = pidfd < 0 ? -1 : static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, sent[1], 0));
    if (got < 0) {
      std::printf("VMM: the descriptor not passed by pidfd_getfd (errno %d)\n", errno);
      ok = 0;
    } else {
      CHECK_CU(cuMemImportFromShareableHandle(&alloc, reinterpret_cast<void*>(static_cast<std::intptr_t>(got)),
                                              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (ok) {
    CUdeviceptr va = 0;
    CHECK_CU(cuMemAddressReserve(&va, size, gran, 0, 0));
    CHECK_CU(cuMemMap(va, size, 0, alloc, 0));
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CHECK_CU(cuMemSetAccess(va, size, &access, 1));
    if (rank == 0) CHECK(cudaMemset(reinterpret_cast<void*>(va), 1, bytes));
    for (int reader = 0; reader < 2; ++reader) {
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == reader)
        std::printf("cuMemCreate (granularity %zu), %s: %.1f us\n", gran, reader == 0 ? "maker" : "peer",
                    median_us(reinterpret_cast<const std::uint8_t*>(va), ids, sink));
      std::fflush(stdout);
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  MPI_Finalize();
  return 0;
}
