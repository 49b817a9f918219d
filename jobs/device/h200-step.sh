#!/usr/bin/env bash
# After h200-build.sh (same build directory): where one engine step's time goes and the
# batch job at the engine's speed, on one GPU.
#   [CORPUS=path/to/corpus-a.tokens.jsonl] [PARTS="step run write lookup"] jobs/device/h200-step.sh
# - step: `pleshard bench step` on Qwen3.8-Flash-Next's shape (2^24 rows), device and
#   pinned tiers, eager and graph, bf16 / fp8 / nvfp4 (device), B = 1 ... 8192;
# - run: `pleshard run --summary-only` on the corpus with the quick-start model (device tier,
#   eager and graphs), next to the PyTorch implementation of the seed's flow on the same
#   corpus and model (jobs/torch_seed_flow.py, checked against `pleshard ids` and `embed`);
# - write: the disk's sequential write rate (dd, fdatasync), then `pleshard run --out` on
#   the corpus into the same filesystem;
# - lookup: `pleshard bench lookup` of the device tier at 1M ids (the kernels' rows/s).
# Results go to $OUT (default ./out): step.txt, run.jsonl, write.txt, lookup.txt.
set -uo pipefail
source "$(dirname "$0")/env.sh"
parts=${PARTS:-step run write lookup}
rc=0

if part step; then
  for format in bf16 fp8 nvfp4; do
    tiers="device"
    [ "$format" = bf16 ] && tiers="device pinned"
    # shellcheck disable=SC2086 # lists
    "$app" bench step --storage $tiers --format "$format" --requests "$corpus" --tokens 1 8 64 256 1024 8192 \
      --min-seconds 0.3 >>"$out/step.txt" || rc=1
  done
  grep -v '^{' "$out/step.txt"
fi

model=/tmp/pleshard-quickstart-model
if part run || part write; then
  [ -d "$model" ] || "$app" ckpt make --config jobs/example/config.json --out "$model" --quiet
fi
if part run; then
  job=(run --checkpoint "$model" --requests "$corpus" --summary-only --quiet --json)
  "$app" "${job[@]}" --storage device | tee -a "$out/run.jsonl" || rc=1
  "$app" "${job[@]}" --storage device --cuda-graph | tee -a "$out/run.jsonl" || rc=1
  "$app" "${job[@]}" --storage pinned | tee -a "$out/run.jsonl" || rc=1
  python3 jobs/torch_seed_flow.py --checkpoint "$model" --requests "$corpus" --pleshard "$app" \
    | tee -a "$out/run.jsonl" || rc=1
fi
if part write; then
  dir=${WRITE_DIR:-/tmp/pleshard-write}
  mkdir -p "$dir"
  { echo "# dd: 8 GiB sequential, fdatasync"; dd if=/dev/zero of="$dir/probe" bs=16M count=512 conv=fdatasync 2>&1 | tail -1; } \
    | tee "$out/write.txt"
  rm -f "$dir/probe"
  "$app" run --checkpoint "$model" --requests "$corpus" --out "$dir/out.h5" --quiet --json --storage device \
    | tee -a "$out/write.txt" || rc=1
  ls -l "$dir/out.h5" | tee -a "$out/write.txt"
  rm -rf "$dir"
fi
if part lookup; then
  "$app" bench lookup --storage device --formats bf16 fp8 nvfp4 --ids 8192 1048576 --min-seconds 0.2 \
    | tee "$out/lookup.txt" | grep -v '^{'
fi
exit $rc
