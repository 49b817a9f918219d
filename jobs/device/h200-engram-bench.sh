#!/usr/bin/env bash
# After h200-build.sh (same build directory): DeepSeek-V4.1-Flash's Engram tables on one H200.
#   [CORPUS=...] [PARTS="tests step lookup real host-reads ab"] [BASELINE_APP=...] jobs/device/h200-engram-bench.sh
# The corpus is folded into the model's vocabulary (token t -> t mod 129,280: real n-gram
# statistics, not the model's tokenizer) and hashed through a synthetic token map
# (jobs/engram_token_map.py): say both beside any figure.
# - tests: the Engram tests and the GPU tests of layouts, tiers and checkpoints (tests.txt);
# - step: `pleshard bench step` on the V4.1 shape (2 tables x 24 columns x 256 values,
#   FP8 + E8M0) with engram_vocab_size 700,000 (16.8M rows per table, at least 2^24), one
#   rank, device and pinned tiers, eager and graph, B = 1, 64, 1024, 8192;
# - lookup: `pleshard bench lookup` of FP8 + E8M0 rows of 256 values at 1M ids beside the
#   plain gather of the same stored bytes, FP8 (global scale) and BF16, device and pinned;
# - real: one table of the real size (layer 1 alone: 384,006,168 rows, 98.3 GB of codes +
#   3.1 GB of scales) made in place on the device tier, served by bench step and run
#   --summary-only on the folded corpus.
# - host-reads: the pinned tier of the V4.1 shape read through UVA, gathered by the host,
#   shared between the two and chosen per step (--host-reads uva, gather, both, auto, or
#   $HOST_READS; bench step eager and graph, B = 1 ...
#   8192, 4,096 distinct steps), bench lookup of pinned against pinned-gather from 64 ids to
#   1M (where the gather overtakes UVA), and the host-to-device copy's own rate (PyTorch, a
#   pinned 256 MiB tensor) that the gathered rows are measured against; the run report of the
#   V4.1 shape pinned (its tables' share on 2 MiB pages, the lookups gathered and read by UVA);
# - ab (not by default): bench step of the V4.1 shape pinned, --host-reads gather and auto
#   ($HOST_READS), B = 1024 and 8192, eager, and the job with auto, beside a baseline build's
#   (BASELINE_APP), taking turns, two rounds ($AB_ROUNDS).
# Results go to $OUT (default ./out): <part>.txt (tables) and <part>.jsonl (JSON lines).
set -uo pipefail
source "$(dirname "$0")/env.sh"
parts=${PARTS:-tests step lookup real host-reads}
rc=0

# The models: the released config rescaled or cut to one table, each with a token map beside it.
models=/tmp/pleshard-engram
mkdir -p "$models/shape" "$models/real1"
real=jobs/models/deepseek-v4.1-flash/config.json
python3 - "$real" "$models" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
shape = dict(c, engram_vocab_size=700000)
shape.pop("engram_num_embeddings")
json.dump(shape, open(sys.argv[2] + "/shape/config.json", "w"))
one = dict(c, engram_layer_ids=[1], engram_num_embeddings=[c["engram_num_embeddings"][0]])
json.dump(one, open(sys.argv[2] + "/real1/config.json", "w"))
PY
for m in shape real1; do
  python3 jobs/engram_token_map.py --config "$models/$m/config.json" --out "$models/$m/engram_token_map.npy" >/dev/null
done
folded=$models/corpus-folded.jsonl
[ -s "$folded" ] || python3 jobs/fold_corpus.py --vocab-size 129280 <"$corpus" >"$folded"

if part tests; then
  ctest --test-dir "$build" -V -R "engram|layouts|gpu_tiers|checkpoints|step_kernels|cuda_graph" \
    >"$out/tests.txt" 2>&1 || rc=1
  grep -E "tests passed|tests failed|\*\*\*Failed|Passed|SKIPPED" "$out/tests.txt"
fi

if part step; then
  log step "$app" bench step --config "$models/shape/config.json" --storage device pinned --requests "$folded" \
    --tokens 1 64 1024 8192 --min-seconds 0.3
fi

if part lookup; then
  log lookup "$app" bench lookup --storage device pinned --formats fp8_e8m0 fp8 bf16 --head-dim 256 \
    --rows 16777216 --ids 8192 1048576 --min-seconds 0.2
fi

if part host-reads; then
  for reads in ${HOST_READS:-uva gather both auto}; do
    log host-reads "$app" bench step --config "$models/shape/config.json" --storage pinned --host-reads "$reads" \
      --requests "$folded" --tokens 1 64 256 1024 8192 --distinct-steps 4096 --min-seconds 0.3
  done
  log host-reads "$app" bench lookup --storage pinned --formats fp8_e8m0 --head-dim 256 --rows 16777216 \
    --ids 64 256 1024 4096 16384 65536 1048576 --min-seconds 0.1
  # The job's report: its tables' share on 2 MiB pages and how many lookups went each way.
  for reads in ${HOST_READS:-uva gather both auto}; do
    log host-reads "$app" run --config "$models/shape/config.json" --checkpoint synthetic --storage pinned \
      --requests "$folded" --summary-only --json --host-reads "$reads"
  done
  python3 - <<'PY' | tee -a "$out/host-reads.txt"
import time, torch
x = torch.empty(256 << 20, dtype=torch.uint8).pin_memory()
y = torch.empty_like(x, device="cuda")
for _ in range(3):
    y.copy_(x, non_blocking=True)
torch.cuda.synchronize()
t = time.perf_counter()
for _ in range(20):
    y.copy_(x, non_blocking=True)
torch.cuda.synchronize()
print(f"host-to-device copy of 256 MiB from pinned memory: {20 * x.numel() / (time.perf_counter() - t) / 1e9:.1f} GB/s")
PY
fi

if part ab; then
  # This build's host gathers beside a baseline build's (BASELINE_APP), the two taking turns.
  [ -x "${BASELINE_APP:-}" ] || { echo "ab: no BASELINE_APP"; exit 1; }
  for round in $(seq "${AB_ROUNDS:-2}"); do
    for reads in ${HOST_READS:-gather auto}; do
      for which in this baseline; do
        a=$app
        [ "$which" = baseline ] && a=$BASELINE_APP
        echo "# round $round, $which, --host-reads $reads" | tee -a "$out/ab.txt"
        log ab "$a" bench step --config "$models/shape/config.json" --storage pinned --host-reads "$reads" \
          --requests "$folded" --tokens 1024 8192 --modes eager --distinct-steps 4096 --min-seconds 0.3
      done
    done
  done
  for which in this baseline; do
    a=$app
    [ "$which" = baseline ] && a=$BASELINE_APP
    echo "# $which, the job" | tee -a "$out/ab.txt"
    log ab "$a" run --config "$models/shape/config.json" --checkpoint synthetic --storage pinned \
      --requests "$folded" --summary-only --json --host-reads auto
  done
fi

if part real; then
  log real "$app" bench step --config "$models/real1/config.json" --storage device --requests "$folded" \
    --tokens 1 64 1024 --min-seconds 0.3
  log real "$app" run --config "$models/real1/config.json" --checkpoint synthetic --storage device \
    --requests "$folded" --summary-only --quiet --json
  log real "$app" run --config "$models/shape/config.json" --checkpoint synthetic --storage device \
    --requests "$folded" --summary-only --quiet --json
fi
exit $rc
