#!/usr/bin/env bash
# `pleshard run` from every storage tier this machine has gives output byte-identical to the
# host tier: disk always, also behind a row cache; device and pinned where a GPU is present,
# on one rank (NCCL carries the exchange; also replayed from a CUDA graph) and on three
# ranks sharing the GPU (host-staged MPI), pinned also behind a row cache. Tables made where
# the tier keeps them (--checkpoint synthetic: on the GPU for the device and pinned tiers)
# give the same bytes as the checkpoint ckpt make wrote.
#   tiers.sh PLESHARD CHECKPOINT MPIEXEC EMBEDDINGS_EQUAL
set -euo pipefail
app=$1; ckpt=$2; mpiexec=$3; equal=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
job=(run --synthetic 30 --synthetic-max-tokens 150 --step-tokens 96 --decode-tokens 3 --quiet)
"$app" "${job[@]}" --checkpoint "$ckpt" --storage host --out "$work/host.h5" >/dev/null

check() {  # check NAME RANKS ETP TIER [BACKEND [MORE OPTIONS]]
  local name=$1 ranks=$2 etp=$3 tier=$4 backend=${5:-}
  shift $(( $# < 5 ? $# : 5 ))
  local tables=(--checkpoint "$ckpt")
  case $name in synthetic_*) tables=(--checkpoint synthetic --config "$ckpt/config.json") ;; esac
  "$mpiexec" -n "$ranks" --oversubscribe "$app" "${job[@]}" "${tables[@]}" --etp "$etp" --storage "$tier" "$@" \
    --out "$work/$name.h5" >"$work/$name.log"
  "$equal" "$work/host.h5" "$work/$name.h5" 2 bfloat16 || { echo "FAIL: $name differs from the host tier"; exit 1; }
  if [ -n "$backend" ]; then
    grep -q "collectives over $backend" "$work/$name.log" \
      || { echo "FAIL: $name did not use $backend"; cat "$work/$name.log"; exit 1; }
  fi
  checked+=("$name")
}
checked=()
check disk_1 1 1 disk
check disk_3 3 3 disk
check disk_cache_1 1 1 disk "" --cache-rows 64         # evictions every step
check disk_cache_3 3 3 disk "" --cache-gb 0.01         # larger than the table
check synthetic_host_2 2 2 host
if "$app" "${job[@]}" --checkpoint "$ckpt" --storage device --summary-only >"$work/probe.log" 2>&1; then
  nccl=nccl
  grep -q "collectives over nccl" "$work/probe.log" || nccl=mpi-staged  # a build without NCCL
  check device_1 1 1 device "$nccl"
  check pinned_1 1 1 pinned "$nccl"
  if [ "$nccl" = nccl ]; then
    check device_graph_1 1 1 device nccl --cuda-graph
    check pinned_graph_1 1 1 pinned nccl --cuda-graph
  fi
  check device_3 3 3 device mpi-staged
  check pinned_3 3 3 pinned mpi-staged
  check pinned_cache_1 1 1 pinned "$nccl" --cache-rows 64
  check pinned_cache_3 3 3 pinned mpi-staged --cache-rows 1000
  if [ "$nccl" = nccl ]; then check pinned_cache_graph_1 1 1 pinned nccl --cache-rows 200 --cuda-graph; fi
  check synthetic_device_1 1 1 device "$nccl"
  check synthetic_pinned_3 3 3 pinned mpi-staged
elif ! grep -q "needs a CUDA build and a GPU" "$work/probe.log"; then
  echo "FAIL: --storage device failed:"; cat "$work/probe.log"; exit 1
fi
echo "tiers: identical (${checked[*]})"
