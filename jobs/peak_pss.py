#!/usr/bin/env python3
"""Run a command and report the peak of its processes' summed proportional set size.

    peak_pss.py [--name pleshard] [--every 0.1] -- COMMAND...

PSS (`Pss` of /proc/PID/smaps_rollup) splits each shared page among the processes that map
it, so the sum over a node's ranks counts a shared copy of a table once: the node's memory
held by the job. The command's output passes through; the peak is printed last on stderr as
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


def named(name):
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == name:
                    yield pid
        except OSError:
            continue


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--name", default="pleshard", help="the processes' name (/proc/PID/comm)")
    parser.add_argument("--every", type=float, default=0.1, help="seconds between samples")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")
    job = subprocess.Popen(command)
    peak = 0
    while job.poll() is None:
        peak = max(peak, sum(pss_bytes(pid) for pid in named(args.name)))
        time.sleep(args.every)
    print(f"peak_pss_bytes {peak}", file=sys.stderr)
    return job.returncode


if __name__ == "__main__":
    sys.exit(main())
