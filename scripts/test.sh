#!/usr/bin/env bash
# Set up, build, check the formatting, and run the whole test suite, then build a tiny
# consumer project against the installed package, import its Python module, and install the
# module with pip into a virtual environment.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
scripts/check-format.sh
ctest --test-dir build --output-on-failure --parallel "$(nproc)"
echo "== parser and format tests under AddressSanitizer + UBSan"
scripts/test-sanitizers.sh
echo "== consumer project against the installed package"
rm -rf build/install build/consumer
cmake --install build --prefix build/install >/dev/null
log=build/consumer.log
{ cmake -S tests/consumer -B build/consumer -G Ninja -DCMAKE_PREFIX_PATH="$PWD/build/install" &&
  cmake --build build/consumer; } >"$log" 2>&1 || { cat "$log" >&2; echo "consumer build failed" >&2; exit 1; }
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 build/consumer/consumer
echo "== the Python module from the installed package"
tests/install/python_module.sh build "$PWD/build/install"
echo "== the Python module installed by pip into a virtual environment"
tests/install/pip_install.sh build
