#!/usr/bin/env bash
# Builds the parser and format tests with AddressSanitizer + UBSan (CPU only, ./build-asan)
# and runs them, the crafted and fuzzed HDF5 checkpoints among them. Open MPI keeps allocations alive past MPI_Finalize, so leak checking is off.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(test_checkpoint_errors test_hdf5_crafted test_hdf5_rows test_checkpoints test_disk_table test_file_reads test_row_cache test_formats test_io
         test_config test_row_plan test_owner_requests test_parallel)
# Line tables (-g1) are all the sanitizers' reports need to name files and lines.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DPLESHARD_ENABLE_CUDA=OFF \
  -DPLESHARD_ENABLE_SANITIZERS=ON >build-asan.log 2>&1 || { cat build-asan.log >&2; exit 1; }
rm -f build-asan.log
cmake --build build-asan --parallel "$(nproc)" --target "${targets[@]}"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# As ctest runs the tests (cmake/PleshardTesting.cmake): Open MPI as root, ob1, no singleton server.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1 OMPI_MCA_ess_singleton_isolated=1
for t in "${targets[@]}"; do
  echo "== $t (ASan + UBSan)"
  build-asan/tests/$t --gtest_brief=1
done
