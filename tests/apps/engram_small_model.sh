#!/usr/bin/env bash
# DeepSeek-V4.1's Engram layout shrunk (jobs/models/deepseek-v4.1-small) through every step a
# user takes: a synthetic token map (jobs/engram_token_map.py), ckpt inspect of the synthetic
# tables, ckpt make, run and embed — the checkpoint's rows equal the synthetic tables', and
# embed's equal run's. And the released config shrunk by its engram_vocab_size alone is
# refused with a message that names the key to remove.
#   engram_small_model.sh PLESHARD EMBEDDINGS_EQUAL SOURCE_DIR
set -euo pipefail
app=$1; equal=$2; source_dir=$3
python=/usr/bin/python3  # Debian's, with python3-numpy and python3-h5py (scripts/install-deps.sh)
"$python" -c 'import h5py, numpy' 2>/dev/null || { echo "FAIL: $python lacks h5py or numpy: scripts/install-deps.sh"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fail() { echo "FAIL: $*"; exit 1; }
models=$source_dir/jobs/models
config=$models/deepseek-v4.1-small/config.json
map=$work/synthetic_token_map.npy  # kept out of the config's directory, named each time
"$python" "$source_dir/jobs/engram_token_map.py" --config "$config" --out "$map" >/dev/null

# The synthetic tables and the checkpoint made of them: the same tables.
"$app" ckpt inspect --checkpoint synthetic --config "$config" --token-map "$map" >"$work/synthetic.txt" ||
  fail "ckpt inspect --checkpoint synthetic: $(cat "$work/synthetic.txt")"
"$app" ckpt make --config "$config" --token-map "$map" --out "$work/st" --quiet >/dev/null
"$app" ckpt inspect --checkpoint "$work/st" >"$work/made.txt"
tables() { grep -E '^ +[0-9]+ +[0-9]+ fp8_e8m0 +256 ' "$1" | awk '{print $1, $2, $5, $6}'; }
[ "$(tables "$work/synthetic.txt" | wc -l)" = 2 ] || fail "inspect synthetic: $(cat "$work/synthetic.txt")"
[ "$(tables "$work/synthetic.txt")" = "$(tables "$work/made.txt")" ] || fail "synthetic and made tables differ"

# Requests of the full vocabulary (dead image token among them), and the same as a batch.
"$python" - "$work" <<'PY'
import json, random, sys
random.seed(11)
work = sys.argv[1]
requests = [[random.choice([129264] + list(range(129280))) for _ in range(random.randint(1, 40))] for _ in range(12)]
with open(f"{work}/req.jsonl", "w") as f:
    for i, tokens in enumerate(requests):
        f.write(json.dumps({"id": f"r{i}", "tokens": tokens}) + "\n")
with open(f"{work}/batch.json", "w") as f:
    json.dump({"requests": [{"tokens": tokens} for tokens in requests]}, f)
PY
"$app" run --checkpoint "$work/st" --requests "$work/req.jsonl" --out "$work/made.h5" --quiet >/dev/null
"$app" run --checkpoint synthetic --config "$config" --token-map "$map" --requests "$work/req.jsonl" \
  --out "$work/synthetic.h5" --quiet >/dev/null
"$equal" "$work/made.h5" "$work/synthetic.h5" 2 bfloat16 >/dev/null || fail "run: checkpoint and synthetic differ"
"$app" embed --checkpoint "$work/st" --batch "$work/batch.json" --out "$work/embed.h5" >/dev/null
"$python" - "$work/made.h5" "$work/embed.h5" <<'PY' || fail "embed differs from run"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as run, h5py.File(sys.argv[2], "r") as embed:
    assert np.array_equal(run["query_start_loc"][...], embed["query_start_loc"][...])
    for d in range(2):
        a, b = run[f"ple_{d}"], embed[f"ple_{d}"]
        assert a.shape == b.shape == (a.shape[0], 24 * 256), (a.shape, b.shape)
        wa, wb = (np.empty(a.shape, np.uint16) for _ in range(2))
        a.id.read(h5py.h5s.ALL, h5py.h5s.ALL, wa, mtype=a.id.get_type())
        b.id.read(h5py.h5s.ALL, h5py.h5s.ALL, wb, mtype=b.id.get_type())
        assert np.array_equal(wa, wb) and wa.any()
PY

# The released config with a smaller engram_vocab_size alone: its engram_num_embeddings no
# longer match, and the message says to remove them.
"$python" - "$models/deepseek-v4.1-flash/config.json" "$work/shrunk.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["engram_vocab_size"] = 4000
json.dump(c, open(sys.argv[2], "w"))
PY
if "$app" ckpt inspect --checkpoint synthetic --config "$work/shrunk.json" --token-map "$map" >"$work/shrunk.log" 2>&1; then
  fail "a config whose engram_num_embeddings disagree was taken"
fi
grep -q "engram_num_embeddings = 384006168 for layer 1, but its heads derive 97968 rows from engram_vocab_size;.*remove it" \
  "$work/shrunk.log" || fail "shrunk config: $(cat "$work/shrunk.log")"
echo "engram small model: ok"
