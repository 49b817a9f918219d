#!/usr/bin/env python3
"""A toy decoder layer in PyTorch that adds each step's PLE embeddings to its hidden states,
with pleshard's engine serving them, under mpirun (each rank a DP rank with requests of its
own; the ranks share each table's rows, one ETP group):

    mpirun -n 2 python3 jobs/python/toy_decoder.py --checkpoint CKPT [--config C]
        [--storage host|device|pinned | --placement 0=device,1=pinned] [--steps 8] [--requests 4]
        [--layers 16 --read-at 1,14] [--start]

Each request is prefilled in one step, then decoded a token per step (its next token
picked by the toy model); every step hands the embeddings over without a copy
(torch.from_dlpack), on a GPU ordered after the engine's step on PyTorch's current stream.
--layers and --read-at give the decoder that many layers and the layer that reads each
table (DeepSeek-V4.1's Engram: 1,14; default: every table at layer 0 of one). Without
--start every step's embeddings are fetched (forward) before the layers; with it the step is
started before them and each layer waits for its table alone (start, wait_table), so the
layers before hide the fetch. Either way the decoder prints how long each table's reader
waited for it per step (host time, mean), beside the forward's own time.
Without PyTorch it says so and exits 0."""
import argparse
import sys
import time

try:
    import torch
except ImportError:
    print("toy decoder: PyTorch is not installed (pip install torch): nothing to run")
    sys.exit(0)
import numpy as np
from mpi4py import MPI

import pleshard


class ToyDecoderLayer(torch.nn.Module):
    """Hidden states plus a projection of each PLE table it reads, then an MLP."""

    def __init__(self, hidden, ple_dim, tables):
        super().__init__()
        self.ple = torch.nn.ModuleList(torch.nn.Linear(ple_dim, hidden, bias=False) for _ in range(tables))
        self.norm = torch.nn.LayerNorm(hidden)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(hidden, 4 * hidden), torch.nn.GELU(),
                                       torch.nn.Linear(4 * hidden, hidden))

    def forward(self, hidden, ple):
        for project, rows in zip(self.ple, ple):
            hidden = hidden + project(rows.to(hidden.dtype))
        return hidden + self.mlp(self.norm(hidden))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--config")
    p.add_argument("--storage")
    p.add_argument("--placement")
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--requests", type=int, default=4)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--read-at", help="the decoder layer that reads each table, comma-separated (default: 0 each)")
    p.add_argument("--start", action="store_true", help="start each step before the layers, wait per table")
    p.add_argument("--prompt-tokens", type=int, default=12, help="the longest prompt (the prefill step's size)")
    a = p.parse_args()

    world = MPI.COMM_WORLD
    rank = world.Get_rank()
    where = {"placement": a.placement} if a.placement else {"storage": a.storage or "host"}
    engine = pleshard.Engine(checkpoint=a.checkpoint, config=a.config, comm=world, etp=world.Get_size(), **where)
    tables = engine.num_tables
    read_at = [int(x) for x in a.read_at.split(",")] if a.read_at else [0] * tables
    if len(read_at) != tables or not all(0 <= l < a.layers for l in read_at):
        p.error(f"--read-at: one layer in [0, {a.layers}) for each of the {tables} tables")
    device = torch.device(engine.device)
    torch.manual_seed(0)
    vocab = 1000  # the toy's own vocabulary: every id is one of the model's too
    embed = torch.nn.Embedding(vocab, a.hidden).to(device)
    reads = [[t for t in range(tables) if read_at[t] == l] for l in range(a.layers)]
    layers = [ToyDecoderLayer(a.hidden, engine.embed_dim, len(reads[l])).to(device) for l in range(a.layers)]
    head = torch.nn.Linear(a.hidden, vocab).to(device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)

    rng = np.random.default_rng(rank)
    prompts = [rng.integers(0, vocab, size=int(rng.integers(3, a.prompt_tokens))).tolist() for _ in range(a.requests)]
    width = engine.ngram_size - 1
    history = [[] for _ in prompts]  # each request's tokens before this step
    step_tokens = prompts
    waited = [0.0] * tables  # host seconds each table's reader waited, over the steps
    forwards = 0.0  # host seconds in forward() (without --start)
    with torch.no_grad():
        for _ in range(a.steps):
            flat = np.array([t for s in step_tokens for t in s], dtype=np.int64)
            qsl = np.cumsum([0] + [len(s) for s in step_tokens], dtype=np.int64)
            contexts = [h[-width:] if len(h) >= width else None for h in history]
            sync()
            if a.start:
                engine.start(flat, qsl, contexts)  # returns at once: the fetch runs beside the layers
                ple = {}
            else:
                t0 = time.perf_counter()
                outs = engine.forward(flat, qsl, contexts)
                forwards += time.perf_counter() - t0
                # On a GPU tier from_dlpack shares the engine's memory and orders PyTorch's
                # current stream after the step; the rows stay valid for output_slots (2) steps.
                ple = {t: torch.from_dlpack(out) for t, out in enumerate(outs)}
            hidden = embed(torch.from_numpy(flat).to(device))
            for l, layer in enumerate(layers):
                for t in reads[l]:
                    if t not in ple:  # started: this table alone, its stream order on its own work
                        t0 = time.perf_counter()
                        ple[t] = torch.from_dlpack(engine.wait_table(t))
                        waited[t] += time.perf_counter() - t0
                hidden = layer(hidden, [ple[t] for t in reads[l]])
            if a.start:
                engine.finish()
            logits = head(hidden[torch.from_numpy(qsl[1:] - 1).to(device)])  # each request's last token
            for r, s in enumerate(step_tokens):
                history[r] += s
            step_tokens = [[int(t)] for t in logits.argmax(-1).tolist()]
    report = engine.report()
    if rank == 0:
        where = engine.placement if a.placement else f"{engine.storage} tier"
        print(f"toy decoder: {report['steps']} steps, {report['tokens']} tokens on {report['ranks']} ranks "
              f"({where}, {engine.exchange} exchange), hidden states updated from PLE embeddings")
        per_step = 1e6 / max(1, a.steps)
        waits = ", ".join(f"table {t} at layer {read_at[t]}: {waited[t] * per_step:.0f} us" for t in range(tables))
        how = "started before the layers" if a.start else f"forward before the layers: {forwards * per_step:.0f} us"
        print(f"toy decoder: {how}; each table's wait a step: {waits}; "
              f"tables ready early: {report['tables_ready_early']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
