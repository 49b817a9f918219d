#!/usr/bin/env bash
# A batch job killed after its second part leaves no output file, only its partial file and
# a progress record of two parts; the same command rerun resumes after them and ends with
# output byte-identical to an uninterrupted run.
#   resume.sh PLESHARD CHECKPOINT MPIEXEC
set -euo pipefail
app=$1; ckpt=$2; mpiexec=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
job=(run --checkpoint "$ckpt" --synthetic 40 --synthetic-max-tokens 200 --step-tokens 128
     --decode-tokens 4 --part-tokens 500 --tp 1 --etp 3 --quiet)
"$mpiexec" -n 3 --oversubscribe "$app" "${job[@]}" --out "$work/whole.h5" >/dev/null

set +e
PLESHARD_FAULT_KILL_AFTER_PARTS=2 "$mpiexec" -n 3 --oversubscribe "$app" "${job[@]}" --out "$work/b.h5" \
  >/dev/null 2>"$work/killed.log"
rc=$?
set -e
[ $rc -ne 0 ] || { echo "FAIL: the killed run exited 0"; exit 1; }
[ ! -e "$work/b.h5" ] || { echo "FAIL: a killed run left an output file"; exit 1; }
[ -e "$work/b.h5.partial" ] && [ "$(head -n 1 "$work/b.h5.progress" | cut -d' ' -f2)" = 2 ] \
  || { echo "FAIL: expected a partial file and a record of two parts"; ls "$work"; cat "$work/b.h5.progress"; exit 1; }

"$mpiexec" -n 3 --oversubscribe "$app" "${job[@]}" --out "$work/b.h5" >"$work/resumed.log"
grep -qE "parts resumed +2$" "$work/resumed.log" || { echo "FAIL: did not resume"; cat "$work/resumed.log"; exit 1; }
cmp "$work/whole.h5" "$work/b.h5" || { echo "FAIL: resumed output differs"; exit 1; }
[ ! -e "$work/b.h5.partial" ] && [ ! -e "$work/b.h5.progress" ] || { echo "FAIL: partial output left behind"; exit 1; }

# The partial output of another job is refused, not mixed in.
set +e
PLESHARD_FAULT_KILL_AFTER_PARTS=1 "$mpiexec" -n 3 --oversubscribe "$app" "${job[@]}" --out "$work/c.h5" >/dev/null 2>&1
out=$("$mpiexec" -n 3 --oversubscribe "$app" "${job[@]/--synthetic-max-tokens/--synthetic-min-tokens}" --out "$work/c.h5" 2>&1)
rc=$?
set -e
[ $rc -ne 0 ] && echo "$out" | grep -q "records the progress of a different job" \
  || { echo "FAIL: another job's output accepted: $out"; exit 1; }
echo "resume: identical"
