#!/usr/bin/env bash
# An HDF5 checkpoint truncated under a running disk-tier job of 3 ranks: every rank exits 1
# within seconds, with a message naming the file, and no output is left; so does one written
# in place with its modification time set back. And one corrupted
# beforehand, read collectively by the host tier (MPI-IO where HDF5 is parallel), so that
# only one rank's read fails its checksum: every rank exits all the same (before, that
# rank waited in the collective close of the file for ranks that never came).
#   changed_checkpoint.sh PLESHARD CHECKPOINT MPIEXEC
set -uo pipefail
app=$1; ckpt=$2; mpiexec=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'kill $job_pid 2>/dev/null; rm -rf "$work"' EXIT
source "$(dirname "$0")/fault_checks.sh"
cp "$ckpt/config.json" "$work/config.json"
# changed_under_job WHAT MESSAGE COMMAND...: a disk-tier job of 3 ranks on a fresh HDF5 copy,
# of many small steps so that it is still running when COMMAND changes the file; every rank
# must exit non-zero within 30 s with MESSAGE, leaving no output.
changed_under_job() {
  local what=$1 message=$2; shift 2
  rm -f "$work/out.h5" "$work/out.h5.partial" "$work/out.h5.progress"
  "$app" ckpt convert --checkpoint "$ckpt" --out "$work/ckpt.h5" --kind hdf5 >/dev/null || { echo "FAIL: convert"; exit 1; }
  "$mpiexec" -n 3 --oversubscribe "$app" run --checkpoint "$work/ckpt.h5" --config "$work/config.json" --storage disk \
    --synthetic 3000 --step-tokens 4 --etp 3 --out "$work/out.h5" >"$work/out" 2>"$work/err" &
  job_pid=$!
  for _ in $(seq 200); do grep -q "tokens/s" "$work/err" && break; sleep 0.1; done
  grep -q "tokens/s" "$work/err" || fail "$what: the job did not start stepping"
  "$@" || fail "$what: the change failed"
  job_ended "changed checkpoint: $what" 30 "$job_pid"
  message "changed checkpoint: $what" "ckpt.h5: $message"
  no_output "changed checkpoint: $what" "$work/out.h5"
}
changed_under_job "truncated" "changed under the running job" truncate -s 100000 "$work/ckpt.h5"
# Written in place with its modification time set back: the change time tells.
changed_under_job "written in place, its modification time set back" "modified under the running job" \
  python3 -c '
import os, sys
path = sys.argv[1]
before = os.stat(path)
with open(path, "r+b") as f:
    f.seek(before.st_size // 2)
    f.write(os.urandom(4096))
os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))' "$work/ckpt.h5"
# The host tier: each rank reads its own range; the corruption lies in one of them.
"$app" ckpt convert --checkpoint "$ckpt" --out "$work/whole.h5" --kind hdf5 >/dev/null
printf '\377\377\377\377' | dd of="$work/whole.h5" bs=1 seek=$(( $(stat -c %s "$work/whole.h5") * 9 / 10 )) \
  conv=notrunc 2>/dev/null
ended_by_fault "changed checkpoint: host tier on a corrupted file" 30 "$mpiexec" -n 3 --oversubscribe "$app" run \
  --checkpoint "$work/whole.h5" --config "$work/config.json" --storage host --synthetic 10 --etp 3 --summary-only --quiet
message "changed checkpoint: host tier on a corrupted file" "whole.h5: /ple/.*checksum mismatch"
echo "changed checkpoint: every rank ended"
