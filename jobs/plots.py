"""Matplotlib set up for files, not screens, and figures saved as PNG and SVG."""
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
    """Ranks on a log2 axis, one labelled tick per rank count measured."""
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(ticker.FixedLocator(ranks))
    ax.xaxis.set_major_formatter(ticker.FixedFormatter([str(r) for r in ranks]))
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    if len(ranks) == 1:
        ax.set_xlim(ranks[0] / 1.5, ranks[0] * 1.5)
    ax.set_xlabel("ranks")


def save(fig, stem):
    """Writes STEM.png and STEM.svg; returns their paths."""
    paths = [f"{stem}.png", f"{stem}.svg"]
    fig.savefig(paths[0], dpi=150, metadata={"Software": None})
    fig.savefig(paths[1], metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return paths
