#!/usr/bin/env bash
# NCCL across the GPUs of one machine (2+ GPUs), traced by eacgm, checked per rank.
# Usage: tests/gpu/run_nccl_check.sh BIN OUT_DIR
set -uo pipefail
BIN=$(readlink -f "$1")
OUT=$2
PY=${TORCH_PY:-/opt/torch/.venv/bin/python}
mkdir -p "$OUT"
N=$(nvidia-smi -L | wc -l)
echo "== NCCL across $N GPUs"
"$BIN/eacgm" trace --probes nccl -o "$OUT/nccl.jsonl" -- \
  "$PY" -m torch.distributed.run --nproc_per_node "$N" tests/gpu/nccl_two_ranks.py "$OUT" 2> "$OUT/nccl.err"
echo "exit=$?"; grep -E "attached|done" "$OUT/nccl.err"
"$PY" tests/gpu/compare_nccl.py "$OUT/nccl.jsonl" "$OUT"
grep -m2 '"ncclAllReduce"' "$OUT/nccl.jsonl"
