#!/usr/bin/env bash
# After h200-build.sh (same build directory): Qwen3.8-Flash-Next's PLE table at its real size
# (jobs/models/qwen3.8-flash-next/config.json: 320,001,536 rows of 160 values) on one H200.
#   [CORPUS=...] [DATA=dir for checkpoints] [PARTS="inplace nvfp4 make fp8"] jobs/device/h200-real-size.sh
# - inplace: BF16 (102 GB) made in GPU memory, no file: bench lookup (device tier, next to
#   the same bench at 1M rows), bench step and run --summary-only on the corpus;
# - nvfp4: ckpt make (28.8 GB, timed), bench load into the device tier from a cold page
#   cache, run --summary-only on the device tier, bench lookup of the device tier (made in
#   place, next to 1M rows), and the disk tier from a cold page cache by bench step and by
#   run --summary-only;
# - make: ckpt make of the NVFP4 table with rows made on the GPU (the default where one is
#   present) and on the 16 cores (--cpu), each timed (MAKERS="gpu cpu");
# - fp8: ckpt make (51.2 GB), bench load into the device and pinned tiers (cold), bench
#   lookup of both tiers (made in place, next to 1M rows), bench step and run
#   --summary-only on both tiers from the file.
# - pinned: ckpt make (FP8, 51.2 GB), bench load into the pinned tier (cold) reading past the
#   page cache, then through it (PLESHARD_DIRECT_LOADS=0), each beside the files' own rate.
# - host-reads: the FP8 table made in place in pinned memory, run --summary-only and bench
#   step through UVA and with --host-reads auto;
# - hdf5: ckpt make of the NVFP4 table as one HDF5 file (28.8 GB), bench load into the
#   device and pinned tiers (cold), each beside the file's own rate;
# - nvfp4-pinned: ckpt make (NVFP4, 28.8 GB), bench load into the pinned tier (cold), beside
#   the files' rate (codes and scales interleaved on the host);
# - bf16: ckpt make of a BF16 table of 120M rows (38.4 GB: the 102 GB table does not fit on the
#   64 GB disk; the same shape with ngram_vocab_size_base 7,500,000), rows made on the GPU
#   and on the 16 cores (--cpu), each timed;
# - beside: the pinned tier's lookup with device-tier lookups beside it (FP8 made in place),
#   for a large pinned table (320M rows) beside a small device one (1M rows), the reverse,
#   and both large: whether the pair's slowdown at real size comes from the two tables' sizes
#   together;
# - tests: the GPU tests of tiers, loads and large row ranges (ctest -V: tests.txt names every
#   case and every skip).
# The disk holds one real-size checkpoint at a time: each part removes its own.
# Results go to $OUT (default ./out): <part>.txt (tables) and <part>.jsonl (JSON lines).
set -uo pipefail
source "$(dirname "$0")/env.sh"
data=${DATA:-/tmp/pleshard-real}
parts=${PARTS:-tests inplace nvfp4 make fp8 pinned nvfp4-pinned hdf5 beside bf16}
rc=0
mkdir -p "$data"
qwen=jobs/models/qwen3.8-flash-next/config.json
run_job=(run --requests "$corpus" --summary-only --quiet --collective-timeout 120)
echo "ulimit -l: $(ulimit -l); $(grep MemAvailable /proc/meminfo); $(df -h "$data" | tail -1)" | tee "$out/machine.txt"

if part tests; then
  ctest --test-dir "$build" -V -R "gpu_tiers|large_rows|large_offsets|roundtrip|run_tiers|cuda_graph|checkpoints" \
    >"$out/tests.txt" 2>&1 || rc=1
  grep -E "tests passed|tests failed|Failed|Passed|SKIPPED" "$out/tests.txt"
fi

if part inplace; then
  log inplace "$app" bench lookup --storage device --formats bf16 --rows 320001536 --ids 64 8192 1048576 --min-seconds 0.2
  log inplace "$app" bench lookup --storage device --formats bf16 --rows 1048576 --ids 64 8192 1048576 --min-seconds 0.2
  log inplace "$app" bench step --config "$qwen" --storage device --requests "$corpus" --tokens 64 1024 8192 --min-seconds 0.3
  log inplace "$app" "${run_job[@]}" --checkpoint synthetic --config "$qwen" --storage device --json
  log inplace "$app" "${run_job[@]}" --checkpoint synthetic --config "$qwen" --storage device --cuda-graph --json
fi

if part nvfp4; then
  qwen_as nvfp4 "$data/nvfp4.json"
  rm -rf "$data/nvfp4"
  log nvfp4 "$app" ckpt make --config "$data/nvfp4.json" --out "$data/nvfp4" --quiet
  log nvfp4 "$app" bench load --checkpoint "$data/nvfp4" --storage device --cold
  log nvfp4 "$app" "${run_job[@]}" --checkpoint "$data/nvfp4" --storage device --json
  log nvfp4 "$app" bench step --checkpoint "$data/nvfp4" --storage device --requests "$corpus" --tokens 64 1024 8192 --min-seconds 0.3
  sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
  log nvfp4 "$app" bench step --checkpoint "$data/nvfp4" --storage disk --requests "$corpus" --tokens 64 1024 --modes eager --min-seconds 0.3
  sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
  log nvfp4 "$app" "${run_job[@]}" --checkpoint "$data/nvfp4" --storage disk --json
  log nvfp4 "$app" bench lookup --storage device --formats nvfp4 --rows 320001536 --ids 64 8192 1048576 --min-seconds 0.2
  log nvfp4 "$app" bench lookup --storage device --formats nvfp4 --rows 1048576 --ids 64 8192 1048576 --min-seconds 0.2
  rm -rf "$data/nvfp4"
