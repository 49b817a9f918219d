#!/usr/bin/env bash
# On a machine of several GPUs, after h200-check.sh (same build directory; its ctest runs
# the layout, collective and graph tests on up to 8 ranks, over NCCL wherever every rank has
# a GPU of its own): `pleshard bench exchange` over every backend with the PyTorch/NCCL
# reference beside it, and `pleshard run` on the corpus from the GPU tiers at 1, 2, 4 and 8
# GPUs (as many as the machine has), one GPU per rank, in several layouts.
# `bench exchange` times every strategy's collectives; `bench step` (strategies) runs every
# strategy side by side on Qwen3.8-Flash-Next's real FP8 table, and again (network) with
# NCCL forced onto its network transport, as between nodes; peer: the ranks reading each
# other's rows over the GPUs' peer links (--exchange peer-read, each rank's part of the rows
# on its own GPU) beside owner, eager and replayed from CUDA graphs.
#   [CORPUS=path/to/corpus-a.tokens.jsonl] [PARTS="exchange strategies network peer torch scaling"] jobs/device/h200-multi.sh
# Results go to $OUT (default ./out): topo.txt, exchange.txt, strategies.txt,
# strategies-network.txt, peer.txt, torch-exchange.jsonl, scaling.txt (every scaling table).
set -uo pipefail
source "$(dirname "$0")/env.sh"
gpus=$(nvidia-smi -L | wc -l)
ranks=""
for n in 1 2 4 8; do [ "$n" -le "$gpus" ] && ranks="$ranks $n"; done
echo "h200-multi: $gpus GPUs; rank counts:$ranks"
nvidia-smi topo -m >"$out/topo.txt" 2>&1
mpi=(mpiexec --oversubscribe -n)
rc=0

parts=${PARTS:-exchange strategies network peer torch scaling}

# Collectives at the exchange's message sizes, and PyTorch's over the same NCCL.
for n in $ranks; do
  part exchange && { "${mpi[@]}" "$n" "$app" bench exchange --backend nccl mpi-staged mpi \
    --tokens 1 64 1024 8192 65536 --min-seconds 0.2 >>"$out/exchange.txt" || rc=1; }
  part torch && [ "$n" -gt 1 ] && python3 -m torch.distributed.run --nproc_per_node "$n" \
    jobs/torch_collectives_baseline.py >>"$out/torch-exchange.jsonl" 2>>"$out/torch-exchange.err"
done
part exchange && grep -v '^{' "$out/exchange.txt" | grep -v "^#"
# Whole steps of every exchange strategy side by side over NCCL (one GPU per rank), then
# with NCCL forced onto its network transport as between nodes.
qwen_fp8=/tmp/pleshard-qwen-fp8.json
qwen_as float8_e4m3fn "$qwen_fp8"
# (--exchange last, so that a run can add a strategy to the list)
step=(bench step --config "$qwen_fp8" --storage device --requests "$corpus" --tokens 64 8192 --modes eager
  --min-seconds 1 --exchange gather-reduce reduce-scatter owner)
for n in $ranks; do
  [ "$n" -gt 1 ] || continue
  part strategies && { "${mpi[@]}" "$n" "$app" "${step[@]}" --etp "$n" >>"$out/strategies.txt" || rc=1; }
  # Two "nodes" of n/2 ranks: the hierarchical form against the flat ones.
  part network && { NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 PLESHARD_RANKS_PER_NODE=$((n / 2)) \
    "${mpi[@]}" "$n" -x NCCL_P2P_DISABLE -x NCCL_SHM_DISABLE -x PLESHARD_RANKS_PER_NODE "$app" "${step[@]}" hierarchical \
    --etp "$n" >>"$out/strategies-network.txt" || rc=1; }
done
# The owner exchange in fixed-size messages beside gather-reduce, eager and replayed from
# CUDA graphs (NCCL, one GPU per rank: what fixed-size messages are for).
for n in $ranks; do
  [ "$n" -gt 1 ] || continue
  part strategies && { "${mpi[@]}" "$n" "$app" bench step --config "$qwen_fp8" --storage device --requests "$corpus" \
    --tokens 1 64 1024 --modes eager graph --min-seconds 1 --owner-fixed-below 1099511627776 --etp "$n" \
    --exchange gather-reduce owner >>"$out/strategies.txt" || rc=1; }
done
# Peer reads between the GPUs, beside the owner exchange over NCCL.
for n in $ranks; do
  [ "$n" -gt 1 ] || continue
  part peer && { "${mpi[@]}" "$n" "$app" bench step --config "$qwen_fp8" --storage device --requests "$corpus" \
    --tokens 64 1024 8192 --modes eager graph --min-seconds 1 --etp "$n" --exchange peer-read owner \
    >>"$out/peer.txt" || rc=1; }
done
part strategies && grep -v '^{' "$out/strategies.txt"
part peer && grep -v '^{' "$out/peer.txt"
part network && grep -v '^{' "$out/strategies-network.txt"
part torch && cat "$out/torch-exchange.jsonl"
part scaling || exit $rc

# pleshard run on the corpus: DP over GPUs, embedding-parallel (ETP) over all of them, TP 2.
model=${MODEL:-/tmp/pleshard-multi-model}
[ -d "$model" ] || "$app" ckpt make --config jobs/example/config.json --out "$model" --quiet
scale=(jobs/scaling.sh -c "$model" -q "$corpus" -r "$ranks" -n 1 -b "$build")
for storage in device pinned; do
  "${scale[@]}" -g "$storage" -o "$out/scaling-$storage-dp" || rc=1
  "${scale[@]}" -g "$storage" -e "$gpus" -o "$out/scaling-$storage-etp" || rc=1
done
"${scale[@]}" -g device -x --cuda-graph -o "$out/scaling-device-graph-dp" || rc=1
[ "$gpus" -ge 2 ] && { "${scale[@]}" -g device -t 2 -o "$out/scaling-device-tp2" || rc=1; }
# One file of every scaling summary (each run's report and the plots are left out).
for f in "$out"/scaling-*.csv; do
  [[ $f == *-runs.csv ]] || { echo "# $(basename "$f" .csv)"; cat "$f"; }
done >"$out/scaling.txt"
rm -f "$out"/scaling-*.csv "$out"/scaling-*.svg "$out"/scaling-*.png
cat "$out/scaling.txt"
exit $rc
