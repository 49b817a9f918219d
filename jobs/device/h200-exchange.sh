#!/usr/bin/env bash
# After h200-build.sh (same build directory): the exchange strategies on one GPU machine.
# - tests: the layout, step-kernel and graph tests with GPU tiers (ranks sharing the GPU
#   exchange over MPI through host copies; every strategy bit-identical to one process);
# - step: bench step of Qwen3.8-Flash-Next's real FP8 table (made in place, 51.2 GB over
#   RANKS ranks sharing the GPU) on the device tier, every strategy side by side, at
#   decode- and prefill-sized steps (64 and 8192 tokens per rank), on the corpus;
# - exchange: bench exchange of every strategy's collectives at those sizes.
#   [CORPUS=...] [RANKS=4] [PARTS="tests step exchange"] jobs/device/h200-exchange.sh
# Results go to $OUT (default ./out): exchange-tests.txt, exchange-step.txt, exchange-bench.txt.
set -uo pipefail
source "$(dirname "$0")/env.sh"
ranks=${RANKS:-4}
parts=${PARTS:-tests step exchange}
rc=0
mpi=(mpiexec --oversubscribe -n "$ranks")
fp8=/tmp/pleshard-qwen-fp8.json
qwen_as float8_e4m3fn "$fp8"

if part tests; then
  ctest --test-dir "$build" --output-on-failure -R "layouts|step_kernels|owner_requests|cuda_graph|communicator" \
    >"$out/exchange-tests.txt" 2>&1 || rc=1
  grep -E "tests passed|tests failed|Failed|Passed" "$out/exchange-tests.txt"
fi
if part step; then
  "${mpi[@]}" "$app" bench step --config "$fp8" --storage device --etp "$ranks" --requests "$corpus" \
    --tokens 64 8192 --modes eager --exchange gather-reduce reduce-scatter owner --min-seconds 1 \
    >"$out/exchange-step.txt" 2>&1 || rc=1
  grep -v '^{' "$out/exchange-step.txt"
fi
if part exchange; then
  "${mpi[@]}" "$app" bench exchange --backend mpi-staged --tokens 64 8192 --min-seconds 0.3 \
    >"$out/exchange-bench.txt" 2>&1 || rc=1
  grep -v '^{' "$out/exchange-bench.txt"
fi
exit $rc
