#!/usr/bin/env bash
# Build, test and benchmark on a GPU machine that lacks Kokkos: unpacks the Debian Kokkos
# packages carried in .kk/ (apt-get download libtrilinos-kokkos-dev libtrilinos-kokkos-13.2),
# builds for sm_90, runs the whole ctest suite and `pleshard bench hash`.
# Results go to $OUT (default ./out): ctest.log, bench-hash.jsonl, nvidia-smi.txt.
set -uo pipefail
source "$(dirname "$0")/env.sh"
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
if [ -d .kk ] && ! [ -d /opt/kk/usr/include/trilinos ]; then
  for f in .kk/*.deb; do dpkg -x "$f" /opt/kk; done
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH=/opt/kk/usr >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
grep "^-- pleshard:" "$out/configure.log"
cmake --build "$build" --parallel "$(nproc)" >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
ctest --test-dir "$build" --output-on-failure --parallel 8 >"$out/ctest.log" 2>&1
rc=$?
grep -E "tests passed|tests failed|Failed|\*\*\*" "$out/ctest.log"
"$build/tests/test_ngram_ids_cuda" 2>&1 | tail -4
"$build/bin/pleshard" bench hash --min-seconds 0.5 "$@" | tee "$out/bench-hash.txt"
exit $rc
