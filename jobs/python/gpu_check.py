#!/usr/bin/env python3
"""The module on a GPU, self-checking (one GPU, PyTorch with CUDA):

1. zero copy: torch.from_dlpack(out).data_ptr() is the engine's own pointer (out.data_ptr),
   on the device and pinned tiers, eager and from CUDA graphs;
2. stream ordering: for --steps steps of changing sizes, a consumer on a stream of its own
   (made slow by a matmul before each read) copies every table's rows; no host wait between
   steps, output_slots=2; afterwards every copy is compared with the host tier's rows of the
   same batch (bit for bit);
   and tensors taken from the last step read the same rows after the engine is closed;
3. overhead: forward() from Python at B=64 (device tier, CUDA graphs) against
   `pleshard bench step` of the same size and model, measured in this run; the target is
   at most --target-us (10) more per step.

    python3 jobs/python/gpu_check.py --pleshard build-h200/bin/pleshard [--config jobs/example/config.json]
        [--steps 1000] [--out DIR]   (results: DIR/python-gpu.json, DIR/python-gpu.txt)
Exits 1 when a check fails, 2 when there is nothing to check on (no PyTorch, no GPU)."""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np


def log(lines, text):
    print(text, flush=True)
    lines.append(text)


def batch_of(rng, tokens, vocab, width):
    """`tokens` tokens in 1..8 requests; some requests with a context."""
    requests = int(rng.integers(1, min(8, tokens) + 1))
    cuts = np.sort(rng.choice(np.arange(1, tokens), size=requests - 1, replace=False)) if requests > 1 else []
    qsl = np.concatenate([[0], cuts, [tokens]]).astype(np.int64)
    flat = rng.integers(0, vocab, size=tokens).astype(np.int64)
    contexts = [rng.integers(0, vocab, size=width).tolist() if rng.random() < 0.5 else None for _ in range(requests)]
    return flat, qsl, contexts


