#!/usr/bin/env python3
"""Strong or weak scaling of `pleshard run`: each rank count run several times, the median,
minimum and maximum of each, speedup and parallel efficiency against the smallest rank
count, provenance in every row; CSV and plots (PNG and SVG).

    jobs/scaling.sh -c CHECKPOINT [-m strong|weak] [-r "1 2 4"] [-n REPEATS] [-q REQUESTS | -s N]
                    [-t TP] [-e ETP_PER_TP|all] [-g STORAGE] [-x "MORE RUN ARGS"]... [-o OUT_PREFIX]
                    [-b BUILD_DIR] [-- RUN ARG...]

strong: the same work at every rank count (REQUESTS, or N synthetic requests); weak: N
synthetic requests per DP rank, so the work grows with the ranks. -e: ETP = TP x ETP_PER_TP,
or `all` for ETP = ranks (the tables sharded over every rank). -x's words are split as a
shell splits them; the arguments after -- go to `pleshard run` each as it is (paths with
spaces or any bytes: -- --config "$CONFIG"). -c synthetic needs a --config. LAUNCHER overrides how ranks start (default: mpiexec -n; e.g.
"srun --mpi=pmix -n"); PLESHARD the executable.

Writes OUT_PREFIX.csv (one row per rank count), OUT_PREFIX-runs.csv (every run, every key
of its report) and OUT_PREFIX-{throughput,efficiency,phases}.{png,svg}."""
import argparse
import csv
import datetime
import os
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
    p.add_argument("-g", dest="storage", default="host", choices=["host", "device", "pinned", "disk"],
                   help="storage tier (default host)")
    p.add_argument("-x", dest="more", action="append", default=[], help="more `pleshard run` arguments")
    p.add_argument("-o", dest="prefix", default="scaling", help="output files' prefix (default scaling)")
    p.add_argument("-b", dest="build", default=os.path.join(PROJECT, "build"), help="build directory (default: the project's build)")
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
            "nodes": os.environ.get("SLURM_JOB_NUM_NODES") or os.environ.get("SLURM_NNODES") or "1",
            "slurm_job": os.environ.get("SLURM_JOB_ID", "")}


