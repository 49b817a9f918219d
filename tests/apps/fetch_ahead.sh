#!/usr/bin/env bash
# The disk tier's fetch ahead (a step's rows read while the step before is decoded), on 3
# ranks across several parts: the output is byte-identical to the same job with
# --no-fetch-ahead, and every step after each rank's first was fetched ahead. Then a read
# that fails in a fetch begun ahead (one rank's third step, begun inside its second;
# injected) ends the job on every rank within seconds, with one message naming the
# checkpoint, and no output left.
#   fetch_ahead.sh PLESHARD CHECKPOINT MPIEXEC
set -uo pipefail
app=$1; ckpt=$2; mpiexec=$3
here=$(dirname "$0")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
job=(run --checkpoint "$ckpt" --storage disk --synthetic 40 --synthetic-max-tokens 200 --step-tokens 64
     --decode-tokens 3 --part-tokens 700 --etp 3 --quiet --json)
"$mpiexec" -n 3 --oversubscribe "$app" "${job[@]}" --out "$work/ahead.h5" >"$work/ahead.json" 2>"$work/err" ||
  { echo "FAIL: the job failed"; cat "$work/err"; exit 1; }
"$mpiexec" -n 3 --oversubscribe "$app" "${job[@]}" --no-fetch-ahead --out "$work/plain.h5" >"$work/plain.json" \
  2>"$work/err" || { echo "FAIL: the job with --no-fetch-ahead failed"; cat "$work/err"; exit 1; }
cmp "$work/ahead.h5" "$work/plain.h5" || { echo "FAIL: the outputs differ"; exit 1; }
steps=$(python3 "$here/report_field.py" "$work/ahead.json" steps)
ahead=$(python3 "$here/report_field.py" "$work/ahead.json" steps_fetched_ahead)
parts=$(python3 "$here/report_field.py" "$work/ahead.json" parts)
plain=$(python3 "$here/report_field.py" "$work/plain.json" steps_fetched_ahead)
echo "fetch ahead: $steps steps over $parts parts, $ahead fetched ahead; $plain without"
[ "$parts" -ge 2 ] && [ "$ahead" -eq $((steps - 1)) ] && [ "$plain" -eq 0 ] ||
  { echo "FAIL: expected every step but the first fetched ahead, across parts, and none without"; exit 1; }

start=$(date +%s)
PLESHARD_FAULT_DISK_READ_FAILURE=2 PLESHARD_FAULT_DISK_READ_FAILURE_RANK=1 timeout 60 \
  "$mpiexec" -n 3 --oversubscribe "$app" "${job[@]}" --out "$work/failed.h5" >"$work/out" 2>"$work/err"
rc=$?
took=$(( $(date +%s) - start ))
echo "fetch ahead: a failed read on rank 1: exit $rc after $took s"
[ $rc -ne 0 ] && [ $rc -ne 124 ] || { echo "FAIL: exit $rc"; cat "$work/err"; exit 1; }
[ "$took" -le 30 ] || { echo "FAIL: took $took s"; exit 1; }
[ "$(grep -cF "pleshard: rank 1: error: $ckpt: reading a step's rows: Input/output error" "$work/err")" -eq 1 ] ||
  { echo "FAIL: not one message naming the file"; cat "$work/err"; exit 1; }
[ ! -e "$work/failed.h5" ] || { echo "FAIL: an output was left"; exit 1; }
echo "fetch ahead: identical, and every rank ended"
