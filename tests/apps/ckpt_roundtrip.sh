#!/usr/bin/env bash
# End to end through the command line: ckpt make -> verify -> inspect -> convert -> embed,
# for every format; identical embeddings from safetensors and HDF5 (the outputs' bytes
# differ only where they name their checkpoint); bad input exits 1 with a one-line message
# naming the file and leaves no output behind; the same files whether rows are made on a GPU
# or on any number of host threads.
#   ckpt_roundtrip.sh PLESHARD_EXECUTABLE EMBEDDINGS_EQUAL
set -euo pipefail
app=$1; equal=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

config() {  # config(dtype-json-fragment)
  cat <<JSON
{"vocab_size": 1000, "eos_token_id": 2, "num_hidden_layers": 4, "ngram_size": 3,
 "heads_per_ngram": 2, "ple_embed_dim": 128, "ngram_vocab_size_base": 500,
 "split_ngram_parts": 7, "ple_layer_ids": [1, 3] $1}
JSON
}
echo '{"requests": [{"tokens": [5, 6, 7, 2, 9, 9, 9]}, {"context": [3, 4], "tokens": [1]}, {"tokens": []}]}' > batch.json

for case in f32 bf16 f16 fp8 nvfp4; do
  case $case in
    fp8) config ', "ple_embedding_dtype": "float8_e4m3fn"' > $case.json; fmt=() ;;
    nvfp4) config ', "ple_embedding_dtype": "nvfp4"' > $case.json; fmt=() ;;
    *) config '' > $case.json; fmt=(--format $case) ;;
  esac
  "$app" ckpt make --config $case.json --out st_$case --files 3 "${fmt[@]}" --quiet >/dev/null
  # Rows made on the GPU where there is one, on 3 host threads here: the same files.
  "$app" ckpt make --config $case.json --out cpu_$case --files 3 "${fmt[@]}" --cpu --threads 3 --quiet >/dev/null
  diff -r st_$case cpu_$case >/dev/null || { echo "FAIL: $case: ckpt make --cpu --threads 3 wrote other bytes"; exit 1; }
  "$app" ckpt verify --checkpoint st_$case --quiet | grep -q "verify: OK"
  "$app" ckpt inspect --checkpoint st_$case | grep -q "multipliers agree, sizes agree, offsets agree"
  "$app" ckpt convert --checkpoint st_$case --out $case.h5 --kind hdf5 --quiet >/dev/null
  "$app" ckpt verify --checkpoint $case.h5 --quiet | grep -q "verify: OK"
  for dtype in float32 bfloat16 float16; do
    "$app" embed --checkpoint st_$case --batch batch.json --out a.h5 --out-dtype $dtype
    "$app" embed --checkpoint $case.h5 --batch batch.json --out b.h5 --out-dtype $dtype
    "$equal" a.h5 b.h5 2 $dtype >/dev/null \
      || { echo "FAIL: $case $dtype embeddings differ between safetensors and HDF5"; exit 1; }
  done
  echo "ok: $case"
done

expect_failure() {  # expect_failure PATTERN COMMAND...
  local pattern=$1; shift
  set +e
  out=$("$@" 2>&1); rc=$?
  set -e
  [ $rc -eq 1 ] || { echo "FAIL: exit $rc (want 1): $*"; echo "$out"; exit 1; }
  echo "$out" | grep -q -- "$pattern" || { echo "FAIL: no '$pattern' in: $out"; exit 1; }
  [ "$(echo "$out" | wc -l)" -eq 1 ] || { echo "FAIL: not one line: $out"; exit 1; }
}

# A truncated shard file.
cp -r st_bf16 broken
truncate -s -100 broken/model-00002-of-00003.safetensors
expect_failure "broken/model-00002-of-00003.safetensors: .*truncated file" "$app" ckpt verify --checkpoint broken --quiet
expect_failure "broken/model-00002-of-00003.safetensors" "$app" embed --checkpoint broken --batch batch.json --out c.h5
[ ! -e c.h5 ] && [ ! -e c.h5.partial ] || { echo "FAIL: output left behind"; exit 1; }
# A bad batch: no output file appears.
echo '{"requests": [{"tokens": [1, "x"]}]}' > bad.json
expect_failure "bad.json: requests\[0\].tokens\[1\]" "$app" embed --checkpoint bf16.h5 --batch bad.json --out d.h5
[ ! -e d.h5 ] || { echo "FAIL: output left behind"; exit 1; }
# A config that does not match the checkpoint.
expect_failure "does not match ple_embedding_dtype" "$app" ckpt verify --checkpoint bf16.h5 --config fp8.json
echo "ckpt round trip: all ok"
