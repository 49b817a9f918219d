"""What the plain PyTorch flows of jobs/ (torch_seed_flow.py for Qwen4Exp PLE,
torch_engram_flow.py for DeepSeek-V4.1 Engram) share: `pleshard run`'s schedule of a
corpus, a safetensors reader that needs only NumPy, the check of a batch against
`pleshard ids` and `pleshard embed`, and the timed loop."""
import glob
import json
import os
import struct
import subprocess
import tempfile
import time

import numpy as np
import torch


def read_requests(path):
    """Each line's "tokens" of a JSONL corpus."""
    with open(path) as f:
        return [json.loads(line)["tokens"] for line in f if line.strip()]


def split_parts(requests, part_tokens):
    """Consecutive request ranges [first, last) of about part_tokens tokens (--part-tokens)."""
    parts, first, tokens = [], 0, 0
    for r, req in enumerate(requests):
        tokens += len(req)
        if tokens >= part_tokens:
            parts.append((first, r + 1))
            first, tokens = r + 1, 0
    if first < len(requests):
        parts.append((first, len(requests)))
    return parts


def steps(requests, width, fresh, step_tokens, part_tokens):
    """pleshard run's schedule with one DP rank and no decode tail: per step, (ext, positions,
    slices), ext holding each scheduled request's context of `width` tokens then its step
    tokens, positions where each step token sits in ext, and slices (request, first token,
    tokens) in step order. A request's first context is `width` times `fresh`; later ones are
    the last `width` tokens it has seen, so chunks hash as the whole request does."""
    for first, last in split_parts(requests, part_tokens):
        position = {r: 0 for r in range(first, last)}
        context = {r: [fresh] * width for r in range(first, last)}
        open_ = first
        while open_ < last:
            while open_ < last and position[open_] == len(requests[open_]):
                open_ += 1
            budget, ext, positions, slices = step_tokens, [], [], []
            for r in range(open_, last):
                if budget == 0:
                    break
                left = len(requests[r]) - position[r]
                if left == 0:
                    continue
                take = min(left, budget)
                chunk = requests[r][position[r]:position[r] + take]
                start = len(ext) + width
                ext += context[r] + chunk
                positions += range(start, start + take)
                slices.append((r, position[r], take))
                seq = context[r] + chunk
                context[r] = seq[len(seq) - width:]
                position[r] += take
                budget -= take
            if positions:
                yield ext, positions, slices


# safetensors dtypes as NumPy reads their bytes. Float8 and BF16 come as raw integers (NumPy
# has no such types): callers view them as what they are.
_ST_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": np.int16, "I64": np.int64,
              "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_,
              "F8_E4M3": np.uint8, "F8_E5M2": np.uint8, "F8_E8M0": np.uint8}


class Safetensors:
    """The tensors of a checkpoint directory (its model.safetensors.index.json's files, else
    every *.safetensors in it) or of one .safetensors file, read through NumPy memory maps:
    an 8-byte little-endian header length, the JSON header, then the raw bytes."""

    def __init__(self, checkpoint):
        if os.path.isfile(checkpoint):
            files = [checkpoint]
        else:
            index = os.path.join(checkpoint, "model.safetensors.index.json")
            if os.path.exists(index):
                with open(index) as f:
                    files = sorted({os.path.join(checkpoint, v) for v in json.load(f)["weight_map"].values()})
            else:
                files = sorted(glob.glob(os.path.join(checkpoint, "*.safetensors")))
        if not files:
            raise SystemExit(f"{checkpoint}: no .safetensors files")
        self.entries = {}
        for path in files:
            with open(path, "rb") as f:
                (length,) = struct.unpack("<Q", f.read(8))
                header = json.loads(f.read(length))
            for name, t in header.items():
                if name == "__metadata__":
                    continue
                if name in self.entries:
                    raise SystemExit(f"{path}: tensor {name} also in {self.entries[name][0]}")
                if t["dtype"] not in _ST_DTYPES:
                    raise SystemExit(f"{path}: tensor {name} has dtype {t['dtype']}, which this reader does not know")
                self.entries[name] = (path, t["dtype"], t["shape"], 8 + length + t["data_offsets"][0],
                                      t["data_offsets"][1] - t["data_offsets"][0])

    def names(self):
        return list(self.entries)

    def dtype(self, name):
        return self.entries[name][1]

    def tensor(self, name):
        """A CPU tensor over the file's bytes (copy-on-write map; nothing is read yet). BF16 is
        returned as torch.bfloat16, float8 types as their uint8 codes."""
        path, dtype, shape, offset, size = self.entries[name]
        if size == 0:
            array = np.zeros(shape, dtype=_ST_DTYPES[dtype])
        else:
            array = np.memmap(path, dtype=np.uint8, mode="c", offset=offset, shape=(size,))
            array = array.view(_ST_DTYPES[dtype]).reshape(shape)
        t = torch.from_numpy(array)
        return t.view(torch.bfloat16) if dtype == "BF16" else t


