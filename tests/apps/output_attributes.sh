#!/usr/bin/env bash
# Outputs describe themselves (docs/output.md): every /ple_{d} names its PLE index, decoder
# layer, model family, row width, heads and dtype; the root the model config, the
# checkpoint's identity, the requests and their SHA-256, the options that shaped the bytes
# and the pleshard version — the same bytes from one rank and from three (resume.sh checks a
# resumed output against an uninterrupted one); `embed` writes the same description, and
# bfloat16 unless told otherwise, like `run`. The raw read of docs/output.md gives the values
# HDF5's conversion gives.
#   output_attributes.sh PLESHARD CHECKPOINT MPIEXEC
set -euo pipefail
app=$1; ckpt=$2; mpiexec=$3
py=/usr/bin/python3  # Debian's, with python3-h5py (scripts/install-deps.sh)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$py" -c 'import h5py' 2>/dev/null || { echo "FAIL: $py has no h5py: scripts/install-deps.sh installs python3-h5py"; exit 1; }
cd "$work"
"$py" -c '
import json
for r in range(12):
    print(json.dumps({"id": f"q{r}", "tokens": [(r * 53 + t * 7) % 5000 + 1 for t in range(10 + 13 * r)]}))' >requests.jsonl
echo '{"requests": [{"tokens": [5, 6, 7, 2, 9]}, {"context": [3, 4], "tokens": [1, 8]}]}' >batch.json
job=(run --checkpoint "$ckpt" --requests requests.jsonl --part-tokens 300 --step-tokens 64 --quiet)
"$mpiexec" -n 1 "$app" "${job[@]}" --out one.h5 >/dev/null
"$mpiexec" -n 3 --oversubscribe "$app" "${job[@]}" --etp 3 --out three.h5 >/dev/null
cmp one.h5 three.h5 || { echo "FAIL: one rank and three wrote different bytes"; exit 1; }
"$app" embed --checkpoint "$ckpt" --batch batch.json --out embed.h5
version=$("$app" --version | cut -d' ' -f2)
"$py" - "$ckpt/config.json" "$version" <<'PY'
import hashlib, json, re, sys
import h5py
import numpy as np
config_path, version = sys.argv[1], sys.argv[2]
config = json.load(open(config_path))
failed = []
def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)
def expect(what, got, want):
    if got != want:
        failed.append(f"{what}: {got!r}, expected {want!r}")
def check(path, writer, requests, part_tokens):
    with h5py.File(path, "r") as f:
        a = {k: (text(v) if isinstance(v, (bytes, str)) else int(v)) for k, v in f.attrs.items()}
        expect(f"{path}: writer", a.get("writer"), writer)
        expect(f"{path}: pleshard_version", a.get("pleshard_version"), version)
        expect(f"{path}: family", a.get("family"), "qwen4exp")
        stored = json.loads(a.get("config", "{}"))
        for key in ["vocab_size", "eos_token_id", "ple_layer_ids", "ple_embed_dim", "ngram_vocab_size_base"]:
            expect(f"{path}: config {key}", stored.get(key), config[key])
        if not re.fullmatch(r"[0-9a-f]{16}", a.get("checkpoint_identity", "")):
            failed.append(f"{path}: checkpoint_identity {a.get('checkpoint_identity')!r}")
        expect(f"{path}: requests", a.get("requests"), requests)
        expect(f"{path}: requests_sha256", a.get("requests_sha256"), hashlib.sha256(open(requests, "rb").read()).hexdigest())
        expect(f"{path}: out_dtype", a.get("out_dtype"), "bfloat16")
        expect(f"{path}: part_tokens", a.get("part_tokens"), part_tokens)
        layers = config["ple_layer_ids"]
        heads = (config.get("ngram_size", 3) - 1) * config.get("heads_per_ngram", 8)
        for d, layer in enumerate(layers):
            s = f[f"ple_{d}"]
            l = {k: (text(v) if isinstance(v, (bytes, str)) else int(v)) for k, v in s.attrs.items()}
            expect(f"{path}: /ple_{d} attributes", l, {"dtype": "bfloat16", "ple_index": d, "decoder_layer": layer,
                                                         "decoder_layer_base": 1, "family": "qwen4exp", "row_width": config["ple_embed_dim"],
                                                         "heads": heads, "head_dim": config["ple_embed_dim"] // heads})
            # docs/output.md's read: the raw 16-bit words, from the dataset's offset in the file.
            raw = np.fromfile(path, dtype=np.uint16, count=s.size, offset=s.id.get_offset()).reshape(s.shape)
            values = (raw.astype(np.uint32) << 16).view(np.float32)
            if not np.array_equal(values, s.astype(np.float32)[...]):
                failed.append(f"{path}: /ple_{d}: the raw read differs from HDF5's conversion")
        return a["checkpoint_identity"]
run_identity = check("one.h5", "pleshard run", "requests.jsonl", 300)
embed_identity = check("embed.h5", "pleshard embed", "batch.json", 0)
expect("the checkpoint's identity in run's and embed's outputs", run_identity, embed_identity)
if failed:
    print("FAIL:\n  " + "\n  ".join(failed))
    sys.exit(1)
print("output attributes: described, identical across layouts")
PY
