#!/usr/bin/env bash
# Launches pleshard on this machine under mpiexec.
#   jobs/run-local.sh [-n RANKS] [-b BUILD_DIR] -- SUBCOMMAND [OPTIONS...]
# Example: jobs/run-local.sh -n 4 -- run --checkpoint synthetic --config jobs/example/config.json --etp 4 \
#            --synthetic 64 --summary-only
set -euo pipefail
ranks=4
build="$(cd "$(dirname "$0")/.." && pwd)/build"  # the checkout's, wherever this is run from
while getopts "n:b:h" opt; do
  case $opt in
    n) ranks=$OPTARG ;;
    b) build=$OPTARG ;;
    h) sed -n '2,5p' "$0"; exit 0 ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
exe="$build/bin/pleshard"
[ -x "$exe" ] || { echo "run-local: $exe not found; build first (scripts/build.sh)" >&2; exit 1; }
flags=(-n "$ranks")
# More ranks than cores, and root in containers, need Open MPI's consent.
if mpiexec --version 2>/dev/null | grep -qiE "open ?(mpi|rte)"; then
  flags+=(--oversubscribe)
  [ "$(id -u)" -eq 0 ] && flags+=(--allow-run-as-root)
fi
exec mpiexec "${flags[@]}" "$exe" "$@"
