#!/usr/bin/env bash
# pleshard bench's output for programs and for comparing runs, on every benchmark (exchange and
# step on 2 ranks, load on a small checkpoint):
# - --json: JSON lines alone, each valid, with `bench` and `case`; --csv: a header line, then
#   rows of as many cells with the same keys; the default: the table, then the same JSON lines,
#   the table's numbers in fixed notation. --json with --csv is bad usage (exit 2).
# - lookup: the host tier beside its ceiling, a memcpy of the same rows' bytes (host-memcpy),
#   and each host row's of_ceiling its GB/s over that row's.
# - step: tokens/s of all DP ranks and per DP rank, as the headings say: tokens_per_s_per_dp_rank
#   is tokens x steps / wall_s (every step full here) and tokens_per_s that times dp.
# - a line saying the CUDA cases were skipped and why: a CUDA build without a GPU (CI) says so,
#   a build without CUDA too; with a GPU, no such line and a cuda row.
# - progress on stderr in a run of more than 2 s, none in a short one.
#   bench_output.sh PLESHARD MPIEXEC CUDA_BUILD(ON|OFF) CHECKPOINT
set -euo pipefail
app=$1 mpiexec=$2 cuda=$3 ckpt=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
quick=(--min-seconds 0.01)
declare -A bench=(
  [hash]="bench hash --tokens 1 64 ${quick[*]}"
  [lookup]="bench lookup --rows 4096 --ids 64 4096 --formats bf16 nvfp4 ${quick[*]}"
  [exchange]="bench exchange --tokens 1 64 --exchange gather-reduce owner ${quick[*]}"
  [step]="bench step --storage host --rows 4096 --tokens 8 --etp 2 --modes eager graph ${quick[*]}"
  [load]="bench load --checkpoint $ckpt --storage host"
)
for name in "${!bench[@]}"; do
  # shellcheck disable=SC2206 # the benchmark's words
  words=(${bench[$name]})
  for format in table json csv; do
    flag=()
    [ "$format" != table ] && flag=(--"$format")
    "$mpiexec" --oversubscribe -n 2 "$app" "${words[@]}" "${flag[@]}" >"$work/$name.$format" 2>"$work/$name.$format.err" ||
      { cat "$work/$name.$format.err"; fail "$name --$format"; }
  done
done

python3 - "$work" "$cuda" "$(nvidia-smi -L 2>/dev/null | grep -c "^GPU" || true)" <<'PY' || fail "the outputs (above)"
import csv, io, json, math, re, sys
work, cuda, gpus = sys.argv[1], sys.argv[2], int(sys.argv[3] or 0)
def text(name):
    with open(f"{work}/{name}") as f:
        return f.read()
failed = []
for name in ["hash", "lookup", "exchange", "step", "load"]:
    json_lines = text(f"{name}.json").splitlines()
    rows = [json.loads(line) for line in json_lines]  # every line valid JSON: nothing else there
    if not rows or any(r["bench"] != name or not r["case"] or r.get("wrong") != 0 for r in rows):
        failed.append(f"{name} --json: {json_lines}")
    table = text(f"{name}.csv").splitlines()
    parsed = list(csv.reader(io.StringIO(text(f"{name}.csv"))))
    header, cells = parsed[0], parsed[1:]
    if header[:2] != ["bench", "case"] or len(cells) != len(rows) or any(len(c) != len(header) for c in cells):
        failed.append(f"{name} --csv: {table}")
    elif [dict(zip(header, c))["case"] for c in cells] != [r["case"] for r in rows]:
        failed.append(f"{name} --csv: its cases differ from --json's")
    elif set(header) != {"bench", "case"} | {k for r in rows for k in r}:
        failed.append(f"{name} --csv: keys {header} are not --json's")
    default = text(f"{name}.table").splitlines()
    if [json.loads(l)["case"] for l in default if l.startswith("{")] != [r["case"] for r in rows]:
        failed.append(f"{name}: the table's JSON lines are not --json's")
    columns = [l for l in default if not l.startswith("{") and not l.startswith("#")]
    if len(columns) != len(rows) + 1 or any(re.search(r"\de[+-]\d", l) for l in columns):
        failed.append(f"{name}: the table is not one heading and a row per result in fixed notation: {columns}")

