#!/usr/bin/env bash
# After h200-build.sh (same build directory): the Python module on one GPU, self-checking
# (jobs/python/gpu_check.py): zero copy into PyTorch, a consumer on another stream over 1000
# steps of changing sizes (device and pinned tiers, eager and CUDA graphs), and forward()'s
# overhead from Python at B=64 against `pleshard bench step` in the same run.
# Needs PyTorch with CUDA and pybind11 for the interpreter that runs it (PYTHON, default
# python3); the module is built here when the build lacks it.
# Results go to $OUT (default ./out): python-gpu.json, python-gpu.txt, python-build.log.
set -uo pipefail
source "$(dirname "$0")/env.sh"
python=${PYTHON:-python3}
if ! ls "$build"/python/pleshard*.so >/dev/null 2>&1; then
  # pybind11 from the interpreter's site (pip) when CMake has none of its own; else Debian's
  # carried in .kk/py11 (apt-get download pybind11-dev), its headers replaced by PyTorch's
  # newer copy where the interpreter has one (Debian's 2.10 predates Python 3.12).
  pybind11_dir=$("$python" -m pybind11 --cmakedir 2>/dev/null || true)
  if [ -z "$pybind11_dir" ] && ls .kk/py11/pybind11-dev_*.deb >/dev/null 2>&1; then
    dpkg -x .kk/py11/pybind11-dev_*.deb /opt/py11
    torch_headers=$("$python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "include", "pybind11"))' 2>/dev/null || true)
    if [ -f "$torch_headers/pybind11.h" ]; then
      rm -rf /opt/py11/usr/include/pybind11 && cp -r "$torch_headers" /opt/py11/usr/include/pybind11
    fi
    pybind11_dir=/opt/py11/usr/lib/cmake/pybind11
  fi
  if ! { cmake -S . -B "$build" -DPython_EXECUTABLE="$(command -v "$python")" -DPLESHARD_ENABLE_PYTHON=ON \
            ${pybind11_dir:+-Dpybind11_DIR="$pybind11_dir"} &&
          cmake --build "$build" --parallel "$(nproc)" --target pleshard_python pleshard_app; } >"$out/python-build.log" 2>&1; then
    tail -30 "$out/python-build.log"
    echo "h200-python: could not build the module (log above)"
    exit 1
  fi
fi
PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" "$python" jobs/python/gpu_check.py --pleshard "$app" \
  --config jobs/example/config.json --steps "${STEPS:-1000}" --out "$out"
