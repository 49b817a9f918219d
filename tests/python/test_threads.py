"""Threads sharing one engine take turns: two threads stepping at once each get their own
batch's embeddings (as one thread stepping alone gets them), and close() while another
thread's forward() runs waits for that step (the thread gets its rows, or, for a step after
the close, RuntimeError: this engine is closed) — never a crash or another batch's rows.
    test_threads.py CHECKPOINT CONFIG"""
import json
import sys
import threading

import numpy as np

import pleshard
from support import check, flat, requests

checkpoint, config_path = sys.argv[1], sys.argv[2]
with open(config_path) as f:
    vocab = json.load(f)["vocab_size"]
alone = pleshard.Engine(checkpoint=checkpoint, config=config_path, out_dtype="float32", output_slots=1)
batches = [requests(500 + k, 3, vocab, 2) for k in range(2)]
want = [[o.bits().copy() for o in alone.forward(*flat(b))] for b in batches]

engine = pleshard.Engine(checkpoint=checkpoint, config=config_path, out_dtype="float32", output_slots=64)
wrong, errors = [0, 0], []


def step(k, steps):
    try:
        for _ in range(steps):
            outs = engine.forward(*flat(batches[k]))
            # 64 slots hold all 60 steps, so a read is never of a reused slot.
            wrong[k] += sum(not np.array_equal(o.bits(), w) for o, w in zip(outs, want[k]))
    except Exception as e:  # noqa: BLE001 - any failure is the test's
        errors.append(repr(e))


threads = [threading.Thread(target=step, args=(k, 30)) for k in range(2)]  # 60 steps: no slot reused
for t in threads:
    t.start()
for t in threads:
    t.join()
check(not errors and wrong == [0, 0], f"two threads stepping one engine: wrong {wrong}, errors {errors}")
print("two threads stepping one engine: each got its own batch's rows, 60 steps")

# close() from the main thread while another thread steps a large batch.
tokens = np.arange(1 << 16, dtype=np.int64) % vocab
big = pleshard.Engine(checkpoint=checkpoint, config=config_path, step_tokens=1 << 16)
outcome = []


def large():
    try:
        for _ in range(20):
            big.forward(tokens, [0, len(tokens)])
        outcome.append("stepped")
    except RuntimeError as e:
        outcome.append(str(e))


worker = threading.Thread(target=large)
worker.start()
big.close()
worker.join()
check(len(outcome) == 1 and (outcome[0] == "stepped" or "this engine is closed" in outcome[0]),
      f"close() beside a step: {outcome}")
print(f"close() while another thread steps: the step finished first ({outcome[0]})")
