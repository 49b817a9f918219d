#!/usr/bin/env bash
# After h200-build.sh (same build directory): the toy decoder (jobs/python/toy_decoder.py)
# with DeepSeek-V4.1's Engram layout — 16 decoder layers, its two tables read at layers 1 and
# 14, table 0 in GPU memory and table 1 pinned in host memory (the V4.1 shape: 16.8M rows of
# FP8 + E8M0 per table) — at B = 64 and 1,024 tokens a step, each step fetched before the
# layers (forward) and started before them with each layer waiting for its table alone
# (start, wait_table). It prints each table's wait a step beside forward()'s own time.
# Builds the Python module first where the build lacks it (h200-python.sh, a short run).
# Results go to $OUT (default ./out): toy-decoder.txt.
set -uo pipefail
source "$(dirname "$0")/env.sh"
python=${PYTHON:-python3}
STEPS=20 bash jobs/device/h200-python.sh >"$out/python-check.txt" 2>&1 || { tail -20 "$out/python-check.txt"; exit 1; }
models=/tmp/pleshard-engram
mkdir -p "$models/shape"
python3 - jobs/models/deepseek-v4.1-flash/config.json "$models/shape/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
shape = dict(c, engram_vocab_size=700000)
shape.pop("engram_num_embeddings")
json.dump(shape, open(sys.argv[2], "w"))
PY
python3 jobs/engram_token_map.py --config "$models/shape/config.json" --out "$models/shape/engram_token_map.npy" >/dev/null
rc=0
for requests in 64 1024; do
  for mode in "" --start; do
    echo "# B = $requests ${mode:-(forward)}" | tee -a "$out/toy-decoder.txt"
    PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" "$python" jobs/python/toy_decoder.py \
      --checkpoint synthetic --config "$models/shape/config.json" --placement 0=device,1=pinned \
      --layers 16 --read-at 1,14 --requests "$requests" --prompt-tokens 4 --steps "${STEPS:-40}" --hidden 1024 $mode \
      2>&1 | tee -a "$out/toy-decoder.txt" || rc=1
  done
done
exit $rc
