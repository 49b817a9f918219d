#!/usr/bin/env bash
# Strong or weak scaling of `pleshard run`: one run per rank count, results as CSV (and a
# PNG plot when gnuplot is installed).
#   jobs/scaling.sh -c CHECKPOINT [-m strong|weak] [-r "1 2 4"] [-q REQUESTS | -s N]
#                   [-t TP] [-e ETP_PER_TP] [-o OUT_PREFIX] [-b BUILD_DIR]
# strong: the same requests for every rank count; weak: N synthetic requests per DP rank.
# LAUNCHER overrides how ranks start (default: mpiexec -n; e.g. "srun --mpi=pmix -n").
set -euo pipefail
checkpoint=""; mode=strong; ranks="1 2 4"; requests=""; synthetic=512; tp=1; etp_per_tp=0
prefix=scaling; build=build
while getopts "c:m:r:q:s:t:e:o:b:h" opt; do
  case $opt in
    c) checkpoint=$OPTARG ;; m) mode=$OPTARG ;; r) ranks=$OPTARG ;; q) requests=$OPTARG ;;
    s) synthetic=$OPTARG ;; t) tp=$OPTARG ;; e) etp_per_tp=$OPTARG ;; o) prefix=$OPTARG ;;
    b) build=$OPTARG ;; *) sed -n '2,8p' "$0"; exit 2 ;;
  esac
done
[ -n "$checkpoint" ] || { echo "scaling: -c CHECKPOINT is required" >&2; exit 2; }
app=${PLESHARD:-$build/bin/pleshard}
launcher=${LAUNCHER:-}
if [ -z "$launcher" ]; then
  launcher="mpiexec -n"
  if mpiexec --version 2>/dev/null | grep -qiE "open ?(mpi|rte)"; then
    launcher="mpiexec --oversubscribe $([ "$(id -u)" -eq 0 ] && echo --allow-run-as-root) -n"
  fi
fi
csv=$prefix.csv
echo "mode,ranks,tp,etp,requests,tokens,seconds,tokens_per_s,rows_per_s,hash_s,exchange_s,lookup_s,write_s,exchange_share" >"$csv"
for n in $ranks; do
  [ $((n % tp)) -eq 0 ] || { echo "scaling: skip $n ranks (TP $tp does not divide it)"; continue; }
  etp=$tp; [ "$etp_per_tp" -gt 0 ] && etp=$((tp * etp_per_tp))
  [ $(((n / tp) % (etp / tp))) -eq 0 ] || { echo "scaling: skip $n ranks (ETP $etp does not fit)"; continue; }
  if [ "$mode" = weak ]; then input=(--synthetic $((synthetic * n / tp)));
  elif [ -n "$requests" ]; then input=(--requests "$requests"); else input=(--synthetic "$synthetic"); fi
  echo "scaling: $mode, $n ranks, TP $tp, ETP $etp" >&2
  line=$($launcher "$n" "$app" run --checkpoint "$checkpoint" "${input[@]}" --tp "$tp" --etp "$etp" \
         --summary-only --quiet --json | grep '^{"job"')
  python3 - "$mode" "$line" >>"$csv" <<'PY'
import json, sys
mode, r = sys.argv[1], json.loads(sys.argv[2])
phases = r["hash_s"] + r["exchange_s"] + r["lookup_s"] + r["write_s"]
print(",".join(str(x) for x in [mode, r["ranks"], r["tp"], r["etp"], r["requests"], r["tokens"],
      r["seconds"], r["tokens_per_s"], r["rows_per_s"], r["hash_s"], r["exchange_s"], r["lookup_s"],
      r["write_s"], round(r["exchange_s"] / phases, 4) if phases else 0]))
PY
done
column -s, -t <"$csv"
if command -v gnuplot >/dev/null 2>&1; then
  gnuplot <<GP
set terminal png size 800,500
set output "$prefix.png"
set datafile separator ","
set key autotitle columnhead
set logscale x 2
set xlabel "ranks"; set ylabel "tokens/s"
set title "pleshard run, $mode scaling"
plot "$csv" using 2:8 with linespoints title "tokens/s"
GP
  echo "scaling: wrote $csv and $prefix.png"
else
  echo "scaling: wrote $csv (install gnuplot for $prefix.png)"
fi
