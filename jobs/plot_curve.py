#!/usr/bin/env python3
"""Plots a miss-ratio curve written by `pleshard profile --curve CURVE.csv`: the share of
lookups served without a read of the slow tier against the cache's size (share of the
table's rows, log scale), one line per policy, for table 0 (or --table). Writes OUT.png and
OUT.svg (OUT without its extension, if it has one).

    /usr/bin/python3 jobs/plot_curve.py CURVE.csv OUT [--table D] [--title TEXT]
"""
import argparse
import csv
import os
import sys

import plots

# Column, label, colour, line style: the bounds dashed, the cache's policies solid.
COLUMNS = [("bound", "repeats or profile's hottest (bound)", "#888888", "--"),
           ("optimal", "Belady's optimum", "#444444", ":"),
           ("mixed", "static + dynamic (default)", "#d62728", "-"),
           ("static", "profile first", "#1f77b4", "-"),
           ("dynamic", "dynamic only", "#2ca02c", "-")]


def percent(share):
    return f"{share * 100:.3g}%"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("out", help="OUT.png and OUT.svg are written")
    parser.add_argument("--table", type=int, default=0)
    parser.add_argument("--title", default="row cache: lookups served without a read of the slow tier")
    args = parser.parse_args()
    if plots.MISSING:
        sys.exit(f"plot_curve: {plots.MISSING}")
    with open(args.csv, newline="") as f:
        rows = [r for r in csv.DictReader(f) if int(r["table"]) == args.table]
    if not rows:
        sys.exit(f"{args.csv}: no rows of table {args.table}")
    rows.sort(key=lambda r: float(r["share_of_rows"]))
    shares = [float(r["share_of_rows"]) for r in rows]
    fig, ax = plots.figure(f"{args.title}, table {args.table}")
    for name, label, colour, style in COLUMNS:
        if name in rows[0]:
            ax.plot(shares, [float(r[name]) for r in rows], style, marker="o", markersize=4, color=colour, label=label)
    ax.set_xscale("log")
    # One labelled tick per measured size; log-scale minor ticks unlabelled, so labels never collide.
    ax.xaxis.set_major_locator(plots.ticker.FixedLocator(shares))
    ax.xaxis.set_major_formatter(plots.ticker.FixedFormatter([percent(s) for s in shares]))
    ax.xaxis.set_minor_formatter(plots.ticker.NullFormatter())
    ax.tick_params(axis="x", labelrotation=45 if len(shares) > 6 else 0)
    ax.set_xlabel("cache size, share of the table's rows")
    ax.set_ylabel("lookups served without a read")
    ax.set_ylim(0, 1)
    ax.yaxis.set_major_formatter(plots.ticker.PercentFormatter(1.0))
    ax.legend(loc="lower right", fontsize=9)
    stem = os.path.splitext(args.out)[0] if args.out.endswith((".png", ".svg")) else args.out
    print("plot_curve: wrote " + ", ".join(plots.save(fig, stem)))


if __name__ == "__main__":
    main()
