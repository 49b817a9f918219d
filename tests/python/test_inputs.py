"""Every kind of input the module takes gives the same embeddings (NumPy int32 and int64,
buffer-protocol objects, lists, DLPack capsules and __dlpack__ objects, PyTorch where it is
installed), and every wrong input is refused with a ValueError naming it; the Engine's
keywords are `pleshard run`'s options, refused as run refuses them.
    test_inputs.py CHECKPOINT CONFIG"""
import array
import ast
import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np

import pleshard
from support import APP, ROOT_ENV, check, expect_error, flat, pybind11_signature, requests

checkpoint, config_path = sys.argv[1], sys.argv[2]
with open(config_path) as f:
    vocab = json.load(f)["vocab_size"]
engine = pleshard.Engine(checkpoint=checkpoint, config=config_path, out_dtype="float32", output_slots=4)
batch = requests(3, 5, vocab, 2, fresh_share=1.0)
tokens, qsl, _ = flat(batch)
reference = [o.numpy().copy() for o in engine.forward(tokens, qsl)]


class DLPackOnly:
    """An array that offers DLPack and nothing else (as a PyTorch or CuPy tensor does)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


class WrongDLPack:
    """An array whose DLPack methods return what no DLPack array returns."""

    def __init__(self, capsule, device):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, stream=None):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


kinds = {
    "numpy int64": (tokens, qsl),
    "numpy int32": (tokens.astype(np.int32), qsl.astype(np.int32)),
    "array.array": (array.array("q", tokens.tolist()), array.array("i", qsl.tolist())),
    "memoryview": (memoryview(tokens), memoryview(qsl.astype(np.int32))),
    "list": (tokens.tolist(), tuple(qsl.tolist())),
    "DLPack capsule": (tokens.__dlpack__(), qsl.astype(np.int32).__dlpack__()),
    "__dlpack__ object": (DLPackOnly(tokens), DLPackOnly(qsl)),
    "list of NumPy ints": ([np.int64(t) for t in tokens], [np.int32(q) for q in qsl]),
}
try:
    import torch

    kinds["torch int64"] = (torch.from_numpy(tokens), torch.from_numpy(qsl))
    kinds["torch int32"] = (torch.from_numpy(tokens).int(), torch.from_numpy(qsl).int())
    if torch.cuda.is_available():
        kinds["torch cuda"] = (torch.from_numpy(tokens).cuda(), torch.from_numpy(qsl).cuda())
except ImportError:
    print("torch is not installed: its tensors are not tried")
for name, (t, q) in kinds.items():
    outs = engine.forward(t, q)
    check(all(np.array_equal(o.numpy(), r) for o, r in zip(outs, reference)), f"{name}: other embeddings")
print(f"inputs: {', '.join(kinds)} give the same embeddings")

refusals = [
    ("tokens: dtype float64", tokens.astype(np.float64), qsl, None),
    ("tokens: dtype int16", tokens.astype(np.int16), qsl, None),
    ("tokens: dtype uint64", tokens.astype(np.uint64), qsl, None),
    ("tokens: dtype float32", DLPackOnly(tokens.astype(np.float32)), qsl, None),
    ("tokens: expected 1 dimension", tokens.reshape(1, -1), qsl, None),
    ("tokens: expected a contiguous array", np.repeat(tokens, 2)[::2], qsl, None),
    ("query_start_loc: expected a contiguous array", tokens, np.repeat(qsl, 2)[::2], None),
    ("query_start_loc: dtype float32", tokens, qsl.astype(np.float32), None),
    ("query_start_loc must start at 0", tokens, qsl + 1, None),
    ("query_start_loc must be non-decreasing", tokens, np.array([0, 3, 1, len(tokens)]), None),
    (f"query_start_loc ends at {len(tokens) - 1} but there are {len(tokens)} tokens", tokens,
     np.array([0, len(tokens) - 1]), None),
    ("query_start_loc is empty", tokens, np.array([], dtype=np.int64), None),
    ("tokens: str; expected an integer array", "1 2 3", qsl, None),
    ("tokens[1]: float; expected an int", [1, 2.5], [0, 2], None),
    ("contexts for", tokens, qsl, [None]),
    ("context: has 1 tokens, expected ngram_size - 1 = 2", tokens, qsl, [[1]] + [None] * (len(qsl) - 2)),
    ("contexts: expected 2 dimensions", tokens, qsl, np.zeros(len(qsl) - 1, dtype=np.int64)),
    (f"is outside the vocabulary [0, {vocab})", np.array([vocab], dtype=np.int64), np.array([0, 1]), None),
    ("tokens: __dlpack__(): 5 (int); expected a DLPack capsule", WrongDLPack(5, (1, 0)), qsl, None),
    ("tokens: __dlpack_device__(): 'cpu' (str); expected a (device type, device id) pair",
     WrongDLPack(tokens.__dlpack__(), "cpu"), qsl, None),
]
for fragment, t, q, c in refusals:
    expect_error(ValueError, fragment, engine.forward, t, q, c)
# A capsule without a name (not DLPack's) is refused, not read.
import ctypes

ctypes.pythonapi.PyCapsule_New.restype = ctypes.py_object
ctypes.pythonapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
nameless = ctypes.pythonapi.PyCapsule_New(tokens.ctypes.data, None, None)
expect_error(ValueError, "tokens: a capsule without a name", engine.forward, nameless, qsl)
used = tokens.__dlpack__()
engine.forward(used, qsl)
expect_error(ValueError, "already consumed", engine.forward, used, qsl)
print(f"inputs: {len(refusals) + 1} wrong inputs refused with ValueError")

# Embeddings.__dlpack__'s arguments of the wrong type: a ValueError naming the argument.
output = engine.forward(tokens, qsl)[0]
dlpack_refusals = [
    ("__dlpack__ stream: 'x' (str); expected an int or None", {"stream": "x"}),
    ("__dlpack__ stream: 1.5 (float); expected an int or None", {"stream": 1.5}),
    ("__dlpack__ copy: str; expected True, False or None", {"copy": "no"}),
    ("__dlpack__ dl_device: 'cpu' (str); expected a (device type, device id) pair or None", {"dl_device": "cpu"}),
    ("__dlpack__ dl_device: (1,) (tuple); expected a (device type, device id) pair", {"dl_device": (1,)}),
]
for fragment, kwargs in dlpack_refusals:
    expect_error(ValueError, fragment, output.__dlpack__, **kwargs)
print(f"Embeddings.__dlpack__: {len(dlpack_refusals)} arguments of the wrong type refused with ValueError")

# Keywords: `pleshard run`'s options (besides comm and output_slots), refused by run's checks,
# whose messages name them as keywords (storage="tape"), never as run's options (--storage).
keywords = [a.arg for a in pybind11_signature("__init__", pleshard.Engine.__init__.__doc__).args.kwonlyargs]
run_help = subprocess.run([APP, "run", "--help"], capture_output=True, text=True, env={**os.environ, **ROOT_ENV}).stdout
options = set(re.findall(r"--([a-z-]+)", run_help))
unnamed = [k for k in keywords if k not in ("comm", "output_slots") and k.replace("_", "-") not in options]
check(keywords and not unnamed, f"Engine keywords that are no `pleshard run` option: {unnamed} of {keywords}")
base = {"checkpoint": checkpoint, "config": config_path}
# The Engine takes every keyword the option table gives Python, each with its signature's
# default (the table's), and no other.
table = subprocess.run([APP, "help-options", "python-names"], capture_output=True, text=True, check=True,
                       env={**os.environ, **ROOT_ENV}).stdout.split()
check(sorted(k for k in keywords if k != "comm") == sorted(table), f"Engine keywords {keywords}, table {table}")
init = pybind11_signature("__init__", pleshard.Engine.__init__.__doc__).args
defaults = {a.arg: ast.literal_eval(d) for a, d in zip(init.kwonlyargs, init.kw_defaults) if a.arg not in base}
pleshard.Engine(**base, **defaults).close()
for fragment, kwargs in [
    ("checkpoint not found", {"checkpoint": "/nonexistent/ckpt"}),
    ("layout tp=3 etp=3 on 1 ranks: tp must divide the number of ranks", {"tp": 3}),
    ("tp: 0 is out of range: must be a whole number of ranks >= 1", {"tp": 0}),
    ("cuda_graph needs storage device or pinned, not host", {"cuda_graph": True}),
    ("step_tokens: 0 is out of range: must be a whole number of tokens from 1 to 16777216", {"step_tokens": 0}),
    ("step_tokens: 33554432 is out of range: must be a whole number of tokens from 1 to 16777216",
     {"step_tokens": 1 << 25}),
    ("output_slots: 0 is out of range: must be from 1 to 64", {"output_slots": 0}),
    ("etp: 0 is out of range: must be a whole number of ranks >= 1", {"etp": 0}),
    ('storage="tape": expected host, device, pinned or disk', {"storage": "tape"}),
    ('placement: table 1\'s tier "tape": expected host', {"placement": "0=host,1=tape"}),
    ('exchange="bogus": expected auto, gather-reduce', {"exchange": "bogus"}),
    ('out_dtype="bfloat15": expected float32, bfloat16 or float16', {"out_dtype": "bfloat15"}),
    ('checkpoint="synthetic" needs config', {"checkpoint": "synthetic", "config": None}),
    ('checkpoint="synthetic": the disk tier reads checkpoint files', {"checkpoint": "synthetic", "storage": "disk"}),
    ('gpu_memory_limit: the budget of placement="auto", not of storage or placement="host"',
     {"storage": "host", "gpu_memory_limit": 1.0}),
    (": token_map: the qwen4exp family hashes tokens as they are", {"token_map": config_path}),
    ("collective_timeout: -1 is out of range: must be from 1 to 1e7 seconds", {"collective_timeout": -1.0}),
    ("collective_timeout: 1e-300 is out of range: must be from 1 to 1e7 seconds", {"collective_timeout": 1e-300}),
    ("checkpoint: empty path", {"checkpoint": ""}),
    ("checkpoint: required", {"checkpoint": None}),
    ("checkpoint: list; expected a path (str, bytes or os.PathLike)", {"checkpoint": []}),
    ("Engine: unknown keyword storge", {"storge": "host"}),
    ("checkpoint: the path holds a NUL character", {"checkpoint": checkpoint + "\0x"}),
    ("tp: 'x' (str); expected an int", {"tp": "x"}),
    ("etp: 1.5 (float); expected an int or None", {"etp": 1.5}),
    ("output_slots: 1099511627776 is out of range: must be from 1 to 64", {"output_slots": 1 << 40}),
    ("step_tokens: 1.5 (float); expected an int", {"step_tokens": 1.5}),
    ("cuda_graph: str; expected True or False", {"cuda_graph": "yes"}),
    ("storage: 3 (int); expected a str or None", {"storage": 3}),
    ("layer_prefix: 3 (int); expected a str or None", {"layer_prefix": 3}),
    ("collective_timeout: 'x' (str); expected a number of seconds", {"collective_timeout": "x"}),
    ('storage="host" and placement="auto": give one (storage=T is placement=T)', {"storage": "host", "placement": "auto"}),
    ('placement="0=host": table 1 is not placed', {"placement": "0=host"}),
    ("config: empty path", {"config": b""}),
    ("token_map: empty path", {"token_map": ""}),
    ("comm: str; expected an mpi4py communicator", {"comm": "world"}),
    ("cache_rows: -1 is out of range: must be a whole number of rows >= 0", {"storage": "disk", "cache_rows": -1}),
    ("cache_gb: nan is out of range: must be a finite number of GB >= 0",
     {"storage": "disk", "cache_gb": float("nan")}),
    ("cache_rows and cache_gb: give one of them", {"storage": "disk", "cache_rows": 10, "cache_gb": 1.0}),
    ("cache_static: 2 is out of range: must be a share from 0 to 1",
     {"storage": "disk", "cache_rows": 10, "cache_static": 2.0}),
    ('disk_reads="sometimes": expected cached or direct', {"storage": "disk", "disk_reads": "sometimes"}),
    ('host_reads="always": expected auto, gather, uva or both', {"host_reads": "always"}),
    ("host_reads: 3 (int); expected a str", {"host_reads": 3}),
    ("owner_fixed_below: -1 is out of range: must be a whole number of ids a layer from 0 to 2^40",
     {"owner_fixed_below": -1}),
    ("owner_gpu_plan_from: 1099511627777 is out of range: must be a whole number of ids a layer from 0 to 2^40",
     {"owner_gpu_plan_from": (1 << 40) + 1}),
    ("owner_fixed_below: 'x' (str); expected an int", {"owner_fixed_below": "x"}),
    ("a row cache stands in front of the pinned or disk tier, not the host tier", {"cache_rows": 10}),
    (f'cache_profile="{config_path}": needs a cache (cache_rows or cache_gb)',
     {"storage": "disk", "cache_profile": config_path}),
    ("threads: 0 is out of range: must be a whole number of threads from 1 to 4096", {"threads": 0}),
    ("threads: 'x' (str); expected an int or None", {"threads": "x"}),
]:
    message = expect_error(ValueError, fragment, pleshard.Engine, **{**base, **kwargs})
    check(not re.search(r"--[a-z]", message), f"a refusal names a command-line option: {message}")
# One check, one message (lib/job/engine_option_table): run's refusal of a value reads as the
# Engine's, but for the option's name.
for keyword, value in [("cache_rows", -1), ("step_tokens", 0), ("collective_timeout", 0.5), ("threads", 0),
                       ("owner_fixed_below", -1)]:
    option = "--" + keyword.replace("_", "-")
    cli = subprocess.run([APP, "run", "--checkpoint", checkpoint, "--synthetic", "1", "--summary-only", option,
                          str(value)], capture_output=True, text=True, env={**os.environ, **ROOT_ENV}).stderr
    message = expect_error(ValueError, f"{keyword}: ", pleshard.Engine, **{**base, keyword: value})
    refusal = message[message.index(f"{keyword}: ") + len(keyword) + 2:]
    check(f"{option}: {refusal}" in cli, f"{keyword}={value}: the Engine says {message!r}, run {cli!r}")
# A 70 kB value is quoted by its start and its length, whichever check refuses it.
big = "0=host," * 10000
for fragment, kwargs in [
    ('placement="0=host,0=host,', {"placement": big}),
    ('storage="host" and placement="0=host,', {"storage": "host", "placement": big}),
    ("tp: '0=host,0=host,", {"tp": big}),
    ('disk_reads="0=host,0=host,', {"storage": "disk", "disk_reads": big}),
    ('exchange="0=host,0=host,', {"exchange": big}),
]:
    message = expect_error(ValueError, fragment, pleshard.Engine, **{**base, **kwargs})
    check(len(message) < 600 and re.search(r"\(700\d\d bytes\)", message), f"{fragment}: {message[:300]}... "
          f"({len(message)} characters)")
# threads: the rank's host threads, as run's --threads sets them; the report says how many
# and where the count came from.
with pleshard.Engine(**base, threads=3) as asked:
    r = asked.report()
    check(r["threads"] == 3 and r["threads_from"] == "asked", f"threads=3: the report has {r['threads']} "
          f"threads from {r['threads_from']}")
# Paths as str, bytes or os.PathLike, as os.fsdecode takes them.
for path in (checkpoint.encode(), pathlib.Path(checkpoint)):
    pleshard.Engine(checkpoint=path, config=os.fsencode(config_path)).close()
print(f"keywords: {len(keywords)} named as pleshard run's options; bad values refused as run refuses them")
