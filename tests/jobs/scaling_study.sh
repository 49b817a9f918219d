#!/usr/bin/env bash
# jobs/scaling.sh on 1, 2 and 4 ranks here (strong, 2 runs a point) and weak on 1 and 2: the
# summary's columns, one row per rank count, speedup 1 at the first, every run in the runs
# file, the plots written; a mode it does not know and a weak study with a requests file
# refused with exit 2. jobs/plot_curve.py on the documented curve: PNG and SVG.
#   scaling_study.sh PLESHARD SOURCE_DIR CONFIG
set -euo pipefail
app=$(realpath "$1"); src=$(realpath "$2"); config=$(realpath "$3")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3
fail() {
  echo "FAIL: $*"
  exit 1
}
study=(env PLESHARD="$app" "$src/jobs/scaling.sh" -c synthetic -x "--config $config" -s 16 -x --synthetic-max-tokens=96)

"${study[@]}" -r "4 1 2" -n 2 -e all -o "$work/strong" >"$work/strong.log" 2>&1 || { cat "$work/strong.log"; fail "strong"; }
"${study[@]}" -m weak -r "1 2" -n 1 -o "$work/weak" >"$work/weak.log" 2>&1 || { cat "$work/weak.log"; fail "weak"; }

# The summaries, checked by column name.
$py - "$work" <<'PY' || fail "the summaries (above)"
import csv, sys
work = sys.argv[1]
need = ["mode", "ranks", "nodes", "tp", "etp", "dp", "storage", "backend", "exchange", "requests", "tokens", "repeats",
        "tokens_per_s_median", "tokens_per_s_min", "tokens_per_s_max", "speedup", "efficiency", "ideal_tokens_per_s",
        "seconds_median", "step_p50_us_median", "load_s_median", "hash_s_median", "fetch_s_median", "decode_s_median",
        "commit", "date", "host", "slurm_job", "command"]
def rows(name):
    with open(f"{work}/{name}.csv", newline="") as f:
        return list(csv.DictReader(f))
strong, weak, runs = rows("strong"), rows("weak"), rows("strong-runs")
missing = [c for c in need if c not in strong[0]]
assert not missing, f"strong.csv lacks {missing}"
assert [r["ranks"] for r in strong] == ["1", "2", "4"], [r["ranks"] for r in strong]
assert [r["etp"] for r in strong] == ["1", "2", "4"], "-e all: ETP = ranks"
assert all(r["repeats"] == "2" for r in strong)
assert float(strong[0]["speedup"]) == 1 and float(strong[0]["efficiency"]) == 1
for r in strong:
    lo, med, hi = (float(r[f"tokens_per_s_{k}"]) for k in ("min", "median", "max"))
    assert 0 < lo <= med <= hi, r
    assert abs(float(r["efficiency"]) * int(r["ranks"]) - float(r["speedup"])) < 1e-3 * float(r["speedup"]) + 1e-6
# One busbw column per collective of the sharded runs (all-gather of ids, all-reduce of rows, ...).
busbw = [c for c in strong[0] if c.startswith("busbw_") and c.endswith("_gb_s")]
assert len(busbw) >= 2, f"busbw columns: {busbw}"
assert all(r[busbw[0]] != "" for r in strong[1:]), busbw[0]
assert len({r["tokens"] for r in strong}) == 1, "strong scaling: the same tokens everywhere"
assert [r["requests"] for r in weak] == ["16", "32"], "weak scaling: 16 requests per DP rank"
assert len(runs) == 6 and {"repeat", "tokens_per_s", "commit"} <= set(runs[0]), list(runs[0])
PY
for name in strong weak; do
  for plot in throughput efficiency phases; do
    for ext in png svg; do [ -s "$work/$name-$plot.$ext" ] || fail "no $name-$plot.$ext"; done
  done
done

# Refusals: exit 2 and a message naming the option.
set +e
"${study[@]}" -m sideways >"$work/mode.log" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] && grep -q "argument -m: invalid choice: 'sideways'" "$work/mode.log" || fail "-m sideways: exit $rc"
set +e
"${study[@]}" -m weak -q "$src/tests/apps/data/one.requests.jsonl" >"$work/weakq.log" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] && grep -q "a requests file (-q) is for strong scaling" "$work/weakq.log" || fail "-m weak -q: exit $rc"

$py "$src/jobs/plot_curve.py" "$src/docs/row-cache-curve.csv" "$work/curve.svg" >/dev/null || fail "plot_curve.py"
[ -s "$work/curve.png" ] && [ -s "$work/curve.svg" ] || fail "plot_curve.py wrote no PNG and SVG"
echo "scaling study: columns, rows, plots and refusals as expected"
