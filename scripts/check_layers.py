#!/usr/bin/env python3
"""The layers of the code (docs/architecture.md, "Layers of the code"): each folder of lib/
and kernels/ includes only the folders below it. Prints every include that points up or
sideways (file:line, what it includes, what its folder may include) and exits 1 where there
is one; exits 0 otherwise. Run from anywhere: the repository is this script's parent."""

import pathlib
import re
import sys

# Each layer and the layers it stands on directly; a layer may include those and everything
# under them.
LAYERS = {
    "kernels/common": [],  # the host-device math: includes nothing of the rest
    "core": ["kernels/common"],
    "kernels": ["core"],  # the host and CUDA kernels on that math
    "io": ["core"],
    "model": ["io"],
    "hash": ["model", "kernels"],
    "format": ["model"],
    "ckpt": ["format", "kernels"],
    "exec": ["kernels"],
    "store": ["ckpt", "exec"],
    "dist": ["exec"],
    "profile": ["store", "hash"],
    "engine": ["profile", "dist"],
    "job": ["engine"],
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+(?:/common)?)/')


def below(layer, seen=None):
    seen = set() if seen is None else seen
    for lower in LAYERS[layer]:
        if lower not in seen:
            seen.add(lower)
            below(lower, seen)
    return seen


def layer_of(path, root):
    parts = path.relative_to(root).parts
    if parts[0] == "kernels":
        return "kernels/common" if parts[1] == "common" else "kernels"
    return parts[1] if len(parts) > 2 else None


def main():
    root = pathlib.Path(__file__).resolve().parent.parent
    wrong = []
    files = sorted(p for d in ("lib", "kernels") for p in (root / d).rglob("*")
                   if p.suffix in (".hpp", ".cpp", ".cu", ".cuh", ".h"))
    for path in files:
        layer = layer_of(path, root)
        if layer is None:  # lib/pleshard.hpp, the library's one header for users: above every layer
            continue
        if layer not in LAYERS:
            wrong.append(f"{path.relative_to(root)}: folder '{layer}' is in no layer (add it to {__file__})")
            continue
        allowed = below(layer) | {layer}
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if m and m.group(1) in LAYERS and m.group(1) not in allowed:
                wrong.append(f"{path.relative_to(root)}:{number}: {layer} includes {m.group(1)}; "
                             f"{layer} stands on {', '.join(sorted(below(layer))) or 'nothing'}")
    for w in wrong:
        print(w)
    print(f"layers: {len(files)} files, {len(wrong)} includes against the layers")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
