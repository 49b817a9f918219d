#!/usr/bin/env bash
# After h200-build.sh: where the time of peer reads goes on one GPU shared by ranks — the same
# bench step with each rank's own copy of the table (--etp 1), with one copy read in place
# (peer-read) by 2 and 4 ranks, in turns and through MPS.
#   [CORPUS=...] jobs/device/peer-read-probe.sh    (results: $OUT/probe.txt)
set -uo pipefail
source "$(dirname "$0")/env.sh"
bench() {  # bench NAME RANKS ARGS...
  local name=$1 ranks=$2; shift 2
  echo "== $name" | tee -a "$out/probe.txt"
  mpiexec --oversubscribe -n "$ranks" "$app" bench step --storage device --format fp8 --requests "$corpus" \
    --tokens 64 1024 8192 --modes eager --min-seconds 0.3 "$@" 2>&1 | grep -E "^device" | tee -a "$out/probe.txt"
}
round() {
  bench "$1: 2 ranks, own copies" 2 --etp 1
  bench "$1: 2 ranks, peer-read" 2 --etp 2 --exchange peer-read
  bench "$1: 4 ranks, own copies" 4 --etp 1
  bench "$1: 4 ranks, peer-read" 4 --etp 4 --exchange peer-read
}
round "in turns"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/pleshard-mps/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/pleshard-mps/log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d && round "MPS" && echo quit | nvidia-cuda-mps-control
