#!/usr/bin/env bash
# Quick start: set up, build, make a small synthetic model, and run the batch job on it
# (4 ranks: TP 2, ETP 4; 128 synthetic Zipf-like requests), printing the report. The model
# goes to build/example/model (made once), the embeddings to build/example/embeddings.h5.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
work=build/example
mkdir -p "$work"
if [ ! -e "$work/model/config.json" ]; then
  echo "== pleshard ckpt make: synthetic model from jobs/example/config.json -> $work/model"
  build/bin/pleshard ckpt make --config jobs/example/config.json --out "$work/model" --files 2
fi
echo "== pleshard run: 4 ranks (TP 2, ETP 4), 128 synthetic requests -> $work/embeddings.h5"
rm -rf "$work/embeddings.h5" "$work/embeddings.h5.partial" "$work/embeddings.h5.progress"
jobs/run-local.sh -n 4 -- run --checkpoint "$work/model" --synthetic 128 --synthetic-max-tokens 256 \
  --tp 2 --etp 4 --step-tokens 4096 --decode-tokens 8 --out "$work/embeddings.h5"
echo "== done: the model is $work/model, the embeddings $work/embeddings.h5 (next: README.md, A tour)"
