#!/usr/bin/env bash
# Every option the engine option table gives a command is one its --help lists (and so one it
# parses): `pleshard help-options COMMAND` against `pleshard COMMAND --help`.
#   options_taken.sh PLESHARD
set -euo pipefail
app=$1
count=0
for command in run embed bench-step profile; do
  words=${command/-/ }
  help=$("$app" $words --help)
  while read -r name; do
    if ! grep -qE -- "^ +${name}( |$)" <<<"$help"; then
      echo "options taken: pleshard $words --help has no $name" >&2
      exit 1
    fi
    count=$((count + 1))
  done < <("$app" help-options "$command")
done
echo "options taken: $count options listed by their commands"
