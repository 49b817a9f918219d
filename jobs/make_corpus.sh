#!/usr/bin/env bash
# Rebuilds corpus A, the benchmark corpus of docs/performance.md, from public packages and
# checks it against the published file's sha256 (jobs/corpus/SHA256SUMS).
#   jobs/make_corpus.sh [--out FILE] [--work DIR] [--deb FILE] [--help]
# Fetches Debian's linux-doc-6.1 (apt-get download, no install, no root needed) and
# js-tiktoken from npm (npm ci, versions locked in jobs/corpus/package-lock.json), then
# tokenizes with jobs/corpus/tokenize.mjs. Needs bash, node >= 18, npm, dpkg-deb, sha256sum.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: jobs/make_corpus.sh [--out FILE] [--work DIR] [--deb FILE] [--help]

Rebuilds corpus A (corpus-a.tokens.jsonl: 1,267 requests, 2,843,820 o200k_base tokens of the
Linux 6.1 kernel's documentation) from Debian's linux-doc-6.1 6.1.192-3 and npm's js-tiktoken
1.0.21, and checks its sha256 against the published file's (jobs/corpus/SHA256SUMS).

  --out FILE   where the corpus goes (default: .data/corpus-a.tokens.jsonl in the checkout);
               written as FILE.partial and renamed to FILE only when its sha256 matches
  --work DIR   keep the downloads (the .deb, node_modules) in DIR and reuse them on later
               runs (default: a temporary folder, removed at exit)
  --deb FILE   use this linux-doc-6.1_6.1.192-3_all.deb instead of fetching it with apt-get
               (e.g. from https://snapshot.debian.org/package/linux/6.1.192-3/ once the
               Debian archive no longer carries that version); its sha256 is checked
  --help       this text

Exit status: 0 the corpus matches; 1 an error or a checksum mismatch; 2 bad usage;
77 a source could not be fetched or a tool is missing (no network, apt-get's package lists
without that version, no node or npm): nothing was checked.
EOF
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
out=$root/.data/corpus-a.tokens.jsonl
work=
deb=
package=linux-doc-6.1
version=6.1.192-3
deb_name=${package}_${version}_all.deb
docs_in_deb=usr/share/doc/$package/Documentation

die() { echo "make_corpus: $*" >&2; exit 1; }
cannot_fetch() { echo "make_corpus: SKIP: $*" >&2; exit 77; }

while [ $# -gt 0 ]; do
  case $1 in
    --out) [ $# -ge 2 ] || { echo "make_corpus: --out needs a file" >&2; exit 2; }; out=$2; shift 2 ;;
    --work) [ $# -ge 2 ] || { echo "make_corpus: --work needs a folder" >&2; exit 2; }; work=$2; shift 2 ;;
    --deb) [ $# -ge 2 ] || { echo "make_corpus: --deb needs a file" >&2; exit 2; }; deb=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "make_corpus: unknown argument $1; see jobs/make_corpus.sh --help" >&2; exit 2 ;;
  esac
done

# The expected checksums: "SHA256  NAME" lines of jobs/corpus/SHA256SUMS.
expected_sha256() {
  local sum
  sum=$(awk -v name="$1" '$1 !~ /^#/ && $2 == name { print $1 }' "$here/corpus/SHA256SUMS")
  [ -n "$sum" ] || die "$here/corpus/SHA256SUMS: no sha256 for $1"
  echo "$sum"
}
corpus_sha256=$(expected_sha256 corpus-a.tokens.jsonl)
deb_sha256=$(expected_sha256 "$deb_name")

for tool in node npm; do
  command -v "$tool" >/dev/null || cannot_fetch "$tool not found (the tokenizer is npm's js-tiktoken, run by node)"
done
command -v dpkg-deb >/dev/null || cannot_fetch "dpkg-deb not found (needed to unpack $deb_name)"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 18 ] || cannot_fetch "node $(node --version) found; the tokenizer needs node >= 18"

if [ -z "$work" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/make_corpus.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work" || die "--work $work: cannot create the folder"
work=$(cd "$work" && pwd)

# 1. The Debian package, fetched (not installed) and checked against its pinned sha256.
if [ -z "$deb" ]; then
  deb=$work/$deb_name
  if [ ! -f "$deb" ] || [ "$(sha256sum <"$deb" | cut -d' ' -f1)" != "$deb_sha256" ]; then
    command -v apt-get >/dev/null || cannot_fetch "apt-get not found; fetch $deb_name yourself and pass --deb"
    rm -f "$deb"
    if ! (cd "$work" && apt-get download -q -o Acquire::Retries=0 -o Acquire::http::Timeout=30 \
          "$package=$version") >"$work/apt.log" 2>&1; then
      why=$(grep -m1 '^E:' "$work/apt.log" || tail -1 "$work/apt.log")
      cannot_fetch "apt-get download $package=$version failed (no network, or package lists without" \
                   "that version: run apt-get update, or pass --deb): $why"
    fi
  fi
fi
[ -f "$deb" ] || die "--deb $deb: no such file"
found=$(sha256sum <"$deb" | cut -d' ' -f1)
[ "$found" = "$deb_sha256" ] || die "$deb: sha256 $found, expected $deb_sha256 ($deb_name)"
rm -rf "$work/deb"
dpkg-deb -x "$deb" "$work/deb" || die "$deb: dpkg-deb could not unpack it"
[ -d "$work/deb/$docs_in_deb" ] || die "$deb: holds no /$docs_in_deb"

# 2. The tokenizer, at the versions package-lock.json pins (integrity checked by npm).
cp "$here/corpus/package.json" "$here/corpus/package-lock.json" "$here/corpus/tokenize.mjs" "$work/"
if ! (cd "$work" && npm ci --no-audit --no-fund --fetch-retries=0 --fetch-timeout=30000) >"$work/npm.log" 2>&1; then
  # The registry out of reach is a skip; anything else (a lock file out of step) an error.
  network='network|code (EAI_AGAIN|ENOTFOUND|ECONN(REFUSED|RESET)|ETIMEDOUT|E(NET|HOST)UNREACH'
  network+='|ERR_SOCKET_TIMEOUT|E5[0-9]{2})'
  why=$(awk '/npm (ERR!|error) (request to|network)/ { print; exit }' "$work/npm.log")
  [ -n "$why" ] || why=$(awk '/npm (ERR!|error) [^ ]/ && !/npm (ERR!|error) (code|errno|syscall) / { print; exit }' \
                           "$work/npm.log")
  [ -n "$why" ] || why=$(tail -1 "$work/npm.log")
  grep -qE "npm (ERR!|error) ($network)" "$work/npm.log" &&
    cannot_fetch "npm ci could not reach the registry for js-tiktoken 1.0.21: $why"
  die "npm ci (js-tiktoken 1.0.21, jobs/corpus/package-lock.json) failed: $why"
fi

# 3. Tokenize, then compare with the published file's sha256.
mkdir -p "$(dirname "$out")" || die "--out $out: cannot create its folder"
node "$work/tokenize.mjs" "$work/deb/$docs_in_deb" "$out.partial" || die "tokenizing failed (above)"
rm -rf "$work/deb"  # 226 MB unpacked; the .deb stays in --work for the next run
found=$(sha256sum <"$out.partial" | cut -d' ' -f1)
if [ "$found" != "$corpus_sha256" ]; then
  die "$out.partial: sha256 $found, expected $corpus_sha256 (corpus A as published); kept for inspection"
fi
mv "$out.partial" "$out"
echo "make_corpus: $out: sha256 $found matches corpus A"
