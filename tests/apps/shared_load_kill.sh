#!/usr/bin/env bash
# A rank killed while the node's shared copy of the tables is being loaded (the maker of the
# segment, killed before it fills it) ends the job on every rank within seconds, with a
# non-zero exit, no output file, and no shared-memory segment left under /dev/shm: the host
# tier here, the pinned tier too where a GPU is present.
#   shared_load_kill.sh PLESHARD CHECKPOINT MPIEXEC
set -euo pipefail
app=$1; ckpt=$2; mpiexec=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
job=(run --checkpoint "$ckpt" --synthetic 20 --synthetic-max-tokens 100 --step-tokens 64 --etp 1 --quiet)
segments() { find /dev/shm -maxdepth 1 -name 'pleshard*' 2>/dev/null | sort; }  # pleshard-seg.<hex>, older forms too

killed() {  # killed TIER: the shared load of TIER, its maker killed
  local tier=$1 before rc start elapsed
  before=$(segments)
  start=$(date +%s)
  set +e
  PLESHARD_FAULT_KILL_IN_SHARED_LOAD=1 timeout 120 "$mpiexec" -n 3 --oversubscribe "$app" "${job[@]}" \
    --storage "$tier" --out "$work/$tier.h5" >"$work/$tier.log" 2>&1
  rc=$?
  set -e
  elapsed=$(( $(date +%s) - start ))
  [ $rc -ne 0 ] || { echo "FAIL: $tier: the killed job exited 0"; cat "$work/$tier.log"; exit 1; }
  [ $rc -ne 124 ] || { echo "FAIL: $tier: the job outlived its killed rank"; cat "$work/$tier.log"; exit 1; }
  [ "$elapsed" -le 60 ] || { echo "FAIL: $tier: ${elapsed} s to end"; exit 1; }
  [ ! -e "$work/$tier.h5" ] || { echo "FAIL: $tier: an output file was left"; exit 1; }
  [ "$(segments)" = "$before" ] || { echo "FAIL: $tier: a segment was left:"; segments; exit 1; }
  grep -qiE "signal 9|killed" "$work/$tier.log" || { echo "FAIL: $tier: no word of the kill"; cat "$work/$tier.log"; exit 1; }
  tiers+=("$tier")
}
tiers=()
killed host
if "$app" run --checkpoint "$ckpt" --synthetic 2 --storage pinned --summary-only --quiet >/dev/null 2>&1; then
  killed pinned
fi
# The same job unharmed: the fault is the only difference.
"$mpiexec" -n 3 --oversubscribe "$app" "${job[@]}" --storage host --out "$work/whole.h5" >/dev/null
[ -e "$work/whole.h5" ] || { echo "FAIL: the unharmed job wrote nothing"; exit 1; }
echo "shared load kill: every rank ended (${tiers[*]})"
