#!/usr/bin/env bash
# The output's disk fills up under a running multi-rank job (2 and 3 ranks; the writer's
# fault-injection switch PLESHARD_FAULT_WRITE_LIMIT): every rank exits 1 within seconds with
# one message naming the output, and nothing that looks complete is left. Where this
# machine lets us mount a small tmpfs, a disk too small from the start is refused before
# the first step, and so is ckpt make onto one (an HDF5 file a page larger than the disk too:
# HDF5 cannot recover from a failed write); an HDF5 file's space runs out before its first row.
#   full_disk.sh PLESHARD CHECKPOINT MPIEXEC
set -uo pipefail
app=$1; ckpt=$2; mpiexec=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
mounted=0
small=0
cleanup() {
  [ $mounted -eq 1 ] && umount "$work/tmpfs"
  [ $small -eq 1 ] && umount "$work/small"
  rm -rf "$work"
}
trap cleanup EXIT
source "$(dirname "$0")/fault_checks.sh"
mkdir -p "$work/tmpfs" "$work/plain"
cases=("plain 2" "plain 3")
mount -t tmpfs -o size=4m tmpfs "$work/tmpfs" 2>/dev/null && { mounted=1; cases+=("tmpfs 2" "tmpfs 3"); }
for case in "${cases[@]}"; do
  read -r where ranks <<<"$case"
  rm -rf "${work:?}/$where"/*
  fault=()
  [ "$where" = plain ] && fault=(-x PLESHARD_FAULT_WRITE_LIMIT=3000000)  # 3 MB per rank
  # About 40 MB of embeddings: more than either allows.
  ended_by_fault "full disk: $ranks ranks, $where" 60 "$mpiexec" -n "$ranks" --oversubscribe "${fault[@]}" "$app" run \
    --checkpoint "$ckpt" --synthetic 60 --synthetic-min-tokens 200 --synthetic-max-tokens 400 --step-tokens 256 \
    --part-tokens 4000 --quiet --etp "$ranks" --out "$work/$where/out.h5"
  expected="out.h5.partial: cannot write embeddings"
  [ "$where" = tmpfs ] && expected="out.h5.partial: the output needs [0-9]* bytes, the file system has [0-9]* free"
  one_message "full disk: $ranks ranks, $where" "$expected"
  no_output "full disk: $ranks ranks, $where" "$work/$where/out.h5"
done
sed 's/"ngram_vocab_size_base": [0-9]*/"ngram_vocab_size_base": 20000/' "$ckpt/config.json" >"$work/big.json"
# An HDF5 checkpoint's disk is reserved before its first row, so that space that runs out
# while it is written (another writer, a quota; here the file size limit) fails there, in one
# message, leaving nothing (a write that fails inside HDF5 cannot be recovered from).
# 12 MB: more than MPI's start-up writes, less than the 21 MB file.
rm -rf "${work:?}/plain"/*
(trap '' XFSZ; ulimit -f 12000; exec "$app" ckpt make --config "$work/big.json" --kind hdf5 --out "$work/plain/limited.h5" \
  --quiet) >"$work/out" 2>"$work/err"
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: ckpt make --kind hdf5 past the file size limit: exit $rc"; cat "$work/err"; exit 1; }
grep -q "limited.h5.partial: cannot reserve the [0-9]* bytes the checkpoint needs" "$work/err" \
  || { echo "FAIL: ckpt make --kind hdf5's refusal past the file size limit:"; cat "$work/err"; exit 1; }
[ "$(grep -c 'error:' "$work/err")" -eq 1 ] || { echo "FAIL: not one message:"; cat "$work/err"; exit 1; }
[ -z "$(ls -A "$work/plain")" ] || { echo "FAIL: ckpt make --kind hdf5 left files"; ls -la "$work/plain"; exit 1; }
echo "full disk: ckpt make --kind hdf5 past the file size limit refused before its first row"
# ckpt make onto a disk too small is refused before it writes, naming the file.
if [ $mounted -eq 1 ]; then
  rm -rf "${work:?}/tmpfs"/*
  if "$app" ckpt make --config "$work/big.json" --out "$work/tmpfs/ck" --quiet >"$work/out" 2>"$work/err"; then
    echo "FAIL: ckpt make wrote more than the disk holds"; exit 1
  fi
  grep -q "the checkpoint file needs [0-9]* bytes, the file system has [0-9]* free" "$work/err" \
    || { echo "FAIL: ckpt make's refusal:"; cat "$work/err"; exit 1; }
  [ ! -e "$work/tmpfs/ck" ] || { echo "FAIL: ckpt make left its directory"; find "$work/tmpfs"; exit 1; }
  echo "full disk: ckpt make refused before writing"
  "$app" ckpt make --config "$work/big.json" --kind hdf5 --out "$work/plain/ck.h5" --quiet >"$work/out" 2>"$work/err" \
    || { echo "FAIL: ckpt make --kind hdf5:"; cat "$work/err"; exit 1; }
  bytes=$(stat -c %s "$work/plain/ck.h5")
  mkdir -p "$work/small"
  mount -t tmpfs -o size=$(( bytes / 4096 * 4096 - 4096 )) tmpfs "$work/small" && small=1
  if "$app" ckpt make --config "$work/big.json" --kind hdf5 --out "$work/small/ck.h5" --quiet >"$work/out" 2>"$work/err"; then
    echo "FAIL: ckpt make --kind hdf5 wrote $bytes bytes onto a smaller disk"; exit 1
  fi
  grep -q "the checkpoint needs [0-9]* bytes, the file system has [0-9]* free" "$work/err" \
    || { echo "FAIL: ckpt make --kind hdf5's refusal:"; cat "$work/err"; exit 1; }
  [ -z "$(ls -A "$work/small")" ] || { echo "FAIL: ckpt make --kind hdf5 left files"; ls -la "$work/small"; exit 1; }
  echo "full disk: ckpt make --kind hdf5 refused a disk a page smaller than its $bytes-byte file"
fi
echo "full disk: every rank ended"
