#!/usr/bin/env bash
# Checks that every C++ and CUDA file is formatted as .clang-format says (the one the
# Debian package clang-format installs); prints the files that are not.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' 2>/dev/null || find apps lib kernels tests -name '*.[ch]pp' -o -name '*.cu')
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -ne 0 ]; then
  printf 'format: not formatted: %s\n' "${bad[@]}" >&2
  echo "format: run  clang-format -i <files>  (clang-format $(clang-format --version | grep -o '[0-9][0-9.]*' | head -1))" >&2
  exit 1
fi
echo "format: ${#files[@]} files formatted"
