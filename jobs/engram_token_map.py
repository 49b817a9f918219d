#!/usr/bin/env python3
"""Writes a synthetic Engram token map for a config whose compressed vocabulary differs from
its vocabulary (engram_compressed_vocab_size < vocab_size), for benchmarks and tests where
the model's tokenizer (from which the real map is built) is not at hand:

    python3 jobs/engram_token_map.py --config jobs/models/deepseek-v4.1-flash/config.json \\
        --out synthetic_token_map.npy

and named with --token-map: written beside a released config, it would be found there by a
command given a real checkpoint that carries no map.

Token t < C maps to t (so every compressed id is taken and the largest is C - 1), token
t >= C to a splitmix64 hash of t modulo C. The file is NumPy .npy, int32, shape
[vocab_size], as pleshard reads it (--token-map; docs/design.md §10 says where else it looks).
Embeddings made with it are not the real model's: say so beside any figure."""
import argparse
import json

import numpy as np

MASK = (1 << 64) - 1


def splitmix64(v):
    v = (v + 0x9E3779B97F4A7C15) & MASK
    v = ((v ^ (v >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    v = ((v ^ (v >> 27)) * 0x94D049BB133111EB) & MASK
    return v ^ (v >> 31)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", required=True, help="an Engram config.json")
    parser.add_argument("--out", required=True, help="the .npy file to write")
    args = parser.parse_args()
    c = json.load(open(args.config))
    c = c.get("text_config", c)
    vocab = c["vocab_size"]
    compressed = c.get("engram_compressed_vocab_size", vocab)
    ids = np.array([t if t < compressed else splitmix64(t) % compressed for t in range(vocab)], dtype=np.int32)
    np.save(args.out, ids)
    print(json.dumps({"token_map": args.out, "vocab_size": vocab, "compressed_vocab": compressed}))


if __name__ == "__main__":
    main()
