#!/usr/bin/env python3
"""PyTorch reference points for `pleshard bench lookup` on a GPU: F.embedding of bf16 rows
and an FP8 gather followed by dequantization, on a table of the same shape (rows x 160
values) with uniform random ids, timed with CUDA events (median of repeats after warm-up).
Prints JSON lines like pleshard's: rows/s and GB/s (rows read + rows written).

    python3 jobs/torch_lookup_baseline.py [--rows 1048576] [--dim 160] [--ids 1 64 8192 1048576]
"""
import argparse
import json

import torch
import torch.nn.functional as F


def median_seconds(fn, repeats=50):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        fn()
    times = []
    for _ in range(repeats):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return sorted(times)[len(times) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1 << 20)
    parser.add_argument("--dim", type=int, default=160)
    parser.add_argument("--ids", type=int, nargs="+", default=[1, 64, 8192, 1 << 20])
    args = parser.parse_args()
    device = torch.device("cuda")
    torch.manual_seed(0)
    table = (torch.randn(args.rows, args.dim, device=device) * 0.02).to(torch.bfloat16)
    scale = table.float().abs().max() / 448
    table_fp8 = (table.float() / scale).to(torch.float8_e4m3fn)
    for n in args.ids:
        ids = torch.randint(0, args.rows, (n,), device=device)
        cases = {
            "torch-embedding-bf16": (lambda: F.embedding(ids, table), 2 * args.dim + 2 * args.dim),
            "torch-fp8-gather-dequant": (
                lambda: (F.embedding(ids, table_fp8.view(torch.uint8)).view(torch.float8_e4m3fn)
                         .to(torch.bfloat16) * scale.to(torch.bfloat16)),
                args.dim + 2 * args.dim),
        }
        for name, (fn, bytes_per_row) in cases.items():
            s = median_seconds(fn)
            print(json.dumps({"bench": "lookup", "tier": name, "ids": n, "head_dim": args.dim,
                              "seconds": s, "rows_per_s": n / s, "gb_per_s": n * bytes_per_row / s * 1e-9}))


if __name__ == "__main__":
    main()
