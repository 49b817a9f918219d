#!/usr/bin/env bash
# An output at --out is never mixed with another job's: a job whose inputs differ from a
# complete output there refuses to start (the file untouched) unless --overwrite, which
# replaces it; the same command again finds its output complete and does nothing; --out
# naming a directory, or a place whose directory does not exist, is refused before the first
# step, on every rank.
#   stale_output.sh PLESHARD CHECKPOINT MPIEXEC
set -uo pipefail
app=$1; ckpt=$2; mpiexec=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() { "$mpiexec" -n 2 --oversubscribe "$app" run --checkpoint "$ckpt" --step-tokens 64 --quiet "$@"; }
fail() { echo "FAIL: $*"; exit 1; }
run --synthetic 10 --out "$work/out.h5" >/dev/null || fail "job A"
cp "$work/out.h5" "$work/a.h5"
run --synthetic 12 --out "$work/out.h5" >"$work/log" 2>&1 && fail "job B accepted over job A's output"
grep -q "out.h5: holds the output of another job" "$work/log" || { cat "$work/log"; fail "no message"; }
cmp -s "$work/out.h5" "$work/a.h5" || fail "job A's output was changed"
run --synthetic 12 --out "$work/out.h5" --overwrite >/dev/null || fail "job B with --overwrite"
run --synthetic 12 --out "$work/b.h5" >/dev/null || fail "job B elsewhere"
cmp -s "$work/out.h5" "$work/b.h5" || fail "--overwrite did not give job B's output"
run --synthetic 12 --out "$work/out.h5" >"$work/again" 2>&1 || fail "the same job again"
grep -q "complete, nothing to do" "$work/again" || { cat "$work/again"; fail "the same job again did not find its output complete"; }
cmp -s "$work/out.h5" "$work/b.h5" || fail "the same job again changed its output"
mkdir "$work/dir.h5"
run --synthetic 4 --out "$work/dir.h5" >"$work/log" 2>&1 && fail "--out naming a directory accepted"
grep -q "dir.h5: --out names a directory" "$work/log" || { cat "$work/log"; fail "no message for a directory"; }
run --synthetic 4 --out "$work/missing/out.h5" >"$work/log" 2>&1 && fail "--out in a missing directory accepted"
grep -q "does not exist" "$work/log" || { cat "$work/log"; fail "no message for a missing directory"; }
echo "stale output: refused, overwritten, kept"
