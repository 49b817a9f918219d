#!/usr/bin/env bash
# `pleshard run` from every storage tier this machine has gives output byte-identical to the
# host tier: disk always, also behind a row cache; device and pinned where a GPU is present,
# on one rank (NCCL carries the exchange; also replayed from a CUDA graph) and on three
# ranks sharing the GPU (host-staged MPI), pinned also behind a row cache, and gathered by the
# host and fetched ahead, also under a slowed decode (one rank, an ETP group of four
# ranks, and three ranks reading one copy in place). Tables made where
# the tier keeps them (--checkpoint synthetic: on the GPU for the device and pinned tiers)
# give the same bytes as the checkpoint ckpt make wrote. Tables split over two tiers
# (--placement) and placed automatically give them too, and so do tables in host memory
# held once per node (host and pinned tiers) or once per rank, and tables whose ranks read
# each other's rows in place (--exchange peer-read: the node's memory; one copy on the GPU
# three ranks share, mapped through CUDA's virtual memory API; a rank that cannot map it refused on every rank;
# the rank whose part the others read killed mid-job).
#   tiers.sh PLESHARD CHECKPOINT MPIEXEC EMBEDDINGS_EQUAL
set -euo pipefail
app=$1; ckpt=$2; mpiexec=$3; equal=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
job=(run --synthetic 30 --synthetic-max-tokens 150 --step-tokens 96 --decode-tokens 3 --quiet --json)
field() { python3 "$(dirname "$0")/report_field.py" "$@"; }  # field LOG PATH: a value of LOG's report
"$app" "${job[@]}" --checkpoint "$ckpt" --storage host --out "$work/host.h5" >/dev/null

check() {  # check NAME RANKS ETP TIER [BACKEND [MORE OPTIONS]]
  local name=$1 ranks=$2 etp=$3 tier=$4 backend=${5:-}
  shift $(( $# < 5 ? $# : 5 ))
  local tables=(--checkpoint "$ckpt")
  case $name in synthetic_*) tables=(--checkpoint synthetic --config "$ckpt/config.json") ;; esac
  local where=(--storage "$tier")  # a placement: auto, or a tier per table
  case $tier in auto|*=*) where=(--placement "$tier") ;; esac
  "$mpiexec" -n "$ranks" --oversubscribe "$app" "${job[@]}" "${tables[@]}" --etp "$etp" "${where[@]}" "$@" \
    --out "$work/$name.h5" >"$work/$name.log"
  "$equal" "$work/host.h5" "$work/$name.h5" 2 bfloat16 || { echo "FAIL: $name differs from the host tier"; exit 1; }
  if [ -n "$backend" ]; then
    [ "$(field "$work/$name.log" backend)" = "$backend" ] \
      || { echo "FAIL: $name did not use $backend"; cat "$work/$name.log"; exit 1; }
  fi
  checked+=("$name")
}
checked=()
# killed_peer TIER: rank 0, whose part of the rows the others read in place, killed after two
# output parts: the job ends on every rank within a minute, its output not claimed.
killed_peer() {
  local start=$SECONDS
  if PLESHARD_FAULT_KILL_AFTER_PARTS=2 timeout 120 "$mpiexec" -n 3 --oversubscribe "$app" "${job[@]}" \
      --checkpoint "$ckpt" --storage "$1" --etp 3 --exchange peer-read --part-tokens 500 \
      --out "$work/killed_$1.h5" >"$work/killed_$1.log" 2>&1; then
    echo "FAIL: $1: a job whose peer was killed exited 0"; exit 1
  fi
  [ $((SECONDS - start)) -le 60 ] && [ ! -e "$work/killed_$1.h5" ] \
    || { echo "FAIL: $1: a killed peer: $((SECONDS - start)) s"; ls "$work"; cat "$work/killed_$1.log"; exit 1; }
}
fetched_ahead() {  # fetched_ahead NAME: every step after the first begun inside the step before
  [ "$(field "$work/$1.log" steps_fetched_ahead)" -eq $(( $(field "$work/$1.log" steps) - 1 )) ] \
    || { echo "FAIL: $1: not every step after the first was fetched ahead"; cat "$work/$1.log"; exit 1; }
}
hits() {  # hits NAME: its cache served some lookups (a cache that never hits would pass the bytes check)
  [ "$(field "$work/$1.log" cache.0.hits)" -gt 0 ] || { echo "FAIL: $1: no cache hits"; cat "$work/$1.log"; exit 1; }
}
# A profile of another stream of the tables (the same model's tables, other requests) fills
# the static part; one made for other tables is refused on every rank.
python3 - "$work/profiled.jsonl" <<'PY'
import json, random, sys
random.seed(9)
with open(sys.argv[1], "w") as f:
    for r in range(40):
        f.write(json.dumps({"id": f"p{r}", "tokens": [random.randrange(1, 400) for _ in range(random.randrange(5, 120))]}) + "\n")
