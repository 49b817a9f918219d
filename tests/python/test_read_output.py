"""pleshard.read_output gives h5py's values bit for bit: every output dtype (pleshard embed's
outputs), a run's output with its request ids, row slices, PyTorch tensors where PyTorch is
installed (bfloat16 kept as torch.bfloat16), a dataset stored in chunks (read through HDF5);
and refuses what it cannot read with a ValueError naming it.
    test_read_output.py CHECKPOINT CONFIG"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import h5py
import numpy as np

import pleshard
from support import APP, DTYPES, ROOT_ENV, check, expect_error, requests

checkpoint, config_path = sys.argv[1], sys.argv[2]
with open(config_path) as f:
    vocab = json.load(f)["vocab_size"]
try:
    import torch
except ImportError:
    torch = None
    print("read_output: PyTorch is not installed: its tensors are not tried")
WORDS = {"float32": np.uint32, "float16": np.uint16, "bfloat16": np.uint16}


def h5py_bits(dataset, dtype, rows=slice(None)):
    """h5py's own read of `rows` (HDF5 converts bfloat16 to float32), as the words of the output dtype."""
    values = dataset[rows]
    if dtype == "bfloat16":
        check(values.dtype == np.float32, f"h5py read bfloat16 as {values.dtype}")
        words = values.view(np.uint32)
        check(not (words & 0xFFFF).any(), "h5py's float32 of a bfloat16 output has low bits")
        return (words >> 16).astype(np.uint16)
    return values.view(WORDS[dtype])


def bits_of(rows, dtype):
    """read_output's rows (a NumPy array or a torch.Tensor) as the words of the output dtype."""
    if torch is not None and isinstance(rows, torch.Tensor):
        wanted = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[dtype]
        check(rows.dtype == wanted, f"torch=True gave {rows.dtype} for {dtype}")
        rows = rows.view(torch.int32 if dtype == "float32" else torch.int16).numpy()
    else:
        check(rows.dtype == {"float32": np.float32, "float16": np.float16, "bfloat16": np.uint16}[dtype],
              f"read_output gave {rows.dtype} for {dtype}")
    return rows.view(WORDS[dtype])


def compare(path, request_ids):
    """Every table of `path`, whole and in slices, NumPy and PyTorch, against h5py's read."""
    compared = 0
    with h5py.File(path, "r") as f:
        tables = sum(1 for name in f if name.startswith("ple_"))
        qsl = f["query_start_loc"][...]
        for d in range(tables):
            dataset = f[f"ple_{d}"]
            dtype = dataset.attrs["dtype"].decode()
            tokens = dataset.shape[0]
            for rows in (None, slice(3, 11), slice(-5, None), slice(tokens, None), slice(2, 2)):
                for as_torch in (False, True) if torch is not None else (False,):
                    got = pleshard.read_output(path, d, rows, torch=as_torch)
                    want = h5py_bits(dataset, dtype, rows if rows is not None else slice(None))
                    what = f"{path} table {d} rows {rows} torch={as_torch}"
                    check(got.dtype == dtype and got.table == d, f"{what}: {got}")
                    check(got.first == (rows or slice(None)).indices(tokens)[0], f"{what}: first {got.first}")
                    bits = bits_of(got.rows, dtype)
                    check(bits.shape == want.shape and np.array_equal(bits, want), f"{what}: other values than h5py's")
                    check(np.array_equal(got.query_start_loc, qsl) and got.query_start_loc.dtype == np.int64,
                          f"{what}: query_start_loc {got.query_start_loc}")
                    check(got.request_ids == request_ids, f"{what}: request ids {got.request_ids}")
                    compared += 1
    return compared


with tempfile.TemporaryDirectory() as work:
    batch = requests(5, 7, vocab, 2, max_tokens=12)
    batch_file = os.path.join(work, "batch.json")
    with open(batch_file, "w") as f:
        json.dump({"requests": [{"tokens": t} if c is None else {"tokens": t, "context": c} for t, c in batch]}, f)
    compared = 0
    for dtype in DTYPES:
        out = os.path.join(work, f"embed_{dtype}.h5")
        subprocess.run([APP, "embed", "--checkpoint", checkpoint, "--config", config_path, "--batch", batch_file,
                        "--out", out, "--out-dtype", dtype], check=True, env={**os.environ, **ROOT_ENV},
                       stdout=subprocess.DEVNULL)
        compared += compare(out, None)
    # A run's output, with its requests' ids.
    jsonl = os.path.join(work, "requests.jsonl")
    with open(jsonl, "w") as f:
        for i, (tokens, _) in enumerate(batch):
            f.write(json.dumps({"id": f"request-{i}", "tokens": tokens or [1]}) + "\n")
    run_out = os.path.join(work, "run.h5")
    subprocess.run([APP, "run", "--checkpoint", checkpoint, "--config", config_path, "--requests", jsonl,
                    "--out", run_out, "--quiet"], check=True, env={**os.environ, **ROOT_ENV}, stdout=subprocess.DEVNULL)
    compared += compare(run_out, [f"request-{i}" for i in range(len(batch))])
    # Paths as os.PathLike and bytes.
    for path in (pathlib.Path(run_out), os.fsencode(run_out)):
        check(pleshard.read_output(path, 1).rows.shape[0] > 0, f"read_output({path!r}) read nothing")
    # The same output rewritten with its rows in chunks: no offset to read at, read through HDF5.
    chunked = os.path.join(work, "chunked.h5")
    with h5py.File(run_out, "r") as src, h5py.File(chunked, "w") as dst:
        for name in src:
            if name.startswith("ple_"):
                rows, stored = src[name], src[name].id.get_type()  # the 16-bit types as pleshard wrote them
                words = np.empty(rows.shape, WORDS[rows.attrs["dtype"].decode()])
                rows.id.read(h5py.h5s.ALL, h5py.h5s.ALL, words, mtype=stored)
                dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
                dcpl.set_chunk((4, rows.shape[1]))
                made = h5py.h5d.create(dst.id, name.encode(), stored, h5py.h5s.create_simple(rows.shape), dcpl)
                made.write(h5py.h5s.ALL, h5py.h5s.ALL, words, mtype=stored)
                for key, value in rows.attrs.items():
                    dst[name].attrs[key] = value
            else:
                src.copy(name, dst)
        check(dst["ple_0"].id.get_offset() is None, "the chunked copy still has an offset")
    compared += compare(chunked, [f"request-{i}" for i in range(len(batch))])
    print(f"read_output: {compared} reads equal to h5py's (every dtype, slices, "
          f"{'NumPy and PyTorch' if torch is not None else 'NumPy'}, contiguous and chunked)")

    # Refusals, each a ValueError naming what is wrong.
    not_output = os.path.join(work, "not_output.h5")
    with h5py.File(not_output, "w") as f:
        f["x"] = np.arange(3)
    for fragment, args, kwargs in [
        (f"{run_out}: no table 2; the output holds 2 (0 to 1)", (run_out, 2), {}),
        (f"{run_out}: no table -1", (run_out, -1), {}),
        ("rows: a slice of step 2; read_output takes step 1", (run_out, 0, slice(0, 4, 2)), {}),
        (f"{work}/missing.h5: embedding output not found", (f"{work}/missing.h5",), {}),
        (f"{not_output}: not an embedding output: no /query_start_loc", (not_output,), {}),
        (f"{jsonl}: not an embedding output: not an HDF5 file", (jsonl,), {}),
        ("path: empty path", ("",), {}),
    ]:
        expect_error(ValueError, fragment, pleshard.read_output, *args, **kwargs)
    print("read_output: wrong tables, slices and files refused with ValueError")
