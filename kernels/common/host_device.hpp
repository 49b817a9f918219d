#pragma once
// PLESHARD_HD marks math shared by the host (Kokkos) and CUDA kernels: one copy of it.

#if defined(__CUDACC__)
#define PLESHARD_HD __host__ __device__
#else
#define PLESHARD_HD
#endif
