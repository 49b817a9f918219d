#!/usr/bin/env bash
# Messages quote option values only up to a length (core/error.hpp, quoted_value): a 70 kB
# value given to an option, whether CLI11, an option check or the library refuses it, is one
# short line naming the option and what is wrong, with the value's start and its length, and
# the exit code of a refusal (2 for usage, 1 for bad input).
#   long_values.sh PLESHARD CHECKPOINT MPIEXEC
set -euo pipefail
app=$1; ckpt=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
big=$(printf '0=host,%.0s' $(seq 10000))        # 70,000 bytes, commas between
word=$(printf 'h%.0s' $(seq 70000))              # 70,000 bytes, one word
run=(run --checkpoint "$ckpt" --synthetic 4 --summary-only --quiet)
config=$(dirname "$0")/data/tiny.config.json
failed=0
# expect CODE FRAGMENT COMMAND...: the command exits CODE; its output is short and holds
# FRAGMENT and the value's length.
expect() {
  local code=$1 fragment=$2
  shift 2
  set +e
  "$app" "$@" >"$work/out" 2>&1
  local got=$?
  set -e
  local bytes
  bytes=$(wc -c <"$work/out")
  if [ "$got" -ne "$code" ] || [ "$bytes" -gt 600 ] || ! grep -qF -- "$fragment" "$work/out" ||
    ! grep -qE "\(700[0-9][0-9] bytes\)" "$work/out"; then
    echo "FAIL: ${fragment:0:60}: exit $got (expected $code), $bytes bytes: $(head -c 400 "$work/out")"
    failed=1
  fi
}
expect 1 "error: --placement 0=host,0=host," "${run[@]}" --placement "$big"
expect 1 "error: --placement 0=host,0=host," "${run[@]}" "--placement=$big"
expect 1 "error: --placement: table 0's tier \"hhhh" "${run[@]}" --placement "0=$word"
expect 1 "' is not TABLE=TIER" "${run[@]}" --placement "1=host,$word"
expect 2 "--storage: 0=host," "${run[@]}" --storage "$big"
expect 2 "--exchange: 0=host," "${run[@]}" --exchange "$big"
expect 2 "--tp: 0=host," "${run[@]}" --tp "$big"
expect 2 "error: unknown option --hhhh" "${run[@]}" "--$word"
expect 1 "error: --kind \"0=host," ckpt make --config "$config" --out "$work/c" --kind "$big"
expect 1 "error: row format \"0=host," ckpt make --config "$config" --out "$work/c" --format "$big"
[ "$failed" -eq 0 ] || exit 1
echo "long values: every message quotes them short"
