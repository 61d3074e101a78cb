#!/usr/bin/env bash
# Step-time cost of GPU time through the hook, measured inside one process: train_step.py
# under libeacgm_hook.so with EACGM_GPU_TIME=1 runs blocks of STEPS steps with timing paused
# (the ring's `paused` word) and on in turn, PAIRS pairs in ABBA order, and prints the median
# of the pairs' ratios (on / paused) and their quartiles. The process, its memory placement,
# its CPU and clocks are the same in both arms, which separate processes (gpu_time_cost.sh)
# are not. PROCESSES such processes, one after another, for the spread between processes.
# Usage: bench/gpu/gpu_time_ab.sh HOOK.so [PROCESSES] [PAIRS] [STEPS] [SIZES]
set -uo pipefail
HOOK=$(readlink -f "$1") PROCESSES=${2:-3} PAIRS=${3:-10} STEPS=${4:-50} SIZES=${5:-"cpu gpu"}
PY=${PY:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
for size in $SIZES; do
  for p in $(seq "$PROCESSES"); do
    LD_PRELOAD="$HOOK" EACGM_GPU_TIME=1 "$PY" "$HERE/train_step.py" --size "$size" --steps "$STEPS" \
      --ab-pairs "$PAIRS" 2>&1 | grep -E '^(ab_ratio|Traceback|[A-Za-z]*Error)' | sed "s/^/$size process $p: /"
  done
done
