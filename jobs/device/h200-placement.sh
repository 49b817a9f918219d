#!/usr/bin/env bash
# After h200-build.sh (same build directory): tables where they fit best on one H200 machine.
# - tests: placement parsing and planning, every layout with the tables split over two tiers
#   (device beside pinned, pinned beside disk) against one process (test_layouts, 1 rank);
# - qwen: Qwen3.8-Flash-Next's real FP8 table (51.2 GB, made in place) under
#   `run --placement auto` on the corpus's second half: the device tier; then with
#   --gpu-memory-limit 20 (GB): pinned, with the GPU memory left as a row cache filled from a
#   profile of the corpus's first half; the plan and the cache's hits from the JSON report;
# - v41: the whole DeepSeek-V4.1-Flash Engram (the real config: two tables of 384M rows,
#   101.4 GB each as FP8 + E8M0, made in place; a synthetic token map) and the corpus folded
#   into its vocabulary: `run --placement auto` with a cache profile of the folded first half,
#   on the folded second half (one table on the device, the other pinned, the rest of HBM a
#   cache in front of it), beside the same placement without the cache (the pinned table
#   alone); --host-reads auto against uva (V41_HOST_READS), each step begun ahead of the
#   decode before it, and whole (V41_STEPS="ahead whole": --no-fetch-ahead too); bench step of that automatic
#   placement at B = 1, 64, 1024 (V41_JOBS_ONLY=1: only the runs with the cache);
# - tiers: run's output from every tier and from tables split over two (run_tiers), and the
#   placement refusals, against the host tier's;
# - shared: one copy per node of the pinned tier's rows: 4 ranks sharing the GPU, --etp 1,
#   the quick-start model with and without --no-shared-tables, then Qwen's real FP8 table
#   (51.2 GB, made in place) on the corpus's second half — four copies (205 GB) would not fit
#   the machine; the node's memory as the ranks' summed PSS at its peak (jobs/peak_pss.py).
#   [CORPUS=...] [PARTS="tests qwen v41 tiers shared"] [V41_HOST_READS="auto uva"] [V41_STEPS="ahead whole"] [V41_JOBS_ONLY=1] jobs/device/h200-placement.sh
# Results go to $OUT (default ./out): placement.txt, placement.jsonl (and shared.log: the shared runs' output).
set -uo pipefail
source "$(dirname "$0")/env.sh"
parts=${PARTS:-tests qwen v41 tiers}
rc=0
rm -f "$out/placement.txt" "$out/placement.jsonl" "$out/shared.log"
[ -f "$corpus" ] || { echo "FAILED: no corpus at $corpus (jobs/make_corpus.sh, or set CORPUS)"; exit 1; }
half=$(( $(wc -l <"$corpus") / 2 ))
head -n "$half" "$corpus" >/tmp/corpus-first.jsonl
tail -n +"$(( half + 1 ))" "$corpus" >/tmp/corpus-second.jsonl
# plan FILE: the last report's placement, plan and cache, in a line each.
plan() {
  python3 - "$out/placement.jsonl" <<'PY' | tee -a "$out/placement.txt"
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if '"schema_version"' in l][-1]
print(f"  placement {r['placement']} (auto {r['placement_auto']}), cache {r['cache_auto_bytes'] / 1e9:.2f} GB, "
      f"{r['tokens_per_s']:.4g} tokens/s ({r.get('steps_fetched_ahead')} of {r.get('steps')} steps fetched ahead), "
      f"load {r['table_load_s']:.1f} s, peak resident "
      f"{r['table_load_peak_resident_bytes'] / 1e9:.1f} GB")
print(f"  host reads {r.get('host_reads')}: {r.get('host_reads_gathered')} lookups gathered, "
      f"{r.get('host_reads_uva')} through UVA, host share {r.get('host_gather_share')}; "
      f"huge pages offered {r.get('huge_page_offer')}")
for h in r.get("host_pages") or []:
    print(f"  host table {h['ple_index']} ({h['tier']}): {h['bytes'] / 1e9:.1f} GB, huge-page share "
          f"{h['huge_page_share']}, NUMA node {h['numa_node']}")
for p in r["placement_plan"]:
    print("  " + p["plan"])
for c in r["cache"]:
    lookups = max(1, c["lookups"])
    if c["static_rows"] + c["dynamic_rows"]:
        print(f"  cache table {c['ple_index']}: {c['static_rows']} static + {c['dynamic_rows']} dynamic rows, "
              f"hit rate {(c['hits'] + c['repeats']) / lookups:.3f} ({c['hits']} hits of {lookups})")
PY
}

if part tests; then
  ctest --test-dir "$build" --output-on-failure -R "test_placement|test_layouts_np1$|python" \
    >"$out/placement-tests.txt" 2>&1 || rc=1
  grep -E "tests passed|tests failed|Failed|Passed" "$out/placement-tests.txt" | tee -a "$out/placement.txt"
fi

