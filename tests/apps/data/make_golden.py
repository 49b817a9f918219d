#!/usr/bin/env python3
"""Independent Python implementation of pleshard's hashing spec (docs/design.md section 2; the
layers' layout from jobs/ple_layout.py), used once to write the golden `pleshard ids`
outputs in this folder:

    python3 make_golden.py   # rewrites *.config.json, *.batch.json, *.ids{0,1}.json

Python integers are unbounded, so 64-bit wrap-around is applied explicitly."""
import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "jobs"))
from ple_layout import MASK, layout, signed  # noqa: E402


def ids(cfg, d, batch):
    n, k = cfg.get("ngram_size", 3), cfg.get("heads_per_ngram", 8)
    eos = cfg["eos_token_id"]
    mults, sizes, offsets = layout(cfg["vocab_size"], n, k, cfg.get("ngram_vocab_size_base", 20000000),
                                   cfg.get("seed", 1234), d)
    rows = []
    for req in batch["requests"]:
        seq = req.get("context", [eos] * (n - 1)) + req["tokens"]
        for p in range(n - 1, len(seq)):
            window, seen = [seq[p]], False
            for back in range(1, n):
                t = eos if seen else seq[p - back]
                seen = seen or t == eos
                window.append(t)
            row = []
            for order in range(2, n + 1):
                mix = 0
                for j in range(order):
                    mix ^= (window[j] * mults[j]) & MASK
                mix = signed(mix)
                for h in range((order - 2) * k, (order - 1) * k):
                    row.append(mix % sizes[h] + offsets[h])
            rows.append(row)
    return {"ids": rows}


def main():
    rng = random.Random(1129)
    cases = {
        "small": {"vocab_size": 200019, "eos_token_id": 199999, "num_hidden_layers": 4,
                  "ple_embed_dim": 2560, "ple_layer_ids": [2, 4]},
        "eos_heavy": {"vocab_size": 50, "eos_token_id": 3, "num_hidden_layers": 3,
                      "ngram_size": 5, "heads_per_ngram": 2, "ple_embed_dim": 128,
                      "ngram_vocab_size_base": 97, "seed": -77, "ple_layer_ids": [1, 3]},
        "wide": {"text_config": {"vocab_size": 151936, "eos_token_id": [151643, 151645],
                                 "num_hidden_layers": 2, "ngram_size": 6, "heads_per_ngram": 3,
                                 "hidden_size": 15 * 32, "ngram_vocab_size_base": 1000000000,
                                 "seed": 2**62 + 5, "ple_layer_ids": [1, 2]}},
    }
    for name, cfg in cases.items():
        flat = cfg.get("text_config", cfg)
        eos = flat["eos_token_id"]
        eos = eos[0] if isinstance(eos, list) else eos
        flat_cfg = dict(flat, eos_token_id=eos)
        n = flat.get("ngram_size", 3)
        vocab = flat["vocab_size"]
        requests = []
        for r in range(6):
            def tok():
                x = rng.random()
                if x < 0.15:
                    return eos
                if x < 0.2:
                    return rng.randrange(2**63)
                return rng.randrange(vocab)
            req = {"tokens": [tok() for _ in range(rng.choice([0, 1, 2, 7, 30]))]}
            if r % 2:
                req["context"] = [tok() for _ in range(n - 1)]
            requests.append(req)
        batch = {"requests": requests}
        with open(f"{name}.config.json", "w") as f:
            json.dump(cfg, f, indent=1)
        with open(f"{name}.batch.json", "w") as f:
            json.dump(batch, f)
        for d in (0, 1):
            with open(f"{name}.ids{d}.json", "w") as f:
                f.write(json.dumps(ids(flat_cfg, d, batch)) + "\n")


if __name__ == "__main__":
    main()
