#!/usr/bin/env python3
"""jobs/bench_compare.py on two small files of known values: A holds three runs (one of them
in the default output's table form, whose other lines are skipped), B one. Each case's ratio
of medians, its band (the larger relative spread of A's or B's runs) and its verdict: a rate
doubled beyond a band of ±18.2% is faster, a latency halved is faster, a 5% change inside
±20% is noise, a case wrong on one side is WRONG, a case run once on each side has no band;
cases on one side only are listed; --metric picks other keys. A file without benchmark rows
exits 2.

    bench_compare_check.py SOURCE_DIR"""
import json
import os
import subprocess
import sys
import tempfile

compare = os.path.join(sys.argv[1], "jobs", "bench_compare.py")


def lookup(tier, gb_per_s, wrong=0):
    return {"bench": "lookup", "case": f"tier={tier} ids=64", "tier": tier, "ids": 64, "seconds": 1e-5,
            "rows_per_s": gb_per_s * 1e6, "gb_per_s": gb_per_s, "wrong": wrong}


def step(p50_us, tokens_per_s):
    return {"bench": "step", "case": "tier=host tokens=8", "tier": "host", "tokens": 8, "p50_us": p50_us,
            "tokens_per_s": tokens_per_s, "wrong": 0}


a_runs = [[lookup("host", 10), lookup("host-gather", 100), step(10, 800), lookup("pinned", 5), lookup("disk", 4)],
          [lookup("host", 11), lookup("host-gather", 110), step(10, 800), lookup("pinned", 5)],
          [lookup("host", 12), lookup("host-gather", 90), step(10, 800), lookup("pinned", 5, wrong=3)]]
b_run = [lookup("host", 22), lookup("host-gather", 105), step(5, 1600), lookup("device", 50), lookup("pinned", 5),
         lookup("disk", 2)]

failed = []
with tempfile.TemporaryDirectory() as work:
    with open(f"{work}/A.json", "w") as f:
        for k, run in enumerate(a_runs):
            if k == 1:  # the default output: a table, then the JSON lines
                f.write("# pleshard bench lookup: ...\ntier   format  ids  us\nhost   bf16     64  1.00\n")
            f.writelines(json.dumps(row) + "\n" for row in run)
    with open(f"{work}/B.json", "w") as f:
        f.writelines(json.dumps(row) + "\n" for row in b_run)
    with open(f"{work}/empty.json", "w") as f:
        f.write("# nothing here\n")

    def run(*args):
        return subprocess.run([sys.executable, compare, *args], capture_output=True, text=True)

    out = run(f"{work}/A.json", f"{work}/B.json")
    # Each line: bench, metric, A, n, B, n, B/A, band, then the verdict's words and the case's (key=value).
    rows = [line.split() for line in out.stdout.splitlines() if not line.startswith("#")][1:]
    found = {(w[0], w[1], next(x for x in w if x.startswith("tier="))):
             (w[6], w[7], " ".join(x for x in w[8:] if "=" not in x)) for w in rows}
    expected = {  # B/A, band, verdict
        ("lookup", "gb_per_s", "tier=host"): ("2.000", "±18.2%", "B faster"),
        ("lookup", "gb_per_s", "tier=host-gather"): ("1.050", "±20.0%", "within noise"),
        ("lookup", "gb_per_s", "tier=pinned"): ("1.000", "±0.0%", "WRONG"),
        ("step", "tokens_per_s", "tier=host"): ("2.000", "±0.0%", "B faster"),
        ("step", "p50_us", "tier=host"): ("0.500", "±0.0%", "B faster"),
        ("lookup", "gb_per_s", "tier=disk"): ("0.500", "-", "B slower (no band: one run each)"),
    }
    for key, want in expected.items():
        if found.get(key) != want:
            failed.append(f"{' '.join(key)}: expected {want}, got {found.get(key)}")
    if len(rows) != len(expected):
        failed.append(f"expected {len(expected)} comparisons:\n{out.stdout}")
    if "# only in B (1): lookup tier=device ids=64" not in out.stdout or "only in A" in out.stdout:
        failed.append(f"the cases on one side only:\n{out.stdout}")
    if out.returncode != 0:
        failed.append(f"exit {out.returncode}: {out.stderr}")

    chosen = run(f"{work}/A.json", f"{work}/B.json", "--metric", "rows_per_s").stdout
    chosen_rows = [line.split() for line in chosen.splitlines() if not line.startswith("#")][1:]
    if sorted(w[1] for w in chosen_rows) != ["rows_per_s"] * 4:
        failed.append(f"--metric rows_per_s:\n{chosen}")

    empty = run(f"{work}/A.json", f"{work}/empty.json")
    if empty.returncode != 2 or "empty.json: no benchmark rows" not in empty.stderr:
        failed.append(f"a file without rows: exit {empty.returncode}, {empty.stderr!r}")

if failed:
    print("FAIL: " + "\nFAIL: ".join(failed))
    sys.exit(1)
print("bench compare: ratios, bands and verdicts as expected")
