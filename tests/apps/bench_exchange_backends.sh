#!/usr/bin/env bash
# bench exchange over the GPU backends. With GPUs (and a CUDA build): validated results,
# mpi-staged on 2 ranks and nccl on as many ranks as GPUs (at most 2): every strategy's
# collectives (gather-reduce 2, reduce-scatter 1, owner 2) at 2 token counts. Without: one line
# naming what is missing, a non-zero exit.
#   bench_exchange_backends.sh APP MPIEXEC CUDA_BUILD(ON|OFF)
app=$1 mpiexec=$2 cuda=$3
gpus=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
run() { "$mpiexec" --oversubscribe -n "$1" "$app" bench exchange --backend "$2" --tokens 1 64 --min-seconds 0.01 2>&1; }
if [ "$cuda" != ON ] || [ "$gpus" -eq 0 ]; then
  out=$(run 2 mpi-staged) && { echo "$out"; echo "bench exchange: expected a failure without a GPU"; exit 1; }
  echo "$out" | grep -qE "error: the mpi-staged backend needs (a GPU|a CUDA build)" ||
    { echo "$out"; echo "bench exchange: no clear error without a GPU"; exit 1; }
  echo "bench exchange backends: refused without a GPU"
  exit 0
fi
for case in "2 mpi-staged" "$(( gpus < 2 ? gpus : 2 )) nccl"; do
  # shellcheck disable=SC2086 # "ranks backend"
  out=$(run $case) || { echo "$out"; exit 1; }
  echo "$out" | grep '^{' | grep -q '"wrong": [1-9]' && { echo "$out"; exit 1; }
  [ "$(echo "$out" | grep -c '"wrong": 0')" -eq 10 ] || { echo "$out"; echo "bench exchange: missing results"; exit 1; }
done
echo "bench exchange backends: validated"
