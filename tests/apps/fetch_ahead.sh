#!/usr/bin/env bash
# The disk tier's fetch ahead (a step's rows read while the step before is decoded), on 3
# ranks across several parts, from safetensors and from HDF5: the output is byte-identical
# to the same job with --no-fetch-ahead, and every step after each rank's first was fetched
# ahead. So too for
# ETP groups of several ranks that exchange (a table on the host tier beside one on the
# disk tier, each rank holding its part of both): 4 ranks as one group of 2 DP ranks x TP 2
# (gather-reduce, and reduce-scatter with its TP gather), where the next step's slots are
# gathered between this step's fetch and its decode, on every rank alike — also where one
# rank (injected) would not begin ahead at some step sizes —, and as two groups under
# sequence parallelism (--etp 2 --tp 2: one DP rank each, combined by a reduce-scatter
# over TP after the next step's begin); and the owner exchange, whose next step routes,
# sends its ids and submits its fetch once this step's rows are back (its keys kept from the
# next plan), in both layouts and in fixed-size messages, and in two levels over two nodes
# (simulated: --exchange hierarchical, and peer-read's owner exchange between the nodes),
# also with every decode held back.
# Then a read
# that fails in a fetch begun ahead (one rank's third step, begun inside its second;
# injected) ends the job on every rank within seconds, with one message naming the
# checkpoint, and no output left.
#   fetch_ahead.sh PLESHARD CHECKPOINT MPIEXEC
set -uo pipefail
app=$1; ckpt=$2; mpiexec=$3
here=$(dirname "$0")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$here/fault_checks.sh"
# ahead_and_plain N WHAT ARGS...: the job on N ranks fetching ahead and with --no-fetch-ahead,
# byte for byte the same output; every step but the first fetched ahead, none without.
# Leaves the first run's report in $work/ahead.json.
ahead_and_plain() {
  local n=$1 what=$2; shift 2
  for which in ahead plain; do
    local more=()
    [ "$which" = plain ] && more=(--no-fetch-ahead)
    rm -f "$work/$which.h5"
    "$mpiexec" -n "$n" --oversubscribe "$app" "$@" "${more[@]}" --out "$work/$which.h5" >"$work/$which.json" \
      2>"$work/err" || { echo "FAIL: $what ($which) failed"; cat "$work/err"; exit 1; }
  done
  cmp "$work/ahead.h5" "$work/plain.h5" || { echo "FAIL: $what: the outputs differ"; exit 1; }
  local steps ahead plain
  steps=$(python3 "$here/report_field.py" "$work/ahead.json" steps)
  ahead=$(python3 "$here/report_field.py" "$work/ahead.json" steps_fetched_ahead)
  plain=$(python3 "$here/report_field.py" "$work/plain.json" steps_fetched_ahead)
  echo "fetch ahead: $what: $steps steps, $ahead fetched ahead; $plain without"
  [ "$steps" -ge 10 ] && [ "$ahead" -eq $((steps - 1)) ] && [ "$plain" -eq 0 ] ||
    { echo "FAIL: expected every step but the first fetched ahead, and none without"; exit 1; }
}

job=(run --checkpoint "$ckpt" --storage disk --synthetic 40 --synthetic-max-tokens 200 --step-tokens 64
     --decode-tokens 3 --part-tokens 700 --etp 3 --quiet --json)
ahead_and_plain 3 "disk, 3 ranks" "${job[@]}"
parts=$(python3 "$here/report_field.py" "$work/ahead.json" parts)
[ "$parts" -ge 2 ] || { echo "FAIL: expected steps across parts, got $parts part(s)"; exit 1; }
# The same tables in pleshard's HDF5 layout: a step's rows are plain reads of the file there
# too (the chunks located when it opens), so they are read on the store's thread and fetched
# ahead as well.
"$app" ckpt convert --checkpoint "$ckpt" --out "$work/tiny.h5" --kind hdf5 >/dev/null ||
  { echo "FAIL: converting the checkpoint to HDF5"; exit 1; }
h5job=("${job[@]}")
h5job[2]="$work/tiny.h5"
ahead_and_plain 3 "disk, 3 ranks, HDF5" "${h5job[@]}"

# ETP groups of several ranks that exchange.
placed=(run --checkpoint "$ckpt" --placement "0=host,1=disk" --synthetic 40 --synthetic-max-tokens 200 --step-tokens 64
        --threads 1 --quiet --json)
ahead_and_plain 4 "one group of 2 DP ranks x TP 2, gather-reduce" "${placed[@]}" --etp 4 --tp 2 --exchange gather-reduce
ahead_and_plain 4 "one group of 2 DP ranks x TP 2, reduce-scatter" "${placed[@]}" --etp 4 --tp 2 \
  --exchange reduce-scatter
