#!/usr/bin/env bash
# The pinned tier's gather under each SM cap (blocks per SM; 0: none): rows/s alone and with
# device-tier lookups of the same ids beside it ("pinned|device", with the share of their
# time hidden), next to the device tier alone. After h200-build.sh. CAPS, FORMATS and IDS
# narrow the cases. Results go to $OUT (default ./out): bench-uva-cap.txt.
set -uo pipefail
source "$(dirname "$0")/env.sh"
for cap in ${CAPS:-0 1 2 4}; do
  echo "uva-blocks-per-sm $cap" >>"$out/bench-uva-cap.txt"
  # shellcheck disable=SC2086 # lists
  "$app" bench lookup --storage device pinned --formats ${FORMATS:-bf16 fp8 nvfp4} --ids ${IDS:-131072 1048576} \
    --min-seconds 0.2 --uva-blocks-per-sm "$cap" | grep -v "^{" >> "$out/bench-uva-cap.txt"
done
