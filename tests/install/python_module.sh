#!/usr/bin/env bash
# The installed Python module imports from the install prefix (where PLESHARD_PYTHON_INSTALL_DIR
# put it, beside the library it loads, with its stub pleshard.pyi) and runs an engine step;
# skipped when the build has no module.
#   python_module.sh BUILD_DIR PREFIX
set -euo pipefail
build=$1; prefix=$2
python=$(sed -n 's/^PLESHARD_PYTHON:[A-Z]*=//p' "$build/CMakeCache.txt")
dir=$(sed -n 's/^PLESHARD_PYTHON_INSTALL_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")
if [ -z "$dir" ] || ! grep -q '^PLESHARD_ENABLE_PYTHON:BOOL=ON' "$build/CMakeCache.txt"; then
  echo "python module: not built (no pybind11): skipped"
  exit 0
fi
config=$(cd "$(dirname "$0")/../apps/data" && pwd)/tiny.config.json
cd "$(mktemp -d)"  # away from the build tree's module
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONPATH="$prefix/$dir" "$python" -c "
import sys, pleshard
assert pleshard.__file__.startswith('$prefix'), pleshard.__file__
import os
stub = os.path.join(os.path.dirname(pleshard.__file__), 'pleshard.pyi')
assert os.path.isfile(stub), 'no stub beside the installed module: ' + stub
engine = pleshard.Engine(checkpoint='synthetic', config='$config')
print('python module: installed', pleshard.__version__, 'ran a step of', engine.forward([1, 2, 3], [0, 3])[0].shape)"
