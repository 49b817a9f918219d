#!/usr/bin/env bash
# The report of `pleshard run` is what docs/report.md documents: the keys of its table, no
# more and no fewer, in every report (a fresh run with an output on three ranks exchanging
# rows, a run behind a row cache, a resumed run, a run with nothing to do), the entries of
# each array with the documented keys of that array, and every documented label in the
# text report (of an array's entries: the row cache's, the collectives' and the host
# tables' pages), with the layout spelled out in its first line.
#   report_schema.sh PLESHARD CHECKPOINT MPIEXEC DOC
set -euo pipefail
app=$1; ckpt=$2; mpiexec=$3; doc=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() { "$mpiexec" -n "$1" --oversubscribe "$app" run --checkpoint "$ckpt" --synthetic 30 --synthetic-max-tokens 150 \
  --step-tokens 96 --part-tokens 400 --quiet "${@:2}"; }
# The host tier, so that the report has host tables' pages wherever it runs (on a GPU
# machine the automatic placement would put the tables on the GPU).
run 3 --etp 3 --exchange owner --storage host --out "$work/a.h5" --json >"$work/fresh.json"
run 3 --etp 3 --exchange owner --storage host --out "$work/a.h5" --json >"$work/nothing.json"
run 1 --storage disk --cache-rows 200 --summary-only --json >"$work/cache.json"
run 1 --storage disk --cache-rows 200 --summary-only >"$work/cache.txt"
run 3 --etp 3 --exchange owner --storage host --summary-only >"$work/owner.txt"
set +e
PLESHARD_FAULT_KILL_AFTER_PARTS=1 run 2 --out "$work/b.h5" >/dev/null 2>&1
set -e
run 2 --out "$work/b.h5" --json >"$work/resumed.json"

python3 - "$doc" "$work" <<'PY'
import json, os, re, sys
doc, work = sys.argv[1], sys.argv[2]
top, records, labels = {}, {}, {}
for line in open(doc):
    m = re.match(r"\|\s*`([a-z0-9_]+)(?:\[\]\.([a-z0-9_]+))?`\s*\|[^|]*\|\s*([^|]+?)\s*\|", line)
    if not m:
        continue
    key, field, label = m.groups()
    if field:
        records.setdefault(key, set()).add(field)
        labels[f"{key}[].{field}"] = label
    else:
        top[key] = label
        labels[key] = label
if len(top) < 40:
    sys.exit(f"FAIL: {doc}: only {len(top)} keys documented; the table was not parsed")
failed = []
seen_records = set()
for name, outcome in [("fresh", "ran"), ("nothing", "nothing_to_do"), ("cache", "ran"), ("resumed", "resumed")]:
    lines = [l for l in open(os.path.join(work, name + ".json")) if l.startswith("{")]
    if len(lines) != 1:
        sys.exit(f"FAIL: {name}: expected one JSON line, found {len(lines)}")
    def unique(pairs):
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            failed.append(f"{name}: keys repeated: {keys}")
        return dict(pairs)
    report = json.loads(lines[0], object_pairs_hook=unique)
    missing, extra = set(top) - set(report), set(report) - set(top)
    if missing or extra:
        failed.append(f"{name}: undocumented keys {sorted(extra)}, documented keys missing {sorted(missing)}")
    if report.get("outcome") != outcome:
        failed.append(f"{name}: outcome {report.get('outcome')!r}, expected {outcome!r}")
    if report.get("schema_version") != 1 or not report.get("pleshard_version"):
        failed.append(f"{name}: schema_version {report.get('schema_version')}, pleshard_version {report.get('pleshard_version')!r}")
    for key, fields in records.items():
        if not isinstance(report.get(key), list):
            failed.append(f"{name}: {key} is not an array")
            continue
        for entry in report[key]:
            seen_records.add(key)
            if set(entry) != fields:
                failed.append(f"{name}: {key}[] has keys {sorted(entry)}, documented {sorted(fields)}")
    for key, value in report.items():
        if key.endswith("_busbw") or re.search(r"_[0-9]+_", key):
            failed.append(f"{name}: key {key} names an index or no unit")
if seen_records != set(records):
    failed.append(f"no run had entries in {sorted(set(records) - seen_records)}: their keys went unchecked")
for name in ["cache", "owner"]:
    text = open(os.path.join(work, name + ".txt")).read()
    for key, label in labels.items():
        array = key.split("[]")[0]
        if "[]." in key and array not in (("cache",) if name == "cache" else ("collectives", "host_pages")):
            continue
        if label not in text:
            failed.append(f"{name}.txt: no label {label!r} ({key})")
# The layout in words (docs/report.md): three ranks of one TP rank each, one ETP group of all three.
owner = open(os.path.join(work, "owner.txt")).read()
heading = owner.splitlines()[0] if owner else ""
if heading != "pleshard run: ranks 3 (DP 3 x TP 1), ETP group 3 (3 DP ranks x TP 1)":
    failed.append(f"owner.txt: layout line {heading!r}")
if not re.search(r"\n +ETP group, ranks that split every table's rows +3 \(3 DP ranks x TP 1\)\n", owner):
    failed.append("owner.txt: the ETP group's value does not name its DP ranks and TP")
if failed:
    print("FAIL:\n  " + "\n  ".join(failed))
    sys.exit(1)
print(f"report schema: {len(top)} keys and {sum(len(f) for f in records.values())} record keys as documented")
PY
