#!/usr/bin/env bash
# Checkpoint I/O throughput: ckpt make, convert (both directions) and a full-table read
# (ckpt verify) of a synthetic table of about SIZE_GB (default 2.1) per format.
#   jobs/bench-checkpoint.sh [-b BUILD_DIR] [-d WORK_DIR] [-s SIZE_GB] [FORMAT...]
# FORMAT: bf16 (default), f32, f16, fp8, nvfp4. Prints one summary line per step.
set -euo pipefail
build=build; work=${TMPDIR:-/tmp}/pleshard-bench-ckpt; size=2.1
while getopts "b:d:s:h" opt; do
  case $opt in
    b) build=$OPTARG ;; d) work=$OPTARG ;; s) size=$OPTARG ;;
    *) sed -n '2,5p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
formats=("${@:-bf16}")
app=$(realpath "$build/bin/pleshard")
mkdir -p "$work"
for f in "${formats[@]}"; do
  case $f in
    f32) bytes=640; dtype="" ;; bf16|f16) bytes=320; dtype="" ;;
    fp8) bytes=160; dtype=', "ple_embedding_dtype": "float8_e4m3fn"' ;;
    nvfp4) bytes=90; dtype=', "ple_embedding_dtype": "nvfp4"' ;;
    *) echo "unknown format $f" >&2; exit 2 ;;
  esac
  # One layer of 16 heads of 160 values: rows = 16 * base.
  base=$(awk -v s="$size" -v b="$bytes" 'BEGIN { printf "%d", s * 1e9 / b / 16 }')
  cat >"$work/config-$f.json" <<JSON
{"vocab_size": 200019, "eos_token_id": 199999, "num_hidden_layers": 1, "ple_embed_dim": 2560,
 "ngram_vocab_size_base": $base, "split_ngram_parts": 512, "ple_layer_ids": [1] $dtype}
JSON
  fmt=(); case $f in f32|bf16|f16) fmt=(--format "$f") ;; esac
  rm -rf "$work/st-$f" "$work/$f.h5" "$work/back-$f"
  echo "== $f: $(awk -v b="$base" -v r="$bytes" 'BEGIN { printf "%.2f GB", 16 * b * r / 1e9 }')"
  "$app" ckpt make --config "$work/config-$f.json" --out "$work/st-$f" "${fmt[@]}" --files 4 --quiet
  sync
  "$app" ckpt verify --checkpoint "$work/st-$f" --quiet | grep "verify:" | sed 's/^/safetensors full read (page cache warm): /'
  "$app" ckpt convert --checkpoint "$work/st-$f" --out "$work/$f.h5" --kind hdf5 --quiet
  "$app" ckpt verify --checkpoint "$work/$f.h5" --quiet | grep "verify:" | sed 's/^/hdf5 full read + Fletcher32: /'
  "$app" ckpt convert --checkpoint "$work/$f.h5" --out "$work/back-$f" --kind safetensors --quiet
  rm -rf "$work/st-$f" "$work/$f.h5" "$work/back-$f"
done
