#!/usr/bin/env bash
# The usage example in jobs/run-local.sh's header, run as written (from the checkout, with
# this build's executable).
#   run_local_example.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$(realpath "$1"); build=$(realpath "$2")
example=$(sed -n '/^# Example: /,/^[^#]/p' "$src/jobs/run-local.sh" | grep '^#' | sed 's/^# Example: //; s/^#//' |
          tr -d '\\\n' | tr -s ' ')
[[ $example == "jobs/run-local.sh "* ]] || { echo "FAIL: no example in jobs/run-local.sh's header"; exit 1; }
cd "$src"
# shellcheck disable=SC2086 # the example's words
"$src/jobs/run-local.sh" -b "$build" ${example#jobs/run-local.sh } || { echo "FAIL: $example"; exit 1; }
echo "run-local example: ran"
