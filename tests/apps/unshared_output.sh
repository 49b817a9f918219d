#!/usr/bin/env bash
# The output's directory on each node's own disk at one path (simulated: each rank in a mount
# namespace of its own, the path bind-mounted onto another directory for each): refused on
# every rank with one message naming the lock file, for a fresh job and over a killed job's
# files copied onto both "nodes" (before, the second node's rows went into its own partial
# file and the output on the first looked complete), and nothing left that looks complete.
# The same job on one shared directory runs. Without mount namespaces: skipped.
#   unshared_output.sh PLESHARD CHECKPOINT MPIEXEC
set -uo pipefail
app=$1; ckpt=$2; mpiexec=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/fault_checks.sh"
mkdir -p "$work/node0" "$work/node1" "$work/mnt"
# on_node DIR COMMAND...: COMMAND with DIR mounted at $work/mnt, in a mount namespace of its own.
on_node="$work/on_node.sh"
printf '%s\n' '#!/bin/bash' 'dir=$1; at=$2; shift 2' \
  'exec unshare -m --propagation private bash -c '"'"'mount --bind "$0" "$1" && shift && exec "$@"'"'"' "$dir" "$at" "$@"' \
  >"$on_node"
chmod +x "$on_node"
if ! "$on_node" "$work/node0" "$work/mnt" true 2>/dev/null; then
  echo "unshared output: skipped (no mount namespaces here)"
  exit 0
fi
job=(run --checkpoint "$ckpt" --synthetic 40 --part-tokens 2000 --quiet --collective-timeout 10 --out "$work/mnt/x.h5")
two_nodes() {  # two_nodes WHAT [ENV=VALUE]: rank 0 on node0, rank 1 on node1
  ended_by_fault "unshared output: $1" 30 "$mpiexec" -n 1 --oversubscribe "$on_node" "$work/node0" "$work/mnt" \
    "$app" "${job[@]}" : -n 1 "$on_node" "$work/node1" "$work/mnt" "$app" "${job[@]}"
}
two_nodes "fresh"
one_message "fresh" "x.h5.lock: cannot open the lock file the first rank made: No such file or directory"
no_output "fresh" "$work/node0/x.h5"
# A job killed after its first part on node0's disk, its files copied onto node1's.
"$mpiexec" -n 2 --oversubscribe -x PLESHARD_FAULT_KILL_AFTER_PARTS=1 "$on_node" "$work/node0" "$work/mnt" \
  "$app" "${job[@]}" >"$work/job.log" 2>&1 && fail "the killed job exited 0"
[ -e "$work/node0/x.h5.partial" ] || fail "the killed job left no partial output"
cp -p "$work/node0"/x.h5.* "$work/node1/"
two_nodes "a killed job's files on both disks"
one_message "a killed job's files on both disks" "rank 1 finds another job's lock file than rank 0 made"
no_output "a killed job's files on both disks" "$work/node0/x.h5"
# One directory under both: the job resumes and completes.
"$mpiexec" -n 1 --oversubscribe "$on_node" "$work/node0" "$work/mnt" "$app" "${job[@]}" : \
  -n 1 "$on_node" "$work/node0" "$work/mnt" "$app" "${job[@]}" >"$work/job.log" 2>"$work/err" ||
  fail "the job on one shared directory failed"
[ -e "$work/node0/x.h5" ] || fail "the job on one shared directory wrote no output"
echo "unshared output: refused on every rank"
