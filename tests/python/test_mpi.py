"""Under mpirun with mpi4py: engines over MPI.COMM_WORLD in several layouts and exchanges give
every rank the embeddings that one process (an engine over MPI.COMM_SELF) gives it, and a bad
input on one rank is a ValueError on every rank (never a hang).
    mpirun -n 2 python3 test_mpi.py CHECKPOINT CONFIG"""
import json
import sys

import numpy as np
from mpi4py import MPI

import pleshard
from support import check, flat, requests

checkpoint, config_path = sys.argv[1], sys.argv[2]
world = MPI.COMM_WORLD
rank, ranks = world.Get_rank(), world.Get_size()
with open(config_path) as f:
    vocab = json.load(f)["vocab_size"]
single = pleshard.Engine(checkpoint=checkpoint, config=config_path, out_dtype="float32", comm=MPI.COMM_SELF)


def alone(batch):
    return [o.bits().copy() for o in single.forward(*flat(batch))]


layouts = [dict(etp=ranks, exchange="gather-reduce"), dict(etp=ranks, exchange="owner"),
           dict(etp=ranks, exchange="reduce-scatter"), dict(tp=ranks)]
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
    engine.close()
    if rank == 0:
        print(f"{ranks} ranks, {layout}: every rank's embeddings equal one process's")

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
