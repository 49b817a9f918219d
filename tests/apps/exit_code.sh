#!/usr/bin/env bash
# Runs a command and prints its output followed by "exit=N", for tests on exit codes.
"$@" 2>&1
echo "exit=$?"
