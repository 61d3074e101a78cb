#!/usr/bin/env bash
# Idle cost (root): eacgm tracing every process on the machine for SECONDS while no
# CUDA program runs: CPU time used after start-up (the reader must sleep, not poll) and
# peak memory. The trace samples the GPUs (NVML, every second) unless EACGM_ARGS says
# --no-gpu.
# Usage: [EACGM_ARGS=...] bench/idle.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
B=${1:-build}
SECS=${2:-10}
# shellcheck disable=SC2086  # EACGM_ARGS is a list of options
"$B/eacgm" trace ${EACGM_ARGS:-} -o /dev/null > /dev/null 2>&1 &
pid=$!
sleep 3  # start-up (resolving and attaching) is not idle time
read -r -a start < "/proc/$pid/stat"
sleep "$SECS"
read -r -a stat < "/proc/$pid/stat"
ticks=$(getconf CLK_TCK)
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
kill -INT "$pid"; wait "$pid" || true
awk -v u="$((stat[13] - start[13]))" -v s="$((stat[14] - start[14]))" -v t="$ticks" -v secs="$SECS" -v hwm="$hwm" -v rss="$rss" 'BEGIN {
  cpu = (u + s) / t
  printf "idle %d s: CPU %.3f s (%.2f%% of one core), RSS %.1f MiB, peak RSS %.1f MiB\n", secs, cpu, 100 * cpu / secs, rss / 1024, hwm / 1024
}'
