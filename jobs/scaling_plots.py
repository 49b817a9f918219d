"""The scaling study's figures from its summary rows (jobs/scaling.py): throughput and
parallel efficiency against ranks beside ideal scaling, and each rank count's time per step
by phase. Each title names the layout and tier, and the rank counts that put more ranks on a
node than it has cores (their times measure the sharing as much as pleshard)."""
import plots
import run_report


def oversubscribed(rows):
    """The rank counts whose ranks on a node outnumber its cores."""
    return [r["ranks"] for r in rows if r.get("cores") and r["ranks"] / max(1, int(r["nodes"] or 1)) > r["cores"]]


def _title(rows, what):
    r = rows[0]
    layout = f"TP {r['tp']}" + (", ETP = ranks" if all(x["etp"] == x["ranks"] for x in rows) else f", ETP {r['etp']}")
    where = r.get("placement") or r["storage"]
    where = f"{r['storage']} tier" if where == r["storage"] else f"placement {where} ({r['storage']})"
    commits = sorted({x["commit"][:12] + ("-dirty" if x["commit"].endswith("-dirty") else "") for x in rows})
    dates = sorted({x["date"].replace("+00:00", " UTC") for x in rows})
    when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
    title = (f"{what}: pleshard run, {r['mode']} scaling\n"
             f"{where}, {layout}, {r['nodes']} node(s); {', '.join(commits)}, {when}")
    over = oversubscribed(rows)
    if over:
        title += (f"\n{', '.join(map(str, over))} ranks oversubscribe the {r['cores']} cores"
                  f"{' a node' if int(r['nodes'] or 1) > 1 else ''}")
    return title


def throughput(rows, prefix):
    ranks = [r["ranks"] for r in rows]
    med = [r["tokens_per_s_median"] or 0 for r in rows]
    low = [m - (r["tokens_per_s_min"] or m) for m, r in zip(med, rows)]
    high = [(r["tokens_per_s_max"] or m) - m for m, r in zip(med, rows)]
    ideal = [r["ideal_tokens_per_s"] or 0 for r in rows]
    fig, ax = plots.figure(_title(rows, "throughput"))
    ax.plot(ranks, ideal, "--", color="#888888", label="ideal (linear from the first)")
    ax.errorbar(ranks, med, yerr=[low, high], marker="o", capsize=4, color="#1f77b4",
                label=f"median of {rows[0]['repeats']} runs (bars: min, max)")
    plots.rank_axis(ax, ranks)
    ax.set_ylabel("tokens/s")
    # Log: ideal scaling is then a straight line.
    plots.log_y_axis(ax, [v for v in [*ideal, *(r["tokens_per_s_min"] for r in rows),
                                          *(r["tokens_per_s_max"] for r in rows), *med] if v])
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
    """Each phase's time in an average step: the run's total (max over ranks) over its steps."""
    names = [p for p in run_report.PHASES if any(r.get(f"{p}_ms_per_step_median") for r in rows)]
    fig, ax = plots.figure(_title(rows, "time per step by phase (median of runs)"))
    positions = range(len(rows))
    bottom = [0.0] * len(rows)
    colours = plots.plt.get_cmap("tab10").colors
    for i, p in enumerate(names):
        heights = [r.get(f"{p}_ms_per_step_median") or 0 for r in rows]
        ax.bar(positions, heights, bottom=bottom, color=colours[i % len(colours)], label=p, width=0.6)
        bottom = [b + h for b, h in zip(bottom, heights)]
    ax.set_xticks(list(positions), [str(r["ranks"]) for r in rows])
    ax.set_xlabel("ranks")
    ax.set_ylabel("ms per step (phase total / steps, max over ranks)")
    if names:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    else:
        ax.text(0.5, 0.5, "the reports give no phase times", transform=ax.transAxes, ha="center")
    return plots.save(fig, f"{prefix}-phases")


def plot_all(rows, prefix):
    return throughput(rows, prefix) + efficiency(rows, prefix) + phases(rows, prefix)