PY
"$app" profile --checkpoint "$ckpt" --requests "$work/profiled.jsonl" --out "$work/profile.h5" --quiet >/dev/null
check disk_1 1 1 disk
check disk_3 3 3 disk
check disk_direct_2 2 2 disk "" --disk-reads direct     # past the page cache
check disk_cache_1 1 1 disk "" --cache-rows 64         # evictions every step
hits disk_cache_1
check disk_cache_3 3 3 disk "" --cache-gb 0.01         # larger than the table
hits disk_cache_3
check disk_profile_2 2 2 disk "" --cache-rows 3000 --cache-profile "$work/profile.h5"
[ "$(field "$work/disk_profile_2.log" cache.0.static_rows)" -gt 0 ] || { echo "FAIL: no static rows"; exit 1; }
python3 -c 'import sys; sys.exit(not float(sys.argv[1]) > 0)' "$(field "$work/disk_profile_2.log" cache_fill_s)" \
  || { echo "FAIL: no static fill time"; cat "$work/disk_profile_2.log"; exit 1; }
other=$(mktemp -d)
sed 's/"ngram_vocab_size_base": 1000/"ngram_vocab_size_base": 3000/' "$ckpt/config.json" >"$other/config.json"
"$app" profile --checkpoint synthetic --config "$other/config.json" --requests "$work/profiled.jsonl" \
  --out "$work/other.h5" --quiet >/dev/null
if "$mpiexec" -n 2 --oversubscribe "$app" "${job[@]}" --checkpoint "$ckpt" --storage disk --cache-rows 100 \
    --cache-profile "$work/other.h5" --summary-only >"$work/other.log" 2>&1; then
  echo "FAIL: a profile of other tables was taken"; exit 1
