#!/usr/bin/env python3
"""Strong or weak scaling of `pleshard run`: each rank count run several times, the median,
minimum and maximum of each, speedup and parallel efficiency against the smallest rank
count, provenance in every row; CSV and plots (PNG and SVG).

    jobs/scaling.sh -c CHECKPOINT [-m strong|weak] [-r "1 2 4"] [-n REPEATS] [-q REQUESTS | -s N]
                    [-t TP] [-e ETP_PER_TP|all] [-g STORAGE | -p PLACEMENT] [-x "MORE RUN ARGS"]...
                    [-o OUT_PREFIX] [-b BUILD_DIR] [--resume] [-- RUN ARG...]

strong: the same work at every rank count (REQUESTS, or N synthetic requests); weak: N
synthetic requests per DP rank, so the work grows with the ranks. -e: ETP = TP x ETP_PER_TP,
or `all` for ETP = ranks (the tables sharded over every rank). Where the tables live: run's
own default (the automatic placement) unless -g puts every table on one tier (run's
--storage) or -p places them (run's --placement: auto, a tier, or 0=device,1=pinned).
-x's words are split as a shell splits them; the arguments after -- go to `pleshard run`
each as it is (paths with spaces or any bytes: -- --config "$CONFIG"). -c synthetic needs a
--config. LAUNCHER overrides how ranks start (default: mpiexec -n; e.g. "srun --mpi=pmix
-n"); PLESHARD the executable.

Writes OUT_PREFIX.csv (one row per rank count), OUT_PREFIX-runs.csv (every run, every key
of its report) as each rank count completes, and at the end
OUT_PREFIX-{throughput,efficiency,phases}.{png,svg} of the rank counts that succeeded. A
rank count whose run fails is kept as a row with status `failed` and pleshard's error line,
the others go on, and the study exits 1 at the end. --resume keeps the rows of OUT_PREFIX.csv
that succeeded (the same study's: their commands must match) and runs the other rank counts."""
import argparse
import csv
import datetime
import os
import re
import shlex
import socket
import statistics
import subprocess
import sys

import run_report
import scaling_plots

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.dirname(HERE)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="jobs/scaling.sh", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 2)[2])
    p.add_argument("-c", dest="checkpoint", required=True, help="checkpoint directory or file, or `synthetic`")
    p.add_argument("-m", dest="mode", default="strong", choices=["strong", "weak"], help="scaling mode (default strong)")
    p.add_argument("-r", dest="ranks", default="1 2 4", help='rank counts, e.g. "1 2 4 8"')
    p.add_argument("-n", dest="repeats", type=int, default=3, help="runs per rank count (default 3)")
    p.add_argument("-q", dest="requests", default="", help="requests file (strong scaling)")
    p.add_argument("-s", dest="synthetic", type=int, default=512, help="synthetic requests (weak: per DP rank)")
    p.add_argument("-t", dest="tp", type=int, default=1, help="tensor-parallel ranks (default 1)")
    p.add_argument("-e", dest="etp_per_tp", default="1", help="ETP / TP, or `all`")
    where = p.add_mutually_exclusive_group()
    where.add_argument("-g", dest="storage", choices=["host", "device", "pinned", "disk"],
                       help="every table on this tier (run's --storage)")
    where.add_argument("-p", dest="placement",
                       help="run's --placement: auto, a tier, or TABLE=TIER,... (default: run's own, auto)")
    p.add_argument("-x", dest="more", action="append", default=[], help="more `pleshard run` arguments")
    p.add_argument("-o", dest="prefix", default="scaling", help="output files' prefix (default scaling)")
    p.add_argument("-b", dest="build", default=os.path.join(PROJECT, "build"), help="build directory (default: the project's build)")
    p.add_argument("--resume", action="store_true",
                   help="keep the rank counts OUT_PREFIX.csv has results for; run the others")
    # -x's value may itself start with "--" (-x --cuda-graph): join it to the option first.
    # What follows a bare -- is pleshard run's, never parsed here.
    joined, run_args, i = [], [], 0
    while i < len(argv):
        if argv[i] == "-x" and i + 1 < len(argv):
            joined.append("-x" + argv[i + 1])
            i += 2
        elif argv[i] == "--":
            run_args = argv[i + 1:]
            break
        else:
            joined.append(argv[i])
            i += 1
    a = p.parse_args(joined)
    a.run_args = run_args
    try:
        a.ranks = sorted({int(r) for r in a.ranks.replace(",", " ").split()})
    except ValueError:
        p.error(f"-r {a.ranks!r}: expected rank counts such as \"1 2 4\"")
    if not a.ranks or a.ranks[0] < 1:
        p.error("-r: rank counts must be >= 1")
    if a.repeats < 1 or a.tp < 1 or a.synthetic < 1:
        p.error("-n, -t and -s must be >= 1")
    if a.etp_per_tp != "all" and not (a.etp_per_tp.isdigit() and int(a.etp_per_tp) >= 1):
        p.error(f"-e {a.etp_per_tp}: expected a number >= 1 or `all`")
    if a.mode == "weak" and a.requests:
        p.error("-m weak makes -s synthetic requests per DP rank; a requests file (-q) is for strong scaling")
    if a.placement == "":
        p.error("-p: expected auto, a tier, or TABLE=TIER,...")
    return a


