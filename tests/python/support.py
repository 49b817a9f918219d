"""What the Python module's tests share: batches of requests, `pleshard embed`'s output of the
same batch read back as its stored bits, and checks that fail with one line."""
import ast
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


APP = os.environ.get("PLESHARD_APP", "pleshard")
ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
DTYPES = ("float32", "bfloat16", "float16")


def requests(seed, count, vocab, context_width, max_tokens=9, fresh_share=0.5, extra=()):
    """`count` requests of 0..max_tokens tokens below `vocab`; some with a context of
    `context_width` tokens (None: a fresh request). `extra` tokens are mixed in (EOS, dead ids)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        tokens = [int(t) for t in rng.integers(0, vocab, size=int(rng.integers(0, max_tokens + 1)))]
        if extra and tokens:
            tokens[int(rng.integers(0, len(tokens)))] = int(rng.choice(extra))
        context = None if rng.random() < fresh_share else [int(t) for t in rng.integers(0, vocab, size=context_width)]
        out.append((tokens, context))
    return out


def flat(batch, dtype=np.int64):
    """vLLM's layout: flat tokens, query_start_loc and the contexts list."""
    tokens = np.array([t for request, _ in batch for t in request], dtype=dtype)
    qsl = np.cumsum([0] + [len(request) for request, _ in batch]).astype(dtype)
    return tokens, qsl, [context for _, context in batch]


def embed_bits(checkpoint, batch, out_dtype, config=None):
    """`pleshard embed` of `batch`: per table its rows as stored (unsigned words)."""
    with tempfile.TemporaryDirectory() as work:
        batch_file = os.path.join(work, "batch.json")
        with open(batch_file, "w") as f:
            json.dump({"requests": [{"tokens": t} if c is None else {"tokens": t, "context": c} for t, c in batch]}, f)
        out = os.path.join(work, "out.h5")
        command = [APP, "embed", "--checkpoint", checkpoint, "--batch", batch_file, "--out", out,
                   "--out-dtype", out_dtype] + (["--config", config] if config else [])
        subprocess.run(command, check=True, env={**os.environ, **ROOT_ENV}, stdout=subprocess.DEVNULL)
        import h5py
        tables = []
        with h5py.File(out, "r") as f:
            d = 0
            while f"ple_{d}" in f:
                dset = f[f"ple_{d}"]
                words = np.empty(dset.shape, dtype=np.uint32 if out_dtype == "float32" else np.uint16)
                if words.size:
                    dset.id.read(h5py.h5s.ALL, h5py.h5s.ALL, words, mtype=dset.id.get_type())
                tables.append(words)
                d += 1
        return tables


def pybind11_signature(name, doc):
    """The signature pybind11 writes on the first line of a function's doc ("name(a: int = 1) -> str",
    or "(arg0: X) -> int" for a property), as the ast of a def."""
    line = doc.splitlines()[0]
    line = line[len(name):] if line.startswith(name + "(") else line
    return ast.parse(f"def f{line}: ...").body[0]


def expect_error(kind, fragment, call, *args, **kwargs):
    """`call` raises `kind` with `fragment` in its message."""
    try:
        call(*args, **kwargs)
    except kind as e:
        if fragment not in str(e):
            fail(f"{kind.__name__} without {fragment!r}: {e}")
        return str(e)
    fail(f"no {kind.__name__} ({fragment!r})")


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)
