#!/usr/bin/env python3
"""The scaling study's figures (jobs/scaling_plots.py) drawn from summary rows made here, read
back from their SVGs: the throughput's log axis labels at least two ticks where every value
lies within one decade (matplotlib's own labels only powers of ten: none there), the phases
are drawn per step and the axis says so, and a title says which rank counts oversubscribe
the node's cores (4 ranks on 2 cores here) and none where none does.

    scaling_plots_check.py SOURCE_DIR"""
import os
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(sys.argv[1], "jobs"))
import scaling_plots  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"


def texts(path, group_prefix=None):
    """The SVG's texts; with group_prefix, those inside groups whose id starts with it."""
    root = ET.parse(path).getroot()
    groups = [g for g in root.iter(f"{SVG}g") if group_prefix and g.get("id", "").startswith(group_prefix)]
    found = []
    for g in groups or ([root] if group_prefix is None else []):
        found += ["".join(t.itertext()).strip() for t in g.iter(f"{SVG}text")]
    return [t for t in found if t]


def row(ranks, tokens_per_s, cores):
    r = {"mode": "strong", "ranks": ranks, "status": "ok", "nodes": 1, "cores": cores, "tp": 1, "etp": 1,
         "dp": ranks, "storage": "host", "placement": "host", "repeats": 2, "commit": "0123456789abcdef",
         "date": "2026-01-01T00:00:00+00:00", "tokens_per_s_median": tokens_per_s,
         "tokens_per_s_min": tokens_per_s * 0.97, "tokens_per_s_max": tokens_per_s * 1.02}
    for p, ms in [("load", 0.01), ("hash", 0.2), ("fetch", 0.5), ("decode", 0.3)]:
        r[f"{p}_ms_per_step_median"] = ms / ranks
        r[f"{p}_s_median"] = ms * 100  # the run's total: never the one drawn
    return r


def study(cores):
    rows = [row(1, 1200.0, cores), row(2, 1500.0, cores), row(4, 1900.0, cores)]
    for r in rows:
        r["speedup"] = r["tokens_per_s_median"] / 1200.0
        r["efficiency"] = r["speedup"] / r["ranks"]
        r["ideal_tokens_per_s"] = 1200.0 * r["ranks"]
    return rows


failed = []
with tempfile.TemporaryDirectory() as work:
    scaling_plots.plot_all(study(cores=2), f"{work}/over")
    labels = texts(f"{work}/over-throughput.svg", "ytick_")
    if len(labels) < 2:
        failed.append(f"throughput: {len(labels)} tick label(s) on the log axis: {labels}")
    phases = " ".join(texts(f"{work}/over-phases.svg"))
    if "per step" not in phases:
        failed.append(f"phases: neither the axis nor the title says the times are per step: {phases!r}")
    phase_ticks = [float(t.replace("\u2212", "-")) for t in texts(f"{work}/over-phases.svg", "ytick_")]
    if not phase_ticks or max(phase_ticks) > 10:  # 1.01 ms a step at most; the runs' totals reach 101 s
        failed.append(f"phases: the axis runs to {max(phase_ticks, default=None)}, not the per-step times")
    for name in ["throughput", "efficiency", "phases"]:
        title = " ".join(texts(f"{work}/over-{name}.svg"))
        if "oversubscribe" not in title or "4 ranks" not in title or "2 cores" not in title:
            failed.append(f"{name}: the title does not say that 4 ranks oversubscribe 2 cores: {title!r}")
    scaling_plots.plot_all(study(cores=64), f"{work}/fits")
    if "oversubscribe" in " ".join(texts(f"{work}/fits-throughput.svg")):
        failed.append("fits: 4 ranks on 64 cores said to oversubscribe")

if failed:
    print("FAIL: " + "\nFAIL: ".join(failed))
    sys.exit(1)
print("scaling plots: two or more log ticks labelled, phases per step, oversubscription in the title")
