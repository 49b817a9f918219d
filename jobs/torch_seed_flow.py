#!/usr/bin/env python3
"""What a user would run instead of `pleshard run --summary-only` on one GPU: the seed's
data flow in plain PyTorch. Requests from a JSONL corpus are scheduled as `pleshard run`
schedules them (parts of --part-tokens, chunked prefill of --step-tokens per step, the
context carried between steps); each step hashes its tokens for every PLE layer with
vectorized torch integer ops (docs/design.md section 2, written here from the spec) and looks the
rows up: F.embedding for bf16 tables, a gather then dequantization for FP8 and NVFP4. The
embeddings stay on the GPU, as with --summary-only.

    python3 jobs/torch_seed_flow.py --checkpoint MODEL_DIR --requests corpus.jsonl \\
        [--pleshard build/bin/pleshard] [--device cuda|cpu] [--step-tokens 8192] [--part-tokens 65536]

With --pleshard, a batch cut from the corpus is first checked: every id against
`pleshard ids`, every embedding bit against `pleshard embed`. Prints one
JSON line: tokens/s over the whole corpus (tables loaded beforehand, not timed)."""
import argparse
import json
import os

import torch
import torch.nn.functional as F

from ple_layout import layout, signed
from torch_flow import Safetensors, check_against_pleshard, device_name, read_requests, steps, timed_flow

class Config:
    def __init__(self, path):
        c = json.load(open(path))
        c = c.get("text_config", c)
        self.vocab = c["vocab_size"]
        eos = c["eos_token_id"]
        self.eos = eos[0] if isinstance(eos, list) else eos
        self.n = c.get("ngram_size", 3)
        self.k = c.get("heads_per_ngram", 8)
        self.heads = (self.n - 1) * self.k
        self.base = c.get("ngram_vocab_size_base", 20000000)
        self.seed = c.get("seed", 1234)
        self.layers = sorted(set(c["ple_layer_ids"]))
        self.dtype = c.get("ple_embedding_dtype")

    def layout(self, d):
        mults, sizes, offsets = layout(self.vocab, self.n, self.k, self.base, self.seed, d)
        return [signed(m) for m in mults], sizes, offsets


class Hasher:
    """Every layer's ids of a step's tokens, on the GPU."""

    def __init__(self, cfg, device):
        self.cfg = cfg
        self.layers = []
        for d in range(len(cfg.layers)):
            mults, sizes, offsets = cfg.layout(d)
            self.layers.append((torch.tensor(mults, dtype=torch.int64, device=device),
                                torch.tensor(sizes, dtype=torch.int64, device=device),
                                torch.tensor(offsets, dtype=torch.int64, device=device)))

    def __call__(self, ext, positions):
        """ext: each request's context then its step tokens, concatenated; positions: where
        each step token sits in ext. Returns [layer] -> [tokens, heads] ids."""
        cfg = self.cfg
        # preds[k] = the token k places before each step token (k = 0 is the token itself).
        preds = torch.stack([ext[positions - k] for k in range(cfg.n)])
        # Once a predecessor equal to EOS is seen, every older one counts as EOS.
        seen = torch.cumsum((preds[1:-1] == cfg.eos).to(torch.int64), dim=0) > 0
        older = preds[2:].clone()
        older[seen] = cfg.eos
        preds = torch.cat([preds[:2], older])
        out = []
        for mults, sizes, offsets in self.layers:
            mix = preds[0] * mults[0]
            per_order = []
            for k in range(1, cfg.n):
                mix = torch.bitwise_xor(mix, preds[k] * mults[k])
                per_order.append(mix)
            mixes = torch.stack(per_order, dim=1).repeat_interleave(cfg.k, dim=1)  # [tokens, heads]
            out.append(torch.remainder(mixes, sizes) + offsets)
        return out


