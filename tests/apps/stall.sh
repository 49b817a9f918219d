#!/usr/bin/env bash
# A GPU stream that stops making progress on one rank (a hung kernel, standing in for a
# stalled GPU or peer) ends the job on every rank within the timeout, with one message:
# one rank, and three ranks sharing the GPU (host-staged MPI). Without a GPU: skipped.
#   stall.sh PLESHARD CHECKPOINT MPIEXEC
set -uo pipefail
app=$1; ckpt=$2; mpiexec=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/fault_checks.sh"
job=(run --checkpoint "$ckpt" --synthetic 30 --synthetic-max-tokens 150 --step-tokens 64 --summary-only --quiet
     --storage device --collective-timeout 3)
if ! "$app" "${job[@]}" >"$work/probe.log" 2>&1; then
  grep -qE "no GPU (found|support)" "$work/probe.log" && { echo "stall: skipped (no GPU)"; exit 0; }
  echo "FAIL: the job without a fault failed:"; cat "$work/probe.log"; exit 1
fi
for ranks in 1 3; do
  echo "stall: $ranks rank(s), rank $((ranks - 1)) stalls at step 2"
  PLESHARD_FAULT_STALL_STEP=2 PLESHARD_FAULT_STALL_RANK=$((ranks - 1)) \
    ended_by_fault "stall: $ranks rank(s)" 60 "$mpiexec" -n "$ranks" --oversubscribe "$app" "${job[@]}" --etp "$ranks"
  message "stall: $ranks rank(s)" "made no progress in 3 s"
  message "stall: $ranks rank(s)" "pleshard: rank .*: error:"
done
echo "stall: every rank ended"