def launcher():
    if os.environ.get("LAUNCHER"):
        return shlex.split(os.environ["LAUNCHER"])
    cmd = ["mpiexec"]
    try:
        version = subprocess.run(["mpiexec", "--version"], capture_output=True, text=True).stdout
    except FileNotFoundError:
        sys.exit("scaling: mpiexec not found (set LAUNCHER, e.g. \"srun --mpi=pmix -n\")")
    if "open mpi" in version.lower() or "open-mpi" in version.lower() or "openrte" in version.lower():
        cmd.append("--oversubscribe")
        if os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
    return cmd + ["-n"]


def node_cores():
    """Cores of a node for the ranks: Slurm's count for the job, else those this process may run on."""
    if os.environ.get("SLURM_CPUS_ON_NODE", "").isdigit():
        return int(os.environ["SLURM_CPUS_ON_NODE"])
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def provenance():
    def git(*args):
        r = subprocess.run(["git", "-C", PROJECT, *args], capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else ""

    commit = git("rev-parse", "HEAD") or "unknown"
    if commit != "unknown" and git("status", "--porcelain", "--untracked-files=no"):
        commit += "-dirty"
    return {"commit": commit,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "host": os.environ.get("SLURM_JOB_NODELIST") or socket.gethostname(),
            "nodes": int(os.environ.get("SLURM_JOB_NUM_NODES") or os.environ.get("SLURM_NNODES") or "1"),
            "cores": node_cores(),
            "slurm_job": os.environ.get("SLURM_JOB_ID", "")}


def layout(a, n, quiet=False):
    """(ETP, input arguments, requests expected or None), or None where the layout does not fit n ranks."""
    if n % a.tp:
        if not quiet:
            print(f"scaling: skip {n} ranks (TP {a.tp} does not divide it)", file=sys.stderr)
        return None
    etp = n if a.etp_per_tp == "all" else a.tp * int(a.etp_per_tp)
    if (n // a.tp) % (etp // a.tp):
        if not quiet:
            print(f"scaling: skip {n} ranks (ETP {etp} does not fit)", file=sys.stderr)
        return None
    dp = n // a.tp
    if a.mode == "weak":
        return etp, ["--synthetic", str(a.synthetic * dp)], a.synthetic * dp
    if a.requests:
        return etp, ["--requests", a.requests], None
    return etp, ["--synthetic", str(a.synthetic)], a.synthetic


def where_args(a):
    """Where the tables live: -g's tier, -p's placement, or nothing (run's default, the automatic placement)."""
    if a.storage:
        return ["--storage", a.storage]
    return ["--placement", a.placement] if a.placement else []


def where_label(a):
    return a.storage or a.placement or "auto"


def run_args(a, n, more):
    """(ETP, `pleshard run` arguments, requests expected) at n ranks, or None where the layout does not fit."""
    fit = layout(a, n, quiet=True)
    if fit is None:
        return None
    etp, inputs, expected = fit
    return etp, ["run", "--checkpoint", a.checkpoint, *inputs, "--tp", str(a.tp), "--etp", str(etp), *where_args(a),
                 *more, "--summary-only", "--quiet", "--json"], expected


# pleshard's one-line message of a failed run (apps/pleshard/main.cpp, lib/core/collective.cpp).
ERROR_LINE = re.compile(r"^pleshard: (rank \d+: )?error: ")


def error_line(result):
    """Why a run gave no report: pleshard's own error line where it printed one (not the launcher's banner)."""
    for text in (result.stderr or "", result.stdout or ""):
        for line in text.splitlines():
            if ERROR_LINE.match(line.strip()):
                return line.strip()
    last = [line.strip() for line in (result.stderr or "").splitlines() if line.strip()]
    why = f"exit {result.returncode}, no report and no pleshard error line"
    return why + (f"; the last line on stderr: {last[-1]}" if last else "")


def run_once(cmd):
    """(report, None), or (None, pleshard's error line) where the run failed."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    report = run_report.find_report(r.stdout) if r.returncode == 0 else None
    return (report, None) if report is not None else (None, error_line(r))


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None, None, None
    return statistics.median(values), min(values), max(values)


def per_step_ms(report, phase):
    """A phase's time per step (its run total, max over ranks, over the steps), in ms."""
    seconds, steps = run_report.phases(report).get(phase), run_report.number(report, "steps")
    return seconds / steps * 1e3 if seconds is not None and steps else None


def point(a, n, etp, command, prov):
    """The columns every row of rank count n has, failed or not."""
    return {"mode": a.mode, "ranks": n, "status": "ok", "nodes": prov["nodes"], "cores": prov["cores"], "tp": a.tp,
            "etp": etp, "dp": n // a.tp, "storage": a.storage or "", "placement": where_label(a), "error": "",
            **prov, "command": command}


def summarise(a, n, etp, reports, command, prov):
    tps = [run_report.throughput(r) for r in reports]
    first = reports[0]
    row = point(a, n, etp, command, prov)
    row.update({"storage": run_report.value(first, "storage") or a.storage,
                "placement": run_report.value(first, "placement") or where_label(a),
                "backend": run_report.value(first, "backend"), "exchange": run_report.value(first, "exchange"),
                "requests": run_report.value(first, "requests"), "tokens": run_report.value(first, "tokens"),
                "repeats": len(reports)})
    for name, values in [("tokens_per_s", tps),
                         ("seconds", [run_report.number(r, "wall_s", "seconds") for r in reports]),
                         ("rows_per_s", [run_report.number(r, "rows_per_s") for r in reports]),
                         ("step_p50_us", [run_report.number(r, "step_p50_us") for r in reports]),
                         ("step_p99_us", [run_report.number(r, "step_p99_us") for r in reports])]:
        row[f"{name}_median"], row[f"{name}_min"], row[f"{name}_max"] = spread(values)
    for name in ["steps", "steps_s", "exchange_share"]:
        row[f"{name}_median"] = spread([run_report.number(r, name) for r in reports])[0]
    for p in run_report.PHASES:
        row[f"{p}_s_median"] = spread([run_report.phases(r).get(p) for r in reports])[0]
        row[f"{p}_ms_per_step_median"] = spread([per_step_ms(r, p) for r in reports])[0]
    busbw = [run_report.busbw_gb_s(r) for r in reports]
    for name in sorted({k for b in busbw for k in b}):
        row[f"busbw_{name}_gb_s"] = spread([b.get(name) for b in busbw])[0]
    row["pleshard_version"] = run_report.value(first, "pleshard_version", "version") or ""
    return row


def add_speedup(rows):
    """Speedup and efficiency of each point against the smallest rank count that succeeded, by median throughput."""
    done = [row for row in rows if row["status"] == "ok"]
    for row in rows:
        base = done[0] if done else None
        ok = row["status"] == "ok" and row.get("tokens_per_s_median") and base and base.get("tokens_per_s_median")
        scale = row["ranks"] / base["ranks"] if ok else None
        row["speedup"] = row["tokens_per_s_median"] / base["tokens_per_s_median"] if ok else None
        row["efficiency"] = row["speedup"] / scale if ok else None
        row["ideal_tokens_per_s"] = base["tokens_per_s_median"] * scale if ok else None


def check_work(a, rows):
    """Strong scaling does the same work at every rank count; weak scaling work in proportion to the DP ranks."""
    rows = [row for row in rows if row["status"] == "ok"]
    for row in rows:
        expected = layout(a, row["ranks"], quiet=True)[2]
        if expected is not None and row["requests"] is not None and int(row["requests"]) != expected:
            sys.exit(f"scaling: {row['ranks']} ranks processed {row['requests']} requests, expected {expected}")
    if a.mode == "strong":
        tokens = {row["tokens"] for row in rows if row["tokens"] is not None}
        if len(tokens) > 1:
            sys.exit(f"scaling: strong scaling, yet the token counts differ between rank counts: {sorted(tokens)}")


PROVENANCE = ["commit", "date", "host", "slurm_job", "pleshard_version", "command"]
FIRST = ["mode", "ranks", "status", "nodes", "cores", "tp", "etp", "dp", "storage", "placement", "backend", "exchange",
         "requests", "tokens", "repeats", "tokens_per_s_median", "tokens_per_s_min", "tokens_per_s_max", "speedup",
         "efficiency", "ideal_tokens_per_s"]
RUN_FIRST = ["mode", "ranks", "repeat", "status", "error"]
# Columns read back as text by --resume; every other one is a number where it parses as one.
TEXT = {"mode", "status", "error", "storage", "placement", "backend", "exchange", *PROVENANCE}


def write_csv(path, rows, first_columns):
    """Columns: `first_columns`, then every other key in order of appearance, `error` and provenance
    last; written beside the file and moved over it, so that a study stopped midway leaves a whole one."""
    last = ["error", *PROVENANCE]
    columns = list(first_columns)
    for row in rows:
        columns += [k for k in row if k not in columns and k not in last]
    columns += [k for k in last if k not in columns and any(k in row for row in rows)]
    with open(path + ".part", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, restval="")
        w.writeheader()
        for row in rows:
            w.writerow({k: ("" if v is None else f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
    os.replace(path + ".part", path)


def read_csv(path):
    """The rows of a CSV this script wrote, numbers as numbers and empty cells as None."""
    def cell(key, text):
        if text == "" or text is None:
            return None
        if key in TEXT:
            return text
        for kind in (int, float):
            try:
                return kind(text)
            except ValueError:
                pass
        return text

    with open(path, newline="") as f:
        return [{k: cell(k, v) for k, v in row.items()} for row in csv.DictReader(f)]


def resumed(a, more, summary, runs_file):
    """The rows and runs of the rank counts `summary` has results for, where they are this study's."""
    if not os.path.exists(summary):
        print(f"scaling: --resume: no {summary} yet; every rank count runs", file=sys.stderr)
        return [], []
    try:
        rows = [row for row in read_csv(summary) if (row.get("status") or "ok") == "ok"]
        runs = read_csv(runs_file) if os.path.exists(runs_file) else []
    except (OSError, csv.Error, UnicodeDecodeError) as e:
        sys.exit(f"scaling: --resume: {summary}: {e}")
    for row in rows:
        if not isinstance(row.get("ranks"), int):
            sys.exit(f"scaling: --resume: {summary}: a row without a rank count; not a study this script wrote")
        planned = run_args(a, row["ranks"], more)
        command = shlex.join(["pleshard", *planned[1]]) if planned else "nothing (the layout does not fit)"
        if row.get("command") != command:
            sys.exit(f"scaling: --resume: {summary}: its {row['ranks']}-rank point ran `{row.get('command')}`, "
                     f"this study runs `{command}`; use another -o, or run without --resume")
        row["status"] = "ok"
    kept = {row["ranks"] for row in rows}
    return rows, [run for run in runs if run.get("ranks") in kept and (run.get("status") or "ok") == "ok"]


def print_summary(rows):
    for row in rows:
        if row["status"] != "ok":
            print(f"{row['ranks']:>6} ranks  failed: {row['error']}")
            continue
        print(f"{row['ranks']:>6} ranks  {row['tokens_per_s_median'] or 0:12.4g} tokens/s "
              f"[{row['tokens_per_s_min'] or 0:.4g}, {row['tokens_per_s_max'] or 0:.4g}]  "
              f"speedup {row['speedup'] or 0:6.2f}  efficiency {row['efficiency'] or 0:6.1%}")


def main(argv):
    a = parse_args(argv)
    app = os.environ.get("PLESHARD") or os.path.join(a.build, "bin", "pleshard")
    if not os.access(app, os.X_OK) and os.sep in app:
        sys.exit(f"scaling: {app} not found or not executable (build first, or set PLESHARD or -b BUILD_DIR)")
    os.makedirs(os.path.dirname(a.prefix) or ".", exist_ok=True)  # before the runs, not after them
    summary, runs_file = f"{a.prefix}.csv", f"{a.prefix}-runs.csv"
    launch, prov, more = launcher(), provenance(), [arg for m in a.more for arg in shlex.split(m)] + a.run_args
    rows, runs = resumed(a, more, summary, runs_file) if a.resume else ([], [])
    done = {row["ranks"] for row in rows}
    for n in a.ranks:
        if layout(a, n) is None:
            continue
        etp, args, _ = run_args(a, n, more)
        command = shlex.join(["pleshard", *args])
        if n in done:
            print(f"scaling: {n} ranks: in {summary} already (--resume)", file=sys.stderr)
            continue
        reports, error = [], None
        for k in range(a.repeats):
            print(f"scaling: {a.mode}, {n} ranks, TP {a.tp}, ETP {etp}, {where_label(a)}, run {k + 1} of {a.repeats}",
                  file=sys.stderr)
            report, error = run_once(launch + [str(n), app] + args)
            run = {"mode": a.mode, "ranks": n, "repeat": k + 1, "status": "ok" if error is None else "failed",
                   "error": error or "", **prov, "command": command}
            if error is not None:
                print(f"scaling: {n} ranks, run {k + 1}: failed: {error}", file=sys.stderr)
                runs.append(run)
                break
            reports.append(report)
            runs.append({**run, **run_report.scalars(report)})
        if error is None:
            # At the CSV's precision: what --resume reads back gives the same speedups.
            row = {k: float(f"{v:.6g}") if isinstance(v, float) else v
                   for k, v in summarise(a, n, etp, reports, command, prov).items()}
        else:
            row = {**point(a, n, etp, command, prov), "status": "failed", "repeats": len(reports), "error": error}
        rows = sorted([r for r in rows if r["ranks"] != n] + [row], key=lambda r: r["ranks"])
        add_speedup(rows)
        write_csv(summary, rows, FIRST)
        write_csv(runs_file, sorted(runs, key=lambda r: (r["ranks"], r["repeat"])), RUN_FIRST)
    if not rows:
        sys.exit("scaling: no rank count fits the layout")
    check_work(a, rows)
    succeeded = [row for row in rows if row["status"] == "ok"]
    plots = []
    if not succeeded:
        print("scaling: no plots: no rank count succeeded", file=sys.stderr)
    elif scaling_plots.plots.MISSING:  # the figures are optional; the CSV is the result
        print(f"scaling: no plots: {scaling_plots.plots.MISSING}", file=sys.stderr)
    else:
        plots = scaling_plots.plot_all(succeeded, a.prefix)
    print_summary(rows)
    print("scaling: wrote " + ", ".join([summary, runs_file, *plots]))
    failed = [str(row["ranks"]) for row in rows if row["status"] != "ok"]
    if failed:
        sys.exit(f"scaling: {', '.join(failed)} ranks failed (status and error in {summary}); "
                 "--resume reruns only those")


if __name__ == "__main__":
    main(sys.argv[1:])
