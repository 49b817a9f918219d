"""The module's embeddings against `pleshard embed`'s, bit for bit, on the host tier (and the
disk tier, which steps through the engine's other exchange), for every output dtype; contexts
as a list and as an array give the same bits.
    test_embed_equal.py CHECKPOINT CONFIG"""
import json
import sys

import numpy as np

import pleshard
from support import DTYPES, check, embed_bits, flat, requests

checkpoint, config_path = sys.argv[1], sys.argv[2]
with open(config_path) as f:
    config = json.load(f)
engram = "engram_layer_ids" in config
width = (config["engram_max_ngram_size"] if engram else config.get("ngram_size", 3)) - 1
extra = (config.get("image_token_id", 0), config["engram_pad_token_id"]) if engram else (config["eos_token_id"],)
batch = requests(7, 12, config["vocab_size"], width, extra=extra)
tokens, qsl, contexts = flat(batch)

for dtype in DTYPES:
    expected = embed_bits(checkpoint, batch, dtype, config_path)
    # The disk tier also behind a row cache smaller than the step's distinct rows (admitting
    # and evicting as it goes).
    for storage, cache in (("host", {}), ("disk", {}), ("disk", {"cache_rows": 48})):
        engine = pleshard.Engine(checkpoint=checkpoint, config=config_path, storage=storage, out_dtype=dtype,
                                 step_tokens=256, **cache)
        outs = engine.forward(tokens, qsl, contexts)
        check(len(outs) == len(expected), f"{len(outs)} tables, embed wrote {len(expected)}")
        for d, (out, want) in enumerate(zip(outs, expected)):
            check(out.shape == want.shape, f"{storage}{cache} {dtype} table {d}: shape {out.shape}, embed's {want.shape}")
            got = out.bits()
            wrong = int(np.count_nonzero(got != want))
            check(wrong == 0, f"{storage}{cache} {dtype} table {d}: {wrong} values differ from pleshard embed")
        engine.close()
    print(f"{dtype}: {len(expected)} tables x {len(tokens)} tokens equal to pleshard embed (host, disk, disk behind a row cache)")

# A context array holds every request's context: fresh requests are the only kind where none
# is given, so the array case uses explicit contexts throughout.
full = [(t, c if c is not None else [1] * width) for t, c in batch]
tokens, qsl, contexts = flat(full)
engine = pleshard.Engine(checkpoint=checkpoint, config=config_path, out_dtype="float32")
listed = [o.bits().copy() for o in engine.forward(tokens, qsl, contexts)]
arrayed = [o.bits().copy() for o in engine.forward(tokens, qsl, np.array(contexts, dtype=np.int32))]
check(all(np.array_equal(a, b) for a, b in zip(listed, arrayed)), "contexts as an array differ from the list")
want = embed_bits(checkpoint, full, "float32", config_path)
check(all(np.array_equal(a, b) for a, b in zip(listed, want)), "explicit contexts differ from pleshard embed")
print(f"{'Engram' if engram else 'Qwen4Exp'}: the module equals pleshard embed bit for bit")
