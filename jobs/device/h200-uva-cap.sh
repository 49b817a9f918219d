#!/usr/bin/env bash
# The pinned tier's gather under each SM cap (blocks per SM; 0: none): rows/s alone and with
# the device tier's lookup of the same ids beside it ("pinned|device"), next to the device
# tier alone. After h200-build.sh. Results go to $OUT (default ./out): bench-uva-cap.txt.
set -uo pipefail
source "$(dirname "$0")/env.sh"
for cap in ${CAPS:-0 1 2 4}; do
  echo "uva-blocks-per-sm $cap" >>"$out/bench-uva-cap.txt"
  "$app" bench lookup --storage device pinned --formats bf16 fp8 nvfp4 --ids 131072 1048576 \
    --min-seconds 0.2 --uva-blocks-per-sm "$cap" | grep -v "^{" | tee -a "$out/bench-uva-cap.txt"
done
