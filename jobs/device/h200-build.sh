#!/usr/bin/env bash
# Configure and build for sm_90 on a GPU machine that lacks Kokkos and liburing: unpacks the
# Debian packages carried in .kk/ (apt-get download libtrilinos-kokkos-dev
# libtrilinos-kokkos-13.2 liburing-dev liburing2) into /opt/kk first. Arguments: build targets (default: all).
# Logs go to $OUT (default ./out): configure.log, build.log.
set -uo pipefail
source "$(dirname "$0")/env.sh"
if [ -d .kk ] && ! [ -d /opt/kk/usr/include/trilinos ]; then
  for f in .kk/*.deb; do dpkg -x "$f" /opt/kk; done
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH=/opt/kk/usr >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
grep "^-- pleshard:" "$out/configure.log"
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build" --parallel "$(nproc)" "${targets[@]}" >"$out/build.log" 2>&1 ||
  { grep -E "error" "$out/build.log" | head -30; exit 1; }