fi
[ "$(grep -c "made for other tables" "$work/other.log")" -ge 1 ] || { echo "FAIL: refusal unclear"; cat "$work/other.log"; exit 1; }
rm -rf "$other"
check synthetic_host_2 2 2 host
exchanged() {  # exchanged NAME STRATEGY: the report names the strategy the job ran
  [ "$(field "$work/$1.log" exchange)" = "$2" ] || { echo "FAIL: $1 did not run $2"; cat "$work/$1.log"; exit 1; }
}
# `auto` reads one copy in place where a group is on one node with every table on the host
# tier; otherwise (tables on two tiers) owner.
exchanged synthetic_host_2 peer-read
# Tables on two tiers (a disk table beside a host one holds its rank's rows, as the host one
# does), a cache in front of the disk one only; and the automatic placement (host here).
placed() {  # placed NAME PLACEMENT: the report names it
  [ "$(field "$work/$1.log" placement)" = "$2" ] || { echo "FAIL: $1 placed otherwise"; cat "$work/$1.log"; exit 1; }
}
check mixed_host_disk_2 2 2 "0=host,1=disk"
placed mixed_host_disk_2 "0=host,1=disk"
exchanged mixed_host_disk_2 owner
check mixed_disk_host_3 3 1 "0=disk,1=host" "" --cache-rows 64
placed mixed_disk_host_3 "0=disk,1=host"
hits mixed_disk_host_3
[ "$(field "$work/mixed_disk_host_3.log" cache.1.dynamic_rows)" = 0 ] || { echo "FAIL: a cache before the host tier"; exit 1; }
# One copy per node of the host tier's rows: the ranks holding the same rows share it (4
# with --etp 1, pairs with --etp 2, pairs of the simulated nodes of 2 ranks), the same bytes
# as a copy per rank; counted once in the report.
shared() {  # shared NAME RANKS: the most ranks sharing one copy, as reported
  [ "$(field "$work/$1.log" table_shared_ranks)" = "$2" ] || { echo "FAIL: $1 not shared by $2"; cat "$work/$1.log"; exit 1; }
}
one_copy() {  # one_copy TIER: 4 ranks (--etp 1) share one copy, counted once; and each its own
  check "$1_shared_4" 4 1 "$1"
  shared "$1_shared_4" 4
  check "$1_own_4" 4 1 "$1" "" --no-shared-tables
  shared "$1_own_4" 1
  [ "$(field "$work/$1_own_4.log" table_load_bytes)" = "$(( 4 * $(field "$work/$1_shared_4.log" table_load_bytes) ))" ] \
    || { echo "FAIL: $1: a shared copy not counted once"; exit 1; }
}
one_copy host
# The automatic placement counts that one copy: its share of the node's host memory for 4
# ranks holding the same rows is 4x what it is where each keeps its own (the GPU, where there
# is one, kept too small for the tables: they go to pinned host memory).
check auto_shared_4 4 1 auto "" --gpu-memory-limit 0.001
check auto_own_4 4 1 auto "" --gpu-memory-limit 0.001 --no-shared-tables
host_left() { field "$work/$1.log" placement_plan.0.plan | sed -n "s/.*host memory's \([0-9.]*\) GB.*/\1/p"; }
python3 -c 'import sys; a, b = map(float, sys.argv[1:]); sys.exit(not a > 3 * b)' "$(host_left auto_shared_4)" \
  "$(host_left auto_own_4)" || { echo "FAIL: the shared copy not counted once by the plan"; cat "$work/auto_"*_4.log; exit 1; }
