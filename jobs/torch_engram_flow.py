#!/usr/bin/env python3
"""What a user would run instead of `pleshard run --summary-only` on one GPU for DeepSeek-V4.1's
Engram tables: the flow in plain PyTorch. Requests from a JSONL corpus are scheduled as
`pleshard run` schedules them (parts of --part-tokens, chunked prefill of --step-tokens per
step, the context carried between steps); each step hashes its tokens for every Engram table
with vectorised torch integer ops (written here from docs/design.md section 10: token map,
NumPy's multipliers, the model's prime walk, blocking by request start and dead tokens), then
gathers the rows and dequantises them: FP8 E4M3 codes times 2^(scale - 127), one E8M0 scale
byte per 32 values, in float32, then one rounding to bf16 (BF16 tables: F.embedding). Each
table gives [tokens, heads * head_dim]; the embeddings stay on the device, as with
--summary-only.

    python3 jobs/torch_engram_flow.py --checkpoint MODEL_DIR --requests corpus.jsonl \\
        [--pleshard build/bin/pleshard] [--device cuda|cpu] [--step-tokens 8192] [--part-tokens 65536]

The token map is --token-map, else engram_token_map.npy beside the config, else in the
checkpoint directory (`pleshard ckpt make` puts it there). With --pleshard, a batch cut from
the corpus is first checked: every id against `pleshard ids`, every embedding bit against
`pleshard embed`, and the step schedule's ids against hashing each request whole. Prints one
JSON line: tokens/s over the whole corpus (tables loaded beforehand, not timed)."""
import argparse
import json
import os

import numpy as np
import torch
import torch.nn.functional as F

from ple_layout import is_prime
from torch_flow import Safetensors, check_against_pleshard, device_name, read_requests, steps, timed_flow

# A position before the request's first token, in a context (as pleshard's batches mark it).
BEFORE_REQUEST = -1
TOKEN_MAP_FILE = "engram_token_map.npy"


