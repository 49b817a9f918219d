#!/usr/bin/env bash
# After h200-check.sh (same build directory): the lookup benchmark of the GPU tiers with the
# PyTorch reference points, and `pleshard run` of the quick-start model from every tier.
# Results go to $OUT (default ./out): tiers.txt, bench-lookup.txt, torch-lookup.jsonl,
# runs.jsonl.
set -uo pipefail
source "$(dirname "$0")/env.sh"
ctest --test-dir "$build" -R "run_tiers|cuda_graph" -V 2>&1 | grep -E "tiers:|Passed|Failed|PASSED|FAILED" | tee "$out/tiers.txt"
"$app" bench lookup --storage device pinned --formats bf16 fp8 nvfp4 --ids 1 64 8192 131072 1048576 \
  --min-seconds 0.2 | tee "$out/bench-lookup.txt" | grep -v "^{"
python3 jobs/torch_lookup_baseline.py >"$out/torch-lookup.jsonl" 2>&1 && cat "$out/torch-lookup.jsonl"
model=$out/model
"$app" ckpt make --config jobs/example/config.json --out "$model" --quiet
job=(run --checkpoint "$model" --synthetic 400 --synthetic-min-tokens 500 --synthetic-max-tokens 3000
     --step-tokens 8192 --decode-tokens 0 --summary-only --quiet --json)
for tier in host disk device pinned; do
  "$app" "${job[@]}" --storage "$tier" | tee -a "$out/runs.jsonl"
done
for tier in device pinned; do
  "$app" "${job[@]}" --storage "$tier" --cuda-graph | tee -a "$out/runs.jsonl"
done
rm -rf "$model"
