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
source "$(dirname "$0")/fault_checks.sh"
job=(run --checkpoint "$ckpt" --synthetic 20 --synthetic-max-tokens 100 --step-tokens 64 --etp 1 --quiet)
segments() { find /dev/shm -maxdepth 1 -name 'pleshard*' 2>/dev/null | sort; }  # pleshard-seg.<hex>, older forms too

killed() {  # killed TIER: the shared load of TIER, its maker killed
  local tier=$1 before
  before=$(segments)
  PLESHARD_FAULT_KILL_IN_SHARED_LOAD=1 ended_by_fault "shared load kill: $tier" 60 \
    "$mpiexec" -n 3 --oversubscribe "$app" "${job[@]}" --storage "$tier" --out "$work/$tier.h5"
  no_output "shared load kill: $tier" "$work/$tier.h5"
  [ "$(segments)" = "$before" ] || { segments; fail "$tier: a segment was left"; }
  grep -qiE "signal 9|killed" "$work/err" "$work/out" || fail "$tier: no word of the kill"
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
