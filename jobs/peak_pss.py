#!/usr/bin/env python3
"""Run a command and report the peak of its processes' summed proportional set size.

    peak_pss.py [--name pleshard] [--every 0.1] -- COMMAND...

PSS (`Pss` of /proc/PID/smaps_rollup) splits each shared page among the processes that map
it, so the sum over a node's ranks counts a shared copy of a table once: the node's memory
held by the job. Only the command's own processes (descendants of the one started) count. The command's output passes through; the peak is printed last on stderr as
`peak_pss_bytes N` and the command's exit status is returned.
"""
import argparse
import os
import subprocess
import sys
import time


def pss_bytes(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # gone, or not ours to read
        pass
    return 0


def descendants_named(root, name):
    """The processes under `root` (its children, theirs, ...) called `name`."""
    parent, comm = {}, {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses
        comm[pid] = stat[stat.index("(") + 1 : stat.rindex(")")]
        parent[pid] = stat[stat.rindex(")") + 2 :].split()[1]
    for pid in parent:
        p, seen = pid, 0
        while p in parent and p != str(root) and seen < 64:
            p, seen = parent[p], seen + 1
        if p == str(root) and pid != str(root) and comm[pid] == name:
            yield pid


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--name", default="pleshard", help="the command's processes counted (/proc/PID/comm)")
    parser.add_argument("--every", type=float, default=0.1, help="seconds between samples")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")
    job = subprocess.Popen(command)
    peak = 0
    while job.poll() is None:
        peak = max(peak, sum(pss_bytes(pid) for pid in descendants_named(job.pid, args.name)))
        time.sleep(args.every)
    print(f"peak_pss_bytes {peak}", file=sys.stderr)
    return job.returncode


if __name__ == "__main__":
    sys.exit(main())
