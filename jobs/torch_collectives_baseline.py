#!/usr/bin/env python3
"""PyTorch/NCCL reference points for `pleshard bench exchange` on several GPUs of one host:
all_gather, all_reduce and reduce_scatter at the byte sizes of the exchange's steps, one
process per GPU, timed with CUDA events (median of repeats after warm-up, max over ranks),
plus the GPU-to-GPU copy bandwidth (GPU 0 to GPU 1) as the link's ceiling. Prints JSON lines
like pleshard's, busbw per nccl-tests.

    python3 -m torch.distributed.run --nproc_per_node N jobs/torch_collectives_baseline.py [--tokens 1 64 1024 8192 65536]
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist


def median_seconds(fn, repeats=30):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        fn()
    times = []
    for _ in range(repeats):
        dist.barrier()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    seconds = torch.tensor(sorted(times)[len(times) // 2], device="cuda")
    dist.all_reduce(seconds, op=dist.ReduceOp.MAX)
    return seconds.item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, nargs="+", default=[1, 64, 1024, 8192, 65536])
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--ple-embed-dim", type=int, default=2560)
    args = parser.parse_args()
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    n, me = dist.get_world_size(), dist.get_rank()
    for tokens in args.tokens:
        ids = torch.full((tokens * args.heads,), me, dtype=torch.int64, device="cuda")
        gathered = torch.empty(n * ids.numel(), dtype=torch.int64, device="cuda")
        values = (tokens * args.ple_embed_dim + n - 1) // n * n
        data = torch.zeros(values, dtype=torch.bfloat16, device="cuda")  # 16-bit, like the rows
        part = torch.empty(values // n, dtype=torch.bfloat16, device="cuda")
        cases = [("all_gather", gathered.numel() * 8, (n - 1) / n,
                  lambda: dist.all_gather_into_tensor(gathered, ids)),
                 ("all_reduce", values * 2, 2 * (n - 1) / n, lambda: dist.all_reduce(data)),
                 ("reduce_scatter", values * 2, (n - 1) / n, lambda: dist.reduce_scatter_tensor(part, data))]
        for name, size, factor, fn in cases:
            seconds = median_seconds(fn)
            if me == 0:
                print(json.dumps({"bench": "torch_exchange", "collective": name, "backend": "torch-nccl",
                                  "ranks": n, "tokens": tokens, "bytes": size, "seconds": seconds,
                                  "algbw": size / seconds, "busbw": size / seconds * factor}), flush=True)
    dist.destroy_process_group()
    if me == 0 and torch.cuda.device_count() > 1:
        src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda:0")
        dst = torch.empty(1 << 30, dtype=torch.uint8, device="cuda:1")
        dst.copy_(src)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(10):
            dst.copy_(src)
        torch.cuda.synchronize()
        seconds = (time.perf_counter() - t0) / 10
        print(json.dumps({"bench": "torch_peer_copy", "bytes": src.numel(), "seconds": seconds,
                          "gb_per_s": src.numel() / seconds * 1e-9}), flush=True)

if __name__ == "__main__":
    main()
