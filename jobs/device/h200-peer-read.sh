#!/usr/bin/env bash
# After h200-build.sh (same build directory): the ranks of a group reading each other's rows
# in place (--exchange peer-read) on one GPU machine, the ranks sharing its GPU:
# - tests: every layout against one process with every tier and strategy, peer-read among
#   them (test_layouts, 2-4 ranks), run's output from every tier with peer reads beside the
#   others and the refusal of rows a rank cannot map (app_run_tiers), the app's peer-read runs,
#   descriptors handed between ranks (test_descriptor_passing), the hash's count of rows read
#   from peers (test_step_kernels), peer reads replayed from CUDA graphs at changing step sizes
#   (test_cuda_graph: `auto` takes peer-read on the shared GPU);
# - steps: `PARTS=peer jobs/device/h200-strategies.sh` (peer-read beside owner, gather-reduce
#   and one rank, in turns and through MPS);
# - auto (not by default): what `--exchange auto` picks for 4 ranks sharing the GPU with the
#   device tier (peer-read), and its steps in turns.
#   [CORPUS=...] [PARTS="tests steps auto"] jobs/device/h200-peer-read.sh
# Results go to $OUT (default ./out): peer-tests.txt, strategies.txt, auto.txt.
set -uo pipefail
source "$(dirname "$0")/env.sh"
parts=${PARTS:-tests steps}
rc=0
if part tests; then
  ctest --test-dir "$build" --output-on-failure -R "test_layouts_np(2|3|4)$|app_run_tiers|app_run_peer|test_descriptor_passing|test_step_kernels|test_cuda_graph" \
    >"$out/peer-tests.txt" 2>&1 || rc=1
  grep -E "tests passed|tests failed|Failed|Passed|FAIL|tiers:" "$out/peer-tests.txt"
fi
if part steps; then
  PARTS=peer TOKENS="${TOKENS:-64 1024 8192}" bash "$(dirname "$0")/h200-strategies.sh" || rc=1
fi
if part auto; then
  mpiexec --oversubscribe -n 4 "$app" bench step --storage device --format fp8 --etp 4 --exchange auto \
    --requests "$corpus" --tokens 64 1024 8192 --modes eager graph --min-seconds 0.3 2>&1 |
    grep -E "^(tier|device)" | tee "$out/auto.txt"
  grep -q "peer-read" "$out/auto.txt" || { echo "auto did not pick peer-read"; rc=1; }
fi
exit $rc
