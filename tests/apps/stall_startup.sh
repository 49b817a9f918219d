#!/usr/bin/env bash
# A rank that stops outside the steps (SIGSTOP, as a frozen node would: at the job's start,
# in a table's load, at the output's opening, at its end before MPI_Finalize) ends the job on
# every rank within --collective-timeout, with one message naming what was waited for, a
# non-zero exit, and no output that looks complete: every wait of a job is watched, not only
# its steps'. The host tier, 3 ranks sharing one copy of the tables.
#   stall_startup.sh PLESHARD CHECKPOINT MPIEXEC
set -uo pipefail
app=$1; ckpt=$2; mpiexec=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
launcher=""
cleanup() {
  [ -n "$launcher" ] && { pkill -KILL -P "$launcher" 2>/dev/null; kill -KILL "$launcher" 2>/dev/null; }
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; cat "$work/err" 2>/dev/null; exit 1; }
now_ms() { date +%s%3N; }
limit=3
# POINT:WHAT the others' message names: the part of the job they waited in, or the wait.
for case in "start:(reading the job's inputs)" "load:(placing and loading the tables)" "output:(opening the output)" \
            "end:every rank's end of the command"; do
  point=${case%%:*}; what=${case#*:}
  rm -f "$work/out.h5"
  PLESHARD_FAULT_STOP_AT=$point PLESHARD_FAULT_STOP_RANK=1 "$mpiexec" -n 3 --oversubscribe "$app" run \
    --checkpoint "$ckpt" --synthetic 20 --synthetic-max-tokens 100 --storage host --quiet --out "$work/out.h5" \
    --collective-timeout "$limit" >"$work/out" 2>"$work/err" &
  launcher=$!
  # Rank 1 stopped itself (state T), or the job ended without it.
  stopped=""
  for _ in $(seq 600); do
    for pid in $(pgrep -P "$launcher"); do
      [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = T ] && stopped=$pid
    done
    [ -n "$stopped" ] || ! kill -0 "$launcher" 2>/dev/null && break
    sleep 0.05
  done
  [ -n "$stopped" ] || fail "$point: rank 1 did not stop"
  start=$(now_ms)
  # Every rank ended (the launcher with them), within a few seconds of the limit.
  for _ in $(seq 400); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$launcher" 2>/dev/null && fail "$point: the job still waits 40 s after rank 1 stopped"
  wait "$launcher"
  rc=$?
  launcher=""
  took=$(( $(now_ms) - start ))
  echo "stall_startup: $point: exit $rc after $((took / 1000)).$((took % 1000 / 100)) s"
  [ $rc -ne 0 ] || fail "$point: the job exited 0 with a stopped rank"
  [ "$took" -ge $(( (limit - 1) * 1000 )) ] || fail "$point: ended after ${took} ms, before the limit"
  [ "$took" -le $(( (limit + 12) * 1000 )) ] || fail "$point: ended ${took} ms after rank 1 stopped"
  # The stopped rank too (killed while stopped; its zombie reaped once the launcher is gone).
  for _ in $(seq 30); do [ "$(awk '{print $3}' "/proc/$stopped/stat" 2>/dev/null)" = T ] || break; sleep 0.1; done
  [ "$(awk '{print $3}' "/proc/$stopped/stat" 2>/dev/null)" = T ] && fail "$point: the stopped rank outlived the job"
  # One message, naming the wait and the part of the job it was in.
  grep -qF "$what: no progress in $limit s (--collective-timeout): a peer rank stopped" "$work/err" ||
    fail "$point: no message naming $what"
  [ "$(grep "error:" "$work/err" | sed 's/^pleshard: rank [0-9]*: //' | sort -u | wc -l)" -eq 1 ] ||
    fail "$point: more than one message"
  # Nothing that looks complete, but where the job had committed its output before its end.
  if [ "$point" = end ]; then
    [ -e "$work/out.h5" ] || fail "end: the output committed before the end is gone"
  else
    [ ! -e "$work/out.h5" ] || fail "$point: an output was left"
  fi
done
echo "stall_startup: every rank ended"
