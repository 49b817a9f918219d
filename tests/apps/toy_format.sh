#!/usr/bin/env bash
# The app with a row format linked in from tests/extension alone (int8_row): its --help and
# its errors list the format with the built-in ones; ckpt make writes a checkpoint of it,
# which verifies and embeds from the host tier (in every output dtype; the library's test
# checks the values against a reference), and from the disk tier where it decodes on the host;
# a tier that decodes on the GPU refuses it in one line, exit 1.
#   toy_format.sh PLESHARD_WITH_INT8_ROW EMBEDDINGS_EQUAL
set -euo pipefail
app=$1; equal=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }

cat > config.json <<JSON
{"vocab_size": 1000, "eos_token_id": 2, "num_hidden_layers": 4, "ngram_size": 3,
 "heads_per_ngram": 2, "ple_embed_dim": 128, "ngram_vocab_size_base": 500,
 "split_ngram_parts": 7, "ple_layer_ids": [1, 3]}
JSON
echo '{"requests": [{"tokens": [5, 6, 7, 2, 9, 9, 9]}, {"context": [3, 4], "tokens": [1]}]}' > batch.json

"$app" bench lookup --help | grep -q 'fp8_e8m0,int8_row' || fail "bench lookup --help does not list int8_row"
"$app" ckpt make --help | grep -q 'fp8_e8m0 or int8_row' || fail "ckpt make --help does not list int8_row"
set +e
"$app" ckpt make --config config.json --out c.h5 --kind hdf5 --format int4 >out.txt 2>&1
code=$?
set -e
[ $code = 1 ] && grep -q 'row format "int4": expected f32, bf16, f16, fp8, nvfp4, fp8_e8m0 or int8_row' out.txt \
  || fail "an unknown --format: exit $code, $(cat out.txt)"

"$app" ckpt make --config config.json --out c.h5 --kind hdf5 --format int8_row --quiet >/dev/null
"$app" ckpt verify --checkpoint c.h5 --quiet | grep -q "verify: OK" || fail "ckpt verify"
"$app" ckpt inspect --checkpoint c.h5 | grep -q "int8_row" || fail "ckpt inspect does not name int8_row"
for dtype in float32 bfloat16 float16; do
  "$app" embed --checkpoint c.h5 --batch batch.json --out e_$dtype.h5 --out-dtype $dtype
  [ -s e_$dtype.h5 ] || fail "embed --out-dtype $dtype wrote nothing"
done

# The disk tier decodes on the GPU where one is present: there it refuses the format in one
# line, and so does the device tier; without a GPU it serves the format as the host tier does.
set +e
"$app" embed --checkpoint c.h5 --batch batch.json --out disk.h5 --out-dtype float32 --storage disk >out.txt 2>&1
code=$?
set -e
if grep -q 'has no GPU kernel' out.txt; then
  [ $code = 1 ] && [ "$(grep -c 'error:' out.txt)" = 1 ] && grep -q -- '--storage disk: format int8_row has no GPU kernel' out.txt \
    || fail "embed --storage disk with a GPU: exit $code, $(cat out.txt)"
  [ ! -e disk.h5 ] || fail "a refused embed left disk.h5"
  set +e
  "$app" embed --checkpoint c.h5 --batch batch.json --out d.h5 --storage device >out.txt 2>&1
  code=$?
  set -e
  [ $code = 1 ] && grep -q -- '--storage device: format int8_row has no GPU kernel' out.txt \
    || fail "embed --storage device: exit $code, $(cat out.txt)"
else
  [ $code = 0 ] || fail "embed --storage disk without a GPU: exit $code, $(cat out.txt)"
  "$equal" e_float32.h5 disk.h5 2 float32 >/dev/null || fail "the disk tier's embeddings differ from the host tier's"
fi
echo "toy format: ok"
