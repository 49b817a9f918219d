#!/usr/bin/env bash
# The app with a row format, a storage tier, an exchange strategy and a model family linked
# in from tests/extension alone (int8_row, mirror, toy-gather, toy_ple): its --help lists each
# beside the built-in ones, and a checkpoint of the toy family in the toy format, served from
# the toy tier through the toy strategy on 1 and 2 ranks, gives the embeddings the built-ins
# give (the same tables under Qwen4Exp's key, host tier, gather-reduce), byte for byte; so
# does embed through the family, the format and the tier.
#   toys.sh PLESHARD_TOYS MPIEXEC EMBEDDINGS_EQUAL
set -euo pipefail
app=$1; mpiexec=$2; equal=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fail() { echo "FAIL: $*"; exit 1; }

listed() {  # listed COMMAND TEXT: COMMAND's --help has TEXT
  local help
  help=$($app $1 --help)
  grep -qF -- "$2" <<<"$help" || fail "$1 --help does not list $2"
}
listed "bench lookup" "fp8_e8m0,int8_row"
listed "run" "{host,device,pinned,disk,mirror}"
listed "run" "peer-read,toy-gather}"
listed "run" "toy-gather (a test's own gather-reduce)"
listed "embed" "{host,device,pinned,disk,mirror}"
listed "run" "ple_layer_ids (Qwen4Exp), engram_layer_ids (DeepSeek Engram) or toy_layer_ids (Toy PLE)"
listed "ckpt make" "toy_layer_ids (Toy PLE)"

shape='"vocab_size": 1000, "eos_token_id": 2, "num_hidden_layers": 4, "ngram_size": 3, "heads_per_ngram": 2,
 "ple_embed_dim": 128, "ngram_vocab_size_base": 500, "split_ngram_parts": 7'
echo "{$shape, \"toy_layer_ids\": [1, 3]}" > toy.json
echo "{$shape, \"ple_layer_ids\": [1, 3]}" > qwen.json
for model in toy qwen; do
  "$app" ckpt make --config $model.json --out $model --kind safetensors --format int8_row --quiet >/dev/null
done
# The checkpoint's config is written back by the toy family, under its own key.
grep -q '"toy_layer_ids"' toy/config.json && ! grep -q ple_layer_ids toy/config.json \
  || fail "the toy checkpoint's config: $(cat toy/config.json)"

job=(run --synthetic 30 --synthetic-max-tokens 120 --step-tokens 64 --decode-tokens 3 --quiet --json)
field() { python3 "$(dirname "$0")/report_field.py" "$@"; }
"$app" "${job[@]}" --checkpoint qwen --storage host --exchange gather-reduce --out reference.h5 >/dev/null
for ranks in 1 2; do
  "$mpiexec" -n $ranks --oversubscribe "$app" "${job[@]}" --checkpoint toy --etp $ranks --storage mirror \
    --exchange toy-gather --out toys_$ranks.h5 >toys_$ranks.log
  "$equal" reference.h5 toys_$ranks.h5 2 bfloat16 >/dev/null || fail "$ranks rank(s): the toys' embeddings differ"
  [ "$(field toys_$ranks.log exchange)" = toy-gather ] || fail "$ranks rank(s): not run through toy-gather"
done
# embed (one process) through the family, the format and the tier: the built-ins' bytes.
echo '{"requests": [{"tokens": [5, 6, 7, 2, 9, 9, 9]}, {"context": [3, 4], "tokens": [1]}]}' > batch.json
"$app" embed --checkpoint qwen --batch batch.json --out embed_reference.h5 --out-dtype float32
"$app" embed --checkpoint toy --batch batch.json --out embed_toys.h5 --out-dtype float32 --storage mirror
"$equal" embed_reference.h5 embed_toys.h5 2 float32 >/dev/null || fail "embed: the toys' embeddings differ"
echo "toys: ok"