def bench_step_us(app, config, tokens):
    """Per-step wall time of `pleshard bench step` on the device tier from CUDA graphs."""
    command = [app, "bench", "step", "--storage", "device", "--modes", "graph", "--tokens", str(tokens),
               "--config", config, "--min-seconds", "1"]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            if row["wrong"] != 0:
                raise SystemExit(f"bench step: {row['wrong']} wrong rows")
            return 1e6 * row["tokens"] / row["tokens_per_s"], row["p50_us"], out
    raise SystemExit("bench step printed no JSON line:\n" + out)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pleshard", required=True, help="the pleshard executable of the same build")
    p.add_argument("--config", default="jobs/example/config.json")
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--tokens", type=int, default=64, help="B of the overhead measurement")
    p.add_argument("--target-us", type=float, default=10.0)
    p.add_argument("--out", default=os.environ.get("OUT", "out"))
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    try:
        import torch
    except ImportError:
        print("gpu_check: PyTorch is not installed: nothing checked")
        return 2
    if not torch.cuda.is_available():
        print("gpu_check: no CUDA device visible to PyTorch: nothing checked")
        return 2
    import pleshard

    lines, results, failed = [], {"pleshard_version": pleshard.__version__, "gpu": torch.cuda.get_device_name()}, []
    with open(a.config) as f:
        config = json.load(f)
    vocab, width = config["vocab_size"], config.get("ngram_size", 3) - 1
    common = dict(checkpoint="synthetic", config=a.config, step_tokens=256, out_dtype="bfloat16")
    host = pleshard.Engine(storage="host", output_slots=1, **common)
    rng = np.random.default_rng(1)

    # 1 and 2: zero copy and stream ordering, per tier and mode.
    for storage, graph in (("device", False), ("device", True), ("pinned", False), ("pinned", True)):
        name = f"{storage}{' graph' if graph else ''}"
        engine = pleshard.Engine(storage=storage, cuda_graph=graph, output_slots=2, **common)
        consumer = torch.cuda.Stream()
        slow = torch.randn(2048, 2048, device="cuda")
        batches, copies, shared = [], [], 0
        t0 = time.perf_counter()
        for step in range(a.steps):
            batch = batch_of(rng, int(rng.integers(1, 257)), vocab, width)
            outs = engine.forward(*batch)
            with torch.cuda.stream(consumer):
                for _ in range(2):
                    slow = slow @ slow / 2048  # keeps the consumer behind the engine
                views = [torch.from_dlpack(o) for o in outs]  # waits for the step on `consumer`
                shared += sum(v.data_ptr() == o.data_ptr for v, o in zip(views, outs))
                copies.append([v.clone() for v in views])
            batches.append(batch)
        torch.cuda.synchronize()
        seconds = time.perf_counter() - t0
        zero_copy = shared == a.steps * engine.num_tables
        wrong = 0
        for batch, got in zip(batches, copies):
            want = [torch.from_numpy(o.bits().view(np.int16).copy()) for o in host.forward(*batch)]
            wrong += sum(int((g.cpu().view(torch.int16) != w).sum()) for g, w in zip(got, want))
        results[name] = {"steps": a.steps, "zero_copy": zero_copy, "wrong": wrong, "seconds": seconds,
                         "report": engine.report()}
        ok = zero_copy and wrong == 0
        log(lines, f"{name:13s} {a.steps} steps of 1..256 tokens: data_ptr shared {shared}/{a.steps * engine.num_tables}, "
                   f"{wrong} wrong values read on another stream: {'ok' if ok else 'FAILED'}")
        if not ok:
            failed.append(name)
        # Tensors taken from the last step keep its memory: read after close() they hold its rows.
        kept = [torch.from_dlpack(o) for o in outs]
        want = [v.clone() for v in kept]
        torch.cuda.synchronize()
        engine.close()
        after = all(torch.equal(k.view(torch.int16), w.view(torch.int16)) for k, w in zip(kept, want))
        del kept
        torch.cuda.synchronize()
        log(lines, f"{name:13s} tensors read after close(): {'ok' if after else 'FAILED'}")
        if not after:
            failed.append(name + " after close")

    # 3: the overhead of forward() from Python at B, against bench step in this run.
    bench_us, bench_p50, bench_text = bench_step_us(a.pleshard, a.config, a.tokens)
    engine = pleshard.Engine(storage="device", cuda_graph=True, **common)
    batches = [batch_of(rng, a.tokens, vocab, width) for _ in range(64)]
    for k in range(len(batches)):
        engine.forward(*batches[k])
    engine.wait()
    timed = {}
    for mode in ("forward", "forward+from_dlpack"):
        steps = max(2000, a.steps)
        t0 = time.perf_counter()
        for k in range(steps):
            outs = engine.forward(*batches[k % len(batches)])
            if mode != "forward":
                views = [torch.from_dlpack(o) for o in outs]
        engine.wait()
        timed[mode] = 1e6 * (time.perf_counter() - t0) / steps
    overhead = timed["forward"] - bench_us
    results["overhead"] = {"tokens": a.tokens, "bench_step_us": bench_us, "bench_step_p50_us": bench_p50,
                           "python_us": timed, "overhead_us": overhead, "target_us": a.target_us}
    ok = overhead <= a.target_us
    log(lines, f"B={a.tokens} device graph: bench step {bench_us:.2f} us/step (p50 on the stream {bench_p50:.2f}), "
               f"forward() from Python {timed['forward']:.2f} us, with from_dlpack "
               f"{timed['forward+from_dlpack']:.2f} us: {overhead:+.2f} us (target <= {a.target_us}): "
               f"{'ok' if ok else 'FAILED'}")
    if not ok:
        failed.append("overhead")
    results["failed"] = failed
    with open(os.path.join(a.out, "python-gpu.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(a.out, "python-gpu.txt"), "w") as f:
        f.write("\n".join(lines) + "\n\n" + bench_text)
    log(lines, "gpu_check: " + ("every check passed" if not failed else "FAILED: " + ", ".join(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
