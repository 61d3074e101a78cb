#!/usr/bin/env bash
# Step-time cost of GPU time through the hook on the GPU machine: the GPT-style loops of
# train_step.py (the overhead benchmark's) run plain, with libeacgm_hook.so preloaded and
# GPU time off (EACGM_GPU_TIME=0: the governance wrappers alone), and with GPU time on
# (EACGM_GPU_TIME=1; no agent reads the ring, so its records are dropped: the hook's cost
# alone), and with GPU time on but its timing paused from the start (`counts`: the hook's
# exact launch counts alone), as separate processes interleaved in rounds; medians per
# mode, ratios to plain, and the spread (the noise) of each.
# Usage: bench/gpu/gpu_time_cost.sh HOOK.so [ROUNDS] [STEPS] [SIZES]
set -uo pipefail
HOOK=$(readlink -f "$1") ROUNDS=${2:-5} STEPS=${3:-200} SIZES=${4:-"cpu gpu"}
PY=${PY:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/rounds_common.sh"
for size in $SIZES; do
  train=("$PY" "$HERE/train_step.py" --size "$size" --steps "$STEPS")
  for r in $(seq "$ROUNDS"); do
    "${train[@]}" 2>/dev/null | step_of >>"$TMP/$size.plain"
    LD_PRELOAD="$HOOK" EACGM_GPU_TIME=0 "${train[@]}" 2>/dev/null | step_of >>"$TMP/$size.hook"
    LD_PRELOAD="$HOOK" EACGM_GPU_TIME=1 "${train[@]}" --paused 2>/dev/null | step_of >>"$TMP/$size.counts"
    LD_PRELOAD="$HOOK" EACGM_GPU_TIME=1 "${train[@]}" 2>/dev/null | step_of >>"$TMP/$size.gpu-time"
  done
  base=$(median <"$TMP/$size.plain")
  printf '%-4s %-9s %9s %8s %s\n' size mode step_ms ratio spread
  for mode in plain hook counts gpu-time; do
    m=$(median <"$TMP/$size.$mode")
    printf '%-4s %-9s %9s %8s %s\n' "$size" "$mode" "$m" "$(awk -v m="$m" -v b="$base" 'BEGIN{printf "%.4f", m/b}')" \
      "$(spread <"$TMP/$size.$mode")"
  done
done
