# Sourced by the device jobs: the repository root as working directory, $out (results, from
# $OUT), $build and $app, and the environment every run there needs (root under Open MPI;
# NVLink multicast off in NCCL on shared hosts).
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
out=${OUT:-out}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
build=${BUILD:-build-h200}
# The benchmark corpus (corpus A): $CORPUS, else where jobs/make_corpus.sh writes it.
corpus=${CORPUS:-.data/corpus-a.tokens.jsonl}
app=$build/bin/pleshard
# qwen_as DTYPE FILE: Qwen3.8-Flash-Next's PLE config, its table stored as DTYPE, written to FILE.
qwen_as() {
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["ple_embedding_dtype"]=sys.argv[2]; json.dump(c,open(sys.argv[3],"w"))' \
    jobs/models/qwen3.8-flash-next/config.json "$1" "$2"
}
# log PART COMMAND...: runs COMMAND, its tables to $out/PART.txt and JSON lines to
# $out/PART.jsonl, both shown; a failure is noted there and sets rc=1 (the caller's status).
log() {
  local p=$1; shift
  echo "\$ $*" | tee -a "$out/$p.txt"
  "$@" >"$out/last.log" 2>&1 || { echo "FAILED (exit $?): $*" | tee -a "$out/$p.txt"; tail -5 "$out/last.log"; rc=1; }
  grep -v '^{' "$out/last.log" | tee -a "$out/$p.txt"
  grep '^{' "$out/last.log" >>"$out/$p.jsonl"
}
# part NAME: whether the job's $parts (its PARTS, or its default list) names NAME.
part() { [[ " ${parts:-} " == *" $1 "* ]]; }
