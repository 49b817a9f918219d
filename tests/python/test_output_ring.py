"""The output ring: with output_slots=K a step's embeddings stay as they were while the next
K - 1 steps run, and any use of them once step s + K has run raises RuntimeError (never
another step's rows); closing the engine invalidates its outputs, while views already taken
from them (NumPy, DLPack) keep their memory and read the step's rows after it. K = 1, 2, 4 on the host
tier (gather-reduce exchange) and K = 2 on the disk tier (local exchange); the other
exchanges keep outputs under mpirun (test_mpi.py).
    test_output_ring.py CHECKPOINT CONFIG"""
import json
import sys

import numpy as np

import pleshard
from support import check, expect_error, flat, requests

checkpoint, config_path = sys.argv[1], sys.argv[2]
with open(config_path) as f:
    vocab = json.load(f)["vocab_size"]

for storage, slots in [("host", 1), ("host", 2), ("host", 4), ("disk", 2)]:
    engine = pleshard.Engine(checkpoint=checkpoint, config=config_path, out_dtype="float32", output_slots=slots,
                             storage=storage)
    check(engine.output_slots == slots, f"output_slots {engine.output_slots}, asked {slots}")
    outs, kept = [], []
    for step in range(slots + 3):
        batch = requests(100 + step, 3, vocab, 2, max_tokens=6 + step)  # sizes change step by step
        out = engine.forward(*flat(batch))[0]
        outs.append(out)
        kept.append(out.bits().copy())
        for s, (o, want) in enumerate(zip(outs, kept)):
            held = s + slots > step
            check(o.valid == held, f"K={slots}: step {s} valid={o.valid} after step {step}")
            if held:
                check(np.array_equal(o.bits(), want), f"K={slots}: step {s}'s rows changed by step {step}")
                check(o.slot == s % slots and o.step == s, f"K={slots}: step {s} in slot {o.slot}")
            else:
                for use in (lambda: o.bits(), lambda: o.numpy(), lambda: o.shape, lambda: o.__dlpack__(),
                            lambda: o.data_ptr, lambda: np.asarray(o)):
                    expect_error(RuntimeError, f"the output of step {s} was overwritten by step {s + slots}", use)
    last = outs[-1]
    view, words = last.bits(), kept[-1]
    exported = np.from_dlpack(last).view(np.uint32) if hasattr(np, "from_dlpack") else view
    engine.close()
    check(np.array_equal(view, words) and np.array_equal(exported, words),
          f"K={slots}: a view taken before close() reads other rows after it")
    check(not last.valid, "an output of a closed engine is valid")
    expect_error(RuntimeError, "its engine is closed", last.bits)
    expect_error(RuntimeError, "this engine is closed", engine.forward, [1], [0, 1])
    print(f"output_slots={slots} ({storage} tier): each step's rows kept for {slots} steps, refused after")
expect_error(ValueError, "output_slots: 65 is out of range: must be from 1 to 64", pleshard.Engine, checkpoint=checkpoint,
             config=config_path, output_slots=65)

# The with block closes the engine; what was taken inside stays readable outside.
batch = requests(7, 4, vocab, 2)
with pleshard.Engine(checkpoint=checkpoint, config=config_path, out_dtype="float32") as engine:
    out = engine.forward(*flat(batch))[0]
    view, words = out.numpy(), out.bits().copy()
del engine, out
check(np.array_equal(view.view(np.uint32), words), "a NumPy view read after its engine's with block differs")
print("views taken before close() (NumPy, DLPack) read their step's rows after it")
