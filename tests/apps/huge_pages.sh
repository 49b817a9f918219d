#!/usr/bin/env bash
# A table of 1 GB a rank that no 2 MiB page backs is warned about once, by rank 0 of the two
# that map the node's one copy of it, in one line saying how to fix it, and the report says
# so (0% on 2 MiB pages). The fault plan's small pages stand in for a machine that offers
# none. (A rank's own table, and the warning's text: test_table_pages.)
#   huge_pages.sh PLESHARD CHECKPOINT MPIEXEC CONFIG
set -euo pipefail
app=$1; mpiexec=$3; config=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PLESHARD_FAULT_SMALL_PAGES=1
run() { "$mpiexec" -n "$1" --oversubscribe "$app" run --checkpoint synthetic --config "$config" --synthetic 4 \
  --summary-only --quiet --json --storage host "${@:2}"; }
run 2 --etp 1 >"$work/shared.json" 2>"$work/shared.err"

python3 - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]
failed = []
for name, ranks, shared, fix in [("shared", 2, True, "mount -o remount,huge=advise /dev/shm")]:
    err = open(os.path.join(work, name + ".err")).read()
    warnings = [l for l in err.splitlines() if l.startswith("pleshard: warning: host tier: table 0:")]
    if len(warnings) != 1:
        failed.append(f"{name}: {len(warnings)} warnings about table 0, expected one:\n{err}")
    elif fix not in warnings[0] or f"on {ranks} of {ranks} rank" not in warnings[0]:
        failed.append(f"{name}: the warning names no fix ({fix!r}) or not every rank: {warnings[0]}")
    report = json.loads([l for l in open(os.path.join(work, name + ".json")) if l.startswith("{")][0])
    pages = report["host_pages"]
    if len(pages) != 1:
        failed.append(f"{name}: host_pages {pages}")
        continue
    t = pages[0]
    expected = {"tier": "host", "shared": shared, "pages": "small", "huge_page_share": 0,
                "huge_page_share_min": 0, "ranks_without_huge_pages": ranks}
    got = {k: t[k] for k in expected}
    if got != expected or t["bytes"] < 1_000_000_000 * ranks:
        failed.append(f"{name}: host_pages[0] {t}, expected {expected} and at least {ranks} GB")
if failed:
    print("FAIL:\n  " + "\n  ".join(failed))
    sys.exit(1)
print("huge pages: one warning per table, 0% reported")
PY
