#!/usr/bin/env bash
# Runs each Slurm batch script the way sbatch does: copied to a spool directory and run from
# there, in the submit directory, with the SLURM_* variables of a job and an srun stand-in
# (slurm-standin/srun, through mpiexec) first on PATH. The model is jobs/example's, synthetic.
# Checked beside that: the script's arguments and CONFIG reach pleshard as they are (a path
# with a space, a non-ASCII letter and a newline, in the C locale); pleshard-run prints its
# command and which requests it uses, leaves the tables to run's default placement, passes
# PLACEMENT and THREADS, gives the ranks --cpus-per-task's threads, and refuses STORAGE with
# PLACEMENT in one line; so does pleshard-scaling, which resumes when requeued.
#   sbatch_spool.sh PLESHARD SOURCE_DIR
set -euo pipefail
app=$(realpath "$1"); src=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/elsewhere" "$work/out"
job=0

# sbatch_like SCRIPT SUBMIT_DIR TASKS [VAR=VALUE...] [-- SCRIPT ARGUMENT...]: the job's output in
# $work/job$job.log; returns its status.
sbatch_like() {
  local script=$1 submit=$2 tasks=$3
  shift 3
  local settings=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do settings+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  job=$((job + 1))
  local spool=$work/spool/job$job
  mkdir -p "$spool"
  cp "$script" "$spool/slurm_script"
  chmod 700 "$spool/slurm_script"
  # The scripts' settings come from the environment: only the ones given here, none of the
  # caller's (a shell with OUT or TP set, as a batch machine's may be).
  local unset=()
  for v in $(grep -ho ': "${[A-Z_]*' "$src"/jobs/slurm/*.sbatch | sed 's/: "${//' | sort -u) PLESHARD_HOME; do
    unset+=(-u "$v")
  done
  (cd "$submit" && env "${unset[@]}" PATH="$src/tests/jobs/slurm-standin:$PATH" \
    SLURM_JOB_ID=$job SLURM_JOBID=$job SLURM_JOB_NAME="$(basename "$script" .sbatch)" SLURM_SUBMIT_DIR="$submit" \
    SLURM_SUBMIT_HOST="$(hostname)" SLURM_NTASKS="$tasks" SLURM_NPROCS="$tasks" SLURM_JOB_NUM_NODES=1 \
    SLURM_NNODES=1 SLURM_JOB_NODELIST="$(hostname)" SLURM_CPUS_ON_NODE="$(nproc)" SLURM_RESTART_COUNT=0 \
    SRUN_STANDIN_LOG="$work/srun$job.log" "${settings[@]}" "$spool/slurm_script" "$@") >"$work/job$job.log" 2>&1
}
fail() {
  echo "FAIL: $1"
  cat "$work/job$job.log"
  exit 1
}
model=(CHECKPOINT=synthetic CONFIG=jobs/example/config.json)  # relative to the submit directory
# A model folder whose name holds a space, a non-ASCII letter and a newline, read in the C
# locale: paths reach pleshard as the bytes they are, never split or re-quoted.
odd="$work/model è"$'\n'"dir"
mkdir -p "$odd"
cp "$src/jobs/example/config.json" "$odd/config.json"

# pleshard-run: 2 tasks from the checkout, ETP 2 (each rank makes half the tables); the config
# as a script argument; where the tables live left to run's default (the automatic placement).
sbatch_like "$src/jobs/slurm/pleshard-run.sbatch" "$src" 2 PLESHARD="$app" CHECKPOINT=synthetic SYNTHETIC=8 ETP=2 \
  EXTRA_ARGS="--synthetic-max-tokens 64 --quiet" SLURM_CPUS_PER_TASK=1 LC_ALL=C -- --config "$odd/config.json" ||
  fail "pleshard-run.sbatch from the spool, its config as an argument"
grep -q "srun (stand-in): 2 tasks" "$work/srun$job.log" || fail "pleshard-run.sbatch did not start its tasks with srun"
grep -q "tokens/s" "$work/job$job.log" || fail "pleshard-run.sbatch printed no report"
grep -q "^pleshard-run: srun --mpi=pmix --kill-on-bad-exit=1 $app run --checkpoint synthetic " "$work/job$job.log" ||
  fail "pleshard-run.sbatch did not print the command it runs"
if grep -qE -- "--(storage|placement) " "$work/srun$job.log"; then
  fail "pleshard-run.sbatch chose a tier where neither STORAGE nor PLACEMENT was set (run's default is auto)"
fi
grep -q "placed automatically  *yes" "$work/job$job.log" || fail "pleshard-run.sbatch: the tables were not placed automatically"
grep -q "^pleshard-run: requests: 8 synthetic ones (REQUESTS unset; set REQUESTS=FILE for yours); embeddings: none" \
  "$work/job$job.log" || fail "pleshard-run.sbatch did not say which requests it uses"
grep -q "thread count came from  *SLURM_CPUS_PER_TASK (SLURM_CPUS_PER_TASK=1)" "$work/job$job.log" ||
  fail "pleshard-run.sbatch: the ranks' threads did not come from --cpus-per-task"

# pleshard-run: a placement per table reaches run; STORAGE and PLACEMENT together are refused.
sbatch_like "$src/jobs/slurm/pleshard-run.sbatch" "$src" 1 PLESHARD="$app" "${model[@]}" SYNTHETIC=4 \
  PLACEMENT=0=host,1=host THREADS=1 EXTRA_ARGS="--synthetic-max-tokens 64 --quiet" ||
  fail "pleshard-run.sbatch with PLACEMENT and THREADS"
grep -q -- "--placement 0=host,1=host" "$work/srun$job.log" || fail "pleshard-run.sbatch: PLACEMENT did not reach run"
grep -q -- "--threads 1" "$work/srun$job.log" || fail "pleshard-run.sbatch: THREADS did not reach run"
if sbatch_like "$src/jobs/slurm/pleshard-run.sbatch" "$src" 1 PLESHARD="$app" "${model[@]}" STORAGE=host \
  PLACEMENT=auto; then
  fail "pleshard-run.sbatch ran with both STORAGE and PLACEMENT"
fi
grep -q "pleshard-run: STORAGE=host and PLACEMENT=auto: set one" "$work/job$job.log" ||
  fail "pleshard-run.sbatch's error for STORAGE and PLACEMENT"

# pleshard-run: no executable to be found is one clear line, not a command not found.
if sbatch_like "$src/jobs/slurm/pleshard-run.sbatch" "$work/elsewhere" 1 "${model[@]}"; then
  fail "pleshard-run.sbatch ran without a pleshard executable"
fi
grep -q "pleshard-run: no pleshard executable: .*set PLESHARD" "$work/job$job.log" || fail "pleshard-run.sbatch's error"

# pleshard-scaling: submitted from a folder inside the checkout, strong scaling on 1 and 2 ranks,
# the tables placed as PLACEMENT says.
scaling=(CHECKPOINT=synthetic CONFIG=example/config.json RANKS="1 2" REPEATS=1 SYNTHETIC=8 ETP_PER_TP=all
         RUN_ARGS="--synthetic-max-tokens 64" OUT_PREFIX="$work/out/strong")
sbatch_like "$src/jobs/slurm/pleshard-scaling.sbatch" "$src/jobs" 2 PLESHARD="$app" "${scaling[@]}" PLACEMENT=host ||
  fail "pleshard-scaling.sbatch from the spool"
[ "$(grep -c "srun (stand-in): [12] tasks" "$work/srun$job.log")" -eq 2 ] ||
  fail "pleshard-scaling.sbatch did not launch its 1- and 2-rank runs through srun"
[ "$(wc -l <"$work/out/strong.csv")" -eq 3 ] || fail "pleshard-scaling.sbatch: expected 2 rows in strong.csv"
[ "$(grep -c -- "--placement host" "$work/srun$job.log")" -eq 2 ] || fail "pleshard-scaling.sbatch: PLACEMENT did not reach run"
# Requeued (SLURM_RESTART_COUNT=1): both rank counts are in strong.csv, so nothing runs again.
sbatch_like "$src/jobs/slurm/pleshard-scaling.sbatch" "$src/jobs" 2 PLESHARD="$app" "${scaling[@]}" PLACEMENT=host \
  SLURM_RESTART_COUNT=1 || fail "pleshard-scaling.sbatch requeued"
[ ! -s "$work/srun$job.log" ] && grep -q "2 ranks: in .*strong.csv already (--resume)" "$work/job$job.log" ||
  fail "pleshard-scaling.sbatch requeued ran its rank counts again"
if sbatch_like "$src/jobs/slurm/pleshard-scaling.sbatch" "$src/jobs" 2 PLESHARD="$app" "${scaling[@]}" STORAGE=host \
  PLACEMENT=auto; then
  fail "pleshard-scaling.sbatch ran with both STORAGE and PLACEMENT"
fi
grep -q "pleshard-scaling: STORAGE=host and PLACEMENT=auto: set one" "$work/job$job.log" ||
  fail "pleshard-scaling.sbatch's error for STORAGE and PLACEMENT"

# pleshard-scaling: from outside the checkout, refused in one line; with PLESHARD_HOME, run.
if sbatch_like "$src/jobs/slurm/pleshard-scaling.sbatch" "$work/elsewhere" 2 "${model[@]}"; then
  fail "pleshard-scaling.sbatch ran outside the checkout without PLESHARD_HOME"
fi
grep -q "pleshard-scaling: no jobs/scaling.sh in the submit directory .*set PLESHARD_HOME" "$work/job$job.log" ||
  fail "pleshard-scaling.sbatch's error"
sbatch_like "$src/jobs/slurm/pleshard-scaling.sbatch" "$work/elsewhere" 2 PLESHARD_HOME="$src" PLESHARD="$app" \
  CHECKPOINT=synthetic CONFIG="$odd/config.json" RANKS=2 REPEATS=1 MODE=weak SYNTHETIC=4 LC_ALL=C \
  ETP_PER_TP=all RUN_ARGS="--synthetic-max-tokens 64" || fail "pleshard-scaling.sbatch with PLESHARD_HOME, CONFIG in $odd"
[ -s "$work/elsewhere/pleshard-scaling-$job.csv" ] || fail "no pleshard-scaling-$job.csv in the submit directory"
echo "sbatch from the spool: both scripts ran, and refused in one line where the project is not found"
