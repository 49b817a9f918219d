#!/usr/bin/env bash
# pip installs the module from the checkout as its README says (pip install --no-build-isolation .)
# into a fresh virtual environment that sees the system's packages, fetching nothing (--no-index),
# reusing BUILD_DIR's CMake build; the installed module imports from the environment, loads the
# library pip put beside it (pleshard.libs, through its RPATH), has its stub and runs an engine
# step. Skipped when the build has no module.
#   pip_install.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
python=$(sed -n 's/^PLESHARD_PYTHON:[A-Z]*=//p' "$build/CMakeCache.txt")
if [ -z "$python" ] || ! grep -q '^PLESHARD_ENABLE_PYTHON:BOOL=ON' "$build/CMakeCache.txt"; then
  echo "pip install: no module built (no pybind11): skipped"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m venv --system-site-packages "$work/venv" ||
  { echo "FAIL: $python -m venv: scripts/install-deps.sh installs python3-venv"; exit 1; }
log=$work/pip.log
PLESHARD_BUILD_DIR=$build "$work/venv/bin/pip" install --no-build-isolation --no-index --no-cache-dir "$source_dir" \
  >"$log" 2>&1 || { cat "$log"; echo "FAIL: pip install --no-build-isolation $source_dir"; exit 1; }
cd "$work"  # away from the build tree's module
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$work/venv/bin/python" - "$work/venv" \
  "$source_dir/tests/apps/data/tiny.config.json" <<'PY'
import os, sys
import pleshard
venv, config = sys.argv[1], sys.argv[2]
here = os.path.dirname(pleshard.__file__)
assert here.startswith(venv), f"pleshard imported from {pleshard.__file__}, not the environment {venv}"
assert os.path.isfile(os.path.join(here, "pleshard.pyi")), "no stub beside the installed module"
libraries = {line.split()[-1] for line in open("/proc/self/maps") if line.rstrip().endswith("/libpleshard.so")}
assert libraries == {os.path.join(here, "pleshard.libs", "libpleshard.so")}, f"libpleshard loaded from {libraries}"
engine = pleshard.Engine(checkpoint="synthetic", config=config)
print("pip install: installed", pleshard.__version__, "in a virtual environment; ran a step of",
      engine.forward([1, 2, 3], [0, 3])[0].shape)
PY
