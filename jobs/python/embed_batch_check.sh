#!/usr/bin/env bash
# embed_batch.py as a user runs it, against `pleshard embed` of the same batch (CTest).
#   embed_batch_check.sh PYTHON PLESHARD EXAMPLES_DIR CHECKPOINT BATCH.json
set -euo pipefail
python=$1; app=$2; examples=$3; ckpt=$4; batch=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for dtype in bfloat16 float32; do
  "$app" embed --checkpoint "$ckpt" --batch "$batch" --out "$work/embed.h5" --out-dtype "$dtype" >/dev/null
  "$python" "$examples/embed_batch.py" --checkpoint "$ckpt" --batch "$batch" --out-dtype "$dtype" \
    --out "$work/out.npz" --compare "$work/embed.h5"
  rm -f "$work/embed.h5"
done
