#!/usr/bin/env bash
# Exact counts through the hook with the uprobes they replace left off: what each way of
# leaving them off costs a process that carries the hook, on the GPU machine.
# 1. The hook's counts themselves (bench/gpu/gpu_time_cost.sh: plain, the hook with GPU
#    time off, counting with timing paused, and timing on; separate processes, rounds).
# 2. In one process that carries the hook (counting, timing paused), empty uprobe session
#    programs on libcuda's GPU-work functions held at FRACTION of every second
#    (bench/gpu/bare_window_cost.sh), steps inside the windows against steps between them:
#    - for every process: the least that declining at entry can cost (the agent's links
#      stay per file; its program would look the process up and return at once);
#    - limited to another process (a `sleep`; uprobe_multi's pid): filtering, where the
#      kernel writes no breakpoint into the loop at all.
# Usage: bench/gpu/hook_counts_cost.sh BIN_DIR [SIZE] [STEPS] [FRACTION] [ROUNDS]
#   (BIN_DIR holds libeacgm_hook.so and eacgm-bench-bare)
set -uo pipefail
BIN=$(cd "$1" && pwd) SIZE=${2:-cpu} STEPS=${3:-3000} FRACTION=${4:-0.4} ROUNDS=${5:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
echo "### 1. the hook's exact counts, separate processes ($ROUNDS rounds of 200 steps)"
bash "$HERE/gpu_time_cost.sh" "$BIN/libeacgm_hook.so" "$ROUNDS" 200 "$SIZE"
echo "### 2a. declining at entry's floor: empty programs for every process"
HOOK="$BIN/libeacgm_hook.so" bash "$HERE/bare_window_cost.sh" "$BIN" "$SIZE" "$STEPS" "$FRACTION" session
sleep 3600 &
other=$!
echo "### 2b. filtering: the same programs limited to another process"
BARE_PID=$other HOOK="$BIN/libeacgm_hook.so" bash "$HERE/bare_window_cost.sh" "$BIN" "$SIZE" "$STEPS" "$FRACTION" session
kill "$other" 2>/dev/null
wait "$other" 2>/dev/null
true
