#!/usr/bin/env bash
# The disk tier's steps on one H200, each run beside the same run of a baseline build
# (BASELINE_APP, where given), alternating, on the second half of corpus A:
# - small: a table of Qwen3.8-Flash-Next's shape with 16M rows (NVFP4, 1.4 GB), warm
#   (--summary-only and --out), then cold (the page cache dropped before each run);
# - real: the real table as NVFP4 (28.8 GB), cold, then warm (--summary-only).
#   [CORPUS=...] [PARTS="small real"] [ROUNDS=2] [BASELINE_APP=path/to/pleshard] jobs/device/h200-disk-steps.sh
# Results go to $OUT (default ./out): disk-steps.txt, one line per run.
set -uo pipefail
source "$(dirname "$0")/env.sh"
parts=${PARTS:-small}
rc=0
half=$(( $(wc -l <"$corpus") / 2 ))
tail -n +"$(( half + 1 ))" "$corpus" >/tmp/corpus-second.jsonl

# one NAME APP CKPT ARGS...: one run, one line (NAME ending in "cold": the page cache dropped
# first).
one() {
  local name=$1 bin=$2 ckpt=$3; shift 3
  [[ $name == *cold ]] && { sync; echo 3 >/proc/sys/vm/drop_caches; }
  rm -f /tmp/disk-steps-out.h5*
  "$bin" run --checkpoint "$ckpt" --storage disk --requests /tmp/corpus-second.jsonl \
    --quiet --json --collective-timeout 300 "$@" >/tmp/disk-steps-run.json 2>"$out/last.log" || { rc=1; tail -3 "$out/last.log"; }
  python3 -c 'import json,sys; r=json.loads([l for l in open(sys.argv[1]) if l.startswith("{")][-1])
print(sys.argv[2], *[f"{k}={r[k]:.4g}" for k in ["wall_s","tokens_per_s","steps","step_p50_us",
  "phase_fetch_s","phase_decode_s","write_s"]])' /tmp/disk-steps-run.json "$name" | tee -a "$out/disk-steps.txt"
}
# both NAME CKPT ARGS...: this build's run, then the baseline's.
both() {
  local name=$1 ckpt=$2; shift 2
  one "this $name" "$app" "$ckpt" "$@"
  [ -n "${BASELINE_APP:-}" ] && one "baseline $name" "$BASELINE_APP" "$ckpt" "$@"
}

if part small; then
  small=/tmp/pleshard-small.json
  qwen_as nvfp4 "$small"
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["ngram_vocab_size_base"]=1000000; json.dump(c,open(sys.argv[1],"w"))' "$small"
  rm -rf /tmp/pleshard-small
  "$app" ckpt make --config "$small" --out /tmp/pleshard-small --quiet || exit 1
  for round in $(seq "${ROUNDS:-2}"); do
    both "small --summary-only round $round" /tmp/pleshard-small --summary-only
    both "small --out round $round" /tmp/pleshard-small --out /tmp/disk-steps-out.h5
  done
  for round in $(seq "${ROUNDS:-2}"); do
    both "small --summary-only round $round cold" /tmp/pleshard-small --summary-only
  done
  rm -rf /tmp/pleshard-small
fi
if part real; then
  nvfp4=/tmp/pleshard-qwen-nvfp4.json
  qwen_as nvfp4 "$nvfp4"
  rm -rf /tmp/pleshard-nvfp4
  "$app" ckpt make --config "$nvfp4" --out /tmp/pleshard-nvfp4 --quiet || exit 1
  both "real --summary-only cold" /tmp/pleshard-nvfp4 --summary-only
  both "real --summary-only warm" /tmp/pleshard-nvfp4 --summary-only
  rm -rf /tmp/pleshard-nvfp4
fi
rm -f /tmp/disk-steps-out.h5*
exit $rc