def bf16_bits(tensor):
    """The bit patterns of a bfloat16 tensor, as NumPy uint16 (flattened)."""
    return tensor.contiguous().view(torch.int16).cpu().numpy().view(np.uint16).reshape(-1)


def check_against_pleshard(pleshard, config, checkpoint, tables, batch, torch_ids, torch_embed, extra=()):
    """Checks a batch ({"requests": [...]}, as `pleshard ids` takes it): table d's ids
    (torch_ids[d], [tokens, heads]) against `pleshard ids --ple-index d`, then every bit of
    torch_embed(d) (bf16, [tokens, dim]) against `pleshard embed` (bf16 datasets /ple_{d},
    read raw from their contiguous bytes). `extra` goes to both commands. Returns "ok" or
    exits naming the table."""
    import h5py

    with tempfile.TemporaryDirectory() as work:
        batch_path, out_path = os.path.join(work, "batch.json"), os.path.join(work, "embed.h5")
        with open(batch_path, "w") as f:
            json.dump(batch, f)
        for d in range(tables):
            want = json.loads(subprocess.check_output([pleshard, "ids", "--config", config, "--ple-index", str(d),
                                                       "--batch", batch_path, *extra]))["ids"]
            got = torch_ids[d].cpu().tolist()
            if got != want:
                bad = next(t for t in range(min(len(got), len(want))) if got[t] != want[t]) if len(got) == len(want) \
                    else f"counts {len(got)} != {len(want)}"
                raise SystemExit(f"torch hashing differs from pleshard ids (table {d}, first differing token {bad})")
        subprocess.check_call([pleshard, "embed", "--checkpoint", checkpoint, "--config", config, "--batch",
                               batch_path, "--out", out_path, "--out-dtype", "bfloat16", *extra])
        with h5py.File(out_path, "r") as f:
            for d in range(tables):
                dataset = f[f"ple_{d}"]
                want = np.fromfile(out_path, dtype=np.uint16, count=dataset.size, offset=dataset.id.get_offset())
                got = bf16_bits(torch_embed(d))
                if got.shape != want.shape:
                    raise SystemExit(f"torch embeddings differ from pleshard embed (table {d}: {got.shape} values, "
                                     f"pleshard {want.shape})")
                if not np.array_equal(got, want):
                    raise SystemExit(f"torch embeddings differ from pleshard embed (table {d}: "
                                     f"{int((got != want).sum())} of {got.size} values)")
    return "ok"


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def device_name(device):
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"


def timed_flow(schedule, step, device):
    """Runs step(ext, positions) (tensors on `device`) over a list of steps(); returns (tokens,
    seconds). The last step's embeddings are kept until the end, so the work is not skipped."""
    synchronize(device)
    t0 = time.perf_counter()
    tokens, kept = 0, None
    for ext, positions, _ in schedule:
        kept = step(torch.tensor(ext, device=device), torch.tensor(positions, device=device))
        tokens += len(positions)
    synchronize(device)
    seconds = time.perf_counter() - t0
    del kept
    return tokens, seconds
