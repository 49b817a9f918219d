#!/usr/bin/env bash
# After h200-build.sh (same build directory): every exchange strategy's whole steps on one
# GPU machine, 4 ranks sharing the GPU (exchanging over MPI through host copies), each run
# beside the same run of a baseline build (BASELINE_APP, where given):
# - plans: bench step of Qwen3.8-Flash-Next's shape over 2^24 rows, FP8, device tier, ETP 4,
#   gather-reduce, reduce-scatter and owner side by side, the owner exchange planning every
#   step on the host (--owner-gpu-plan-from 2^40), then every step on the GPU (0), then every
#   step in fixed-size messages (--owner-fixed-below 2^40: no count waits for the host);
# - nodes: the same with nodes of 2 ranks (PLESHARD_RANKS_PER_NODE), owner and hierarchical;
# - mps (not by default): gather-reduce and owner, sized and fixed-size, with the 4 ranks'
#   kernels sharing the GPU at once through an MPS control daemon of this job's own (started
#   and stopped here; skipped where there is none) rather than in turns;
# - peer (not by default): the ranks reading each other's rows in place (--exchange peer-read,
#   one copy of the table on the GPU), eager and graph, beside owner and gather-reduce (eager)
#   and one rank holding the whole table, in turns and through MPS (the baseline's peer-read
#   beside this build's, where BASELINE_APP is given).
#   [CORPUS=...] [PARTS="plans nodes mps peer"] [TOKENS="64 1024 8192"] [BASELINE_APP=path/to/pleshard] jobs/device/h200-strategies.sh
# Results go to $OUT (default ./out): strategies.txt.
set -uo pipefail
source "$(dirname "$0")/env.sh"
parts=${PARTS:-plans nodes}
read -r -a tokens <<<"${TOKENS:-64 1024 8192}"
rc=0

# steps NAME APP ARGS...: one bench step run, its table under NAME.
steps() {
  local name=$1 bin=$2; shift 2
  echo "== $name" | tee -a "$out/strategies.txt"
  mpiexec --oversubscribe -n 4 -x PLESHARD_RANKS_PER_NODE "$bin" bench step --storage device --format fp8 --etp 4 \
    --requests "$corpus" --tokens "${tokens[@]}" --modes eager --min-seconds 0.5 "$@" >"$out/last.log" 2>&1 ||
    { rc=1; tail -3 "$out/last.log"; }
  grep -v '^{' "$out/last.log" | tee -a "$out/strategies.txt"
}
# both NAME ARGS...: this build's run, then the baseline's.
both() {
  local name=$1; shift
  steps "this $name" "$app" "$@"
  [ -n "${BASELINE_APP:-}" ] && steps "baseline $name" "$BASELINE_APP" "$@"
}

export PLESHARD_RANKS_PER_NODE=4
if part plans; then
  both "host plans" --exchange gather-reduce reduce-scatter owner --owner-gpu-plan-from 1099511627776
  both "GPU plans" --exchange owner --owner-gpu-plan-from 0
  steps "this fixed-size messages" "$app" --exchange owner --owner-fixed-below 1099511627776
fi
if part nodes; then
  export PLESHARD_RANKS_PER_NODE=2
  both "nodes of 2" --exchange owner hierarchical
fi
if part mps; then
  export PLESHARD_RANKS_PER_NODE=4
  if command -v nvidia-cuda-mps-control >/dev/null; then
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/pleshard-mps/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/pleshard-mps/log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    nvidia-cuda-mps-control -d
    steps "MPS: gather-reduce, owner" "$app" --exchange gather-reduce owner
    steps "MPS: owner in fixed-size messages" "$app" --exchange owner --owner-fixed-below 1099511627776
    echo quit | nvidia-cuda-mps-control
  else
    echo "mps: no nvidia-cuda-mps-control here; skipped" | tee -a "$out/strategies.txt"
  fi
fi
if part peer; then
  export PLESHARD_RANKS_PER_NODE=4
  # peer_steps NAME APP RANKS ARGS...: one bench step run of RANKS ranks.
  peer_steps() {
    local name=$1 bin=$2 ranks=$3; shift 3
    echo "== $name" | tee -a "$out/strategies.txt"
    mpiexec --oversubscribe -n "$ranks" -x PLESHARD_RANKS_PER_NODE "$bin" bench step --storage device --format fp8 \
      --requests "$corpus" --tokens "${tokens[@]}" --min-seconds 0.5 "$@" >"$out/last.log" 2>&1 ||
      { rc=1; tail -3 "$out/last.log"; }
    grep -v '^{' "$out/last.log" | tee -a "$out/strategies.txt"
  }
  peer_round() {  # peer_round WHEN
    peer_steps "$1: one rank, the whole table" "$app" 1 --modes eager graph
    peer_steps "$1: 4 ranks, peer-read" "$app" 4 --etp 4 --exchange peer-read --modes eager graph
    [ -n "${BASELINE_APP:-}" ] &&
      peer_steps "$1: baseline, 4 ranks, peer-read" "$BASELINE_APP" 4 --etp 4 --exchange peer-read --modes eager graph
    peer_steps "$1: 4 ranks, owner and gather-reduce" "$app" 4 --etp 4 --exchange owner gather-reduce --modes eager
  }
  peer_round "in turns"
  if command -v nvidia-cuda-mps-control >/dev/null; then
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/pleshard-mps/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/pleshard-mps/log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    nvidia-cuda-mps-control -d
    peer_round "MPS"
    echo quit | nvidia-cuda-mps-control
  else
    echo "peer: no nvidia-cuda-mps-control here; MPS skipped" | tee -a "$out/strategies.txt"
  fi
fi
exit $rc
