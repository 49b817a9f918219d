#!/usr/bin/env bash
# A rank that stops while the job steps (SIGSTOP: a frozen node, a hung file system) ends the
# job on every rank within --collective-timeout, with one message, on the host tier whose
# collectives are MPI's: the host waits are watched like the GPU's.
#   stall_host.sh PLESHARD CHECKPOINT MPIEXEC
set -uo pipefail
app=$1; ckpt=$2; mpiexec=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
stopped=""
trap '[ -n "$stopped" ] && kill -CONT "$stopped" 2>/dev/null; rm -rf "$work"' EXIT
source "$(dirname "$0")/fault_checks.sh"
# 20,000 requests of about 1,000 tokens: tens of seconds of steps on 2 cores, where the rank
# is stopped within a second of the first.
for exchange in owner gather-reduce; do
  "$mpiexec" -n 3 --oversubscribe "$app" run --checkpoint "$ckpt" --synthetic 20000 --step-tokens 64 \
    --summary-only --etp 3 --exchange "$exchange" --collective-timeout 3 >"$work/out" 2>"$work/err" &
  launcher=$!
  # Stepping: rank 0 has printed progress.
  for _ in $(seq 600); do grep -q "tokens/s" "$work/err" && break; sleep 0.1; done
  grep -q "tokens/s" "$work/err" || fail "$exchange: the job did not start stepping"
  stopped=""
  for pid in $(pgrep -P "$launcher"); do
    tr '\0' '\n' <"/proc/$pid/environ" | grep -qx "OMPI_COMM_WORLD_RANK=2" && stopped=$pid
  done
  [ -n "$stopped" ] || fail "$exchange: rank 2 not found"
  kill -STOP "$stopped"
  job_ended "stall_host: $exchange" 30 "$launcher"
  kill -CONT "$stopped" 2>/dev/null; stopped=""
  message "stall_host: $exchange" "no progress in 3 s (--collective-timeout): a peer rank stopped"
done
echo "stall_host: every rank ended"
