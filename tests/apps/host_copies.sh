#!/usr/bin/env bash
# --summary-only copies no embeddings to the host: the report's host_copy_bytes is 0; with
# --out on a GPU tier the copies are counted (and the output holds every token's rows).
#   host_copies.sh PLESHARD CHECKPOINT
set -euo pipefail
app=$1; ckpt=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tier=host
"$app" run --checkpoint "$ckpt" --synthetic 2 --summary-only --quiet --storage device >/dev/null 2>&1 && tier=device
field() { python3 "$(dirname "$0")/report_field.py" "$@"; }  # field FILE KEY: a value of FILE's report
job=(run --checkpoint "$ckpt" --synthetic 20 --synthetic-max-tokens 150 --step-tokens 64 --quiet --json --storage "$tier")
"$app" "${job[@]}" --summary-only >"$work/summary.json"
[ "$(field "$work/summary.json" host_copy_bytes)" = 0 ] || { echo "FAIL: --summary-only copied:"; cat "$work/summary.json"; exit 1; }
"$app" "${job[@]}" --out "$work/out.h5" >"$work/out.json"
written=$(field "$work/out.json" bytes_written)
copied=$(field "$work/out.json" host_copy_bytes)
[ "$written" -gt 0 ] || { echo "FAIL: nothing written"; cat "$work/out.json"; exit 1; }
if [ "$tier" = device ]; then
  [ "$copied" = "$written" ] || { echo "FAIL: copied $copied bytes, wrote $written"; exit 1; }
else
  [ "$copied" = 0 ] || { echo "FAIL: the host tier copied $copied bytes"; exit 1; }
fi
echo "host copies: none with --summary-only ($tier tier)"
