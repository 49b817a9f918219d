#!/usr/bin/env bash
# The disk tier's fetch ahead (a step's rows read while the step before is decoded) on one
# H200, each run beside the same run with --no-fetch-ahead, alternating:
# - tests: the fetch ahead's tests and the disk tier's, on the GPU;
# - small: a table of Qwen3.8-Flash-Next's shape with 16M rows (NVFP4, 1.4 GB, in the page
#   cache once made), the second half of corpus A, --summary-only and --out;
# - real: the real table as NVFP4 (28.8 GB), the second half, warm (--summary-only and
#   --out), then cold (page cache dropped before each run); one run each.
#   [CORPUS=...] [PARTS="tests small real"] jobs/device/h200-fetch-ahead.sh
# Results go to $OUT (default ./out): fetch-ahead-*.txt, one line per run.
set -uo pipefail
source "$(dirname "$0")/env.sh"
parts=${PARTS:-tests small}
rc=0
half=$(( $(wc -l <"$corpus") / 2 ))
tail -n +"$(( half + 1 ))" "$corpus" >/tmp/corpus-second.jsonl

# runs NAME CKPT cold|warm ROUNDS ARGS...: the job with and without fetch ahead, ROUNDS times
# each, alternating (cold: the page cache dropped before each run); one line per run.
runs() {
  local name=$1 ckpt=$2 cold=$3 rounds=$4; shift 4
  for round in $(seq "$rounds"); do
    for ahead in "" --no-fetch-ahead; do
      [ "$cold" = cold ] && { sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true; }
      rm -f /tmp/fetch-ahead-out.h5*
      # shellcheck disable=SC2086
      "$app" run --checkpoint "$ckpt" --storage disk --requests /tmp/corpus-second.jsonl --quiet --json \
        --collective-timeout 300 "$@" $ahead >/tmp/fetch-ahead-run.json 2>"$out/last.log" || { rc=1; tail -3 "$out/last.log"; }
      python3 -c 'import json,sys; r=json.loads([l for l in open(sys.argv[1]) if l.startswith("{")][-1])
print(sys.argv[2], *[f"{k}={r[k]:.4g}" for k in ["wall_s","tokens_per_s","steps","steps_fetched_ahead",
  "phase_fetch_s","phase_decode_s","write_s"]])' /tmp/fetch-ahead-run.json "$name ${ahead:-ahead} round $round $cold" \
        | tee -a "$out/fetch-ahead-$name.txt"
    done
  done
  rm -f /tmp/fetch-ahead-out.h5*
}

if part tests; then
  ctest --test-dir "$build" --output-on-failure -R "fetch_ahead|disk_table|layouts_np1|layouts_np2|run_tiers|row_cache" \
    >"$out/fetch-ahead-tests.txt" 2>&1 || rc=1
  grep -E "tests passed|tests failed|Failed|Passed" "$out/fetch-ahead-tests.txt"
fi
if part small; then
  small=/tmp/pleshard-small.json
  qwen_as nvfp4 "$small"
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["ngram_vocab_size_base"]=1000000; json.dump(c,open(sys.argv[1],"w"))' "$small"
  rm -rf /tmp/pleshard-small
  "$app" ckpt make --config "$small" --out /tmp/pleshard-small --quiet || rc=1
  runs small /tmp/pleshard-small warm 2 --summary-only
  runs small /tmp/pleshard-small warm 2 --out /tmp/fetch-ahead-out.h5
  rm -rf /tmp/pleshard-small
fi
if part real; then
  nvfp4=/tmp/pleshard-qwen-nvfp4.json
  qwen_as nvfp4 "$nvfp4"
  rm -rf /tmp/pleshard-nvfp4
  "$app" ckpt make --config "$nvfp4" --out /tmp/pleshard-nvfp4 --quiet || rc=1
  runs real /tmp/pleshard-nvfp4 warm 1 --summary-only
  runs real /tmp/pleshard-nvfp4 warm 1 --out /tmp/fetch-ahead-out.h5
  runs real /tmp/pleshard-nvfp4 cold 1 --summary-only
  rm -rf /tmp/pleshard-nvfp4
fi
exit $rc