check host_shared_etp_4 4 2 host
shared host_shared_etp_4 2
PLESHARD_RANKS_PER_NODE=2 check host_nodes_4 4 1 host
shared host_nodes_4 2
check host_peer_3 3 3 host none --exchange peer-read
shared host_peer_3 3
check mixed_host_disk_peer_2 2 2 "0=host,1=disk" none --exchange peer-read
killed_peer host
check auto_2 2 2 auto
[ "$(field "$work/auto_2.log" placement_auto)" = true ] || { echo "FAIL: auto not reported"; exit 1; }
if "$app" "${job[@]}" --checkpoint "$ckpt" --storage device --summary-only >"$work/probe.log" 2>&1; then
  nccl=nccl
  [ "$(field "$work/probe.log" backend)" = nccl ] || nccl=mpi-staged  # a build without NCCL
  check device_1 1 1 device "$nccl"
  check pinned_1 1 1 pinned "$nccl"
  if [ "$nccl" = nccl ]; then
    check device_graph_1 1 1 device nccl --cuda-graph
    check pinned_graph_1 1 1 pinned nccl --cuda-graph
  fi
  # `auto` on one GPU with the device tier: peer reads; owner asked for goes over MPI.
  check device_3 3 3 device none
  exchanged device_3 peer-read
  check device_owner_3 3 3 device mpi-staged --exchange owner
  check pinned_3 3 3 pinned mpi-staged
  # Pinned rows gathered by the host, alone and sharing each step's rows with the GPU (the
  # share moved from step to step): the same bytes; the report counts what each did.
  check pinned_gather_1 1 1 pinned "$nccl" --host-reads gather
  check pinned_both_3 3 3 pinned mpi-staged --host-reads both
  check pinned_both_cache_1 1 1 pinned "$nccl" --host-reads both --cache-rows 64
  [ "$(field "$work/pinned_gather_1.log" host_gather_share)" = 1.0 ] \
    || { echo "FAIL: gather: the host did not copy every row"; cat "$work/pinned_gather_1.log"; exit 1; }
  # One rank's host gathers are fetched ahead (each step's beside the decode of the one
  # before), and give the same bytes when every decode is held back 2 ms on the GPU, so
  # that the next step's gather and copy run while this step's rows wait for it.
  fetched_ahead pinned_gather_1
  export PLESHARD_FAULT_DECODE_DELAY_US=2000
  check pinned_gather_slow_1 1 1 pinned "$nccl" --host-reads gather
  check pinned_both_slow_1 1 1 pinned "$nccl" --host-reads both
  # Ranks reading one copy of the pinned rows in place (peer reads) and gathering their
  # rows on the host, each its own staging.
  check pinned_peer_gather_slow_3 3 3 pinned none --exchange peer-read --host-reads gather
  fetched_ahead pinned_peer_gather_slow_3
  # An ETP group of several ranks (2 DP ranks x TP 2) fetching ahead: the next step's slots
  # gathered, its rows gathered and copied, while this step's decode is held back.
  check pinned_group_gather_slow_4 4 4 pinned mpi-staged --tp 2 --exchange gather-reduce --host-reads gather
  fetched_ahead pinned_group_gather_slow_4
  unset PLESHARD_FAULT_DECODE_DELAY_US
  python3 -c 'import sys; s = float(sys.argv[1]); sys.exit(not 0 < s < 1)' \
    "$(field "$work/pinned_both_3.log" host_gather_share)" \
    || { echo "FAIL: both: the rows were not shared"; cat "$work/pinned_both_3.log"; exit 1; }
  check pinned_cache_1 1 1 pinned "$nccl" --cache-rows 64
  hits pinned_cache_1
  check pinned_cache_3 3 3 pinned mpi-staged --cache-rows 1000 --cache-profile "$work/profile.h5"
  hits pinned_cache_3
  if [ "$nccl" = nccl ]; then check pinned_cache_graph_1 1 1 pinned nccl --cache-rows 200 --cuda-graph; fi
  check synthetic_device_1 1 1 device "$nccl"
  check synthetic_pinned_3 3 3 pinned mpi-staged
  # One copy per node of the pinned tier's rows too, locked by each rank for the GPU (a
  # synthetic table made on the GPU by one of them).
  one_copy pinned
  check synthetic_pinned_shared_4 4 1 pinned "" --cache-rows 64
  shared synthetic_pinned_shared_4 4
  hits synthetic_pinned_shared_4
  check mixed_device_pinned_1 1 1 "0=device,1=pinned" "$nccl"
  placed mixed_device_pinned_1 "0=device,1=pinned"
  check mixed_pinned_disk_3 3 3 "0=pinned,1=disk" mpi-staged --cache-rows 200
  hits mixed_pinned_disk_3
  if [ "$nccl" = nccl ]; then check mixed_graph_1 1 1 "0=pinned,1=device" nccl --cuda-graph; fi
  check auto_device_1 1 1 auto "$nccl"
  placed auto_device_1 device
  # Peer reads: one copy of the device rows on the GPU the ranks share, each rank filling
  # its part (from the files, and made in place), read in place by every rank, eager and
  # replayed from CUDA graphs; beside a pinned table held once in the node's memory.
  check device_peer_3 3 3 device none --exchange peer-read
  shared device_peer_3 3
  check synthetic_device_peer_3 3 3 device none --exchange peer-read
  check device_peer_graph_3 3 3 device none --exchange peer-read --cuda-graph
  check mixed_peer_3 3 3 "0=device,1=pinned" none --exchange peer-read --cache-rows 64
  check device_peer_tp_4 4 2 device none --exchange peer-read --tp 2
  killed_peer device
  if PLESHARD_FAULT_PEER_MAP=1 "$mpiexec" -n 2 --oversubscribe "$app" "${job[@]}" --checkpoint "$ckpt" \
      --storage device --etp 2 --exchange peer-read --out "$work/unmapped.h5" >"$work/unmapped.log" 2>&1; then
    echo "FAIL: rows that could not be mapped were read"; exit 1
  fi
  [ "$(grep -c "error: device tier: table 0: cannot map the rows of the group's rank" "$work/unmapped.log")" -ge 1 ] &&
    [ ! -e "$work/unmapped.h5" ] || { echo "FAIL: an unmapped peer's refusal"; cat "$work/unmapped.log"; exit 1; }
elif ! grep -qE "no GPU (found|support)" "$work/probe.log"; then
  echo "FAIL: --storage device failed:"; cat "$work/probe.log"; exit 1
fi
echo "tiers: identical (${checked[*]})"
