#!/usr/bin/env bash
# Strong or weak scaling of `pleshard run`: one run per rank count, results as CSV and an
# SVG plot of tokens/s against ranks.
#   jobs/scaling.sh -c CHECKPOINT [-m strong|weak] [-r "1 2 4"] [-q REQUESTS | -s N]
#                   [-t TP] [-e ETP_PER_TP] [-g STORAGE] [-x "MORE RUN ARGS"] [-o OUT_PREFIX] [-b BUILD_DIR]
# strong: the same requests for every rank count; weak: N synthetic requests per DP rank.
# STORAGE: host (default), device, pinned or disk; GPU runs take one GPU per rank (NCCL).
# Columns: the run's phases on the step space's stream (load, gather, hash, fetch, decode,
# combine), step latency p50/p99, the exchange's share of the step (gather + combine over the
# steps' time), and each collective's busbw (GB/s, nccl-tests conventions) last.
# LAUNCHER overrides how ranks start (default: mpiexec -n; e.g. "srun --mpi=pmix -n").
set -euo pipefail
checkpoint=""; mode=strong; ranks="1 2 4"; requests=""; synthetic=512; tp=1; etp_per_tp=0
prefix=scaling; build=build; storage=host; more=""
while getopts "c:m:r:q:s:t:e:g:x:o:b:h" opt; do
  case $opt in
    c) checkpoint=$OPTARG ;; m) mode=$OPTARG ;; r) ranks=$OPTARG ;; q) requests=$OPTARG ;;
    s) synthetic=$OPTARG ;; t) tp=$OPTARG ;; e) etp_per_tp=$OPTARG ;; o) prefix=$OPTARG ;;
    g) storage=$OPTARG ;; x) more=$OPTARG ;; b) build=$OPTARG ;; *) sed -n '2,11p' "$0"; exit 2 ;;
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
echo "mode,storage,backend,exchange,ranks,tp,etp,requests,tokens,seconds,tokens_per_s,rows_per_s,step_p50_us,step_p99_us,steps_s,load_s,gather_s,hash_s,fetch_s,decode_s,combine_s,exchange_share,busbw_gb_s" >"$csv"
for n in $ranks; do
  [ $((n % tp)) -eq 0 ] || { echo "scaling: skip $n ranks (TP $tp does not divide it)"; continue; }
  etp=$tp; [ "$etp_per_tp" -gt 0 ] && etp=$((tp * etp_per_tp))
  [ $(((n / tp) % (etp / tp))) -eq 0 ] || { echo "scaling: skip $n ranks (ETP $etp does not fit)"; continue; }
  if [ "$mode" = weak ]; then input=(--synthetic $((synthetic * n / tp)));
  elif [ -n "$requests" ]; then input=(--requests "$requests"); else input=(--synthetic "$synthetic"); fi
  echo "scaling: $mode, $n ranks, TP $tp, ETP $etp, $storage" >&2
  # shellcheck disable=SC2086 # $more holds several arguments
  line=$($launcher "$n" "$app" run --checkpoint "$checkpoint" "${input[@]}" --tp "$tp" --etp "$etp" \
         --storage "$storage" $more --summary-only --quiet --json | grep '^{"job"')
  field() { echo "$line" | grep -o "\"$1\": [^,}]*" | head -1 | sed 's/.*: //' | tr -d '"'; }
  # (none where every group is one rank)
  busbw=$(echo "$line" | { grep -o '"[a-z_]*_busbw": [^,}]*' || true; } | sed 's/"\([a-z_]*\)_busbw": \(.*\)/\1 \2/' |
          awk '{ printf "%s%s=%.2f", (NR > 1 ? ";" : ""), $1, $2 * 1e-9 }')
  # The exchange's share of the steps' time (not known for graph replays, timed whole).
  share=$(awk -v g="$(field gather_s)" -v c="$(field combine_s)" -v s="$(field steps_s)" \
          'BEGIN { printf "%.4f", (s > 0 ? (g + c) / s : 0) }')
  cols=""
  for key in storage backend exchange ranks tp etp requests tokens seconds tokens_per_s rows_per_s step_p50_us \
             step_p99_us steps_s load_s gather_s hash_s fetch_s decode_s combine_s; do cols="$cols,$(field $key)"; done
  echo "$mode$cols,$share,$busbw" >>"$csv"
done
if command -v column >/dev/null; then column -s, -t <"$csv"; else cat "$csv"; fi
# The plot: tokens/s against ranks (log2 x), as a self-contained SVG.
awk -F, -v title="pleshard run, $mode scaling, $storage" 'NR > 1 { n++; x[n] = $5; y[n] = $11; if ($11 > ymax) ymax = $11; if ($5 > xmax) xmax = $5 }
  END {
    if (n == 0) exit
    w = 640; h = 400; l = 80; b = 50; t = 40; r = 20
    lx = log(xmax) / log(2); if (lx == 0) lx = 1
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", w, h
    printf "<text x=\"%d\" y=\"24\" font-size=\"15\">%s</text>\n", l, title
    printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", l, h - b, w - r, h - b
    printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", l, t, l, h - b
    printf "<text x=\"%d\" y=\"%d\">ranks</text><text x=\"8\" y=\"%d\">tokens/s</text>\n", (w - r + l) / 2, h - 10, t + 10
    printf "<text x=\"8\" y=\"%d\">%.3g</text>\n", t + 30, ymax
    pts = ""
    for (i = 1; i <= n; i++) {
      px = l + (w - r - l) * (log(x[i]) / log(2)) / lx; py = (h - b) - (h - b - t) * y[i] / ymax
      pts = pts sprintf("%.1f,%.1f ", px, py)
      printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"steelblue\"/><text x=\"%.1f\" y=\"%d\">%d</text>\n", px, py, px - 4, h - b + 16, x[i]
    }
    printf "<polyline points=\"%s\" fill=\"none\" stroke=\"steelblue\" stroke-width=\"2\"/>\n</svg>\n", pts
  }' "$csv" >"$prefix.svg"
echo "scaling: wrote $csv and $prefix.svg"
