#!/usr/bin/env bash
# Where GPU time sampling's step cost goes: bench/gpu/gpu_time_window_cost.sh (timing on
# for FRACTION of every second, paused between, in one process) once per setting of the
# hook's tuning: the default (0.2% budget, 5 ms read-back), a 5x budget (five times the
# timed launches: does the cost follow the hook's own count of it?), a 100 ms read-back
# (the timing thread's driver calls twenty times rarer: do they stall the launches?), and
# both. Prints each run's window comparison and the ring's counters.
# Usage: bench/gpu/gpu_time_cost_parts.sh BIN_DIR [SIZE] [STEPS] [FRACTION]
set -uo pipefail
BIN=$1 SIZE=${2:-cpu} STEPS=${3:-9000} FRACTION=${4:-0.4}
HERE=$(cd "$(dirname "$0")" && pwd)
for setting in "default" "EACGM_GPU_TIME_BUDGET=1" "EACGM_GPU_TIME_POLL_MS=100" \
  "EACGM_GPU_TIME_BUDGET=1 EACGM_GPU_TIME_POLL_MS=100"; do
  echo "#### $setting"
  vars=()
  [ "$setting" != default ] && read -r -a vars <<<"$setting"
  env "${vars[@]}" bash "$HERE/gpu_time_window_cost.sh" "$BIN" "$SIZE" "$STEPS" "$FRACTION"
done
