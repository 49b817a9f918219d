#!/usr/bin/env bash
# The disk tier's warm steps on one H200, each run beside the same run of a baseline build
# (BASELINE_APP, where given) and of this build reading from threads of pread instead of
# io_uring (PLESHARD_IO_URING=0), alternating: a table of Qwen3.8-Flash-Next's shape with 16M
# rows (NVFP4, 1.4 GB, in the page cache once made), the second half of corpus A,
# --summary-only and --out.
#   [CORPUS=...] [ROUNDS=2] [BASELINE_APP=path/to/pleshard] jobs/device/h200-disk-steps.sh
# Results go to $OUT (default ./out): disk-steps.txt, one line per run.
set -uo pipefail
source "$(dirname "$0")/env.sh"
rc=0
half=$(( $(wc -l <"$corpus") / 2 ))
tail -n +"$(( half + 1 ))" "$corpus" >/tmp/corpus-second.jsonl
small=/tmp/pleshard-small.json
qwen_as nvfp4 "$small"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["ngram_vocab_size_base"]=1000000; json.dump(c,open(sys.argv[1],"w"))' "$small"
rm -rf /tmp/pleshard-small
"$app" ckpt make --config "$small" --out /tmp/pleshard-small --quiet || exit 1

# one NAME APP [ENV...] -- ARGS...: one run, one line.
one() {
  local name=$1 bin=$2; shift 2
  local env=()
  while [ "$1" != -- ]; do env+=("$1"); shift; done
  shift
  rm -f /tmp/disk-steps-out.h5*
  env "${env[@]}" "$bin" run --checkpoint /tmp/pleshard-small --storage disk --requests /tmp/corpus-second.jsonl \
    --quiet --json --collective-timeout 300 "$@" >/tmp/disk-steps-run.json 2>"$out/last.log" || { rc=1; tail -3 "$out/last.log"; }
  python3 -c 'import json,sys; r=json.loads([l for l in open(sys.argv[1]) if l.startswith("{")][-1])
print(sys.argv[2], *[f"{k}={r[k]:.4g}" for k in ["wall_s","tokens_per_s","steps","step_p50_us",
  "phase_fetch_s","phase_decode_s","write_s"]])' /tmp/disk-steps-run.json "$name" | tee -a "$out/disk-steps.txt"
}
for round in $(seq "${ROUNDS:-2}"); do
  for args in --summary-only "--out /tmp/disk-steps-out.h5"; do
    # shellcheck disable=SC2086
    {
      one "this ${args%% *} round $round" "$app" PLESHARD_IO_URING=1 -- $args
      [ -n "${BASELINE_APP:-}" ] && one "baseline ${args%% *} round $round" "$BASELINE_APP" PLESHARD_IO_URING=1 -- $args
      one "this+pread ${args%% *} round $round" "$app" PLESHARD_IO_URING=0 -- $args
    }
  done
done
rm -rf /tmp/pleshard-small /tmp/disk-steps-out.h5*
exit $rc
