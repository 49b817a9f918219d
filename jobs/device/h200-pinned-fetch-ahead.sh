#!/usr/bin/env bash
# After h200-build.sh (same build directory): the pinned tier's fetch ahead on one GPU (one
# rank: each step's host gather and copy run beside the decode of the step before).
# - tests: the fetch ahead's tests and the GPU tests of the tiers, the stall, one rank's
#   layouts, graphs, started steps and toy tier (tests.txt);
# - ab: the job of DeepSeek-V4.1-Flash's shape (h200-engram-bench.sh's: 2 tables of 16.8M
#   rows x 256 values, FP8 + E8M0, synthetic, on the folded corpus A) on the pinned tier,
#   --host-reads auto and gather ($HOST_READS), this build fetching ahead, this build with
#   --no-fetch-ahead and a baseline build (BASELINE_APP, where given), taking turns, three
#   rounds ($AB_ROUNDS); one line per run (ab.txt);
# - group: ETP groups of several ranks sharing the GPU (2 ranks --etp 2, 4 ranks --etp 4
#   --tp 2), pinned, gather-reduce, reduce-scatter and owner, --host-reads gather and auto: the
#   output against the same job with --no-fetch-ahead (byte for byte), the steps fetched
#   ahead and tokens/s of both (group.txt); then gather-reduce and owner with each decode
#   held back 2 ms (PLESHARD_FAULT_DECODE_DELAY_US).
#   [CORPUS=...] [PARTS="tests ab group"] [BASELINE_APP=...] jobs/device/h200-pinned-fetch-ahead.sh
# Results go to $OUT (default ./out).
set -uo pipefail
source "$(dirname "$0")/env.sh"
parts=${PARTS:-tests ab}
rc=0

if part tests; then
  ctest --test-dir "$build" --output-on-failure --parallel 4 \
    -R "fetch_ahead|gpu_tiers|run_tiers|run_stall$|layouts_np1|cuda_graph_np1|started_steps_np1|toy_tier_np1" \
    >"$out/tests.txt" 2>&1 || rc=1
  grep -E "tests passed|tests failed|\*\*\*Failed|Passed|SKIPPED" "$out/tests.txt"
fi

if part ab; then
  # The models and the folded corpus, as h200-engram-bench.sh makes them.
  PARTS=none "$(dirname "$0")/h200-engram-bench.sh" >/dev/null || exit 1
  models=/tmp/pleshard-engram
  folded=$models/corpus-folded.jsonl
  for round in $(seq "${AB_ROUNDS:-3}"); do
    for reads in ${HOST_READS:-auto gather}; do
      for which in ahead whole baseline; do
        a=$app
        more=()
        case $which in
          whole) more=(--no-fetch-ahead) ;;
          baseline) [ -x "${BASELINE_APP:-}" ] || continue; a=$BASELINE_APP ;;
        esac
        "$a" run --config "$models/shape/config.json" --checkpoint synthetic --storage pinned --host-reads "$reads" \
          --requests "$folded" --summary-only --quiet --json "${more[@]}" >"$out/run.json" 2>"$out/last.log" ||
          { rc=1; tail -3 "$out/last.log"; continue; }
        python3 -c 'import json,sys; r=json.loads([l for l in open(sys.argv[1]) if l.startswith("{")][-1])
print(sys.argv[2], *[f"{k}={r.get(k, 0):.4g}" for k in ["wall_s","tokens_per_s","steps","steps_fetched_ahead",
  "phase_fetch_s","phase_decode_s"]])' "$out/run.json" "round $round --host-reads $reads $which" | tee -a "$out/ab.txt"
      done
    done
  done
fi
if part group; then
  job=(run --config jobs/example/config.json --checkpoint synthetic --storage pinned --synthetic 200
       --step-tokens 512 --quiet --json)
  # pair N LAYOUT EXCHANGE READS [WHAT]: the job fetching ahead and whole, byte for byte.
  pair() {
    local n=$1 lay=$2 exchange=$3 reads=$4 what=${5:-}
    for which in ahead whole; do
      more=()
      [ "$which" = whole ] && more=(--no-fetch-ahead)
      rm -f "/tmp/group-$which.h5"
      mpirun -n "$n" --oversubscribe "$app" "${job[@]}" $lay --exchange "$exchange" --host-reads "$reads" \
        --out "/tmp/group-$which.h5" "${more[@]}" >"$out/run.json" 2>"$out/last.log" ||
        { rc=1; echo "FAILED: -n $n $lay $exchange $reads $which $what"; tail -3 "$out/last.log"; continue; }
      python3 -c 'import json,sys; r=json.loads([l for l in open(sys.argv[1]) if l.startswith("{")][-1])
print(sys.argv[2], *[f"{k}={r.get(k, 0):.4g}" for k in ["tokens_per_s","steps","steps_fetched_ahead"]])' \
        "$out/run.json" "-n $n $lay --exchange $exchange --host-reads $reads $which $what" | tee -a "$out/group.txt"
    done
    cmp -s /tmp/group-ahead.h5 /tmp/group-whole.h5 && echo "  identical" | tee -a "$out/group.txt" ||
      { rc=1; echo "  FAILED: the outputs differ" | tee -a "$out/group.txt"; }
  }
  for layout in "2 --etp 2" "4 --etp 4 --tp 2"; do
    read -r n lay <<<"$layout"
    for exchange in gather-reduce reduce-scatter owner; do
      for reads in gather auto; do pair "$n" "$lay" "$exchange" "$reads"; done
    done
  done
  # Each decode held back 2 ms on the GPU's stream (a test fault), so that the next step's
  # routing, ids and gathers run while this step's keys and rows wait for their decode.
  for exchange in gather-reduce owner; do
    PLESHARD_FAULT_DECODE_DELAY_US=2000 pair 4 "--etp 4 --tp 2" "$exchange" gather "(each decode held 2 ms)"
  done
fi
exit $rc