def layout(a, n):
    """(ETP, input arguments, requests expected or None), or None where the layout does not fit n ranks."""
    if n % a.tp:
        print(f"scaling: skip {n} ranks (TP {a.tp} does not divide it)", file=sys.stderr)
        return None
    etp = n if a.etp_per_tp == "all" else a.tp * int(a.etp_per_tp)
    if (n // a.tp) % (etp // a.tp):
        print(f"scaling: skip {n} ranks (ETP {etp} does not fit)", file=sys.stderr)
        return None
    dp = n // a.tp
    if a.mode == "weak":
        return etp, ["--synthetic", str(a.synthetic * dp)], a.synthetic * dp
    if a.requests:
        return etp, ["--requests", a.requests], None
    return etp, ["--synthetic", str(a.synthetic)], a.synthetic


def run_once(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    report = run_report.find_report(r.stdout) if r.returncode == 0 else None
    if report is None:
        tail = "\n".join((r.stderr or r.stdout).strip().splitlines()[-10:])
        sys.exit(f"scaling: {shlex.join(cmd)}\n  failed (exit {r.returncode}), no report:\n{tail}")
    return report


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None, None, None
    return statistics.median(values), min(values), max(values)


def summarise(a, n, etp, reports, command, prov):
    tps = [run_report.throughput(r) for r in reports]
    first = reports[0]
    row = {"mode": a.mode, "ranks": n, "nodes": prov["nodes"], "tp": a.tp, "etp": etp, "dp": n // a.tp,
           "storage": run_report.value(first, "storage") or a.storage,
           "backend": run_report.value(first, "backend"), "exchange": run_report.value(first, "exchange"),
           "requests": run_report.value(first, "requests"), "tokens": run_report.value(first, "tokens"),
           "repeats": len(reports)}
    for name, values in [("tokens_per_s", tps),
                         ("seconds", [run_report.number(r, "wall_s", "seconds") for r in reports]),
                         ("rows_per_s", [run_report.number(r, "rows_per_s") for r in reports]),
                         ("step_p50_us", [run_report.number(r, "step_p50_us") for r in reports]),
                         ("step_p99_us", [run_report.number(r, "step_p99_us") for r in reports])]:
        row[f"{name}_median"], row[f"{name}_min"], row[f"{name}_max"] = spread(values)
    for name in ["steps_s", "exchange_share"]:
        row[f"{name}_median"] = spread([run_report.number(r, name) for r in reports])[0]
    for p in run_report.PHASES:
        row[f"{p}_s_median"] = spread([run_report.phases(r).get(p) for r in reports])[0]
    busbw = [run_report.busbw_gb_s(r) for r in reports]
    for name in sorted({k for b in busbw for k in b}):
        row[f"busbw_{name}_gb_s"] = spread([b.get(name) for b in busbw])[0]
    row.update(prov)
    row["pleshard_version"] = run_report.value(first, "pleshard_version", "version") or ""
    row["command"] = command
    return row


def add_speedup(rows):
    """Speedup and efficiency of each point against the smallest rank count, by median throughput."""
    base = rows[0]
    for row in rows:
        scale = row["ranks"] / base["ranks"]
        ok = row["tokens_per_s_median"] and base["tokens_per_s_median"]
        row["speedup"] = row["tokens_per_s_median"] / base["tokens_per_s_median"] if ok else None
        row["efficiency"] = row["speedup"] / scale if ok else None
        row["ideal_tokens_per_s"] = base["tokens_per_s_median"] * scale if ok else None


def check_work(a, rows, expected_requests):
    """Strong scaling does the same work at every rank count; weak scaling work in proportion to the DP ranks."""
    for row, expected in zip(rows, expected_requests):
        if expected is not None and row["requests"] is not None and int(row["requests"]) != expected:
            sys.exit(f"scaling: {row['ranks']} ranks processed {row['requests']} requests, expected {expected}")
    if a.mode == "strong":
        tokens = {row["tokens"] for row in rows if row["tokens"] is not None}
        if len(tokens) > 1:
            sys.exit(f"scaling: strong scaling, yet the token counts differ between rank counts: {sorted(tokens)}")


PROVENANCE = ["commit", "date", "host", "slurm_job", "pleshard_version", "command"]


def write_csv(path, rows, first_columns):
    """Columns: `first_columns`, then every other key in order of appearance, provenance last."""
    columns = list(first_columns)
    for row in rows:
        columns += [k for k in row if k not in columns and k not in PROVENANCE]
    columns += [k for k in PROVENANCE if any(k in row for row in rows)]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, restval="")
        w.writeheader()
        for row in rows:
            w.writerow({k: ("" if v is None else f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})


def main(argv):
    a = parse_args(argv)
    app = os.environ.get("PLESHARD") or os.path.join(a.build, "bin", "pleshard")
    if not os.access(app, os.X_OK) and os.sep in app:
        sys.exit(f"scaling: {app} not found or not executable (build first, or set PLESHARD or -b BUILD_DIR)")
    os.makedirs(os.path.dirname(a.prefix) or ".", exist_ok=True)  # before the runs, not after them
    launch, prov, more = launcher(), provenance(), [arg for m in a.more for arg in shlex.split(m)] + a.run_args
    rows, runs, expected_requests = [], [], []
    for n in a.ranks:
        fit = layout(a, n)
        if fit is None:
            continue
        etp, inputs, expected = fit
        args = ["run", "--checkpoint", a.checkpoint, *inputs, "--tp", str(a.tp), "--etp", str(etp),
                "--storage", a.storage, *more, "--summary-only", "--quiet", "--json"]
        cmd = launch + [str(n), app] + args
        reports = []
        for k in range(a.repeats):
            print(f"scaling: {a.mode}, {n} ranks, TP {a.tp}, ETP {etp}, {a.storage}, run {k + 1} of {a.repeats}",
                  file=sys.stderr)
            reports.append(run_once(cmd))
            runs.append({"mode": a.mode, "ranks": n, "repeat": k + 1, **prov, "command": shlex.join(["pleshard", *args]),
                         **run_report.scalars(reports[-1])})
        rows.append(summarise(a, n, etp, reports, shlex.join(["pleshard", *args]), prov))
        expected_requests.append(expected)
    if not rows:
        sys.exit("scaling: no rank count fits the layout")
    check_work(a, rows, expected_requests)
    add_speedup(rows)
    first = ["mode", "ranks", "nodes", "tp", "etp", "dp", "storage", "backend", "exchange", "requests", "tokens",
             "repeats", "tokens_per_s_median", "tokens_per_s_min", "tokens_per_s_max", "speedup", "efficiency",
             "ideal_tokens_per_s"]
    write_csv(f"{a.prefix}.csv", rows, first)
    write_csv(f"{a.prefix}-runs.csv", runs, ["mode", "ranks", "repeat"])
    if scaling_plots.plots.MISSING:  # the figures are optional; the CSV is the result
        print(f"scaling: no plots: {scaling_plots.plots.MISSING}", file=sys.stderr)
        plots = []
    else:
        plots = scaling_plots.plot_all(rows, a.prefix)
    for row in rows:
        print(f"{row['ranks']:>6} ranks  {row['tokens_per_s_median'] or 0:12.4g} tokens/s "
              f"[{row['tokens_per_s_min'] or 0:.4g}, {row['tokens_per_s_max'] or 0:.4g}]  "
              f"speedup {row['speedup'] or 0:6.2f}  efficiency {row['efficiency'] or 0:6.1%}")
    print("scaling: wrote " + ", ".join([f"{a.prefix}.csv", f"{a.prefix}-runs.csv", *plots]))


if __name__ == "__main__":
    main(sys.argv[1:])