fi

if part make; then
  qwen_as nvfp4 "$data/nvfp4.json"
  for maker in ${MAKERS:-gpu cpu}; do
    rm -rf "$data/nvfp4"
    flags=(); [ $maker = cpu ] && flags=(--cpu)
    log make "$app" ckpt make --config "$data/nvfp4.json" --out "$data/nvfp4" --quiet "${flags[@]}"
  done
  rm -rf "$data/nvfp4"
fi

if part fp8; then
  qwen_as float8_e4m3fn "$data/fp8.json"
  rm -rf "$data/fp8"
  log fp8 "$app" ckpt make --config "$data/fp8.json" --out "$data/fp8" --quiet
  log fp8 "$app" bench load --checkpoint "$data/fp8" --storage device pinned --cold
  log fp8 "$app" "${run_job[@]}" --checkpoint "$data/fp8" --storage pinned --json
  log fp8 "$app" "${run_job[@]}" --checkpoint "$data/fp8" --storage device --json
  log fp8 "$app" bench step --checkpoint "$data/fp8" --storage device pinned --requests "$corpus" --tokens 64 1024 8192 --modes eager --min-seconds 0.3
  rm -rf "$data/fp8"
  log fp8 "$app" bench lookup --storage device pinned --formats fp8 --rows 320001536 --ids 64 8192 1048576 --min-seconds 0.2
  log fp8 "$app" bench lookup --storage device pinned --formats fp8 --rows 1048576 --ids 64 8192 1048576 --min-seconds 0.2
fi

if part host-reads; then
  # The real FP8 table pinned, made in place (no file): the batch job on the corpus and whole
  # steps with the GPU reading every row through UVA, and with --host-reads auto (the host
  # and the GPU sharing the rows of large steps).
  qwen_as float8_e4m3fn "$data/fp8.json"
  for reads in uva auto; do
    log host-reads "$app" "${run_job[@]}" --checkpoint synthetic --config "$data/fp8.json" --storage pinned \
      --host-reads "$reads" --json
    log host-reads "$app" bench step --config "$data/fp8.json" --storage pinned \
      --host-reads "$reads" --requests "$corpus" --tokens 64 1024 8192 --modes eager --min-seconds 0.3
  done
fi

if part hdf5; then
  qwen_as nvfp4 "$data/nvfp4.json"
  rm -f "$data/nvfp4.h5"
  log hdf5 "$app" ckpt make --config "$data/nvfp4.json" --kind hdf5 --out "$data/nvfp4.h5" --quiet
  log hdf5 "$app" bench load --checkpoint "$data/nvfp4.h5" --config "$data/nvfp4.json" --storage device pinned --cold
  rm -f "$data/nvfp4.h5"
fi

if part beside; then
  for sizes in "320001536 1048576" "1048576 320001536" "320001536 320001536"; do
    read -r pinned_rows device_rows <<<"$sizes"
    log beside "$app" bench lookup --storage pinned --formats fp8 --rows "$pinned_rows" --beside-rows "$device_rows" \
      --ids 8192 1048576 --min-seconds 0.2
  done
fi

if part bf16; then
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["ngram_vocab_size_base"]=7500000; json.dump(c,open(sys.argv[2],"w"))' \
    "$qwen" "$data/bf16.json"
  for maker in gpu cpu; do
    rm -rf "$data/bf16"
    flags=(); [ $maker = cpu ] && flags=(--cpu)
    log bf16 "$app" ckpt make --config "$data/bf16.json" --out "$data/bf16" --quiet "${flags[@]}"
  done
  du -sb "$data/bf16" | tee -a "$out/bf16.txt"
  rm -rf "$data/bf16"
fi

if part nvfp4-pinned; then
  qwen_as nvfp4 "$data/nvfp4.json"
  rm -rf "$data/nvfp4"
  log nvfp4-pinned "$app" ckpt make --config "$data/nvfp4.json" --out "$data/nvfp4" --quiet
  log nvfp4-pinned "$app" bench load --checkpoint "$data/nvfp4" --storage pinned --cold
  rm -rf "$data/nvfp4"
fi

if part pinned; then
  qwen_as float8_e4m3fn "$data/fp8.json"
  rm -rf "$data/fp8"
  log pinned "$app" ckpt make --config "$data/fp8.json" --out "$data/fp8" --quiet
  log pinned "$app" bench load --checkpoint "$data/fp8" --storage pinned --cold
  PLESHARD_DIRECT_LOADS=0 log pinned "$app" bench load --checkpoint "$data/fp8" --storage pinned --cold
  rm -rf "$data/fp8"
fi
exit $rc
