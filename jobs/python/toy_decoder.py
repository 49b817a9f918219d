#!/usr/bin/env python3
"""A toy decoder layer in PyTorch that adds each step's PLE embeddings to its hidden states,
with pleshard's engine serving them, under mpirun (each rank a DP rank with requests of its
own; the ranks share each table's rows, one ETP group):

    mpirun -n 2 python3 jobs/python/toy_decoder.py --checkpoint CKPT [--config C]
        [--storage host|device|pinned] [--steps 8] [--requests 4]

Each request is prefilled in one step, then decoded a token per step (its next token
picked by the toy model); every step hands the embeddings over without a copy
(torch.from_dlpack), on a GPU ordered after the engine's step on PyTorch's current stream.
Without PyTorch it says so and exits 0."""
import argparse
import sys

try:
    import torch
except ImportError:
    print("toy decoder: PyTorch is not installed (pip install torch): nothing to run")
    sys.exit(0)
import numpy as np
from mpi4py import MPI

import pleshard


class ToyDecoderLayer(torch.nn.Module):
    """Hidden states plus a projection of every table's PLE embeddings, then an MLP."""

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
    p.add_argument("--storage", default="host")
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--requests", type=int, default=4)
    p.add_argument("--hidden", type=int, default=64)
    a = p.parse_args()

    world = MPI.COMM_WORLD
    rank = world.Get_rank()
    engine = pleshard.Engine(checkpoint=a.checkpoint, config=a.config, storage=a.storage, comm=world,
                             etp=world.Get_size())
    device = torch.device(engine.device)
    torch.manual_seed(0)
    vocab = 1000  # the toy's own vocabulary: every id is one of the model's too
    embed = torch.nn.Embedding(vocab, a.hidden).to(device)
    layer = ToyDecoderLayer(a.hidden, engine.embed_dim, engine.num_tables).to(device)
    head = torch.nn.Linear(a.hidden, vocab).to(device)

    rng = np.random.default_rng(rank)
    prompts = [rng.integers(0, vocab, size=int(rng.integers(3, 12))).tolist() for _ in range(a.requests)]
    width = engine.ngram_size - 1
    history = [[] for _ in prompts]  # each request's tokens before this step
    step_tokens = prompts
    tokens_seen = 0
    with torch.no_grad():
        for _ in range(a.steps):
            flat = np.array([t for s in step_tokens for t in s], dtype=np.int64)
            qsl = np.cumsum([0] + [len(s) for s in step_tokens], dtype=np.int64)
            contexts = [h[-width:] if len(h) >= width else None for h in history]
            # On a GPU tier from_dlpack shares the engine's memory and orders PyTorch's current
            # stream after the step; the rows stay valid for output_slots (2) steps.
            ple = [torch.from_dlpack(out) for out in engine.forward(flat, qsl, contexts)]
            hidden = layer(embed(torch.from_numpy(flat).to(device)), ple)
            logits = head(hidden[torch.from_numpy(qsl[1:] - 1).to(device)])  # each request's last token
            for r, s in enumerate(step_tokens):
                history[r] += s
            step_tokens = [[int(t)] for t in logits.argmax(-1).tolist()]
            tokens_seen += len(flat)
    report = engine.report()
    if rank == 0:
        print(f"toy decoder: {report['steps']} steps, {report['tokens']} tokens on {report['ranks']} ranks "
              f"({engine.storage} tier, {engine.exchange} exchange), hidden states updated from PLE embeddings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
