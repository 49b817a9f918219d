"""Under mpirun with mpi4py: engines over MPI.COMM_WORLD in several layouts and exchanges give
every rank the embeddings that one process (an engine over MPI.COMM_SELF) gives it, and a bad
input on one rank is a ValueError on every rank (never a hang).
    mpirun -n 2 python3 test_mpi.py CHECKPOINT CONFIG"""
import json
import sys

import numpy as np
from mpi4py import MPI

import pleshard
from support import check, expect_error, flat, requests

checkpoint, config_path = sys.argv[1], sys.argv[2]
world = MPI.COMM_WORLD
rank, ranks = world.Get_rank(), world.Get_size()
with open(config_path) as f:
    vocab = json.load(f)["vocab_size"]
single = pleshard.Engine(checkpoint=checkpoint, config=config_path, out_dtype="float32", comm=MPI.COMM_SELF)


def alone(batch):
    return [o.bits().copy() for o in single.forward(*flat(batch))]


layouts = [dict(etp=ranks, exchange="gather-reduce"), dict(etp=ranks, exchange="owner"),
           dict(etp=ranks, exchange="owner", owner_fixed_below=1 << 40, owner_gpu_plan_from=0),
           dict(etp=ranks, exchange="reduce-scatter"), dict(etp=ranks, exchange="peer-read"), dict(tp=ranks)]
ids_sent = {}
for layout in layouts:
    engine = pleshard.Engine(checkpoint=checkpoint, config=config_path, out_dtype="float32", comm=world, **layout)
    tp = layout.get("tp", 1)
    held = []  # the last output_slots (2) steps' outputs, still to hold their rows
    for step in range(4):
        # The TP ranks of a DP rank step the same batch; DP ranks their own (sizes differ).
        batch = requests(1000 * step + rank // tp, 2 + rank // tp + step, vocab, 2)
        held = held[-1:] + [(alone(batch), engine.forward(*flat(batch)))]
        for age, (want, outs) in enumerate(reversed(held)):
            for d, (out, rows) in enumerate(zip(outs, want)):
                mine = rows[out.first:out.first + out.shape[0]]  # a slice under sequence parallelism
                check(np.array_equal(out.bits(), mine),
                      f"rank {rank} {layout} step {step - age} table {d}: differs after step {step}")
    report = engine.report()
    check(report["ranks"] == ranks and report["steps"] == 4, f"report: ranks {report['ranks']}, steps {report['steps']}")
    ids_sent[str(layout)] = report["exchange_ids_sent"]
    if layout.get("exchange") == "peer-read":  # the rows read in place: nothing sent
        check(report["backend"] == "none" and report["exchange_bytes_sent"] == 0,
              f"peer-read: backend {report['backend']}, {report['exchange_bytes_sent']} bytes sent")
    engine.close()
    if rank == 0:
        print(f"{ranks} ranks, {layout}: every rank's embeddings equal one process's")

# Fixed-size messages send every owner a slot's entries, filled or not: more than the ids sized.
sized, fixed = (ids_sent[str(layout)] for layout in layouts[1:3])
check(fixed > sized, f"owner_fixed_below: {fixed} ids sent in fixed-size messages, {sized} sized")

engine = pleshard.Engine(checkpoint=checkpoint, config=config_path, comm=world, etp=ranks)
bad = np.array([vocab + rank], dtype=np.int64) if rank == ranks - 1 else np.array([1], dtype=np.int64)
try:
    engine.forward(bad, [0, 1])
    check(False, f"rank {rank}: no error for rank {ranks - 1}'s bad token")
except ValueError as e:
    check("outside the vocabulary" in str(e), f"rank {rank}: {e}")
outs = engine.forward([1, 2, 3], [0, 3])  # the engine still steps after an agreed error
check(outs[0].shape[0] == 3, "no step after the agreed error")
if rank == 0:
    print(f"{ranks} ranks: one rank's bad input is a ValueError on every rank")

# What one rank alone gets wrong is a ValueError on every rank, never a hang or ranks that
# step apart: a batch beyond step_tokens (under TP, and with groups of one rank, where no
# step exchanges anything), TP ranks given different batches, and the constructor's keywords.
for layout in (dict(tp=ranks), dict(etp=1)):
    engine = pleshard.Engine(checkpoint=checkpoint, config=config_path, comm=world, step_tokens=4, **layout)
    big = [1] * (5 if rank == ranks - 1 else 4)
    expect_error(ValueError, "5 tokens exceed step_tokens=4", engine.forward, big, [0, len(big)])
    check(engine.steps == 0, f"rank {rank} {layout}: stepped {engine.steps} times beside another rank's refusal")
    engine.forward([1, 2], [0, 2])
    check(engine.report()["steps"] == 1, f"rank {rank} {layout}: the ranks stepped apart")
    engine.close()
engine = pleshard.Engine(checkpoint=checkpoint, config=config_path, comm=world, tp=ranks)
mine = [1, 2, 3] if rank == 0 else [1, 2, 4]
expect_error(ValueError, "were given different batches", engine.forward, mine, [0, 3])
expect_error(ValueError, "were given different batches", engine.forward, [1, 2, 3], [0, 2, 3] if rank else [0, 1, 3])
engine.forward([1, 2, 3], [0, 3])
engine.close()
last = rank == ranks - 1
for keywords, fragment in [(dict(output_slots=1 if last else 2), "output_slots: the ranks passed different values"),
                           (dict(tp=ranks if last else 1), "tp: the ranks passed different values"),
                           (dict(storage="disk" if last else "host"), "storage: the ranks passed different values"),
                           (dict(cache_rows=-1 if last else 0), "cache_rows: -1 is out of range: must be a whole number of rows >= 0"),
                           (dict(etp=0 if last else 1), "etp: 0 is out of range: must be a whole number of ranks >= 1"),
                           (dict(checkpoint="" if last else checkpoint), "checkpoint: empty path"),
                           (dict(checkpoint=None if last else checkpoint), "checkpoint: required"),
                           (dict(cahce_gb=1) if last else {}, "Engine: unknown keyword cahce_gb"),
                           (dict(tp="x" if last else 1), "tp: 'x' (str); expected an int"),
                           (dict(cuda_graph="yes" if last else False), "cuda_graph: str; expected True or False"),
                           (dict(storage="disk", cache_static=0.5000000001 if last else 0.5),
                            "cache_static: the ranks passed different values")]:
    arguments = dict(checkpoint=checkpoint, config=config_path, comm=world)
    arguments.update(keywords)
    expect_error(ValueError, fragment, pleshard.Engine, **arguments)
if rank == 0:
    print(f"{ranks} ranks: one rank's oversized or differing batch and its differing keywords: a ValueError on every "
          "rank")

# The same model on every rank: configs that differ (here in one value) are refused by what
# they hold, whatever their paths.
import os
import tempfile

with open(config_path) as f:
    mine = json.load(f)
if last:
    mine["ngram_vocab_size_base"] += 2
with tempfile.TemporaryDirectory() as scratch:
    path = os.path.join(scratch, "config.json")
    with open(path, "w") as f:
        json.dump(mine, f)
    expect_error(ValueError, "the model: the model config (its values) differs between ranks: every rank must be "
                 "given the same", pleshard.Engine, checkpoint="synthetic", config=path, comm=world)
if rank == 0:
    print(f"{ranks} ranks: a rank's other config is a ValueError on every rank")
