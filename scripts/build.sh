#!/usr/bin/env bash
# Installs missing Debian packages, then configures and builds pleshard in ./build.
# Extra arguments go to the CMake configure step (e.g. -DPLESHARD_ENABLE_CUDA=OFF).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Line tables only (-g1): backtraces still name files and lines, and the build takes about a
# quarter less time than with full debug info (-g), most of it in template-heavy files.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" "$@" >build-configure.log 2>&1 \
  || { cat build-configure.log >&2; echo "build: configure failed (log above)" >&2; exit 1; }
grep "^-- pleshard:" build-configure.log || true
rm -f build-configure.log
cmake --build build --parallel "$(nproc)"
