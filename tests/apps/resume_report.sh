#!/usr/bin/env bash
# Throughput after a resume is this run's work over this run's time: a job killed after two
# of its four parts and rerun reports the tokens of those two parts as resumed, the other
# two's as done, and tokens/s over the tokens done; rerun once more on its complete output it
# does nothing and says so ("complete, nothing to do", outcome nothing_to_do, no rates), in
# the text and the JSON alike.
#   resume_report.sh PLESHARD CHECKPOINT MPIEXEC
set -euo pipefail
app=$1; ckpt=$2; mpiexec=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Ten requests of 100 tokens in parts of at least 250 tokens: parts of 3, 3, 3 and 1 requests.
python3 -c '
import json
for r in range(10):
    print(json.dumps({"id": f"r{r}", "tokens": [(r * 37 + t * 11) % 997 + 3 for t in range(100)]}))' >"$work/requests.jsonl"
run() { "$mpiexec" -n 2 --oversubscribe "$app" run --checkpoint "$ckpt" --requests "$work/requests.jsonl" \
  --step-tokens 64 --part-tokens 250 --quiet --out "$work/out.h5" "$@"; }
set +e
PLESHARD_FAULT_KILL_AFTER_PARTS=2 run >/dev/null 2>&1
set -e
[ ! -e "$work/out.h5" ] || { echo "FAIL: the killed run completed"; exit 1; }
run --json >"$work/resumed.json"
run --json >"$work/again.json"
run >"$work/again.txt"
grep -q "outcome  *complete, nothing to do" "$work/again.txt" \
  || { echo "FAIL: the rerun on a complete output does not say so:"; cat "$work/again.txt"; exit 1; }
grep -q "throughput (tokens/s)  *-$" "$work/again.txt" \
  || { echo "FAIL: a run that did nothing shows a rate:"; cat "$work/again.txt"; exit 1; }
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def report(name):
    return json.loads([l for l in open(f"{work}/{name}.json") if l.startswith("{")][-1])
r, again = report("resumed"), report("again")
failed = []
def expect(what, got, want):
    if got != want:
        failed.append(f"{what}: {got!r}, expected {want!r}")
expect("resumed: outcome", r["outcome"], "resumed")
expect("resumed: tokens", r["tokens"], 1000)
expect("resumed: parts, parts_resumed", (r["parts"], r["parts_resumed"]), (4, 2))
expect("resumed: tokens_resumed", r["tokens_resumed"], 600)
expect("resumed: tokens_done", r["tokens_done"], 400)
expect("resumed: bytes_written", r["bytes_written"] > 0, True)
if not r["wall_s"] > 0 or abs(r["tokens_per_s"] - 400 / r["wall_s"]) > 1e-6 * r["tokens_per_s"]:
    failed.append(f"resumed: tokens_per_s {r['tokens_per_s']} is not tokens_done / wall_s = 400 / {r['wall_s']}")
expect("again: outcome", again["outcome"], "nothing_to_do")
expect("again: tokens_done, tokens_resumed", (again["tokens_done"], again["tokens_resumed"]), (0, 1000))
expect("again: parts_resumed", again["parts_resumed"], 4)
expect("again: rates", (again["tokens_per_s"], again["rows_per_s"], again["step_p50_us"]), (None, None, None))
expect("again: steps, bytes_written", (again["steps"], again["bytes_written"]), (0, 0))
if failed:
    print("FAIL:\n  " + "\n  ".join(failed))
    sys.exit(1)
print(f"resume report: 600 tokens resumed, 400 done at {r['tokens_per_s']:.4g} tokens/s; then nothing to do")
PY