lookup = json.loads("[" + ",".join(text("lookup.json").splitlines()) + "]")
for r in lookup:
    if r["tier"] in ("host", "host-gather"):
        ceiling = [c for c in lookup if c["tier"] == "host-memcpy" and c["format"] == r["format"] and c["ids"] == r["ids"]]
        if r["ceiling"] != "host-memcpy" or len(ceiling) != 1 or ceiling[0]["wrong"] != 0 or \
                not math.isclose(r["of_ceiling"], r["gb_per_s"] / ceiling[0]["gb_per_s"], rel_tol=1e-9):
            failed.append(f"lookup: {r['case']}: of_ceiling {r.get('of_ceiling')} against {ceiling}")
if len([r for r in lookup if r["tier"] == "host-memcpy"]) != 4:
    failed.append("lookup: not one host-memcpy row per format and ids")

for r in (json.loads(line) for line in text("step.json").splitlines()):
    per_rank = r["tokens"] * r["steps"] / r["wall_s"]
    if r["dp"] != 2 or not math.isclose(r["tokens_per_s_per_dp_rank"], per_rank, rel_tol=1e-9) or \
            not math.isclose(r["tokens_per_s"], 2 * per_rank, rel_tol=1e-9):
        failed.append(f"step: {r['case']}: tokens/s {r['tokens_per_s']}, per DP rank "
                      f"{r['tokens_per_s_per_dp_rank']}; expected {2 * per_rank}, {per_rank}")
if "tokens/s/DP = per DP rank" not in text("step.table") or "tokens/s/DP" not in text("step.table").split("\n")[2]:
    failed.append("step: the table does not say which tokens/s is per DP rank")

why = "" if gpus and cuda == "ON" else "no GPU here, though this build has CUDA" if cuda == "ON" else "this build has no CUDA"
for name, what in [("hash", "the cuda kernel"), ("step", "graph mode of host, the peer-read exchange")]:
    skipped = [l for l in text(f"{name}.table").splitlines() if l.startswith("# CUDA cases skipped: ")]
    on_stderr = [l for l in text(f"{name}.json.err").splitlines() if "CUDA cases skipped" in l]
    if name == "hash" and not why:
        if skipped or not any(json.loads(l)["kernel"] == "cuda" for l in text("hash.json").splitlines()):
            failed.append(f"hash with a GPU: {skipped}, or no cuda row")
        continue
    if len(skipped) != 1 or not skipped[0].startswith(f"# CUDA cases skipped: {what}: ") or why not in skipped[0]:
        failed.append(f"{name}: expected one line '# CUDA cases skipped: {what}: ... {why}', got {skipped}")
    if len(on_stderr) != 1 or not on_stderr[0].startswith(f"pleshard: bench {name}: CUDA cases skipped: {what}"):
        failed.append(f"{name} --json: the skipped line on stderr: {on_stderr}")
if failed:
    print("\n".join(failed))
    sys.exit(1)
PY

set +e
"$app" bench hash --json --csv >"$work/both.log" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] && grep -q -- "--json excludes --csv" "$work/both.log" || { cat "$work/both.log"; fail "--json --csv: exit $rc"; }

# Progress: four cases of at least 1 s, lines from 2 s on; none in a short run (the hash's above).
"$app" bench hash --no-cuda --tokens 1 8 64 512 --min-seconds 1 --json >/dev/null 2>"$work/long.err" || fail "the long run"
grep -q "^pleshard: bench hash: case [34] of 4 (host, [0-9]* tokens), [0-9]* s so far$" "$work/long.err" ||
  { cat "$work/long.err"; fail "no progress in a run of 4 s"; }
! grep -q "so far" "$work/hash.json.err" || fail "progress lines in a short run"
echo "bench output: table, JSON lines and CSV agree; ceilings, per-DP-rank rates, skipped CUDA cases and progress said"
