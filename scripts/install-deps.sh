#!/usr/bin/env bash
# Installs the Debian packages pleshard builds against (and the Python its job scripts and
# their tests use: jobs/scaling.py, jobs/plot_curve.py, the output checks, the PyTorch flows
# torch_seed_flow.py and torch_engram_flow.py on the CPU; the Python module's pybind11,
# mpi4py and NumPy, and what `pip install --no-build-isolation .` builds it with: venv, pip,
# setuptools, wheel), only those missing. python3-torch (1.13, no CUDA) is the largest: about
# 135 MB to download, 555 MB installed with its needs.
# Idempotent and quiet; says clearly why when it cannot install.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libopenmpi-dev openmpi-bin
  libhdf5-openmpi-dev
  libtrilinos-kokkos-dev
  libgtest-dev
  nlohmann-json3-dev libcli11-dev
  liburing-dev
  clang-format
  python3-matplotlib python3-numpy python3-h5py python3-torch
  python3-dev pybind11-dev python3-pybind11 python3-mpi4py
  python3-venv python3-pip python3-setuptools python3-wheel
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: apt-get not found; install these packages by hand: ${missing[*]}" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  else
    echo "install-deps: not root and no password-less sudo; as root run: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  echo "install-deps: apt-get failed for: ${missing[*]} (log above)" >&2
  rm -f "$log"
  exit 1
fi
rm -f "$log"
echo "install-deps: done"
