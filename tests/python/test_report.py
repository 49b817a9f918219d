"""engine.report() is the run report as a dict: exactly the keys docs/report.md documents
(and those of each array's entries), `job` "python", and the steps and tokens forwarded.
    test_report.py CHECKPOINT CONFIG REPORT_MD"""
import json
import re
import sys

import pleshard
from support import check, flat, requests

checkpoint, config_path, doc = sys.argv[1:4]
top, records = set(), {}
for line in open(doc):
    m = re.match(r"\|\s*`([a-z0-9_]+)(?:\[\]\.([a-z0-9_]+))?`\s*\|", line)
    if m and m.group(2):
        records.setdefault(m.group(1), set()).add(m.group(2))
    elif m:
        top.add(m.group(1))
check(len(top) > 40, f"{doc}: only {len(top)} keys read")

with open(config_path) as f:
    config = json.load(f)
engine = pleshard.Engine(checkpoint=checkpoint, config=config_path, storage="disk")
tokens = 0
for step in range(3):
    t, q, c = flat(requests(step, 4, config["vocab_size"], 2))
    engine.forward(t, q, c)
    tokens += len(t)
report = engine.report()
check(isinstance(report, dict), f"report() gave {type(report).__name__}")
check(set(report) == top, f"keys: missing {sorted(top - set(report))}, undocumented {sorted(set(report) - top)}")
for key, fields in records.items():
    for entry in report[key]:
        check(set(entry) == fields, f"{key}[]: keys {sorted(entry)}, documented {sorted(fields)}")
check(report["job"] == "python", f"job {report['job']!r}")
check(report["steps"] == 3 and report["tokens"] == tokens and report["tokens_done"] == tokens,
      f"steps {report['steps']}, tokens {report['tokens']}: forwarded 3 steps of {tokens} tokens")
check(report["storage"] == "disk" and report["ranks"] == 1, f"storage {report['storage']}, ranks {report['ranks']}")
check(report["step_p50_us"] is not None and report["wall_s"] > 0, "no step latency or wall time")
print(f"report: {len(report)} documented keys, job python, {report['steps']} steps of {tokens} tokens")
