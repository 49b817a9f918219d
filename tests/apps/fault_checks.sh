# Sourced by the tests of faults that must end a job on every rank: how such a job is timed
# and what it must leave. The sourcing script sets $work (its scratch folder); the job's
# output goes to $work/out and $work/err. Every check fails the test with one "FAIL:" line
# naming WHAT, then the job's stderr.

fail() {
  echo "FAIL: $*"
  cat "$work/err" 2>/dev/null
  exit 1
}

# ended_by_fault WHAT LIMIT COMMAND...: runs COMMAND, which must exit non-zero by itself (not
# at a 120 s timeout) within LIMIT seconds. Sets rc and took (s).
ended_by_fault() {
  local what=$1 limit=$2 start
  shift 2
  start=$(date +%s)
  rc=0
  timeout 120 "$@" >"$work/out" 2>"$work/err" || rc=$?
  took=$(($(date +%s) - start))
  echo "$what: exit $rc after $took s"
  [ "$rc" -ne 0 ] || fail "$what: the job exited 0"
  [ "$rc" -ne 124 ] || fail "$what: the job still ran after 120 s"
  [ "$took" -le "$limit" ] || fail "$what: took $took s to end"
}

# job_ended WHAT LIMIT PID: the job PID, started in the background (its output to $work/out
# and $work/err) before a fault was made, must exit non-zero within LIMIT seconds from now.
# Sets rc and took (s).
job_ended() {
  local what=$1 limit=$2 pid=$3 start
  start=$(date +%s)
  timeout 120 tail --pid="$pid" -f /dev/null
  kill -0 "$pid" 2>/dev/null && fail "$what: the job still ran after 120 s"
  rc=0
  wait "$pid" || rc=$?
  took=$(($(date +%s) - start))
  echo "$what: exit $rc after $took s"
  [ "$rc" -ne 0 ] || fail "$what: the job exited 0"
  [ "$took" -le "$limit" ] || fail "$what: took $took s to end"
}

# message WHAT PATTERN: the job's stderr names the fault (PATTERN, a basic grep pattern).
message() {
  grep -q -- "$2" "$work/err" || fail "$1: no message matching '$2'"
}

# one_message WHAT PATTERN: the job's stderr holds one error line, and it matches PATTERN.
one_message() {
  message "$1" "$2"
  [ "$(grep -c "error:" "$work/err")" -eq 1 ] || fail "$1: not one message"
}

# no_output WHAT FILE: nothing that looks complete at FILE.
no_output() {
  [ ! -e "$2" ] || fail "$1: an output that looks complete was left at $2"
}
