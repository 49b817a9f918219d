#!/usr/bin/env bash
# Quick start: set up, build, and run the batch job on the built-in example
# (4 ranks, a small synthetic model, synthetic Zipf-like requests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
echo "== pleshard run: 4 ranks, example model, 1024 synthetic requests"
jobs/run-local.sh -n 4 -- run --config jobs/example/config.json --synthetic 1024 \
  --step-tokens 8192 --decode-tokens 16
