#!/usr/bin/env bash
# A job is known by what decides its output's bytes, not by how its paths are spelled: a
# killed job rerun with its checkpoint under another spelling resumes; rerun with another
# checkpoint at the same path it is refused; rerun with the checkpoint written in place where
# its identity does not sample, or copied over, it computes its completed parts again; rerun over a partial output whose completed
# rows were damaged it redoes the damaged parts, and every rerun that completes ends with the
# bytes of an uninterrupted run; a directory where the progress record goes is named.
#   resume_identity.sh PLESHARD CHECKPOINT MPIEXEC
set -uo pipefail
app=$1; ckpt=$2; mpiexec=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$work"
cp -r "$ckpt" model
job() {  # job CHECKPOINT OUT [extra environment...]
  local c=$1 out=$2; shift 2
  env "$@" "$mpiexec" -n 2 --oversubscribe "$app" run --checkpoint "$c" --synthetic 60 --synthetic-max-tokens 100 \
    --step-tokens 64 --part-tokens 600 --quiet --out "$out"
}
job model whole.h5 >/dev/null 2>&1 || fail "the uninterrupted job"
killed() { job "${2:-model}" "$1" PLESHARD_FAULT_KILL_AFTER_PARTS=2 >/dev/null 2>&1 && fail "the job was not killed"; }

# Another spelling of the same checkpoint.
killed a.h5
job ./model/../model a.h5 >log 2>&1 || { cat log; fail "the rerun under another spelling"; }
grep -qE "parts resumed +2$" log || { cat log; fail "the same job under another spelling did not resume"; }
cmp -s a.h5 whole.h5 || fail "the resumed output differs"

# Another checkpoint at the same path.
killed b.h5
mv model model.orig
"$app" ckpt make --config model.orig/config.json --out model --seed 7 --quiet >/dev/null || fail "ckpt make"
job model b.h5 >log 2>&1 && fail "a job resumed over another checkpoint's rows"
grep -q "b.h5.progress: records the progress of a different job" log || { cat log; fail "no message"; }
rm -rf model; mv model.orig model

# The checkpoint's rows written in place between the kill and the rerun, only between the
# bytes its identity samples (a checkpoint of 9 MB: the samples do not cover it): the same
# job by its fingerprint, but its completed parts are computed again, and the output is that
# of an uninterrupted job on the changed checkpoint.
python3 - model/config.json big.config.json <<'PY' || fail "the larger config"
import json, sys
c = json.load(open(sys.argv[1])); c["ngram_vocab_size_base"] = 8000; json.dump(c, open(sys.argv[2], "w"))
PY
"$app" ckpt make --config big.config.json --out big --quiet >/dev/null || fail "ckpt make of the larger checkpoint"
job big f-before.h5 >/dev/null 2>&1 || fail "the uninterrupted job on the larger checkpoint"
killed f.h5 big
python3 - big/model.safetensors <<'PY' || fail "writing between the samples"
import os, sys
# The identity samples the first and last MiB and 4 KiB at i * size // 63, i = 1..62.
path = sys.argv[1]
size = os.path.getsize(path)
step = size // 63
with open(path, "r+b") as f:
    for i in range(1, 62):
        begin, end = i * step + 8192, (i + 1) * step - 4096
        if begin >= 1 << 20 and end <= size - (1 << 20) and end > begin:
            f.seek(begin)
            f.write(os.urandom(end - begin))
PY
job big f.h5 >log 2>&1 || { cat log; fail "the rerun over a checkpoint changed in place"; }
grep -q "big: the checkpoint's files are not as they were when the 2 completed parts" log ||
  { cat log; fail "a checkpoint changed in place between its samples was not noticed"; }
job big f-whole.h5 >/dev/null 2>&1 || fail "the uninterrupted job on the changed checkpoint"
cmp -s f.h5 f-whole.h5 || fail "the output resumed over a changed checkpoint differs from an uninterrupted job's"
cmp -s f-before.h5 f-whole.h5 && fail "the change left the output as it was: this case proves nothing"
# The same bytes copied over it with their modification time: a new state all the same.
killed g.h5 big
cp big/model.safetensors copy.safetensors
cp -p copy.safetensors big/model.safetensors
job big g.h5 >log 2>&1 || { cat log; fail "the rerun over a checkpoint copied back"; }
grep -q "computing them again" log || { cat log; fail "a checkpoint copied over the one read was not noticed"; }
cmp -s g.h5 f-whole.h5 || fail "the output recomputed over a copied checkpoint differs"
# The checkpoint's directory moved: the same files, resumed. A file of it renamed away and
# back: its change time moved (as ext4, xfs, btrfs and tmpfs move it; POSIX leaves it
# open), so its parts are computed again.
killed i.h5
mv model moved && mv moved model
job model i.h5 >log 2>&1 || { cat log; fail "the rerun after the directory moved"; }
grep -qE "parts resumed +2$" log || { cat log; fail "the checkpoint's directory moved and back did not resume"; }
killed j.h5
mv model/model.safetensors model/away && mv model/away model/model.safetensors
job model j.h5 >log 2>&1 || { cat log; fail "the rerun after a file renamed"; }
grep -q "computing them again" log || { cat log; fail "a file renamed away and back was not noticed"; }
cmp -s j.h5 whole.h5 || fail "the output recomputed after a rename differs"

# A record without the files' state (an older one): its parts are computed again.
killed h.h5
head -n 1 h.h5.progress >record && cat record >h.h5.progress
job model h.h5 >log 2>&1 || { cat log; fail "the rerun over an older record"; }
grep -q "h.h5.progress: records no state of the checkpoint's files" log || { cat log; fail "an older record resumed"; }
cmp -s h.h5 whole.h5 || fail "the output recomputed over an older record differs"
# A record whose first line holds fewer digests than it counts: damaged, the job starts afresh.
killed k.h5
sed -i '1s/ [0-9a-f]*$//' k.h5.progress
job model k.h5 >log 2>&1 || { cat log; fail "the rerun over a damaged record"; }
grep -q "k.h5.progress: its completed parts cannot be read" log || { cat log; fail "a damaged record was not named"; }
cmp -s k.h5 whole.h5 || fail "the output made afresh over a damaged record differs"

# Completed rows damaged between the kill and the rerun: a page of the first layer's rows.
killed c.h5
dd if=/dev/zero of=c.h5.partial bs=4096 seek=16 count=1 conv=notrunc status=none
job model c.h5 >log 2>&1 || { cat log; fail "the rerun over damaged rows"; }
grep -q "do not match the digest recorded when they were written" log || { cat log; fail "damage not reported"; }
cmp -s c.h5 whole.h5 || fail "the output resumed over damaged rows differs"

# The partial output's structure damaged too: it is made again.
killed d.h5
size=$(stat -c %s d.h5.partial)
dd if=/dev/zero of=d.h5.partial bs=1 seek=$((size / 5)) count=$((size * 3 / 5)) conv=notrunc status=none
job model d.h5 >log 2>&1 || { cat log; fail "the rerun over a damaged partial output"; }
grep -qE "starting afresh|do not match the digest" log || { cat log; fail "damage not reported"; }
cmp -s d.h5 whole.h5 || fail "the output made again differs"
# A progress record's place that holds a directory is named as such, not as another job's.
mkdir e.h5.progress
job model e.h5 >log 2>&1 && fail "a job ran beside a directory for its progress record"
grep -q "e.h5.progress: the progress record's place holds something that is not a file" log \
  || { cat log; fail "no message for the progress record's place"; }
echo "resume identity: by content"