def load_tables(checkpoint, cfg, device, prefix):
    """Per layer: (format, rows tensor, block scales or None, global scale)."""
    st = Safetensors(checkpoint)
    tensors, get = st.names(), st.tensor

    tables = []
    for layer in cfg.layers:
        p = prefix.replace("{L}", str(layer - 1)) + ".ngram_embedding."
        shards = sorted((n for n in tensors if n.startswith(p + "shard_") and n.endswith(".weight")),
                        key=lambda n: int(n[len(p) + 6:].split(".")[0]))
        rows = torch.cat([get(n) for n in shards]).to(device)
        if cfg.dtype == "nvfp4":
            scales = torch.cat([get(n[:-len(".weight")] + ".weight_scale") for n in shards]).to(device)
            tables.append(("nvfp4", rows, scales, float(get(p + "weight_scale_2").float().item())))
        elif cfg.dtype == "float8_e4m3fn":
            tables.append(("fp8", rows, None, float(get(p + "weight_scale").float().item())))
        else:
            tables.append(("plain", rows, None, 1.0))
    return tables


E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def lookup(table, ids, e2m1):
    kind, rows, scales, global_scale = table
    flat = ids.reshape(-1)
    if kind == "plain":
        return F.embedding(flat, rows).to(torch.bfloat16).reshape(ids.shape[0], -1)
    if kind == "fp8":
        codes = rows.view(torch.uint8)[flat].view(torch.float8_e4m3fn)
        return (codes.to(torch.float32) * global_scale).to(torch.bfloat16).reshape(ids.shape[0], -1)
    codes = rows.view(torch.uint8)[flat]  # [n, dim / 2], element 2i in the low nibble
    values = e2m1[torch.stack([codes & 0xF, codes >> 4], dim=-1).reshape(codes.shape[0], -1).long()]
    block = scales.view(torch.float8_e4m3fn)[flat].to(torch.float32)  # [n, dim / 16]
    values = (values.reshape(codes.shape[0], block.shape[1], -1) * block.unsqueeze(-1)) * global_scale
    return values.reshape(ids.shape[0], -1).to(torch.bfloat16)


def check_batch(args, cfg, hasher, tables, e2m1, requests, device):
    """A batch cut from the corpus, checked against `pleshard ids` and `pleshard embed`."""
    batch = {"requests": [{"tokens": r[:300]} for r in requests[:5]]}
    ext, positions = [], []
    for req in batch["requests"]:
        start = len(ext) + cfg.n - 1
        ext += [cfg.eos] * (cfg.n - 1) + req["tokens"]
        positions += range(start, start + len(req["tokens"]))
    ids = hasher(torch.tensor(ext, device=device), torch.tensor(positions, device=device))
    return check_against_pleshard(args.pleshard, args.config, args.checkpoint, len(cfg.layers), batch, ids,
                                  lambda d: lookup(tables[d], ids[d], e2m1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="safetensors checkpoint directory")
    parser.add_argument("--config", help="config.json (default: beside the checkpoint)")
    parser.add_argument("--requests", required=True, help="JSONL corpus")
    parser.add_argument("--step-tokens", type=int, default=8192)
    parser.add_argument("--part-tokens", type=int, default=65536)
    parser.add_argument("--layer-prefix", default="model.language_model.layers.{L}.ple.ple_embedding")
    parser.add_argument("--pleshard", help="pleshard executable to check ids and embeddings against")
    parser.add_argument("--device", default="cuda", help="torch device (default cuda; cpu works for bf16 tables)")
    args = parser.parse_args()
    args.config = args.config or os.path.join(args.checkpoint, "config.json")
    device = torch.device(args.device)
    cfg = Config(args.config)
    requests = read_requests(args.requests)
    hasher = Hasher(cfg, device)
    tables = load_tables(args.checkpoint, cfg, device, args.layer_prefix)
    e2m1 = torch.tensor(E2M1, dtype=torch.float32, device=device)
    check = check_batch(args, cfg, hasher, tables, e2m1, requests, device) if args.pleshard else "none"
    schedule = list(steps(requests, cfg.n - 1, cfg.eos, args.step_tokens, args.part_tokens))

    def step(ext, positions):
        ids = hasher(ext, positions)
        return [lookup(tables[d], ids[d], e2m1) for d in range(len(tables))]

    tokens, seconds = timed_flow(schedule, step, device)
    print(json.dumps({"job": "torch-seed-flow", "format": tables[0][0] if tables[0][0] != "plain" else "bf16",
                      "layers": len(tables), "tokens": tokens, "steps": len(schedule), "seconds": seconds,
                      "tokens_per_s": tokens / seconds, "checked_against_pleshard": check,
                      "gpu": device_name(device)}))


if __name__ == "__main__":
    main()
