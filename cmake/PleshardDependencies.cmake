# Finds the dependencies that pleshard's public interface exposes; included by the
# project and by the installed package config, so a consumer resolves exactly what
# pleshard was built with. HDF5 stays private to the shared library (see CMakeLists.txt).

# MPI's C API from C++ (the CXX component needs no C language in the consumer); the
# deprecated C++ bindings are skipped.
set(MPI_CXX_SKIP_MPICXX ON)
find_package(MPI REQUIRED COMPONENTS CXX)
find_package(nlohmann_json 3.10 REQUIRED)

include(PleshardKokkos)

if(PLESHARD_ENABLE_CUDA)
  find_package(CUDAToolkit REQUIRED)
endif()
if(PLESHARD_ENABLE_NCCL)
  find_package(NCCL REQUIRED)
endif()
