#!/usr/bin/env bash
# One output policy for every command that writes (run, embed, ckpt make and convert,
# profile --out and --curve): an output that names a device, a FIFO, a socket or a directory,
# one of the job's own inputs, or nothing at all is refused with one line, exit 1 (2 for an
# empty path, a usage error), and whatever was there is left as it was.
#   output_policy.sh PLESHARD CHECKPOINT MPIEXEC
set -uo pipefail
app=$1; ckpt=$2; mpiexec=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$work"
"$app" ckpt make --config "$ckpt/config.json" --out model.h5 --kind hdf5 --quiet >/dev/null || fail "ckpt make"
cp -r "$ckpt" st
echo '{"requests": [{"tokens": [5, 6, 7, 2, 9]}, {"tokens": [1]}]}' > batch.json
printf '{"id": "a", "tokens": [5, 6, 7]}\n{"id": "b", "tokens": [9, 9]}\n' > requests.jsonl
mkfifo fifo
mkdir dir
places=(fifo dir)
if [ "$(id -u)" = 0 ] && mknod null c 1 3 2>/dev/null; then
  places+=(null)
else
  echo "output_policy: device node skipped (mknod needs root)"
fi

# writer NAME OUTPUT: the writer's command line with OUTPUT as its output.
writer() {
  case $1 in
    run) echo "$mpiexec -n 2 --oversubscribe $app run --checkpoint st --requests requests.jsonl --quiet --out $2" ;;
    embed) echo "$app embed --checkpoint model.h5 --batch batch.json --out $2" ;;
    make) echo "$app ckpt make --config st/config.json --kind hdf5 --quiet --out $2" ;;
    convert) echo "$app ckpt convert --checkpoint model.h5 --kind safetensors --quiet --out $2" ;;
    profile) echo "$app profile --checkpoint st --requests requests.jsonl --quiet --out $2" ;;
    curve) echo "$app profile --checkpoint st --requests requests.jsonl --quiet --curve $2" ;;
  esac
}
kind_of() { stat -c %F "$1"; }
digest() { if [ -d "$1" ]; then cat "$1"/* | md5sum; else md5sum <"$1"; fi; }
for w in run embed make convert profile curve; do
  for place in "${places[@]}"; do
    before=$(kind_of "$place")
    [ "$w" = convert ] && [ "$place" = dir ] && continue  # a directory is what convert writes here
    timeout 60 $(writer $w "$place") >log 2>&1
    rc=$?
    [ $rc = 1 ] || { cat log; fail "$w --out $place: exit $rc"; }
    grep -q "names a" log || { cat log; fail "$w --out $place: no message"; }
    [ "$(kind_of "$place")" = "$before" ] || fail "$w replaced the $before at $place"
  done
  # One of the job's inputs.
  case $w in
    run|profile|curve) input=st/model.safetensors ;;
    embed|convert) input=model.h5 ;;
    make) input=st/config.json ;;
  esac
  [ "$w" = convert ] && { input=st; cmdline="$app ckpt convert --checkpoint st --kind safetensors --quiet --out st"; } \
    || cmdline=$(writer $w "$input")
  sum=$(digest "$input")
  timeout 60 $cmdline >log 2>&1
  rc=$?
  [ $rc = 1 ] && grep -q "the job's input" log || { cat log; fail "$w over its input $input: exit $rc"; }
  [ "$(digest "$input")" = "$sum" ] || fail "$w changed its input"
  # An empty path (an unset variable): a usage error, nothing written.
  timeout 60 $(writer $w '""' | sed 's/""$//') "" >log 2>&1
  rc=$?
  [ $rc = 2 ] && grep -q "empty path" log || { cat log; fail "$w with an empty output path: exit $rc"; }
done
[ -z "$(ls -A | grep -E 'partial|\.lock$')" ] || { ls -la; fail "partial outputs or locks left behind"; }
echo "output policy: every writer refused"
