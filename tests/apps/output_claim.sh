#!/usr/bin/env bash
# Two jobs never write one output: two identical `run --out OUT` started together end with
# OUT complete and equal to a job run alone, the one that found OUT claimed refused with one
# line naming the holder; no lock file is left. (Ranks of a killed job that outlive their
# first rank: tests/io/test_output_target.cpp.)
#   output_claim.sh PLESHARD CHECKPOINT MPIEXEC
set -uo pipefail
app=$1; ckpt=$2; mpiexec=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
job=(run --checkpoint "$ckpt" --synthetic 300 --synthetic-max-tokens 100 --step-tokens 64 --part-tokens 2000
     --storage disk --quiet)
run() { "$mpiexec" -n "$1" --oversubscribe "$app" "${job[@]}" --out "$2"; }
run 2 "$work/alone.h5" >/dev/null 2>&1 || fail "the job alone"

refused=0
for trial in 1 2 3; do
  rm -f "$work/out.h5"
  run 2 "$work/out.h5" >"$work/a.log" 2>&1 & a=$!
  run 2 "$work/out.h5" >"$work/b.log" 2>&1 & b=$!
  wait $a; ra=$?
  wait $b; rb=$?
  for r in "$ra a" "$rb b"; do
    set -- $r
    [ "$1" = 0 ] && continue
    grep -q "out.h5: another job writes this output: pid [0-9]* on .* holds .*out.h5.lock" "$work/$2.log" \
      || { cat "$work/$2.log"; fail "trial $trial: job $2 exit $1 without the claim's message"; }
    refused=$((refused + 1))
  done
  [ "$ra" = 0 ] || [ "$rb" = 0 ] || fail "trial $trial: neither job succeeded"
  cmp -s "$work/out.h5" "$work/alone.h5" || fail "trial $trial: OUT differs from the job run alone"
done
[ $refused -ge 1 ] || fail "no trial started the two jobs together"
[ ! -e "$work/out.h5.lock" ] || fail "the lock file was left behind"
echo "output_claim: $refused of 3 trials refused the second job"

echo "output claim: one job per output"
