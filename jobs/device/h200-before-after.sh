#!/usr/bin/env bash
# What a change costs on the GPU: this build's `bench step` (Qwen3.8-Flash-Next's shape, FP8,
# device and pinned, eager and graph, B = 64, 1024, 8192, corpus A, 1,024 distinct steps) and
# `bench lookup` (device, bf16 / fp8 / nvfp4, 8,192 and 1M ids) beside a baseline source
# tree's, built here the same way, the two taking turns, two rounds each, so that the
# machine's drift falls on both.
#   git archive BASE_COMMIT | (mkdir -p build-base-src && tar -x -C build-base-src)   # here
#   jobs/device/h200-build.sh pleshard_app && BASE_SRC=build-base-src jobs/device/h200-before-after.sh
# (carry build-base-src beside .kk and .data). Results: $OUT/before-after.txt and .jsonl,
# each run's JSON lines marked with "build": "this" or "base".
set -uo pipefail
source "$(dirname "$0")/env.sh"
base_src=${BASE_SRC:-build-base-src}
rc=0
[ -x "$app" ] || { echo "no $app: run jobs/device/h200-build.sh pleshard_app first"; exit 1; }
[ -d "$base_src" ] || { echo "no baseline source tree $base_src"; exit 1; }
mkdir -p "$out/base"
(cd "$base_src" && OUT="$OLDPWD/$out/base" BUILD=build-h200 bash jobs/device/h200-build.sh pleshard_app) || exit 1
base_app=$base_src/build-h200/bin/pleshard

cases() {  # cases APP: the step and lookup benchmarks, JSON lines on stdout
  "$1" bench step --storage device pinned --format fp8 --requests "$corpus" --tokens 64 1024 8192 \
    --distinct-steps 1024 --min-seconds 0.3 --json
  "$1" bench lookup --storage device --formats bf16 fp8 nvfp4 --ids 8192 1048576 --min-seconds 0.2 --json
}
for round in 1 2; do
  for which in this base; do
    a=$app
    [ "$which" = base ] && a=$base_app
    echo "# round $round: $which ($a)" | tee -a "$out/before-after.txt"
    cases "$a" 2>>"$out/before-after.txt" \
      | python3 -c 'import json,sys
for line in sys.stdin:
    line = line.strip()
    if line.startswith("{"):
        r = json.loads(line); r["build"] = sys.argv[1]; r["round"] = int(sys.argv[2]); print(json.dumps(r))' \
        "$which" "$round" >>"$out/before-after.jsonl" || rc=1
  done
done
# Per case, each build's best of its rounds, and this build's against the baseline's.
python3 - "$out/before-after.jsonl" <<'PY' | tee -a "$out/before-after.txt"
import json, sys
best = {}  # per case and build: the best round's time (µs) of a step, or its time per 1M rows of a lookup
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("bench") == "step":
        key = ("step", r.get("tier"), r.get("mode"), r.get("tokens"))
        value = r["p50_us"]
    elif r.get("bench") == "lookup":
        key = ("lookup", r.get("tier"), r.get("format"), r.get("ids"))
        value = 1e12 / r["rows_per_s"] if r["rows_per_s"] else float("inf")
    else:
        continue
    slot = best.setdefault(key, {})
    slot[r["build"]] = min(slot.get(r["build"], float("inf")), value)
print(f"{'case':<44} {'base':>12} {'this':>12} {'this/base':>9}   (µs a step; µs per 1M rows a lookup)")
for key, v in sorted(best.items(), key=lambda kv: str(kv[0])):
    if "this" in v and "base" in v:
        print(f"{' '.join(map(str, key)):<44} {v['base']:>12.1f} {v['this']:>12.1f} {v['this'] / v['base']:>9.3f}")
PY
exit $rc
