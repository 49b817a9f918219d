#!/usr/bin/env python3
"""`pleshard embed` from Python: the embeddings of every table for a batch (BATCH.json, as
`pleshard embed` takes it) from pleshard's engine in this process, into NumPy arrays.

    python3 jobs/python/embed_batch.py --checkpoint CKPT [--config config.json] --batch BATCH.json
        [--storage host|device|pinned|disk] [--out-dtype float32|bfloat16|float16]
        [--out OUT.npz] [--compare EMBED.h5]

--out saves /ple_{d} as `ple_{d}` and `query_start_loc` (bfloat16 rows as their 16-bit
words, as pleshard's HDF5 outputs hold them); --compare checks every row bit for bit against
`pleshard embed`'s output of the same batch (needs h5py)."""
import argparse
import json
import sys

import numpy as np

import pleshard


def load_batch(path):
    """BATCH.json in vLLM's layout: flat tokens, query_start_loc, contexts (None: fresh)."""
    with open(path) as f:
        requests = json.load(f)["requests"]
    tokens = np.array([t for r in requests for t in r["tokens"]], dtype=np.int64)
    qsl = np.cumsum([0] + [len(r["tokens"]) for r in requests], dtype=np.int64)
    return tokens, qsl, [r.get("context") for r in requests]


def embed_h5_bits(path, table, dtype):
    """`pleshard embed`'s rows of one table as stored (see docs/output.md, "Reading it fast")."""
    import h5py

    with h5py.File(path, "r") as f:
        d = f[f"ple_{table}"]
        words = np.empty(d.shape, dtype=np.uint32 if dtype == "float32" else np.uint16)
        if words.size:
            d.id.read(h5py.h5s.ALL, h5py.h5s.ALL, words, mtype=d.id.get_type())
        return words


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--config")
    p.add_argument("--batch", required=True)
    p.add_argument("--storage", default="host")
    p.add_argument("--out-dtype", default="bfloat16")
    p.add_argument("--out")
    p.add_argument("--compare")
    a = p.parse_args()

    tokens, qsl, contexts = load_batch(a.batch)
    # One step of the whole batch, as `pleshard embed` runs it.
    engine = pleshard.Engine(checkpoint=a.checkpoint, config=a.config, storage=a.storage, out_dtype=a.out_dtype,
                             step_tokens=max(1, len(tokens)))
    outs = engine.forward(tokens, qsl, contexts)
    if engine.device != "cpu":
        import torch  # GPU rows reach NumPy through PyTorch

        tables = [torch.from_dlpack(o).view(torch.int16 if a.out_dtype != "float32" else torch.int32).cpu().numpy()
                  .view(np.uint16 if a.out_dtype != "float32" else np.uint32) for o in outs]
    else:
        tables = [o.bits().copy() for o in outs]
    print(f"embed_batch: {len(tables)} tables x {len(tokens)} tokens x {engine.embed_dim} values "
          f"({a.out_dtype}, {engine.storage} tier)")
    if a.out:
        np.savez(a.out, query_start_loc=qsl, **{f"ple_{d}": t for d, t in enumerate(tables)})
    if a.compare:
        for d, rows in enumerate(tables):
            want = embed_h5_bits(a.compare, d, a.out_dtype)
            wrong = int(np.count_nonzero(rows != want)) if rows.shape == want.shape else rows.size
            if wrong:
                print(f"embed_batch: table {d}: {wrong} values differ from {a.compare}", file=sys.stderr)
                return 1
        print(f"embed_batch: every row equal to pleshard embed's ({a.compare}), bit for bit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
