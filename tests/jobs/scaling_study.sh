#!/usr/bin/env bash
# jobs/scaling.sh on 1, 2 and 4 ranks here (strong, 2 runs a point) and weak on 1 and 2: the
# summary's columns, one row per rank count, speedup 1 at the first, every run in the runs
# file, the plots written, -p's placement in the weak study; a mode it does not know, a weak
# study with a requests file, and -g with -p refused with exit 2. jobs/plot_curve.py on the
# documented curve: PNG and SVG. A study with a failed point (below).
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
"${study[@]}" -m weak -r "1 2" -n 1 -p host -o "$work/weak" >"$work/weak.log" 2>&1 || { cat "$work/weak.log"; fail "weak"; }

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
assert all(r["placement"] == "host" and "--placement host" in r["command"] for r in weak), "-p host"
assert all(r["status"] == "ok" and r["error"] == "" for r in strong + weak)
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
set +e
"${study[@]}" -g host -p auto >"$work/where.log" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] && grep -q "argument -p: not allowed with argument -g" "$work/where.log" || fail "-g with -p: exit $rc"

# A study on the disk tier whose 4-rank point fails (rank 2's first read of rows fails:
# PLESHARD_FAULT_DISK_READ_FAILURE_RANK=2, a rank only that point has): the 1- and 2-rank
# points are kept, the 4-rank one is marked failed in the CSV with pleshard's error line (not
# mpiexec's banner), what succeeded is plotted, and the study exits non-zero. --resume then
# reruns the failed point alone, keeps the others' rows as they were, and exits 0.
"$app" ckpt make --config "$config" --out "$work/ckpt" --quiet
disk_study=(env PLESHARD="$app" "$src/jobs/scaling.sh" -c "$work/ckpt" -g disk -r "1 2 4" -n 1 -s 16
            -x --synthetic-max-tokens=96 -o "$work/disk")

set +e
PLESHARD_FAULT_DISK_READ_FAILURE=0 PLESHARD_FAULT_DISK_READ_FAILURE_RANK=2 "${disk_study[@]}" >"$work/first.log" 2>&1
rc=$?
set -e
[ $rc -ne 0 ] || { cat "$work/first.log"; fail "the study with a failed point exited 0"; }
grep -q "4 ranks.*failed" "$work/first.log" || { cat "$work/first.log"; fail "no line naming the failed point"; }
cp "$work/disk.csv" "$work/first.csv"
for plot in throughput efficiency phases; do
  [ -s "$work/disk-$plot.svg" ] || { cat "$work/first.log"; fail "no $plot plot of the points that succeeded"; }
done

$py - "$work" <<'PY' || fail "the first study's CSV (above)"
import csv, sys
with open(f"{sys.argv[1]}/disk.csv", newline="") as f:
    rows = list(csv.DictReader(f))
assert [r["ranks"] for r in rows] == ["1", "2", "4"], [r["ranks"] for r in rows]
assert [r["status"] for r in rows] == ["ok", "ok", "failed"], [r["status"] for r in rows]
error = rows[2]["error"]
assert error.startswith("pleshard: rank 2: error: ") and "reading a step's rows: Input/output error" in error, error
assert "\n" not in error, error
assert all(r["error"] == "" and float(r["tokens_per_s_median"]) > 0 for r in rows[:2]), rows[:2]
assert rows[2]["tokens_per_s_median"] == "" and rows[2]["speedup"] == "", rows[2]
assert float(rows[0]["speedup"]) == 1, rows[0]
with open(f"{sys.argv[1]}/disk-runs.csv", newline="") as f:
    runs = list(csv.DictReader(f))
assert [(r["ranks"], r["status"]) for r in runs] == [("1", "ok"), ("2", "ok"), ("4", "failed")], runs
PY

"${disk_study[@]}" --resume >"$work/resume.log" 2>&1 || { cat "$work/resume.log"; fail "the resumed study"; }
[ "$(grep -c "run 1 of 1" "$work/resume.log")" -eq 1 ] && grep -q "4 ranks.*run 1 of 1" "$work/resume.log" ||
  { cat "$work/resume.log"; fail "--resume ran other points than the failed one"; }
$py - "$work" <<'PY' || fail "the resumed study's CSV (above)"
import csv, sys
def rows(name):
    with open(f"{sys.argv[1]}/{name}", newline="") as f:
        return list(csv.DictReader(f))
first, now = rows("first.csv"), rows("disk.csv")
assert [r["status"] for r in now] == ["ok", "ok", "ok"], [(r["ranks"], r["status"], r["error"]) for r in now]
for before, after in zip(first[:2], now[:2]):
    changed = {k: (v, after.get(k)) for k, v in before.items() if after.get(k) != v}
    assert not changed, f"{before['ranks']} ranks: the kept row changed: {changed}"
assert float(now[2]["tokens_per_s_median"]) > 0 and now[2]["error"] == "", now[2]
assert [r["ranks"] for r in rows("disk-runs.csv")] == ["1", "2", "4"]
PY

# A study that ran other arguments is not resumed into.
set +e
"${disk_study[@]}" --resume -s 8 >"$work/other.log" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] && grep -q "disk.csv: its 1-rank point ran .* this study runs" "$work/other.log" ||
  { cat "$work/other.log"; fail "--resume into another study's CSV: exit $rc"; }

$py "$src/jobs/plot_curve.py" "$src/docs/row-cache-curve.csv" "$work/curve.svg" >/dev/null || fail "plot_curve.py"
[ -s "$work/curve.png" ] && [ -s "$work/curve.svg" ] || fail "plot_curve.py wrote no PNG and SVG"
echo "scaling study: columns, rows, plots and refusals as expected; a failed point kept, marked and resumed"
