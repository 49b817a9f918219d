"""A step started and its tables waited for one at a time (Engine.start, wait_table, finish)
gives forward()'s rows, table by table, on the host tier and with the tables on two tiers
(host and disk); a started step's tables are valid outputs until output_slots later steps;
between start() and finish() the engine takes only wait_table(), and a bad batch given to
start() raises there, the engine stepping again after.
    test_started_steps.py CHECKPOINT CONFIG"""
import json
import sys

import numpy as np

import pleshard
from support import check, expect_error, flat, requests

checkpoint, config_path = sys.argv[1], sys.argv[2]
with open(config_path) as f:
    vocab = json.load(f)["vocab_size"]

for placement in ["host", "0=host,1=disk"]:
    kw = dict(checkpoint=checkpoint, config=config_path, out_dtype="float32", placement=placement)
    started, forwarded = pleshard.Engine(**kw), pleshard.Engine(**kw)
    tables = started.num_tables
    for step in range(4):
        batch = flat(requests(300 + step, 3, vocab, 2, max_tokens=8 + step))
        want = [e.bits().copy() for e in forwarded.forward(*batch)]
        started.start(*batch)
        got = [None] * tables
        for d in reversed(range(tables)):  # any order
            table = started.wait_table(d)
            check(table.step == step, f"{placement}: wait_table({d}) is of step {table.step}, not {step}")
            got[d] = table.bits().copy()
        whole = started.finish()
        for d in range(tables):
            check(np.array_equal(got[d], want[d]), f"{placement}: step {step} table {d} differs from forward()")
            check(np.array_equal(whole[d].bits(), want[d]), f"{placement}: finish()'s table {d} differs")
    check(started.steps == 4, f"{placement}: {started.steps} steps")
    report = started.report()
    early = 4 * tables if placement != "host" else 0  # two tiers: each table as its tier's are decoded
    check(report["started_steps"] == 4 and report["tables_ready_early"] == early,
          f"{placement}: started_steps {report['started_steps']}, tables_ready_early {report['tables_ready_early']}")
    print(f"start, wait_table, finish ({placement}): forward()'s rows, table by table")
    started.close()
    forwarded.close()

engine = pleshard.Engine(checkpoint=checkpoint, config=config_path, out_dtype="float32", placement="host")
batch = flat(requests(9, 2, vocab, 2))
expect_error(RuntimeError, "no step is started", engine.wait_table, 0)
expect_error(RuntimeError, "no step is started", engine.finish)
engine.start(*batch)
expect_error(RuntimeError, "a step is started", engine.forward, *batch)
expect_error(RuntimeError, "a step is started", engine.start, *batch)
expect_error(ValueError, "table 9", engine.wait_table, 9)
engine.finish()
expect_error(ValueError, "start: 10000 tokens exceed step_tokens", engine.start, [1] * 10000, [0, 10000])
expect_error(ValueError, "start: query_start_loc is empty", engine.start, [1], [])
check(engine.steps == 1, f"{engine.steps} steps after one finished")
engine.forward(*batch)
check(engine.steps == 2, f"{engine.steps} steps after two")
print("between start() and finish(): only wait_table(); a bad batch raises at start()")
