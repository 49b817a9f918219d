#!/usr/bin/env bash
# A rank's host threads come from the launcher's binding, and the report says how many and
# whence: SLURM_CPUS_PER_TASK before OMP_NUM_THREADS before the CPU affinity mask (taskset
# here, or the whole machine's), --threads (or its other name --kokkos-threads=N) before
# them all. A node whose ranks run more threads than their masks hold cores is warned
# about once, in one line from rank 0; one that does not is not.
#   rank_threads.sh PLESHARD CHECKPOINT MPIEXEC
set -uo pipefail
app=$1; ckpt=$2; mpiexec=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset SLURM_CPUS_PER_TASK OMP_NUM_THREADS
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $1"; cat "$work/err" "$work/out" 2>/dev/null; exit 1; }
job=(run --checkpoint "$ckpt" --synthetic 4 --synthetic-max-tokens 64 --summary-only --quiet --json)

# expect "COUNT FROM" COMMAND...: the command's report has `threads` COUNT from FROM.
expect() {
  local want=$1
  shift
  "$@" >"$work/out" 2>"$work/err" || fail "$*: exit $?"
  local got
  got=$(python3 -c 'import json, sys; r = json.loads(open(sys.argv[1]).readlines()[-1])
print(r["threads"], r["threads_from"])' "$work/out") || fail "$*: no report"
  [ "$got" = "$want" ] || fail "$*: threads $got, expected $want"
}
warnings() { grep -c "^pleshard: warning: .*oversubscribed" "$work/err"; }

cores=$(nproc)  # the CPUs of this shell's affinity mask, which a rank started here inherits
expect "$cores affinity" "$app" "${job[@]}"
expect "1 affinity" taskset -c 0 "$app" "${job[@]}"
[ "$(warnings)" -eq 0 ] || fail "a warning for one thread on one core"
expect "3 SLURM_CPUS_PER_TASK" env SLURM_CPUS_PER_TASK=3 OMP_NUM_THREADS=2 "$app" "${job[@]}"
expect "2 OMP_NUM_THREADS" env OMP_NUM_THREADS=2,1 taskset -c 0 "$app" "${job[@]}"
expect "2 asked" env SLURM_CPUS_PER_TASK=3 "$app" "${job[@]}" --threads 2
expect "2 asked" "$app" "${job[@]}" --kokkos-threads=2

# Three ranks of two threads on one core: one warning, from rank 0, naming the counts.
expect "2 asked" taskset -c 0 "$mpiexec" -n 3 --oversubscribe "$app" "${job[@]}" --threads 2
[ "$(warnings)" -eq 1 ] || fail "$(warnings) warnings for 6 threads on 1 core, expected one"
grep -q "3 ranks run 6 threads on 1 core (rank 0's 2 from --threads 2)" "$work/err" ||
  fail "the warning does not say 3 ranks run 6 threads on 1 core"
# Unbound ranks share their mask: three ranks on one core take one thread each, still too many.
expect "1 affinity" taskset -c 0 "$mpiexec" -n 3 --oversubscribe "$app" "${job[@]}"
[ "$(warnings)" -eq 1 ] || fail "$(warnings) warnings for 3 ranks on 1 core, expected one"

# A bad value in the environment is one line on every rank, exit 1.
env OMP_NUM_THREADS=many "$app" "${job[@]}" >"$work/out" 2>"$work/err"
rc=$?
[ $rc -eq 1 ] && grep -q "^pleshard: error: OMP_NUM_THREADS=many: expected a whole number of threads" "$work/err" ||
  fail "OMP_NUM_THREADS=many: exit $rc"
echo "rank threads: from every source, and one warning where they outnumber the cores"
