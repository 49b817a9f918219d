#!/usr/bin/env bash
# Build (h200-build.sh), run the ctest suite and `pleshard bench hash` on a GPU machine.
# The whole suite there takes longer than one command may run (about 12 minutes): SUITE=gpu
# runs the tests labelled gpu (those that use the GPU; one at a time), SUITE=rest the others.
#   [SUITE=all|gpu|rest] jobs/device/h200-check.sh [bench hash options]
# Results go to $OUT (default ./out): ctest.log, bench-hash.txt, nvidia-smi.txt.
set -uo pipefail
source "$(dirname "$0")/env.sh"
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
bash jobs/device/h200-build.sh || exit 1
case ${SUITE:-all} in
  all) select=() ;;
  gpu) select=(-L gpu) ;;
  rest) select=(-LE gpu) ;;
  *) echo "h200-check.sh: SUITE=${SUITE}: must be all, gpu or rest" >&2; exit 2 ;;
esac
ctest --test-dir "$build" --output-on-failure --parallel 8 "${select[@]}" >"$out/ctest.log" 2>&1
rc=$?
grep -E "tests passed|tests failed|Failed|\*\*\*" "$out/ctest.log"
"$build/tests/test_ngram_ids_cuda" 2>&1 | tail -4
"$app" bench hash --min-seconds 0.5 "$@" | tee "$out/bench-hash.txt"
# The consumer project against the installed package: on a GPU it reads a step's
# embeddings in GPU memory on a stream of its own.
cmake --install "$build" --prefix "$build/install" >/dev/null &&
  cmake -S tests/consumer -B "$build/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$PWD/$build/install;/opt/kk/usr" \
    -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/consumer.log" 2>&1 &&
  cmake --build "$build/consumer" >>"$out/consumer.log" 2>&1 && "$build/consumer/consumer" || { tail -20 "$out/consumer.log"; rc=1; }
exit $rc
