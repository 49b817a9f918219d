#!/usr/bin/env bash
# After h200-build.sh (same build directory): the row cache in front of the pinned tier on
# one GPU machine, with Qwen3.8-Flash-Next's real FP8 table (51.2 GB) made in pinned memory.
# - tests: the cache against the host tier (test_row_cache: GPU space, disk and pinned
#   behind it) and every tier's run output behind it (run_tiers);
# - profile (made for run and step): row frequencies of the corpus's first half (the profiled
#   corpus); curve: the miss-ratio curve of its second half (the test corpus) with them (it
#   needs no GPU: pleshard profile --curve runs as well on any machine);
# - run: run --summary-only on the second half and on the whole corpus from the pinned
#   tier alone and behind a cache of 5% of the rows (16,000,077 rows, 2.56 GB) filled from the
#   profile;
# - step: bench step of the pinned tier without and with that cache, side by side;
# - disk: bench lookup of the disk tier (io_uring) on a table of 16M rows it writes, cold,
#   beside the same rows read one at a time and the disk's own 4 KiB random-read rate.
# - disk-real: the real table as NVFP4 (28.8 GB) made on the disk; run --summary-only on the
#   second half from the disk tier, page cache dropped first, alone and behind the cache,
#   for each of DISK_READS (default "cached"; "cached direct": --disk-reads).
#   [CORPUS=...] [PARTS="tests run step disk curve disk-real"] jobs/device/h200-cache.sh
# Results go to $OUT (default ./out): cache-*.txt, curve.csv.
set -uo pipefail
source "$(dirname "$0")/env.sh"
parts=${PARTS:-tests run step disk}
rc=0
fp8=/tmp/pleshard-qwen-fp8.json
qwen_as float8_e4m3fn "$fp8"
half=$(( $(wc -l <"$corpus") / 2 ))
head -n "$half" "$corpus" >/tmp/corpus-first.jsonl
tail -n +"$(( half + 1 ))" "$corpus" >/tmp/corpus-second.jsonl
profile=/tmp/corpus-first.profile.h5
cache=(--cache-rows 16000077 --cache-profile "$profile")

if part tests; then
  ctest --test-dir "$build" --output-on-failure -R "row_cache|row_profile|file_reads|run_tiers|disk_table" \
    >"$out/cache-tests.txt" 2>&1 || rc=1
  grep -E "tests passed|tests failed|Failed|Passed" "$out/cache-tests.txt"
fi
if part curve || part run || part step || part disk-real; then
  "$app" profile --checkpoint synthetic --config "$fp8" --requests /tmp/corpus-first.jsonl --out "$profile" --quiet \
    >"$out/cache-profile.txt" 2>&1 || rc=1
  cat "$out/cache-profile.txt"
fi
if part curve; then
  "$app" profile --checkpoint synthetic --config "$fp8" --requests /tmp/corpus-second.jsonl --cache-profile "$profile" \
    --curve "$out/curve.csv" --curve-shares 0.005 0.01 0.05 0.1 --quiet >>"$out/cache-profile.txt" 2>&1 || rc=1
  tail -6 "$out/cache-profile.txt"
fi
if part run; then
  for requests in /tmp/corpus-second.jsonl "$corpus"; do
    for with in "" "${cache[*]}"; do
      echo "== run pinned $(basename "$requests") ${with}"
      # shellcheck disable=SC2086
      "$app" run --checkpoint synthetic --config "$fp8" --storage pinned --requests "$requests" --summary-only --quiet \
        $with 2>&1 | grep -E "wall|phases|cache|error" || rc=1
    done
  done >"$out/cache-run.txt"
  cat "$out/cache-run.txt"
fi
if part step; then
  "$app" bench step --config "$fp8" --storage pinned --requests /tmp/corpus-second.jsonl --tokens 64 8192 \
    --modes eager "${cache[@]}" --min-seconds 1 >"$out/cache-step.txt" 2>&1 || rc=1
  grep -v '^{' "$out/cache-step.txt"
fi
if part disk; then
  "$app" bench lookup --storage disk --formats fp8 nvfp4 --ids 8192 131072 --rows 16777216 --disk-dir /tmp \
    --min-seconds 0.5 >"$out/cache-disk.txt" 2>&1 || rc=1
  grep -v '^{' "$out/cache-disk.txt"
fi
if part disk-real; then
  nvfp4=/tmp/pleshard-qwen-nvfp4.json
  qwen_as nvfp4 "$nvfp4"
  rm -rf /tmp/pleshard-nvfp4
  "$app" ckpt make --config "$nvfp4" --out /tmp/pleshard-nvfp4 --quiet >"$out/cache-disk-real.txt" 2>&1 || rc=1
  n=0
  for reads in ${DISK_READS:-cached}; do
    for with in "" "${cache[*]}"; do
      sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
      n=$((n + 1))
      echo "== run disk --disk-reads $reads corpus-second.jsonl ${with} (log: cache-disk-real-$n.log)" >>"$out/cache-disk-real.txt"
      # The whole log, progress included, so that a run cut short still shows how far it got.
      # shellcheck disable=SC2086
      "$app" run --checkpoint /tmp/pleshard-nvfp4 --storage disk --disk-reads "$reads" \
        --requests /tmp/corpus-second.jsonl --summary-only --collective-timeout 300 $with \
        >"$out/cache-disk-real-$n.log" 2>&1 || rc=1
      grep -E "load|wall|phases|cache|error" "$out/cache-disk-real-$n.log" >>"$out/cache-disk-real.txt"
    done
  done
  cat "$out/cache-disk-real.txt"
  rm -rf /tmp/pleshard-nvfp4
fi
exit $rc
