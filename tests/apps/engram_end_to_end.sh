#!/usr/bin/env bash
# Every command on a DeepSeek Engram model as on a Qwen one: ckpt make (both layouts, the
# token map carried along), convert (byte for byte back), verify and inspect; run on every
# tier this machine has, every layout of 3 ranks and every exchange, bit-identical to one
# process and to embed; a killed job resumed to the same bytes; profile; bench step and
# lookup on the Engram shape; with a GPU, the device and pinned tiers under CUDA graphs and
# the row cache filled from the profile.
#   engram_end_to_end.sh PLESHARD MPIEXEC CONFIG EMBEDDINGS_EQUAL SOURCE_DIR
set -euo pipefail
app=$1; mpiexec=$2; config=$3; equal=$4; source_dir=$5
# A Python with NumPy for the token map: Debian's (python3-numpy, scripts/install-deps.sh),
# else the first on PATH.
python=
for p in /usr/bin/python3 python3; do
  if "$p" -c 'import numpy' 2>/dev/null; then python=$p; break; fi
done
[ -n "$python" ] || { echo "FAIL: no python3 with numpy: scripts/install-deps.sh installs python3-numpy"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fail() { echo "FAIL: $*"; exit 1; }
mpi() { "$mpiexec" -n "$1" --oversubscribe "${@:2}"; }

# The model: its config and a token map beside it (found there by every command).
mkdir "$work/model"
cp "$config" "$work/model/config.json"
"$python" "$source_dir/jobs/engram_token_map.py" --config "$work/model/config.json" \
  --out "$work/model/engram_token_map.npy" >/dev/null

# Checkpoints: safetensors as released and HDF5, converted back byte for byte; the map goes along.
"$app" ckpt make --config "$work/model/config.json" --out "$work/st" --quiet >/dev/null
[ -e "$work/st/engram_token_map.npy" ] || fail "ckpt make did not carry the token map"
"$app" ckpt make --config "$work/model/config.json" --out "$work/c.h5" --kind hdf5 --quiet >/dev/null
"$app" ckpt convert --checkpoint "$work/c.h5" --config "$work/model/config.json" --out "$work/back" \
  --kind safetensors --quiet >/dev/null
cmp "$work/st/model.safetensors" "$work/back/model.safetensors" || fail "HDF5 -> safetensors differs"
"$app" ckpt verify --checkpoint "$work/st" --quiet | grep -q "verify: OK" || fail "verify"
# Without its token map the tables cannot be hashed: verify refuses them, inspect says so.
cp -r "$work/st" "$work/nomap" && rm "$work/nomap/engram_token_map.npy"
if "$app" ckpt verify --checkpoint "$work/nomap" --quiet >"$work/nomap.log" 2>&1; then
  fail "verify passed a checkpoint without its token map"
fi
grep -q "hashing needs the token map" "$work/nomap.log" || fail "verify without a map: $(cat "$work/nomap.log")"
"$app" ckpt verify --checkpoint "$work/nomap" --token-map "$work/st/engram_token_map.npy" --quiet |
  grep -q "verify: OK" || fail "verify --token-map"
"$app" ckpt inspect --checkpoint "$work/nomap" | grep -q "not servable: .*token map" || fail "inspect without a map"
"$app" ckpt inspect --checkpoint "$work/c.h5" --config "$work/model/config.json" | grep -q "fp8_e8m0" \
  || fail "inspect does not name the format"

# Requests with dead tokens and a JSONL batch.
"$python" - "$work" <<'PY'
import json, random, sys
random.seed(7)
work = sys.argv[1]
with open(f"{work}/req.jsonl", "w") as f:
    for i in range(30):
        n = random.randint(1, 120)
        f.write(json.dumps({"id": f"r{i}", "tokens": [random.choice([999] + list(range(1000))) for _ in range(n)]}) + "\n")
with open(f"{work}/batch.json", "w") as f:
    json.dump({"requests": [{"tokens": [5, 999, 6, 7]}, {"context": [3], "tokens": [1, 2]},
                            {"context": [998, 4], "tokens": [9]}]}, f)
PY

job=(run --requests "$work/req.jsonl" --step-tokens 64 --part-tokens 400)
"$app" "${job[@]}" --quiet --checkpoint "$work/st" --out "$work/whole.h5" >/dev/null
same() { "$equal" "$work/whole.h5" "$1" 2 bfloat16 >/dev/null || fail "$2 differs from one process"; rm -f "$1"; }

tiers=(host disk)
gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  gpu=1
  tiers+=(device pinned)
fi
for tier in "${tiers[@]}"; do
  for layout in "--tp 1 --etp 1" "--tp 1 --etp 3" "--tp 3 --etp 3"; do
    exchanges=(auto)
    [ "$tier" = disk ] || exchanges=(auto gather-reduce reduce-scatter owner hierarchical)
    for exchange in "${exchanges[@]}"; do
      # shellcheck disable=SC2086
      mpi 3 "$app" "${job[@]}" --quiet --checkpoint "$work/c.h5" --storage "$tier" $layout --exchange "$exchange" \
        --out "$work/o.h5" >/dev/null
      same "$work/o.h5" "$tier $layout $exchange"
    done
  done
done
if [ $gpu = 1 ]; then
  for tier in device pinned; do
    "$app" "${job[@]}" --quiet --checkpoint "$work/st" --storage "$tier" --cuda-graph --out "$work/o.h5" >/dev/null
    same "$work/o.h5" "$tier under CUDA graphs"
  done
fi

# embed with contexts (dead tokens among them) on 2 ranks from HDF5 equals one process.
"$app" embed --checkpoint "$work/st" --batch "$work/batch.json" --out "$work/b1.h5" >/dev/null
mpi 2 "$app" embed --checkpoint "$work/c.h5" --batch "$work/batch.json" --storage disk --out "$work/b2.h5" >/dev/null
"$equal" "$work/b1.h5" "$work/b2.h5" 2 bfloat16 >/dev/null || fail "embed on 2 ranks differs"

# A killed job resumes to the same bytes.
set +e
PLESHARD_FAULT_KILL_AFTER_PARTS=2 mpi 3 "$app" "${job[@]}" --checkpoint "$work/st" --etp 3 --out "$work/k.h5" \
  >/dev/null 2>&1
rc=$?
set -e
[ $rc -ne 0 ] && [ -e "$work/k.h5.partial" ] || fail "the killed job did not leave a partial output"
mpi 3 "$app" "${job[@]}" --checkpoint "$work/st" --etp 3 --out "$work/k.h5" >"$work/resumed.log"
grep -qE "parts resumed +2$" "$work/resumed.log" || fail "did not resume: $(cat "$work/resumed.log")"
cmp "$work/whole.h5" "$work/k.h5" || fail "resumed output differs"

# A profile, and the row cache filled from it (GPU), and the benches on the Engram shape.
"$app" profile --checkpoint "$work/st" --requests "$work/req.jsonl" --out "$work/prof.h5" --quiet >/dev/null
if [ $gpu = 1 ]; then
  "$app" "${job[@]}" --checkpoint "$work/st" --storage pinned --cache-rows 4000 --cache-profile "$work/prof.h5" \
    --out "$work/o.h5" >/dev/null
  same "$work/o.h5" "pinned with a row cache"
fi
"$app" bench step --config "$work/model/config.json" --checkpoint "$work/st" --tokens 1 64 --min-seconds 0.05 \
  | grep -q "p50" || fail "bench step"
"$app" bench lookup --formats fp8_e8m0 --rows 4096 --head-dim 256 --ids 64 --min-seconds 0.05 | grep -q "fp8_e8m0" \
  || fail "bench lookup"
echo "engram end to end: identical"
