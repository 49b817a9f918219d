"""The scaling study's figures from its summary rows (jobs/scaling.py): throughput and
parallel efficiency against ranks beside ideal scaling, and each rank count's step time by
phase."""
import plots
import run_report


def _title(rows, what):
    r = rows[0]
    layout = f"TP {r['tp']}" + (", ETP = ranks" if all(x["etp"] == x["ranks"] for x in rows) else f", ETP {r['etp']}")
    commit = r["commit"][:12] + ("-dirty" if r["commit"].endswith("-dirty") else "")
    return (f"{what}: pleshard run, {r['mode']} scaling\n"
            f"{r['storage']} tier, {layout}, {r['nodes']} node(s); {commit}, {r['date'].replace('+00:00', ' UTC')}")


def throughput(rows, prefix):
    ranks = [r["ranks"] for r in rows]
    med = [r["tokens_per_s_median"] or 0 for r in rows]
    low = [m - (r["tokens_per_s_min"] or m) for m, r in zip(med, rows)]
    high = [(r["tokens_per_s_max"] or m) - m for m, r in zip(med, rows)]
    fig, ax = plots.figure(_title(rows, "throughput"))
    ax.plot(ranks, [r["ideal_tokens_per_s"] or 0 for r in rows], "--", color="#888888", label="ideal (linear from the first)")
    ax.errorbar(ranks, med, yerr=[low, high], marker="o", capsize=4, color="#1f77b4",
                label=f"median of {rows[0]['repeats']} runs (bars: min, max)")
    plots.rank_axis(ax, ranks)
    ax.set_ylabel("tokens/s")
    ax.set_yscale("log")  # ideal scaling is then a straight line
    ax.yaxis.set_major_formatter(plots.ticker.EngFormatter())
    ax.yaxis.set_minor_formatter(plots.ticker.NullFormatter())
    ax.legend(loc="upper left")
    return plots.save(fig, f"{prefix}-throughput")


def efficiency(rows, prefix):
    ranks = [r["ranks"] for r in rows]
    eff = [r["efficiency"] or 0 for r in rows]
    fig, ax = plots.figure(_title(rows, "parallel efficiency"))
    ax.axhline(1.0, linestyle="--", color="#888888", label="ideal")
    ax.plot(ranks, eff, marker="o", color="#d62728", label="efficiency (median throughput)")
    for x, y, r in zip(ranks, eff, rows):
        ax.annotate(f"{(r['speedup'] or 0):.2f}x", (x, y), textcoords="offset points", xytext=(0, 8), ha="center",
                    fontsize=8)
    plots.rank_axis(ax, ranks)
    ax.set_ylabel("efficiency (speedup / rank ratio)")
    ax.set_ylim(0, max(1.15, max(eff) * 1.15))
    ax.yaxis.set_major_formatter(plots.ticker.PercentFormatter(1.0))
    ax.legend(loc="lower left")
    return plots.save(fig, f"{prefix}-efficiency")


def phases(rows, prefix):
    names = [p for p in run_report.PHASES if any(r.get(f"{p}_s_median") for r in rows)]
    fig, ax = plots.figure(_title(rows, "step time by phase (median)"))
    positions = range(len(rows))
    bottom = [0.0] * len(rows)
    colours = plots.plt.get_cmap("tab10").colors
    for i, p in enumerate(names):
        heights = [r.get(f"{p}_s_median") or 0 for r in rows]
        ax.bar(positions, heights, bottom=bottom, color=colours[i % len(colours)], label=p, width=0.6)
        bottom = [b + h for b, h in zip(bottom, heights)]
    ax.set_xticks(list(positions), [str(r["ranks"]) for r in rows])
    ax.set_xlabel("ranks")
    ax.set_ylabel("seconds (max over ranks)")
    if names:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    else:
        ax.text(0.5, 0.5, "the reports give no phase times", transform=ax.transAxes, ha="center")
    return plots.save(fig, f"{prefix}-phases")


def plot_all(rows, prefix):
    return throughput(rows, prefix) + efficiency(rows, prefix) + phases(rows, prefix)
