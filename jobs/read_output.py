#!/usr/bin/env python3
"""Times the ways of reading a `pleshard run` or `embed` output's embeddings into memory
(docs/output.md): h5py's own read (HDF5 converts each bf16 value to float32), the raw 16-bit
words through h5py (the dataset's own type as the memory type: no conversion), the raw
words straight from the file at the dataset's offset (NumPy), those widened to float32
values, and, where PyTorch is installed, the words viewed as torch.bfloat16; and, where the
module pleshard is importable (PYTHONPATH=build/python), pleshard.read_output, as NumPy words and
as a torch.bfloat16 tensor. Checks that every way gives the same values and prints MB/s of the
file's bytes for each (best of --repeats, page cache warm).

    PYTHONPATH=build/python /usr/bin/python3 jobs/read_output.py OUT.h5 [--layer D] [--repeats 3]
"""
import argparse
import sys
import time

import h5py
import numpy as np

try:
    import torch
except ImportError:
    torch = None
try:
    import pleshard
except ImportError:
    pleshard = None


def best_seconds(read, repeats):
    best, value = None, None
    for _ in range(repeats):
        start = time.perf_counter()
        value = read()
        seconds = time.perf_counter() - start
        best = seconds if best is None else min(best, seconds)
    return best, value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output")
    parser.add_argument("--layer", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    a = parser.parse_args()
    with h5py.File(a.output, "r") as f:
        d = f[f"ple_{a.layer}"]
        dtype = d.attrs["dtype"].decode()
        if dtype != "bfloat16":
            sys.exit(f"read_output: /ple_{a.layer} is {dtype}; this compares the ways of reading bfloat16")
        shape, offset, megabytes = d.shape, d.id.get_offset(), d.size * 2 / 1e6

        def h5py_converted():  # what d[...] gives: float32 values, converted by HDF5
            return d[...]

        def h5py_raw():  # the 16-bit words as stored: the file's type as the memory type
            words = np.empty(shape, dtype=np.uint16)
            d.id.read(h5py.h5s.ALL, h5py.h5s.ALL, words, mtype=d.id.get_type())
            return words

        def file_raw():  # the same words from the file at the dataset's offset (contiguous)
            return np.fromfile(a.output, dtype=np.uint16, count=d.size, offset=offset).reshape(shape)

        def as_float32(words):  # bf16 is the top half of a float32
            return (words.astype(np.uint32) << 16).view(np.float32)

        ways = [("h5py d[...] (HDF5 converts to float32)", h5py_converted, lambda v: v),
                ("h5py d.id.read, raw uint16 words", h5py_raw, as_float32),
                ("numpy.fromfile at d.id.get_offset()", file_raw, as_float32),
                ("numpy.fromfile, widened to float32", lambda: as_float32(file_raw()), lambda v: v)]
        if torch is not None:
            ways.append(("numpy.fromfile, viewed as torch.bfloat16",
                         lambda: torch.from_numpy(file_raw().view(np.int16)).view(torch.bfloat16),
                         lambda t: t.float().numpy()))
        if pleshard is not None:
            ways.append(("pleshard.read_output, uint16 words", lambda: pleshard.read_output(a.output, a.layer).rows,
                         as_float32))
            if torch is not None:
                ways.append(("pleshard.read_output(torch=True), bfloat16",
                             lambda: pleshard.read_output(a.output, a.layer, torch=True).rows,
                             lambda t: t.float().numpy()))
        print(f"{a.output} /ple_{a.layer}: {shape[0]} x {shape[1]} bfloat16, {megabytes:.1f} MB"
              + ("" if torch is not None else " (no PyTorch here: its view is not timed)")
              + ("" if pleshard is not None else " (no module pleshard on PYTHONPATH: read_output is not timed)"))
        reference = None
        for name, read, values in ways:
            seconds, got = best_seconds(read, a.repeats)
            got = values(got)
            if reference is None:
                reference = got
            elif not np.array_equal(got, reference):
                sys.exit(f"read_output: {name} gives other values than h5py's read")
            print(f"  {name:44s} {seconds:8.3f} s  {megabytes / seconds:9.0f} MB/s")


if __name__ == "__main__":
    main()
