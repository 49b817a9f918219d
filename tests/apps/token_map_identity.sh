#!/usr/bin/env bash
# The token map decides every Engram row id, so it is part of the model's identity and no
# command ever guesses it or writes over it:
# - which map: the checkpoint carries its own (inside an HDF5 file, beside a safetensors
#   directory's tensors); a different map beside --config is refused naming both; --token-map
#   wins, with a warning; `ckpt inspect` says which map and its digest;
# - identity: the output's token_map_sha256 is the map's (checked against Python's hashlib),
#   the report names the map, and the map a checkpoint carries is part of its identity; a
#   killed job rerun after its map was replaced, or a complete output rerun under another
#   map, is refused saying the token map differs;
# - no output writes over a model's files: seven writers aimed at the map in use are refused
#   and the map is unchanged; an HDF5 checkpoint written beside another's map leaves it alone;
# - a checkpoint directory rewritten holds the new checkpoint alone (no old index followed),
#   and one holding other files is refused untouched.
#   token_map_identity.sh PLESHARD MPIEXEC CONFIG SOURCE_DIR
set -uo pipefail
app=$1; mpiexec=$2; config=$3; source_dir=$4
py=/usr/bin/python3  # Debian's, with python3-numpy and python3-h5py (scripts/install-deps.sh)
"$py" -c 'import h5py, numpy' 2>/dev/null || { echo "FAIL: $py lacks h5py or numpy: scripts/install-deps.sh"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fail() { echo "FAIL: $*"; exit 1; }
cd "$work"
refused() {  # refused PATTERN COMMAND...: exits 1 with a line matching PATTERN
  local pattern=$1; shift
  "$@" >log 2>&1
  local rc=$?
  [ "$rc" -eq 1 ] || { cat log; fail "exit $rc, expected 1: $*"; }
  grep -qE "$pattern" log || { cat log; fail "no message matching '$pattern': $*"; }
}
sha() { "$py" -c 'import hashlib, numpy, sys; print(hashlib.sha256(numpy.load(sys.argv[1]).astype("<i8").tobytes()).hexdigest())' "$1"; }

# Two maps of one model: m1, and m2 with two entries swapped.
mkdir model other
cp "$config" model/config.json
"$py" "$source_dir/jobs/engram_token_map.py" --config model/config.json --out model/engram_token_map.npy >/dev/null
"$py" -c '
import numpy, sys
m = numpy.load("model/engram_token_map.npy")
m[[5, 6]] = m[[6, 5]]
assert (m != numpy.load("model/engram_token_map.npy")).any()
numpy.save("other/engram_token_map.npy", m)'
m1=$(sha model/engram_token_map.npy); m2=$(sha other/engram_token_map.npy)

# Which map.
"$app" ckpt make --config model/config.json --out st --quiet >/dev/null || fail "ckpt make"
cmp -s st/engram_token_map.npy model/engram_token_map.npy || fail "the checkpoint does not carry its map"
"$app" ckpt inspect --checkpoint st >log 2>&1 || { cat log; fail "inspect"; }
grep -q "token map st/engram_token_map.npy (sha256 $m1)" log || { cat log; fail "inspect does not name the map"; }
mkdir cfg2 && cp model/config.json cfg2/ && cp other/engram_token_map.npy cfg2/
refused "cfg2/engram_token_map.npy and st/engram_token_map.npy: two different token maps" \
  "$app" ckpt inspect --checkpoint st --config cfg2/config.json
"$app" ckpt inspect --checkpoint st --config cfg2/config.json --token-map other/engram_token_map.npy >log 2>&1 \
  || { cat log; fail "inspect --token-map"; }
grep -q "token map other/engram_token_map.npy (sha256 $m2)" log || { cat log; fail "--token-map not used"; }
grep -q "differs from st/engram_token_map.npy" log || { cat log; fail "no warning that --token-map differs"; }
# The same map beside the config and in the checkpoint is no conflict.
"$app" ckpt inspect --checkpoint st --config model/config.json >log 2>&1 || { cat log; fail "inspect, same maps"; }
# An HDF5 checkpoint carries its map inside and writes nothing beside it, even into a
# directory where another checkpoint's map lies.
mkdir h && cp other/engram_token_map.npy h/
"$app" ckpt make --config model/config.json --out h/a.h5 --kind hdf5 --quiet >/dev/null || fail "ckpt make hdf5"
cmp -s h/engram_token_map.npy other/engram_token_map.npy || fail "the HDF5 checkpoint wrote over the map beside it"
rm h/engram_token_map.npy
"$app" ckpt inspect --checkpoint h/a.h5 >log 2>&1 || { cat log; fail "inspect hdf5"; }
grep -q "token map h/a.h5:/engram_token_map (sha256 $m1)" log || { cat log; fail "the HDF5 map"; }

# No output writes over the model's files: seven writers aimed at the map in use.
cp st/engram_token_map.npy saved.npy
echo '{"requests": [{"tokens": [5, 999, 6, 7]}, {"context": [3], "tokens": [1, 2]}]}' >batch.json
"$py" -c '
import json
for r in range(40):
    print(json.dumps({"id": f"r{r}", "tokens": [(r * 31 + t * 7) % 1000 for t in range(10 + 3 * r)]}))' >req.jsonl
input="is the job's input"
refused "$input" "$app" embed --checkpoint st --batch batch.json --out st/engram_token_map.npy
refused "$input" "$app" profile --checkpoint st --requests req.jsonl --out st/engram_token_map.npy
refused "$input" "$app" profile --checkpoint st --requests req.jsonl --curve st/engram_token_map.npy
refused "$input" "$mpiexec" -n 1 "$app" run --checkpoint st --requests req.jsonl --out st/engram_token_map.npy --overwrite
refused "$input" "$app" ckpt convert --checkpoint st --out st/engram_token_map.npy --kind hdf5
refused "$input" "$app" ckpt make --config model/config.json --out model/engram_token_map.npy --kind hdf5
refused "$input" "$app" ckpt make --config model/config.json --token-map st/engram_token_map.npy \
  --out st/engram_token_map.npy --kind hdf5
mkdir mapdir && cp saved.npy mapdir/engram_token_map.npy
refused "holds the job's input" "$app" ckpt make --config model/config.json \
  --token-map mapdir/engram_token_map.npy --out mapdir
cmp -s st/engram_token_map.npy saved.npy || fail "a refused writer changed the checkpoint's map"
cmp -s model/engram_token_map.npy saved.npy || fail "a refused writer changed the config's map"

# Identity: the output and the report say which map; another map is another job.
job() { "$mpiexec" -n 2 --oversubscribe "$app" run --checkpoint st --requests req.jsonl --step-tokens 64 \
  --part-tokens 200 "$@"; }
job --out whole.h5 >log 2>&1 || { cat log; fail "the job"; }
grep -qE "token map +st/engram_token_map.npy \(sha256 $m1\)" log || { cat log; fail "the report does not name the map"; }
got=$("$py" -c 'import h5py, sys; print(h5py.File(sys.argv[1])["/"].attrs["token_map_sha256"].decode())' whole.h5)
[ "$got" = "$m1" ] || fail "token_map_sha256 is $got, the map's SHA-256 is $m1"
cp other/engram_token_map.npy st/engram_token_map.npy
refused "whole.h5: holds the output of another job \(its checkpoint_identity, token_map_sha256 differ\)" \
  job --out whole.h5 --quiet
cp saved.npy st/engram_token_map.npy
PLESHARD_FAULT_KILL_AFTER_PARTS=2 job --out killed.h5 --quiet >/dev/null 2>&1 && fail "the job was not killed"
[ -e killed.h5.progress ] || fail "the killed job left no progress record"
cp other/engram_token_map.npy st/engram_token_map.npy
refused "killed.h5.progress: records the progress of a different job \(its checkpoint_identity, token_map_sha256 differ\)" \
  job --out killed.h5 --quiet
cp saved.npy st/engram_token_map.npy
job --out killed.h5 >log 2>&1 || { cat log; fail "the rerun under the first map"; }
grep -q "resumed" log || { cat log; fail "the rerun under the first map did not resume"; }
cmp -s killed.h5 whole.h5 || fail "the resumed output differs"

# A rewritten checkpoint directory: an earlier multi-file checkpoint's index is gone.
"$app" ckpt make --config model/config.json --out re --files 2 --quiet >/dev/null || fail "ckpt make --files 2"
[ -e re/model.safetensors.index.json ] || fail "no index in a multi-file checkpoint"
"$app" ckpt make --config model/config.json --out re --seed 9 --quiet >/dev/null || fail "ckpt make over it"
"$app" ckpt make --config model/config.json --out fresh --seed 9 --quiet >/dev/null || fail "ckpt make fresh"
[ "$(ls re)" = "$(ls fresh)" ] || fail "the rewritten directory holds $(ls re | tr '\n' ' '), a fresh one $(ls fresh | tr '\n' ' ')"
"$app" embed --checkpoint re --batch batch.json --out re.h5 >/dev/null 2>&1 || fail "embed from the rewritten"
"$app" embed --checkpoint fresh --batch batch.json --out fresh.h5 >/dev/null 2>&1 || fail "embed from the fresh"
cmp -s re.h5 fresh.h5 || fail "the rewritten directory serves other rows than a fresh one"
echo "the user's notes" >re/NOTES.txt
refused "re: --out holds NOTES.txt" "$app" ckpt convert --checkpoint h/a.h5 --config model/config.json --out re \
  --kind safetensors
cmp -s re/model.safetensors fresh/model.safetensors || fail "a refused convert changed the directory"
ls -d re.partial 2>/dev/null && fail "a refused convert left re.partial"
echo "token map identity: ok"
