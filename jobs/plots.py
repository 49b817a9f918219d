"""Matplotlib set up for files, not screens, and figures saved as PNG and SVG."""
import math
import sys

try:
    import matplotlib

    matplotlib.use("Agg")  # no display on compute nodes
    matplotlib.rcParams["svg.hashsalt"] = "pleshard"  # the same plot, the same SVG bytes
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: small, editable SVGs
    import matplotlib.pyplot as plt
    from matplotlib import ticker
    MISSING = ""
except ImportError:
    MISSING = (f"matplotlib not found for {sys.executable} "
               "(Debian: apt-get install python3-matplotlib, then use /usr/bin/python3)")


def figure(title):
    fig, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="major", color="#dddddd")
    return fig, ax


def rank_axis(ax, ranks):
    """Ranks on a log2 axis, one labelled tick per rank count measured (and its neighbours
    where it is the only one, so that the axis still reads as a scale)."""
    ax.set_xscale("log", base=2)
    ticks = sorted(set(ranks))
    if len(ticks) == 1:
        ticks = [r for r in (ticks[0] / 2, ticks[0], ticks[0] * 2) if r >= 1]
        ax.set_xlim(ticks[0] / 1.25, ticks[-1] * 1.25)
    ax.xaxis.set_major_locator(ticker.FixedLocator(ticks))
    ax.xaxis.set_major_formatter(ticker.FixedFormatter([f"{r:g}" for r in ticks]))
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    ax.set_xlabel("ranks")


def log_y_axis(ax, values):
    """A log y axis over `values` (positive) labelled at 1-2-5 steps, at least two of them:
    matplotlib labels only powers of ten, so values within one decade would get no label."""
    lo, hi = min(values), max(values)
    steps = [m * 10.0 ** e for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 2)
             for m in (1, 2, 5)]
    below = max(s for s in steps if s <= lo)
    above = min(s for s in steps if s >= hi and s > below)
    ticks = [s for s in steps if below <= s <= above]
    if len(ticks) > 6:  # several decades: their powers of ten (any 7 steps hold two)
        ticks = [s for s in ticks if math.isclose(10 ** round(math.log10(s)), s)]
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(ticker.FixedLocator(ticks))
    ax.yaxis.set_major_formatter(ticker.EngFormatter())
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_ylim(min(lo, ticks[0]) / 1.15, max(hi, ticks[-1]) * 1.15)


def save(fig, stem):
    """Writes STEM.png and STEM.svg; returns their paths."""
    paths = [f"{stem}.png", f"{stem}.svg"]
    fig.savefig(paths[0], dpi=150, metadata={"Software": None})
    fig.savefig(paths[1], metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return paths
