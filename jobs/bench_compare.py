#!/usr/bin/env python3
"""Compares two sets of `pleshard bench` results case by case: B over A of each case's median,
against the noise of the runs themselves.

    jobs/bench_compare.py A.json B.json [--metric KEY]...

A.json and B.json hold the JSON lines of `pleshard bench ... --json` (the default output
works too: its other lines are skipped). A file may hold several runs of the same benchmark
(`pleshard bench lookup --json >> A.json`, three times): each case's value is then the median
of its runs, and its noise band the relative spread (max - min) / median of those runs, the
larger of A's and B's. A ratio outside the band is a change ("B faster", "B slower"); inside
it, "within noise"; with one run on each side there is no band and the ratio stands alone.
Rows are matched by `bench` and `case` (the values that identify a row's case). The metrics
compared are each benchmark's headline (--metric chooses others): a rate, where higher is
faster, or a time (`_us`, `seconds`, `_s`), where lower is. A case whose `wrong` is not 0 on
either side is marked WRONG. Exit status: 0, or 2 for a file that cannot be read or holds no
benchmark rows."""
import argparse
import json
import statistics
import sys

HEADLINE = {"hash": ["tokens_per_s"], "lookup": ["gb_per_s"], "exchange": ["busbw"], "step": ["tokens_per_s", "p50_us"],
            "load": ["gb_per_s"]}
# Where an older output has no `case`: the values that identify a row.
IDENTITY = {"ranks", "tokens", "ids", "heads", "tp", "etp", "layers", "head_dim"}


def lower_is_faster(metric):
    return metric.endswith("_us") or metric.endswith("_s") and not metric.endswith("_per_s") or metric == "seconds"


def case_of(row):
    if "case" in row:
        return row["case"]
    return " ".join(f"{k}={v}" for k, v in row.items()
                    if k != "bench" and (isinstance(v, (str, bool)) or k in IDENTITY))


def read_rows(path):
    """{(bench, case): [row, ...]} of the file's JSON lines, in order of first appearance."""
    cases = {}
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    row = json.loads(line)
                except ValueError as e:
                    sys.exit(f"bench_compare: {path}:{number}: not a JSON line: {e}")
                if isinstance(row, dict) and "bench" in row:
                    cases.setdefault((row["bench"], case_of(row)), []).append(row)
    except OSError as e:
        print(f"bench_compare: {path}: {e.strerror}", file=sys.stderr)
        sys.exit(2)
    if not cases:
        print(f"bench_compare: {path}: no benchmark rows (JSON lines with a \"bench\" key)", file=sys.stderr)
        sys.exit(2)
    return cases


def numbers(rows, metric):
    return [r[metric] for r in rows if isinstance(r.get(metric), (int, float)) and not isinstance(r[metric], bool)]


def spread(values):
    """(max - min) / median of two or more runs; None for one."""
    if len(values) < 2 or statistics.median(values) == 0:
        return None
    return (max(values) - min(values)) / abs(statistics.median(values))


def compare(a_rows, b_rows, metric):
    """A line's fields: A's and B's medians and run counts, B/A, the band and the verdict; None
    where either side lacks the metric."""
    a, b = numbers(a_rows, metric), numbers(b_rows, metric)
    if not a or not b:
        return None
    a_med, b_med = statistics.median(a), statistics.median(b)
    ratio = b_med / a_med if a_med else float("nan")
    bands = [s for s in (spread(a), spread(b)) if s is not None]
    band = max(bands) if bands else None
    if any(r.get("wrong") for r in a_rows + b_rows):
        verdict = "WRONG"
    elif ratio != ratio:
        verdict = "no ratio (A is 0)"
    elif band is not None and abs(ratio - 1) <= band:
        verdict = "within noise"
    else:
        faster = ratio < 1 if lower_is_faster(metric) else ratio > 1
        verdict = ("B faster" if faster else "B slower") if ratio != 1 else "same"
        if band is None:
            verdict += " (no band: one run each)"
    return a_med, len(a), b_med, len(b), ratio, band, verdict


def main(argv):
    p = argparse.ArgumentParser(prog="jobs/bench_compare.py", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 2)[2])
    p.add_argument("a", metavar="A.json")
    p.add_argument("b", metavar="B.json")
    p.add_argument("--metric", action="append", default=[], help="a key to compare (repeat for more)")
    args = p.parse_args(argv)
    a, b = read_rows(args.a), read_rows(args.b)
    lines = []
    for key, a_rows in a.items():
        if key not in b:
            continue
        for metric in args.metric or HEADLINE.get(key[0]) or [k for k in a_rows[0] if k.endswith("_per_s")][:1]:
            found = compare(a_rows, b[key], metric)
            if found:
                lines.append((key[0], metric, *found, key[1]))
    print(f"# bench_compare: B = {args.b} over A = {args.a}, each the median of its runs (n); band = the larger "
          "relative spread (max - min) / median of either side's runs")
    print(f"{'bench':<9} {'metric':<26} {'A':>12} {'n':>3} {'B':>12} {'n':>3} {'B/A':>7} {'band':>8}  "
          f"{'verdict':<14} case")
    for bench, metric, a_med, a_n, b_med, b_n, ratio, band, verdict, case in lines:
        band_text = f"±{100 * band:.1f}%" if band is not None else "-"
        print(f"{bench:<9} {metric:<26} {a_med:>12.6g} {a_n:>3} {b_med:>12.6g} {b_n:>3} {ratio:>7.3f} {band_text:>8}  "
              f"{verdict:<14} {case}")
    for name, mine, theirs in [("A", a, b), ("B", b, a)]:
        alone = [f"{bench} {case}" for bench, case in mine if (bench, case) not in theirs]
        if alone:
            print(f"# only in {name} ({len(alone)}): " + "; ".join(alone))
    changes = sum(1 for line in lines if line[8].startswith("B "))
    print(f"# {len(lines)} compared, {changes} outside the noise band, "
          f"{sum(1 for line in lines if line[8] == 'WRONG')} wrong")


if __name__ == "__main__":
    main(sys.argv[1:])