class Config:
    def __init__(self, path):
        with open(path) as f:
            c = json.load(f)
        c = c.get("text_config", c)
        self.path = path
        self.vocab = c["vocab_size"]
        self.layers = list(c["engram_layer_ids"])  # table d is entry d, in the order given
        self.n = c["engram_max_ngram_size"]
        self.k = c["engram_n_heads"]
        self.head_dim = c["engram_head_dim"]
        sizes = c["engram_vocab_size"]
        self.order_vocab = list(sizes) if isinstance(sizes, list) else [sizes] * (self.n - 1)
        self.pad = c["engram_pad_token_id"]
        self.compressed = c.get("engram_compressed_vocab_size", self.vocab)
        self.dead = c.get("image_token_id")

    def multipliers(self, layer):
        """Decoder layer `layer`'s N multipliers: NumPy's own generator, as the model draws them."""
        bound = max(1, ((2**63 - 1) // self.compressed) // 2)
        draws = np.random.default_rng(10007 * layer).integers(0, bound, size=self.n, dtype=np.int64)
        return [int(m) * 2 + 1 for m in draws]

    def heads_of_tables(self):
        """Per table, its heads' primes and offsets: tables in config order, orders 2..N, heads
        0..K-1, each head taking the smallest prime >= its order's vocab size that no earlier
        head of the model took."""
        taken, tables = set(), []
        for _ in self.layers:
            primes = []
            for order in range(self.n - 1):
                for _ in range(self.k):
                    p = self.order_vocab[order]
                    while p in taken or not is_prime(p):
                        p += 1
                    taken.add(p)
                    primes.append(p)
            tables.append((primes, [sum(primes[:h]) for h in range(len(primes))]))
        return tables


def find_token_map(args, cfg, checkpoint_dir):
    """--token-map, else the map beside the config, else in the checkpoint directory; None
    where there is none and tokens may hash as themselves."""
    if args.token_map:
        if not os.path.exists(args.token_map):
            raise SystemExit(f"{args.token_map}: no such token map")
        return args.token_map
    for folder in (os.path.dirname(os.path.abspath(args.config)), checkpoint_dir):
        if os.path.exists(os.path.join(folder, TOKEN_MAP_FILE)):
            return os.path.join(folder, TOKEN_MAP_FILE)
    if cfg.compressed != cfg.vocab:
        raise SystemExit(f"{cfg.path}: engram_compressed_vocab_size {cfg.compressed} differs from vocab_size "
                         f"{cfg.vocab}: hashing needs the token map ({TOKEN_MAP_FILE} beside the config or the "
                         "checkpoint, or --token-map)")
    return None


def load_token_map(path, cfg):
    token_map = np.load(path)
    if token_map.shape != (cfg.vocab,) or token_map.dtype.kind not in "iu":
        raise SystemExit(f"{path}: token map of {token_map.dtype} {list(token_map.shape)}, "
                         f"expected integers [{cfg.vocab}] (vocab_size)")
    if token_map.min() < 0 or token_map.max() >= cfg.compressed:
        raise SystemExit(f"{path}: token map values in [{token_map.min()}, {token_map.max()}], "
                         f"expected [0, {cfg.compressed}) (engram_compressed_vocab_size)")
    return token_map.astype(np.int64)


class Hasher:
    """Every table's ids of a step's tokens, on the device."""

    def __init__(self, cfg, token_map, device):
        self.cfg = cfg
        self.token_map = torch.from_numpy(token_map).to(device) if token_map is not None else None
        self.pad = int(token_map[cfg.pad]) if token_map is not None else cfg.pad
        self.shifts = torch.arange(cfg.n, device=device)
        self.tables = []
        for layer, (primes, offsets) in zip(cfg.layers, cfg.heads_of_tables()):
            self.tables.append((torch.tensor(cfg.multipliers(layer), dtype=torch.int64, device=device),
                                torch.tensor(primes, dtype=torch.int64, device=device),
                                torch.tensor(offsets, dtype=torch.int64, device=device)))

    def __call__(self, ext, positions):
        """ext: each request's context (BEFORE_REQUEST where it had not begun) then its step
        tokens, concatenated; positions: where each step token sits in ext. Returns [table] ->
        [tokens, heads] ids."""
        cfg = self.cfg
        tokens = ext[positions.unsqueeze(0) - self.shifts.unsqueeze(1)]  # [shift, token]
        blocked = tokens == BEFORE_REQUEST
        if cfg.dead is not None:
            blocked |= tokens == cfg.dead
        # Once a shift is blocked, every larger one is too.
        blocked = torch.cumsum(blocked.to(torch.int64), dim=0) > 0
        values = self.token_map[tokens.clamp(min=0)] if self.token_map is not None else tokens
        values = torch.where(blocked, torch.full_like(values, self.pad), values)
        out = []
        for mults, primes, offsets in self.tables:
            # Each product fits in 63 bits (v < C and m < 2^63 / C), so the XORs are the
            # 64-bit-wrapped ones of the spec.
            terms = values * mults.unsqueeze(1)
            mix, per_order = terms[0], []
            for s in range(1, cfg.n):
                mix = torch.bitwise_xor(mix, terms[s])
                per_order.append(mix)
            mixes = torch.stack(per_order, dim=1).repeat_interleave(cfg.k, dim=1)  # [tokens, heads]
            out.append(torch.remainder(mixes, primes) + offsets)  # floor_mod: primes are positive
        return out


def e4m3_values():
    """The float32 value of each E4M3 ("fn": bias 7, no infinities, S.1111.111 NaN) byte."""
    b = np.arange(256)
    exponent, mantissa = (b >> 3) & 0xF, b & 7
    magnitude = np.where(exponent == 0, mantissa / 8 * 2.0**-6, (1 + mantissa / 8) * 2.0**(exponent - 7))
    magnitude[(exponent == 15) & (mantissa == 7)] = np.nan
    return np.where(b >> 7, -magnitude, magnitude).astype(np.float32)


def e8m0_values():
    """The float32 value of each E8M0 scale byte: 2^(s - 127), 0 giving the subnormal 2^-127
    and 255 NaN."""
    values = np.full(256, np.nan, dtype=np.float32)
    values[:255] = np.ldexp(np.float32(1), np.arange(255) - 127)
    return values


class Dequantizer:
    def __init__(self, device):
        # torch without float8 types (before 2.1) decodes codes through a table of the 256 values.
        self.native = hasattr(torch, "float8_e4m3fn")
        self.e4m3 = torch.from_numpy(e4m3_values()).to(device)
        self.e8m0 = torch.from_numpy(e8m0_values()).to(device)

    def codes(self, codes):
        return codes.view(torch.float8_e4m3fn).to(torch.float32) if self.native else self.e4m3[codes.long()]

    def __call__(self, table, ids):
        """Table rows of ids [tokens, heads] as bf16 [tokens, heads * head_dim]."""
        kind, weight, scale = table
        flat = ids.reshape(-1)
        if kind == "plain":
            return F.embedding(flat, weight).to(torch.bfloat16).reshape(ids.shape[0], -1)
        codes = weight.index_select(0, flat)  # [rows, head_dim] E4M3 bytes
        scales = self.e8m0[scale.index_select(0, flat).long()]  # [rows, head_dim / 32]
        values = self.codes(codes).reshape(flat.shape[0], scales.shape[1], -1) * scales.unsqueeze(-1)
        return values.reshape(ids.shape[0], -1).to(torch.bfloat16)


def find_tensor(st, layer, leaf):
    """The tensor whose name ends in layers.{layer}.engram.embed.{leaf} (from a component
    boundary: layers.1. must not match layers.11.), or None."""
    tail = f"layers.{layer}.engram.embed.{leaf}"
    found = [n for n in st.names() if n == tail or n.endswith("." + tail)]
    if len(found) > 1:
        raise SystemExit(f"two tensors end in {tail}: {found}")
    return found[0] if found else None


def load_tables(checkpoint, cfg, device):
    """Per table: ("fp8", E4M3 codes [rows, head_dim] uint8, E8M0 scales [rows, head_dim / 32]
    uint8) or ("plain", rows, None), on the device."""
    st = Safetensors(checkpoint)
    tables = []
    for layer, (primes, _) in zip(cfg.layers, cfg.heads_of_tables()):
        weight = find_tensor(st, layer, "weight")
        if weight is None:
            raise SystemExit(f"{checkpoint}: no tensor ending in layers.{layer}.engram.embed.weight")
        rows = st.tensor(weight)
        if list(rows.shape) != [sum(primes), cfg.head_dim]:
            raise SystemExit(f"{checkpoint}: {weight} is {list(rows.shape)}, expected [{sum(primes)}, {cfg.head_dim}]")
        if st.dtype(weight) == "F8_E4M3":
            scale = find_tensor(st, layer, "scale")
            if scale is None or st.dtype(scale) != "F8_E8M0":
                raise SystemExit(f"{checkpoint}: {weight} needs an F8_E8M0 tensor ending in "
                                 f"layers.{layer}.engram.embed.scale")
            tables.append(("fp8", rows.to(device, copy=True), st.tensor(scale).to(device, copy=True)))
        elif st.dtype(weight) in ("BF16", "F16", "F32"):
            tables.append(("plain", rows.to(device, copy=True), None))
        else:
            raise SystemExit(f"{checkpoint}: {weight} has dtype {st.dtype(weight)}, expected F8_E4M3 or BF16")
    return tables


def check_batch(requests, cfg):
    """A batch cut from the corpus: requests whose contexts hold 0..N-1 tokens (a context short
    of N-1 means the request began that many tokens before its chunk), and, where the config
    has a dead token, one with every fifth token dead."""
    batch = []
    for i, r in enumerate(requests[:2 * cfg.n]):
        k = i % cfg.n
        if len(r) > k:
            batch.append({"context": r[:k], "tokens": r[k:k + 300]})
    if cfg.dead is not None and requests:
        tokens = requests[0][:300]
        batch.append({"context": [], "tokens": [cfg.dead if i % 5 == 4 else t for i, t in enumerate(tokens)]})
    return {"requests": batch}


def layout(batch, width):
    """A batch's requests as the hasher takes them: (ext, positions)."""
    ext, positions = [], []
    for req in batch["requests"]:
        context = req.get("context", [])
        start = len(ext) + width
        ext += [BEFORE_REQUEST] * (width - len(context)) + context + req["tokens"]
        positions += range(start, start + len(req["tokens"]))
    return ext, positions


def schedule(requests, cfg, step_tokens, part_tokens):
    """pleshard run's steps over the requests; a request's first context is all before it."""
    return steps(requests, cfg.n - 1, BEFORE_REQUEST, step_tokens, part_tokens)


def check_chunks(requests, hasher, cfg, device):
    """The step schedule's ids, in small steps and parts, against hashing each request whole."""
    requests = [r[:500] for r in requests[:8]]
    width = cfg.n - 1
    whole = hasher(*(torch.tensor(v, device=device) for v in layout({"requests": [{"tokens": r} for r in requests]},
                                                                    width)))
    starts = np.cumsum([0] + [len(r) for r in requests])
    for ext, positions, slices in schedule(requests, cfg, step_tokens=61, part_tokens=700):
        ids = hasher(torch.tensor(ext, device=device), torch.tensor(positions, device=device))
        at = 0
        for r, first, take in slices:
            for d in range(len(ids)):
                if not torch.equal(ids[d][at:at + take], whole[d][starts[r] + first:starts[r] + first + take]):
                    raise SystemExit(f"chunked hashing differs from whole requests (table {d}, request {r})")
            at += take


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="safetensors checkpoint (directory or file)")
    parser.add_argument("--config", help="config.json (default: beside the checkpoint)")
    parser.add_argument("--token-map", help=f"token map .npy (default: {TOKEN_MAP_FILE} beside the config, "
                                            "else in the checkpoint directory)")
    parser.add_argument("--requests", required=True, help="JSONL corpus, token ids below vocab_size")
    parser.add_argument("--step-tokens", type=int, default=8192)
    parser.add_argument("--part-tokens", type=int, default=65536)
    parser.add_argument("--device", default="cuda", help="torch device (default cuda; cpu works too)")
    parser.add_argument("--pleshard", help="pleshard executable to check ids and embeddings against")
    args = parser.parse_args()
    checkpoint_dir = args.checkpoint if os.path.isdir(args.checkpoint) else os.path.dirname(args.checkpoint)
    args.config = args.config or os.path.join(checkpoint_dir, "config.json")
    device = torch.device(args.device)
    cfg = Config(args.config)
    map_path = find_token_map(args, cfg, checkpoint_dir)
    token_map = load_token_map(map_path, cfg) if map_path else None
    requests = read_requests(args.requests)
    bad = next((t for r in requests for t in r if not 0 <= t < cfg.vocab), None)
    if bad is not None:
        raise SystemExit(f"{args.requests}: token {bad} outside vocab_size {cfg.vocab} (fold the corpus: "
                         "jobs/fold_corpus.py)")
    hasher = Hasher(cfg, token_map, device)
    tables = load_tables(args.checkpoint, cfg, device)
    dequantize = Dequantizer(device)

    check = "none"
    if args.pleshard:
        check_chunks(requests, hasher, cfg, device)
        batch = check_batch(requests, cfg)
        ids = hasher(*(torch.tensor(v, device=device) for v in layout(batch, cfg.n - 1)))
        check = check_against_pleshard(args.pleshard, args.config, args.checkpoint, len(tables), batch, ids,
                                       lambda d: dequantize(tables[d], ids[d]),
                                       ["--token-map", map_path] if map_path else [])

    def step(ext, positions):
        ids = hasher(ext, positions)
        return [dequantize(tables[d], ids[d]) for d in range(len(tables))]

    plan = list(schedule(requests, cfg, args.step_tokens, args.part_tokens))
    tokens, seconds = timed_flow(plan, step, device)
    print(json.dumps({"job": "torch-engram-flow", "format": "fp8_e8m0" if tables[0][0] == "fp8" else "bf16",
                      "tables": len(tables), "rows": [int(t[1].shape[0]) for t in tables], "tokens": tokens,
                      "steps": len(plan), "seconds": seconds, "tokens_per_s": tokens / seconds,
                      "checked_against_pleshard": check, "device": device_name(device),
                      "torch": torch.__version__}))


if __name__ == "__main__":
    main()
