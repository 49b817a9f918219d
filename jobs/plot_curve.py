#!/usr/bin/env python3
"""Plots a miss-ratio curve written by `pleshard profile --curve CURVE.csv` as an SVG:
the share of lookups served without a read of the slow tier against the cache's size
(share of the table's rows, log scale), one line per column, for table 0 (or --table).

    python3 jobs/plot_curve.py CURVE.csv OUT.svg [--table D] [--title TEXT]
"""
import argparse
import csv
import math

COLUMNS = [("bound", "repeats or profile's hottest", "#888888"), ("optimal", "Belady's optimum", "#444444"),
           ("mixed", "static + dynamic", "#d62728"), ("static", "profile first", "#1f77b4"),
           ("dynamic", "dynamic only", "#2ca02c")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("svg")
    parser.add_argument("--table", type=int, default=0)
    parser.add_argument("--title", default="row cache: lookups served without a read")
    args = parser.parse_args()
    with open(args.csv, newline="") as f:
        rows = [r for r in csv.DictReader(f) if int(r["table"]) == args.table]
    if not rows:
        raise SystemExit(f"{args.csv}: no rows of table {args.table}")
    xs = [math.log10(float(r["share_of_rows"])) for r in rows]
    x0, x1 = min(xs), max(xs)
    if x1 == x0:
        x1 = x0 + 1
    width, height, left, right, top, bottom = 640, 400, 60, 200, 40, 50
    px = lambda x: left + (x - x0) / (x1 - x0) * (width - left - right)
    py = lambda y: top + (1 - y) * (height - top - bottom)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           f'font-size="12"><rect width="100%" height="100%" fill="white"/>',
           f'<text x="{left}" y="20" font-size="14">{args.title}</text>']
    for k in range(0, 11, 2):
        y = k / 10
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{py(y)}" y2="{py(y)}" stroke="#eee"/>'
                   f'<text x="{left - 8}" y="{py(y) + 4}" text-anchor="end">{int(y * 100)}%</text>')
    for r, x in zip(rows, xs):
        out.append(f'<text x="{px(x)}" y="{height - bottom + 18}" text-anchor="middle">'
                   f'{float(r["share_of_rows"]) * 100:g}%</text>')
    out.append(f'<text x="{(left + width - right) / 2}" y="{height - 10}" text-anchor="middle">'
               f'cache size, share of the table\'s rows</text>')
    for i, (name, label, colour) in enumerate(COLUMNS):
        points = " ".join(f"{px(x):.1f},{py(float(r[name])):.1f}" for r, x in zip(rows, xs))
        out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{width - right + 10}" y="{top + 16 * i + 10}" fill="{colour}">{label}</text>')
    out.append("</svg>")
    with open(args.svg, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
