#!/usr/bin/env bash
# After h200-build.sh (same build directory): DeepSeek-V4.1-Flash's Engram tables on one H200,
# `pleshard run --summary-only --storage device` next to the PyTorch flow
# (jobs/torch_engram_flow.py) on the same checkpoint and the same folded corpus.
#   [CORPUS=path/to/corpus-a.tokens.jsonl] [ENGRAM_VOCAB=700000] [DATA=/tmp/pleshard-engram-flow] \
#     jobs/device/h200-engram.sh
# - model: jobs/models/deepseek-v4.1-flash/config.json (2 tables, 24 heads of 256 values, FP8
#   + E8M0) with engram_vocab_size ENGRAM_VOCAB instead of 16,000,000: the real tables (384M
#   rows, 101 GB each) fit neither the 64 GB disk nor, both, one GPU. At 700,000 (the shape
#   of h200-engram-bench.sh and docs/performance.md) a table has 16.8M rows (4.4 GB), far
#   past the GPU's caches. The token map is synthetic (jobs/engram_token_map.py), not the
#   model's tokenizer's;
# - corpus: CORPUS folded into vocab_size 129,280 (jobs/fold_corpus.py): say "folded" beside
#   any figure;
# - ckpt make (safetensors), then torch_engram_flow.py --pleshard (a batch's ids and embedding
#   bits against `pleshard ids` and `embed`, chunked against whole) and timed over the corpus,
#   then pleshard run on the device tier, eager and with CUDA graphs.
# Results go to $OUT (default ./out): engram.txt (the log), engram.jsonl (every JSON line) and
# comparison.json (one line: both rates and pleshard's speedup over PyTorch, the issue's
# target 10x). Exits 1, saying FAILED, when any step fails, the check is not "ok", or the
# runs did not all cover the corpus's tokens.
set -uo pipefail
source "$(dirname "$0")/env.sh"
[ -f "$corpus" ] || { echo "FAILED: no corpus at $corpus (make it with jobs/make_corpus.sh, or set CORPUS)"; exit 1; }
[ -x "$app" ] || { echo "FAILED: no $app (build it first: jobs/device/h200-build.sh)"; exit 1; }
data=${DATA:-/tmp/pleshard-engram-flow}
vocab=${ENGRAM_VOCAB:-700000}
rc=0
rm -rf "$data" && mkdir -p "$data"
rm -f "$out/engram.txt" "$out/engram.jsonl" "$out/comparison.json"  # the comparison reads this run's lines only
{ nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; df -h "$data" | tail -1
  python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name())'; } |
  tee -a "$out/engram.txt"

real=jobs/models/deepseek-v4.1-flash/config.json
python3 - "$real" "$vocab" "$data/config.json" <<'PY' || { echo "FAILED: config"; exit 1; }
import json, sys
c = json.load(open(sys.argv[1]))
c["engram_vocab_size"] = int(sys.argv[2])
c.pop("engram_num_embeddings", None)  # the real tables' rows; these derive their own
c["_comment"] = ("DeepSeek-V4.1-Flash's Engram config scaled for one H200: "
                 f"engram_vocab_size {sys.argv[2]} (real: 16000000)")
json.dump(c, open(sys.argv[3], "w"), indent=1)
PY
log engram python3 jobs/engram_token_map.py --config "$data/config.json" --out "$data/engram_token_map.npy"
vocab_size=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["vocab_size"])' "$data/config.json")
python3 jobs/fold_corpus.py --vocab-size "$vocab_size" <"$corpus" >"$data/folded.jsonl" ||
  { echo "FAILED: fold"; exit 1; }
echo "corpus $corpus folded into $vocab_size: $(wc -l <"$data/folded.jsonl") requests" | tee -a "$out/engram.txt"

model=$data/model
log engram "$app" ckpt make --config "$data/config.json" --out "$model" --quiet
du -sh "$model" | tee -a "$out/engram.txt"
log engram python3 jobs/torch_engram_flow.py --checkpoint "$model" --requests "$data/folded.jsonl" --pleshard "$app"
job=(run --checkpoint "$model" --requests "$data/folded.jsonl" --summary-only --storage device --quiet --json)
log engram "$app" "${job[@]}"
log engram "$app" "${job[@]}" --cuda-graph

python3 - "$out/engram.jsonl" "$vocab" "$vocab_size" "$corpus" >"$out/comparison.json" <<'PY' || rc=1
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
flow = [l for l in lines if l.get("job") == "torch-engram-flow"]
runs = [l for l in lines if l.get("job") == "run"]
if len(flow) != 1 or len(runs) != 2:
    sys.exit(f"FAILED: expected one PyTorch flow line and two pleshard run lines, got {len(flow)} and {len(runs)}")
flow, (eager, graph) = flow[0], runs
problems = []
if flow["checked_against_pleshard"] != "ok":
    problems.append(f"the check said {flow['checked_against_pleshard']}")
for name, r in (("eager", eager), ("graph", graph)):
    if r["outcome"] != "ran" or r["tokens_done"] != flow["tokens"]:
        problems.append(f"pleshard run ({name}): outcome {r['outcome']}, {r['tokens_done']} tokens, "
                        f"PyTorch {flow['tokens']}")
print(json.dumps({"job": "engram-comparison", "corpus": sys.argv[4] + " folded into vocab " + sys.argv[3],
                  "engram_vocab_size": int(sys.argv[2]), "rows": flow["rows"], "format": flow["format"],
                  "tokens": flow["tokens"], "device": flow["device"], "torch": flow["torch"],
                  "torch_tokens_per_s": flow["tokens_per_s"], "pleshard_tokens_per_s": eager["tokens_per_s"],
                  "pleshard_graph_tokens_per_s": graph["tokens_per_s"],
                  "speedup": eager["tokens_per_s"] / flow["tokens_per_s"],
                  "speedup_graph": graph["tokens_per_s"] / flow["tokens_per_s"], "target_speedup": 10,
                  "checked_against_pleshard": flow["checked_against_pleshard"], "problems": problems}))
if problems:
    sys.exit("FAILED: " + "; ".join(problems))
PY
cat "$out/comparison.json"
rm -rf "$data"
[ $rc -eq 0 ] || echo "FAILED: see $out/engram.txt"
exit $rc