if part qwen; then
  fp8=/tmp/pleshard-qwen-fp8.json
  qwen_as float8_e4m3fn "$fp8"
  log placement "$app" profile --checkpoint synthetic --config "$fp8" --requests /tmp/corpus-first.jsonl \
    --out /tmp/qwen-first.profile.h5 --quiet
  job=(run --checkpoint synthetic --config "$fp8" --requests /tmp/corpus-second.jsonl --summary-only --quiet --json
       --collective-timeout 300)
  log placement "$app" "${job[@]}" --placement auto
  plan
  log placement "$app" "${job[@]}" --placement auto --gpu-memory-limit 20 --cache-profile /tmp/qwen-first.profile.h5
  plan
fi

if part v41; then
  data=/tmp/pleshard-v41
  mkdir -p "$data"
  cp jobs/models/deepseek-v4.1-flash/config.json "$data/config.json"
  [ -f "$data/engram_token_map.npy" ] ||
    log placement python3 jobs/engram_token_map.py --config "$data/config.json" --out "$data/engram_token_map.npy"
  vocab_size=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["vocab_size"])' "$data/config.json")
  python3 jobs/fold_corpus.py --vocab-size "$vocab_size" </tmp/corpus-first.jsonl >"$data/first.jsonl"
  python3 jobs/fold_corpus.py --vocab-size "$vocab_size" </tmp/corpus-second.jsonl >"$data/second.jsonl"
  echo "corpus $corpus folded into vocab $vocab_size (halves)" | tee -a "$out/placement.txt"
  log placement "$app" profile --checkpoint synthetic --config "$data/config.json" --requests "$data/first.jsonl" \
    --out "$data/first.profile.h5" --quiet
  job=(run --checkpoint synthetic --config "$data/config.json" --requests "$data/second.jsonl" --summary-only --quiet
       --json --collective-timeout 600)
  # The pinned table's rows as --host-reads chooses them (auto), then read by the GPU alone
  # (uva, as before the host gathers) in the same run.
  for reads in ${V41_HOST_READS:-auto uva}; do
    for steps in ${V41_STEPS:-ahead}; do
      more=()
      [ "$steps" = whole ] && more=(--no-fetch-ahead)
      log placement "$app" "${job[@]}" --placement auto --cache-profile "$data/first.profile.h5" --host-reads "$reads" \
        "${more[@]}"
      plan
    done
  done
  if [ -z "${V41_JOBS_ONLY:-}" ]; then
    log placement "$app" "${job[@]}" --placement 0=device,1=pinned
    plan
    log placement "$app" bench step --config "$data/config.json" --placement auto --cache-profile "$data/first.profile.h5" \
      --requests "$data/second.jsonl" --tokens 1 64 1024 --min-seconds 0.5
  fi
fi
if part tiers; then
  ctest --test-dir "$build" --output-on-failure -R "app_run_tiers|app_run_placement" >"$out/placement-tiers.txt" 2>&1 || rc=1
  grep -E "tests passed|tests failed|Failed|Passed|FAIL" "$out/placement-tiers.txt" | tee -a "$out/placement.txt"
fi
if part shared; then
  df -B1 /dev/shm | tee -a "$out/placement.txt"
  # shared_run NAME ARGS...: 4 ranks, --etp 1, pinned; the report's sharing and the node's peak PSS.
  shared_run() {
    local name=$1; shift
    echo "\$ mpirun -n 4 pleshard run --etp 1 --storage pinned $*" | tee -a "$out/placement.txt"
    local log=/tmp/pleshard-$name.log  # appended to $out/shared.log: few files come back from a device
    python3 jobs/peak_pss.py -- mpirun -n 4 --oversubscribe "$app" run --etp 1 --storage pinned --summary-only --quiet \
      --json "$@" >"$log" 2>&1 || { echo "FAILED: $name" | tee -a "$out/placement.txt"; tail -5 "$log"; rc=1; }
    { echo "== $name"; cat "$log"; } >>"$out/shared.log"
    grep '^{' "$log" >>"$out/placement.jsonl"
    python3 - "$log" <<'PY' | tee -a "$out/placement.txt"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
peak = [l for l in lines if l.startswith("peak_pss_bytes")]
r = [json.loads(l) for l in lines if l.startswith("{") and '"schema_version"' in l]
if r:
    r = r[-1]
    print(f"  shared ranks {r['table_shared_ranks']}, load {r['table_load_bytes'] / 1e9:.3f} GB in "
          f"{r['table_load_s']:.1f} s, {r['tokens_per_s']:.4g} tokens/s, node PSS peak "
          f"{int(peak[-1].split()[1]) / 1e9:.2f} GB" if peak else "")
else:
    print("  " + " | ".join(l for l in lines if "error" in l)[:400])
PY
  }
  example=(--checkpoint synthetic --config jobs/example/config.json --synthetic 3000)
  shared_run shared-example "${example[@]}"
  shared_run own-example "${example[@]}" --no-shared-tables
  fp8=/tmp/pleshard-qwen-fp8.json
  qwen_as float8_e4m3fn "$fp8"
  shared_run shared-qwen --checkpoint synthetic --config "$fp8" --requests /tmp/corpus-second.jsonl \
    --collective-timeout 600
  shared_run own-qwen --checkpoint synthetic --config "$fp8" --requests /tmp/corpus-second.jsonl --no-shared-tables
fi
[ $rc -eq 0 ] && echo "h200-placement: every part ran" || echo "h200-placement: FAILED (see above)"
exit $rc