ahead_and_plain 4 "two groups of TP 2, sequence parallel" "${placed[@]}" --etp 2 --tp 2 --exchange gather-reduce
ahead_and_plain 4 "one group of 2 DP ranks x TP 2, owner" "${placed[@]}" --etp 4 --tp 2 --exchange owner
ahead_and_plain 4 "two groups of TP 2, sequence parallel, owner" "${placed[@]}" --etp 2 --tp 2 --exchange owner
ahead_and_plain 3 "one group of 3, owner, decode steps, the small ones in fixed-size messages" "${placed[@]}" \
  --etp 3 --exchange owner --decode-tokens 3 --owner-fixed-below 100
PLESHARD_RANKS_PER_NODE=2 ahead_and_plain 4 "two nodes of 2, hierarchical, 2 DP ranks x TP 2, decode steps" \
  "${placed[@]}" --etp 4 --tp 2 --exchange hierarchical --decode-tokens 3
PLESHARD_RANKS_PER_NODE=2 ahead_and_plain 4 "two nodes of 2, peer-read" "${placed[@]}" --etp 4 --exchange peer-read
# Each decode held back 20 ms (a test fault; on a GPU, on its stream), so that the next step
# begun ahead runs its routing, ids and fetch while this step's keys and rows wait for it.
PLESHARD_FAULT_DECODE_DELAY_US=20000 ahead_and_plain 4 "owner, each decode held 20 ms" "${placed[@]}" --etp 4 \
  --tp 2 --exchange owner
held=$(python3 "$here/report_field.py" "$work/ahead.json" phase_decode_s)
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 0.02 * 35 else 1)" "$held" ||
  { echo "FAIL: the decode delay did not hold the owner exchange's decodes (decode phase $held s)"; exit 1; }
PLESHARD_RANKS_PER_NODE=2 PLESHARD_FAULT_DECODE_DELAY_US=20000 ahead_and_plain 4 \
  "two nodes of 2, hierarchical, each decode held 20 ms" "${placed[@]}" --etp 4 --exchange hierarchical

# One rank answers that steps of some slot sizes may not begin beside a decode (injected;
# decode steps of a few tokens give sizes of every kind): its group begins those steps
# whole, every rank alike, the output the same; a rank that went its own way would cross
# its group's collectives (a hang, or wrong rows).
varied=("${placed[@]}" --decode-tokens 3 --etp 4 --tp 2 --exchange gather-reduce)
rm -f "$work/refused.h5"
PLESHARD_FAULT_AHEAD_REFUSED=1 PLESHARD_FAULT_AHEAD_REFUSED_RANK=1 timeout 30 "$mpiexec" -n 4 --oversubscribe "$app" \
  "${varied[@]}" --out "$work/refused.h5" >"$work/refused.json" 2>"$work/err" ||
  { echo "FAIL: the job with one rank refusing some sizes failed (exit $?)"; cat "$work/err"; exit 1; }
rm -f "$work/plain.h5"
"$mpiexec" -n 4 --oversubscribe "$app" "${varied[@]}" --no-fetch-ahead --out "$work/plain.h5" >/dev/null \
  2>"$work/err" || { echo "FAIL: the job without fetch ahead failed"; cat "$work/err"; exit 1; }
cmp "$work/refused.h5" "$work/plain.h5" || { echo "FAIL: one rank refusing some sizes: the outputs differ"; exit 1; }
steps=$(python3 "$here/report_field.py" "$work/refused.json" steps)
ahead=$(python3 "$here/report_field.py" "$work/refused.json" steps_fetched_ahead)
echo "fetch ahead: one rank refusing some sizes: $steps steps, $ahead fetched ahead"
[ "$ahead" -ge 1 ] && [ "$ahead" -lt $((steps - 1)) ] ||
  { echo "FAIL: expected some steps, not all, fetched ahead"; exit 1; }

# failed_read N WHAT ARGS...: rank 1's third read fails, in a fetch begun inside its second step.
failed_read() {
  local n=$1 what=$2; shift 2
  rm -f "$work"/failed.h5*  # and the first run's progress, kept for a resume
  PLESHARD_FAULT_DISK_READ_FAILURE=2 PLESHARD_FAULT_DISK_READ_FAILURE_RANK=1 ended_by_fault \
    "fetch ahead: $what: a failed read on rank 1" 30 "$mpiexec" -n "$n" --oversubscribe "$app" "$@" --out "$work/failed.h5"
  one_message "fetch ahead: $what" "pleshard: rank 1: error: $ckpt: reading a step's rows: Input/output error"
  no_output "fetch ahead: $what" "$work/failed.h5"
}
failed_read 3 "disk, 3 ranks" "${job[@]}"
failed_read 4 "owner" "${placed[@]}" --etp 4 --tp 2 --exchange owner
echo "fetch ahead: identical, and every rank ended"
